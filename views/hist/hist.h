/* hist.h - the report analysis: samples summed by
 * sort keys (comm, pid, dso, sym, cpu, srcline) into entries with self
 * and children periods and optional call trees, printed like perf report. */
#ifndef EMBER_VIEWS_HIST_H
#define EMBER_VIEWS_HIST_H

#include <stdio.h>

#include "replay/replay.h"

enum hist_key_kind {
	HK_COMM,                   /* the thread's name at the sample */
	HK_PID,                    /* the thread (perf's pid key; "tid" too),
				      shown TID:COMM with its latest name */
	HK_DSO, HK_SYM, HK_CPU,
	HK_SRCLINE,                /* "file:line" of the frame's address */
	HK_MAX
};

enum hist_graph { HG_NONE, HG_CALLER, HG_CALLEE };

struct hist_opts {
	enum hist_key_kind keys[HK_MAX];
	int nkeys;
	bool children;
	enum hist_graph graph;
	double percent_limit;
	bool no_group;             /* a section per event, groups too */
};

/* "comm,dso,sym" -> keys.  -1 with err_set() naming an unknown key and
 * listing the known ones. */
int hist_parse_sort(struct hist_opts *o, const char *spec);

struct hist;
/* rp's options should set defer_kernel: the histogram resolves kernel
 * frames itself, once per unique stack. */
struct hist *hist_new(const struct hist_opts *o, struct replay *rp);
void hist_free(struct hist *h);
/* The sink to hand to rp_run(). */
struct rp_sink hist_sink(struct hist *h);
/* Prints the tables like perf report --stdio: one per event, or per
 * event group with a column per member (unless no_group). */
void hist_print(struct hist *h, FILE *out, const struct rp_summary *sum);
/* The lines over a report table, as perf report --stdio prints them:
 * lost samples, "Samples: 1K of event 'NAME'" (events: "of events", as
 * perf says for a group's leader), the event count. */
void hist_report_header(FILE *out, u64 samples, u64 total, const char *event, bool events,
			u64 lost);

/* interval.c: the table per interval (interval_ns, rp_opts' too): each
 * interval's samples in a histogram of their own, printed at its end
 * under "# interval N: FROM - TO s (recording time A - B)" with its own
 * lost count, then after(ctx, end, last) (for what a view adds: live
 * counts, --count): 1 from it ends the showing (the rest of the input is
 * read, not shown), -1 fails.  A last interval without samples is not
 * printed (after is still called). */
typedef int (*hist_interval_fn)(void *ctx, u64 end, bool last);
struct hist_interval;
struct hist_interval *hist_interval_new(const struct hist_opts *o, struct replay *rp,
					u64 interval_ns, FILE *out, hist_interval_fn after,
					void *ctx);
struct rp_sink hist_interval_sink(struct hist_interval *v);
void hist_interval_free(struct hist_interval *v);

/* branches.h - the report by branch: every branch
 * entry of the samples' branch stacks counted once, by command, source
 * file and symbol, target symbol and cycles, printed as perf report
 * prints a file with branch stacks (its default branch mode). */

struct brtable;

/* The replay must resolve branches (rp_set_branches). */
struct brtable *br_new(struct replay *rp);
void br_free(struct brtable *b);
struct rp_sink br_sink(struct brtable *b);
/* The table and perf's branch statistics after it. */
void br_print(struct brtable *b, FILE *out, const struct rp_summary *sum);

#endif
