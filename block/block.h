/* block.h - the block I/O library (block/), the one header its users
 * include: reads block events from a recording or a blktrace capture,
 * follows each I/O from queue to completion through merges, splits, remaps
 * and requeues, and writes btt-, biolatency-, biosnoop- and blkparse-like
 * views.  Errors are returned (err_set); the commands (cmd/cmd-bio.c,
 * cmd-btrace.c, cmd-script.c) print them.  The filters apply to I/Os,
 * not to the replay (completions run in other tasks' time): by the task,
 * CPU and time of the queue event (views.c's bio_io_shown).
 *
 * Files: events.c (block tracepoints decoded), track.c (the tracker),
 * blktrace.c (blktrace captures in, blkparse lines out), load.c (a
 * recording or capture through the tracker), stacks.c (who queued the
 * I/O), views.c, btt.c, dist.c, heatmap.c, top.c, monitor.c (the views).
 * `ember verify` is format/verify.c. */
#ifndef EMBER_BLOCK_H
#define EMBER_BLOCK_H

#include <stdio.h>

#include "replay/replay.h"

/* The block tracepoints ember bio understands: format/'s block set, the
 * one record --block records, each kind one past its place in the set. */
enum bio_kind {
	BK_OTHER,
	BK_QUEUE = 1 + PD_TP_BIO_QUEUE,
	BK_GETRQ = 1 + PD_TP_GETRQ,
	BK_INSERT = 1 + PD_TP_RQ_INSERT,
	BK_ISSUE = 1 + PD_TP_RQ_ISSUE,
	BK_COMPLETE = 1 + PD_TP_RQ_COMPLETE,
	BK_REQUEUE = 1 + PD_TP_RQ_REQUEUE,
	BK_RQ_MERGE = 1 + PD_TP_RQ_MERGE,
	BK_BACKMERGE = 1 + PD_TP_BIO_BACKMERGE,
	BK_FRONTMERGE = 1 + PD_TP_BIO_FRONTMERGE,
	BK_SPLIT = 1 + PD_TP_SPLIT,
	BK_BIO_REMAP = 1 + PD_TP_BIO_REMAP,
	BK_RQ_REMAP = 1 + PD_TP_RQ_REMAP,
	BK_PLUG = 1 + PD_TP_PLUG,
	BK_UNPLUG = 1 + PD_TP_UNPLUG,
	BK_ERROR = 1 + PD_TP_RQ_ERROR,
	BK_MAX = 1 + PD_TP_BLOCK_NR
};

struct bio_tp {
	struct pd_trace *trace;  /* the reader's: valid while it is open */
	u64 id[BK_MAX];
	bool have[BK_MAX];
};

/* One decoded block event. */
struct bio_ev {
	enum bio_kind kind;
	u32 dev;                 /* kernel dev_t: MAJOR << 20 | MINOR */
	u64 sector;
	u32 nr_sector;
	u32 old_dev;             /* remaps */
	u64 old_sector;          /* remaps; the remainder's sector for splits */
	s32 error;               /* completions */
	char rwbs[10];
};

/* 0 with nothing found is fine (a recording without block events). */
int bio_tp_init(struct bio_tp *tp, struct pd_reader *r);
enum bio_kind bio_tp_decode(const struct bio_tp *tp, const struct pd_attr *a,
			    const struct pd_sample *s, struct bio_ev *out);

#define BIO_MAJOR(dev) ((dev) >> 20)
#define BIO_MINOR(dev) ((dev) & 0xfffff)

/* Stamps of an I/O's life; 0 means not seen (no real time is 0). */
enum { BT_Q, BT_G, BT_I, BT_D, BT_C, BT_MAX };

enum bio_state {
	BS_QUEUED,      /* queued, not yet in a request */
	BS_REQUEST,     /* heads a request (getrq seen), awaiting completion */
	BS_DONE,        /* completed */
	BS_MERGED,      /* finishes with the request `parent` */
	BS_REMAPPED,    /* went on to another device (counted there anew) */
	BS_LOST,        /* in flight when its place was taken: completion lost */
};

