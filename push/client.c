/* client.c - one ingest backend: the URL checked, credentials read from
 * files (never from the command line), and POST /ingest through one
 * libcurl handle kept between uploads, with timeouts and retries. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "push/push.h"
#include "push/push-internal.h"

#define PUSH_REPLY_MAX 4096        /* of the server's answer kept */
#define PUSH_MESSAGE_MAX 200       /* of it shown in the error line */

struct push_client {
	const struct push_curl *cu; /* libcurl, loaded at the first client */
	CURL *curl;
	struct curl_slist *headers;
	char *base;                /* ".../ingest" */
	char *name;
	char *user, *secret;       /* basic auth */
	double timeout, backoff;
	int retries;
	_Atomic u64 deadline;
	struct strbuf url;         /* the last request's */
	struct strbuf reply;       /* the server's body, first PUSH_REPLY_MAX */
	char status_line[128];     /* "HTTP/1.1 500 Internal Server Error" */
	char errbuf[CURL_ERROR_SIZE];
	long status;               /* the last attempt's, 0: no answer */
};

/* The longest credential line taken: a token longer than this (JWTs run to
 * a few KB) is no token, and reading on would take whatever the path
 * gives (/dev/zero) without end. */
#define SECRET_MAX 4096

/* Up to max bytes of path into buf (which holds max + 1), or -1 with
 * err_set.  Opened without blocking (a FIFO with no writer), read
 * blocking (a pipe's writer may be slow). */
