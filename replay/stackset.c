/* stackset.c - unique stacks of resolved frames per process (struct
 * stackset, declared in replay.h): a frame is the same when its address,
 * side (kernel or user) and symbol are (the symbol tells apart the
 * inlined frames that share one address).  Each stack gets an id (hash
 * and chain) that views key their totals by: offcpu.c, block/stacks.c,
 * stackcount.  offcpu keeps its stacks as places (stackset_keep_places),
 * so they outlive the files' release, and in a live session drops the
 * stacks nothing counts any more (stackset_compact). */
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

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
	if (s->places)
		rp_places_free(s->places);
	free(s->places);
	VEC_FREE(&s->scratch);
}

void stackset_keep_places(struct stackset *s)
{
	if (s->places)
		return;
	s->places = xmalloc(sizeof(*s->places));
	rp_places_init(s->places);
}

void stackset_forget(struct stackset *s)
{
	if (s->places)
		rp_places_forget(s->places);
}

/* The frames of f[0..n) as their places, in scratch. */
static const struct rp_frame *as_places(struct stackset *s, const struct rp_frame *f, int n)
{
	VEC_GROW(&s->scratch, (size_t)(n > 0 ? n : 1));
	for (int i = 0; i < n; i++) {
		s->scratch.v[i] = f[i];
		rp_place_frame(rp_place_of(s->places, f[i].dso, f[i].sym), &s->scratch.v[i]);
	}
	return s->scratch.v;
}

static bool kept(stackset_keep_fn keep, const void *ctx, const struct rp_frame *f)
{
	return !keep || keep(ctx, f);
}

static bool same_frame(const struct rp_frame *a, const struct rp_frame *b)
{
	return a->ip == b->ip && a->kernel == b->kernel && a->sym == b->sym && a->file == b->file;
}

static u64 stack_hash(const struct rp_frame *f, int n, u32 pid, stackset_keep_fn keep,
		      const void *ctx)
{
	u64 h = hash_u64(pid + 1);
	for (int i = 0; i < n; i++)
		if (kept(keep, ctx, &f[i]))
			h = hash_u64(h ^ f[i].ip ^ (u64)f[i].kernel << 63 ^ (u64)(uintptr_t)f[i].sym ^
				     (u64)(uintptr_t)f[i].file << 1);
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
	if (s->places)
		f = as_places(s, f, n);
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

u32 *stackset_compact(struct stackset *s, const bool *used)
{
	u32 *to = xmalloc((s->stacks.n ? s->stacks.n : 1) * sizeof(*to));
	size_t nstacks = 0, nframes = 0;
	u64map_free(&s->index);
	u64map_init(&s->index);
	for (size_t i = 0; i < s->stacks.n; i++) {
		struct ss_stack k = s->stacks.v[i];
		if (!used[i]) {
			to[i] = STACKSET_NONE;
			continue;
		}
		memmove(s->frames.v + nframes, s->frames.v + k.first, k.n * sizeof(*s->frames.v));
		k.first = (u32)nframes;
		nframes += k.n;
		u64 *head = u64map_slot(&s->index, k.hash, NULL);
		k.next = (u32)*head;
		*head = nstacks + 1;
		to[i] = (u32)nstacks;
		s->stacks.v[nstacks++] = k;
	}
	s->stacks.n = nstacks;
	s->frames.n = nframes;
	return to;
}
