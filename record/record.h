/* record.h - the recorder: opens events on CPUs and tasks, drains per-CPU
 * ring buffers into a perf.data writer, synthesizes what already runs, and
 * launches the command.  cmd/cmd-record.c fills struct rec_opts and runs
 * a session (rec_session_*) through the calls below; rec_live_*() run a
 * recording on a thread of its own for a live view. */
#ifndef EMBER_RECORD_H
#define EMBER_RECORD_H

#include <signal.h>
#include <sys/types.h>

#include "common/child.h"
#include "common/common.h"
#include "pmc/pmc.h"

/* -g is REC_CG_ONLINE: user stacks unwound while recording (online.c);
 * --call-graph fp the kernel's frame-pointer walk; dwarf raw stack copies
 * for the reporter to unwind. */
enum rec_callgraph { REC_CG_NONE, REC_CG_FP, REC_CG_DWARF, REC_CG_ONLINE };

/* What a live view records. */
enum rec_live_kind {
	REC_LIVE_SAMPLES,          /* CPU samples (the default event) */
	REC_LIVE_SCHED,            /* sched_switch and wakeups (sched lat) */
	REC_LIVE_OFFCPU,           /* sched_switch with chains, switches (offcpu) */
	REC_LIVE_OFFCPU_WAKERS,    /* ... and wakeups with chains (offcpu --wakers) */
	REC_LIVE_TOOL,             /* a tool's events, as record --tool NAME */
	REC_LIVE_BLOCK,            /* the block tracepoints (as record --block) */
};

/* A live recording: the targets as record's options say them. */
struct rec_live_opts {
	enum rec_live_kind kind;
	bool system_wide;          /* -a */
	const int *cpus; int ncpus;        /* -C */
	const pid_t *pids; int npids;      /* -p */
	const pid_t *tids; int ntids;      /* -t */
	char **command;            /* -- command, NULL-terminated, or NULL */
	u64 freq;                  /* samples per second per CPU; 0: default */
	enum rec_callgraph callgraph;  /* the stacks: REC_CG_ONLINE as -g, REC_CG_FP
				      (a view's --call-graph); REC_CG_NONE the
				      kind's default (none, or a tool's own) */
	const u32 *devs; int ndevs;        /* REC_LIVE_BLOCK: only these devices
					      (kernel dev_t, as record -d) */
	double duration;           /* seconds, 0 for none */
	u32 mmap_pages;            /* ring pages per CPU; 0: the kind's own */
	const char *output;        /* also keep the recording here, or NULL */
	const char *tool;          /* REC_LIVE_TOOL: the tool's name, and the */
	const char *const *events; /* events it counts (-e: funccount, */
	size_t nevents;            /* stackcount) */
	int fd;                    /* the stream goes to this pipe (closed at the end) */
	volatile sig_atomic_t *stop;  /* set (by a signal handler) to stop */
	const sigset_t *poll_mask; /* the signal mask to wait with (the stop
				      signals unblocked); the caller blocks them */
};

/* A ring size as record's -m takes it: pages (a power of two), or a size
 * with K, M or G (512K, 4M) made pages.  0, or -1 with err_set() saying
 * the fix. */
int rec_parse_pages(const char *arg, u32 *pages);
/* want pages per CPU of rings that hold user stack copies, halved down
 * to REC_DEFAULT_PAGES until every CPU's ring fits REC_STACK_RINGS_MAX
 * in all; REC_DEFAULT_PAGES when not root (only root may lock more than
 * perf_event_mlock_kb). */
u32 rec_stack_pages(u32 want);

struct rec_live;

/* Checks the targets and opens the events here (errors come now), then
 * records on a thread of its own, writing the stream variant to o->fd.
 * NULL with err_set(); *usage says whether the user's input was wrong. */
struct rec_live *rec_live_start(const struct rec_live_opts *o, bool *usage);
/* Waits for the recording to end (stop, --duration, the targets gone).
 * 0, or -1 with err_set() and *usage as above. */
int rec_live_finish(struct rec_live *l, bool *usage);
/* Warnings the recorder left (e.g. files it could not open), one by one:
 * NULL after the last (read them before rec_live_finish or after it). */
