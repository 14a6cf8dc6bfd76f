/* cmd-bio.c - `ember bio`: block I/O from 'ember record --block' or a
 * blktrace capture, read and shown by the bio library (block/): a
 * btt-like phase table (default), latency histograms, per-I/O lines,
 * size/seek/error views, biotop and blkiomon summaries, a heat map,
 * blkparse lines, or the stacks that queued the I/O (recordings made with
 * -g); the summaries per interval with --interval.  Given a target (-a,
 * -C, -- command) it records the block events while it runs (live).
 * Here: options and messages. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/block.h"
#include "cmd/cmd-bio-internal.h"
#include "live/live.h"

#define CMD "bio"

static const char synopsis[] =
	"usage: ember bio [-i FILE] [--btt | --hist | --snoop | --size | --seek | --top |\n"
	"                 --monitor | --errors | --heatmap OUT.svg | --blkparse | --stacks |\n"
	"                 --folded] [--interval SECS [--count N]] [options]\n"
	"       ember bio -a | -C CPUS | -- COMMAND [--duration SECS] [-o FILE] [view options]\n"
	"       ember bio [-i FILE | --plan PLAN] [--save-plan PLAN] [--replay DEV [-W]\n"
	"                 [-x FACTOR | -N] [-c N] [--map OLD=NEW] [-I N] [--force]]\n"
	"\n"
	"Block I/O from a recording made with 'ember record --block', or from a\n"
	"blktrace capture: classic per-CPU files (-i DEV for DEV.blktrace.N, or one\n"
	"file) or the kernel blk tracer's binary output (options/bin=1).  Each I/O is\n"
	"followed from queue (Q) through request allocation (G), insert (I), issue\n"
	"(D) to completion (C), by device and sector, through merges (a merged I/O\n"
	"completes with its request), splits, remaps and requeues.  The filters\n"
	"(--pid, --tid, --comm, --cpu, --time) pick I/Os by the task, CPU and time\n"
	"of their queue event (request allocation when none was seen), in every\n"
	"view and the replay; --blkparse lines by each event's own.  A blktrace\n"
	"capture keeps thread ids only: it takes --tid, not --pid.  '-i -' reads\n"
	"a stream as it comes\n"
	"('ember record --block -o - | ember bio --monitor -i - --interval 1'):\n"
	"--snoop and --blkparse lines come out as the events do; the first Ctrl-C\n"
	"is left to the recorder, whose stream then ends, and the view with it.\n"
	"Given a target instead (-a, -C CPUS or -- COMMAND), the view records the\n"
	"block events while it runs ('ember bio --top -a': biotop every second;\n"
	"'ember bio --monitor -a --interval 1': blkiomon), until Ctrl-C, --duration,\n"
	"--count or the command's end; -o FILE keeps the recording, and each\n"
	"interval ends with a '# live:' line of the events lost.  -p stays a filter\n"
	"of the I/Os by the process that queued them: completions run in other\n"
	"tasks' time, so the recording is of whole CPUs.\n"
	"--replay issues the recording's I/O again onto a device (btreplay), with the\n"
	"filters and -d picking which; --save-plan keeps it as a plan file (btrecord).\n"
	"\n";

static const char notes[] =
	"I/Os without a queue event (begun before the recording), issued but never\n"
	"seen completing (perf_events can lose events of idle CPUs), or superseded\n"
	"in flight are left out of the figures and counted on their own line.  The\n"
	"phases count as btt counts them: per queued I/O, G2I at each insert, I2D\n"
	"(M2D for an I/O merged in, without an insert at its sector) at each issue,\n"
	"so again when a request is requeued and issued again, and D2C from the\n"
	"last issue.  A request issued without an insert event (sent straight to\n"
	"the driver) has no G2I and no I2D: its time from request allocation to\n"
	"issue is G2D (not a btt phase), in a row and a share of its own; --snoop\n"
	"--csv gives it the issue time as its insert stamp.  The shares of Q2C\n"
	"are of the requests seen at every stamp, one for each phase whose row\n"
	"counted some.  --stacks takes an I/O's stack where it was\n"
	"queued, or where its request was allocated or issued when its queue event\n"
	"was not seen.\n"
	"With --interval an I/O counts in the interval in which its request\n"
	"completed (or was lost or remapped), so the intervals add up to the whole;\n"
	"the last one also holds the I/Os still in flight at the end.  Intervals\n"
	"are of recording time, from the first event.  --seek and Q2Q begin anew\n"
	"in each interval.\n";

/* VIEW_DEFAULT: none asked for (the btt table). */
enum view { VIEW_DEFAULT, VIEW_BTT, VIEW_HIST, VIEW_SNOOP, VIEW_BLKPARSE, VIEW_SIZE, VIEW_SEEK, VIEW_ERRORS,
	    VIEW_HEATMAP, VIEW_STACKS, VIEW_FOLDED, VIEW_TOP, VIEW_MONITOR };

