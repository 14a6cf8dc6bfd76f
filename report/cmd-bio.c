/* cmd-bio.c - `ember bio`: block I/O from 'ember record --block' or a
 * blktrace capture, read and shown by the bio library (report/bio/): a
 * btt-like phase table (default), latency histograms, per-I/O lines,
 * size/seek/error views, a heat map, blkparse lines, or the stacks that
 * queued the I/O (recordings made with -g).  Here: options and messages. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/bio/bio.h"
#include "report/report.h"

#define CMD "bio"

static const char synopsis[] =
	"usage: ember bio [-i FILE] [--btt | --hist | --snoop | --size | --seek | --errors |\n"
	"                 --heatmap OUT.svg | --blkparse | --stacks | --folded] [options]\n"
	"\n"
	"Block I/O from a recording made with 'ember record --block', or from a\n"
	"blktrace capture: classic per-CPU files (-i DEV for DEV.blktrace.N, or one\n"
	"file) or the kernel blk tracer's binary output (options/bin=1).  Each I/O is\n"
	"followed from queue (Q) through request allocation (G), insert (I), issue\n"
	"(D) to completion (C), by device and sector, through merges (a merged I/O\n"
	"completes with its request), splits, remaps and requeues.  The filters\n"
	"pick I/Os by the task and time of their queue event.\n"
	"\n";

static const char notes[] =
	"I/Os without a queue event (begun before the recording), issued but never\n"
	"seen completing (perf_events can lose events of idle CPUs), or superseded\n"
	"in flight are left out of the figures and counted on their own line.  An\n"
	"issue without an insert event (requests sent straight to the driver) counts\n"
	"as inserted at issue: G2I holds that time and I2D is 0.  --stacks takes an\n"
	"I/O's stack where it was queued, or where its request was allocated or\n"
	"issued when its queue event was not seen.\n";

enum { OPT_BTT = 0x4000, OPT_HIST, OPT_SNOOP, OPT_CSV, OPT_BLKPARSE, OPT_SIZE, OPT_SEEK,
       OPT_ERRORS, OPT_HEATMAP, OPT_STACKS, OPT_FOLDED, OPT_BYTES, OPT_TOP };
enum view { VIEW_BTT, VIEW_HIST, VIEW_SNOOP, VIEW_BLKPARSE, VIEW_SIZE, VIEW_SEEK, VIEW_ERRORS,
	    VIEW_HEATMAP, VIEW_STACKS, VIEW_FOLDED };

struct args {
	struct rp_opts rp;
	struct bio_view_opts v;
	enum view view;
	bool view_set;
	const char *heatmap;
	struct bio_blkparse blkparse;
};

static int set_view(struct args *a, enum view v)
{
	if (a->view_set && a->view != v) {
		err_set("--btt, --hist, --snoop, --blkparse, --size, --seek, --errors, --heatmap, "
			"--stacks and --folded exclude each other: pick one");
		return -1;
	}
	a->view = v;
	a->view_set = true;
	return 1;
}

/* 1 handled, 0 not ours, -1 err_set. */
static int parse_one(void *ctx, int opt, const char *arg)
{
	struct args *a = ctx;
	switch (opt) {
	case OPT_BTT: return set_view(a, VIEW_BTT);
	case OPT_HIST: return set_view(a, VIEW_HIST);
	case OPT_SNOOP: return set_view(a, VIEW_SNOOP);
	case OPT_BLKPARSE: return set_view(a, VIEW_BLKPARSE);
	case OPT_SIZE: return set_view(a, VIEW_SIZE);
	case OPT_SEEK: return set_view(a, VIEW_SEEK);
	case OPT_ERRORS: return set_view(a, VIEW_ERRORS);
	case OPT_HEATMAP: a->heatmap = arg; return set_view(a, VIEW_HEATMAP);
	case OPT_STACKS: return set_view(a, VIEW_STACKS);
	case OPT_FOLDED: return set_view(a, VIEW_FOLDED);
	case OPT_BYTES: a->v.bytes = true; return 1;
	case OPT_TOP:
		if (parse_int(arg, &a->v.top) < 0 || a->v.top < 1) {
			err_set("--top '%s': give a count of stacks, 1 or more", arg);
			return -1;
		}
		return 1;
	case OPT_CSV: a->v.csv = true; return 1;
	case 'Q': a->v.queued = true; return 1;
	case 'D': a->v.per_disk = true; return 1;
	case 'F': a->v.per_flags = true; return 1;
	case 'm': a->v.millis = true; return 1;
	default: return rp_parse_filter_opt(&a->rp, opt, arg);
	}
}

