/* blktrace.c - blktrace captures as a source for `ember bio`: turns
 * blk_io_trace records (read by format/) into the same decoded events the
 * tracepoints give, and prints either source as blkparse's default lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block.h"

/* The rwbs letters from the category bits, in blkparse's order. */
static void rwbs_of(u32 action, u32 bytes, char *out)
{
	u32 cat = PD_BLK_CAT(action);
	int n = 0;
	if (cat & PD_BLK_TC_FLUSH)
		out[n++] = 'F';
	if (cat & PD_BLK_TC_DISCARD)
		out[n++] = 'D';
	else if (cat & PD_BLK_TC_WRITE)
		out[n++] = 'W';
	else if (bytes)
		out[n++] = 'R';
	else
		out[n++] = 'N';
	if (cat & PD_BLK_TC_FUA)
		out[n++] = 'F';
	if (cat & PD_BLK_TC_AHEAD)
		out[n++] = 'A';
	if (cat & PD_BLK_TC_SYNC)
		out[n++] = 'S';
	if (cat & PD_BLK_TC_META)
		out[n++] = 'M';
	out[n] = '\0';
}

static enum bio_kind blk_kind_of(u32 act)
{
	switch (act) {
	case PD_BLK_TA_QUEUE: return BK_QUEUE;
	case PD_BLK_TA_BACKMERGE: return BK_BACKMERGE;
	case PD_BLK_TA_FRONTMERGE: return BK_FRONTMERGE;
	case PD_BLK_TA_GETRQ: return BK_GETRQ;
	case PD_BLK_TA_REQUEUE: return BK_REQUEUE;
	case PD_BLK_TA_ISSUE: return BK_ISSUE;
	case PD_BLK_TA_COMPLETE: return BK_COMPLETE;
	case PD_BLK_TA_INSERT: return BK_INSERT;
	case PD_BLK_TA_SPLIT: return BK_SPLIT;
	case PD_BLK_TA_REMAP: return BK_BIO_REMAP;
	case PD_BLK_TA_PLUG: return BK_PLUG;
	case PD_BLK_TA_UNPLUG_IO: case PD_BLK_TA_UNPLUG_TIMER: return BK_UNPLUG;
	default: return BK_OTHER;
	}
}

static void decode(const struct pd_blk_rec *r, struct bio_ev *e)
{
	memset(e, 0, sizeof(*e));
	e->kind = blk_kind_of(PD_BLK_ACT(r->action) & ~(u32)PD_BLK_TA_CGROUP);
	e->dev = r->device;
	e->sector = r->sector;
	e->nr_sector = r->bytes >> 9;
	e->error = -(s32)r->error;
	rwbs_of(r->action, r->bytes, e->rwbs);
	u32 to;
	if (e->kind == BK_BIO_REMAP && pd_blk_remap(r, &e->old_dev, &to, &e->old_sector) < 0)
		e->kind = BK_OTHER;
	if (e->kind == BK_SPLIT && pd_blk_split(r, &e->old_sector) < 0)
		e->kind = BK_OTHER;
	u64 nr_rq;   /* an unplug's payload is its request count, as a split's sector */
	if (e->kind == BK_UNPLUG && pd_blk_split(r, &nr_rq) == 0)
		e->nr_sector = (u32)nr_rq;
}

/* blktrace names processes in notify records, once per pid. */
struct comm16 { char s[16]; };
struct comms {
	struct u64map index;     /* pid -> index + 1 */
	VEC(struct comm16) names;
};

static void comm_note(struct comms *c, const struct pd_blk_rec *r)
{
	bool created;
	u64 *slot = u64map_slot(&c->index, r->pid, &created);
	if (created) {
		VEC_GROW(&c->names, c->names.n + 1);
		*slot = ++c->names.n;
	}
	pd_blk_comm(r, c->names.v[*slot - 1].s, sizeof(c->names.v[0].s));
}

static const char *comm_of(const struct comms *c, u32 pid)
{
	u64 *slot = u64map_get(&c->index, pid);
	return slot ? c->names.v[*slot - 1].s : NULL;
}

