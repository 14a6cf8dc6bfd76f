/* hist.h - the report analysis: samples summed by
 * sort keys (comm, pid, tid, dso, sym, cpu, srcline) into entries with self
 * and children periods and optional call trees, printed like perf report. */
#ifndef EMBER_REPORT_HIST_H
#define EMBER_REPORT_HIST_H

#include <stdio.h>

#include "report/replay/replay.h"

enum hist_key_kind {
	HK_COMM, HK_PID, HK_TID, HK_DSO, HK_SYM, HK_CPU,
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
