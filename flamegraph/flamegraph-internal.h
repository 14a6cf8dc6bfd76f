/* flamegraph-internal.h - (private to flamegraph/) the tree's layout in
 * memory, shared by the tree, the parser and the writers. */
#ifndef EMBER_FLAMEGRAPH_INTERNAL_H
#define EMBER_FLAMEGRAPH_INTERNAL_H

#include "flamegraph/flamegraph.h"

#define FLAME_NONE UINT32_MAX

/* An interned frame name: the same bytes share one id, so a child is
 * found by the integer pair (parent, name). */
struct flame_name {
	u32 off, len;    /* bytes in tree->text */
	u32 hash;
};

/* 32 bytes per node: a million-line profile stays in tens of megabytes.
 * The kind (kernel, JIT...) is not part of a frame's identity, only of its
 * colour and suffix, so it rides in the top bits of the name field. */
struct flame_node {
	u32 name_kind;   /* name id | kind << FLAME_KIND_SHIFT */
	u32 parent;
	u32 first_child, next_sibling;
	u64 value[2];    /* inclusive counts per side */
};

#define FLAME_KIND_SHIFT 30
#define FLAME_NAME_MASK ((1u << FLAME_KIND_SHIFT) - 1)

static inline u32 flame_node_name(const struct flame_node *n)
{
	return n->name_kind & FLAME_NAME_MASK;
}

static inline enum flame_kind flame_node_kind(const struct flame_node *n)
{
	return (enum flame_kind)(n->name_kind >> FLAME_KIND_SHIFT);
}

#define FLAME_MEMOS 16
struct flame_memo {
	VEC(u32) names;
	VEC(u32) nodes;
};

struct flame_tree {
	struct flame_tree_opts opts;
	VEC(char) text;
	VEC(struct flame_name) names;
	u32 *slots;                  /* name hash table: id + 1, 0 = empty */
	size_t nslots;
	VEC(struct flame_node) nodes; /* node 0 is the root, "all" */
	u32 *kids;                   /* child table: node id + 1, 0 = empty; */
	size_t nkids;                /* keyed by the node's (parent, name) */
	u64 total[2];
	bool diff;
	VEC(struct flame_frame) scratch;  /* the parser's frames of one line */
	/* The last stacks added, as name ids and the nodes they led to, one
	 * per first frame (a process, in collapse's stacks; samples of a few
	 * interleave): the next stack mostly begins the same way, and that
	 * part needs no child lookups. */
	struct flame_memo memos[FLAME_MEMOS];
};

/* a + b without wrapping; sets *sat when it would have. */
static inline u64 flame_sat_add(u64 a, u64 b, bool *sat)
{
	if (a > UINT64_MAX - b) {
		if (sat)
			*sat = true;
		return UINT64_MAX;
	}
	return a + b;
}

/* The inline script and style of the SVG (svg-script.c). */
extern const char flame_svg_css[];
extern const char flame_svg_js[];

/* Colours (colors.c): "#rrggbb" into out[8]. */
void flame_color(enum flame_palette pal, bool hash, const char *name, size_t len,
		 enum flame_kind kind, int depth, char out[8]);
/* Differential colour: delta in [-1, 1] of the largest change; exactly 0
 * gives the neutral colour. */
void flame_diff_color(double delta, char out[8]);
#define FLAME_DIFF_NEUTRAL "#dcdcdc"

#endif
