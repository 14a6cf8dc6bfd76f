/* folded.c - the tree written back as folded lines ("a;b;c 42"), sorted
 * bytewise by stack as stackcollapse-perf.pl sorts its output. */
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph-internal.h"

static const char *const kind_suffix[] = { "", "_[k]", "_[j]", "_[i]" };

struct line_ref {
	size_t off, len; /* in the text buffer: stack, ' ', counts */
	size_t keylen;   /* the stack's length */
};

struct folded {
	struct flame_tree *t;
	struct strbuf path, text;
	VEC(struct line_ref) lines;
	VEC(u32) todo;             /* DFS stack of nodes */
	VEC(size_t) todo_len;      /* path length before each node's name */
};

/* What a node's own frames hold: its count less its children's. */
static u64 self_count(const struct flame_tree *t, u32 id, int side)
{
	u64 sum = 0;
	for (u32 c = t->nodes.v[id].first_child; c != FLAME_NONE; c = t->nodes.v[c].next_sibling)
		sum = flame_sat_add(sum, t->nodes.v[c].value[side], NULL);
	u64 v = t->nodes.v[id].value[side];
	return v > sum ? v - sum : 0;
}

static void emit_line(struct folded *f, u32 id)
{
	struct flame_tree *t = f->t;
	u64 after = self_count(t, id, 0);
	u64 before = t->diff ? self_count(t, id, 1) : 0;
	if (!after && !before)
		return;
	struct line_ref r = { .off = f->text.len, .keylen = f->path.len };
	sb_add(&f->text, f->path.s, f->path.len);
	if (t->diff)
		sb_printf(&f->text, " %llu", (unsigned long long)before);
	sb_printf(&f->text, " %llu", (unsigned long long)after);
	r.len = f->text.len - r.off;
	VEC_PUSH(&f->lines, r);
}

static void append_name(struct folded *f, u32 id)
{
	const struct flame_node *node = &f->t->nodes.v[id];
	const struct flame_name *n = &f->t->names.v[flame_node_name(node)];
	if (f->path.len)
		sb_add(&f->path, ";", 1);
	sb_add(&f->path, f->t->text.v + n->off, n->len);
	sb_puts(&f->path, kind_suffix[flame_node_kind(node)]);
}

/* Depth first without recursion: stacks may be thousands deep. */
static void walk(struct folded *f)
{
	const struct flame_tree *t = f->t;
	for (u32 c = t->nodes.v[0].first_child; c != FLAME_NONE; c = t->nodes.v[c].next_sibling) {
		VEC_PUSH(&f->todo, c);
		VEC_PUSH(&f->todo_len, (size_t)0);
	}
	while (f->todo.n) {
		u32 id = f->todo.v[--f->todo.n];
		size_t len = f->todo_len.v[--f->todo_len.n];
		f->path.len = len;
		if (f->path.s)
			f->path.s[len] = '\0';
		append_name(f, id);
		emit_line(f, id);
		for (u32 c = t->nodes.v[id].first_child; c != FLAME_NONE;
		     c = t->nodes.v[c].next_sibling) {
			VEC_PUSH(&f->todo, c);
			VEC_PUSH(&f->todo_len, f->path.len);
		}
	}
}

static int cmp_lines(const void *a, const void *b, void *ctx)
{
	const struct line_ref *x = a, *y = b;
	const char *text = ctx;
	size_t n = MIN(x->keylen, y->keylen);
	int c = memcmp(text + x->off, text + y->off, n);
	if (c)
		return c;
	return (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

int flame_write_folded(struct flame_tree *t, FILE *out)
{
	struct folded f = { .t = t };
	walk(&f);
	if (f.lines.n)
		qsort_r(f.lines.v, f.lines.n, sizeof(*f.lines.v), cmp_lines, f.text.s);
	for (size_t i = 0; i < f.lines.n; i++) {
		fwrite(f.text.s + f.lines.v[i].off, 1, f.lines.v[i].len, out);
		fputc('\n', out);
	}
	sb_free(&f.path);
	sb_free(&f.text);
	VEC_FREE(&f.lines);
	VEC_FREE(&f.todo);
	VEC_FREE(&f.todo_len);
	if (fflush(out) != 0 || ferror(out)) {
		err_set_errno("writing folded stacks");
		return -1;
	}
	return 0;
}
