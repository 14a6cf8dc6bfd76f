/* btt.c - the btt-like table of `ember bio`: per device and in total,
 * the phases Q2Q..Q2C (MIN, AVG, MAX, N) counted as btt counts them (per
 * queued I/O; G2I at each insert, I2D or M2D at each issue, so again after
 * a requeue), G2D (not btt's: request allocation to issue, for requests
 * issued without an insert event), the shares of Q2C, merges, rates,
 * directions, the sequential share, and the I/Os left out and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block-internal.h"

enum { PH_Q2Q, PH_Q2G, PH_G2I, PH_G2D, PH_Q2M, PH_I2D, PH_M2D, PH_D2C, PH_Q2C, PH_MAX };
static const char *const ph_names[PH_MAX] = { "Q2Q", "Q2G", "G2I", "G2D", "Q2M",
					      "I2D", "M2D", "D2C", "Q2C" };
/* The phases a request's Q2C is made of, in the order of its life: G2I
 * and I2D with an insert, G2D without. */
static const int share_phases[] = { PH_Q2G, PH_G2I, PH_G2D, PH_I2D, PH_D2C };
enum { DIR_R, DIR_W, DIR_OTHER, DIR_MAX };

struct dev_stats {
	u32 dev;
	bool total;
	struct bio_phase ph[PH_MAX];
	u64 share[PH_MAX];          /* phase sums over requests with every stamp */
	u64 last_q, last_end;
	bool have_end;
	u64 ios[DIR_MAX], bytes[DIR_MAX];
	u64 requests, direct, merged_back, merged_front, requeued, errors;
	u64 seq, rnd;
	u64 first, last;            /* span: first queue to last completion */
	u64 unissued, open, lost, no_queue, remapped;
};

static int dir_index(const char *rwbs)
{
	char d = bio_dir(rwbs);
	return d == 'R' ? DIR_R : d == 'W' ? DIR_W : DIR_OTHER;
}

/* Why an I/O is left out of the latency figures, counted where it is. */
static bool note_unmeasured(struct dev_stats *d, const struct bio_io *io, const struct bio_io *rq)
{
	if (io->flags & BF_NO_QUEUE && !(io->flags & BF_SPLIT)) {
		d->no_queue++;
		return true;
	}
	switch (rq->state) {
	case BS_QUEUED: d->unissued++; return true;
	case BS_REQUEST:
		if (rq->t[BT_D])
			d->open++;
		else
			d->unissued++;
		return true;
	case BS_LOST: d->lost++; return true;
	case BS_REMAPPED: d->remapped++; return true;
	default: return false;
	}
}

static void add_request(struct dev_stats *d, const struct bio_io *rq)
{
	const u64 *t = rq->t;
	d->requests++;
	d->direct += !!(rq->flags & BF_DIRECT);
	d->requeued += !!rq->requeues;
	d->errors += rq->error != 0;
	if (!(t[BT_Q] && t[BT_G] && t[BT_I] && t[BT_D] && t[BT_C]))
		return;
	d->share[PH_Q2G] += t[BT_G] - t[BT_Q];
	if (rq->flags & BF_DIRECT) {
		d->share[PH_G2D] += t[BT_D] - t[BT_G];   /* its I stamp is the issue */
	} else {
		d->share[PH_G2I] += t[BT_I] - t[BT_G];
		d->share[PH_I2D] += t[BT_D] - t[BT_I];
	}
	d->share[PH_D2C] += t[BT_C] - t[BT_D];
	d->share[PH_Q2C] += t[BT_C] - t[BT_Q];
}

/* The phases of a completed I/O: from its stamps and its request's, or,
 * once it was issued again, the insert and issue phases the tracker
 * counted at each. */
