/* rewrite.c - a SAMPLE record rewritten with a new user callchain and the
 * user regs and stack copy trimmed or dropped; every other field is copied
 * byte for byte from the decoder's offsets. */
#include "format/format-internal.h"

/* The record being built: out of room once a piece does not fit. */
struct obuf {
	u8 *p;
	size_t len, cap;
	bool full;
};

static void put(struct obuf *o, const void *src, size_t n)
{
	if (o->full || n > o->cap - o->len) {
		o->full = true;
		return;
	}
	if (n)
		memcpy(o->p + o->len, src, n);
	o->len += n;
}

static void put_u64(struct obuf *o, u64 v)
{
	put(o, &v, 8);
}

static void put_zeros(struct obuf *o, size_t n)
{
	static const u8 zeros[8];
	put(o, zeros, n);
}

/* The recorded kernel part (everything before a PERF_CONTEXT_USER
 * marker), then the marker and the new user frames. */
static void put_chain(struct obuf *o, const struct pd_sample *s, const struct pd_rewrite *rw)
{
	u64 nkernel = 0;
	while (nkernel < s->nr_callchain && s->callchain[nkernel] != PERF_CONTEXT_USER)
		nkernel++;
	put_u64(o, nkernel + 1 + rw->nuser);
	put(o, s->callchain, nkernel * 8);
	put_u64(o, PERF_CONTEXT_USER);
	put(o, rw->user, rw->nuser * 8);
}

static void put_regs(struct obuf *o, const struct pd_attr *a, const struct pd_sample *s,
		     bool keep)
{
	if (!keep || s->user_abi == 0) {
		put_u64(o, 0);     /* PERF_SAMPLE_REGS_ABI_NONE: no regs follow */
		return;
	}
	put_u64(o, s->user_abi);
	put(o, s->user_regs, (size_t)a->nr_user_regs * 8);
}

/* Only the bytes the kernel really copied (dyn_size; the decoder keeps it
 * at most size), the size rounded up to 8 as the kernel's own sizes are;
 * perf requires dyn_size <= size.  Nothing valid: size 0, which has no
 * data and no dyn_size. */
static void put_stack(struct obuf *o, const struct pd_sample *s, bool keep)
{
	size_t dyn = keep ? (size_t)s->stack_dyn_size : 0;
	size_t size = (dyn + 7) & ~(size_t)7;
	put_u64(o, size);
	if (!size)
		return;
	put(o, s->stack, dyn);
	put_zeros(o, size - dyn);
	put_u64(o, s->stack_dyn_size);
}

/* s must be rec's own decoding: its offsets in order and inside rec. */
static bool offsets_fit(const struct pd_sample *s, size_t size)
{
	return s->chain_off >= sizeof(struct perf_event_header) &&
	       s->chain_off <= s->chain_end && s->chain_end <= s->user_off &&
	       s->user_off <= s->user_end && s->user_end <= size;
}

size_t pd_sample_rewrite(const struct pd_attr *a, const void *rec, const struct pd_sample *s,
			 const struct pd_rewrite *rw, void *out, size_t cap)
{
	const u8 *in = rec;
	struct perf_event_header h;
	memcpy(&h, in, sizeof(h));
	/* More frames than a record holds would also make nuser * 8 wrap. */
	if (!offsets_fit(s, h.size) || (rw->user && rw->nuser > UINT16_MAX / 8))
		return 0;
	u64 t = a->attr.sample_type;
	struct obuf o = { out, 0, cap, false };
	/* The kernel's order: ... READ, CALLCHAIN, RAW, BRANCH_STACK,
	 * REGS_USER, STACK_USER, WEIGHT ...: the pieces between the two
	 * rewritten parts go across as they are. */
	put(&o, in, s->chain_off);
	if ((t & PERF_SAMPLE_CALLCHAIN) && rw->user)
		put_chain(&o, s, rw);
	else
		put(&o, in + s->chain_off, s->chain_end - s->chain_off);
	put(&o, in + s->chain_end, s->user_off - s->chain_end);
	if (t & PERF_SAMPLE_REGS_USER)
		put_regs(&o, a, s, rw->keep_user_state);
	if (t & PERF_SAMPLE_STACK_USER)
		put_stack(&o, s, rw->keep_user_state);
	put(&o, in + s->user_end, h.size - s->user_end);
	if (o.full || o.len > UINT16_MAX)
		return 0;
	h.size = (u16)o.len;
	memcpy(out, &h, sizeof(h));
	return o.len;
}