static ssize_t read_head(const char *path, char *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	size_t n = 0;
	ssize_t r = 0;
	while (n < max && ((r = read(fd, buf + n, max - n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(fd);
	if (r < 0)
		return -1;
	buf[n] = 0;
	return (ssize_t)n;
}

/* A secret file's first line, without its end of line: at most
 * SECRET_MAX bytes of text.  Its text never goes into a message. */
static char *read_secret(const char *path, const char *what)
{
	char *s = xmalloc(SECRET_MAX + 2);
	ssize_t n = read_head(path, s, SECRET_MAX + 1);
	size_t line = 0;
	while (n > 0 && line < (size_t)n && s[line] != '\n' && s[line] != '\r')
		line++;
	const char *why = memchr(s, 0, line) ? "holds a NUL byte: it is no text file"
			: line > SECRET_MAX ? "has a first line longer than 4096 bytes"
			: !line ? "is empty" : NULL;
	if (n < 0)
		err_set("cannot read the %s file %s: give a readable file holding it", what, path);
	else if (why)
		err_set("the %s file %s %s: give a file holding it on its first line", what, path,
			why);
	if (n < 0 || why) {
		free(s);
		return NULL;
	}
	s[line] = '\0';
	return s;
}

static int check_url(const char *url)
{
	const char *host = !strncmp(url, "http://", 7) ? url + 7
			 : !strncmp(url, "https://", 8) ? url + 8 : NULL;
	if (!host || !*host || *host == '/') {
		err_set("bad URL '%s': give http://HOST[:PORT] or https://HOST[:PORT]", url);
		return -1;
	}
	size_t auth_len = strcspn(host, "/?#");
	if (memchr(host, '@', auth_len)) {
		/* Printing the URL would print the secret: name the host only. */
		err_set("the URL carries credentials: put them in a file for --basic-auth "
			"USER:FILE or --bearer-token-file FILE");
		return -1;
	}
	if (strpbrk(host, "?#")) {
		err_set("bad URL '%s': no query or fragment; ember adds /ingest's parameters", url);
		return -1;
	}
	return 0;
}

static char *ingest_url(const char *url)
{
	size_t n = strlen(url);
	while (n && url[n - 1] == '/')
		n--;
	if (n >= 7 && !strncmp(url + n - 7, "/ingest", 7))
		return xasprintf("%.*s", (int)n, url);
	return xasprintf("%.*s/ingest", (int)n, url);
}

static int read_credentials(struct push_client *c, const struct push_opts *o)
{
	if (o->basic_auth && o->bearer_file) {
		err_set("--basic-auth and --bearer-token-file: give one of them");
		return -1;
	}
	if (o->basic_auth) {
		const char *colon = strchr(o->basic_auth, ':');
		if (!colon || colon == o->basic_auth || !colon[1]) {
			err_set("bad --basic-auth: give USER:FILE, FILE holding the password or token");
			return -1;
		}
		c->user = xasprintf("%.*s", (int)(colon - o->basic_auth), o->basic_auth);
		c->secret = read_secret(colon + 1, "--basic-auth password");
		return c->secret ? 0 : -1;
	}
	if (o->bearer_file) {
		char *tok = read_secret(o->bearer_file, "--bearer-token-file token");
		if (!tok)
			return -1;
		char *h = xasprintf("Authorization: Bearer %s", tok);
		c->headers = c->cu->slist_append(c->headers, h);
		explicit_bzero(h, strlen(h));
		explicit_bzero(tok, strlen(tok));
		free(h);
		free(tok);
	}
	return 0;
}

/* A CA bundle given with --cacert must be readable now: curl would only
 * say "problem with the SSL CA cert" at the first upload. */
static int check_ca_file(const char *path)
{
	FILE *f = path ? fopen(path, "r") : NULL;
	if (path && !f) {
		err_set("cannot read --cacert file %s: %s: give a PEM file of the certificates to trust",
			path, strerror(errno));
		return -1;
	}
	if (f)
		fclose(f);
	return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct push_client *c = ctx;
	size_t len = size * n;
	if (c->reply.len < PUSH_REPLY_MAX)
		sb_add(&c->reply, p, MIN(len, PUSH_REPLY_MAX - c->reply.len));
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct push_client *c = ctx;
	size_t len = size * n;
	if (len > 5 && !strncmp(p, "HTTP/", 5)) {   /* the last status line wins */
		size_t k = 0;
		while (k < len && p[k] != '\r' && p[k] != '\n')
			k++;
		/* The reason phrase is the peer's text: escaped for the terminal. */
		str_escape(c->status_line, sizeof(c->status_line), p, k);
	}
	return len;
}

/* Ends a transfer in flight once the deadline passed. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct push_client *c = ctx;
	u64 d = atomic_load(&c->deadline);
	return d && now_ns() >= d;
}

static void setup_handle(struct push_client *c)
{
	CURL *h = c->curl;
	c->cu->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);   /* threads: no SIGALRM */
	c->cu->easy_setopt(h, CURLOPT_POST, 1L);
	c->cu->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	c->cu->easy_setopt(h, CURLOPT_WRITEDATA, c);
	c->cu->easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	c->cu->easy_setopt(h, CURLOPT_HEADERDATA, c);
	c->cu->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	c->cu->easy_setopt(h, CURLOPT_XFERINFODATA, c);
	c->cu->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	c->cu->easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	c->cu->easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(MIN(c->timeout, 10.0) * 1000));
	c->cu->easy_setopt(h, CURLOPT_USERAGENT, "ember/" EMBER_VERSION);
	c->cu->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->user) {
		c->cu->easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		c->cu->easy_setopt(h, CURLOPT_USERNAME, c->user);
		c->cu->easy_setopt(h, CURLOPT_PASSWORD, c->secret);
	}
}

struct push_client *push_client_new(const struct push_opts *o)
{
	if (!o->url || check_url(o->url) < 0)
		return NULL;
	if (!o->name || !*o->name) {
		err_set("no application name: give --name 'app.cpu{env=prod,host=...}'");
		return NULL;
	}
	const struct push_curl *cu = push_curl();
	if (!cu)
		return NULL;
	if (cu->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		err_set("libcurl would not start");
		return NULL;
	}
	struct push_client *c = xcalloc(1, sizeof(*c));
	c->cu = cu;
	c->timeout = o->timeout > 0 ? o->timeout : 10;
	c->backoff = o->backoff > 0 ? o->backoff : 1;
	c->retries = o->retries >= 0 ? o->retries : 3;
	c->base = ingest_url(o->url);
	c->name = xstrdup(o->name);
	if (o->tenant) {
		char *h = xasprintf("X-Scope-OrgID: %s", o->tenant);
		c->headers = c->cu->slist_append(c->headers, h);
		free(h);
	}
	c->curl = c->cu->easy_init();
	if (!c->curl) {
		err_set("libcurl: no handle");
		push_client_free(c);
		return NULL;
	}
	if (read_credentials(c, o) < 0 || check_ca_file(o->ca_file) < 0) {
		push_client_free(c);
		return NULL;
	}
	setup_handle(c);
	if (o->ca_file)
		cu->easy_setopt(c->curl, CURLOPT_CAINFO, o->ca_file);
	return c;
}

void push_client_free(struct push_client *c)
{
	if (!c)
		return;
	const struct push_curl *cu = c->cu;
	if (c->curl)
		cu->easy_cleanup(c->curl);
	c->cu->slist_free_all(c->headers);   /* the bearer header is in it */
	if (c->secret) {
		explicit_bzero(c->secret, strlen(c->secret));
		free(c->secret);
	}
	free(c->user);
	free(c->base);
	free(c->name);
	sb_free(&c->url);
	sb_free(&c->reply);
	free(c);
	cu->global_cleanup();
}

long push_last_status(const struct push_client *c)
{
	return c->status;
}

void push_client_set_deadline(struct push_client *c, u64 deadline)
{
	atomic_store(&c->deadline, deadline);
}

const char *push_request_url(struct push_client *c, const struct push_profile *p)
{
	char *name = c->cu->easy_escape(c->curl, c->name, 0);
	sb_reset(&c->url);
	sb_printf(&c->url, "%s?name=%s&from=%llu&until=%llu&format=%s", c->base, name ? name : "",
		  (unsigned long long)p->from, (unsigned long long)p->until,
		  p->format == PUSH_PPROF ? "pprof" : "folded");
	if (p->format == PUSH_FOLDED && p->sample_rate)
		sb_printf(&c->url, "&sampleRate=%llu", (unsigned long long)p->sample_rate);
	c->cu->free(name);
	return c->url.s;
}

/* The server's message: its first line, printable, cut at PUSH_MESSAGE_MAX. */
static void reply_message(const struct push_client *c, char *out, size_t cap)
{
	size_t k = 0;
	const char *s = c->reply.s ? c->reply.s : "";
	while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
		s++;
	size_t n = strcspn(s, "\r\n");
	str_escape(out, cap, s, n);
	k = strlen(out);
	if (k + 1 == cap && k >= 3)   /* cut: say so */
		memcpy(out + k - 3, "...", 3);
}

enum attempt { ATTEMPT_OK, ATTEMPT_RETRY, ATTEMPT_FINAL };

/* One POST; on failure err_set() says why. */
static enum attempt post_once(struct push_client *c, const struct push_profile *p)
{
	CURL *h = c->curl;
	u64 d = atomic_load(&c->deadline);
	double left = c->timeout;
	if (d) {
		u64 now = now_ns();
		if (now >= d) {
			err_set("%s: not sent: the time to send ran out", c->base);
			return ATTEMPT_FINAL;
		}
		left = MIN(left, (double)(d - now) / 1e9);
	}
	sb_reset(&c->reply);
	c->status = 0;
	c->status_line[0] = '\0';
	c->errbuf[0] = '\0';
	struct curl_slist *hdrs = c->cu->slist_append(NULL, p->format == PUSH_PPROF ?
		"Content-Type: binary/octet-stream" : "Content-Type: text/plain");
	for (struct curl_slist *i = c->headers; i; i = i->next)
		hdrs = c->cu->slist_append(hdrs, i->data);
	hdrs = c->cu->slist_append(hdrs, "Expect:");   /* no 100-continue round trip */
	c->cu->easy_setopt(h, CURLOPT_URL, push_request_url(c, p));
	c->cu->easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	c->cu->easy_setopt(h, CURLOPT_POSTFIELDS, p->data);
	c->cu->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	c->cu->easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(left * 1000) + 1);
	CURLcode rc = c->cu->easy_perform(h);
	c->cu->easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	c->cu->slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		err_set("%s: %s", c->base, c->errbuf[0] ? c->errbuf : c->cu->easy_strerror(rc));
		return rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT
			       ? ATTEMPT_FINAL : ATTEMPT_RETRY;
	}
	long code = 0;
	c->cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	c->status = code;
	if (code >= 200 && code < 300)
		return ATTEMPT_OK;
	char msg[PUSH_MESSAGE_MAX + 1], num[24];
	reply_message(c, msg, sizeof(msg));
	/* "HTTP/1.1 500 Internal Server Error" -> "HTTP 500 Internal Server Error" */
	const char *status = strchr(c->status_line, ' ');
	snprintf(num, sizeof(num), "%ld", code);
	err_set("HTTP %s from %s%s%s", status ? status + 1 : num, c->base, *msg ? ": " : "", msg);
	return code >= 500 || code == 408 || code == 429 ? ATTEMPT_RETRY : ATTEMPT_FINAL;
}