const char *rec_live_note(struct rec_live *l, size_t i);
/* The exit status of -- command once the recording ended, for the view
 * to pass on as record does: its own exit status, 128 + the signal that
 * killed it unless ours (--duration) or a stop request's (a live view
 * stopped by Ctrl-C exits 0); 0 when there was none. */
int rec_live_command_status(const struct rec_live *l);
void rec_live_free(struct rec_live *l);

/* ---- the recording session: what cmd-record.c sets and runs ---- */

/* Ring sizes: cmd-record.c picks -m's default from these. */
#define REC_DEFAULT_PAGES 128      /* 512 KiB per CPU, perf's default */
#define REC_STACK_PAGES 1024       /* 4 MiB, with user stack copies ... */
#define REC_STACK_RINGS_MAX (256u << 20)  /* ... and 256 MiB at most in all */

/* --off-cpu's detail levels, each adding to the one before.  Each costs
 * the recorded task time in the kernel on every switch or wakeup, so the
 * default records only what the off-CPU views need. */
enum rec_offcpu {
	REC_OFFCPU_NONE,
	REC_OFFCPU_SWITCHES,       /* sched_switch with call chains, switch records */
	REC_OFFCPU_WAKEUPS,        /* + sched_wakeup(_new), no call chains: sched lat */
	REC_OFFCPU_WAKERS,         /* + the wakers' call chains: offcpu --wakers */
};

/* The events ember adds to tracefs's uprobe_events for a run
 * (probes.c): one group, ember_PID, which a watchdog process removes
 * should ember end before rec_probes_remove. */
struct rec_probes {
	bool begun;                /* the group's tracefs and watchdog set up */
	bool made;                 /* some event exists in uprobe_events */
	int watch_fd;              /* the watchdog's pipe, or -1 */
	char tracefs[128];
	char group[32];            /* ember_PID */
};
/* Removes them once no descriptor holds them; a no-op when none made. */
void rec_probes_remove(struct rec_probes *p);

/* execsnoop's uprobe at the dynamic loader's entry (execargs.c) fetches
 * argc and this many argv strings (BCC execsnoop's default --max-args). */
#define REC_EXECARGS_MAX 20

/* Everything the command line decides; filled by cmd-record.c. */
struct rec_opts {
	struct pmc_list events;    /* empty: the default event */
	u64 freq;                  /* -F, 0 when -c is used */
	u64 period;                /* -c */
	enum rec_callgraph callgraph;
	u32 stack_bytes;           /* --call-graph auto|dwarf,BYTES; 0: default */
	bool no_leaf_fix;          /* -g without the leaf-repair snapshot */
	bool system_wide;          /* -a */
	int *cpus;                 /* -C, NULL for every online CPU */
	int ncpus;
	pid_t *pids;               /* -p: processes, all their threads */
	int npids;
	pid_t *tids;               /* -t: just these threads */
	int ntids;
	const char *output;        /* "-" for the pipe variant on stdout */
	bool to_fd;                /* the pipe variant into out_fd instead */
	int out_fd;                /* (record -o tcp://: net/'s sender) */
	u32 mmap_pages;            /* data pages per ring, a power of two */
	int zstd_level;            /* -z: records compressed at this level; 0 none */
	double duration;           /* seconds, 0 for none */
	bool switch_events;
	enum rec_offcpu off_cpu;   /* --off-cpu: sched tracepoints, every hit */
	size_t chainless_first;    /* events [first, first + n) take no call */
	size_t chainless_n;        /* chain whatever -g says */
	size_t snap_first;         /* events [first, first + n) take a copy */
	size_t snap_n;             /* of the user stack and the user sp */
	u32 snap_bytes;            /* (--tool: strings the events point at) */
	const char *tool;          /* --tool NAME, or NULL */
	struct rec_probes probes;  /* --tool's uprobes (execsnoop's, the paths') */
	char tool_note[256];       /* why a tool's better path is not taken */
	bool block;                /* --block: block tracepoints, every hit */
	bool no_buildid_cache;     /* -N: leave ~/.debug alone */
	bool live;                 /* a live view reads the stream (live.c): */
	int live_fd;               /* written to this pipe, teed to output
				      unless output is NULL; a round after
				      every pass, and a pass every 100 ms */
	char **command;            /* NULL-terminated, or NULL */
	int self_argc;             /* ember's own command line, for the */
	char **self_argv;          /* cmdline feature */
};

