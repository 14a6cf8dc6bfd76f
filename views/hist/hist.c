/* hist.c - the report analysis's summing: sums sample periods into
 * entries keyed by the chosen sort keys (the sort keys, entries, the
 * unique stacks samples land on, settling them into stacks of places,
 * self and children periods) and, with -g, a call tree per entry.
 * hist-print.c prints the tables as perf report --stdio does. */
#include "views/hist/hist-internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- sort keys ------------------------------------------------------------ */

static const char *const key_names[HK_MAX] = {
	"comm", "pid", "dso", "sym", "cpu", "srcline",
};

/* Sets the error for a bad --sort, with the keys there are. */
static int bad_sort(const char *what)
{
	char known[128] = "";
	for (int k = 0; k < HK_MAX; k++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 k ? ", " : "", key_names[k]);
	err_set("%s (known keys: %s)", what, known);
	return -1;
}

int hist_parse_sort(struct hist_opts *o, const char *spec)
{
	o->nkeys = 0;
	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");
		int found = -1;
		for (int k = 0; k < HK_MAX; k++)
			if (strlen(key_names[k]) == n && !strncmp(p, key_names[k], n))
				found = k;
		if (n == 6 && !strncmp(p, "symbol", 6))
			found = HK_SYM;
		/* ember's name for the per-thread key before it followed
		 * perf's pid: one key, not a second meaning. */
		if (n == 3 && !strncmp(p, "tid", 3))
			found = HK_PID;
		if (found < 0 || o->nkeys >= HK_MAX) {
			char what[256];
			snprintf(what, sizeof(what), "unknown sort key '%.*s'", (int)n, p);
			return bad_sort(what);
		}
		o->keys[o->nkeys++] = (enum hist_key_kind)found;
		p += n + (p[n] == ',');
	}
	if (!o->nkeys)
		return bad_sort("empty --sort");
	return 0;
}

static bool uses(const struct hist *h, enum hist_key_kind k)
{
	for (int i = 0; i < h->o.nkeys; i++)
		if (h->o.keys[i] == k)
			return true;
	return false;
}

static const char *intern(struct hist *h, const char *str)
{
	return rp_places_intern(&h->places, str);
}

/* The interned copy of a symbols' line string, hashed once per string:
 * its address is stable until the files are released (hist_forget). */
static const char *intern_line(struct hist *h, const char *line)
{
	bool created;
	u64 *slot = u64map_slot(&h->by_pointer, (u64)(uintptr_t)line, &created);
	if (created)
		*slot = (u64)(uintptr_t)intern(h, line);
	return (const char *)(uintptr_t)*slot;
}

static const struct rp_place *place_at(const struct hist *h, u32 id)
{
	return rp_place_at(&h->places, id);
}

/* The part of a key that comes from the sample's thread and CPU.  comm
 * is the name the thread had at the sample; pid is perf's per-thread key
 * (the thread, whatever it was called), shown with the thread's latest
 * name (thread_names: samples come in time order). */
static struct hist_key thread_key(struct hist *h, const struct rp_sample *s)
{
	struct hist_key k;
	memset(&k, 0, sizeof(k));
	if (uses(h, HK_COMM) || uses(h, HK_PID)) {
		/* Consecutive samples are mostly one thread's: intern once. */
		if (s->thread != h->last_thread || s->thread->comm_changes != h->last_changes) {
			h->last_thread = s->thread;
			h->last_changes = s->thread->comm_changes;
			h->last_comm = intern(h, s->thread->comm);
			*u64map_slot(&h->thread_names,
				     thread_name_key(s->thread->pid, s->thread->tid), NULL) =
				(u64)(uintptr_t)h->last_comm;
		}
	}
	if (uses(h, HK_COMM))
		k.comm = h->last_comm;
	if (uses(h, HK_PID)) {
		k.pid = s->thread->pid;
		k.tid = s->thread->tid;
	}
	if (uses(h, HK_CPU))
		k.cpu = s->s->cpu;
	return k;
}

