/* btreplay-internal.h - what target.c and run.c share inside
 * block/btreplay/: the devices replayed onto. */
#ifndef EMBER_BTREPLAY_INTERNAL_H
#define EMBER_BTREPLAY_INTERNAL_H

#include <limits.h>

#include "block/btreplay/btreplay.h"

struct blkr_target {
	char path[256];        /* /dev/NAME, or as given */
	u32 dev;               /* kernel dev_t */
	int fd;                /* O_DIRECT, -1 until opened */
	u64 bytes;             /* the device's size */
	u32 block;             /* its logical block size */
	bool writes;           /* the replay writes to it */
};

struct blkr_targets {
	struct blkr_target *v;
	u32 n;
	u32 *of_dev;           /* plan device index -> target index */
};

/* The targets of a plan's devices (--map, else --replay's), opened and
 * checked as blkr_prepare says.  -1 with err_set(), *usage for bad
 * arguments; t is freed by blkr_targets_close either way. */
int blkr_targets_open(struct blkr_targets *t, const struct blkr_plan *p, const struct blkr_opts *o,
		    bool *usage);
void blkr_targets_close(struct blkr_targets *t);

#endif
