/* collapse.c - the folding sink: each sample's frames named by the
 * folding rule of replay/frames.c (stackcollapse-perf.pl's, on the same
 * frames in perf script text), the stack added to a flame tree. */
#include <stdlib.h>
#include <string.h>

#include "views/collapse/collapse.h"

struct frame_ref {
	size_t off, len;
	enum flame_kind kind;
	bool cached;                 /* in the cache's arena, not the fold's text */
	u32 name;                    /* cached: the tree's id of the name */
};

/* Where a frame's cached names are: refs [first, first + n). */
struct cached_frame {
	u32 first, n;
};

struct collapse {
	const struct collapse_opts *o;
	struct replay *rp;           /* for source lines */
	struct flame_tree *tree;
	enum flame_side side;
	char *event;                 /* the first event seen: the only one folded */
	u64 skipped, folded;
	struct rp_fold fold;         /* this sample's frame names (replay/frames.c) */
	/* Names per symbol (or file) are worked out once: the same few
	 * hundred frames recur in every sample. */
	struct u64map cache;         /* frame key -> cached_frame index + 1 */
	VEC(struct cached_frame) cached;
	VEC(struct frame_ref) cached_refs;
	struct strbuf arena;
	VEC(struct frame_ref) refs;
	VEC(struct flame_frame) frames;
	VEC(struct flame_named) named;
};

/* ---- Naming ------------------------------------------------------------ */

/* The tree's kind of a frame: kernel and JIT kept with --annotate only. */
static enum flame_kind tree_kind(const struct collapse *c, enum rp_frame_kind k)
{
	switch (k) {
	case RP_FRAME_INLINED:
		return FLAME_INLINED;
	case RP_FRAME_KERNEL:
		return c->o->annotate ? FLAME_KERNEL : FLAME_USER;
	case RP_FRAME_JIT:
		return c->o->annotate ? FLAME_JIT : FLAME_USER;
	default:
		return FLAME_USER;
	}
}

/* Refs for the fold's parts from first on. */
static void take_parts(struct collapse *c, size_t first)
{
	for (size_t i = first; i < c->fold.parts.n; i++) {
		const struct rp_fold_part *p = &c->fold.parts.v[i];
		struct frame_ref r = { p->off, p->len, tree_kind(c, p->kind), false, FLAME_NO_NAME };
		VEC_PUSH(&c->refs, r);
	}
}

/* A frame's names depend on its symbol (or file) and java alone (as
 * rp_fold_frame says).  Symbols and dsos live as long as the replay;
 * pointers are 8-aligned, so low bits tell the kinds of key apart. */
static u64 frame_key(const struct rp_frame *f, bool java)
{
	if (f->sym)
		return (u64)(uintptr_t)f->sym | java;
	if (f->dso)
		return (u64)(uintptr_t)f->dso | 2 | java;
	return 4 | java;
}

/* The text of a ref not yet cached. */
static const char *name_at(const struct collapse *c, const struct frame_ref *r)
{
	return c->fold.text.s ? c->fold.text.s + r->off : "";
}

/* Moves the refs made since first into the cache under key, their names
 * interned in the tree once for all the samples that will show them. */
static void remember(struct collapse *c, u64 key, size_t first)
{
	struct cached_frame cf = { (u32)c->cached_refs.n, (u32)(c->refs.n - first) };
	for (size_t i = first; i < c->refs.n; i++) {
		struct frame_ref *r = &c->refs.v[i];
		struct frame_ref moved = { c->arena.len, r->len, r->kind, true,
					   flame_tree_name(c->tree, name_at(c, r), r->len) };
		sb_add(&c->arena, name_at(c, r), r->len);
		VEC_PUSH(&c->cached_refs, moved);
		*r = moved;
	}
	VEC_PUSH(&c->cached, cf);
	*u64map_slot(&c->cache, key, NULL) = c->cached.n;
}

/* With --srcline: the frame's names and " file:line" after the last when
 * the DWARF knows it.  Not cached: the name depends on the address, not
 * the symbol. */
static void add_frame_srcline(struct collapse *c, const struct rp_frame *f, bool java)
{
	size_t first = c->fold.parts.n;
	rp_fold_frame(&c->fold, f, java);
	const char *line = rp_srcline(c->rp, f);
	if (line && c->fold.parts.n > first) {
		struct strbuf *t = &c->fold.text;
		struct rp_fold_part *last = &c->fold.parts.v[c->fold.parts.n - 1];
		while (t->len > last->off && t->s[t->len - 1] == ' ')
			t->s[--t->len] = '\0';
		sb_printf(t, " %s", line);
		last->len = t->len - last->off;
	}
	take_parts(c, first);
}