static int check_args(struct args *a, int argc, char **argv)
{
	if (optind < argc) {
		return cmd_extra_argument(CMD, "bio", argv[optind]);
	}
	if (((a->v.queued && a->view != VIEW_HEATMAP) || a->v.per_disk || a->v.per_flags ||
	     a->v.millis) && a->view != VIEW_HIST) {
		cmd_error(CMD, "-Q, -D, -F and -m shape histograms: add --hist (or -Q --heatmap)");
		return EXIT_USAGE;
	}
	if (a->v.bytes && a->view != VIEW_FOLDED) {
		cmd_error(CMD, "--bytes weighs folded stacks: add --folded");
		return EXIT_USAGE;
	}
	if (a->v.top && a->view != VIEW_STACKS) {
		cmd_error(CMD, "--top is for the --stacks table: add --stacks");
		return EXIT_USAGE;
	}
	if (a->v.csv && a->view != VIEW_SNOOP) {
		cmd_error(CMD, "--csv is for --snoop lines: add --snoop");
		return EXIT_USAGE;
	}
	return -1;
}

static const struct opt options[] = {
	OPT_INCLUDE(rp_input_opts),
	OPT(OPT_BTT, 0, "btt", OPT_NO_ARG, NULL,
	  "per device and in total: Q2Q, Q2G, G2I, I2D, D2C, Q2C\n"
	  "(seconds: MIN, AVG, MAX, N), shares of Q2C, merges,\n"
	  "IOPS and MB/s, reads and writes, sequential share (default)"),
	OPT(OPT_HIST, 0, "hist", OPT_NO_ARG, NULL, "log2 latency histogram of D2C (per request)"),
	OPT('Q', 'Q', "queued", OPT_NO_ARG, NULL, "... of Q2C (per I/O) instead"),
	OPT('D', 'D', "disks", OPT_NO_ARG, NULL, "... one per disk"),
	OPT('F', 'F', "flags", OPT_NO_ARG, NULL, "... one per rwbs flags (R, W, WS, RA, FWS, ...)"),
	OPT('m', 'm', "millis", OPT_NO_ARG, NULL, "... in milliseconds instead of microseconds"),
	OPT(OPT_SNOOP, 0, "snoop", OPT_NO_ARG, NULL,
	  "one line per completed I/O: TIME(s) (of completion, from\n"
	  "the first queue), COMM, PID, DISK, T, SECTOR, BYTES,\n"
	  "QUE(ms) (queue to issue), LAT(ms) (issue to completion)"),
	OPT(OPT_CSV, 0, "csv", OPT_NO_ARG, NULL, "--snoop as CSV, with each stamp in ns (q,g,i,d,c)"),
	OPT(OPT_BLKPARSE, 0, "blkparse", OPT_NO_ARG, NULL,
	  "one line per event in blkparse's default layout"),
	OPT(OPT_SIZE, 0, "size", OPT_NO_ARG, NULL,
	  "I/O size histograms (KiB, as queued) per command name"),
	OPT(OPT_SEEK, 0, "seek", OPT_NO_ARG, NULL,
	  "per device: seek distances (sectors from the previous\n"
	  "queued I/O's end) and the sequential share"),
	OPT(OPT_ERRORS, 0, "errors", OPT_NO_ARG, NULL, "failed requests with their error"),
	OPT(OPT_HEATMAP, 0, "heatmap", OPT_ARG, "FILE",
	  "an SVG latency heat map: time across, log2 latency up,\n"
	  "colour the count (D2C; Q2C with -Q)"),
	OPT(OPT_STACKS, 0, "stacks", OPT_NO_ARG, NULL,
	  "who caused the I/O: the stacks of the tasks that queued\n"
	  "it (user and kernel, from 'ember record --block -g'),\n"
	  "by I/O count and bytes, the top 20"),
	OPT(OPT_TOP, 0, "top", OPT_ARG, "N", "with --stacks: the top N instead"),
	OPT(OPT_FOLDED, 0, "folded", OPT_NO_ARG, NULL,
	  "the same as folded lines for 'ember flame --folded':\n"
	  "COMM;ROOT;...;LEAF COUNT (with --bytes: bytes)"),
	OPT(OPT_BYTES, 0, "bytes", OPT_NO_ARG, NULL, "with --folded: count bytes, not I/Os"),
	OPT_INCLUDE(rp_short_pid_opts),
	OPT_INCLUDE(rp_view_opts),
	OPT_END,
};

