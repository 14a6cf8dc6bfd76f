/* record.h - the recorder: opens events on CPUs and tasks, drains per-CPU
 * ring buffers into a perf.data writer, synthesizes what already runs, and
 * launches the command.  cmd_record() is the thin command-line front;
 * rec_live_*() run a recording on a thread of its own for a live view. */
#ifndef EMBER_RECORD_H
#define EMBER_RECORD_H

#include <signal.h>
#include <sys/types.h>

#include "common/common.h"


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
	bool callchains;           /* -g: as record -g (unwound while recording) */
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

#endif
