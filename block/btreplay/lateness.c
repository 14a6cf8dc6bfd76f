/* lateness.c - how far behind its recorded time each I/O was issued, kept
 * as a log-linear histogram: fixed memory however long the replay, and
 * percentiles within 3%. */
#include "block/btreplay/btreplay.h"

/* Values below 64 have a bucket each; above, 32 buckets per power of two. */
static unsigned bucket_of(u64 v)
{
	if (v < 64)
		return (unsigned)v;
	unsigned b = 63 - (unsigned)__builtin_clzll(v);   /* 6 .. 63 */
	unsigned shift = b - 5;
	return 64 + (b - 6) * 32 + (unsigned)((v >> shift) - 32);
}

/* The largest value of bucket i. */
static u64 bucket_top(unsigned i)
{
	if (i < 64)
		return i;
	unsigned b = (i - 64) / 32 + 6, shift = b - 5;
	u64 top = 32 + (i - 64) % 32;
	return ((top + 1) << shift) - 1;
}

void blkr_late_add(struct blkr_late *l, u64 ns)
{
	l->count[bucket_of(ns)]++;
	l->n++;
	if (ns > l->max)
		l->max = ns;
}

void blkr_late_merge(struct blkr_late *into, const struct blkr_late *from)
{
	for (unsigned i = 0; i < BLKR_LATE_BUCKETS; i++)
		into->count[i] += from->count[i];
	into->n += from->n;
	into->max = MAX(into->max, from->max);
}

u64 blkr_late_quantile(const struct blkr_late *l, double q)
{
	if (!l->n)
		return 0;
	u64 want = (u64)(q * (double)l->n + 0.999999), seen = 0;
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < BLKR_LATE_BUCKETS; i++) {
		seen += l->count[i];
		if (seen >= want)
			return MIN(bucket_top(i), l->max);
	}
	return l->max;
}
