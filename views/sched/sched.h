/* sched.h - the scheduler events that offcpu and
 * sched lat share: sched_switch / sched_wakeup(_new) samples decoded by
 * field name, switch records, and the analyses built on them. */
#ifndef EMBER_VIEWS_SCHED_H
#define EMBER_VIEWS_SCHED_H

#include <stdio.h>

#include "flamegraph/flamegraph.h"
#include "replay/replay.h"

/* format/'s sched set (what record --off-cpu records), each kind one past
 * its place in the set. */
enum sched_kind {
	SCHED_OTHER,
	SCHED_SWITCH = 1 + PD_TP_SCHED_SWITCH,
	SCHED_WAKEUP = 1 + PD_TP_SCHED_WAKEUP,
	SCHED_WAKEUP_NEW = 1 + PD_TP_SCHED_WAKEUP_NEW,
	SCHED_KINDS = 1 + PD_TP_SCHED_NR
};

/* One decoded scheduler tracepoint sample. */
struct sched_ev {
	enum sched_kind kind;
	u32 prev_pid, next_pid;    /* SCHED_SWITCH (kernel tids) */
	char prev_state;           /* 'R' preempted, 'S', 'D', 'X', ... */
	u32 target;                /* SCHED_WAKEUP(_NEW): the woken tid */
	s32 target_cpu;
	char comm[16];             /* SCHED_WAKEUP(_NEW): the woken's comm */
};

/* The tracepoint ids of one recording. */
struct sched_tp {
	struct pd_trace *trace;    /* the reader's (valid while it is open);
				      NULL when the file has no tracing data */
	u64 id[SCHED_KINDS];       /* by sched_kind; valid when have[kind] */
	bool have[SCHED_KINDS];
};

/* Finds the sched tracepoints among the recording's events (the reader
 * opened with the tracing data: rp_opts.tracing).  -1 with err_set() when
 * the tracing data cannot be parsed. */
int sched_tp_init(struct sched_tp *tp, struct pd_reader *r);

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


/* ---- sched lat ------------------------------------------------------------ */

/* The waits counted are runqlat's: from a wakeup, or from a switch-out
 * in state R (a preemption), to the thread's next switch-in. */
struct schedlat_opts {
	bool per_comm, per_pid;
	bool no_wakeups, no_preemptions;  /* --waits: the kinds left out */
	/* Which waits count: by the waiting thread, the CPU it then ran on
	 * and the time it ran (--time keeps the waits that end inside). */
	const struct rp_filter *filter;
};
struct schedlat;
struct schedlat *schedlat_new(const struct schedlat_opts *o, const struct sched_tp *tp);
void schedlat_free(struct schedlat *sl);
struct rp_sink schedlat_sink(struct schedlat *sl);
/* Starts a new interval: the histograms and counts empty, the threads'
 * states (a wakeup waiting for its switch-in) kept. */
void schedlat_reset(struct schedlat *sl);
/* Writes histograms and the summary. -1 with err_set() on a write error. */
int schedlat_print(struct schedlat *sl, FILE *out);

/* offcpu.h - off-CPU intervals: from a thread's
 * switch-out (its stack and state then) to its next switch-in, summed per
 * unique stack, with the repairs a lossy recording needs. */

#define OC_NONE UINT32_MAX

struct offcpu;

struct offcpu_opts {
	bool wakers;                /* join each stack with its waker's */
	/* The replay releases no files: the stacks keep the frames' files
	 * and symbols as they are (export maps them, with their build-ids),
	 * not as places. */
	bool keep_files;
	bool user_only, kernel_only;
	u64 min_ns, max_ns;         /* per interval; max_ns 0 = no limit */
	const char *states;         /* state letters kept ("SD"); NULL = all */
	const struct rp_filter *filter;   /* pid, tid, comm, cpu, time */
	/* Every sample that is not a scheduler tracepoint (flame --wall
	 * folds the CPU samples); NULL to ignore them. */
	int (*on_cpu)(void *ctx, const struct rp_sample *s);
	void *on_cpu_ctx;
	/* --interval: the end of each interval (the sink's tick; with last,
	 * the intervals still open are counted first, as at the end), for
	 * the view to print and offcpu_reset; NULL for one result. */
	int (*on_tick)(void *ctx, struct offcpu *oc, u64 end, bool last);
	void *on_tick_ctx;
};

/* Off-CPU time of one (thread, state, stack[, waker]) key. */
struct oc_agg {
	u32 pid, tid;
	char comm[64];
	char state;
	u32 stack;                  /* OC_NONE: the switch-out had no stack */
	u32 waker_stack;            /* OC_NONE: no waker seen (or no --wakers) */
	u32 waker_pid, waker_tid;
	char waker_comm[64];
	u64 total_ns;
	u32 count, open, repaired;
	u64 hash;
	u32 next;                   /* chain of keys with the same hash */
};

/* One thread's life within the recording (offcpu --threads).  on_ns and
 * off_ns are what the filters keep: time seen on-CPU (from a switch-in or
 * a sample to the switch-out) on the --cpu CPUs, and the shown off-CPU
 * intervals, both clipped to the --time window; intervals, open and
 * repaired count the shown intervals. */
struct oc_thread {
	u32 pid, tid;
	const struct rp_thread *rt; /* the replay's thread (comm), or NULL */
	u8 state;
	char reason;                /* state letter of the open interval */
	bool forked, exited, woken;
	bool seen;                  /* a switch or sample of it was seen */
	int cpu;                    /* where it last switched out, or ran */
	u64 since;                  /* time of the last transition */
	u32 stack;
	u32 waker_stack, waker_pid, waker_tid;
	const struct rp_thread *waker_rt;
	u64 start, end;             /* birth (fork) or recording start, exit
				       or recording end (after finish) */
	u64 on_ns, off_ns;
	u32 intervals, open, repaired, begun_before;
};

