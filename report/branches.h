/* branches.h - (internal to report/) the report by branch: every branch
 * entry of the samples' branch stacks counted once, by command, source
 * file and symbol, target symbol and cycles, printed as perf report
 * prints a file with branch stacks (its default branch mode). */
#ifndef EMBER_REPORT_BRANCHES_H
#define EMBER_REPORT_BRANCHES_H

#include <stdio.h>

#include "report/replay.h"

struct brtable;

/* The replay must resolve branches (rp_set_branches). */
struct brtable *br_new(struct replay *rp);
void br_free(struct brtable *b);
struct rp_sink br_sink(struct brtable *b);
/* The table and perf's branch statistics after it. */
void br_print(struct brtable *b, FILE *out, const struct rp_summary *sum);

#endif
