/* cmd-sched.c - `ember sched lat`: wakeup-to-run latency from a recording
 * with sched_switch and sched_wakeup (e.g. 'ember record --off-cpu -a'),
 * as log2 histograms like runqlat's. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/sched/sched.h"

#define CMD "sched"

enum { OPT_PER_COMM = 0x5000, OPT_PER_PID };

/* sched lat's own options and the shared filters (-p is --pid). */
struct args {
	struct rp_opts *rp;
	struct schedlat_opts *o;
};

/* 1 handled, 0 not ours, -1 err_set. */
static int parse_one(void *ctx, int opt, const char *arg)
{
	struct args *a = ctx;
	switch (opt) {
	case OPT_PER_COMM: a->o->per_comm = true; return 1;
	case OPT_PER_PID: a->o->per_pid = true; return 1;
	default: return rp_parse_filter_opt(a->rp, opt, arg);
	}
}

static const struct opt options[] = {
	OPT_INCLUDE(rp_input_opts),
	OPT(OPT_PER_COMM, 0, "per-comm", OPT_NO_ARG, NULL, "a histogram per command name"),
	OPT(OPT_PER_PID, 0, "per-pid", OPT_NO_ARG, NULL, "a histogram per process"),
	OPT_INCLUDE(rp_short_pid_opts),
	OPT_INCLUDE(rp_view_opts),
	OPT_END,
};

const struct opt_cmd sched_cmd = {
	.name = CMD,
	.summary = "wakeup-to-run latency histograms, like runqlat",
	.synopsis =
	"usage: ember sched lat [-i FILE] [--per-comm | --per-pid] [filters]\n"
	"\n"
	"Wakeup-to-run latency: from each sched_wakeup or sched_wakeup_new to the\n"
	"woken thread's next switch-in, as a log2 histogram of microseconds, with\n"
	"the longest wait and what ran on that CPU meanwhile.  Record with\n"
	"'ember record --off-cpu=wakeups -a' to see every wakeup and switch.  The\n"
	"filters pick the woken threads.\n"
	"\n",
	.opts = options,
	.one = parse_one,
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct rp_opts *rp, struct schedlat_opts *o, int argc, char **argv)
{
	struct args a = { rp, o };
	int rc = opt_parse(&sched_cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (optind < argc) {
		return cmd_extra_argument(CMD, "sched lat", argv[optind]);
	}
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

static int run(struct rp_opts *rp, struct schedlat_opts *o)
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
		struct rp_sink sink = schedlat_sink(sl);
		if (rp_run(r, &sink) < 0) {
			cmd_error(CMD, "%s", err_msg());
			rc = EXIT_RUNTIME;
		} else if (schedlat_print(sl, stdout) < 0) {
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

int cmd_sched(int argc, char **argv)
{
	if (argc < 2) {
		opt_help(&sched_cmd, stderr);
		return EXIT_USAGE;
	}
	/* -h, --help and the hidden dumps may come before "lat": they take
	 * no value and stop at once, so no context is needed. */
	static const char *const before_lat[] = { "-h", "--help", "--list-options", "--man" };
	for (size_t i = 0; i < ARRAY_SIZE(before_lat); i++)
		if (!strcmp(argv[1], before_lat[i]))
			return opt_parse(&sched_cmd, 2, argv, NULL);
	if (strcmp(argv[1], "lat")) {
		cmd_error(CMD, "unknown subcommand '%s': the one there is is 'lat'", argv[1]);
		return EXIT_USAGE;
	}
	struct rp_opts rp;
	rp_opts_init(&rp);
	struct schedlat_opts o = { 0 };
	int rc = parse_args(&rp, &o, argc - 1, argv + 1);
	rp_progress_if_tty(&rp);
	if (rc < 0)
		rc = run(&rp, &o);
	fflush(stdout);
	rp_opts_free(&rp);
	return rc;
}
