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

/* Listed before RP_FILTER_LONGOPTS so that bare --pid/--tid are ours
 * (getopt takes the first exact match); --pid=LIST still filters. */
#define COLLAPSE_LONGOPTS                                                    \
	{ "pid", optional_argument, NULL, COLLAPSE_OPT_PID },                \
	{ "tid", optional_argument, NULL, COLLAPSE_OPT_TID },                \
	{ "annotate", no_argument, NULL, COLLAPSE_OPT_ANNOTATE },            \
	{ "weight", required_argument, NULL, COLLAPSE_OPT_WEIGHT },          \
	{ "srcline", no_argument, NULL, COLLAPSE_OPT_SRCLINE }

/* 1 when opt was one of COLLAPSE_LONGOPTS or the shared filters, 0 when
 * not, -1 with err_set() on a bad value. */
int collapse_parse_opt(struct collapse_opts *c, struct rp_opts *rp, int opt, const char *arg);

/* What collapse_replay found that the user should hear. */
struct collapse_notes {
	bool no_callchains;         /* stacks are one frame deep */
	bool replayed;              /* the replay ran: summary is its own */
	struct rp_summary summary;
	u64 skipped;                /* samples of events other than ... */
	char event[256];            /* ... the one folded (the first seen) */
};

/* Replays rp->input into tree on side.  0, or -1 with err_set(); what
 * the user should hear is in n (after a failed replay too). */
int collapse_replay(struct rp_opts *rp, const struct collapse_opts *o, struct flame_tree *tree,
		    enum flame_side side, struct collapse_notes *n);

/* cmd-collapse.c, for the commands that fold (collapse, flame): prints
 * the notes and collapse_replay's error (rc -1) as "ember CMD: ..."; returns
 * the exit status. */
int collapse_say(const char *cmd, const char *input, int rc, const struct collapse_notes *n);

#endif