struct oc_stats {
	u64 intervals, shown, open, repaired, begun_before, no_stack;
	u64 first_time, last_time;
	u64 shown_ns;
	u64 switches, wakeups;
};

struct offcpu;

struct offcpu *offcpu_new(const struct offcpu_opts *o, const struct sched_tp *tp);
void offcpu_free(struct offcpu *oc);
/* The aggregates and their counts begin anew (an interval's end); the
 * threads, their open intervals and the stacks stay. */
void offcpu_reset(struct offcpu *oc);
struct rp_sink offcpu_sink(struct offcpu *oc);

/* What the sink does per event, for tests that build a history by hand:
 * a switch-out with its stack (leaf first) and state letter, a switch-in,
 * a sign of running (any sample of the thread), each on a CPU; a birth
 * (a fork at its time); the time of any event. */
void offcpu_feed_switch_out(struct offcpu *oc, u32 tid, u32 pid, u64 now,
			    const struct rp_frame *f, int n, char state, int cpu);
void offcpu_feed_switch_in(struct offcpu *oc, u32 tid, u64 now, int cpu);
void offcpu_feed_running(struct offcpu *oc, u32 tid, u64 now, int cpu);
void offcpu_feed_fork(struct offcpu *oc, u32 tid, u32 pid, u64 now);
void offcpu_note_time(struct offcpu *oc, u64 t);
/* A thread's wall time within the recording and the --time window (0
 * when it was not alive there); valid after the sink's finish. */
u64 offcpu_thread_wall(const struct offcpu *oc, const struct oc_thread *t);
/* Whether --threads shows t: a thread of the asked ones that was
 * followed (a switch or sample of it seen), alive in the window, with
 * time on the --cpu CPUs when given. */
bool offcpu_thread_shown(const struct offcpu *oc, const struct oc_thread *t);

size_t offcpu_naggs(const struct offcpu *oc);
const struct oc_agg *offcpu_agg(const struct offcpu *oc, size_t i);
/* The frames of an interned stack, leaf first. */
const struct rp_frame *offcpu_stack(const struct offcpu *oc, u32 stack, u32 *n);
size_t offcpu_nthreads(const struct offcpu *oc);
const struct oc_thread *offcpu_thread(const struct offcpu *oc, size_t i);
const struct oc_stats *offcpu_stats(const struct offcpu *oc);
const char *offcpu_comm(const struct oc_thread *t);
const struct rp_filter *oc_filter(const struct offcpu *oc);

/* offcpu-print.c: the views.  Each returns 0, or -1 with err_set(). */
int offcpu_print_table(const struct offcpu *oc, FILE *out);
int offcpu_print_threads(const struct offcpu *oc, FILE *out);
/* Adds every shown stack (microseconds) to tree; kind is given to frames
 * (FLAME_USER, or another kind to colour them apart). */
int offcpu_fold(const struct offcpu *oc, struct flame_tree *tree, enum flame_kind kind,
		const char *thread_fmt);
/* Folded stacks as the flame tree takes them: the names (replay/frames.c's
 * folding rule, as collapse names frames) and the tree's frames. */
struct offcpu_folder {
	struct rp_fold fold;
	VEC(struct flame_frame) frames;
};
/* Adds the stack fold names to tree (count on the after side), every
 * frame of kind but an inline chain's later parts (FLAME_INLINED). */
int offcpu_folder_add(struct offcpu_folder *c, struct flame_tree *tree, enum flame_kind kind,
		      u64 count);
void offcpu_folder_free(struct offcpu_folder *c);
/* The per-thread root frame of a folded stack for thread_fmt NULL, "pid"
 * or "tid": "comm", "comm-PID" or "comm-PID/TID". */
enum rp_fold_thread offcpu_thread_show(const char *thread_fmt);

/* What offcpu_run found that the user should hear. */
struct offcpu_notes {
	char warn[2][384];          /* "" when none */
	bool ran;                   /* the replay ran: summary is its own */
	struct rp_summary summary;
};

/* offcpu-run.c: replays rp->input through an offcpu sink (the shared
 * filters in rp->filter are applied to intervals, not to the replay).
 * 0, or -1 with err_set().  When *oc is set (after a failed replay too:
 * a partial input) free it and *r (the frames' names live in the replay);
 * *r alone may be set after an error. */
int offcpu_run(const struct rp_opts *rp, struct offcpu_opts *o, struct sched_tp *tp,
	       struct offcpu **oc, struct replay **r, struct offcpu_notes *n);

/* What the wall view found for the user (flame --wall prints it). */
struct offcpu_wall_notes {
	struct offcpu_notes run;
	bool no_cpu_samples;        /* the replay ran but saw no clock samples */
	u64 other_samples;          /* samples of events that are not time */
	char fold_error[1024];      /* folding the off-CPU stacks failed, or "" */
	bool have_stats;
	struct oc_stats stats;
};

/* offcpu-wall.c: CPU samples (cpu-clock or task-clock, weighted by their
 * period) and off-CPU intervals folded into one tree, in microseconds, so
 * each thread's total is its wall time.  On-CPU frames are FLAME_USER,
 * off-CPU frames FLAME_INLINED (the annotate palette colours them apart).
 * offcpu_run's result (0, or -1 with err_set()); the rest is in wn. */
int offcpu_wall_replay(const struct rp_opts *rp, const char *thread_fmt,
		       struct flame_tree *tree, struct offcpu_wall_notes *wn);

#endif