static void add_frame(struct collapse *c, const struct rp_frame *f, bool java)
{
	if (c->o->srcline) {
		add_frame_srcline(c, f, java);
		return;
	}
	u64 key = frame_key(f, java);
	u64 *hit = u64map_get(&c->cache, key);
	if (hit) {
		const struct cached_frame *cf = &c->cached.v[*hit - 1];
		for (u32 i = 0; i < cf->n; i++)
			VEC_PUSH(&c->refs, c->cached_refs.v[cf->first + i]);
		return;
	}
	size_t first = c->refs.n, parts = c->fold.parts.n, text = c->fold.text.len;
	bool stable = rp_fold_frame(&c->fold, f, java);
	take_parts(c, parts);
	if (stable) {
		remember(c, key, first);
		/* What was added now lives in the arena. */
		c->fold.parts.n = parts;
		c->fold.text.len = text;
		if (c->fold.text.s)
			c->fold.text.s[text] = '\0';
	}
}

/* The process frame: comm, with "-PID" or "-PID/TID". */
static void add_process(struct collapse *c, const struct rp_sample *s)
{
	enum rp_fold_thread show = c->o->tid ? RP_FOLD_TID : c->o->pid ? RP_FOLD_PID : RP_FOLD_COMM;
	rp_fold_process(&c->fold, s->thread->comm, s->s->pid, s->s->tid, show);
	take_parts(c, 0);
}

/* ---- The sink ---------------------------------------------------------- */

/* Only the first event's samples are folded: adding up different events
 * (cycles and page faults) would mean nothing. */
static bool wanted_event(struct collapse *c, const struct pd_attr *a)
{
	const char *name = a->name ? a->name : "";
	if (!c->event)
		c->event = xstrdup(name);
	if (!strcmp(c->event, name))
		return true;
	c->skipped++;
	return false;
}

static u64 sample_count(const struct collapse *c, const struct rp_sample *s)
{
	if (!c->o->weight_period)
		return 1;
	return s->s->period ? s->s->period : 1;
}

/* The stack by its names' text: what fails as flame_tree_add() fails when
 * the tree is full. */
static int add_by_text(struct collapse *c, const struct rp_sample *s, size_t n)
{
	VEC_GROW(&c->frames, n);
	for (size_t i = 0; i < n; i++) {
		const struct frame_ref *r = &c->refs.v[i];
		const char *base = r->cached ? c->arena.s : c->fold.text.s;
		c->frames.v[i] = (struct flame_frame){ base ? base + r->off : "", r->len, r->kind };
	}
	return flame_tree_add(c->tree, c->frames.v, n, sample_count(c, s), c->side);
}

static int collapse_sample(void *ctx, const struct rp_sample *s)
{
	struct collapse *c = ctx;
	if (!s->attr || !s->thread || !wanted_event(c, s->attr))
		return 0;
	rp_fold_reset(&c->fold);
	c->refs.n = 0;
	add_process(c, s);
	bool java = rp_fold_java(s->thread->comm);
	/* A chain perf could not trust prints no frames in perf script, so
	 * the folded line has the process frame alone. */
	int nframes = s->chain_dropped ? 0 : s->nframes;
	for (int i = nframes - 1; i >= 0; i--)
		add_frame(c, &s->frames[i], java);
	size_t n = MIN(c->refs.n, (size_t)FLAME_MAX_DEPTH);
	c->folded++;
	/* Cached frames come with their names' ids; the rest (the process,
	 * names never cached) are interned now. */
	VEC_GROW(&c->named, n);
	for (size_t i = 0; i < n; i++) {
		const struct frame_ref *r = &c->refs.v[i];
		u32 id = r->cached ? r->name : flame_tree_name(c->tree, name_at(c, r), r->len);
		if (id == FLAME_NO_NAME)
			return add_by_text(c, s, n);
		c->named.v[i] = (struct flame_named){ id, r->kind };
	}
	return flame_tree_add_named(c->tree, c->named.v, n, sample_count(c, s), c->side);
}

/* ---- The run ----------------------------------------------------------- */

int collapse_replay(struct rp_opts *rp, const struct collapse_opts *o, struct flame_tree *tree,
		    enum flame_side side, struct collapse_notes *n)
{
	struct replay *r = rp_open(rp);
	if (!r)
		return -1;
	n->no_callchains = !rp_has_callchains(r);
	rp_set_callchains(r, true);
	struct collapse c = { .o = o, .rp = r, .tree = tree, .side = side };
	u64map_init(&c.cache);
	struct rp_sink sink = { .ctx = &c, .sample = collapse_sample };
	int rc = rp_run(r, &sink);
	n->replayed = true;
	n->summary = *rp_summary(r);
	n->skipped = c.skipped;
	snprintf(n->event, sizeof(n->event), "%s", c.event ? c.event : "");
	free(c.event);
	rp_fold_free(&c.fold);
	sb_free(&c.arena);
	u64map_free(&c.cache);
	VEC_FREE(&c.cached);
	VEC_FREE(&c.cached_refs);
	VEC_FREE(&c.refs);
	VEC_FREE(&c.frames);
	VEC_FREE(&c.named);
	rp_close(r);   /* sets no error: the message stays */
	return rc < 0 ? -1 : 0;
}
