/* collapse.h - (internal to report/) the folding sink behind `ember
 * collapse` and `ember flame -i`: each sample's frames named as
 * stackcollapse-perf.pl names them, merged into a flame tree. */
#ifndef EMBER_REPORT_COLLAPSE_H
#define EMBER_REPORT_COLLAPSE_H

#include "flamegraph/flamegraph.h"
#include "report/replay.h"

struct collapse_opts {
	bool annotate;        /* kernel _[k] and JIT _[j] kinds kept */
	bool pid, tid;        /* "comm-PID" / "comm-PID/TID" process frames */
	bool weight_period;   /* count periods, not samples */
	bool srcline;         /* " file:line" after each frame's name */
};

enum {
	COLLAPSE_OPT_PID = 0x3000, COLLAPSE_OPT_TID, COLLAPSE_OPT_ANNOTATE,
	COLLAPSE_OPT_WEIGHT, COLLAPSE_OPT_SRCLINE,
};

/* The options of collapse and of flame's data-file input: collapse's own
 * and the shared view options, whose bare --pid/--tid name process
 * frames here (--pid=LIST still filters). */
extern const struct opt collapse_options[];

/* 1 when opt was one of collapse_options, 0 when
 * not, -1 with err_set() on a bad value. */
int collapse_parse_opt(struct collapse_opts *c, struct rp_opts *rp, int opt, const char *arg);

/* Replays rp->input into tree on its AFTER side (or side).  Prints its own
 * warnings and errors as "ember CMD: ..."; returns an exit status. */
int collapse_replay(const char *cmd, struct rp_opts *rp, const struct collapse_opts *o,
		    struct flame_tree *tree, enum flame_side side);

#endif
