/* common.h - small shared helpers every module may use: errors (and how
 * commands print them), memory, growable arrays, string buffers, a u64
 * hash map, number and CPU-list parsing, and time.  Nothing here knows
 * about perf. */
#ifndef EMBER_COMMON_H
#define EMBER_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int64_t s64;
typedef int32_t s32;

#define EMBER_VERSION "0.1.0"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* --- Errors -------------------------------------------------------------
 * Library code never prints.  A failing function records one message with
 * err_set() and returns -1 or NULL; the command that called it prints
 * "ember CMD: message" and picks the exit status.  The message lives in a
 * thread-local buffer, like errno: the one piece of state we allow. */
void err_set(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* Like err_set but appends ": strerror(errno)". */
void err_set_errno(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* Prefix the current message with more context: "ctx: old message". */
void err_prefix(const char *fmt, ...) PRINTF_LIKE(1, 2);
const char *err_msg(void);

/* --- Memory: these abort on exhaustion, as nothing sane can follow. ---- */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);   /* at most n bytes of s */
/* p, unless NULL: then "ember: out of memory for WHAT" and the end, as
 * xmalloc's; for what other allocators make (zstd's contexts). */
void *xneed(void *p, const char *what);
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* --- Growable arrays ------------------------------------------------------
 *   VEC(struct thing) things = {0};
 *   VEC_PUSH(&things, t);  things.v[i], things.n;  VEC_FREE(&things); */
#define VEC(type) struct { type *v; size_t n, cap; }
#define VEC_GROW(vec, want)                                                  \
	do {                                                                 \
		if ((want) > (vec)->cap) {                                   \
			size_t c_ = (vec)->cap ? (vec)->cap * 2 : 16;        \
			while (c_ < (want)) c_ *= 2;                         \
			(vec)->v = xrealloc((vec)->v, c_ * sizeof(*(vec)->v)); \
			(vec)->cap = c_;                                     \
		}                                                            \
	} while (0)
#define VEC_PUSH(vec, item)                                                  \
	do {                                                                 \
		VEC_GROW(vec, (vec)->n + 1);                                 \
		(vec)->v[(vec)->n++] = (item);                               \
	} while (0)
#define VEC_FREE(vec)                                                        \
	do {                                                                 \
		free((vec)->v);                                              \
		(vec)->v = NULL;                                             \
		(vec)->n = (vec)->cap = 0;                                   \
	} while (0)

/* Text a peer sent (a server's answer, an HTTP reason phrase), made safe
 * to print: printable ASCII as it is, a backslash doubled, every other
 * byte (an escape sequence's ESC, a newline, UTF-8's C1 controls) as
 * \\xNN; at most cap - 1 bytes, no escape cut in two, NUL-terminated. */
void str_escape(char *out, size_t cap, const char *in, size_t n);

/* --- String buffer ------------------------------------------------------ */
struct strbuf {
	char *s;   /* always NUL-terminated once anything was added */
	size_t len, cap;
};
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
void sb_reset(struct strbuf *sb);
/* Fast fixed-format appends for hot output paths (printf is the cost of
 * a million-line script): a decimal right-aligned in width with pad
 * (' ' or '0'), lowercase hex right-aligned in width with spaces, and a
 * string padded with spaces to width (on the left when right_align). */
void sb_add_dec(struct strbuf *sb, s64 v, int width, char pad);
void sb_add_hex(struct strbuf *sb, u64 v, int width);
void sb_add_padded(struct strbuf *sb, const char *s, int width, bool right_align);
void sb_free(struct strbuf *sb);

/* --- Hash map from u64 keys to u64 values (open addressing) -------------
 * Built for hot paths: no allocation per insert beyond occasional growth.
 * Key 0 is allowed.  Values are often pointers cast to u64 or indexes. */
struct u64map_slot {
	u64 key, val;
};
struct u64map {
	struct u64map_slot *slots;
	size_t n, cap;
	bool has_free_key;         /* the key that marks free slots, kept apart */
	u64 free_val;
};
void u64map_init(struct u64map *m);
void u64map_free(struct u64map *m);
/* Returns a pointer to the value slot, inserting 0 when absent
 * (*created tells which). The pointer is valid until the next insert. */
u64 *u64map_slot(struct u64map *m, u64 key, bool *created);
/* Returns the value slot or NULL when absent. */
u64 *u64map_get(const struct u64map *m, u64 key);
/* Removes key (nothing when absent); pointers from u64map_slot and
 * u64map_get are stale after it, as after an insert. */
void u64map_del(struct u64map *m, u64 key);
/* Iteration: *pos 0 at first; each call gives the next key and value and
 * returns true, false after the last.  Not across inserts or deletes. */
bool u64map_next(const struct u64map *m, size_t *pos, u64 *key, u64 *val);

static inline u64 hash_u64(u64 x)
{
	/* splitmix64 finalizer: cheap and spreads nearby keys well. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* --- Parsing -------------------------------------------------------------
 * Each returns 0 on success, -1 with err_set() naming the bad text. */
int parse_u64(const char *s, u64 *out);      /* decimal, 0x hex */
int parse_int(const char *s, int *out);
int parse_double(const char *s, double *out);
/* "0-3,5,7-8" -> sorted unique CPU numbers < max_cpu. */
int parse_cpu_list(const char *s, int max_cpu, int **cpus, int *ncpus);
/* "12,34" -> pids/tids. */
int parse_pid_list(const char *s, pid_t **pids, int *npids);

/* --- Files -------------------------------------------------------------- */
/* Reads a whole (small, e.g. /proc or /sys) file; NUL-terminated.
 * Returns NULL with err_set on failure.  *len may be NULL. */
char *read_text_file(const char *path, size_t *len);
/* The same, giving up (NULL) once *stop turns true: checked between reads
 * of at most 256 KB, for a reader on a thread whose result may no longer
 * be wanted. */
char *read_text_file_unless(const char *path, size_t *len, const bool *stop);
/* write(2) all of buf, retrying on EINTR/partial writes. -1 on error. */
int write_all(int fd, const void *buf, size_t n);
/* mkdir -p: each missing directory of path made with mode; -1 with
 * err_set when one cannot be made. */
int mkdir_p(const char *path, mode_t mode);

/* --- Time --------------------------------------------------------------- */
u64 now_ns(void);          /* CLOCK_MONOTONIC */
/* Intervals (--interval): runs of empty intervals too long to print one
 * by one (a gap in the recording, or a time far off that damage made: one
 * byte can move a time by 52 days), counted: how many intervals in all,
 * in how many runs, and the longest run's start and end (ns). */
#define EMPTY_RUN_MIN 10
struct empty_runs {
	u64 intervals, runs;
	u64 from, to;
};
/* After the interval ending at end: how many more of length step end at
 * or before t, all empty, when they are EMPTY_RUN_MIN or more (counted in
 * r, for the caller to skip); 0 for a short run, which the views print as
 * they always did. */
u64 empty_runs_skip(struct empty_runs *r, u64 end, u64 t, u64 step);

/* --- Machine facts ------------------------------------------------------ */
int cpus_possible(void);   /* highest possible CPU number + 1 */
/* Whether thread tid of process pid is gone (tgkill(pid, tid, 0): ESRCH).
 * tid == pid asks for the process, and so does tid -1, the kernel's id for
 * a thread sampled after its tid was released.  A zombie is still there
 * (unlike in stat's /proc-based task_gone, which watches for a task to
 * stop running).  The idle task (0), an unknown process (-1) and a task
 * we may not signal are never gone. */
bool task_missing(u32 pid, u32 tid);
/* Online CPUs (sorted). Caller frees. Returns count, -1 on error. */
int cpus_online(int **cpus);
/* Raises the soft limit of open files to the hard one: events times CPUs
 * times threads can pass the default 1024 descriptors. */
void fd_limit_raise(void);

#endif