/* Whether samples carry user stack copies (-g, --call-graph dwarf). */
static inline bool rec_copies_stacks(const struct rec_opts *o)
{
	return o->callgraph == REC_CG_ONLINE || o->callgraph == REC_CG_DWARF;
}

/* Why a step failed: the command maps these to its exit statuses. */
enum rec_fail { REC_FAIL_RUNTIME, REC_FAIL_USAGE };

/* Counts taken while records pass through the drain. */
struct rec_tally {
	u64 samples, lost, throttles, bytes;
	u64 zstd_in, zstd_out;     /* -z: record bytes, and what they took in the file */
	u64 first_time, last_time; /* of samples; first_time 0 = none yet */
};

/* session.c: the recorder's life, in the order cmd-record.c calls it;
 * each step 0, or -1 with err_set() (rec_session_failure says whose fault). */
struct rec_session;
struct rec_session *rec_session_new(const struct rec_opts *o,
				    volatile sig_atomic_t *stop,
				    const sigset_t *poll_mask);
int rec_prepare(struct rec_session *s);  /* targets, events, rings, child */
int rec_start(struct rec_session *s);    /* output, features, synthesis */
int rec_run(struct rec_session *s);      /* drain until told to stop */
int rec_finish(struct rec_session *s);   /* last drain, features, close */
void rec_cleanup_failed(struct rec_session *s);
void rec_session_free(struct rec_session *s);
int rec_add_default_event(struct pmc_list *l, bool *fell_back);
/* --off-cpu's events at o->off_cpu's level (and CPU samples when -F or -c
 * asks), switch records, and frame-pointer chains unless o says; -1 with
 * err_set(). */
int rec_add_off_cpu_events(struct rec_opts *o, bool *fell_back);
/* --block: every tracepoint of format/'s block set (those ember bio
 * decodes) the kernel has (older and
 * newer kernels differ), each hit recorded (o->block set); devs (kernel
 * dev_t: MAJOR << 20 | MINOR) narrow them in the kernel, and plug and
 * unplug, which carry no device, are then left out.  -1 with err_set(). */
int rec_add_block_events(struct rec_opts *o, const u32 *devs, int ndevs);
/* tools.c: --tool NAME's events added to o (after any -e the tool counts).
 * 0, or -1 with err_set() naming the tool or event. */
int rec_tool_add(struct rec_opts *o, const char *name);

/* -g's unwinding while recording (online.c), as the summary tells it. */
struct rec_online_stats {
	u64 unwound;               /* samples written with their user stack unwound */
	u64 deferred;              /* ... written raw, for the reporter (the drain
				      was behind) */
	u64 no_user;               /* ... with no user state (kernel threads) */
	u64 malformed;             /* records that did not decode, written as is */
	u64 no_maps;               /* samples of a process whose maps were let
				      go of (it exited) or never seen: their
				      sampled ip only */
	u64 files;                 /* mapped files opened */
	u64 files_missing;         /* ... that could not be opened as mapped */
	u64 files_closed;          /* ... closed again, no maps naming them */
	u64 maps_released;         /* processes' maps let go of (exited, or
				      replaced by an exec or a reused pid) */
	u64 vanished;              /* processes found gone whose EXIT never
				      came (lost with a ring's overflow) */
};

/* The kernel's perf_event_max_sample_rate (record -F max), 0 when unreadable. */
u64 rec_max_sample_rate(void);

/* What the command reports of a session, once it ran or failed.  Warnings
 * the recorder left, one by one: NULL after the last. */
const char *rec_session_note(const struct rec_session *s, size_t i);
/* Whether the user's input made it fail, and whether the recording began
 * (what was written until then is kept). */
enum rec_fail rec_session_failure(const struct rec_session *s);
bool rec_session_started(const struct rec_session *s);
const struct rec_tally *rec_session_total(const struct rec_session *s);
/* -g's counts (REC_CG_ONLINE, once started). */
const struct rec_online_stats *rec_session_online_stats(const struct rec_session *s);
/* The per-CPU rings: how many, and ring i's CPU and the samples it dropped. */
int rec_session_rings(const struct rec_session *s);
u64 rec_session_ring_lost(const struct rec_session *s, int i, int *cpu);
/* How the command (-- command) ended, for the exit status. */
struct child_end rec_session_child_end(const struct rec_session *s);

#endif