int bio_feed_blktrace(struct bio_tracker *bt, const char *path)
{
	struct pd_blk_reader *br = pd_blk_open(path);
	if (!br)
		return -1;
	struct comms c = { 0 };
	u64map_init(&c.index);
	struct pd_blk_rec r;
	int rc = 0;
	u64 last = 0;
	bool tick_failed = false;
	while (!bio_stopped(bt) && (rc = pd_blk_next(br, &r)) > 0) {
		if (PD_BLK_CAT(r.action) & PD_BLK_TC_NOTIFY) {
			if (PD_BLK_ACT(r.action) == PD_BLK_TN_PROCESS)
				comm_note(&c, &r);
			continue;
		}
		struct bio_ev e;
		decode(&r, &e);
		/* A capture's clock may start at 0, which means "unseen" here. */
		struct bio_who w = { .time = r.time ? r.time : 1, .pid = r.pid, .tid = r.pid,
				     .cpu = r.cpu, .seq = r.sequence,
				     .comm = comm_of(&c, r.pid) };
		if (e.kind == BK_OTHER)
			continue;
		last = MAX(last, w.time);
		if (bio_tick_until(bt, w.time) < 0) {
			rc = -1;
			tick_failed = true;
			break;
		}
		if (!bio_stopped(bt))
			bio_track(bt, &e, &w);
	}
	/* What was read before an input error is shown, as for recordings. */
	if (!tick_failed && !bio_stopped(bt) && bio_tick(bt, last, true) < 0)
		rc = -1;
	u64map_free(&c.index);
	VEC_FREE(&c.names);
	pd_blk_close(br);
	return rc < 0 ? -1 : 0;
}

/* ---- blkparse lines ------------------------------------------------------ */

static const char kind_letters[BK_MAX][3] = {
	[BK_QUEUE] = "Q", [BK_GETRQ] = "G", [BK_INSERT] = "I", [BK_ISSUE] = "D",
	[BK_COMPLETE] = "C", [BK_REQUEUE] = "R", [BK_RQ_MERGE] = "M", [BK_BACKMERGE] = "M",
	[BK_FRONTMERGE] = "F", [BK_SPLIT] = "X", [BK_BIO_REMAP] = "A", [BK_RQ_REMAP] = "A",
	[BK_ERROR] = "C", [BK_PLUG] = "P", [BK_UNPLUG] = "U",
};

void bio_blkparse_line(void *ctx, const struct bio_ev *e, const struct bio_who *w)
{
	struct bio_blkparse *bp = ctx;
	FILE *out = bp->out;
	const char *comm = w->comm && *w->comm ? w->comm : "?";
	if (!bp->base)
		bp->base = w->time;
	if ((bp->dev && e->dev != bp->dev) || !bio_event_shown(w, bp->filter))
		return;
	u64 t = w->time - bp->base;
	fprintf(out, "%3u,%-3u %2u %8u %5llu.%09llu %5u %2s %3s ", BIO_MAJOR(e->dev),
		BIO_MINOR(e->dev), w->cpu, w->seq, (unsigned long long)(t / 1000000000),
		(unsigned long long)(t % 1000000000), w->pid, kind_letters[e->kind], e->rwbs);
	switch (e->kind) {
	case BK_PLUG:
		fprintf(out, "[%s]\n", comm);
		break;
	case BK_UNPLUG:
		fprintf(out, "[%s] %u\n", comm, e->nr_sector);
		break;
	case BK_COMPLETE: case BK_ERROR:
		fprintf(out, "%llu + %u [%d]\n", (unsigned long long)e->sector, e->nr_sector,
			e->error);
		break;
	case BK_SPLIT:
		fprintf(out, "%llu / %llu [%s]\n", (unsigned long long)e->sector,
			(unsigned long long)e->old_sector, comm);
		break;
	case BK_BIO_REMAP: case BK_RQ_REMAP:
		fprintf(out, "%llu + %u <- (%u,%u) %llu\n", (unsigned long long)e->sector,
			e->nr_sector, BIO_MAJOR(e->old_dev), BIO_MINOR(e->old_dev),
			(unsigned long long)e->old_sector);
		break;
	default:
		fprintf(out, "%llu + %u [%s]\n", (unsigned long long)e->sector, e->nr_sector, comm);
		break;
	}
	if (bp->flush)
		fflush(out);
}
