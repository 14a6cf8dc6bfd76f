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
		    struct rec_tally *t, rec_walk_fn on_mmap2, void *ctx)
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
			if (on_mmap2)
				on_mmap2(ctx, pos, h.size);
			break;
		}
		pos += h.size;
	}
}

struct bid_ctx {
	struct rec_ring *r;
	struct rec_node *n;
};

/* MMAP2 records name the files the build-id feature lists (with their
 * build-id when the record carries one); they are rare, so copying one
 * whole (it may wrap) costs nothing that matters. */
static void note_mmap2(void *ctx, u64 pos, u16 size)
{
	struct bid_ctx *c = ctx;
	u64 off = pos & c->r->mask;
	u64 first = MIN((u64)size, c->r->mask + 1 - off);
	memcpy(c->n->scratch, c->r->data + off, first);
	memcpy(c->n->scratch + first, c->r->data, size - first);
	rec_bids_note_mmap2(&c->n->s->bids, c->n->scratch, size);
}

/* Copies [tail, head) to the writer straight from the ring: one write, or
 * two when the data wraps around the end. */
static int copy_out(struct rec_ring *r, struct rec_node *n, u64 tail, u64 head)
{
	u64 off = tail & r->mask, len = head - tail;
	u64 first = MIN(len, r->mask + 1 - off);
	if (pd_writer_write(n->s->w, r->data + off, first) < 0)
		return -1;
	if (first < len && pd_writer_write(n->s->w, r->data, len - first) < 0)
		return -1;
	return 0;
}

int rec_ring_drain(struct rec_ring *r, struct rec_node *n, bool *had_data)
{
	struct perf_event_mmap_page *meta = r->base;
	u64 head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	u64 tail = meta->data_tail;
	if (head == tail)
		return 0;
	*had_data = true;
	struct bid_ctx c = { r, n };
	/* Counted into a copy so the totals describe what reached the file. */
	struct rec_tally t = n->tally;
	rec_tally_walk(r->data, r->mask, tail, head, &t, note_mmap2, &c);
	if (copy_out(r, n, tail, head) < 0)
		return -1;
	r->lost += t.lost - n->tally.lost;
	n->tally = t;
	n->tally.bytes += head - tail;
	__atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
	return 0;
}
