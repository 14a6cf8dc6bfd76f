/* stackset.c - unique stacks of resolved frames (see stackset.h): a frame
 * is the same when its address, side (kernel or user) and symbol are (the
 * symbol tells apart the inlined frames that share one address). */
#include <stdlib.h>
#include <string.h>

#include "report/replay/replay.h"

void stackset_init(struct stackset *s)
{
	memset(s, 0, sizeof(*s));
	u64map_init(&s->index);
}

void stackset_free(struct stackset *s)
{
	VEC_FREE(&s->frames);
	VEC_FREE(&s->stacks);
	u64map_free(&s->index);
}

static bool kept(stackset_keep_fn keep, const void *ctx, const struct rp_frame *f)
{
	return !keep || keep(ctx, f);
}

static bool same_frame(const struct rp_frame *a, const struct rp_frame *b)
{
	return a->ip == b->ip && a->kernel == b->kernel && a->sym == b->sym;
}

static u64 stack_hash(const struct rp_frame *f, int n, u32 pid, stackset_keep_fn keep,
		      const void *ctx)
{
	u64 h = hash_u64(pid + 1);
	for (int i = 0; i < n; i++)
		if (kept(keep, ctx, &f[i]))
			h = hash_u64(h ^ f[i].ip ^ (u64)f[i].kernel << 63 ^ (u64)(uintptr_t)f[i].sym);
	return h;
}

static bool stack_equal(const struct stackset *s, const struct ss_stack *k,
			const struct rp_frame *f, int n, u32 pid, stackset_keep_fn keep,
			const void *ctx)
{
	if (k->pid != pid)
		return false;
	u32 j = 0;
	for (int i = 0; i < n; i++) {
		if (!kept(keep, ctx, &f[i]))
			continue;
		if (j >= k->n || !same_frame(&s->frames.v[k->first + j++], &f[i]))
			return false;
	}
	return j == k->n;
}

u32 stackset_intern(struct stackset *s, const struct rp_frame *f, int n, u32 pid,
		    stackset_keep_fn keep, const void *ctx, bool *added)
{
	u64 h = stack_hash(f, n, pid, keep, ctx);
	u64 *head = u64map_get(&s->index, h);
	*added = false;
	for (u32 i = head ? (u32)*head : 0; i; i = s->stacks.v[i - 1].next)
		if (stack_equal(s, &s->stacks.v[i - 1], f, n, pid, keep, ctx))
			return i - 1;
	struct ss_stack k = { .first = (u32)s->frames.n, .pid = pid, .hash = h,
			      .next = head ? (u32)*head : 0 };
	for (int i = 0; i < n; i++)
		if (kept(keep, ctx, &f[i]))
			VEC_PUSH(&s->frames, f[i]);
	k.n = (u32)(s->frames.n - k.first);
	VEC_PUSH(&s->stacks, k);
	*u64map_slot(&s->index, h, NULL) = s->stacks.n;
	*added = true;
	return (u32)(s->stacks.n - 1);
}