struct args {
	struct rp_opts rp;
	struct bio_view_opts v;
	enum view view;
	const char *heatmap;
	struct bio_blkparse blkparse;
	struct bio_snoop snoop;
	bool stream;           /* -i - or live: lines and intervals flushed as they come */
	bool input_set;        /* -i given */
	struct live_view lv;   /* a target: record while the view runs */
	struct replay *replay; /* its replay while it runs (the live line) */
	u64 intervals;         /* printed so far */
	u64 start, last_end;   /* the first interval's start, the last's end */
	struct bio_replay *replay_args;   /* --replay, --save-plan (cmd-bio-replay.c) */
};

/* --heatmap FILE: the view and its file (one of the exclusive views). */
#define A(f) offsetof(struct args, f)

static int set_heatmap(void *field, const char *arg)
{
	struct args *a = field;
	a->heatmap = arg;
	a->view = VIEW_HEATMAP;
	return 0;
}

static int set_dev(void *field, const char *arg)
{
	struct args *a = field;
	a->v.dev = a->blkparse.dev = bio_dev_parse(arg);
	if (!a->v.dev)
		err_prefix("-d");
	return a->v.dev ? 0 : -1;
}

static int set_input(void *field, const char *arg)
{
	struct args *a = field;
	a->input_set = true;
	a->rp.input = arg;
	return 0;
}

/* --replay's options (cmd-bio-replay.c), by id. */
static int parse_one(void *ctx, int opt, const char *arg)
{
	struct args *a = ctx;
	return bio_replay_parse(&a->replay_args, opt, arg);
}

/* The summaries, which --interval prints per interval. */
static bool by_interval(enum view v)
{
	return v == VIEW_DEFAULT || v == VIEW_BTT || v == VIEW_HIST || v == VIEW_SIZE || v == VIEW_SEEK ||
	       v == VIEW_TOP || v == VIEW_MONITOR;
}

/* A target: the view runs live, -i excluded; --top then prints every
 * second unless told (biotop's default). */
static int check_live(struct args *a)
{
	bool live = live_view_target(&a->lv);
	if (live && a->input_set) {
		cmd_error(CMD, "-i and a target (-a, -C, -- command): read a file or record "
			  "live, not both");
		return EXIT_USAGE;
	}
	int rc = bio_replay_check(a->replay_args, a->input_set, live || a->view != VIEW_DEFAULT ||
			      a->lv.opts.interval > 0);
	if (rc >= 0)
		return rc;
	if (live && a->view == VIEW_TOP && !(a->lv.opts.interval > 0))
		a->lv.opts.interval = 1;
	if (a->lv.opts.interval > 0)
		a->rp.interval_ns = (u64)(a->lv.opts.interval * 1e9 + 0.5);
	return -1;
}

static int check_args(struct args *a)
{
	int rc = check_live(a);
	if (rc >= 0)
		return rc;
	if (((a->v.queued && a->view != VIEW_HEATMAP) || a->v.per_disk || a->v.per_flags ||
	     a->v.millis) && a->view != VIEW_HIST) {
		cmd_error(CMD, "-Q, -D, -F and -m shape histograms: add --hist (or -Q --heatmap)");
		return EXIT_USAGE;
	}
	if (a->v.bytes && a->view != VIEW_FOLDED) {
		cmd_error(CMD, "--bytes weighs folded stacks: add --folded");
		return EXIT_USAGE;
	}
	if (a->v.rows && a->view != VIEW_STACKS && a->view != VIEW_TOP) {
		cmd_error(CMD, "--rows is for the --stacks and --top tables: add one");
		return EXIT_USAGE;
	}
	if (a->rp.interval_ns && !by_interval(a->view)) {
		cmd_error(CMD, "--interval is for --btt, --hist, --size, --seek, --top and --monitor");
		return EXIT_USAGE;
	}
	if (a->lv.opts.count && !a->rp.interval_ns) {
		cmd_error(CMD, "--count counts intervals: add --interval SECS");
		return EXIT_USAGE;
	}
	if (a->v.csv && a->view != VIEW_SNOOP) {
		cmd_error(CMD, "--csv is for --snoop lines: add --snoop");
		return EXIT_USAGE;
	}
	if (!live_view_target(&a->lv) && bio_input_refuse(&a->rp) < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_USAGE;
	}
	return -1;
}

