/* tracepoints.c - the tracepoint sets that the recorder records for a view
 * and the view decodes (record --block and ember bio; record --off-cpu and
 * offcpu / sched lat), listed once so that the two cannot drift apart. */
#include "format/format.h"

/* In record --block's order, which is the order of the recording's
 * attrs.  block_io_start and block_io_done (kernels 6.5 on) are left out:
 * they mark again, for I/O accounting, the moments of block_getrq (a
 * request made from a bio) and block_rq_complete; no view reads them
 * (blktrace does not trace them either), and each would cost a sample
 * (with -g a call chain) per I/O. */
static const char *const block_tps[PD_TP_BLOCK_NR] = {
	[PD_TP_BIO_QUEUE] = "block:block_bio_queue",
	[PD_TP_GETRQ] = "block:block_getrq",
	[PD_TP_RQ_INSERT] = "block:block_rq_insert",
	[PD_TP_RQ_ISSUE] = "block:block_rq_issue",
	[PD_TP_RQ_COMPLETE] = "block:block_rq_complete",
	[PD_TP_RQ_REQUEUE] = "block:block_rq_requeue",
	[PD_TP_RQ_MERGE] = "block:block_rq_merge",
	[PD_TP_BIO_BACKMERGE] = "block:block_bio_backmerge",
	[PD_TP_BIO_FRONTMERGE] = "block:block_bio_frontmerge",
	[PD_TP_SPLIT] = "block:block_split",
	[PD_TP_BIO_REMAP] = "block:block_bio_remap",
	[PD_TP_RQ_REMAP] = "block:block_rq_remap",
	[PD_TP_PLUG] = "block:block_plug",
	[PD_TP_UNPLUG] = "block:block_unplug",
	[PD_TP_RQ_ERROR] = "block:block_rq_error",
};

static const char *const sched_tps[PD_TP_SCHED_NR] = {
	[PD_TP_SCHED_SWITCH] = "sched:sched_switch",
	[PD_TP_SCHED_WAKEUP] = "sched:sched_wakeup",
	[PD_TP_SCHED_WAKEUP_NEW] = "sched:sched_wakeup_new",
};

const char *const *pd_tracepoints(enum pd_tp_set set, int *n)
{
	if (set == PD_TP_SCHED) {
		*n = PD_TP_SCHED_NR;
		return sched_tps;
	}
	*n = PD_TP_BLOCK_NR;
	return block_tps;
}