/* Flags of an I/O. */
enum {
	BF_BACKMERGE = 1, BF_FRONTMERGE = 2, BF_SPLIT = 4, BF_NO_QUEUE = 8,
	BF_DIRECT = 16,   /* no insert seen: issued straight to the driver */
};

struct bio_io {
	u64 t[BT_MAX];
	u64 sector;
	u32 dev, nr_sector;      /* a request's grows with the I/Os merged in */
	u32 own_sector;          /* sectors as queued, before any merge; a split
				  * part's own */
	/* The bio as its task queued it, before any split, merge or partial
	 * completion: what --size, --seek and btt's pattern count. */
	u32 q_nr_sector;
	u64 q_sector;
	u32 stack;               /* who queued it: a bio_stacks id, 0 unknown */
	u32 pid, tid;
	u32 parent;            /* index + 1 of the request it merged into */
	u32 child, sibling;    /* index + 1: the I/Os merged into this one, a list */
	u32 requeues;
	u32 again;             /* index + 1 of its phases once issued again, or 0 */
	u64 m_at;              /* when it merged into a request (bio merge), or 0 */
	u64 i_at;              /* the last insert that began at its sector, or 0 */
	s32 error;
	u8 state, flags;
	u16 cpu;               /* where it began (queued; allocated without a queue) */
	char rwbs[8];
	char comm[16];
};

struct bio_counts {
	u64 before;            /* completions of I/Os begun before the recording */
	u64 lost;              /* I/Os superseded in flight (completion lost) */
	u64 splits, remaps, rq_remaps, requeues, rq_merges, errors;
	u64 back_merges, front_merges;
};

/* When and by whom an event happened. */
struct bio_who {
	u64 time;              /* ns; never 0 */
	u32 pid, tid;
	u32 cpu, seq;          /* seq: blktrace's sequence, or a running count */
	const char *comm;      /* or NULL */
};

struct bio_tracker;
/* tp may be NULL for trackers fed by bio_track() alone (blktrace files). */
struct bio_tracker *bio_tracker_new(const struct bio_tp *tp);
void bio_track(struct bio_tracker *bt, const struct bio_ev *e, const struct bio_who *w);
/* A hook that sees every decoded event before it is tracked (blkparse). */
typedef void (*bio_event_fn)(void *ctx, const struct bio_ev *e, const struct bio_who *w);
void bio_set_hook(struct bio_tracker *bt, bio_event_fn fn, void *ctx);
/* Called as each request completes (its merged I/Os with it: bio_served). */
typedef void (*bio_done_fn)(void *ctx, const struct bio_tracker *bt, const struct bio_io *rq);
void bio_set_done(struct bio_tracker *bt, bio_done_fn fn, void *ctx);
/* The I/Os a completed request served, itself first and then in the order
 * they were queued, into out (reset first). */
typedef VEC(const struct bio_io *) bio_io_list;
void bio_served(const struct bio_tracker *bt, const struct bio_io *rq, bio_io_list *out);
/* Keeps memory bounded when nothing reads the tracker at the end (--snoop
 * as I/Os complete): I/Os whose story is over are dropped now and then. */
void bio_set_forget(struct bio_tracker *bt, bool on);

/* ---- intervals ------------------------------------------------------------ */

/* At the end of each interval (recording time `end`, ns), fn gets a tracker
 * of the I/Os whose story ended in it (completed, lost or remapped, merged
 * ones with their request) and the interval's event counts; those leave
 * the tracker, the ones in flight stay.  At the end of the input (last),
 * fn gets the tracker itself: what is left, in flight or not.  fn returns
 * 0 to go on, 1 to stop reading (bio_stopped), -1 with err_set(). */
typedef int (*bio_interval_fn)(void *ctx, const struct bio_tracker *bt, u64 end, bool last);
void bio_set_interval(struct bio_tracker *bt, u64 interval_ns, bio_interval_fn fn, void *ctx);
/* Ends an interval (the sink's tick does, for recordings).  0, or -1. */
int bio_tick(struct bio_tracker *bt, u64 end, bool last);
/* Ends every interval that an event at time t lies past (for sources
 * without a replay: blktrace captures). */