static void add_phases(struct dev_stats *d, const struct bio_tracker *bt, const struct bio_io *io,
		       const struct bio_io *rq)
{
	const u64 *t = io->t;
	bio_phase_add(&d->ph[PH_Q2G], t[BT_Q], t[BT_G]);
	bio_phase_add(&d->ph[PH_Q2M], t[BT_Q], io->m_at);
	bio_phase_add(&d->ph[PH_D2C], rq->t[BT_D], rq->t[BT_C]);
	bio_phase_add(&d->ph[PH_Q2C], t[BT_Q], rq->t[BT_C]);
	if (io == rq && (io->flags & BF_DIRECT))
		bio_phase_add(&d->ph[PH_G2D], t[BT_G], t[BT_D]);
	const struct bio_again *a = bio_again_of(bt, io);
	if (a) {
		bio_phase_merge(&d->ph[PH_G2I], &a->g2i);
		bio_phase_merge(&d->ph[PH_I2D], &a->i2d);
		bio_phase_merge(&d->ph[PH_M2D], &a->m2d);
		return;
	}
	bio_phase_add(&d->ph[PH_G2I], t[BT_G], io->i_at);
	if (io->i_at)
		bio_phase_add(&d->ph[PH_I2D], io->i_at, rq->t[BT_D]);
	else
		bio_phase_add(&d->ph[PH_M2D], io->m_at, rq->t[BT_D]);
}

/* Sequential: starts where the previous queued I/O on the device ended,
 * each as queued (a split bio whole, at its own sector). */
static void add_pattern(struct dev_stats *d, const struct bio_io *io)
{
	if (d->have_end) {
		if (io->q_sector == d->last_end)
			d->seq++;
		else
			d->rnd++;
	}
	d->last_end = io->q_sector + io->q_nr_sector;
	d->have_end = true;
}

static void add_io(struct dev_stats *d, const struct bio_tracker *bt, const struct bio_io *io)
{
	const struct bio_io *rq = bio_request(bt, io);
	if (io->t[BT_Q] && !(io->flags & BF_SPLIT)) {
		bio_phase_add(&d->ph[PH_Q2Q], d->last_q, io->t[BT_Q]);
		d->last_q = io->t[BT_Q];
		add_pattern(d, io);
	}
	if (note_unmeasured(d, io, rq))
		return;
	u64 done = rq->t[BT_C];
	add_phases(d, bt, io, rq);
	int dir = dir_index(io->rwbs);
	d->ios[dir] += !(io->flags & BF_SPLIT);
	d->bytes[dir] += (u64)io->own_sector * 512;
	d->merged_back += !!(io->flags & BF_BACKMERGE);
	d->merged_front += !!(io->flags & BF_FRONTMERGE);
	if (!d->first || io->t[BT_Q] < d->first)
		d->first = io->t[BT_Q];
	if (done > d->last)
		d->last = done;
	if (io == rq)
		add_request(d, rq);
}

static struct dev_stats *dev_get(struct dev_stats *v, size_t *n, size_t cap, u32 dev)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].dev == dev)
			return &v[i];
	if (*n == cap)
		return NULL;
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].dev = dev;
	return &v[(*n)++];
}

/* ---- printing ------------------------------------------------------------ */

static void print_secs(FILE *out, u64 ns)
{
	fprintf(out, " %4llu.%09llu", (unsigned long long)(ns / 1000000000),
		(unsigned long long)(ns % 1000000000));
}

static void print_phases(const struct dev_stats *d, FILE *out)
{
	fprintf(out, "%-5s %14s %14s %14s %10s\n", "", "MIN", "AVG", "MAX", "N");
	for (int p = 0; p < PH_MAX; p++) {
		const struct bio_phase *ph = &d->ph[p];
		fprintf(out, "%-5s", ph_names[p]);
		if (!ph->n) {
			fprintf(out, " %14s %14s %14s %10d\n", "-", "-", "-", 0);
			continue;
		}
		print_secs(out, ph->min);
		print_secs(out, (ph->sum + ph->n / 2) / ph->n);   /* rounded, as btt's */
		print_secs(out, ph->max);
		fprintf(out, " %10llu\n", (unsigned long long)ph->n);
	}
}

