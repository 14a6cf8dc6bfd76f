/* test-push.c - push/ without a network: the URL and credential checks,
 * durations, a pprof's times, the spool's order and bound, and the sender
 * spooling what a refused connection did not take. */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "push/push.h"
#include "test.h"

static char tmpdir[] = "/tmp/ember-test-push.XXXXXX";

static void test_urls(void)
{
	struct push_opts o = { .url = "http://127.0.0.1:4040", .name = "app.cpu{env=test}",
			       .retries = -1 };
	struct push_client *c = push_client_new(&o);
	CHECK(c, "a plain URL: %s", err_msg());
	struct push_profile p = { .format = PUSH_FOLDED, .from = 10, .until = 20, .sample_rate = 99 };
	if (c) {
		const char *u = push_request_url(c, &p);
		CHECK(!strcmp(u, "http://127.0.0.1:4040/ingest?name=app.cpu%7Benv%3Dtest%7D&from=10"
				 "&until=20&format=folded&sampleRate=99"), "%s", u);
		p.format = PUSH_PPROF;
		u = push_request_url(c, &p);
		CHECK(strstr(u, "&format=pprof") && !strstr(u, "sampleRate"), "%s", u);
		push_client_free(c);
	}
	o.url = "https://host/prefix/ingest/";
	c = push_client_new(&o);
	CHECK(c && !strncmp(push_request_url(c, &p), "https://host/prefix/ingest?", 27),
	      "an /ingest path is kept");
	push_client_free(c);
	const char *bad[] = { "ftp://host", "http://", "host:4040", "http://u:secret@host/",
			      "http://host/?x=1" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		o.url = bad[i];
		c = push_client_new(&o);
		CHECK(!c, "%s taken", bad[i]);
		CHECK(!strstr(err_msg(), "secret"), "the message shows the secret: %s", err_msg());
		push_client_free(c);
	}
}

static void test_credentials(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/token", tmpdir);
	FILE *f = fopen(path, "w");
	fputs("s3cret-token\n", f);
	fclose(f);
	char basic[300];
	snprintf(basic, sizeof(basic), "12345:%s", path);
	struct push_opts o = { .url = "http://127.0.0.1:1", .name = "a", .basic_auth = basic,
			       .retries = -1 };
	struct push_client *c = push_client_new(&o);
	CHECK(c, "basic auth from a file: %s", err_msg());
	push_client_free(c);
	o.basic_auth = NULL;
	o.bearer_file = path;
	c = push_client_new(&o);
	CHECK(c, "a bearer token from a file: %s", err_msg());
	push_client_free(c);
	o.bearer_file = "/nonexistent/token";
	c = push_client_new(&o);
	CHECK(!c && strstr(err_msg(), "/nonexistent/token"), "a missing file: %s", err_msg());
	o.basic_auth = "nouser";
	o.bearer_file = NULL;
	c = push_client_new(&o);
	CHECK(!c && strstr(err_msg(), "USER:FILE"), "basic auth without a file: %s", err_msg());
	o.basic_auth = basic;
	o.bearer_file = path;
	c = push_client_new(&o);
	CHECK(!c, "both kinds of credentials taken");
	/* Read to the first line, with a cap: /dev/zero is refused at once,
	 * not read without end; a line over the cap is refused, not cut. */
	o.basic_auth = NULL;
	o.bearer_file = "/dev/zero";
	u64 t0 = now_ns();
	c = push_client_new(&o);
	CHECK(!c && strstr(err_msg(), "NUL") && now_ns() - t0 < 2000000000ull,
	      "/dev/zero as a token file: %s", err_msg());
	snprintf(basic, sizeof(basic), "12345:/dev/zero");
	o.basic_auth = basic;
	o.bearer_file = NULL;
	c = push_client_new(&o);
	CHECK(!c && strstr(err_msg(), "/dev/zero"), "/dev/zero as a password file: %s", err_msg());
	f = fopen(path, "w");
	for (int i = 0; i < 5000; i++)
		fputc('t', f);
	fputs("\nmore\n", f);
	fclose(f);
	o.basic_auth = NULL;
	o.bearer_file = path;
	c = push_client_new(&o);
	CHECK(!c && strstr(err_msg(), "longer than"), "a 5000-byte token: %s", err_msg());
	f = fopen(path, "w");
	fputs("tok\nsecond line\n", f);
	fclose(f);
	c = push_client_new(&o);
	CHECK(c, "a token on its first line, more after it: %s", err_msg());
	push_client_free(c);
}

