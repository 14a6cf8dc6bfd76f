/* plan.c - the plan in memory: the I/Os a recording queued, taken from the
 * bio tracker as they were queued (a split's pieces joined again), in one
 * stream per recorded CPU, each in the order its CPU queued them.
 *
 * Each I/O is taken as the submitter queued it (own_sector, before
 * merges), at its queue time (request allocation when no queue was seen);
 * offsets count from the first I/O.  The views' filters and -d pick the
 * I/Os (bio_io_shown: by the task, CPU and time of the queue), so --cpu
 * picks streams; with stacked devices (dm on sda) both levels are in the
 * recording and -d picks one.  I/Os neither read nor write (discards,
 * flushes) are left out and counted.  A plan file keeps no task or time,
 * so cmd-bio-replay.c refuses the filters and -d with one. */
#include <stdlib.h>
#include <string.h>

#include "block/btreplay/btreplay.h"

u64 blkr_plan_nios(const struct blkr_plan *p)
{
	u64 n = 0;
	for (u32 i = 0; i < p->nstreams; i++)
		n += p->streams[i].n;
	return n;
}

u64 blkr_plan_span(const struct blkr_plan *p)
{
	u64 span = 0;
	for (u32 i = 0; i < p->nstreams; i++)
		if (p->streams[i].n)
			span = MAX(span, p->streams[i].ios[p->streams[i].n - 1].offset);
	return span;
}

void blkr_plan_free(struct blkr_plan *p)
{
	for (u32 i = 0; i < p->nstreams; i++)
		free(p->streams[i].ios);
	free(p->streams);
	free(p->devs);
	memset(p, 0, sizeof(*p));
}

/* ---- from the tracker ------------------------------------------------------ */

typedef VEC(struct blkr_io) io_vec;

struct build {
	struct blkr_plan *p;
	io_vec *ios;              /* per stream, offsets still absolute times */
	struct u64map by_cpu;     /* cpu -> stream index + 1 */
	struct u64map by_end;     /* (dev index, end sector) -> stream << 40 | index */
};

/* The index of dev in the plan's devices, added when new; -1 past the limit. */
static int dev_index(struct blkr_plan *p, u32 dev)
{
	for (u32 i = 0; i < p->ndevs; i++)
		if (p->devs[i] == dev)
			return (int)i;
	if (p->ndevs == BLKR_MAX_DEVS) {
		err_set("the recording's I/O is on more than %d devices: pick one with -d",
			BLKR_MAX_DEVS);
		return -1;
	}
	p->devs = xrealloc(p->devs, (p->ndevs + 1) * sizeof(*p->devs));
	p->devs[p->ndevs] = dev;
	return (int)p->ndevs++;
}

static u32 stream_of(struct build *b, u32 cpu)
{
	bool created;
	u64 *slot = u64map_slot(&b->by_cpu, cpu, &created);
	if (created) {
		struct blkr_plan *p = b->p;
		p->streams = xrealloc(p->streams, (p->nstreams + 1) * sizeof(*p->streams));
		p->streams[p->nstreams] = (struct blkr_stream){ .cpu = cpu };
		b->ios = xrealloc(b->ios, (p->nstreams + 1) * sizeof(*b->ios));
		memset(&b->ios[p->nstreams], 0, sizeof(*b->ios));
		*slot = ++p->nstreams;
	}
	return (u32)*slot - 1;
}

static u64 end_key(u32 dev, u64 end)
{
	return (u64)dev << 48 | (end & ((1ull << 48) - 1));
}

/* A split's remainder, queued at the head's time where the head ends:
 * the two are one I/O as the submitter queued it.  False when no such
 * head is in the plan. */
