/* fuzz-spool.c - libFuzzer target for the push spool loader (push/spool.c):
 * push_spool_open over a directory of fuzzed entries (names and contents;
 * regular files, links, folders, FIFOs), then every profile taken back,
 * one spooled and the spool closed.  What must hold: only a regular file
 * of the directory is ever read back, with exactly the bytes written to
 * it (never a link's target, never a FIFO, which would block), in the
 * order of the entries' sequence numbers (never going back), and the spool
 * never holds more than its maximum.
 *
 * Input: byte 0: the maximum (1 + b % 8); then entries, at most 16, each:
 *   byte K: K & 3 the type (0 a file, 1 a link to a file outside, 2 a
 *   folder, 3 a FIFO); K & 4 a spool name built from the next 5 bytes
 *   (id, from, until, rate, K & 8 picks .folded over .pb.gz), else a name
 *   of the next byte's length (1..64) of raw bytes ('/' and NUL become
 *   '_'); then 1 byte of content length and those bytes (a file's). */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "push/push.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

#define MAX_ENTRIES 16
#define SECRET "the file outside the spool: never read back"

struct entry {
	char name[80];
	int type;
	const uint8_t *content;
	size_t len;
};

static char dir[64], outside[96];

static void remove_all(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			if (unlinkat(dirfd(d), de->d_name, 0) < 0)
				unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	if (d)
		closedir(d);
}

static void clean_up(void)
{
	remove_all();
	rmdir(dir);
	unlink(outside);
}

/* The spool directory (0700, ours) and the file the links point at. */
static void set_up(void)
{
	if (dir[0])
		return;
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/ember-fuzz-spool.XXXXXX", base);
	if (!mkdtemp(dir))
		abort();
	snprintf(outside, sizeof(outside), "%s.outside", dir);
	FILE *f = fopen(outside, "w");
	if (!f || fputs(SECRET, f) < 0 || fclose(f) != 0)
		abort();
	atexit(clean_up);
}

/* The next entry from the input at *at; false at its end. */
static bool next_entry(const uint8_t *data, size_t len, size_t *at, struct entry *e)
{
	if (*at + 2 > len)
		return false;
	uint8_t k = data[(*at)++];
	e->type = k & 3;
	if (k & 4) {
		if (*at + 5 > len)
			return false;
		const uint8_t *b = data + *at;
		snprintf(e->name, sizeof(e->name), "%020u-%u-%u-%u.%s", b[0], b[1], b[2], b[3] * 100u,
			 k & 8 ? "folded" : "pb.gz");
		*at += 5;
	} else {
		size_t n = 1 + data[(*at)++] % 64;
		if (*at + n > len)
			return false;
		for (size_t i = 0; i < n; i++) {
			char c = (char)data[*at + i];
			e->name[i] = c == '/' || c == '\0' ? '_' : c;
		}
		e->name[n] = '\0';
		if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
			e->name[0] = '_';
		*at += n;
	}
	size_t n = *at < len ? data[(*at)++] : 0;
	e->len = MIN(n, len - *at);
	e->content = data + *at;
	*at += e->len;
	return true;
}

static void make_entry(const struct entry *e)
{
	char path[160];
	snprintf(path, sizeof(path), "%s/%s", dir, e->name);
	if (e->type == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0600);
		if (fd >= 0) {
			if (e->len && write(fd, e->content, e->len) != (ssize_t)e->len)
				abort();
			close(fd);
		}
	} else if (e->type == 1) {
		(void)!symlink(outside, path);
	} else if (e->type == 2) {
		mkdir(path, 0700);
	} else {
		mkfifo(path, 0600);
	}
}

/* What a profile read back must be: the bytes of one of the regular
 * files written (the spool reads the name it renders from the entry's
 * numbers, which may be another entry's, or none). */
static void check_read(const struct entry *v, size_t n, const struct push_profile *p)
{
	if (p->len == strlen(SECRET) && !memcmp(p->data, SECRET, p->len)) {
		fprintf(stderr, "fuzz-spool: a link was followed out of the spool\n");
		abort();
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].type == 0 && p->len == v[i].len &&
		    (!p->len || !memcmp(p->data, v[i].content, p->len)))
			return;
	fprintf(stderr, "fuzz-spool: %zu bytes read back that no regular file held\n", p->len);
	abort();
}

static void take_all(struct push_spool *s, const struct entry *v, size_t n, size_t max)
{
	if (push_spool_count(s) > max) {
		fprintf(stderr, "fuzz-spool: %zu spooled, over the maximum %zu\n",
			push_spool_count(s), max);
		abort();
	}
	struct strbuf buf = { 0 };
	struct push_profile p;
	u64 id, last = 0, dropped = 0;
	bool first = true;
	while (push_spool_oldest(s, &p, &buf, &id, &dropped) == 1) {
		fuzz_touch(p.data, p.len);
		check_read(v, n, &p);
		/* Oldest first: ids never go back (two names may share one,
		 * each read in its turn). */
		if (!first && id < last) {
			fprintf(stderr, "fuzz-spool: id %llu after %llu\n", (unsigned long long)id,
				(unsigned long long)last);
			abort();
		}
		first = false;
		last = id;
		push_spool_remove(s, id);
	}
	sb_free(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (!len)
		return 0;
	set_up();
	remove_all();
	size_t max = 1 + data[0] % 8, at = 1, n = 0;
	struct entry v[MAX_ENTRIES];
	while (n < MAX_ENTRIES && next_entry(data, len, &at, &v[n]))
		make_entry(&v[n++]);
	struct push_spool *s = push_spool_open(dir, max);
	if (!s) {
		fuzz_touch_str(err_msg());
		return 0;
	}
	take_all(s, v, n, max);
	static const char folded[] = "main;work 7\n";
	struct push_profile p = { .format = PUSH_FOLDED, .data = folded,
				  .len = sizeof(folded) - 1, .from = 1, .until = 2 };
	u64 dropped = 0;
	if (push_spool_put(s, &p, &dropped) == 0 && push_spool_count(s) != 1) {
		fprintf(stderr, "fuzz-spool: %zu spooled after one put into an empty spool\n",
			push_spool_count(s));
		abort();
	}
	push_spool_close(s);
	return 0;
}
