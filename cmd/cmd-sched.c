/* cmd-sched.c - `ember sched lat`: run-queue latency from a recording
 * with sched_switch and sched_wakeup (e.g. 'ember record --off-cpu -a'),
 * as log2 histograms like runqlat's. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "live/live.h"
#include "views/sched/sched.h"

#define CMD "sched"

/* sched lat's own options and the shared filters (-p is --pid). */
struct args {
	struct rp_opts rp;
	struct schedlat_opts o;
	struct live_opts live;
};

#define A(f) offsetof(struct args, f)

static int parse_waits(void *field, const char *arg)
{
	struct schedlat_opts *o = field;
	if (!strcmp(arg, "all"))
		o->no_wakeups = o->no_preemptions = false;
	else if (!strcmp(arg, "wakeup"))
		o->no_preemptions = !(o->no_wakeups = false);
	else if (!strcmp(arg, "preempt"))
		o->no_wakeups = !(o->no_preemptions = false);
	else {
		err_set("bad --waits '%s' (all, wakeup or preempt)", arg);
		return -1;
	}
	return 0;
}

static int sched_lat(int argc, char **argv);

static const struct opt options[] = {
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_BOOL(0, "per-comm", A(o.per_comm), "a histogram per command name"),
	OPT_BOOL(0, "per-pid", A(o.per_pid), "a histogram per process"),
	OPT_CALLBACK(0, "waits", OPT_ARG, A(o), "KIND",
	  "all (default), wakeup (from a wakeup only) or preempt\n"
	  "(from a switch-out still runnable only)", parse_waits),
	OPT_INCLUDE_AT(rp_short_pid_opts, A(rp)),
	OPT_INCLUDE_AT(rp_view_opts, A(rp)),
	OPT_INCLUDE_AT(live_target_opts, A(live)),
	OPT_INCLUDE_AT(live_interval_opts, A(live)),
	OPT_END,
};

const struct opt_cmd sched_cmd = {
	.name = CMD,
	.summary = "run-queue latency histograms, like runqlat",
	.synopsis =
	"usage: ember sched lat [-i FILE] [--per-comm | --per-pid] [--waits KIND] [filters]\n"
	"       ember sched lat -a|-C CPUS|-t TIDS [--interval SECS [--count N]] [filters]\n"
	"\n"
	"Run-queue latency, as runqlat counts it: from each sched_wakeup or\n"
	"sched_wakeup_new, and from each switch-out of a thread still runnable (a\n"
	"preemption), to the thread's next switch-in, as a log2 histogram of\n"
	"microseconds (the header says how many waits of each kind; --waits picks\n"
	"one), with the longest wait and what ran on that CPU meanwhile.  Record\n"
	"with 'ember record --off-cpu=wakeups -a' to see every wakeup and switch.\n"
	"The filters pick the waits: --pid, --tid and --comm by the waiting thread\n"
	"(-p is --pid here, as in runqlat), --cpu by the CPU it then ran on, --time\n"
	"by when it ran (the waits that end inside the window).\n"
	"Given a target it records while it runs (runqlat 1 10 is\n"
	"'sched lat -a --interval 1 --count 10'): a histogram per interval, or one\n"
	"at the end (Ctrl-C, --duration, the command's end).\n"
	"\n",
	.opts = options,
	.subs = (const struct opt_sub[]){ { "lat", sched_lat }, { NULL, NULL } },
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct rp_opts *rp, struct schedlat_opts *o, struct live_view *lv,
		      int argc, char **argv)
{
	struct args a = { .rp = *rp, .o = *o, .live = lv->opts };
	int rc = opt_parse(&sched_cmd, argc, argv, &a);
	*rp = a.rp;                /* what was parsed is theirs to free */
	*o = a.o;
	lv->opts = a.live;
	rc = live_view_parse(lv, rc, argc, argv);
	if (rc >= 0)
		return rc;
	if (o->per_comm && o->per_pid) {
		cmd_error(CMD, "--per-comm and --per-pid: pick one");
		return EXIT_USAGE;
	}
	return -1;
}

