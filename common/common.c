/* common.c - the shared helpers declared in common.h. */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- Errors ------------------------------------------------------------ */

static __thread char err_buf[1024];

/* Appends s to the NUL-terminated buf of size cap, cutting what won't fit. */
static void append_text(char *buf, size_t cap, const char *s)
{
	size_t used = strlen(buf);
	size_t n = strlen(s);
	if (used + n >= cap)
		n = cap - used - 1;
	memcpy(buf + used, s, n);
	buf[used + n] = '\0';
}

void err_set(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof(err_buf), fmt, ap);
	va_end(ap);
}

void err_set_errno(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof(err_buf), fmt, ap);
	va_end(ap);
	append_text(err_buf, sizeof(err_buf), ": ");
	append_text(err_buf, sizeof(err_buf), strerror(saved));
	errno = saved;
}

void err_prefix(const char *fmt, ...)
{
	char old[sizeof(err_buf)];
	va_list ap;
	memcpy(old, err_buf, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof(err_buf), fmt, ap);
	va_end(ap);
	append_text(err_buf, sizeof(err_buf), ": ");
	append_text(err_buf, sizeof(err_buf), old);
}

const char *err_msg(void)
{
	return err_buf[0] ? err_buf : "unknown error";
}

/* ---- Memory ------------------------------------------------------------ */