static void test_durations(void)
{
	double s;
	CHECK(push_parse_duration("10s", &s) == 0 && s == 10, "10s");
	CHECK(push_parse_duration("500ms", &s) == 0 && s == 0.5, "500ms");
	CHECK(push_parse_duration("2m", &s) == 0 && s == 120, "2m");
	CHECK(push_parse_duration("3", &s) == 0 && s == 3, "3");
	CHECK(push_parse_duration("0s", &s) < 0, "0s taken");
	CHECK(push_parse_duration("10x", &s) < 0, "10x taken");
	CHECK(push_parse_duration("", &s) < 0, "an empty duration taken");
}

/* gzip of bytes, by zlib. */
static size_t gzip(const u8 *in, size_t n, u8 *out, size_t cap)
{
	z_stream z = { .next_in = (Bytef *)in, .avail_in = (uInt)n, .next_out = out,
		       .avail_out = (uInt)cap };
	deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	deflate(&z, Z_FINISH);
	deflateEnd(&z);
	return cap - z.avail_out;
}

static void test_pprof_times(void)
{
	/* field 1 (a sample type: bytes), field 9 = 300, field 10 = 5, field 12
	 * fixed64, by the wire format's rules. */
	const u8 pb[] = { 0x0a, 0x02, 0x08, 0x01, 0x48, 0xac, 0x02, 0x50, 0x05,
			  0x61, 1, 2, 3, 4, 5, 6, 7, 8 };
	u8 gz[256];
	size_t n = gzip(pb, sizeof(pb), gz, sizeof(gz));
	u64 t, d;
	CHECK(push_pprof_times(gz, n, &t, &d) == 0 && t == 300 && d == 5, "t %llu d %llu",
	      (unsigned long long)t, (unsigned long long)d);
	CHECK(push_pprof_times(pb, sizeof(pb), &t, &d) < 0, "not gzip taken");
	const u8 bad[] = { 0x0a, 0x7f, 0x00 };
	n = gzip(bad, sizeof(bad), gz, sizeof(gz));
	CHECK(push_pprof_times(gz, n, &t, &d) < 0, "a length past the end taken");
}

static size_t files_in(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	for (struct dirent *de; d && (de = readdir(d));)
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void test_spool(void)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	struct push_spool *s = push_spool_open(dir, 3);
	CHECK(s, "%s", err_msg());
	if (!s)
		return;
	u64 dropped = 0;
	for (int i = 0; i < 5; i++) {
		char body[32];
		int n = snprintf(body, sizeof(body), "a;b %d\n", i);
		struct push_profile p = { .format = PUSH_FOLDED, .data = body, .len = (size_t)n,
					  .from = 100 + (u64)i, .until = 101 + (u64)i, .sample_rate = 99 };
		CHECK(push_spool_put(s, &p, &dropped) == 0, "%s", err_msg());
	}
	CHECK(dropped == 2 && push_spool_count(s) == 3 && files_in(dir) == 3,
	      "dropped %llu kept %zu files %zu", (unsigned long long)dropped, push_spool_count(s),
	      files_in(dir));
	push_spool_close(s);
	/* Opened again: the same three, oldest (the third put) first. */
	s = push_spool_open(dir, 3);
	struct push_profile p;
	struct strbuf buf = {0};
	u64 id;
	CHECK(push_spool_oldest(s, &p, &buf, &id, &dropped) == 1 && p.from == 102 &&
	      p.sample_rate == 99 && p.format == PUSH_FOLDED && p.len == 6 &&
	      !memcmp(p.data, "a;b 2\n", 6), "the oldest kept: from %llu", (unsigned long long)p.from);
	push_spool_remove(s, id);
	CHECK(push_spool_count(s) == 2 && files_in(dir) == 2, "removed");
	push_spool_close(s);
	s = push_spool_open(dir, 1);   /* a smaller bound drops the oldest */
	CHECK(push_spool_oldest(s, &p, &buf, &id, &dropped) == 1 && p.from == 104 &&
	      files_in(dir) == 1, "from %llu", (unsigned long long)p.from);
	push_spool_close(s);
	sb_free(&buf);
}