static double pct(u64 part, u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Over the requests seen at every stamp, a share for each phase whose
 * row counted some: never one for a row of N 0. */
static void print_shares(const struct dev_stats *d, FILE *out)
{
	u64 q2c = d->share[PH_Q2C];
	fputs("share of Q2C:", out);
	bool any = false;
	for (size_t i = 0; i < sizeof(share_phases) / sizeof(share_phases[0]); i++) {
		int p = share_phases[i];
		if (!d->ph[p].n)
			continue;
		fprintf(out, "%s %s %.2f%%", any ? " " : "", ph_names[p], pct(d->share[p], q2c));
		any = true;
	}
	fputs(any ? "\n" : " - (no request seen from queue to completion)\n", out);
}

static void print_volume(const struct dev_stats *d, FILE *out)
{
	u64 ios = d->ios[DIR_R] + d->ios[DIR_W] + d->ios[DIR_OTHER];
	u64 bytes = d->bytes[DIR_R] + d->bytes[DIR_W] + d->bytes[DIR_OTHER];
	fprintf(out, "I/Os: %llu completed, %llu bytes: reads %llu (%llu bytes), writes %llu "
		"(%llu bytes), other %llu (%llu bytes)\n", (unsigned long long)ios,
		(unsigned long long)bytes, (unsigned long long)d->ios[DIR_R],
		(unsigned long long)d->bytes[DIR_R], (unsigned long long)d->ios[DIR_W],
		(unsigned long long)d->bytes[DIR_W], (unsigned long long)d->ios[DIR_OTHER],
		(unsigned long long)d->bytes[DIR_OTHER]);
	u64 merges = d->merged_back + d->merged_front;
	fprintf(out, "requests: %llu (%llu issued without an insert event, %llu requeued, "
		"%llu failed); merges: %llu back, %llu front: %.3f per queued I/O\n",
		(unsigned long long)d->requests, (unsigned long long)d->direct,
		(unsigned long long)d->requeued, (unsigned long long)d->errors,
		(unsigned long long)d->merged_back, (unsigned long long)d->merged_front,
		ios ? (double)merges / (double)ios : 0.0);
	double secs = d->last > d->first ? (double)(d->last - d->first) / 1e9 : 0;
	fprintf(out, "rate: %.1f IOPS, %.3f MB/s over %.6f s (first queue to last completion)\n",
		secs > 0 ? (double)ios / secs : 0.0, secs > 0 ? (double)bytes / 1e6 / secs : 0.0,
		secs);
	fprintf(out, "pattern: %llu sequential (%.1f%%), %llu random (%.1f%%)\n",
		(unsigned long long)d->seq, pct(d->seq, d->seq + d->rnd),
		(unsigned long long)d->rnd, pct(d->rnd, d->seq + d->rnd));
}

static void print_left_out(const struct dev_stats *d, FILE *out)
{
	fprintf(out, "left out: %llu issued but never seen completing, %llu queued but never "
		"issued, %llu superseded in flight (completion lost), %llu without a queue "
		"event (begun before), %llu remapped to another device\n",
		(unsigned long long)d->open, (unsigned long long)d->unissued,
		(unsigned long long)d->lost, (unsigned long long)d->no_queue,
		(unsigned long long)d->remapped);
}

static void print_dev(const struct dev_stats *d, FILE *out)
{
	char name[64];
	if (d->total) {
		fprintf(out, "== all devices\n");
	} else {
		bio_dev_name(d->dev, name, sizeof(name));
		fprintf(out, "== %u,%u (%s)\n", BIO_MAJOR(d->dev), BIO_MINOR(d->dev), name);
	}
	print_phases(d, out);
	print_shares(d, out);
	print_volume(d, out);
	print_left_out(d, out);
	fputc('\n', out);
}

static void print_counts(const struct bio_counts *c, FILE *out)
{
	fprintf(out, "events: %llu completions of I/Os begun before the recording (left out), "
		"%llu splits, %llu bio remaps, %llu request remaps, %llu requeues, %llu request "
		"merges, %llu failed completions\n",
		(unsigned long long)c->before, (unsigned long long)c->splits,
		(unsigned long long)c->remaps, (unsigned long long)c->rq_remaps,
		(unsigned long long)c->requeues, (unsigned long long)c->rq_merges,
		(unsigned long long)c->errors);
}

#define MAX_DEVS 256

int bio_print_btt(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	struct dev_stats *devs = xcalloc(MAX_DEVS + 1, sizeof(*devs));
	struct dev_stats *all = &devs[MAX_DEVS];
	size_t n = 0;
	all->total = true;
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (!bio_io_shown(io, o))
			continue;
		struct dev_stats *d = dev_get(devs, &n, MAX_DEVS, io->dev);
		if (d)
			add_io(d, bt, io);
		add_io(all, bt, io);
	}
	if (!n)
		fprintf(out, "no block I/O in the recording (or none passed the filters)\n");
	for (size_t i = 0; i < n; i++)
		print_dev(&devs[i], out);
	if (n > 1)
		print_dev(all, out);
	print_counts(bio_counts(bt), out);
	free(devs);
	if (ferror(out)) {
		err_set("writing the table failed");
		return -1;
	}
	return 0;
}
