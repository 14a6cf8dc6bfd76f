/* views.c - the per-I/O views of `ember bio`: log2 latency histograms
 * (like biolatency) and one line per I/O (like biosnoop -Q), plus the
 * helpers the views share (direction, device names, filters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "block/block-internal.h"

char bio_dir(const char *rwbs)
{
	for (const char *p = rwbs; *p; p++)
		if (*p == 'R' || *p == 'W' || *p == 'D')
			return *p;
	return 'N';
}

void bio_dev_name(u32 dev, char *buf, size_t size)
{
	char link[64], target[256];
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", BIO_MAJOR(dev), BIO_MINOR(dev));
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0) {
		snprintf(buf, size, "%u,%u", BIO_MAJOR(dev), BIO_MINOR(dev));
		return;
	}
	target[n] = '\0';
	const char *slash = strrchr(target, '/');
	snprintf(buf, size, "%s", slash ? slash + 1 : target);
}

/* "MAJ,MIN" or "MAJ:MIN". */
static u32 dev_numbers(const char *s)
{
	unsigned maj, min;
	char sep, end;
	if (sscanf(s, "%u%c%u%c", &maj, &sep, &min, &end) != 3 || (sep != ',' && sep != ':') ||
	    maj > 0xfff || min > 0xfffff)
		return 0;
	return maj << 20 | min;
}

u32 bio_dev_parse(const char *s)
{
	u32 dev = dev_numbers(s);
	if (dev)
		return dev;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s", strchr(s, '/') ? "" : "/dev/", s);
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode)) {
		err_set("'%s' is not a block device: give NAME (/dev/NAME) or MAJ,MIN", s);
		return 0;
	}
	return major(st.st_rdev) << 20 | minor(st.st_rdev);
}

/* I/Os belong to the task that queued them, on the CPU it queued them
 * on, at the time it did (the queue event; request allocation when no
 * queue was seen): every view and the replay's plan pick I/Os here. */
bool bio_io_shown(const struct bio_io *io, const struct bio_view_opts *o)
{
	if (o->dev && io->dev != o->dev)
		return false;
	u64 t = io->t[BT_Q] ? io->t[BT_Q] : io->t[BT_G];
	return rp_filter_pass(o->filter, io->pid, io->tid, io->comm, io->cpu, t);
}

/* Events belong to the task they ran in, as the replay's samples do. */
bool bio_event_shown(const struct bio_who *w, const struct rp_filter *f)
{
	if (!f)
		return true;
	return rp_filter_pass(f, w->pid, w->tid, w->comm, (int)w->cpu, w->time);
}

/* ---- histograms ---------------------------------------------------------- */

#define LAT_SLOTS 64

struct hist {
	u32 dev;
	char flags[8];
	u64 slot[LAT_SLOTS];
	u64 n;
};

static struct hist *hist_get(struct hist *v, size_t *n, size_t cap, u32 dev, const char *flags)
{
	for (size_t i = 0; i < *n; i++)
		if (v[i].dev == dev && !strcmp(v[i].flags, flags))
			return &v[i];
	if (*n == cap)
		return NULL;
	memset(&v[*n], 0, sizeof(v[*n]));
	v[*n].dev = dev;
	snprintf(v[*n].flags, sizeof(v[*n].flags), "%s", flags);
	return &v[(*n)++];
}

static void print_hist_title(const struct hist *h, const struct bio_view_opts *o, FILE *out)
{
	char name[64];
	bio_dev_name(h->dev, name, sizeof(name));
	if (o->per_disk && o->per_flags)
		fprintf(out, "\ndisk = %s, flags = %s\n", name, h->flags);
	else if (o->per_disk)
		fprintf(out, "\ndisk = %s\n", name);
	else if (o->per_flags)
		fprintf(out, "\nflags = %s\n", h->flags);
}

#define MAX_HISTS 1024

int bio_print_hist(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	struct hist *v = xcalloc(MAX_HISTS, sizeof(*v));
	size_t n = 0;
	u64 unit = o->millis ? 1000000 : 1000, measured = 0;
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		const struct bio_io *rq = bio_request(bt, io);
		u64 from = o->queued ? io->t[BT_Q] : rq->t[BT_D], done = bio_done_time(bt, io);
		/* D2C is the request's: count each request once. */
		if (!o->queued && io != rq)
			continue;
		if (!from || !done || done < from || (io->flags & BF_NO_QUEUE && !(io->flags & BF_SPLIT)) ||
		    !bio_io_shown(io, o))
			continue;
		struct hist *h = hist_get(v, &n, MAX_HISTS, o->per_disk ? io->dev : 0,
					  o->per_flags ? io->rwbs : "");
		if (!h)
			continue;
		h->slot[bio_log2_slot((done - from) / unit, LAT_SLOTS)]++;
		h->n++;
		measured++;
	}
	fprintf(out, "%s latency of %llu %s\n", o->queued ? "Q2C (queued to completed)" :
		"D2C (issued to completed)", (unsigned long long)measured,
		o->queued ? "I/Os" : "requests");
	for (size_t i = 0; i < n; i++) {
		print_hist_title(&v[i], o, out);
		bio_print_log2(out, o->millis ? "msecs" : "usecs", v[i].slot, LAT_SLOTS, false);
	}
	free(v);
	return ferror(out) ? (err_set("writing the histograms failed"), -1) : 0;
}

