/* ring.c - one CPU's mmap'd ring buffer: mapping it, and copying what the
 * kernel wrote into the file while counting samples and losses on the way. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/record-internal.h"

int rec_ring_map(struct rec_ring *r, int fd, int cpu, u32 pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = ((size_t)pages + 1) * page;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err_set_errno("mapping a %zu KiB ring for CPU %d (try a smaller -m, "
			      "or raise /proc/sys/kernel/perf_event_mlock_kb)",
			      (size_t)pages * page / 1024, cpu);
		return -1;
	}
	r->cpu = cpu;
	r->fd = fd;
	r->base = p;
	r->map_len = len;
	r->data = (u8 *)p + page;
	r->mask = (u64)pages * page - 1;
	return 0;
}

void rec_ring_unmap(struct rec_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	r->base = NULL;
}

static u64 ring_u64(const u8 *data, u64 mask, u64 pos)
{
	u64 v;
	/* Records and their u64 fields are 8-byte aligned and the ring is a
	 * power of two, so a field never straddles the wrap. */
	memcpy(&v, data + (pos & mask), sizeof(v));
	return v;
}

/* Our samples all begin IDENTIFIER, IP, TID, TIME: time is the 5th u64. */
static void tally_sample(const u8 *data, u64 mask, u64 pos, struct rec_tally *t)
{
	u64 time = ring_u64(data, mask, pos + 32);
	t->samples++;
	if (!t->first_time || time < t->first_time)
		t->first_time = time;
	if (time > t->last_time)
		t->last_time = time;
}

void rec_tally_walk(const u8 *data, u64 mask, u64 tail, u64 head,
		    struct rec_tally *t, rec_walk_fn on_sideband, void *ctx)
{
	u64 pos = tail;
	while (pos < head) {
		struct perf_event_header h;
		memcpy(&h, data + (pos & mask), sizeof(h));
		if (h.size < sizeof(h))
			break;          /* never from a sane kernel; don't spin */
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			tally_sample(data, mask, pos, t);
			break;
		case PERF_RECORD_LOST:          /* id, lost */
			t->lost += ring_u64(data, mask, pos + 16);
			break;
		case PERF_RECORD_LOST_SAMPLES:  /* lost */
			t->lost += ring_u64(data, mask, pos + 8);
			break;
		case PERF_RECORD_THROTTLE:
			t->throttles++;
			break;
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_FORK:
		case PERF_RECORD_COMM:
		case PERF_RECORD_EXIT:
			if (on_sideband)
				on_sideband(ctx, pos, h.size, h.type);
			break;
		}
		pos += h.size;
	}
}

struct side_ctx {
	struct rec_ring *r;
	struct rec_node *n;
};

/* A record whole and contiguous, 8-byte aligned for decoding: in place
 * in the ring, or copied into the node's scratch buffer when it wraps
 * around the ring's end (a -g sample is 16 KB: copying every one would
 * double the drain's memory traffic). */
static const u8 *record_at(struct rec_ring *r, struct rec_node *n, u64 pos, u16 size)
{
	u64 off = pos & r->mask;
	u64 first = MIN((u64)size, r->mask + 1 - off);
	if (first == size)
		return r->data + off;
	memcpy(n->scratch, r->data + off, first);
	memcpy(n->scratch + first, r->data, size - first);
	return n->scratch;
}

/* MMAP2 records name the files the build-id feature lists, and with -g
 * they, FORK, COMM (exec) and EXIT records keep the online unwinder's
 * maps. */
static void note_sideband(void *ctx, u64 pos, u16 size, u32 type)
{
	struct side_ctx *c = ctx;
	const u8 *rec = record_at(c->r, c->n, pos, size);
	if (type == PERF_RECORD_MMAP2)
		rec_bids_note_mmap2(&c->n->s->bids, rec, size);
	if (c->n->s->online)
		rec_online_sideband(c->n->s->online, rec);
}

void rec_ring_sideband(struct rec_ring *r, struct rec_node *n)
{
	struct perf_event_mmap_page *meta = r->base;
	r->head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	struct rec_tally ignored = {0};
	struct side_ctx c = { r, n };
	rec_tally_walk(r->data, r->mask, meta->data_tail, r->head, &ignored, note_sideband, &c);
}

/* Copies [tail, head) to the writer straight from the ring: one write, or
 * two when the data wraps around the end. */
static int copy_out(struct rec_ring *r, struct rec_node *n, u64 tail, u64 head)
{
	u64 off = tail & r->mask, len = head - tail;
	u64 first = MIN(len, r->mask + 1 - off);
	if (first && pd_writer_write(n->s->w, r->data + off, first) < 0)
		return -1;
	if (first < len && pd_writer_write(n->s->w, r->data, len - first) < 0)
		return -1;
	return 0;
}

/* A ring is behind when more than half of it waits to be drained. */
static bool ring_behind(const struct rec_ring *r, u64 tail, u64 head)
{
	return head - tail > (r->mask + 1) / 2;
}

/* Hands [.., pos) back to the kernel in the middle of a pass, and tells
 * whether the ring is behind now. */
static bool release_upto(struct rec_ring *r, u64 pos)
{
	struct perf_event_mmap_page *meta = r->base;
	__atomic_store_n(&meta->data_tail, pos, __ATOMIC_RELEASE);
	return ring_behind(r, pos, __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE));
}

/* With -g: runs of records go out as they are, each sample with a stack
 * copy as the online unwinder rewrites it.  A ring more than half full is
 * behind: its samples go out raw (trimmed), for the reporter to unwind,
 * so none is lost to a busy drain.  Every eighth of the ring the part
 * done goes back to the kernel and the fill is looked at again: a pass
 * over a full ring of samples to unwind takes a while. */
static int rewrite_out(struct rec_ring *r, struct rec_node *n, u64 tail, u64 head)
{
	u64 step = (r->mask + 1) / 8;
	bool defer = ring_behind(r, tail, head);
	u64 pos = tail, run = tail, released = tail;
	while (pos < head) {
		struct perf_event_header h;
		memcpy(&h, r->data + (pos & r->mask), sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (pos - released >= step) {
			if (copy_out(r, n, run, pos) < 0)
				return -1;
			run = released = pos;
			defer = release_upto(r, pos);
		}
		const void *out;
		size_t len = 0;
		if (h.type == PERF_RECORD_SAMPLE)
			len = rec_online_sample(n->s->online, record_at(r, n, pos, h.size),
						defer, &out);
		if (len) {
			if (copy_out(r, n, run, pos) < 0 || pd_writer_write(n->s->w, out, len) < 0)
				return -1;
			run = pos + h.size;
		}
		pos += h.size;
	}
	return copy_out(r, n, run, head);
}

int rec_ring_drain(struct rec_ring *r, struct rec_node *n, bool *had_data)
{
	struct perf_event_mmap_page *meta = r->base;
	u64 head = r->head, tail = meta->data_tail;
	if (head == tail)
		return 0;
	*had_data = true;
	/* Counted into a copy so the totals describe what reached the file. */
	struct rec_tally t = n->tally;
	rec_tally_walk(r->data, r->mask, tail, head, &t, NULL, NULL);
	if ((n->s->online ? rewrite_out(r, n, tail, head) : copy_out(r, n, tail, head)) < 0)
		return -1;
	r->lost += t.lost - n->tally.lost;
	u64 bytes = n->tally.bytes + head - tail;
	n->tally = t;
	n->tally.bytes = bytes;
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return 0;
}
