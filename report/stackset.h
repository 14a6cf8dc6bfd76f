/* stackset.h - (internal to report/) unique stacks of resolved frames,
 * each stored once per process and found again by hash: the off-CPU and
 * block I/O views key their totals by these ids. */
#ifndef EMBER_REPORT_STACKSET_H
#define EMBER_REPORT_STACKSET_H

#include "report/replay.h"

struct ss_stack {
	u32 first, n;              /* frames[first .. first + n), leaf first */
	u32 pid;
	u32 next;                  /* id + 1 of the next stack with the hash */
	u64 hash;
};

struct stackset {
	VEC(struct rp_frame) frames;
	VEC(struct ss_stack) stacks;
	struct u64map index;       /* hash -> id + 1 of the first stack */
};

/* Which frames of a stack count (NULL: all). */
typedef bool (*stackset_keep_fn)(const void *ctx, const struct rp_frame *f);

void stackset_init(struct stackset *s);
void stackset_free(struct stackset *s);

/* The id (0, 1, ...) of the stack made of the frames of f[0..n) that keep
 * accepts, in process pid (an address means the same code only within one
 * address space); a stack not seen before is stored, and *added says so. */
u32 stackset_intern(struct stackset *s, const struct rp_frame *f, int n, u32 pid,
		    stackset_keep_fn keep, const void *ctx, bool *added);

/* The frames of stack id, leaf first. */
static inline const struct rp_frame *stackset_frames(const struct stackset *s, u32 id, u32 *n)
{
	*n = s->stacks.v[id].n;
	return s->frames.v + s->stacks.v[id].first;
}

#endif