/* A spool in a folder another user could write: refused with one line. */
static void test_spool_refuses_others(void)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/spool-others", tmpdir);
	CHECK(mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0, "mkdir");
	CHECK(!push_spool_open(dir, 3) && strstr(err_msg(), "writable by others"),
	      "0777 folder: %s", err_msg());
	CHECK(chmod(dir, 0700) == 0 && chown(dir, 65534, 65534) == 0, "chown");
	CHECK(!push_spool_open(dir, 3) && strstr(err_msg(), "another user's"),
	      "nobody's folder: %s", err_msg());
	/* A link in the folder's place is not followed. */
	char link[300];
	snprintf(link, sizeof(link), "%s/spool-link", tmpdir);
	CHECK(symlink(dir, link) == 0 && !push_spool_open(link, 3), "link to a folder taken");
	/* One process at a time: a second opening is refused. */
	snprintf(dir, sizeof(dir), "%s/spool-mine/deeper", tmpdir);
	struct push_spool *a = push_spool_open(dir, 3);
	CHECK(a, "parents made: %s", err_msg());
	CHECK(!push_spool_open(dir, 3) && strstr(err_msg(), "in use"), "second opening: %s",
	      err_msg());
	push_spool_close(a);
}

/* Entries planted by someone else: a link to another file (sent, it
 * would leak it), a link to /dev/zero (read, it would never end).  Both
 * are dropped unread, the victim's file left as it was. */
static void test_spool_planted(void)
{
	char dir[256], victim[256], entry[600];
	snprintf(dir, sizeof(dir), "%s/spool-planted", tmpdir);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "secret\n", 7) == 7 && close(fd) == 0, "victim");
	CHECK(mkdir(dir, 0700) == 0, "mkdir");
	snprintf(entry, sizeof(entry), "%s/%020d-1-2-99.folded", dir, 100);
	CHECK(symlink(victim, entry) == 0, "plant");
	snprintf(entry, sizeof(entry), "%s/%020d-3-4-99.folded", dir, 101);
	CHECK(symlink("/dev/zero", entry) == 0, "plant /dev/zero");
	for (int i = 0; i < 4; i++) {     /* the old names of new entries */
		snprintf(entry, sizeof(entry), "%s/.new-%d", dir, i);
		CHECK(symlink(victim, entry) == 0, "plant .new");
	}
	struct push_spool *s = push_spool_open(dir, 10);
	CHECK(s, "%s", err_msg());
	if (!s)
		return;
	u64 dropped = 0, id;
	struct push_profile p = { .format = PUSH_FOLDED, .data = "a;b 1\n", .len = 6,
				  .from = 5, .until = 6 };
	CHECK(push_spool_put(s, &p, &dropped) == 0, "%s", err_msg());
	struct strbuf buf = {0};
	CHECK(push_spool_oldest(s, &p, &buf, &id, &dropped) == 1 && p.from == 5 && dropped == 2,
	      "oldest readable: from %llu, %llu dropped", (unsigned long long)p.from,
	      (unsigned long long)dropped);
	push_spool_close(s);
	sb_free(&buf);
	size_t len;
	char *text = read_text_file(victim, &len);
	CHECK(text && len == 7 && !memcmp(text, "secret\n", 7), "the victim changed");
	free(text);
}