static void out_of_memory(size_t n)
{
	fprintf(stderr, "ember: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *xneed(void *p, const char *what)
{
	if (!p) {
		fprintf(stderr, "ember: out of memory for %s\n", what);
		abort();
	}
	return p;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		out_of_memory(strlen(s));
	return d;
}

char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		out_of_memory(n);
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		out_of_memory(0);
	va_end(ap);
	return s;
}

/* ---- String buffer ----------------------------------------------------- */

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 64;
		while (cap < sb->len + n + 1)
			cap *= 2;
		sb->s = xrealloc(sb->s, cap);
		sb->cap = cap;
	}
	memcpy(sb->s + sb->len, s, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_add(sb, "", 0);
	if (sb->len + (size_t)n + 1 > sb->cap) {
		size_t cap = sb->cap;
		while (cap < sb->len + (size_t)n + 1)
			cap *= 2;
		sb->s = xrealloc(sb->s, cap);
		sb->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

/* Writes pad characters then the digits in tmp[0..n) (reversed). */
static void sb_add_digits(struct strbuf *sb, const char *rev, int n, int width, char pad,
			  bool neg)
{
	char out[80];
	int len = 0, total = n + (neg ? 1 : 0);
	if (pad == '0' && neg)
		out[len++] = '-';
	for (int i = total; i < width && len < (int)sizeof(out) - 40; i++)
		out[len++] = pad;
	if (pad != '0' && neg)
		out[len++] = '-';
	while (n > 0)
		out[len++] = rev[--n];
	sb_add(sb, out, (size_t)len);
}

void sb_add_dec(struct strbuf *sb, s64 v, int width, char pad)
{
	char rev[24];
	int n = 0;
	bool neg = v < 0;
	u64 u = neg ? (u64)0 - (u64)v : (u64)v;
	do {
		rev[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	sb_add_digits(sb, rev, n, width, pad, neg);
}

void sb_add_hex(struct strbuf *sb, u64 v, int width)
{
	static const char digits[] = "0123456789abcdef";
	char rev[24];
	int n = 0;
	do {
		rev[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	sb_add_digits(sb, rev, n, width, ' ', false);
}

void sb_add_padded(struct strbuf *sb, const char *s, int width, bool right_align)
{
	size_t n = strlen(s);
	static const char spaces[] = "                                ";
	size_t pad = (size_t)width > n ? (size_t)width - n : 0;
	if (!right_align)
		sb_add(sb, s, n);
	while (pad > 0) {
		size_t k = MIN(pad, sizeof(spaces) - 1);
		sb_add(sb, spaces, k);
		pad -= k;
	}
	if (right_align)
		sb_add(sb, s, n);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->s)
		sb->s[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->s);
	sb->s = NULL;
	sb->len = sb->cap = 0;
}

/* ---- u64 hash map ------------------------------------------------------ */

/* Keys and values side by side, so a probe touches one cache line; a
 * free slot holds U64MAP_FREE, and the one key equal to it lives beside
 * the table (m->free_key). */
#define U64MAP_FREE 0x9e3779b97f4a7c15ULL

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static struct u64map_slot *u64map_find(const struct u64map *m, u64 key)
{
	size_t mask = m->cap - 1;
	size_t i = hash_u64(key) & mask;
	while (m->slots[i].key != key && m->slots[i].key != U64MAP_FREE)
		i = (i + 1) & mask;
	return &m->slots[i];
}

static void u64map_grow(struct u64map *m)
{
	struct u64map bigger = *m;
	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.slots = xmalloc(bigger.cap * sizeof(*bigger.slots));
	for (size_t i = 0; i < bigger.cap; i++)
		bigger.slots[i].key = U64MAP_FREE;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key != U64MAP_FREE)
			*u64map_find(&bigger, m->slots[i].key) = m->slots[i];
	free(m->slots);
	*m = bigger;
}

u64 *u64map_slot(struct u64map *m, u64 key, bool *created)
{
	if (key == U64MAP_FREE) {
		if (created)
			*created = !m->has_free_key;
		if (!m->has_free_key) {
			m->has_free_key = true;
			m->free_val = 0;
			m->n++;
		}
		return &m->free_val;
	}
	if ((m->n + 1) * 4 > m->cap * 3)
		u64map_grow(m);
	struct u64map_slot *sl = u64map_find(m, key);
	bool fresh = sl->key == U64MAP_FREE;
	if (created)
		*created = fresh;
	if (fresh) {
		sl->key = key;
		sl->val = 0;
		m->n++;
	}
	return &sl->val;
}

u64 *u64map_get(const struct u64map *m, u64 key)
{
	if (key == U64MAP_FREE)
		return m->has_free_key ? (u64 *)&m->free_val : NULL;
	if (!m->cap)
		return NULL;
	struct u64map_slot *sl = u64map_find(m, key);
	return sl->key == key ? &sl->val : NULL;
}

/* Linear probing keeps every key reachable from its home slot without a
 * free slot between: the keys after the hole that could not sit in it
 * move back into it, and the hole moves on with them. */
void u64map_del(struct u64map *m, u64 key)
{
	if (key == U64MAP_FREE) {
		m->n -= m->has_free_key;
		m->has_free_key = false;
		return;
	}
	if (!m->cap)
		return;
	struct u64map_slot *sl = u64map_find(m, key);
	if (sl->key != key)
		return;
	size_t mask = m->cap - 1, hole = (size_t)(sl - m->slots);
	for (size_t j = (hole + 1) & mask; m->slots[j].key != U64MAP_FREE; j = (j + 1) & mask) {
		size_t home = hash_u64(m->slots[j].key) & mask;
		/* The key at j may fill the hole when its home is not in
		 * (hole, j], going round the table. */
		bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (!stays) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole].key = U64MAP_FREE;
	m->n--;
}

bool u64map_next(const struct u64map *m, size_t *pos, u64 *key, u64 *val)
{
	for (; *pos < m->cap; ++*pos) {
		if (m->slots[*pos].key != U64MAP_FREE) {
			*key = m->slots[*pos].key;
			*val = m->slots[(*pos)++].val;
			return true;
		}
	}
	if (*pos == m->cap && m->has_free_key) {
		++*pos;
		*key = U64MAP_FREE;
		*val = m->free_val;
		return true;
	}
	return false;
}

/* ---- Parsing ----------------------------------------------------------- */

int parse_u64(const char *s, u64 *out)
{
	char *end;
	if (!s || !*s || *s == '-' || isspace((unsigned char)*s)) {
		err_set("'%s' is not a non-negative number", s ? s : "");
		return -1;
	}
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end) {
		err_set("'%s' is not a non-negative number", s);
		return -1;
	}
	*out = v;
	return 0;
}

int parse_int(const char *s, int *out)
{
	char *end;
	if (!s || !*s) {
		err_set("'' is not a number");
		return -1;
	}
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || *end || v < -2147483647L || v > 2147483647L) {
		err_set("'%s' is not a number", s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	if (!s || !*s) {
		err_set("'' is not a number");
		return -1;
	}
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || v != v) {
		err_set("'%s' is not a number", s);
		return -1;
	}
	*out = v;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Reads one non-negative decimal at *p and advances it; -1 if none. */
static long take_number(const char **p)
{
	if (!isdigit((unsigned char)**p))
		return -1;
	long v = 0;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		if (v > 1000000)
			return -1;
		(*p)++;
	}
	return v;
}

int parse_cpu_list(const char *s, int max_cpu, int **cpus, int *ncpus)
{
	VEC(int) out = {0};
	const char *p = s;
	if (!s || !*s)
		goto bad;
	for (;;) {
		long lo = take_number(&p), hi = lo;
		if (lo < 0)
			goto bad;
		if (*p == '-') {
			p++;
			hi = take_number(&p);
			if (hi < lo)
				goto bad;
		}
		if (hi >= max_cpu) {
			VEC_FREE(&out);
			err_set("CPU %ld in '%s' does not exist (this machine has CPUs 0-%d)",
				hi, s, max_cpu - 1);
			return -1;
		}
		for (long c = lo; c <= hi; c++)
			VEC_PUSH(&out, (int)c);
		if (*p == '\0')
			break;
		if (*p++ != ',')
			goto bad;
	}
	qsort(out.v, out.n, sizeof(int), cmp_int);
	size_t w = 0;
	for (size_t i = 0; i < out.n; i++)
		if (w == 0 || out.v[w - 1] != out.v[i])
			out.v[w++] = out.v[i];
	*cpus = out.v;
	*ncpus = (int)w;
	return 0;
bad:
	VEC_FREE(&out);
	err_set("malformed CPU list '%s' (expected a list like 0-3,5)", s ? s : "");
	return -1;
}

int parse_pid_list(const char *s, pid_t **pids, int *npids)
{
	VEC(pid_t) out = {0};
	const char *p = s;
	if (!s || !*s)
		goto bad;
	for (;;) {
		long v = take_number(&p);
		if (v <= 0)
			goto bad;
		VEC_PUSH(&out, (pid_t)v);
		if (*p == '\0')
			break;
		if (*p++ != ',')
			goto bad;
	}
	*pids = out.v;
	*npids = (int)out.n;
	return 0;
bad:
	VEC_FREE(&out);
	err_set("malformed pid list '%s' (expected numbers like 123,456)", s ? s : "");
	return -1;
}

/* ---- Files ------------------------------------------------------------- */

char *read_text_file(const char *path, size_t *len)
{
	return read_text_file_unless(path, len, NULL);
}

u64 empty_runs_skip(struct empty_runs *r, u64 end, u64 t, u64 step)
{
	u64 n = t >= end + step ? (t - end) / step : 0;
	if (n < EMPTY_RUN_MIN)
		return 0;
	if (n * step > r->to - r->from) {
		r->from = end;
		r->to = end + n * step;
	}
	r->intervals += n;
	r->runs++;
	return n;
}

void str_escape(char *out, size_t cap, const char *in, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && cap; i++) {
		unsigned char c = (unsigned char)in[i];
		char piece[5];
		int len = c == '\\' ? snprintf(piece, sizeof(piece), "\\\\")
			: c >= 0x20 && c < 0x7f ? snprintf(piece, sizeof(piece), "%c", c)
			: snprintf(piece, sizeof(piece), "\\x%02x", c);
		if (k + (size_t)len + 1 > cap)
			break;
		memcpy(out + k, piece, (size_t)len);
		k += (size_t)len;
	}
	if (cap)
		out[k] = 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *slash = p + 1; rc == 0; slash++) {
		slash = strchr(slash, '/');
		if (slash)
			*slash = 0;
		if (*p && mkdir(p, mode) < 0 && errno != EEXIST) {
			err_set_errno("cannot make the directory %s", p);
			rc = -1;
		}
		if (!slash)
			break;
		*slash = '/';
	}
	free(p);
	return rc;
}

/* Reads in pieces of at most this, so a stop flag is seen between them
 * (a proc file is written out by the kernel as it is read). */
#define READ_PIECE (256u << 10)

char *read_text_file_unless(const char *path, size_t *len, const bool *stop)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set_errno("cannot open %s", path);
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED)) {
			err_set("%s: reading stopped", path);
			free(buf);
			close(fd);
			return NULL;
		}
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + n, MIN(cap - n - 1, (size_t)READ_PIECE));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err_set_errno("cannot read %s", path);
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- Time -------------------------------------------------------------- */