static const struct opt options[] = {
	OPT_CALLBACK('i', "input", OPT_ARG, 0, "FILE",
	  "data file (default ember.data; - for stdin)", set_input),
	OPT_SET(0, "btt", A(view), VIEW_BTT, 1,
	  "per device and in total: Q2Q, Q2G, G2I, G2D (getrq to\n"
	  "issue without an insert), Q2M, I2D, M2D, D2C, Q2C\n"
	  "(seconds: MIN, AVG, MAX, N), shares of Q2C,\n"
	  "merges, IOPS and MB/s, reads and writes, sequential share\n"
	  "(default)"),
	OPT_SET(0, "hist", A(view), VIEW_HIST, 1, "log2 latency histogram of D2C (per request)"),
	OPT_BOOL('Q', "queued", A(v.queued), "... of Q2C (per I/O) instead"),
	OPT_BOOL('D', "disks", A(v.per_disk), "... one per disk"),
	OPT_BOOL('F', "flags", A(v.per_flags), "... one per rwbs flags (R, W, WS, RA, FWS, ...)"),
	OPT_BOOL('m', "millis", A(v.millis), "... in milliseconds instead of microseconds"),
	OPT_SET(0, "snoop", A(view), VIEW_SNOOP, 1,
	  "one line per completed I/O, as its request completes:\n"
	  "TIME(s) (of completion, from the first queue), COMM, PID,\n"
	  "DISK, T, SECTOR, BYTES, QUE(ms) (queue to issue),\n"
	  "LAT(ms) (issue to completion)"),
	OPT_BOOL(0, "csv", A(v.csv), "--snoop as CSV, with each stamp in ns (q,g,i,d,c)"),
	OPT_SET(0, "blkparse", A(view), VIEW_BLKPARSE, 1,
	  "one line per event in blkparse's default layout"),
	OPT_SET(0, "size", A(view), VIEW_SIZE, 1,
	  "I/O size histograms (KiB) per command name, each bio\n"
	  "as queued: before merges, and whole when it was split"),
	OPT_SET(0, "seek", A(view), VIEW_SEEK, 1,
	  "per device: seek distances (sectors from the previous\n"
	  "queued bio's end, each bio as queued, whole when split)\n"
	  "and the sequential share (btt's pattern line too)"),
	OPT_SET(0, "top", A(view), VIEW_TOP, 1,
	  "biotop: per process, direction and disk, the I/Os it\n"
	  "queued that completed: PID COMM D MAJ MIN DISK I/O\n"
	  "Kbytes (as queued) AVGms (D2C), by Kbytes; the top 20"),
	OPT_SET(0, "monitor", A(view), VIEW_MONITOR, 1,
	  "blkiomon: per device, the completed requests: sizes\n"
	  "and D2C (N, MIN, AVG, MAX) of reads and of writes, log2\n"
	  "histograms of both, counts"),
	OPT_SET(0, "errors", A(view), VIEW_ERRORS, 1, "failed requests with their error"),
	OPT_XCALLBACK(1, 0, "heatmap", OPT_ARG, 0, "FILE",
	  "an SVG latency heat map: time across, log2 latency up,\n"
	  "colour the count (D2C; Q2C with -Q)", set_heatmap),
	OPT_SET(0, "stacks", A(view), VIEW_STACKS, 1,
	  "who caused the I/O: the stacks of the tasks that queued\n"
	  "it (user and kernel, from 'ember record --block -g'),\n"
	  "by I/O count and bytes, the top 20"),
	OPT_INT(0, "rows", A(v.rows), "N", "with --stacks or --top: the top N rows instead",
		1, INT_MAX, "--rows '%s': give a count of rows, 1 or more"),
	OPT_SET(0, "folded", A(view), VIEW_FOLDED, 1,
	  "the same as folded lines for 'ember flame --folded':\n"
	  "COMM;ROOT;...;LEAF COUNT (with --bytes: bytes)"),
	OPT_BOOL(0, "bytes", A(v.bytes), "with --folded: count bytes, not I/Os"),
	OPT_INCLUDE_AT(live_interval_opts, A(lv.opts)),
	OPT_CALLBACK('d', "device", OPT_ARG, 0, "DEV",
	  "only this device's I/Os and events (NAME, /dev/NAME\n"
	  "or MAJ,MIN)", set_dev),
	OPT_INCLUDE_AT(rp_short_pid_opts, A(rp)),
	OPT_INCLUDE_AT(rp_view_opts, A(rp)),
	OPT_INCLUDE_AT(live_system_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_keep_opts, A(lv.opts)),
	OPT_INCLUDE(bio_replay_opts),
	OPT_END,
};

