/* hist.c - the report analysis: sums sample periods into entries keyed by
 * the chosen sort keys, with self and children periods and, with -g, a
 * call tree per entry; prints them as perf report --stdio does. */
#include "views/hist/hist.h"

#include <stdlib.h>
#include <string.h>

/* What an entry is about. Unused keys stay zero.  As in perf, files and
 * symbols compare by name (and symbol start), so two copies of one binary
 * at different paths make one entry; strings are interned so comparing
 * them is comparing pointers.  The names are the table's own (its
 * places'), never the symbols': a live table outlives the files. */
struct hist_key {
	const char *comm;          /* the comm key: the name at the sample */
	u32 pid, tid, cpu;         /* pid, tid: the pid key's thread */
	u32 line;                  /* srcline: 1 + index into line_names (the
				      text, or its stand-in: line_id()) */
	const char *dso_name;
	const char *sym_name;
	u64 sym_start;
	u64 addr;                  /* identifies the frame when sym is NULL */
	bool kernel;
};

/* A call-tree node: the frames beyond the entry's, one level each. */
struct call_node {
	const char *name;          /* its symbol's, or NULL: addr shows */
	u64 addr;
	bool kernel;
	u64 period;
	int first_child, next_sibling;   /* indexes into nodes, -1 = none */
};

struct entry {
	struct hist_key k;
	u64 self, children, samples;
	u64 seen;                  /* last sample that counted its children */
	int tree;                  /* first root call_node, -1 = none */
	int memo;                  /* its path_memo while trees grow, -1 = none */
	u32 id;                    /* unique among all entries */
	bool tree_wanted;          /* its tree will be printed */
};

/* The last path added to an entry's tree, as frame_entries and the nodes
 * they led to: the next stack under the entry mostly begins the same way,
 * and that part of its path needs no lookups. */
#define MEMO_DEPTH 64
struct path_memo {
	u32 n;
	u32 fe[MEMO_DEPTH];
	int node[MEMO_DEPTH];
};

/* The entries of one event (attr). */
struct table {
	VEC(struct entry) entries;
	struct u64map index;       /* key hash -> entry index + 1 (probing) */
	u64 total, samples;
	bool used;
};

/* Which entry a resolved frame of one thread key and event lands in:
 * remembered, so the entry of a frame is one lookup, not a key built from
 * interned names and looked up each time a stack holds it. */
struct frame_entry {
	u32 place;                 /* rp_places id */
	u64 offset;                /* when there is no symbol */
	u32 thread_id, table;
	bool kernel;
	size_t entry;              /* index into its table's entries */
};

/* A frame of a stack as samples come: what the keys and trees read of a
 * resolved frame, in two thirds of its size.  Its pointers are the
 * symbols', valid until the files are released: settle() then makes
 * the stacks cframes. */
struct hframe {
	struct sym_dso *dso;
	const struct sym *sym;
	u64 offset;                /* the ip while pending */
	bool kernel, pending, inline_scope;
};

/* A frame of a settled stack: its place (the table's own record of file
 * and symbol), so it means the same after the files' release.  Entries
 * and trees are built from these (stacks hold millions of frames). */
struct cframe {
	u64 offset;                /* when the place has no symbol, else 0 */
	u32 place;
	bool kernel, inline_scope;
};

/* What the srcline key reads of a frame, beside frames (same index) and
 * kept only when that key is in use, so other reports pay nothing: the
 * line rp_srcline() gave while the sample's frames were at hand (the
 * symbols' string, one per address; interned once settled), and the
 * file address for frames without one. */
struct hsrc {
	const char *line;
	u64 addr;
};

/* One unique stack of one thread key and event, with its samples: small,
 * as every sample's lookup lands on one.  Samples land on stacks of
 * hframes (frames, srcs); settle() moves them into stacks of cframes
 * (cframes, csrcs), one per distinct stack of places. */
struct stack {
	u32 thread_id;             /* its thread key: thread_keys[thread_id] */
	u32 table;
	u32 nframes;
	size_t first;              /* frames[first .. first + nframes) */
	u64 period, samples;
};

