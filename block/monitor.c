/* monitor.c - blkiomon's summary (`ember bio --monitor`): per device, the
 * requests that completed: sizes and D2C (MIN, AVG, MAX) for reads and
 * writes, log2 histograms of both, and the counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block-internal.h"

#define MON_SLOTS 48
#define MAX_DEVS 256
enum { MON_R, MON_W, MON_DIRS };

struct mon_stat { u64 n, min, max, sum; };

struct mon_dev {
	u32 dev;
	struct mon_stat size[MON_DIRS], d2c[MON_DIRS];   /* bytes, ns */
	u64 size_slot[MON_SLOTS], d2c_slot[MON_SLOTS];   /* bytes, usecs */
	u64 done[MON_DIRS + 1];                          /* R, W, other */
	u64 merged, failed, open, lost;
};

static void stat_add(struct mon_stat *s, u64 v)
{
	if (!s->n || v < s->min)
		s->min = v;
	s->max = MAX(s->max, v);
	s->sum += v;
	s->n++;
}

static struct mon_dev *dev_get(struct mon_dev *v, size_t *n, u32 dev)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].dev == dev)
			return &v[i];
	if (*n == MAX_DEVS)
		return NULL;
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].dev = dev;
	return &v[(*n)++];
}

/* A request's size is what was queued into it: its own and its merged I/Os'. */
static u64 request_bytes(const struct bio_tracker *bt, const struct bio_io *rq, bio_io_list *l)
{
	bio_served(bt, rq, l);
	u64 sectors = 0;
	for (size_t i = 0; i < l->n; i++)
		sectors += l->v[i]->own_sector;
	return sectors * 512;
}

static void add_done(struct mon_dev *d, const struct bio_tracker *bt, const struct bio_io *rq,
		     bio_io_list *l)
{
	char c = bio_dir(rq->rwbs);
	int dir = c == 'R' ? MON_R : c == 'W' ? MON_W : MON_DIRS;
	d->done[dir]++;
	d->failed += rq->error != 0;
	u64 bytes = request_bytes(bt, rq, l);
	d->merged += l->n - 1;
	if (dir == MON_DIRS)
		return;          /* flushes, discards: counted, not measured */
	u64 d2c = rq->t[BT_C] - rq->t[BT_D];
	stat_add(&d->size[dir], bytes);
	stat_add(&d->d2c[dir], d2c);
	d->size_slot[bio_log2_slot(bytes, MON_SLOTS)]++;
	d->d2c_slot[bio_log2_slot(d2c / 1000, MON_SLOTS)]++;
}

static void add_request(struct mon_dev *d, const struct bio_tracker *bt, const struct bio_io *rq,
			bio_io_list *l)
{
	if (rq->state == BS_DONE && rq->t[BT_D] && rq->t[BT_C] >= rq->t[BT_D])
		add_done(d, bt, rq, l);
	else if (rq->state == BS_REQUEST && rq->t[BT_D])
		d->open++;
	else if (rq->state == BS_LOST && rq->t[BT_D])
		d->lost++;
}

static void print_stat(FILE *out, const char *name, const struct mon_stat *s, double unit,
		       const char *fmt)
{
	fprintf(out, "%-9s %8llu", name, (unsigned long long)s->n);
	if (!s->n) {
		fprintf(out, " %14s %14s %14s\n", "-", "-", "-");
		return;
	}
	fprintf(out, " ");
	fprintf(out, fmt, (double)s->min / unit);
	fprintf(out, " ");
	fprintf(out, fmt, (double)s->sum / (double)s->n / unit);
	fprintf(out, " ");
	fprintf(out, fmt, (double)s->max / unit);
	fputc('\n', out);
}

static void print_dev(const struct mon_dev *d, FILE *out)
{
	char name[64];
	bio_dev_name(d->dev, name, sizeof(name));
	fprintf(out, "== %u,%u (%s)\n", BIO_MAJOR(d->dev), BIO_MINOR(d->dev), name);
	fprintf(out, "requests: %llu completed: %llu reads, %llu writes, %llu other; %llu I/Os "
		"merged into them; %llu failed\n",
		(unsigned long long)(d->done[MON_R] + d->done[MON_W] + d->done[MON_DIRS]),
		(unsigned long long)d->done[MON_R], (unsigned long long)d->done[MON_W],
		(unsigned long long)d->done[MON_DIRS], (unsigned long long)d->merged,
		(unsigned long long)d->failed);
	fprintf(out, "left out: %llu issued but not seen completing, %llu superseded in flight\n",
		(unsigned long long)d->open, (unsigned long long)d->lost);
	fprintf(out, "%-9s %8s %14s %14s %14s\n", "", "N", "MIN", "AVG", "MAX");
	print_stat(out, "R bytes", &d->size[MON_R], 1, "%14.1f");
	print_stat(out, "W bytes", &d->size[MON_W], 1, "%14.1f");
	print_stat(out, "R D2C(us)", &d->d2c[MON_R], 1e3, "%14.3f");
	print_stat(out, "W D2C(us)", &d->d2c[MON_W], 1e3, "%14.3f");
	fprintf(out, "request sizes, reads and writes:\n");
	bio_print_log2(out, "bytes", d->size_slot, MON_SLOTS, true);
	fprintf(out, "D2C, reads and writes:\n");
	bio_print_log2(out, "usecs", d->d2c_slot, MON_SLOTS, false);
}

int bio_print_monitor(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	struct mon_dev *devs = xcalloc(MAX_DEVS, sizeof(*devs));
	bio_io_list served = { 0 };
	size_t n = 0;
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (io->state == BS_MERGED || io->state == BS_QUEUED || !bio_io_shown(io, o))
			continue;
		struct mon_dev *d = dev_get(devs, &n, io->dev);
		if (d)
			add_request(d, bt, io, &served);
	}
	if (!n)
		fprintf(out, "no block requests (or none passed the filters)\n");
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\n', out);
		print_dev(&devs[i], out);
	}
	VEC_FREE(&served);
	free(devs);
	return ferror(out) ? (err_set("writing the summary failed"), -1) : 0;
}