/* Sleeps secs, or until the deadline; false when the deadline came. */
static bool wait_backoff(struct push_client *c, double secs)
{
	u64 d = atomic_load(&c->deadline);
	u64 until = now_ns() + (u64)(secs * 1e9);
	if (d && until >= d)
		return false;
	/* In slices, so a deadline set meanwhile ends the wait. */
	for (u64 now; (now = now_ns()) < until;) {
		u64 left = MIN(until - now, (u64)100000000);
		struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
		nanosleep(&ts, NULL);
		d = atomic_load(&c->deadline);
		if (d && now_ns() >= d)
			return false;
	}
	return true;
}

int push_send(struct push_client *c, const struct push_profile *p, int attempts)
{
	if (attempts <= 0)
		attempts = 1 + c->retries;
	double wait = c->backoff;
	for (int i = 1;; i++) {
		enum attempt a = post_once(c, p);
		if (a == ATTEMPT_OK)
			return 0;
		if (a == ATTEMPT_FINAL || i >= attempts || !wait_backoff(c, wait)) {
			if (i > 1) {
				char msg[512];
				snprintf(msg, sizeof(msg), "%s", err_msg());
				err_set("%s (%d attempts)", msg, i);
			}
			return -1;
		}
		wait = MIN(wait * 2, 60.0);
	}
}