/* The key of frame f under a thread part, holding only the keys in use. */
static struct hist_key make_key(struct hist *h, const struct hist_key *thread,
				const struct cframe *f)
{
	struct hist_key k = *thread;
	const struct rp_place *pl = place_at(h, f->place);
	if (uses(h, HK_DSO) || uses(h, HK_SYM))
		k.dso_name = pl->file;
	if (uses(h, HK_SYM)) {
		k.kernel = f->kernel;
		if (pl->sym.name) {
			k.sym_name = pl->sym.name;
			k.sym_start = pl->sym.start;
		} else {
			k.addr = f->offset;
		}
	}
	return k;
}

static struct entry *find_entry(struct hist *h, struct table *t, const struct hist_key *k)
{
	for (u64 hash = key_hash(k);; hash++) {
		bool created;
		u64 *slot = u64map_slot(&t->index, hash, &created);
		if (created) {
			struct entry e = { .k = *k, .tree = -1, .memo = -1, .id = h->next_entry_id++ };
			VEC_PUSH(&t->entries, e);
			*slot = t->entries.n;
			return &t->entries.v[t->entries.n - 1];
		}
		struct entry *e = &t->entries.v[*slot - 1];
		if (key_equal(&e->k, k))
			return e;
	}
}

/* ---- call trees ----------------------------------------------------------- */

static int node_new(struct hist *h, const struct cframe *f)
{
	const char *name = place_at(h, f->place)->sym.name;
	struct call_node n = {
		.name = name, .addr = name ? 0 : f->offset,
		.kernel = f->kernel, .first_child = -1, .next_sibling = -1,
	};
	VEC_PUSH(&h->nodes, n);
	return (int)h->nodes.n - 1;
}

/* The list a new child of parent (-1: the entry's top) goes into.  Taken
 * afresh after each node_new: adding a node may move the nodes array. */
static int *child_list(struct hist *h, struct entry *e, int parent)
{
	return parent < 0 ? &e->tree : &h->nodes.v[parent].first_child;
}

/* The child of parent (-1: the top of the entry's tree) for the frame
 * whose frame_entry is fe, created when missing.  Every stack under one
 * entry has the entry's thread key and event, so fe alone tells frames
 * apart there, and (parent, fe) is an exact key: one probe, no compare.
 * A node can have thousands of children, too many to walk each time. */
static int node_child(struct hist *h, struct entry *e, int parent, u32 fe,
		      const struct cframe *f)
{
	/* Node indexes are ints and entry ids stay below 2^31 (an entry
	 * is far bigger than 1 byte): the two kinds of parent never meet. */
	u64 where = parent < 0 ? (1ull << 31) | e->id : (u64)parent;
	bool created;
	u64 *slot = u64map_slot(&h->child_index, where << 32 | fe, &created);
	if (!created)
		return (int)*slot;
	int n = node_new(h, f);
	*slot = (u64)n;
	int *first = child_list(h, e, parent);
	h->nodes.v[n].next_sibling = *first;
	*first = n;
	return n;
}

/* Adds the chain frames[from..to) (stepping by dir) under the entry;
 * fes[i] is frame i's frame_entry.  The part the entry's last path shares
 * is walked from the memo: the same frames lead to the same nodes. */
static void tree_add(struct hist *h, struct entry *e, const struct cframe *frames,
		     const u32 *fes, int from, int to, int dir, u64 period)
{
	struct path_memo *m = e->memo >= 0 ? &h->memos.v[e->memo] : NULL;
	bool same = m != NULL;
	int parent = -1;
	u32 depth = 0;
	for (int i = from; i != to; i += dir, depth++) {
		if (same && depth < m->n && m->fe[depth] == fes[i]) {
			parent = m->node[depth];
		} else {
			same = false;
			parent = node_child(h, e, parent, fes[i], &frames[i]);
			if (m && depth < MEMO_DEPTH) {
				m->fe[depth] = fes[i];
				m->node[depth] = parent;
			}
		}
		h->nodes.v[parent].period += period;
	}
	if (m)
		m->n = MIN(depth, (u32)MEMO_DEPTH);
}