const struct opt_cmd bio_cmd = {
	.name = CMD,
	.summary = "block I/O phases, latency histograms, per-I/O lines, biotop, blkiomon",
	.synopsis = synopsis,
	.opts = options,
	.notes = notes,
	.one = parse_one,
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct args *a, int argc, char **argv)
{
	int rc = live_view_parse(&a->lv, opt_parse(&bio_cmd, argc, argv, a), argc, argv);
	return rc >= 0 ? rc : check_args(a);
}

/* ---- the run ------------------------------------------------------------- */

static bool wants_stacks(const struct args *a)
{
	return a->view == VIEW_STACKS || a->view == VIEW_FOLDED;
}

static int show(const struct args *a, const struct bio_tracker *bt)
{
	int rc;
	switch (a->view) {
	case VIEW_HIST: rc = bio_print_hist(bt, &a->v, stdout); break;
	case VIEW_SNOOP: rc = 0; break;      /* printed as the I/Os completed */
	case VIEW_BLKPARSE: rc = 0; break;   /* printed as the events passed */
	case VIEW_SIZE: rc = bio_print_size(bt, &a->v, stdout); break;
	case VIEW_SEEK: rc = bio_print_seek(bt, &a->v, stdout); break;
	case VIEW_TOP: rc = bio_print_top(bt, &a->v, stdout); break;
	case VIEW_MONITOR: rc = bio_print_monitor(bt, &a->v, stdout); break;
	case VIEW_ERRORS: rc = bio_print_errors(bt, &a->v, stdout); break;
	case VIEW_HEATMAP: rc = bio_write_heatmap(bt, &a->v, a->heatmap); break;
	case VIEW_STACKS: rc = bio_print_stacks(bt, &a->v, stdout); break;
	case VIEW_FOLDED: rc = bio_print_folded(bt, &a->v, stdout); break;
	default: rc = bio_print_btt(bt, &a->v, stdout); break;
	}
	return rc;
}

/* One interval: a line naming it (seconds from the first interval's
 * start), then the view of the I/Os it ended. */
static int on_interval(void *ctx, const struct bio_tracker *bt, u64 end, bool last)
{
	struct args *a = ctx;
	if (!a->intervals)
		a->start = a->last_end = end - MIN(end, a->rp.interval_ns);
	u64 from = a->last_end - a->start, to = MAX(end, a->last_end) - a->start;
	a->intervals++;
	printf("%s# interval %llu: %llu.%06llu - %llu.%06llu s\n", a->intervals > 1 ? "\n" : "",
	       (unsigned long long)a->intervals, (unsigned long long)(from / 1000000000),
	       (unsigned long long)(from % 1000000000 / 1000), (unsigned long long)(to / 1000000000),
	       (unsigned long long)(to % 1000000000 / 1000));
	a->last_end = MAX(end, a->last_end);
	if (show(a, bt) < 0)
		return -1;
	if (a->lv.live && a->replay)
		live_print_counts(stdout, a->lv.live, rp_summary(a->replay));
	fflush(stdout);
	if (last || !a->lv.opts.count || a->intervals < a->lv.opts.count)
		return 0;
	if (a->lv.live)
		live_stop(a->lv.live);
	return 1;
}

