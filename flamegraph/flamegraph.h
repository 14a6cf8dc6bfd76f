/* flamegraph.h - folded stacks ("a;b;c 42") merged into a tree of frames,
 * and that tree written as one self-contained interactive SVG (or back out
 * as folded text).  Knows nothing of perf records: the views feed it. */
#ifndef EMBER_FLAMEGRAPH_H
#define EMBER_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/common.h"

/* Limits that keep untrusted input from costing more than its size. */
#define FLAME_MAX_LINE   (1u << 20)   /* bytes in one folded line */
#define FLAME_MAX_DEPTH  4096         /* frames in one stack */

/* What kind of code a frame is; folded text spells it as stackcollapse's
 * suffixes _[k], _[j], _[i] (and _[w], waker, read as user). */
enum flame_kind { FLAME_USER, FLAME_KERNEL, FLAME_JIT, FLAME_INLINED };

struct flame_frame {
	const char *name;
	size_t len;
	enum flame_kind kind;
};

/* A tree holds one profile, or two for a differential graph. */
enum flame_side { FLAME_AFTER = 0, FLAME_BEFORE = 1 };

struct flame_tree_opts {
	bool reverse;   /* merge from the leaves: add each stack leaf first */
};

struct flame_tree;

struct flame_tree *flame_tree_new(const struct flame_tree_opts *o);
void flame_tree_free(struct flame_tree *t);

/* Adds count to the stack frames[0] (root) .. frames[n-1] (leaf) on one
 * side.  Counts saturate at UINT64_MAX rather than wrap.  -1 with err_set()
 * when n exceeds FLAME_MAX_DEPTH or the tree is full. */
int flame_tree_add(struct flame_tree *t, const struct flame_frame *frames, size_t n,
		   u64 count, enum flame_side side);

/* Callers that meet the same names again and again intern each once and
 * add stacks by id, skipping a string hash per frame. */
#define FLAME_NO_NAME UINT32_MAX
struct flame_named {
	u32 name;                /* from flame_tree_name() */
	enum flame_kind kind;
};
/* The id of a name in t, added when new; FLAME_NO_NAME when t is full. */
u32 flame_tree_name(struct flame_tree *t, const char *name, size_t len);
/* flame_tree_add() with interned names (none FLAME_NO_NAME). */
int flame_tree_add_named(struct flame_tree *t, const struct flame_named *frames, size_t n,
			 u64 count, enum flame_side side);

/* The sum of all counts added on a side. */
u64 flame_tree_total(const struct flame_tree *t, enum flame_side side);
/* Whether anything was added on the BEFORE side (a differential tree). */
bool flame_tree_is_diff(const struct flame_tree *t);
size_t flame_tree_nodes(const struct flame_tree *t);

/* ---- Folded text in --------------------------------------------------- */

/* What parsing saw.  Bad lines are skipped and counted, never fatal. */
struct flame_parse_stats {
	u64 lines, stacks, bad_lines;
	u64 first_bad_line;         /* 1-based; 0 when none */
	const char *first_bad_why;  /* a constant string */
	bool saturated;             /* some count hit UINT64_MAX */
};

/* One line without its newline: "frame;frame;... COUNT", or with two
 * counts "... BEFORE AFTER" (difffolded style; side is then ignored).
 * Returns 0 when used, 1 when the line was bad (stats say why), -1 on a
 * tree failure (err_set). */
int flame_parse_line(struct flame_tree *t, const char *line, size_t len,
		     enum flame_side side, struct flame_parse_stats *st);
/* A whole buffer of lines (the fuzz entry point).  0, or -1 (err_set). */
int flame_parse_buf(struct flame_tree *t, const char *buf, size_t len,
		    enum flame_side side, struct flame_parse_stats *st);
/* A stream, read in bounded chunks; lines over FLAME_MAX_LINE are skipped
 * as bad.  0, or -1 with err_set() on a read error. */
int flame_parse_file(struct flame_tree *t, FILE *in, enum flame_side side,
		     struct flame_parse_stats *st);

/* ---- Output ------------------------------------------------------------ */

/* Folded lines, one per stack with a self count, sorted bytewise by
 * stack (as stackcollapse-perf.pl sorts).  Frames of a kind other than
 * user carry their suffix (_[k], _[j], _[i]), so folded text read in comes
 * out unchanged.  A differential tree prints "BEFORE AFTER".  -1 with
 * err_set() on a write error. */
int flame_write_folded(struct flame_tree *t, FILE *out);

enum flame_palette {
	FLAME_PAL_HOT,       /* reds and yellows: CPU */
	FLAME_PAL_IO,        /* blues: off-CPU, I/O */
	FLAME_PAL_MEM,       /* greens: memory */
	FLAME_PAL_ANNOTATE,  /* by kind: kernel orange, JIT green, inlined aqua,
			      * user hot */
};

struct flame_svg_opts {
	const char *title;       /* NULL: a default by kind of graph */
	const char *subtitle;    /* NULL: none */
	const char *countname;   /* "samples" */
	int width;               /* whole image, pixels (1200) */
	int frame_height;        /* one frame, pixels (16) */
	double minwidth;         /* frames narrower are dropped (0.1) */
	bool minwidth_percent;   /* minwidth is a percent of the total width */
	enum flame_palette palette;
	bool hash;               /* colour by name only: same name, same colour */
	bool inverted;           /* icicle: roots at the top */
	bool negate;             /* diff: widths from BEFORE (shows what vanished) */
};

void flame_svg_opts_default(struct flame_svg_opts *o);
/* "hot", "io"/"blue", "mem"/"green", "annotate"/"kernel".  -1 with err_set. */
int flame_palette_parse(const char *s, enum flame_palette *p);
/* "0.1" (pixels) or "0.5%".  -1 with err_set. */
int flame_minwidth_parse(const char *s, double *v, bool *percent);

/* Writes the SVG, streaming.  The same tree and options always give the
 * same bytes.  -1 with err_set() on a write error. */
int flame_write_svg(struct flame_tree *t, const struct flame_svg_opts *o, FILE *out);

#endif