static int check_recording(const struct sched_tp *tp, const char *input)
{
	if (!tp->have[SCHED_WAKEUP] && !tp->have[SCHED_WAKEUP_NEW]) {
		cmd_error(CMD, "%s has no sched:sched_wakeup events: record with "
			  "'ember record --off-cpu=wakeups -a' (plain --off-cpu leaves "
			  "wakeups out)", input);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* The histogram per interval (--interval), and the end at --count. */
struct lat_run {
	struct schedlat *sl;
	struct rp_sink inner;
	struct replay *r;
	struct live *live;
	u64 count, intervals;
	bool done;
};

static int lr_sample(void *ctx, const struct rp_sample *s)
{
	struct lat_run *l = ctx;
	return l->done ? 0 : l->inner.sample(l->inner.ctx, s);
}

static int lr_event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct lat_run *l = ctx;
	return l->done ? 0 : l->inner.event(l->inner.ctx, ev, t);
}

static int lr_tick(void *ctx, u64 end, bool last)
{
	struct lat_run *l = ctx;
	if (l->done)
		return 0;
	if (l->inner.finish(l->inner.ctx) < 0 || schedlat_print(l->sl, stdout) < 0)
		return -1;
	schedlat_reset(l->sl);
	l->done = live_interval_end(stdout, l->live, l->r, last, &l->intervals, l->count);
	return 0;
}

/* One histogram at the end, or one per interval. */
static int run_sink(struct replay *r, struct schedlat *sl, struct live *live, u64 count)
{
	struct lat_run l = { .sl = sl, .inner = schedlat_sink(sl), .r = r, .live = live,
			     .count = count };
	struct rp_sink sink = { .ctx = &l, .sample = lr_sample, .event = lr_event, .tick = lr_tick };
	bool intervals = rp_interval(r);
	if (rp_run(r, intervals ? &sink : &l.inner) < 0)
		return -1;
	if (intervals)
		return 0;
	if (schedlat_print(sl, stdout) < 0)
		return -1;
	if (live)
		live_print_counts(stdout, live, rp_summary(r));
	return 0;
}

static int run(struct rp_opts *rp, struct schedlat_opts *o, struct live *live, u64 count)
{
	struct rp_opts all = *rp;
	memset(&all.filter, 0, sizeof(all.filter));   /* filters apply to the woken */
	all.tracing = true;
	o->filter = &rp->filter;
	struct replay *r = rp_open(&all);
	if (!r) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	struct sched_tp tp;
	struct schedlat *sl = NULL;
	int rc = EXIT_RUNTIME;
	if (sched_tp_init(&tp, rp_reader(r)) < 0)
		cmd_error(CMD, "%s: tracing data: %s", rp->input, err_msg());
	else if ((rc = check_recording(&tp, rp->input)) == EXIT_OK) {
		sl = schedlat_new(o, &tp);
		if (run_sink(r, sl, live, count) < 0) {
			cmd_error(CMD, "%s", err_msg());
			rc = EXIT_RUNTIME;
		}
		const struct rp_summary *sum = rp_summary(r);
		rp_warn_view(CMD, sum, rp->input, "some wakeups or switches are missing");
		if (sum->input_error)
			rc = EXIT_RUNTIME;
	}
	schedlat_free(sl);
	rp_close(r);
	return rc;
}

/* `ember sched lat` (argv[0] "lat"). */
static int sched_lat(int argc, char **argv)
{
	struct rp_opts rp;
	rp_opts_init(&rp);
	struct schedlat_opts o = { 0 };
	struct live_view lv = { .cmd = CMD, .help = "sched lat", .rp = &rp };
	int rc = parse_args(&rp, &o, &lv, argc, argv);
	rp.live_keep_threads = true;   /* the histograms keep the threads they measured */
	if (rc < 0)
		rc = live_view_start(&lv, REC_LIVE_SCHED);
	if (rc < 0)
		rc = run(&rp, &o, lv.live, lv.opts.count);
	fflush(stdout);
	rc = live_view_end(&lv, rc);
	rp_opts_free(&rp);
	return rc;
}
