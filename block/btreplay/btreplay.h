/* btreplay.h - block I/O replay (btrecord/btreplay): the I/Os a recording
 * queued, as a plan per recorded CPU, saved to and read from a plan file,
 * and issued again onto block devices with their recorded timing (io_uring,
 * O_DIRECT), with the safety checks writes need.  Errors are returned
 * (err_set); cmd/cmd-bio-replay.c prints them.
 *
 * Files: plan.c (the plan in memory: built from the bio tracker, folded
 * onto submitters), planfile.c (the file format, its layout in its
 * opening comment), target.c (the devices replayed onto and their
 * checks), run.c (the submitters), lateness.c (how late each I/O was
 * issued). */
#ifndef EMBER_BTREPLAY_H
#define EMBER_BTREPLAY_H

#include <signal.h>

#include "block/block.h"

/* ---- the plan ------------------------------------------------------------ */

/* One I/O to issue. */
struct blkr_io {
	u64 offset;            /* ns after the plan's first I/O was queued */
	u64 sector;            /* 512-byte sectors */
	u32 nr_sector;
	u16 dev;               /* index into blkr_plan.devs */
	u8 write;              /* 1 a write, 0 a read */
	u8 flags;              /* none yet: 0 */
};

/* The I/Os one recorded CPU queued, in the order it queued them. */
struct blkr_stream {
	u32 cpu;
	u64 n;
	struct blkr_io *ios;
};

struct blkr_plan {
	u32 ndevs;
	u32 *devs;             /* kernel dev_t (MAJOR << 20 | MINOR), recorded */
	u32 nstreams;
	struct blkr_stream *streams;   /* by CPU number */
	u64 start;             /* recording time of the first I/O, ns */
	u64 left_out;          /* I/Os neither read nor write (discards, flushes) */
};

/* Limits a plan file is held to (planfile.c). */
#define BLKR_MAX_DEVS 4096
#define BLKR_MAX_STREAMS 65536
/* The most one read or write moves (Linux's MAX_RW_COUNT, INT_MAX rounded
 * down to a page: 2 GiB - 4 KiB): a larger I/O would come back short, and
 * its length would not fit io_uring's 32-bit length and result. */
#define BLKR_MAX_BYTES 0x7ffff000u
#define BLKR_MAX_SECTORS (BLKR_MAX_BYTES / 512)

u64 blkr_plan_nios(const struct blkr_plan *p);
/* The last I/O's offset: how long the recording's I/O lasted. */
u64 blkr_plan_span(const struct blkr_plan *p);
void blkr_plan_free(struct blkr_plan *p);

/* Which tracked I/Os go into a plan: those the view opts show (-d, and
 * the filters by the task, CPU and time of the queue: bio_io_shown). */
struct blkr_extract_opts {
	const struct bio_view_opts *v;
};
/* The plan of a tracker's I/Os: each as queued (a split's pieces joined
 * again), at its queue time (request allocation when no queue was seen),
 * in streams by the CPU it was queued on.  -1 with err_set() when no
 * I/O is left to replay. */
int blkr_plan_from_bio(struct blkr_plan *p, const struct bio_tracker *bt,
		     const struct blkr_extract_opts *o);

/* The plan file (planfile.c): blkr_plan_save writes it, blkr_plan_load reads
 * it with every count, size and offset checked (errors name the byte
 * offset).  -1 with err_set(). */
int blkr_plan_save(const struct blkr_plan *p, const char *path);
int blkr_plan_load(struct blkr_plan *p, const char *path);
/* The same from bytes in memory (the fuzz target; name is for messages). */
int blkr_plan_parse(struct blkr_plan *p, const void *buf, size_t len, const char *name);

/* ---- the replay ------------------------------------------------------------ */

/* --map OLD=NEW: the recorded device OLD goes to NEW. */
struct blkr_map {
	u32 from;              /* kernel dev_t */
	const char *to;        /* NAME, /dev/NAME or MAJ:MIN */
};

struct blkr_opts {
	const char *dest;      /* --replay DEV: where unmapped devices go */
	const struct blkr_map *maps;
	size_t nmaps;
	bool write;            /* -W: issue the writes (else counted, skipped) */
	bool force;            /* past the safety checks */
	double factor;         /* -x: offsets divided by it (0: 1) */
	bool no_stall;         /* -N: as fast as possible */
	u32 submitters;        /* -c: streams folded onto this many (0: one each) */
	u32 iterations;        /* -I (0: 1) */
	/* Nonzero: issue no more I/O (those in flight complete) and end
	 * the run; the stop handlers' counter (common/stop.c), or NULL. */
	volatile sig_atomic_t *stop;
};

struct blkr_result {
	u32 submitters, targets;
	u64 reads, writes;     /* issued and completed */
	u64 bytes;
	u64 writes_skipped;    /* without -W */
	u64 elapsed;           /* ns, all iterations: start to last completion */
	u64 late_p50, late_p99, late_max;   /* ns behind the recorded time */
	u64 errors;            /* I/Os that failed or came back short */
	u64 planned;           /* I/Os the plan asks for, all iterations */
	bool stopped;          /* *stop ended it before the plan's end */
	char first_error[384];
};

struct blkr_replay;
/* Everything before the first I/O: the targets opened and checked (block
 * devices, I/Os within their ends and aligned to their block size, and
 * for writes not mounted, holding no filesystem or partition table, not
 * the recorded device, unless forced), the streams folded onto the
 * submitters, their rings and buffers.  NULL with err_set(); *usage tells
 * a bad argument (a target that is not a block device, a bad map) from a
 * refusal or a failure. */
struct blkr_replay *blkr_prepare(const struct blkr_plan *p, const struct blkr_opts *o, bool *usage);
/* The replay: 0, or -1 with err_set() when it could not run (failed I/Os
 * are counted in the result, not an error here). */
int blkr_run(struct blkr_replay *r, struct blkr_result *res);
/* The path of target i (0 .. res.targets-1) for messages. */
const char *blkr_target_path(const struct blkr_replay *r, u32 i);
void blkr_free(struct blkr_replay *r);

/* ---- lateness (lateness.c) ----------------------------------------------- */

/* A log-linear histogram of ns values: 32 steps per power of two, so a
 * percentile is within 1/32 (3%) of the value; max is exact. */
#define BLKR_LATE_BUCKETS (64 + 58 * 32)
struct blkr_late {
	u64 n, max;
	u64 count[BLKR_LATE_BUCKETS];
};
void blkr_late_add(struct blkr_late *l, u64 ns);
void blkr_late_merge(struct blkr_late *into, const struct blkr_late *from);
/* The value below which a share q (0..1] of the values lie: the top of
 * its bucket, at most max.  0 when empty. */
u64 blkr_late_quantile(const struct blkr_late *l, double q);

#endif