const struct opt_cmd bio_cmd = {
	.name = CMD,
	.summary = "block I/O phases, latency histograms and per-I/O lines",
	.synopsis = synopsis,
	.opts = options,
	.notes = notes,
	.one = parse_one,
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct args *a, int argc, char **argv)
{
	int rc = opt_parse(&bio_cmd, argc, argv, a);
	return rc >= 0 ? rc : check_args(a, argc, argv);
}

/* ---- the run ------------------------------------------------------------- */

static bool wants_stacks(const struct args *a)
{
	return a->view == VIEW_STACKS || a->view == VIEW_FOLDED;
}

/* The library reads the input; the warnings and errors are said here. */
static int load(struct args *a, struct bio_data *d)
{
	a->v.filter = &a->rp.filter;
	a->blkparse.out = stdout;
	struct bio_load_opts lo = { .rp = &a->rp, .stacks = wants_stacks(a),
				    .blkparse = a->view == VIEW_BLKPARSE ? &a->blkparse : NULL };
	int rc = bio_load(d, &lo);
	if (d->warning[0])
		cmd_warn(CMD, "%s", d->warning);
	if (rc < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	if (!d->replayed)
		return EXIT_OK;
	rp_warn_view(CMD, &d->summary, a->rp.input, "some I/Os are left out");
	return d->summary.input_error ? EXIT_RUNTIME : EXIT_OK;
}

static int show(const struct args *a, const struct bio_tracker *bt)
{
	int rc;
	switch (a->view) {
	case VIEW_HIST: rc = bio_print_hist(bt, &a->v, stdout); break;
	case VIEW_SNOOP: rc = bio_print_snoop(bt, &a->v, stdout); break;
	case VIEW_BLKPARSE: rc = 0; break;   /* printed as the events passed */
	case VIEW_SIZE: rc = bio_print_size(bt, &a->v, stdout); break;
	case VIEW_SEEK: rc = bio_print_seek(bt, &a->v, stdout); break;
	case VIEW_ERRORS: rc = bio_print_errors(bt, &a->v, stdout); break;
	case VIEW_HEATMAP: rc = bio_write_heatmap(bt, &a->v, a->heatmap); break;
	case VIEW_STACKS: rc = bio_print_stacks(bt, &a->v, stdout); break;
	case VIEW_FOLDED: rc = bio_print_folded(bt, &a->v, stdout); break;
	default: rc = bio_print_btt(bt, &a->v, stdout); break;
	}
	if (rc < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int cmd_bio(int argc, char **argv)
{
	struct args a = { 0 };
	rp_opts_init(&a.rp);
	int rc = parse_args(&a, argc, argv);
	if (rc >= 0) {
		rp_opts_free(&a.rp);
		return rc;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	rp_progress_if_tty(&a.rp);
	struct bio_data d = { 0 };
	rc = load(&a, &d);
	if (d.bt && (rc == EXIT_OK || bio_nios(d.bt))) {
		int src = show(&a, d.bt);
		if (rc == EXIT_OK)
			rc = src;
	}
	fflush(stdout);
	bio_data_free(&d);
	rp_opts_free(&a.rp);
	return rc;
}
