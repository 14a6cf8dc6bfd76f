/* live.h - what every live view shares: the target options (record's
 * -a, -C, -p, -t, -- command) and the interval ones, a recording started
 * on its own thread (record.h's rec_live_*) whose stream the view's
 * replay reads through a pipe, Ctrl-C, and the live path's own counts. */
#ifndef EMBER_LIVE_H
#define EMBER_LIVE_H


#include "export/export.h"
#include "push/push.h"
#include "record/record.h"
#include "replay/replay.h"

struct live_opts {
	bool all;                  /* -a */
	int *cpus; int ncpus;      /* -C */
	pid_t *pids; int npids;    /* -p */
	pid_t *tids; int ntids;    /* -t */
	char **command;            /* -- command */
	double interval;           /* --interval SECS, 0: none */
	u64 count;                 /* --count N intervals, 0: no limit */
	double duration;           /* --duration SECS */
	u32 mmap_pages;            /* --mmap-pages: ring pages per CPU, 0 the view's */
	const char *output;        /* -o FILE: keep the recording */
	u64 freq;                  /* -F HZ */
	enum rec_callgraph callgraph;  /* the stacks: set by the view (REC_CG_ONLINE
				      for -g) or its --call-graph */
	const char *tool;          /* REC_LIVE_TOOL: set by the tool, with */
	const char *const *events; /* the events it counts (-e) */
	size_t nevents;
	const u32 *devs; int ndevs;        /* set by the view: block devices
					      (REC_LIVE_BLOCK), none for all */
};

/* Whether a target was given (or the view's operands name a command):
 * the view runs live.  Options that need a target without one: -1 with
 * err_set(). */
int live_wanted(struct live_opts *o, int argc, char **argv, int first_operand);
void live_opts_free(struct live_opts *o);

struct live;
/* Starts the recording (errors about the targets come now: *usage set
 * for the user's) and points rp at its stream (live, input_fd, and
 * interval_ns from --interval unless set).  SIGINT and SIGTERM then stop
 * it.  NULL with err_set(). */
struct live *live_start(const struct live_opts *o, enum rec_live_kind kind,
			struct rp_opts *rp, bool *usage);
/* Asks the recording to stop (it ends within 100 ms; the replay then
 * reads to the end of what was recorded). */
void live_stop(struct live *l);
/* Whether a stop was asked for (a signal or live_stop). */
bool live_stopping(const struct live *l);
/* Bytes recorded but not read yet: the live path's backlog. */
u64 live_backlog(const struct live *l);
/* The recorder's warnings not handed out yet, one per call, or NULL. */
const char *live_next_note(struct live *l);
/* Waits for the recording thread: 0, or -1 with err_set() (*usage as
 * above); *command the exit status of -- command to pass on
 * (rec_live_command_status).  Frees l. */
int live_finish(struct live *l, bool *usage, int *command);

/* The end of a view's interval: the live line (when live), a blank line
 * unless last, the output flushed; 1 once *n reaches count (the
 * recording then told to stop; count 0: never), else 0. */
int live_interval_end(FILE *out, struct live *l, struct replay *rp, bool last, u64 *n,
		      u64 count);
/* hist_interval's after() for views that print report's table per
 * interval (report --interval, top --stdio): live_interval_end over ctx, a
 * struct live_tables. */
struct live_tables {
	FILE *out;                 /* where the tables go */
	struct live *live;         /* NULL for a file */
	struct replay *rp;
	u64 n, count;
};
int live_after_table(void *ctx, u64 end, bool last);
/* "# live: 12 samples lost since the last table (30 in all), 4 KB waiting to
 * be read" (the lost since the previous call); nothing said is hidden. */
void live_print_counts(FILE *out, struct live *l, const struct rp_summary *sum);

/* push.c - the continuous profiler (ember push --every, record --push):
 * one pprof per interval of the live replay, encoded at each tick and
 * handed to push/'s sender thread; an empty interval sends nothing. */
struct live_push_interval {
	u64 from, until;           /* unix seconds */
	u64 samples;               /* in this interval's profile */
	size_t bytes;              /* its gzipped size (0: not sent) */
	bool last;
};
/* Called after each interval; a negative return stops the replay. */
typedef int (*live_push_fn)(void *ctx, const struct live_push_interval *iv);
struct live_push;
struct live_push *live_push_new(struct replay *rp, struct push_sender *sender, u64 interval_ns,
				live_push_fn after, void *ctx);
struct rp_sink live_push_sink(struct live_push *lp);
void live_push_free(struct live_push *lp);

#endif
