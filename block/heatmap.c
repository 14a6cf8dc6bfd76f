/* heatmap.c - `ember bio --heatmap OUT.svg`: a latency heat map of the
 * completed I/Os: columns are time buckets, rows log2 latency buckets, and
 * a cell's colour says how many I/Os completed there with that latency. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block.h"

#define COLS 100
#define ROWS 32          /* log2 microseconds: 1 us .. ~1 hour */
#define CELL_W 9
#define CELL_H 14
#define LEFT 90
#define TOP 40

struct heat {
	u64 cell[COLS][ROWS];
	u64 first, last, most, n;
	int top_row, low_row;
};

static int row_of(u64 ns)
{
	u64 us = ns / 1000;
	int r = 0;
	while (us > 1 && r < ROWS - 1) {
		us >>= 1;
		r++;
	}
	return r;
}

/* Latency per I/O as --hist counts it: D2C per request, or Q2C per I/O. */
static bool latency(const struct bio_tracker *bt, const struct bio_io *io,
		    const struct bio_view_opts *o, u64 *done, u64 *lat)
{
	const struct bio_io *rq = bio_request(bt, io);
	u64 from = o->queued ? io->t[BT_Q] : rq->t[BT_D];
	*done = bio_done_time(bt, io);
	if ((!o->queued && io != rq) || !from || !*done || *done < from || !io->t[BT_Q] ||
	    !bio_io_shown(io, o))
		return false;
	*lat = *done - from;
	return true;
}

static void fill(struct heat *h, const struct bio_tracker *bt, const struct bio_view_opts *o)
{
	u64 done, lat;
	h->low_row = ROWS;
	for (size_t i = 0; i < bio_nios(bt); i++)
		if (latency(bt, bio_get(bt, i), o, &done, &lat)) {
			if (!h->n || done < h->first)
				h->first = done;
			h->last = MAX(h->last, done);
			h->n++;
		}
	u64 span = h->last - h->first + 1;
	for (size_t i = 0; i < bio_nios(bt); i++) {
		if (!latency(bt, bio_get(bt, i), o, &done, &lat))
			continue;
		int c = (int)((done - h->first) * COLS / span), r = row_of(lat);
		u64 v = ++h->cell[c][r];
		h->most = MAX(h->most, v);
		h->top_row = MAX(h->top_row, r);
		h->low_row = MIN(h->low_row, r);
	}
}

/* White to dark red by the cell's share of the busiest cell. */
static void colour(u64 v, u64 most, char *buf, size_t size)
{
	double f = most ? (double)v / (double)most : 0;
	int g = (int)(235 - 200 * f), b = (int)(220 - 200 * f);
	snprintf(buf, size, "rgb(250,%d,%d)", g < 0 ? 0 : g, b < 0 ? 0 : b);
}

static void write_svg(const struct heat *h, const struct bio_view_opts *o, FILE *out)
{
	int rows = h->top_row - h->low_row + 1;
	int w = LEFT + COLS * CELL_W + 20, ht = TOP + rows * CELL_H + 50;
	double secs = (double)(h->last - h->first) / 1e9;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"font-family=\"Verdana\" font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">%s latency heat map: "
		"%llu I/Os over %.3f s</text>\n", w, ht, w / 2,
		o->queued ? "Q2C" : "D2C", (unsigned long long)h->n, secs);
	char fill_c[32];
	for (int r = h->low_row; r <= h->top_row; r++) {
		int y = TOP + (h->top_row - r) * CELL_H;
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%llu us</text>\n", LEFT - 6,
			y + CELL_H - 3, (unsigned long long)(r ? 1ull << r : 0));
		for (int c = 0; c < COLS; c++) {
			u64 v = h->cell[c][r];
			if (!v)
				continue;
			colour(v, h->most, fill_c, sizeof(fill_c));
			fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
				"<title>%llu I/Os, %llu us and more, at %.3f s</title></rect>\n",
				LEFT + c * CELL_W, y, CELL_W, CELL_H, fill_c, (unsigned long long)v,
				(unsigned long long)(r ? 1ull << r : 0), secs * c / COLS);
		}
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (s, %d columns of %.3f s)"
		"</text>\n</svg>\n", LEFT + COLS * CELL_W / 2, TOP + rows * CELL_H + 30, COLS,
		secs / COLS);
}

int bio_write_heatmap(const struct bio_tracker *bt, const struct bio_view_opts *o,
		      const char *path)
{
	struct heat *h = xcalloc(1, sizeof(*h));
	fill(h, bt, o);
	if (!h->n) {
		free(h);
		err_set("no completed I/O to draw (check the filters)");
		return -1;
	}
	FILE *out = fopen(path, "w");
	if (!out) {
		free(h);
		err_set("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	write_svg(h, o, out);
	free(h);
	if (ferror(out) | (fclose(out) != 0)) {
		err_set("writing %s failed", path);
		return -1;
	}
	return 0;
}