/* ---- the sink ------------------------------------------------------------- */

static u64 sample_period(const struct rp_sample *s)
{
	const struct perf_event_attr *a = &s->attr->attr;
	if (a->sample_type & PERF_SAMPLE_PERIOD)
		return s->s->period;
	return a->freq ? 1 : (a->sample_period ? a->sample_period : 1);
}

static struct table *table_at(struct hist *h, size_t i)
{
	if (i >= h->tables.n) {
		VEC_GROW(&h->tables, i + 1);
		memset(h->tables.v + h->tables.n, 0,
		       (i + 1 - h->tables.n) * sizeof(struct table));
		h->tables.n = i + 1;
	}
	return &h->tables.v[i];
}

/* A small number for a thread key, so frame_entry() can hash it. */
static u32 thread_id(struct hist *h, const struct hist_key *thread)
{
	for (u64 hash = key_hash(thread);; hash++) {
		bool created;
		u64 *slot = u64map_slot(&h->thread_index, hash, &created);
		if (created) {
			VEC_PUSH(&h->thread_keys, *thread);
			*slot = h->thread_keys.n;
			return (u32)(h->thread_keys.n - 1);
		}
		if (key_equal(&h->thread_keys.v[*slot - 1], thread))
			return (u32)(*slot - 1);
	}
}

static bool frame_entry_is(const struct frame_entry *fe, const struct stack *st,
			   const struct cframe *f)
{
	return fe->thread_id == st->thread_id && fe->table == st->table &&
	       fe->place == f->place && fe->kernel == f->kernel && fe->offset == f->offset;
}

/* The frame_entries index of frame f of stack st (its entry is there). */
static u32 frame_entry(struct hist *h, struct table *t, const struct stack *st,
		       const struct cframe *f)
{
	u64 hash = hash_u64(((u64)st->thread_id << 32 | st->table) ^
			    hash_u64((u64)f->place << 1 ^ f->offset ^ ((u64)f->kernel << 63)));
	for (;; hash++) {
		bool created;
		u64 *slot = u64map_slot(&h->frame_index, hash, &created);
		if (!created) {
			const struct frame_entry *fe = &h->frame_entries.v[*slot - 1];
			if (frame_entry_is(fe, st, f))
				return (u32)(*slot - 1);
			continue;
		}
		struct frame_entry fe = {
			.place = f->place, .offset = f->offset,
			.thread_id = st->thread_id, .table = (u32)st->table, .kernel = f->kernel,
		};
		/* By line, the place (which still names tree nodes) has no
		 * one entry: line_entry() finds it per frame. */
		if (!h->by_line) {
			struct hist_key k = make_key(h, &h->thread_keys.v[st->thread_id], f);
			fe.entry = (size_t)(find_entry(h, t, &k) - t->entries.v);
		}
		VEC_PUSH(&h->frame_entries, fe);
		*slot = h->frame_entries.n;
		return (u32)(h->frame_entries.n - 1);
	}
}

/* A kernel frame the replay left unresolved gets its name now. */
static void resolve_pending(struct hist *h, struct hframe *f)
{
	if (!f->pending)
		return;
	struct rp_frame rf = { .ip = f->offset, .addr = f->offset, .offset = f->offset,
			       .kernel = f->kernel, .pending = true };
	rp_resolve(h->rp, &rf);
	*f = (struct hframe){ rf.dso, rf.sym, rf.offset, rf.kernel, false, f->inline_scope };
}

/* The srcline key's text for a frame without a line: what perf prints
 * when its line lookup fails (rp_put_line_stand_in), interned. */
static const char *stand_in(struct hist *h, const struct cframe *f, const struct hsrc *src)
{
	struct strbuf *b = &h->line_buf;
	const struct rp_place *pl = place_at(h, f->place);
	sb_reset(b);
	rp_put_line_stand_in_file(b, pl->sym.name ? &pl->sym : NULL, pl->file, f->kernel,
				  src->addr);
	return intern(h, b->s);
}