struct hist {
	struct hist_opts o;
	struct replay *rp;
	const struct rp_thread *last_thread;   /* thread_key's cache */
	u32 last_changes;
	const char *last_comm;
	struct hist_key last_key;              /* thread_id's cache */
	u32 last_thread_id;
	bool last_key_valid;
	VEC(struct stack) stacks;  /* since the last settle(), of frames */
	VEC(struct hframe) frames;
	struct u64map stack_index; /* stack hash -> index + 1 (probing) */
	bool by_line;              /* the srcline key is in use */
	VEC(struct hsrc) srcs;     /* per frame of frames, when by_line */
	VEC(struct stack) cstacks; /* settled, of cframes */
	VEC(struct cframe) cframes;
	VEC(struct hsrc) csrcs;    /* per frame of cframes, when by_line */
	struct u64map cstack_index; /* settled stack hash -> index + 1 */
	struct rp_places places;   /* files and symbols; every interned text */
	VEC(struct hsrc) sample_srcs;  /* the current sample's */
	VEC(const char *) line_names; /* interned texts of the srcline key */
	struct u64map line_ids;    /* interned text -> 1 + line_names index */
	struct strbuf line_buf;    /* stand_in()'s scratch */
	VEC(u32) frame_entry_of;   /* per frame of cframes: its entry (pass 1) */
	VEC(u32) frame_fe_of;      /* ... and its frame_entries index */
	struct u64map child_index; /* (parent, frame_entry) -> node index */
	u32 next_entry_id;
	VEC(struct hist_key) thread_keys;     /* thread_id -> key */
	struct u64map thread_names;           /* pid << 32 | tid -> its latest
						 comm (interned), for the pid key */
	struct u64map thread_index;           /* key hash -> thread_id + 1 */
	VEC(struct frame_entry) frame_entries;
	struct u64map frame_index; /* frame_entry_hash -> frame_entries + 1 */
	struct pd_reader *reader;
	VEC(struct table) tables;  /* one per attr */
	VEC(struct call_node) nodes;
	VEC(struct path_memo) memos;  /* one per entry whose tree shows */
	struct u64map by_pointer;  /* a symbols' line string -> interned copy,
				      until the files are released */
	u64 sample_seq;
};

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