/* ---- helpers ------------------------------------------------------------- */

int push_parse_duration(const char *s, double *secs)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double unit = !strcmp(end, "") || !strcmp(end, "s") ? 1
		    : !strcmp(end, "ms") ? 1e-3 : !strcmp(end, "m") ? 60
		    : !strcmp(end, "h") ? 3600 : -1;
	if (end == s || errno || unit < 0 || !(v > 0)) {
		err_set("bad duration '%s': give e.g. 10s, 500ms, 2m", s);
		return -1;
	}
	*secs = v * unit;
	return 0;
}

static bool pb_varint(const u8 **p, const u8 *end, u64 *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		u8 b = *(*p)++;
		*v |= (u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* profile.proto's top-level fields 9 (time_nanos) and 10 (duration_nanos). */
static int pb_times(const u8 *p, const u8 *end, u64 *time_ns, u64 *duration_ns)
{
	while (p < end) {
		u64 key, v;
		if (!pb_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case 0:
			if (!pb_varint(&p, end, &v))
				return -1;
			if (key >> 3 == 9)
				*time_ns = v;
			else if (key >> 3 == 10)
				*duration_ns = v;
			break;
		case 1: if (end - p < 8) return -1; p += 8; break;
		case 5: if (end - p < 4) return -1; p += 4; break;
		case 2:
			if (!pb_varint(&p, end, &v) || v > (u64)(end - p))
				return -1;
			p += v;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

int push_pprof_times(const void *gz, size_t len, u64 *time_ns, u64 *duration_ns)
{
	*time_ns = *duration_ns = 0;
	z_stream z = { .next_in = (Bytef *)gz, .avail_in = (uInt)len };
	if (len > UINT32_MAX || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		err_set("not a gzipped pprof profile");
		return -1;
	}
	struct strbuf out = {0};
	char chunk[65536];
	int zr;
	do {
		z.next_out = (Bytef *)chunk;
		z.avail_out = sizeof(chunk);
		zr = inflate(&z, Z_NO_FLUSH);
		sb_add(&out, chunk, sizeof(chunk) - z.avail_out);
	} while (zr == Z_OK && out.len < ((size_t)1 << 30));
	inflateEnd(&z);
	int rc = zr == Z_STREAM_END && out.s ? pb_times((const u8 *)out.s, (const u8 *)out.s + out.len,
					       time_ns, duration_ns) : -1;
	sb_free(&out);
	if (rc < 0)
		err_set("not a gzipped pprof profile (profile.proto)");
	return rc;
}
