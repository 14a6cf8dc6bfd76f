/* sched.h - (internal to report/) the scheduler events that offcpu and
 * sched lat share: sched_switch / sched_wakeup(_new) samples decoded by
 * field name, switch records, and the analyses built on them. */
#ifndef EMBER_REPORT_SCHED_H
#define EMBER_REPORT_SCHED_H

#include <stdio.h>

#include "report/replay.h"

enum sched_kind { SCHED_OTHER, SCHED_SWITCH, SCHED_WAKEUP, SCHED_WAKEUP_NEW };

/* One decoded scheduler tracepoint sample. */
struct sched_ev {
	enum sched_kind kind;
	u32 prev_pid, next_pid;    /* SCHED_SWITCH (kernel tids) */
	char prev_state;           /* 'R' preempted, 'S', 'D', 'X', ... */
	u32 target;                /* SCHED_WAKEUP(_NEW): the woken tid */
	s32 target_cpu;
};

/* The tracepoint ids of one recording. */
struct sched_tp {
	struct pd_trace *trace;    /* NULL when the file has no tracing data */
	u64 id[4];                 /* by sched_kind; valid when have[kind] */
	bool have[4];
};

/* Finds the sched tracepoints among the recording's events.  -1 with
 * err_set() when the tracing data cannot be parsed. */
int sched_tp_init(struct sched_tp *tp, struct pd_reader *r);
void sched_tp_free(struct sched_tp *tp);

/* Decodes a sample; SCHED_OTHER for anything else (or a malformed one). */
enum sched_kind sched_tp_decode(const struct sched_tp *tp, const struct pd_attr *a,
				const struct pd_sample *s, struct sched_ev *out);

/* A PERF_RECORD_SWITCH(_CPU_WIDE) record: the thread switched (its
 * sample_id tid) and the direction.  false for other records or when the
 * record carries no tid. */
bool sched_switch_record(const struct pd_event *ev, u32 *tid, bool *out, bool *preempt);

/* The state letter of a sched_switch prev_state value, as perf prints it. */
char sched_state_char(u64 prev_state);

/* True for an attr that samples time: cpu-clock or task-clock, whose
 * sample periods are nanoseconds on the CPU. */
bool sched_is_clock_event(const struct pd_attr *a);

/* Whether a thread passes the --pid/--tid/--comm filters.  The analyses
 * apply them themselves: the replay must still see every switch, since
 * one thread's switch-out is another's switch-in. */
bool sched_filter_match(const struct rp_filter *f, u32 pid, u32 tid, const char *comm);

/* ---- sched lat ------------------------------------------------------------ */

struct schedlat_opts {
	bool per_comm, per_pid;
	const struct rp_filter *filter;   /* which woken threads count */
};
struct schedlat;
struct schedlat *schedlat_new(const struct schedlat_opts *o, const struct sched_tp *tp);
void schedlat_free(struct schedlat *sl);
struct rp_sink schedlat_sink(struct schedlat *sl);
/* Writes histograms and the summary. -1 with err_set() on a write error. */
int schedlat_print(struct schedlat *sl, FILE *out);

#endif