/* The srcline key of a frame: a small number for its text (its line,
 * interned as stacks settled; else its stand-in), so keys stay the size
 * they were without it. */
static u32 line_id(struct hist *h, const struct cframe *f, const struct hsrc *src)
{
	const char *text = src->line ? src->line : stand_in(h, f, src);
	bool created;
	u64 *slot = u64map_slot(&h->line_ids, (u64)(uintptr_t)text, &created);
	if (created) {
		VEC_PUSH(&h->line_names, text);
		*slot = h->line_names.n;
	}
	return (u32)*slot;
}

/* The entry of frame f of stack st by its keys and its line. */
static u32 line_entry(struct hist *h, struct table *t, const struct stack *st,
		      const struct cframe *f, const struct hsrc *src)
{
	struct hist_key k = make_key(h, &h->thread_keys.v[st->thread_id], f);
	k.line = line_id(h, f, src);
	return (u32)(find_entry(h, t, &k) - t->entries.v);
}

static bool same_src(const struct hsrc *a, const struct hsrc *b)
{
	return a->line == b->line && a->addr == b->addr;
}

/* Whether two frames land on one frame_entry (under one thread key and
 * event): frame_entry_is() for two frames. */
static bool same_place(const struct cframe *a, const struct cframe *b)
{
	return a->place == b->place && a->kernel == b->kernel && a->offset == b->offset;
}

/* The frame that has the self time: the sampled function's, as perf
 * counts it, not that of a function inlined into it (those get children
 * time only). */
static int self_frame(const struct cframe *frames, int n)
{
	int self = 0;
	while (self < n - 1 && frames[self].inline_scope)
		self++;
	return self;
}

/* Pass 1 over one unique settled stack (all its samples at once): the
 * entry of each frame (kept for pass 2), self and children periods, every
 * distinct entry along the chain counted once. */
static void sum_stack(struct hist *h, const struct stack *st, const struct stack *prev)
{
	struct table *t = table_at(h, st->table);
	int n = (int)st->nframes;
	const struct cframe *frames = h->cframes.v + st->first;
	u32 *entries = h->frame_entry_of.v + st->first;
	u32 *fes = h->frame_fe_of.v + st->first;
	/* The previous stack, aligned at the root, often shares frames with
	 * this one: those have its frame_entries, with no lookup. */
	int shift = 0;
	if (prev && prev->thread_id == st->thread_id && prev->table == st->table)
		shift = (int)prev->nframes - n;
	else
		prev = NULL;
	for (int i = 0; i < n; i++) {
		int k = i + shift;
		bool shared = prev && k >= 0 && k < (int)prev->nframes &&
			      same_place(&h->cframes.v[prev->first + (size_t)k], &frames[i]);
		size_t at = shared ? prev->first + (size_t)k : 0;   /* prev's frame */
		fes[i] = shared ? h->frame_fe_of.v[at] : frame_entry(h, t, st, &frames[i]);
		if (!h->by_line)
			entries[i] = (u32)h->frame_entries.v[fes[i]].entry;
		else if (shared && same_src(&h->csrcs.v[at], &h->csrcs.v[st->first + (size_t)i]))
			entries[i] = h->frame_entry_of.v[at];
		else
			entries[i] = line_entry(h, t, st, &frames[i], &h->csrcs.v[st->first + (size_t)i]);
	}
	t->used = true;
	t->total += st->period;
	t->samples += st->samples;
	int self = self_frame(frames, n);
	struct entry *leaf = &t->entries.v[entries[self]];
	leaf->self += st->period;
	leaf->samples += st->samples;
	if (!h->o.children)
		return;
	h->sample_seq++;
	for (int i = 0; i < n; i++) {
		struct entry *e = &t->entries.v[entries[i]];
		if (e->seen != h->sample_seq) {
			e->seen = h->sample_seq;
			e->children += st->period;
		}
	}
}

