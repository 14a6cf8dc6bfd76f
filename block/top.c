/* top.c - biotop's table (`ember bio --top`): per process, direction and
 * disk, the I/Os it queued that completed, their Kbytes (as queued, before
 * merges) and the average D2C of the requests that served them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block-internal.h"

struct top_row {
	u32 pid, dev;
	char dir;
	char comm[16];
	u64 ios, bytes;
	u64 d2c_sum, d2c_n;
};

typedef VEC(struct top_row) top_rows;

/* pid < 2^22, minor < 2^20, major < 2^12, a direction: 56 bits. */
static u64 row_key(const struct bio_io *io, char dir)
{
	u64 d = dir == 'R' ? 0 : dir == 'W' ? 1 : dir == 'D' ? 2 : 3;
	return (u64)io->pid | (u64)BIO_MINOR(io->dev) << 22 | (u64)BIO_MAJOR(io->dev) << 42 |
	       d << 54;
}

static struct top_row *row_of(top_rows *rows, struct u64map *index, const struct bio_io *io)
{
	char dir = bio_dir(io->rwbs);
	bool created;
	u64 *slot = u64map_slot(index, row_key(io, dir), &created);
	if (created) {
		struct top_row r = { .pid = io->pid, .dev = io->dev, .dir = dir };
		snprintf(r.comm, sizeof(r.comm), "%s", io->comm[0] ? io->comm : "?");
		VEC_PUSH(rows, r);
		*slot = rows->n;
	}
	return &rows->v[*slot - 1];
}

static void add_io(struct top_row *r, const struct bio_io *io, const struct bio_io *rq)
{
	r->ios += !(io->flags & BF_SPLIT);   /* a split's remainder is the same I/O */
	r->bytes += (u64)io->own_sector * 512;
	if (rq->t[BT_D] && rq->t[BT_C] >= rq->t[BT_D]) {
		r->d2c_sum += rq->t[BT_C] - rq->t[BT_D];
		r->d2c_n++;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->ios != y->ios)
		return x->ios > y->ios ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void print_row(const struct top_row *r, FILE *out)
{
	char name[64];
	bio_dev_name(r->dev, name, sizeof(name));
	double avg = r->d2c_n ? (double)r->d2c_sum / (double)r->d2c_n / 1e6 : 0.0;
	fprintf(out, "%-7u %-16s %c %3u %3u %-10s %6llu %8llu %8.2f\n", r->pid, r->comm, r->dir,
		BIO_MAJOR(r->dev), BIO_MINOR(r->dev), name, (unsigned long long)r->ios,
		(unsigned long long)(r->bytes / 1024), avg);
}

int bio_print_top(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	top_rows rows = { 0 };
	struct u64map index;
	u64map_init(&index);
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		const struct bio_io *rq = bio_request(bt, io);
		if (rq->state == BS_DONE && bio_io_shown(io, o))
			add_io(row_of(&rows, &index, io), io, rq);
	}
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), cmp_rows);
	size_t shown = MIN(rows.n, (size_t)(o->rows ? o->rows : 20));
	fprintf(out, "%-7s %-16s %s %3s %3s %-10s %6s %8s %8s\n", "PID", "COMM", "D", "MAJ", "MIN",
		"DISK", "I/O", "Kbytes", "AVGms");
	for (size_t i = 0; i < shown; i++)
		print_row(&rows.v[i], out);
	if (rows.n > shown)
		fprintf(out, "(%zu more rows: --rows N shows more)\n", rows.n - shown);
	VEC_FREE(&rows);
	u64map_free(&index);
	return ferror(out) ? (err_set("writing the table failed"), -1) : 0;
}
