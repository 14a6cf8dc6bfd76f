/* collapse.h - the folding sink behind `ember
 * collapse` and `ember flame -i`: each sample's frames named as
 * stackcollapse-perf.pl names them, merged into a flame tree. */
#ifndef EMBER_VIEWS_COLLAPSE_H
#define EMBER_VIEWS_COLLAPSE_H

#include "flamegraph/flamegraph.h"
#include "replay/replay.h"

struct collapse_opts {
	bool annotate;        /* kernel _[k] and JIT _[j] kinds kept */
	bool pid, tid;        /* "comm-PID" / "comm-PID/TID" process frames */
	bool weight_period;   /* count periods, not samples */
	bool srcline;         /* " file:line" after each frame's name */
};

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

#endif
