/* parse.c - folded stacks in: "frame;frame;... COUNT" lines from ember or
 * any other collapser.  Input is untrusted (and fuzzed): every line is
 * bounded, every bad line is counted and skipped, nothing is sized from it. */
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph-internal.h"

#define CHUNK (64u << 10)

static void note_bad(struct flame_parse_stats *st, const char *why)
{
	st->bad_lines++;
	if (!st->first_bad_line) {
		st->first_bad_line = st->lines;
		st->first_bad_why = why;
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses the number that ends s[0..*len): digits with an optional
 * fraction (rounded), preceded by a blank.  On success shortens *len to
 * the text before it (blanks trimmed).  1 = found, 0 = none, -1 = too big. */
static int take_count(const char *s, size_t *len, u64 *out)
{
	size_t end = *len, i = end;
	while (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == '.'))
		i--;
	if (i == end || i == 0 || !is_blank(s[i - 1]) || !is_digit(s[i]))
		return 0;
	u64 v = 0;
	size_t j = i;
	for (; j < end && is_digit(s[j]); j++) {
		u64 digit = (u64)(s[j] - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	if (j < end) {                      /* a fraction: ".d..." */
		if (s[j] != '.' || memchr(s + j + 1, '.', end - j - 1))
			return 0;
		if (j + 1 < end && s[j + 1] >= '5')
			v++;
	}
	while (i > 0 && is_blank(s[i - 1]))
		i--;
	*len = i;
	*out = v;
	return 1;
}

/* Reads a trailing _[k] / _[j] / _[i] / _[w] into the frame's kind. */
static void split_annotation(struct flame_frame *f)
{
	if (f->len < 4)
		return;
	const char *e = f->name + f->len - 4;
	if (e[0] != '_' || e[1] != '[' || e[3] != ']')
		return;
	switch (e[2]) {
	case 'k': f->kind = FLAME_KERNEL; break;
	case 'j': f->kind = FLAME_JIT; break;
	case 'i': f->kind = FLAME_INLINED; break;
	case 'w': f->kind = FLAME_USER; break;
	default: return;
	}
	f->len -= 4;
}

/* Splits the stack text at ';' into t->scratch.  -1 when too deep. */
static int split_frames(struct flame_tree *t, const char *s, size_t len)
{
	t->scratch.n = 0;
	for (size_t start = 0;;) {
		const char *semi = memchr(s + start, ';', len - start);
		size_t end = semi ? (size_t)(semi - s) : len;
		if (t->scratch.n >= FLAME_MAX_DEPTH)
			return -1;
		struct flame_frame f = { .name = s + start, .len = end - start, .kind = FLAME_USER };
		split_annotation(&f);
		VEC_PUSH(&t->scratch, f);
		if (!semi)
			return 0;
		start = end + 1;
	}
}

static int add_counts(struct flame_tree *t, u64 before, u64 after, bool two,
		      enum flame_side side, struct flame_parse_stats *st)
{
	const struct flame_frame *f = t->scratch.v;
	size_t n = t->scratch.n;
	u64 old[2] = { t->total[0], t->total[1] };
	if (two && (flame_tree_add(t, f, n, before, FLAME_BEFORE) < 0 ||
		    flame_tree_add(t, f, n, after, FLAME_AFTER) < 0))
		return -1;
	if (!two && flame_tree_add(t, f, n, after, side) < 0)
		return -1;
	if ((t->total[0] == UINT64_MAX && old[0] != UINT64_MAX) ||
	    (t->total[1] == UINT64_MAX && old[1] != UINT64_MAX))
		st->saturated = true;
	st->stacks++;
	return 0;
}

int flame_parse_line(struct flame_tree *t, const char *line, size_t len,
		     enum flame_side side, struct flame_parse_stats *st)
{
	st->lines++;
	while (len > 0 && is_blank(line[len - 1]))
		len--;
	while (len > 0 && is_blank(*line))
		line++, len--;
	if (!len)
		return 0;                   /* blank lines are not errors */
	u64 after = 0, before = 0;
	int rc = take_count(line, &len, &after);
	if (rc <= 0) {
		note_bad(st, rc < 0 ? "count too large" : "no count at the end");
		return 1;
	}
	/* "stack BEFORE AFTER", as difffolded writes. */
	size_t len2 = len;
	bool two = take_count(line, &len2, &before) == 1 && len2 > 0;
	if (two)
		len = len2;
	if (!len) {
		note_bad(st, "no stack before the count");
		return 1;
	}
	if (split_frames(t, line, len) < 0) {
		note_bad(st, "too many frames");
		return 1;
	}
	return add_counts(t, before, after, two, side, st) < 0 ? -1 : 0;
}

int flame_parse_buf(struct flame_tree *t, const char *buf, size_t len,
		    enum flame_side side, struct flame_parse_stats *st)
{
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;
		if (end - pos > FLAME_MAX_LINE) {
			st->lines++;
			note_bad(st, "line too long");
		} else if (flame_parse_line(t, buf + pos, end - pos, side, st) < 0) {
			return -1;
		}
		pos = end + 1;
	}
	return 0;
}

/* Hands each complete line in buf[from..*end) to the parser; returns where
 * the unfinished last line starts.  *skipping drops the rest of an
 * over-long line up to its newline. */
static long drain_lines(struct flame_tree *t, char *buf, size_t from, size_t end,
			bool *skipping, enum flame_side side, struct flame_parse_stats *st)
{
	size_t start = 0;
	for (;;) {
		char *nl = memchr(buf + from, '\n', end - from);
		if (!nl)
			return (long)start;
		size_t at = (size_t)(nl - buf);
		if (*skipping) {
			*skipping = false;
		} else if (at - start > FLAME_MAX_LINE) {
			st->lines++;
			note_bad(st, "line too long");
		} else if (flame_parse_line(t, buf + start, at - start, side, st) < 0) {
			return -1;
		}
		start = from = at + 1;
	}
}

int flame_parse_file(struct flame_tree *t, FILE *in, enum flame_side side,
		     struct flame_parse_stats *st)
{
	char *buf = xmalloc(FLAME_MAX_LINE + CHUNK);
	size_t have = 0;
	bool skipping = false;
	int rc = 0;
	for (;;) {
		size_t got = fread(buf + have, 1, CHUNK, in);
		if (!got)
			break;
		long start = drain_lines(t, buf, have, have + got, &skipping, side, st);
		if (start < 0) {
			rc = -1;
			break;
		}
		size_t rest = have + got - (size_t)start;
		if (skipping) {
			rest = 0;
		} else if (rest > FLAME_MAX_LINE) {
			st->lines++;
			note_bad(st, "line too long");
			skipping = true;
			rest = 0;
		}
		memmove(buf, buf + start, rest);
		have = rest;
	}
	if (rc == 0 && ferror(in)) {
		err_set_errno("reading folded stacks");
		rc = -1;
	}
	if (rc == 0 && have && !skipping)
		rc = flame_parse_line(t, buf, have, side, st) < 0 ? -1 : 0;
	free(buf);
	return rc;
}
