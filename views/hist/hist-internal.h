/* hist-internal.h - what the report analysis's two halves share: the
 * entries, stacks and call-tree nodes hist.c sums samples into, and the
 * few small questions both it and hist-print.c ask of them (an entry's
 * sort value, a key's hash).  Only views/hist/ includes it. */
#ifndef EMBER_VIEWS_HIST_INTERNAL_H
#define EMBER_VIEWS_HIST_INTERNAL_H

#include "views/hist/hist.h"

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

/* Branches of a call tree under this share of the total are not shown
 * (perf's graph,0.5). */
#define GRAPH_MIN_PERCENT 0.5

/* Inline: key_hash and key_equal are on the sink's per-entry path. */
static inline u64 thread_name_key(u32 pid, u32 tid)
{
	return (u64)pid << 32 | tid;
}

static inline u64 key_hash(const struct hist_key *k)
{
	u64 x = hash_u64((u64)(uintptr_t)k->comm ^ ((u64)k->pid << 32 | k->tid));
	x = hash_u64(x ^ k->cpu ^ (u64)(uintptr_t)k->dso_name);
	x = hash_u64(x ^ (u64)(uintptr_t)k->sym_name ^ k->sym_start ^ k->addr ^ k->kernel);
	return k->line ? hash_u64(x ^ k->line) : x;
}

static inline bool key_equal(const struct hist_key *a, const struct hist_key *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid &&
	       a->cpu == b->cpu && a->dso_name == b->dso_name &&
	       a->sym_name == b->sym_name && a->sym_start == b->sym_start &&
	       a->addr == b->addr && a->kernel == b->kernel && a->line == b->line;
}

static inline double pct(u64 part, u64 total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

static inline u64 sort_value(const struct hist *h, const struct entry *e)
{
	return h->o.children ? e->children : e->self;
}

#endif