/* What is printed as the input is read: lines, or intervals. */
static void as_it_comes(struct args *a, struct bio_load_opts *lo)
{
	a->stream = a->lv.live || !strcmp(a->rp.input, "-");
	a->blkparse.out = stdout;
	a->blkparse.filter = &a->rp.filter;
	a->blkparse.flush = a->stream;
	if (a->view == VIEW_BLKPARSE)
		lo->blkparse = &a->blkparse;
	if (a->view == VIEW_SNOOP) {
		a->snoop = (struct bio_snoop){ .o = &a->v, .out = stdout, .flush = a->stream };
		lo->done = bio_snoop_done;
		lo->done_ctx = &a->snoop;
		lo->forget = true;
	}
	if (a->rp.interval_ns) {
		lo->interval = on_interval;
		lo->interval_ctx = a;
	}
}

/* The library reads the input; the warnings and errors are said here. */
static int load(struct args *a, struct bio_data *d)
{
	a->v.filter = &a->rp.filter;
	struct bio_load_opts lo = { .rp = &a->rp, .stacks = wants_stacks(a),
				    .replay = a->lv.live ? &a->replay : NULL };
	as_it_comes(a, &lo);
	int rc = bio_load(d, &lo);
	if (d->warning[0])
		cmd_warn(CMD, "%s", d->warning);
	if (rc < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	if (!d->replayed) {
		rp_warn_empty_intervals(CMD, &d->summary);
		return EXIT_OK;
	}
	rp_warn_view(CMD, &d->summary, a->rp.input, "some I/Os are left out");
	return d->summary.input_error ? EXIT_RUNTIME : EXIT_OK;
}

static void ignore_once(int sig)
{
	(void)sig;
}

/* Read from a pipe, the first Ctrl-C is for the recorder writing it: that
 * one ends its stream, and the view ends with it, the last interval
 * printed.  A second Ctrl-C (the handler reset) stops the view at once. */
static void end_with_the_stream(const struct args *a)
{
	if (a->lv.live || strcmp(a->rp.input, "-"))
		return;
	struct sigaction sa = { .sa_handler = ignore_once, .sa_flags = SA_RESETHAND | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/* The recording of the block events (of -d's device only) when a target
 * is given, the replay reading its stream.  -1 to go on, or the exit
 * status after saying why not. */
static int start(struct args *a)
{
	if (a->v.dev) {
		a->lv.opts.devs = &a->v.dev;
		a->lv.opts.ndevs = 1;
	}
	a->lv.opts.callgraph = wants_stacks(a) ? REC_CG_ONLINE : REC_CG_NONE;
	return live_view_start(&a->lv, REC_LIVE_BLOCK);
}

static int free_args(struct args *a, int rc)
{
	rc = live_view_end(&a->lv, rc);
	rp_opts_free(&a->rp);
	bio_replay_free(a->replay_args);
	return rc;
}

int cmd_bio(int argc, char **argv)
{
	struct args a = { .lv = { .cmd = CMD, .help = CMD, .rp = &a.rp } };
	rp_opts_init(&a.rp);
	int rc = parse_args(&a, argc, argv);
	if (rc < 0)
		rc = start(&a);
	if (rc < 0 && a.replay_args)
		rc = bio_replay_cmd(a.replay_args, &a.rp, &a.v);
	if (rc >= 0)
		return free_args(&a, rc);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	end_with_the_stream(&a);
	struct bio_data d = { 0 };
	rc = load(&a, &d);
	if (a.view == VIEW_SNOOP && rc == EXIT_OK)
		bio_snoop_header(&a.snoop);   /* when no line came */
	/* With intervals, the last one printed what was left. */
	if (d.bt && !a.rp.interval_ns && (rc == EXIT_OK || bio_nios(d.bt)) && show(&a, d.bt) < 0) {
		cmd_error(CMD, "%s", err_msg());
		rc = EXIT_RUNTIME;
	}
	if (a.lv.live && !a.rp.interval_ns && d.replayed)
		live_print_counts(stdout, a.lv.live, &d.summary);
	fflush(stdout);
	rc = free_args(&a, rc);
	bio_snoop_free(&a.snoop);
	bio_data_free(&d);
	return rc;
}