/* Pass 2: call trees, only for the entries whose trees will show. */
static void tree_stack(struct hist *h, const struct stack *st)
{
	struct table *t = table_at(h, st->table);
	int n = (int)st->nframes;
	const struct cframe *frames = h->cframes.v + st->first;
	const u32 *entries = h->frame_entry_of.v + st->first;
	const u32 *fes = h->frame_fe_of.v + st->first;
	if (!h->o.children) {
		/* The tree of the entry that has the self time, from its
		 * machine frame on: perf leaves out the functions inlined
		 * at the sampled address there. */
		int self = self_frame(frames, n);
		struct entry *leaf = &t->entries.v[entries[self]];
		if (!leaf->tree_wanted)
			return;
		if (h->o.graph == HG_CALLEE)
			tree_add(h, leaf, frames, fes, self, n, 1, st->period);
		else
			tree_add(h, leaf, frames, fes, n - 1, self - 1, -1, st->period);
		return;
	}
	h->sample_seq++;
	for (int i = 0; i < n; i++) {
		struct entry *e = &t->entries.v[entries[i]];
		if (e->seen == h->sample_seq || !e->tree_wanted)
			continue;
		e->seen = h->sample_seq;
		/* As perf: with children, an entry's tree is what it calls,
		 * and the sampled function's own tree is the whole chain. */
		if (h->o.graph == HG_CALLER)
			tree_add(h, e, frames, fes, i ? i : n - 1, -1, -1, st->period);
		else
			tree_add(h, e, frames, fes, i, n, 1, st->period);
	}
}

/* What makes two frames the same for every key and tree: the resolved
 * place, not the exact address. */
static u64 frame_hash(u64 x, const struct rp_frame *f)
{
	return hash_u64(x ^ (u64)(uintptr_t)f->dso ^ ((u64)(uintptr_t)f->sym << 1) ^
			(f->sym ? 0 : f->offset) ^ f->kernel);
}

static bool same_frames(const struct hframe *a, const struct rp_frame *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].dso != b[i].dso || a[i].sym != b[i].sym || a[i].kernel != b[i].kernel ||
		    (!a[i].sym && a[i].offset != b[i].offset))
			return false;
	return true;
}

static struct hframe hframe_of(const struct rp_frame *f)
{
	return (struct hframe){ f->dso, f->sym, f->offset, f->kernel, f->pending,
				f->inline_scope };
}

/* thread_id() of the sample's thread key, remembered for the next
 * samples: runs of one thread are common. */
static u32 sample_thread_id(struct hist *h, const struct hist_key *thread)
{
	if (!h->last_key_valid || !key_equal(&h->last_key, thread)) {
		h->last_key = *thread;
		h->last_key_valid = true;
		h->last_thread_id = thread_id(h, thread);
	}
	return h->last_thread_id;
}

static bool same_srcs(const struct hsrc *a, const struct hsrc *b, int n)
{
	for (int i = 0; i < n; i++)
		if (!same_src(&a[i], &b[i]))
			return false;
	return true;
}

/* The srcline key's view of the sample's frames: each frame's line (a
 * caller's is the line of its call), except that the frame keeping the
 * self time, the machine frame under any inlined callees, takes the
 * sampled address's own line: perf keys a sample by the line of its ip. */
static const struct hsrc *sample_srcs(struct hist *h, const struct rp_sample *s)
{
	int n = s->nframes, self = 0;
	while (self < n - 1 && s->frames[self].inline_scope)
		self++;
	VEC_GROW(&h->sample_srcs, (size_t)n);
	for (int i = 0; i < n; i++) {
		const struct rp_frame *f = &s->frames[i == self ? 0 : i];
		h->sample_srcs.v[i] = (struct hsrc){ rp_srcline(h->rp, f), f->addr };
	}
	return h->sample_srcs.v;
}

/* Finds or adds the unique stack of this sample.  Samples only count into
 * stacks; entries are built once per stack at the end, so a profile of a
 * million samples over a few thousand stacks costs a few thousand walks.
 * src (by line only, else NULL) tells apart frames of one function at
 * different lines or addresses. */