/* Nothing listens on the port: the sender's one attempt fails and the
 * profile goes to the spool, counted. */
static void test_sender_spools(void)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/spool2", tmpdir);
	struct push_opts o = { .url = "http://127.0.0.1:1", .name = "a", .retries = 0,
			       .timeout = 2 };
	struct push_client *c = push_client_new(&o);
	struct push_spool *s = push_spool_open(dir, 10);
	CHECK(c && s, "%s", err_msg());
	if (!c || !s)
		return;
	struct push_sender *ps = push_sender_start(c, s);
	struct push_profile p = { .format = PUSH_FOLDED, .data = "a;b 1\n", .len = 6,
				  .from = 1, .until = 2 };
	push_sender_put(ps, &p);
	push_sender_put(ps, &p);
	struct push_stats st;
	push_sender_finish(ps, 5, &st);
	CHECK(st.queued == 2 && st.sent == 0 && st.spooled == 2 && st.in_spool == 2 &&
	      files_in(dir) == 2 && st.last_error[0], "queued %llu sent %llu spooled %llu in %zu: %s",
	      (unsigned long long)st.queued, (unsigned long long)st.sent,
	      (unsigned long long)st.spooled, st.in_spool, st.last_error);
	push_spool_close(s);
	push_client_free(c);
}

/* A server that takes the connection (the kernel's backlog) and never
 * answers: the uploads hang, yet every put returns, the queue's overflow
 * going to the spool, and the end is bounded by finish's time. */
static void test_sender_never_waits(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 16) == 0 &&
	      getsockname(fd, (struct sockaddr *)&a, &len) == 0, "a listening socket");
	char url[64], dir[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	snprintf(dir, sizeof(dir), "%s/spool3", tmpdir);
	struct push_opts o = { .url = url, .name = "a", .retries = 0, .timeout = 30 };
	struct push_client *c = push_client_new(&o);
	struct push_spool *s = push_spool_open(dir, 100);
	struct push_sender *ps = push_sender_start(c, s);
	struct push_profile p = { .format = PUSH_FOLDED, .data = "a;b 1\n", .len = 6,
				  .from = 1, .until = 2 };
	for (int i = 0; i < 10; i++)
		push_sender_put(ps, &p);
	struct push_stats st;
	push_sender_stats(ps, &st);
	/* One in flight, 4 queued, the other 5 spooled by put itself. */
	CHECK(st.queued == 10 && st.sent == 0 && st.spooled >= 5, "queued %llu sent %llu spooled %llu",
	      (unsigned long long)st.queued, (unsigned long long)st.sent,
	      (unsigned long long)st.spooled);
	u64 t0 = now_ns();
	push_sender_finish(ps, 0.5, &st);
	double took = (double)(now_ns() - t0) / 1e9;
	CHECK(took < 10, "finish took %.1f s past its 0.5 s (the request's timeout is 30 s)", took);
	CHECK(st.sent == 0 && st.spooled == 10 && st.in_spool == 10 && st.dropped == 0,
	      "sent %llu spooled %llu in %zu dropped %llu", (unsigned long long)st.sent,
	      (unsigned long long)st.spooled, st.in_spool, (unsigned long long)st.dropped);
	push_spool_close(s);
	push_client_free(c);
	close(fd);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: test-push: no temporary directory\n");
		return 1;
	}
	RUN(test_urls);
	RUN(test_credentials);
	RUN(test_durations);
	RUN(test_pprof_times);
	RUN(test_spool);
	if (geteuid() == 0) {
		RUN(test_spool_refuses_others);
	} else {
		SKIP(test_spool_refuses_others, "needs root to give a folder to another user");
	}
	RUN(test_spool_planted);
	RUN(test_sender_spools);
	RUN(test_sender_never_waits);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	(void)!system(cmd);
	return test_summary();
}
