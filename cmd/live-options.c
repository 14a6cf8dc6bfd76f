/* live-options.c - the live views' option groups (targets, what to keep,
 * intervals) and their parser, and the operands and checks every live
 * view's line goes through (live_view_parse), before live/ runs it. */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "live/live.h"

const struct opt live_system_opts[] = {
	OPT(LV_OPT_ALL, 'a', "all-cpus", OPT_NO_ARG, NULL,
	  "live: record the whole system while the view runs\n"
	  "(as record -a); also -C, -- command"),
	OPT(LV_OPT_CPUS, 'C', NULL, OPT_ARG, "LIST", "live: record only these CPUs (0-3,6)"),
	OPT_END,
};

const struct opt live_keep_opts[] = {
	OPT(LV_OPT_DURATION, 0, "duration", OPT_ARG, "SECS", "live: stop after SECS seconds"),
	OPT(LV_OPT_OUTPUT, 'o', "output", OPT_ARG, "FILE",
	  "live: also keep the recording in FILE (a stream\n"
	  "that report -i and perf read)"),
	OPT(LV_OPT_PAGES, 0, "mmap-pages", OPT_ARG, "N",
	  "live: ring pages per CPU, a power of two (or 512K,\n"
	  "4M), as record -m: more when events are lost"),
	OPT_END,
};

const struct opt live_target_opts[] = {
	OPT_INCLUDE(live_system_opts),
	OPT(LV_OPT_TIDS, 't', NULL, OPT_ARG, "TIDS", "live: record only these threads"),
	OPT_INCLUDE(live_keep_opts),
	OPT(LV_OPT_FREQ, 'F', "freq", OPT_ARG, "HZ", "live: samples per second per CPU (default 4000)"),
	OPT_END,
};

const struct opt live_pid_opts[] = {
	OPT(LV_OPT_PIDS, 'p', NULL, OPT_ARG, "PIDS", "live: record these processes, all threads"),
	OPT_END,
};

const struct opt live_interval_opts[] = {
	OPT(LV_OPT_INTERVAL, 0, "interval", OPT_ARG, "SECS",
	  "print the view for each interval of SECS seconds\n"
	  "and start again (of recording time for a file)"),
	OPT(LV_OPT_COUNT, 0, "count", OPT_ARG, "N", "stop after N intervals"),
	OPT_END,
};

static int positive_seconds(const char *arg, double *out, const char *what)
{
	if (parse_double(arg, out) < 0 || !(*out > 0)) {
		err_set("bad %s '%s': give a positive number of seconds", what, arg);
		return -1;
	}
	return 0;
}

int live_parse_opt(struct live_opts *o, int opt, const char *arg)
{
	int rc = 0;
	switch (opt) {
	case LV_OPT_ALL: o->all = true; return 1;
	case LV_OPT_CPUS: rc = parse_cpu_list(arg, cpus_possible(), &o->cpus, &o->ncpus); break;
	case LV_OPT_PIDS: rc = parse_pid_list(arg, &o->pids, &o->npids); break;
	case LV_OPT_TIDS: rc = parse_pid_list(arg, &o->tids, &o->ntids); break;
	case LV_OPT_OUTPUT: o->output = arg; return 1;
	case LV_OPT_INTERVAL: rc = positive_seconds(arg, &o->interval, "--interval"); break;
	case LV_OPT_DURATION: rc = positive_seconds(arg, &o->duration, "--duration"); break;
	case LV_OPT_COUNT:
		if (parse_u64(arg, &o->count) < 0 || !o->count) {
			err_set("bad --count '%s': give a number of intervals, 1 or more", arg);
			return -1;
		}
		return 1;
	case LV_OPT_PAGES:
		if (rec_parse_pages(arg, &o->mmap_pages) < 0) {
			err_prefix("bad --mmap-pages '%s'", arg);
			return -1;
		}
		return 1;
	case LV_OPT_FREQ:
		if (parse_u64(arg, &o->freq) < 0 || !o->freq) {
			err_set("bad -F '%s': give a sampling rate in Hz, e.g. -F 999", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
	return rc < 0 ? -1 : 1;
}

int live_view_parse(struct live_view *v, int rc, int argc, char **argv)
{
	if (rc >= 0)
		return rc;
	v->progress = rp_progress_line;
	/* A command only after "--": a stray word is not run. */
	if (optind < argc && strcmp(argv[optind - 1], "--"))
		return cmd_extra_argument(v->cmd, v->help, argv[optind]);
	if (live_wanted(&v->opts, argc, argv, optind) < 0) {
		cmd_error(v->cmd, "%s", err_msg());
		return EXIT_USAGE;
	}
	if (v->all_by_default && !live_view_target(v))
		v->opts.all = true;
	return -1;
}