/* ---- one line per I/O ---------------------------------------------------- */

static void snoop_line(const struct bio_tracker *bt, const struct bio_io *io, u64 base,
		       const struct bio_view_opts *o, FILE *out)
{
	const struct bio_io *rq = bio_request(bt, io);
	u64 done = bio_done_time(bt, io), d = rq->t[BT_D];
	char name[64];
	bio_dev_name(io->dev, name, sizeof(name));
	double t = (double)(done - base) / 1e9;
	double que = d >= io->t[BT_Q] ? (double)(d - io->t[BT_Q]) / 1e6 : 0;
	double lat = (double)(done - d) / 1e6;
	unsigned long long bytes = (unsigned long long)io->nr_sector * 512;
	if (!o->csv) {
		fprintf(out, "%-11.6f %-14.14s %-7u %-9s %c %-10llu %-7llu %7.3f %7.3f\n", t, io->comm,
			io->pid, name, bio_dir(io->rwbs), (unsigned long long)io->sector, bytes,
			que, lat);
		return;
	}
	fprintf(out, "%.9f,%s,%u,%s,%s,%llu,%llu,%.6f,%.6f", t, io->comm, io->pid, name,
		io->rwbs, (unsigned long long)io->sector, bytes, que, lat);
	const struct bio_io *own = io == rq ? io : NULL;   /* merged: no G/I of its own */
	for (int k = BT_Q; k < BT_MAX; k++) {
		u64 v = k == BT_Q ? io->t[BT_Q] : own ? own->t[k] : k >= BT_D ? rq->t[k] : 0;
		if (v)
			fprintf(out, ",%llu", (unsigned long long)v);
		else
			fputs(",", out);
	}
	fputc('\n', out);
}

void bio_snoop_header(struct bio_snoop *sn)
{
	if (sn->started)
		return;
	sn->started = true;
	if (sn->o->csv)
		fputs("time_s,comm,pid,disk,rwbs,sector,bytes,que_ms,lat_ms,q_ns,g_ns,i_ns,d_ns,"
		      "c_ns\n", sn->out);
	else
		fprintf(sn->out, "%-11s %-14s %-7s %-9s %s %-10s %-7s %7s %7s\n", "TIME(s)", "COMM",
			"PID", "DISK", "T", "SECTOR", "BYTES", "QUE(ms)", "LAT(ms)");
	if (sn->flush)
		fflush(sn->out);
}

/* Lines come as requests complete, a request's I/Os in the order they
 * were queued, times from the first queue. */
void bio_snoop_done(void *ctx, const struct bio_tracker *bt, const struct bio_io *rq)
{
	struct bio_snoop *sn = ctx;
	if (!rq->t[BT_D])
		return;
	bio_snoop_header(sn);
	bio_served(bt, rq, &sn->served);
	for (size_t i = 0; i < sn->served.n; i++) {
		const struct bio_io *io = sn->served.v[i];
		if (io->t[BT_Q] && bio_io_shown(io, sn->o))
			snoop_line(bt, io, bio_first_queue(bt), sn->o, sn->out);
	}
	if (sn->flush)
		fflush(sn->out);
}

void bio_snoop_free(struct bio_snoop *sn)
{
	VEC_FREE(&sn->served);
}

/* ---- log2 histograms ------------------------------------------------------ */

int bio_log2_slot(u64 v, int n)
{
	int s = 0;
	while (v > 1 && s < n - 1) {
		v >>= 1;
		s++;
	}
	return s;
}

void bio_print_log2(FILE *out, const char *unit, const u64 *slot, int n, bool from_first)
{
	int first = -1, top = 0;
	u64 most = 1;
	for (int i = 0; i < n; i++)
		if (slot[i]) {
			first = first < 0 ? i : first;
			top = i;
			most = MAX(most, slot[i]);
		}
	fprintf(out, "%10s%-14s : count     distribution\n", unit, "");
	for (int i = from_first && first > 0 ? first : 0; i <= top; i++) {
		u64 lo = i ? 1ull << i : 0, hi = (1ull << (i + 1)) - 1;
		int stars = (int)(slot[i] * 40 / most);
		fprintf(out, "%10llu -> %-10llu : %-8llu |%-40.*s|\n", (unsigned long long)lo,
			(unsigned long long)hi, (unsigned long long)slot[i], stars,
			"****************************************");
	}
}
