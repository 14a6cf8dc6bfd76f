/* dist.c - the distribution views of `ember bio`: I/O sizes per comm
 * (like bitesize), seek distances and the sequential share per device
 * (like biopattern), and the failed requests with their errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block-internal.h"

#define DIST_SLOTS 48
#define MAX_KEYS 1024

struct dist {
	char key[20];
	u32 dev;
	u64 slot[DIST_SLOTS];
	u64 n, zero;         /* zero: exact hits (sequential, for --seek) */
	u64 last_end;
	bool have_end;
};

static struct dist *dist_get(struct dist *v, size_t *n, const char *key, u32 dev)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].dev == dev && !strcmp(v[i].key, key))
			return &v[i];
	if (*n == MAX_KEYS)
		return NULL;
	memset(&v[*n], 0, sizeof(v[*n]));
	snprintf(v[*n].key, sizeof(v[*n].key), "%s", key);
	v[*n].dev = dev;
	return &v[(*n)++];
}

/* An I/O the size and seek views count: seen queued, not the remainder of
 * a split (its head counts, with the size and sector of the whole bio as
 * queued: q_nr_sector, q_sector), and passing the filters. */
static bool queued_and_shown(const struct bio_io *io, const struct bio_view_opts *o)
{
	return io->t[BT_Q] && !(io->flags & BF_SPLIT) && bio_io_shown(io, o);
}

/* The end of a view of n distributions: a line when there were none. */
static int end_dists(struct dist *v, size_t n, FILE *out)
{
	if (!n)
		fprintf(out, "no queued I/O in the recording (or none passed the filters)\n");
	free(v);
	return ferror(out) ? (err_set("writing the histograms failed"), -1) : 0;
}

/* I/Os as queued (before merges), by the task that queued them. */
int bio_print_size(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	struct dist *v = xcalloc(MAX_KEYS, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (!queued_and_shown(io, o))
			continue;
		struct dist *d = dist_get(v, &n, io->comm[0] ? io->comm : "?", 0);
		if (!d)
			continue;
		d->slot[bio_log2_slot((u64)io->q_nr_sector * 512 / 1024, DIST_SLOTS)]++;
		d->n++;
	}
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%sProcess name = %s: %llu I/Os\n", i ? "\n" : "", v[i].key,
			(unsigned long long)v[i].n);
		bio_print_log2(out, "Kbytes", v[i].slot, DIST_SLOTS, false);
	}
	return end_dists(v, n, out);
}

/* Distance from the end of the device's previous queued I/O, in sectors. */
int bio_print_seek(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	struct dist *v = xcalloc(MAX_KEYS, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (!queued_and_shown(io, o))
			continue;
		struct dist *d = dist_get(v, &n, "", io->dev);
		if (!d)
			continue;
		if (d->have_end) {
			u64 at = io->q_sector;
			u64 dist = at > d->last_end ? at - d->last_end : d->last_end - at;
			d->slot[bio_log2_slot(dist, DIST_SLOTS)] += dist != 0;
			d->zero += dist == 0;
			d->n++;
		}
		d->last_end = io->q_sector + io->q_nr_sector;
		d->have_end = true;
	}
	for (size_t i = 0; i < n; i++) {
		char name[64];
		bio_dev_name(v[i].dev, name, sizeof(name));
		fprintf(out, "%sdisk = %s: %llu I/Os after the first, %llu sequential (%.1f%%), "
			"%llu random (%.1f%%)\n", i ? "\n" : "", name, (unsigned long long)v[i].n,
			(unsigned long long)v[i].zero,
			v[i].n ? 100.0 * (double)v[i].zero / (double)v[i].n : 0.0,
			(unsigned long long)(v[i].n - v[i].zero),
			v[i].n ? 100.0 * (double)(v[i].n - v[i].zero) / (double)v[i].n : 0.0);
		if (v[i].n > v[i].zero)
			bio_print_log2(out, "sectors", v[i].slot, DIST_SLOTS, false);
	}
	return end_dists(v, n, out);
}

int bio_print_errors(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	u64 base = 0, shown = 0;
	for (size_t i = 0; i < bio_nios(bt) && !base; i++)
		base = bio_get(bt, i)->t[BT_Q];
	fprintf(out, "%-11s %-14s %-7s %-9s %-5s %-10s %-7s %s\n", "TIME(s)", "COMM", "PID", "DISK",
		"RWBS", "SECTOR", "BYTES", "ERROR");
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (!io->error || io->state != BS_DONE || !bio_io_shown(io, o))
			continue;
		char name[64];
		bio_dev_name(io->dev, name, sizeof(name));
		u64 t = io->t[BT_C] > base ? io->t[BT_C] - base : 0;
		fprintf(out, "%-11.6f %-14.14s %-7u %-9s %-5s %-10llu %-7llu %d (%s)\n",
			(double)t / 1e9, io->comm[0] ? io->comm : "?", io->pid, name, io->rwbs,
			(unsigned long long)io->sector, (unsigned long long)io->nr_sector * 512,
			io->error, strerror(io->error < 0 ? -io->error : io->error));
		shown++;
	}
	fprintf(out, "%llu failed requests\n", (unsigned long long)shown);
	return ferror(out) ? (err_set("writing the list failed"), -1) : 0;
}