static u64 thread_name_key(u32 pid, u32 tid)
{
	return (u64)pid << 32 | tid;
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

static u64 key_hash(const struct hist_key *k)
{
	u64 x = hash_u64((u64)(uintptr_t)k->comm ^ ((u64)k->pid << 32 | k->tid));
	x = hash_u64(x ^ k->cpu ^ (u64)(uintptr_t)k->dso_name);
	x = hash_u64(x ^ (u64)(uintptr_t)k->sym_name ^ k->sym_start ^ k->addr ^ k->kernel);
	return k->line ? hash_u64(x ^ k->line) : x;
}

static bool key_equal(const struct hist_key *a, const struct hist_key *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid &&
	       a->cpu == b->cpu && a->dso_name == b->dso_name &&
	       a->sym_name == b->sym_name && a->sym_start == b->sym_start &&
	       a->addr == b->addr && a->kernel == b->kernel && a->line == b->line;
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

/* Branches of a call tree under this share of the total are not shown
 * (perf's graph,0.5). */
#define GRAPH_MIN_PERCENT 0.5

static double pct(u64 part, u64 total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

static u64 sort_value(const struct hist *h, const struct entry *e)
{
	return h->o.children ? e->children : e->self;
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

/* ---- printing ------------------------------------------------------------- */

/* A count as perf prints it: "501 ", "1K", "2M" (the unit, or a space,
 * right after the number). */
static void sample_count(char *buf, size_t cap, u64 n)
{
	char unit = ' ';
	for (const char *u = "KMG"; *u && n > 1000; u++) {
		n /= 1000;
		unit = *u;
	}
	snprintf(buf, cap, "%llu%c", (unsigned long long)n, unit);
}

void hist_report_header(FILE *out, u64 samples, u64 total, const char *event, bool events,
			u64 lost)
{
	char count[32];
	sample_count(count, sizeof(count), samples);
	fprintf(out, "#\n# Total Lost Samples: %llu\n#\n", (unsigned long long)lost);
	fprintf(out, "# Samples: %s of event%s '%s'\n", count, events ? "s" : "", event);
	fprintf(out, "# Event count (approx.): %llu\n#\n", (unsigned long long)total);
}

/* Digits of v in decimal. */
static size_t dec_len(u64 v)
{
	size_t n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* The dso column: the file's short name, as rp_dso_name() gives it. */
static const char *dso_column(const struct entry *e)
{
	return e->k.dso_name ? e->k.dso_name : rp_dso_name(NULL);
}

static const char *line_name(const struct hist *h, const struct entry *e)
{
	return e->k.line ? h->line_names.v[e->k.line - 1] : "";
}

/* The pid key's name of an entry's thread: its latest. */
static const char *thread_name(const struct hist *h, const struct entry *e)
{
	const u64 *v = u64map_get(&h->thread_names, thread_name_key(e->k.pid, e->k.tid));
	return v ? (const char *)(uintptr_t)*v : "";
}

/* Appends one key's text: what perf shows in that column. */
static void put_key(const struct hist *h, struct strbuf *sb, const struct entry *e,
		    enum hist_key_kind k)
{
	const char *comm = e->k.comm ? e->k.comm : "";
	switch (k) {
	case HK_COMM:
		sb_puts(sb, comm);
		break;
	case HK_PID:   /* perf's "%7d:%s" */
		sb_add_dec(sb, e->k.tid, 7, ' ');
		sb_add(sb, ":", 1);
		sb_puts(sb, thread_name(h, e));
		break;
	case HK_CPU:
		sb_add_dec(sb, e->k.cpu, 3, '0');
		break;
	case HK_DSO:
		sb_puts(sb, dso_column(e));
		break;
	case HK_SRCLINE:
		sb_puts(sb, line_name(h, e));
		break;
	case HK_SYM: {
		struct sym sym = { .start = e->k.sym_start, .name = e->k.sym_name };
		rp_put_sym_column(sb, e->k.sym_name ? &sym : NULL, e->k.addr,
				  rp_level(e->k.kernel));
		break;
	}
	default:
		break;
	}
}

/* The width put_key() gives, without building the text. */
static size_t key_len(const struct hist *h, const struct entry *e, enum hist_key_kind k)
{
	size_t comm = e->k.comm ? strlen(e->k.comm) : 0;
	switch (k) {
	case HK_COMM:
		return comm;
	case HK_PID:
		return MAX(dec_len(e->k.tid), 7) + 1 + strlen(thread_name(h, e));
	case HK_CPU:
		return MAX(dec_len(e->k.cpu), 3);
	case HK_DSO:
		return strlen(dso_column(e));
	case HK_SYM:
		return 4 + (e->k.sym_name ? strlen(e->k.sym_name) : e->k.addr ? 18 : 16);
	case HK_SRCLINE:
		return strlen(line_name(h, e));
	default:
		return 0;
	}
}

static const char *const key_titles[HK_MAX] = {
	"Command", "Pid:Command", "Shared Object", "Symbol", "CPU", "Source:Line",
};


static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;    /* interned: one pointer per name */
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_u64(u64 a, u64 b)
{
	return (a > b) - (a < b);
}

/* A row to sort: its sort value and its compared keys beside it, so no
 * comparison looks at the entry (a cache miss each). */
struct row {
	u64 value;
	const u64 *more;           /* a group's other members' values, or NULL */
	int nmore;
	const char *comm, *dso_name, *sym_name;
	u32 pid, tid, cpu;
	bool kernel;
	u64 sym_start, addr;
	const struct entry *e;
};

/* Descending by period; ties by the keys so output is stable.  Lines
 * (names: line_names) are compared last, from the entries: rows tie on
 * every other key only when the srcline key is in use. */
static bool row_before(const struct row *x, const struct row *y, const char *const *names)
{
	if (x->value != y->value)
		return x->value > y->value;
	for (int i = 0; i < x->nmore; i++)
		if (x->more[i] != y->more[i])
			return x->more[i] > y->more[i];
	/* Equal children: the larger self first, as perf orders them. */
	if (x->e->self != y->e->self)
		return x->e->self > y->e->self;
	/* A total order on the keys, so equal periods print in a stable
	 * order. */
	int c = cmp_str(x->comm, y->comm);
	c = c ? c : cmp_u64(x->pid, y->pid);
	c = c ? c : cmp_u64(x->tid, y->tid);
	c = c ? c : cmp_u64(x->cpu, y->cpu);
	c = c ? c : cmp_str(x->dso_name, y->dso_name);
	c = c ? c : cmp_str(x->sym_name, y->sym_name);
	c = c ? c : cmp_u64(x->sym_start, y->sym_start);
	c = c ? c : cmp_u64(x->addr, y->addr);
	c = c ? c : cmp_u64(x->kernel, y->kernel);
	if (!c && x->e->k.line != y->e->k.line)
		c = strcmp(names[x->e->k.line - 1], names[y->e->k.line - 1]);
	return c < 0;
}

/* A merge sort with the comparison inlined: tens of thousands of rows,
 * where qsort's indirect calls were most of the printing time.  The keys
 * are a total order, so any correct sort gives the same rows. */
static void sort_rows(struct row *v, size_t n, const char *const *names)
{
	struct row *tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
	struct row *src = v, *dst = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = MIN(lo + width, n), hi = MIN(lo + 2 * width, n);
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = row_before(&src[j], &src[i], names) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		struct row *swap = src;
		src = dst;
		dst = swap;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

static void frame_label(const struct call_node *n, char *buf, size_t cap)
{
	if (n->name)
		snprintf(buf, cap, "%s", n->name);
	else
		snprintf(buf, cap, "%#llx", (unsigned long long)n->addr);
}

/* The nodes of a sibling list that show (at least GRAPH_MIN_PERCENT of
 * total, as perf's graph,0.5), largest period first; equal periods keep
 * the list's order.  Filtered before sorting: a node can have thousands
 * of children, of which a handful show. */
static int shown_children(const struct hist *h, int first, u64 total, int **order)
{
	int n = 0;
	for (int i = first; i >= 0; i = h->nodes.v[i].next_sibling)
		if (pct(h->nodes.v[i].period, total) >= GRAPH_MIN_PERCENT)
			n++;
	*order = xmalloc((size_t)(n ? n : 1) * sizeof(int));
	n = 0;
	for (int i = first; i >= 0; i = h->nodes.v[i].next_sibling)
		if (pct(h->nodes.v[i].period, total) >= GRAPH_MIN_PERCENT)
			(*order)[n++] = i;
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && h->nodes.v[(*order)[b]].period >
					 h->nodes.v[(*order)[b - 1]].period; b--) {
			int t = (*order)[b];
			(*order)[b] = (*order)[b - 1];
			(*order)[b - 1] = t;
		}
	return n;
}

/* Prints frames while the chain does not branch; returns the first
 * sibling list that does (or -1). */
static int print_straight(const struct hist *h, FILE *out, const struct call_node *node,
			  const struct strbuf *indent)
{
	char label[512];
	int child = node->first_child;
	while (child >= 0 && h->nodes.v[child].next_sibling < 0 &&
	       h->nodes.v[child].period == node->period) {
		node = &h->nodes.v[child];
		frame_label(node, label, sizeof(label));
		fprintf(out, "%s%s\n", indent->s, label);
		child = node->first_child;
	}
	return child;
}

/* Prints the subtree under the sibling list `first`, perf-graph style:
 * each branch shows its share of the total; a lone full-width chain is
 * drawn with "---". */
static void print_tree(const struct hist *h, FILE *out, int first, u64 parent,
		       u64 total, struct strbuf *indent)
{
	int *order;
	int n = shown_children(h, first, total, &order);
	for (int c = 0; c < n; c++) {
		const struct call_node *node = &h->nodes.v[order[c]];
		bool last = c + 1 == n;
		char label[512], head[64];
		frame_label(node, label, sizeof(label));
		size_t keep = indent->len;
		fprintf(out, "%s|\n", indent->s);
		if (n == 1 && node->period == parent) {
			fprintf(out, "%s---%s\n", indent->s, label);
			sb_puts(indent, "   ");
		} else {
			snprintf(head, sizeof(head), "--%.2f%%--", pct(node->period, total));
			fprintf(out, "%s%c%s%s\n", indent->s, last ? ' ' : '|', head, label);
			sb_puts(indent, last ? " " : "|");
			for (size_t i = 0; i < strlen(head); i++)
				sb_puts(indent, " ");
		}
		int child = print_straight(h, out, node, indent);
		if (child >= 0)
			print_tree(h, out, child, node->period, total, indent);
		indent->len = keep;
		indent->s[keep] = '\0';
	}
	free(order);
	if (n)
		fprintf(out, "%s\n", indent->s);
}

/* The entries of rows worth a line, sorted: pct of the first value at
 * least --percent-limit, some value not zero.  vals holds nvals values
 * per entry (a group's members; one otherwise); returns the count. */
static size_t sort_entries(struct hist *h, const struct entry **rows, size_t n,
			   const u64 *vals, int nvals, u64 total)
{
	struct row *sorted = xmalloc((n ? n : 1) * sizeof(*sorted));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = rows[i];
		const u64 *v = vals + (size_t)nvals * i;
		bool some = false;
		for (int j = 0; j < nvals; j++)
			some |= v[j] != 0;
		if (!some || pct(v[0], total) < h->o.percent_limit)
			continue;
		sorted[m++] = (struct row){ v[0], nvals > 1 ? v + 1 : NULL, nvals - 1, e->k.comm,
					    e->k.dso_name, e->k.sym_name, e->k.pid, e->k.tid,
					    e->k.cpu, e->k.kernel, e->k.sym_start, e->k.addr, e };
	}
	sort_rows(sorted, m, h->line_names.v);
	for (size_t i = 0; i < m; i++)
		rows[i] = sorted[i].e;
	free(sorted);
	return m;
}

/* The column titles over value columns of width (8 per group member)
 * and the key columns. */
static void print_titles(const struct hist *h, FILE *out, const size_t *width, int vwidth)
{
	if (h->o.children)
		fprintf(out, "# %*s  %*s", vwidth, "Children", vwidth, "Self");
	else
		fprintf(out, "# %*s", vwidth, "Overhead");
	for (int k = 0; k < h->o.nkeys; k++)
		fprintf(out, "  %-*s", (int)width[k], key_titles[h->o.keys[k]]);
	fprintf(out, "\n#");
	for (int c = 0; c < (h->o.children ? 2 : 1); c++) {
		fputs(c ? "  " : " ", out);
		for (int i = 0; i < vwidth; i++)
			fputc('.', out);
	}
	for (int k = 0; k < h->o.nkeys; k++) {
		fprintf(out, "  ");
		for (size_t i = 0; i < width[k]; i++)
			fputc('.', out);
	}
	fprintf(out, "\n#\n");
}

/* Column widths: the widest of title and values. */
static void key_widths(const struct hist *h, const struct entry *const *rows, size_t n,
		       size_t *width)
{
	for (int k = 0; k < h->o.nkeys; k++) {
		width[k] = strlen(key_titles[h->o.keys[k]]);
		for (size_t i = 0; i < n; i++)
			width[k] = MAX(width[k], key_len(h, rows[i], h->o.keys[k]));
	}
}

/* One row's keys after its values, then its call tree. */
static void print_row(const struct hist *h, FILE *out, struct strbuf *line, const struct entry *e,
		      const size_t *width, const struct entry *tree_of, u64 tree_total,
		      struct strbuf *indent)
{
	for (int k = 0; k < h->o.nkeys; k++) {
		size_t at = line->len;
		sb_add(line, "  ", 2);
		put_key(h, line, e, h->o.keys[k]);
		if (k + 1 < h->o.nkeys)  /* the last column is not padded */
			for (size_t w = line->len - at - 2; w < width[k]; w++)
				sb_add(line, " ", 1);
	}
	sb_add(line, "\n", 1);
	fwrite(line->s, 1, line->len, out);
	if (h->o.graph != HG_NONE && tree_of && tree_of->tree >= 0) {
		sb_reset(indent);
		sb_puts(indent, "            ");
		print_tree(h, out, tree_of->tree,
			   h->o.children ? tree_of->children : tree_of->self, tree_total, indent);
	}
}

static void put_pct(struct strbuf *line, u64 part, u64 total)
{
	char num[32];
	snprintf(num, sizeof(num), "%7.2f%%", pct(part, total));
	sb_puts(line, num);
}

static void print_table(struct hist *h, FILE *out, struct table *t, const char *event,
			bool events, const struct rp_summary *sum)
{
	hist_report_header(out, t->samples, t->total, event, events, sum->lost);
	size_t n = t->entries.n;
	const struct entry **rows = xmalloc((n ? n : 1) * sizeof(*rows));
	u64 *vals = xmalloc((n ? n : 1) * sizeof(*vals));
	for (size_t i = 0; i < n; i++) {
		rows[i] = &t->entries.v[i];
		vals[i] = sort_value(h, rows[i]);
	}
	n = sort_entries(h, rows, n, vals, 1, t->total);
	free(vals);
	size_t width[HK_MAX];
	key_widths(h, rows, n, width);
	print_titles(h, out, width, 8);
	struct strbuf indent = {0}, line = {0};
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = rows[i];
		/* Rows are in no order in memory: fetch a few ahead. */
		if (i + 8 < n) {
			__builtin_prefetch(rows[i + 8]);
			__builtin_prefetch((const char *)rows[i + 8] + 64);
		}
		sb_reset(&line);
		if (h->o.children) {
			sb_puts(&line, "  ");
			put_pct(&line, e->children, t->total);
		}
		sb_puts(&line, "  ");
		put_pct(&line, e->self, t->total);
		print_row(h, out, &line, e, width, e, t->total, &indent);
	}
	sb_free(&line);
	sb_free(&indent);
	free(rows);
	fprintf(out, "\n");
}

/* ---- event groups, perf's default view of them ------------------------------ */

/* A group's table: its members' tables (NULL for one without samples). */
struct group_view {
	const struct pd_group *g;
	struct table **t;
	VEC(const struct entry *) cells;  /* nr_members per row; NULL: none */
	struct u64map index;              /* key hash -> row + 1 (probing) */
	size_t nrows;
};

static struct table *used_table(struct hist *h, size_t i)
{
	return i < h->tables.n && h->tables.v[i].used ? &h->tables.v[i] : NULL;
}

/* The row of entry e's keys, made when no member had them yet. */
static size_t group_row(struct group_view *v, const struct entry *e)
{
	int nm = (int)v->g->nr_members;
	for (u64 hash = key_hash(&e->k);; hash++) {
		bool created;
		u64 *slot = u64map_slot(&v->index, hash, &created);
		if (created) {
			*slot = ++v->nrows;
			VEC_GROW(&v->cells, v->nrows * (size_t)nm);
			for (int m = 0; m < nm; m++)
				v->cells.v[(v->nrows - 1) * (size_t)nm + (size_t)m] = NULL;
			v->cells.n = v->nrows * (size_t)nm;
			return v->nrows - 1;
		}
		/* A row's keys are those of any of its cells. */
		const struct entry *const *cells = v->cells.v + (*slot - 1) * (size_t)nm;
		int m = 0;
		while (!cells[m])
			m++;
		if (key_equal(&cells[m]->k, &e->k))
			return *slot - 1;
	}
}

/* "anon group { a, b }" or "NAME { a, b }", as perf names a group. */
static void group_name(const struct hist *h, const struct pd_group *g, struct strbuf *sb)
{
	sb_puts(sb, g->name ? g->name : "anon group");
	sb_puts(sb, " { ");
	for (u32 m = 0; m < g->nr_members; m++) {
		const struct pd_attr *a = pd_reader_attr(h->reader, g->leader + m);
		if (m)
			sb_puts(sb, ", ");
		sb_puts(sb, a && a->name ? a->name : "unknown");
	}
	sb_puts(sb, " }");
}

static void print_group_rows(struct hist *h, FILE *out, struct group_view *v,
			     const struct entry **rows, size_t n, const u64 *totals)
{
	int nm = (int)v->g->nr_members;
	size_t width[HK_MAX];
	key_widths(h, rows, n, width);
	print_titles(h, out, width, 8 * nm);
	struct strbuf indent = {0}, line = {0};
	for (size_t i = 0; i < n; i++) {
		/* rows[] holds each row's first entry: find its cells. */
		const struct entry *const *cells = v->cells.v + group_row(v, rows[i]) * (size_t)nm;
		sb_reset(&line);
		for (int c = 0; c < (h->o.children ? 2 : 1); c++) {
			sb_puts(&line, "  ");
			for (int m = 0; m < nm; m++) {
				const struct entry *e = cells[m];
				bool kids = h->o.children && c == 0;
				put_pct(&line, !e ? 0 : kids ? e->children : e->self, totals[m]);
			}
		}
		/* The leader's call tree, as perf shows it. */
		print_row(h, out, &line, rows[i], width, cells[0], totals[0], &indent);
	}
	sb_free(&line);
	sb_free(&indent);
	fprintf(out, "\n");
}

/* One table for the group's events: a value column per member, rows
 * matched by their keys, sorted by the leader's values then the others'. */
static void print_group(struct hist *h, FILE *out, const struct pd_group *g,
			const struct rp_summary *sum)
{
	int nm = (int)g->nr_members;
	struct group_view v = { .g = g };
	v.t = xcalloc((size_t)nm, sizeof(*v.t));
	u64map_init(&v.index);
	u64 samples = 0, *totals = xcalloc((size_t)nm, sizeof(u64)), total = 0;
	for (int m = 0; m < nm; m++) {
		v.t[m] = used_table(h, g->leader + (size_t)m);
		if (!v.t[m])
			continue;
		samples += v.t[m]->samples;
		totals[m] = v.t[m]->total;
		total += totals[m];
		for (size_t i = 0; i < v.t[m]->entries.n; i++) {
			const struct entry *e = &v.t[m]->entries.v[i];
			size_t row = group_row(&v, e);
			v.cells.v[row * (size_t)nm + (size_t)m] = e;
		}
	}
	struct strbuf name = {0};
	group_name(h, g, &name);
	hist_report_header(out, samples, total, name.s, true, sum->lost);
	sb_free(&name);
	const struct entry **rows = xmalloc((v.nrows ? v.nrows : 1) * sizeof(*rows));
	u64 *vals = xcalloc((v.nrows ? v.nrows : 1) * (size_t)nm, sizeof(u64));
	for (size_t r = 0; r < v.nrows; r++) {
		const struct entry *const *cells = v.cells.v + r * (size_t)nm;
		rows[r] = NULL;
		for (int m = 0; m < nm; m++) {
			if (!cells[m])
				continue;
			if (!rows[r])
				rows[r] = cells[m];
			vals[r * (size_t)nm + (size_t)m] = sort_value(h, cells[m]);
		}
	}
	size_t n = sort_entries(h, rows, v.nrows, vals, nm, totals[0]);
	free(vals);
	print_group_rows(h, out, &v, rows, n, totals);
	free(rows);
	free(totals);
	free(v.t);
	VEC_FREE(&v.cells);
	u64map_free(&v.index);
}

/* The group attr i leads, when groups show together and it has members
 * the file holds. */
static const struct pd_group *group_led_by(const struct hist *h, size_t i)
{
	size_t nattrs = pd_reader_nattrs(h->reader);
	for (size_t k = 0; k < pd_reader_ngroups(h->reader); k++) {
		const struct pd_group *g = pd_reader_group(h->reader, k);
		if (g->leader == i && g->nr_members > 1 && g->nr_members <= nattrs - i)
			return g;
	}
	return NULL;
}

void hist_print(struct hist *h, FILE *out, const struct rp_summary *sum)
{
	bool any = false;
	for (size_t i = 0; i < h->tables.n; i++) {
		const struct pd_group *g = group_led_by(h, i);
		if (g && !h->o.no_group) {
			bool used = false;
			for (u32 m = 0; m < g->nr_members; m++)
				used |= used_table(h, i + m) != NULL;
			if (used)
				print_group(h, out, g, sum);
			any |= used;
			i += g->nr_members - 1;
			continue;
		}
		if (!h->tables.v[i].used)
			continue;
		const struct pd_attr *a = pd_reader_attr(h->reader, i);
		print_table(h, out, &h->tables.v[i], a ? a->name : "?", g != NULL, sum);
		any = true;
	}
	if (!any)
		fprintf(out, "#\n# Total Lost Samples: %llu\n#\n# No samples.\n",
			(unsigned long long)sum->lost);
}