static bool join_split(struct build *b, const struct bio_io *io, u64 t)
{
	u32 dev = 0;
	while (dev < b->p->ndevs && b->p->devs[dev] != io->dev)
		dev++;
	if (dev == b->p->ndevs)
		return false;
	u64 *ref = u64map_get(&b->by_end, end_key(dev, io->sector));
	if (!ref || *ref == UINT64_MAX)
		return false;
	struct blkr_io *head = &b->ios[*ref >> 40].v[*ref & ((1ull << 40) - 1)];
	if (head->dev != dev || head->offset != t ||
	    head->sector + head->nr_sector != io->sector ||
	    (u64)head->nr_sector + io->own_sector > BLKR_MAX_SECTORS)
		return false;
	u64 at = *ref;
	*ref = UINT64_MAX;   /* the head's old end: nothing joins there now */
	head->nr_sector += io->own_sector;
	*u64map_slot(&b->by_end, end_key(dev, io->sector + io->own_sector), NULL) = at;
	return true;
}

static int add_io(struct build *b, const struct bio_io *io, u64 t, bool write)
{
	int dev = dev_index(b->p, io->dev);
	if (dev < 0)
		return -1;
	u32 s = stream_of(b, io->cpu);
	struct blkr_io e = { .offset = t, .sector = io->sector, .nr_sector = io->own_sector,
			   .dev = (u16)dev, .write = write };
	VEC_PUSH(&b->ios[s], e);
	*u64map_slot(&b->by_end, end_key((u32)dev, io->sector + io->own_sector), NULL) =
		(u64)s << 40 | (b->ios[s].n - 1);
	return 0;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct blkr_stream *x = a, *y = b;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int cmp_io(const void *a, const void *b)
{
	const struct blkr_io *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->sector < y->sector ? -1 : x->sector > y->sector;
}

/* Offsets from the first I/O; each stream in time order (the tracker's
 * order already is, unless a capture's clocks disagree). */
static void finish(struct build *b, u64 start)
{
	struct blkr_plan *p = b->p;
	p->start = start;
	for (u32 s = 0; s < p->nstreams; s++) {
		io_vec *v = &b->ios[s];
		bool sorted = true;
		for (size_t i = 0; i < v->n; i++) {
			v->v[i].offset -= start;
			sorted &= !i || v->v[i - 1].offset <= v->v[i].offset;
		}
		if (!sorted)
			qsort(v->v, v->n, sizeof(*v->v), cmp_io);
		p->streams[s].ios = v->v;
		p->streams[s].n = v->n;
	}
	if (p->nstreams > 1)
		qsort(p->streams, p->nstreams, sizeof(*p->streams), cmp_stream);
}

int blkr_plan_from_bio(struct blkr_plan *p, const struct bio_tracker *bt,
		     const struct blkr_extract_opts *o)
{
	memset(p, 0, sizeof(*p));
	struct build b = { .p = p };
	u64map_init(&b.by_cpu);
	u64map_init(&b.by_end);
	u64 start = UINT64_MAX;
	int rc = 0;
	for (size_t i = 0; i < bio_nios(bt) && rc == 0; i++) {
		const struct bio_io *io = bio_get(bt, i);
		u64 t = io->t[BT_Q] ? io->t[BT_Q] : io->t[BT_G];
		if (!t || !bio_io_shown(io, o->v))
			continue;
		char dir = bio_dir(io->rwbs);
		if ((io->flags & BF_SPLIT) && join_split(&b, io, t))
			continue;
		if ((dir != 'R' && dir != 'W') || !io->own_sector) {
			p->left_out++;
			continue;
		}
		start = MIN(start, t);
		rc = add_io(&b, io, t, dir == 'W');
	}
	if (rc == 0)
		finish(&b, start);
	else
		for (u32 s = 0; s < p->nstreams; s++)
			VEC_FREE(&b.ios[s]);
	free(b.ios);
	u64map_free(&b.by_cpu);
	u64map_free(&b.by_end);
	if (rc == 0 && !blkr_plan_nios(p)) {
		err_set("no read or write was queued in it (%llu other I/Os): nothing to replay",
			(unsigned long long)p->left_out);
		rc = -1;
	}
	if (rc < 0)
		blkr_plan_free(p);
	return rc;
}