static struct stack *find_stack(struct hist *h, const struct hist_key *thread, size_t table,
				const struct rp_frame *frames, const struct hsrc *src, int n)
{
	u32 tid = sample_thread_id(h, thread);
	u64 hash = hash_u64((u64)tid << 32 ^ ((u64)table << 40) ^ (u64)n);
	for (int i = 0; i < n; i++)
		hash = frame_hash(hash, &frames[i]);
	for (int i = 0; src && i < n; i++)
		hash = hash_u64(hash ^ src[i].addr ^ (u64)(uintptr_t)src[i].line);
	for (;; hash++) {
		bool created;
		u64 *slot = u64map_slot(&h->stack_index, hash, &created);
		if (created) {
			struct stack st = { .thread_id = tid, .table = (u32)table,
					    .first = h->frames.n, .nframes = (u32)n };
			VEC_GROW(&h->frames, h->frames.n + (size_t)n);
			for (int i = 0; i < n; i++)
				h->frames.v[h->frames.n + (size_t)i] = hframe_of(&frames[i]);
			h->frames.n += (size_t)n;
			if (src) {
				VEC_GROW(&h->srcs, h->frames.n);
				memcpy(h->srcs.v + st.first, src, (size_t)n * sizeof(*src));
				h->srcs.n = h->frames.n;
			}
			VEC_PUSH(&h->stacks, st);
			*slot = h->stacks.n;
			return &h->stacks.v[h->stacks.n - 1];
		}
		struct stack *st = &h->stacks.v[*slot - 1];
		if (st->thread_id == tid && st->table == table && st->nframes == (u32)n &&
		    same_frames(h->frames.v + st->first, frames, n) &&
		    (!src || same_srcs(h->srcs.v + st->first, src, n)))
			return st;
	}
}

static int hist_on_sample(void *ctx, const struct rp_sample *s)
{
	struct hist *h = ctx;
	if (!s->nframes || !s->attr)
		return 0;
	struct hist_key thread = thread_key(h, s);
	const struct hsrc *src = h->by_line ? sample_srcs(h, s) : NULL;
	struct stack *st = find_stack(h, &thread, (size_t)s->attr->index, s->frames, src,
				      s->nframes);
	st->period += sample_period(s);
	st->samples++;
	return 0;
}

/* A tree shows only branches of at least GRAPH_MIN_PERCENT of the total,
 * so entries below that (or below --percent-limit) need none: building
 * trees for the few entries that show them is most of the saving. */
static void choose_trees(struct hist *h)
{
	double limit = MAX(GRAPH_MIN_PERCENT, h->o.percent_limit);
	for (size_t i = 0; i < h->tables.n; i++) {
		struct table *t = &h->tables.v[i];
		for (size_t j = 0; j < t->entries.n; j++) {
			struct entry *e = &t->entries.v[j];
			e->tree_wanted = pct(sort_value(h, e), t->total) >= limit;
			if (e->tree_wanted) {
				struct path_memo m = { .n = 0 };
				e->memo = (int)h->memos.n;
				VEC_PUSH(&h->memos, m);
			}
		}
	}
}

/* ---- settling: stacks of places ------------------------------------------ */

static u64 cframe_hash(u64 x, const struct cframe *f)
{
	return hash_u64(x ^ ((u64)f->place << 1) ^ f->offset ^ ((u64)f->kernel << 63));
}

static bool same_cstack(const struct hist *h, const struct stack *a, const struct stack *b,
			const struct cframe *frames, const struct hsrc *srcs)
{
	if (a->thread_id != b->thread_id || a->table != b->table || a->nframes != b->nframes)
		return false;
	for (u32 i = 0; i < a->nframes; i++)
		if (!same_place(&h->cframes.v[a->first + i], &frames[i]))
			return false;
	return !srcs || same_srcs(h->csrcs.v + a->first, srcs, (int)a->nframes);
}

/* The settled stack of these frames (at the end of cframes, csrcs, not
 * yet counted there): an earlier one of the same places takes them,
 * else they become a new one. */