u64 now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/* ---- Machine facts ----------------------------------------------------- */

bool task_missing(u32 pid, u32 tid)
{
	if (!pid || !tid || pid == (u32)-1)
		return false;
	if (tid == (u32)-1)
		tid = pid;   /* an exiting thread's samples: its process stands for it */
	return tgkill((pid_t)pid, (pid_t)tid, 0) < 0 && errno == ESRCH;
}

/* Parses a sysfs CPU list file like "0-3,6" into a sorted array. */
static int read_sysfs_cpus(const char *path, int **cpus)
{
	char *text = read_text_file(path, NULL);
	if (!text)
		return -1;
	text[strcspn(text, "\n")] = '\0';
	int n = 0;
	int rc = parse_cpu_list(text, 1 << 20, cpus, &n);
	free(text);
	return rc < 0 ? -1 : n;
}

int cpus_possible(void)
{
	int *cpus = NULL;
	int n = read_sysfs_cpus("/sys/devices/system/cpu/possible", &cpus);
	int max = n > 0 ? cpus[n - 1] + 1 : (int)sysconf(_SC_NPROCESSORS_CONF);
	free(cpus);
	return max;
}

int cpus_online(int **cpus)
{
	return read_sysfs_cpus("/sys/devices/system/cpu/online", cpus);
}

void fd_limit_raise(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