int bio_tick_until(struct bio_tracker *bt, u64 t);
bool bio_stopped(const struct bio_tracker *bt);
/* The I/Os whose story is over, moved into a new tracker (freed by the
 * caller), with the event counts since the last take. */
struct bio_tracker *bio_take_done(struct bio_tracker *bt);

/* ---- who caused the I/O: the stacks of the submitters ------------------- */

/* Stacks interned by process and frames, each named once when first seen
 * (while the replay that resolved its frames is open). */
struct bio_stacks;
struct bio_stacks *bio_stacks_new(void);
void bio_stacks_free(struct bio_stacks *st);
/* The id (1..) of a sample's stack; 0 when it has no frames. */
u32 bio_stacks_intern(struct bio_stacks *st, const struct rp_sample *s);
/* How many frames stack id has (0 for none), and frame i of it (leaf
 * first): its name, and whether it is a kernel frame. */
u32 bio_stacks_depth(const struct bio_stacks *st, u32 id);
const char *bio_stacks_frame(const struct bio_stacks *st, u32 id, u32 i, bool *kernel);
/* With stacks set, each I/O takes the stack of the sample that created it
 * (block_bio_queue; request allocation or issue when no queue was seen). */
void bio_set_stacks(struct bio_tracker *bt, struct bio_stacks *st);
/* The tracker's side of it (so the tracker links without the stacks). */
typedef u32 (*bio_stack_fn)(struct bio_stacks *st, const struct rp_sample *s);
void bio_set_stack_fn(struct bio_tracker *bt, bio_stack_fn fn, struct bio_stacks *st);
const struct bio_stacks *bio_get_stacks(const struct bio_tracker *bt);

/* Feeds a blktrace capture (classic per-CPU files or the blk tracer's
 * ftrace-framed output) through the tracker.  -1 with err_set(). */
int bio_feed_blktrace(struct bio_tracker *bt, const char *path);

/* One blkparse-style line per event (the default layout), times from the
 * first event; ctx is a struct bio_blkparse.  With a filter, only the
 * events it passes (by the task they ran in, CPU and time) are printed,
 * each as it would be without the filter. */
struct bio_blkparse {
	FILE *out;
	const struct rp_filter *filter;   /* or NULL */
	u32 dev;               /* only this device's events; 0: all */
	bool flush;            /* flush each line (a live stream) */
	u64 base;              /* the first event's time; 0 until seen */
};
void bio_blkparse_line(void *ctx, const struct bio_ev *e, const struct bio_who *w);
void bio_tracker_free(struct bio_tracker *bt);
struct rp_sink bio_sink(struct bio_tracker *bt);
size_t bio_nios(const struct bio_tracker *bt);
const struct bio_io *bio_get(const struct bio_tracker *bt, size_t i);
const struct bio_counts *bio_counts(const struct bio_tracker *bt);
/* The time of the first queue event tracked (0: none yet). */
u64 bio_first_queue(const struct bio_tracker *bt);
/* The time an I/O finished: its own, or its request's for merged ones
 * (0 when not completed). */
u64 bio_done_time(const struct bio_tracker *bt, const struct bio_io *io);
/* The request an I/O was served by (itself unless merged). */
const struct bio_io *bio_request(const struct bio_tracker *bt, const struct bio_io *io);

/* ---- reading a recording or a capture ---------------------------------- */

struct bio_load_opts {
	/* The input and the replay's options.  Its filter is not applied to
	 * the replay (completions run in other tasks' time): the views apply
	 * it to I/Os, bio_blkparse to its lines. */
	const struct rp_opts *rp;
	bool stacks;                  /* intern the submitters' stacks (-g) */
	/* A line per event, or NULL; its filter is set to rp's. */
	struct bio_blkparse *blkparse;
	/* With interval_ns (taken from rp->interval_ns), fn at each interval's
	 * end (bio_set_interval). */
	bio_interval_fn interval;
	void *interval_ctx;
	bio_done_fn done;             /* each request as it completes, or NULL */
	void *done_ctx;
	bool forget;                  /* nothing is read at the end: bio_set_forget */
	/* When set, *replay is the recording's replay while it runs (NULL
	 * otherwise): a live view reads its counts at each interval. */
	struct replay **replay;
};