static struct stack *settled_stack(struct hist *h, const struct stack *st)
{
	const struct cframe *frames = h->cframes.v + h->cframes.n;
	const struct hsrc *srcs = h->by_line ? h->csrcs.v + h->cframes.n : NULL;
	u64 hash = hash_u64((u64)st->thread_id << 32 ^ ((u64)st->table << 40) ^ st->nframes);
	for (u32 i = 0; i < st->nframes; i++)
		hash = cframe_hash(hash, &frames[i]);
	for (u32 i = 0; srcs && i < st->nframes; i++)
		hash = hash_u64(hash ^ srcs[i].addr ^ (u64)(uintptr_t)srcs[i].line);
	for (;; hash++) {
		bool created;
		u64 *slot = u64map_slot(&h->cstack_index, hash, &created);
		if (!created) {
			struct stack *have = &h->cstacks.v[*slot - 1];
			if (same_cstack(h, have, st, frames, srcs))
				return have;
			continue;
		}
		struct stack c = { .thread_id = st->thread_id, .table = st->table,
				   .nframes = st->nframes, .first = h->cframes.n };
		h->cframes.n += st->nframes;
		if (srcs)
			h->csrcs.n = h->cframes.n;
		VEC_PUSH(&h->cstacks, c);
		*slot = h->cstacks.n;
		return &h->cstacks.v[h->cstacks.n - 1];
	}
}

/* A frame as its place (kernel frames left pending got their names just
 * before, kallsyms loaded meanwhile, once per unique stack). */
static struct cframe settle_frame(struct hist *h, const struct hframe *f)
{
	const struct rp_place *pl = rp_place_of(&h->places, f->dso, f->sym);
	return (struct cframe){ pl->sym.name ? 0 : f->offset, pl->id, f->kernel,
				f->inline_scope };
}

static bool same_hframe(const struct hframe *a, const struct hframe *b)
{
	return a->dso == b->dso && a->sym == b->sym && a->kernel == b->kernel &&
	       a->pending == b->pending && (a->sym || a->offset == b->offset);
}

/* Frame k of stack st as its place (and line) into cframes (csrcs) at
 * `to`: copied from the previous stack's frame aligned at the root when
 * that is the same frame (consecutive stacks mostly share their
 * callers), else looked up. */
static void settle_at(struct hist *h, const struct stack *st, u32 k, const struct stack *prev,
		      size_t prev_at, size_t to)
{
	struct hframe *f = &h->frames.v[st->first + k];
	resolve_pending(h, f);
	s64 j = (s64)k + (prev ? (s64)prev->nframes - (s64)st->nframes : 0);
	bool shared = prev && j >= 0 && j < (s64)prev->nframes &&
		      same_hframe(&h->frames.v[prev->first + (size_t)j], f);
	h->cframes.v[to] = shared ? h->cframes.v[prev_at + (size_t)j] : settle_frame(h, f);
	h->cframes.v[to].inline_scope = f->inline_scope;
	if (!h->by_line)
		return;
	const struct hsrc *src = &h->srcs.v[st->first + k];
	if (shared && same_src(&h->srcs.v[prev->first + (size_t)j], src))
		h->csrcs.v[to] = h->csrcs.v[prev_at + (size_t)j];
	else
		h->csrcs.v[to] = (struct hsrc){ src->line ? intern_line(h, src->line) : NULL,
						src->addr };
}

/* The stacks samples came into since the last settle become stacks of
 * places, which hold no pointer of the symbols: at the end, and before
 * the files are released.  Stacks keep their order of first sample. */
static void settle(struct hist *h)
{
	const struct stack *prev = NULL;
	size_t prev_at = 0;            /* where prev's places are in cframes */
	for (size_t i = 0; i < h->stacks.n; i++) {
		const struct stack *st = &h->stacks.v[i];
		VEC_GROW(&h->cframes, h->cframes.n + st->nframes);
		if (h->by_line)
			VEC_GROW(&h->csrcs, h->cframes.n + st->nframes);
		for (u32 k = 0; k < st->nframes; k++)
			settle_at(h, st, k, prev, prev_at, h->cframes.n + k);
		struct stack *c = settled_stack(h, st);
		c->period += st->period;
		c->samples += st->samples;
		prev = st;
		prev_at = c->first;
	}
	h->stacks.n = h->frames.n = h->srcs.n = 0;
	u64map_free(&h->stack_index);
	u64map_init(&h->stack_index);
}

