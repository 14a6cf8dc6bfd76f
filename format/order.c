/* order.c - the reader's time order: records are queued by time as they
 * are read and released with the FINISHED_ROUND protocol (at each round,
 * the events up to the previous round's latest time), or, in a file
 * without rounds, oldest half first from a bounded reorder window. */
#include "format/format-internal.h"

/* Without FINISHED_ROUND records the queue is flushed oldest-first once it
 * holds this many events, or its records span this many bytes of input (the
 * window keeps them all): a bounded reorder window. */
#define REORDER_WINDOW (1u << 20)
#define REORDER_BYTES (256ull << 20)

/* Drops the already delivered prefix of the queue. */
static void queue_compact(struct pd_reader *r)
{
	if (r->out_next == 0)
		return;
	size_t rest = r->queue.n - r->out_next;
	memmove(r->queue.v, r->queue.v + r->out_next, rest * sizeof(struct pdr_queued));
	r->queue.n = rest;
	r->out_next = r->out_end = 0;
}

static bool queued_before(const struct pdr_queued *x, const struct pdr_queued *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/* Merges the sorted runs a[0..na) and a[na..n) through tmp. */
static void merge_runs(struct pdr_queued *a, size_t na, size_t n, struct pdr_queued *tmp)
{
	size_t i = 0, j = na, k = 0;
	while (i < na && j < n)
		tmp[k++] = queued_before(&a[j], &a[i]) ? a[j++] : a[i++];
	while (i < na)
		tmp[k++] = a[i++];
	memcpy(a, tmp, k * sizeof(*a));   /* a[j..n) is already in place */
}

/* Sorts the queue by time.  Each CPU's ring is already in time order, so
 * the queue is a few sorted runs: merging them is close to linear. */
static void queue_sort(struct pd_reader *r)
{
	struct pdr_queued *a = r->queue.v;
	size_t n = r->queue.n;
	VEC_GROW(&r->merge_tmp, n);
	for (;;) {
		size_t start = 0, merged = 0;
		while (start < n) {
			size_t end = start + 1;
			while (end < n && !queued_before(&a[end], &a[end - 1]))
				end++;
			size_t end2 = end;
			if (end < n) {
				end2 = end + 1;
				while (end2 < n && !queued_before(&a[end2], &a[end2 - 1]))
					end2++;
				merge_runs(a + start, end - start, end2 - start, r->merge_tmp.v);
				merged++;
			}
			start = end2;
		}
		if (!merged)
			return;
	}
}

/* Sorts the queue and marks the events with time <= limit as ready. */
static void queue_release(struct pd_reader *r, u64 limit)
{
	queue_compact(r);
	queue_sort(r);
	size_t k = 0;
	while (k < r->queue.n && r->queue.v[k].time <= limit)
		k++;
	r->out_next = 0;
	r->out_end = k;
	/* The window must keep what stays queued; records queued later come
	 * from r->pos on.  (Released ones are all delivered before the next
	 * read: fill_queue reads only when none is left.) */
	r->hold_from = r->pos;
	r->zhold_from = r->zpos;
	for (size_t i = k; i < r->queue.n; i++) {
		u64 off = r->queue.v[i].offset;
		if (off & ZOFF)
			r->zhold_from = MIN(r->zhold_from, off & ~ZOFF);
		else
			r->hold_from = MIN(r->hold_from, off);
	}
}

static void enqueue(struct pd_reader *r, u64 offset, u64 time)
{
	struct pdr_queued q = { time, r->seq++, offset };
	VEC_PUSH(&r->queue, q);
	if (time > r->max_time)
		r->max_time = time;
}

/* A record's time, read straight from where its attr's sample_type puts
 * it (the full decode waits until the record is delivered).  Untimed or
 * too-short records get the latest time seen: they stay near their
 * neighbours. */
static u64 record_time(struct pd_reader *r, const u8 *rec, bool *timed)
{
	u16 size = get_u32(rec + 4) >> 16;
	u32 type = get_u32(rec);
	const struct pd_attr *a = pdr_attr_of(r, rec, size, type);
	*timed = false;
	if (!a || !(a->attr.sample_type & PERF_SAMPLE_TIME))
		return r->max_time;
	u64 t = a->attr.sample_type;
	size_t pos;
	if (type == PERF_RECORD_SAMPLE) {
		pos = 8 + ((t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0) + ((t & PERF_SAMPLE_IP) ? 8 : 0) +
		      ((t & PERF_SAMPLE_TID) ? 8 : 0);
	} else {
		if (!a->id_trailer_size || size < 8 + a->id_trailer_size)
			return r->max_time;
		pos = size - a->id_trailer_size + ((t & PERF_SAMPLE_TID) ? 8 : 0);
	}
	*timed = pos + 8 <= size;
	return *timed ? get_u64(rec + pos) : r->max_time;
}

/* Side-band records may come long after the last sample (a command's
 * exit after its last block event): past the last sample by more than
 * this and the recording's own span, a time is damage. */
#define SIDEBAND_SLACK_NS (3600ull * 1000000000ull)

/* Whether a record's time lies outside the recording's span: with the
 * header's first and last sample times (a file), a sample outside them,
 * or any record far past the last; without (a stream), a time far past
 * every one before it (a stream's rounds come each second at the most,
 * so no live recording jumps an hour).  Time 0 is a record made at the
 * start. */
static bool time_outside(const struct pd_reader *r, u32 type, u64 time)
{
	if (!time)
		return false;
	if (!r->span_last)
		return r->max_time && time > r->max_time + SIDEBAND_SLACK_NS;
	if (type == PERF_RECORD_SAMPLE)
		return time < r->span_first || time > r->span_last;
	u64 slack = MAX(SIDEBAND_SLACK_NS, r->span_last - r->span_first);
	return time > r->span_last + slack;
}

/* Reads one record of the input into the queue (or handles it here).
 * 1 when something was read, 0 at the end, -1 on an error. */
static int queue_one(struct pd_reader *r)
{
	const u8 *rec;
	u64 offset;
	int got = pdr_next_raw(r, &rec, &offset);
	if (got <= 0)
		return got;
	u32 type = get_u32(rec);
	if (type == PD_RECORD_FINISHED_ROUND) {
		queue_release(r, r->round_limit);
		r->round_limit = r->max_time;
		r->round_seen = r->rounds;
		return 1;
	}
	if (type >= PD_RECORD_HEADER_ATTR) {
		int used = pdr_user_record(r, rec, offset);
		if (used)
			return used < 0 ? -1 : 1;
	}
	bool timed;
	u64 time = record_time(r, rec, &timed);
	if (timed && time_outside(r, type, time)) {
		/* Left out, not queued: one damaged time would otherwise hold
		 * every record after it and stretch the recording by days. */
		if (!r->stats.bad_times++)
			r->stats.first_bad_time_offset = offset;
		return 1;
	}
	if (time < r->last_out_time)
		r->stats.reordered_late++;
	enqueue(r, offset, time);
	size_t queued = r->queue.n - r->out_next;
	bool held_big = r->pos - r->hold_from >= REORDER_BYTES ||
			(r->z && r->zpos - r->zhold_from >= REORDER_BYTES);
	if (queued >= REORDER_WINDOW || (queued > 1 && held_big)) {
		/* the oldest half by time */
		queue_compact(r);
		queue_sort(r);
		queue_release(r, r->queue.v[queued / 2].time);
	}
	return 1;
}

/* At the end of the input, or at an error, everything queued is released:
 * what was readable before a damaged record is still delivered, and the
 * error comes after it. */
void pdr_fill_queue(struct pd_reader *r)
{
	while (r->out_next == r->out_end && !r->ended && !r->round_seen) {
		if (queue_one(r) <= 0) {
			r->ended = true;
			queue_release(r, UINT64_MAX);
		}
	}
}