/* What was read.  Zero it before bio_load; free it with bio_data_free. */
struct bio_data {
	struct bio_tp tp;
	struct bio_tracker *bt;       /* NULL when nothing could be read */
	struct bio_stacks *st;        /* with bio_load_opts.stacks */
	char warning[256];            /* for the user, "" when none */
	bool replayed;                /* a recording: summary holds the replay's */
	struct rp_summary summary;
};

/* Reads o->rp->input (a blktrace capture, or a recording made with
 * 'ember record --block') through a tracker.  0, or -1 with err_set(); the
 * tracker may hold the I/Os read before a failure (bio_nios).  An input
 * error after some events is not a failure: see summary.input_error. */
int bio_load(struct bio_data *d, const struct bio_load_opts *o);
/* A blktrace capture's empty intervals skipped in long runs, into s's
 * field of the replay's (rp_summary.empty). */
void bio_empty_intervals(const struct bio_tracker *bt, struct rp_summary *s);
/* -1 with err_set() when rp's input cannot honour one of its filters: a
 * blktrace capture keeps each event's thread id, not its process, so it
 * refuses --pid (rp_filter_refuse); 0 otherwise. */
int bio_input_refuse(const struct rp_opts *rp);
void bio_data_free(struct bio_data *d);

/* ---- views --------------------------------------------------------------- */

struct bio_view_opts {
	const struct rp_filter *filter;   /* which I/Os: by submitter and Q time */
	u32 dev;                /* only this device's I/Os; 0: all */
	bool queued;            /* --hist: Q2C instead of D2C */
	bool per_disk, per_flags, millis;
	bool csv;
	bool bytes;             /* --folded: weight by bytes, not I/Os */
	int rows;               /* --stacks, --top: how many rows (0: 20) */
};

/* 'R', 'W', 'D' (discard) or 'N' (other) from an rwbs string. */
char bio_dir(const char *rwbs);
/* "loop0" from sysfs when the device exists here, else "7,0". */
void bio_dev_name(u32 dev, char *buf, size_t size);
/* The kernel dev_t of "loop0", "/dev/loop0", "7,0" or "7:0"; 0 with
 * err_set() when it names no block device. */
u32 bio_dev_parse(const char *s);
bool bio_io_shown(const struct bio_io *io, const struct bio_view_opts *o);
/* Whether an event passes a replay filter (pid, tid, comm, CPU, time). */
bool bio_event_shown(const struct bio_who *w, const struct rp_filter *f);

int bio_print_btt(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
int bio_print_hist(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
/* --snoop: a line per I/O as its request completes (bio_snoop_done, a
 * bio_done_fn with a struct bio_snoop as ctx), after the header, which
 * comes with the first line or from bio_snoop_header. */
struct bio_snoop {
	const struct bio_view_opts *o;
	FILE *out;
	bool flush;            /* flush each line (a live stream) */
	bool started;          /* the header is out */
	bio_io_list served;
};
void bio_snoop_header(struct bio_snoop *sn);
void bio_snoop_done(void *ctx, const struct bio_tracker *bt, const struct bio_io *rq);
void bio_snoop_free(struct bio_snoop *sn);
/* biotop: per process, direction and disk, the I/Os queued and completed,
 * their Kbytes and average D2C, biggest first. */
int bio_print_top(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
/* blkiomon: per device, completed requests: sizes and D2C (MIN, AVG, MAX)
 * by direction, log2 histograms of both, and the counts. */
int bio_print_monitor(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
int bio_print_size(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
int bio_print_seek(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
int bio_print_errors(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
/* The stacks that queued the I/Os, weighted by count and bytes: a table
 * of the top stacks, or folded lines ("comm;root;..;leaf N", N the I/O
 * count or, with bytes, the bytes) for ember flame. */
int bio_print_stacks(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
int bio_print_folded(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out);
/* An SVG latency heat map (D2C, or Q2C with o->queued) over time. */
int bio_write_heatmap(const struct bio_tracker *bt, const struct bio_view_opts *o,
		      const char *path);

#endif