/* Before the replay releases files: no pointer of theirs stays. */
static int hist_forget(void *ctx)
{
	struct hist *h = ctx;
	settle(h);
	rp_places_forget(&h->places);
	u64map_free(&h->by_pointer);
	u64map_init(&h->by_pointer);
	return 0;
}

static int hist_on_finish(void *ctx)
{
	struct hist *h = ctx;
	settle(h);
	VEC_FREE(&h->stacks);
	VEC_FREE(&h->frames);
	VEC_FREE(&h->srcs);
	VEC_GROW(&h->frame_entry_of, h->cframes.n);
	VEC_GROW(&h->frame_fe_of, h->cframes.n);
	for (size_t i = 0; i < h->cstacks.n; i++)
		sum_stack(h, &h->cstacks.v[i], i ? &h->cstacks.v[i - 1] : NULL);
	if (h->o.graph == HG_NONE)
		return 0;
	choose_trees(h);
	for (size_t i = 0; i < h->cstacks.n; i++)
		tree_stack(h, &h->cstacks.v[i]);
	return 0;
}

/* A thread of the table renamed (prctl, exec) keeps its pid row, under
 * its new name even with no sample after it, as perf shows a thread by
 * its last name. */
static int hist_on_event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct hist *h = ctx;
	if (ev->type != PERF_RECORD_COMM || !uses(h, HK_PID))
		return 0;
	u64 *name = u64map_get(&h->thread_names,
			       thread_name_key(ev->u.comm.pid, ev->u.comm.tid));
	if (name)
		*name = (u64)(uintptr_t)intern(h, ev->u.comm.comm);
	return 0;
}

struct rp_sink hist_sink(struct hist *h)
{
	struct rp_sink sink = { .ctx = h, .sample = hist_on_sample, .event = hist_on_event,
				.finish = hist_on_finish, .forget_files = hist_forget };
	return sink;
}

struct hist *hist_new(const struct hist_opts *o, struct replay *rp)
{
	struct hist *h = xcalloc(1, sizeof(*h));
	h->o = *o;
	h->rp = rp;
	h->by_line = uses(h, HK_SRCLINE);
	h->reader = rp_reader(rp);
	rp_places_init(&h->places);
	u64map_init(&h->stack_index);
	u64map_init(&h->cstack_index);
	u64map_init(&h->child_index);
	u64map_init(&h->thread_index);
	u64map_init(&h->thread_names);
	u64map_init(&h->frame_index);
	u64map_init(&h->by_pointer);
	u64map_init(&h->line_ids);
	return h;
}

void hist_free(struct hist *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->tables.n; i++) {
		VEC_FREE(&h->tables.v[i].entries);
		u64map_free(&h->tables.v[i].index);
	}
	VEC_FREE(&h->tables);
	VEC_FREE(&h->nodes);
	VEC_FREE(&h->memos);
	VEC_FREE(&h->stacks);
	VEC_FREE(&h->frames);
	VEC_FREE(&h->srcs);
	VEC_FREE(&h->cstacks);
	VEC_FREE(&h->cframes);
	VEC_FREE(&h->csrcs);
	u64map_free(&h->cstack_index);
	VEC_FREE(&h->sample_srcs);
	sb_free(&h->line_buf);
	VEC_FREE(&h->line_names);
	u64map_free(&h->line_ids);
	VEC_FREE(&h->frame_entry_of);
	VEC_FREE(&h->frame_fe_of);
	u64map_free(&h->stack_index);
	u64map_free(&h->child_index);
	u64map_free(&h->thread_index);
	u64map_free(&h->thread_names);
	u64map_free(&h->frame_index);
	VEC_FREE(&h->thread_keys);
	VEC_FREE(&h->frame_entries);
	rp_places_free(&h->places);
	u64map_free(&h->by_pointer);
	free(h);
}
