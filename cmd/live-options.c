/* live-options.c - the live views' option groups (targets, what to keep,
 * intervals) and their parser, and the operands and checks every live
 * view's line goes through (live_view_parse), before live/ runs it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "live/live.h"

#define L(f) offsetof(struct live_opts, f)

/* The target lists (fields of struct live_opts, so the tools' target
 * table binds them too): 0, or -1 with err_set(). */
int live_set_cpus(void *field, const char *arg)
{
	struct live_opts *o = field;
	return parse_cpu_list(arg, cpus_possible(), &o->cpus, &o->ncpus);
}

int live_set_pids(void *field, const char *arg)
{
	struct live_opts *o = field;
	return parse_pid_list(arg, &o->pids, &o->npids);
}

static int set_tids(void *field, const char *arg)
{
	struct live_opts *o = field;
	return parse_pid_list(arg, &o->tids, &o->ntids);
}

static int set_pages(void *field, const char *arg)
{
	if (rec_parse_pages(arg, field) < 0) {
		err_prefix("bad --mmap-pages '%s'", arg);
		return -1;
	}
	return 0;
}

/* --call-graph fp|dwarf: how a live recording walks user stacks. */
static int set_call_graph(void *field, const char *arg)
{
	if (strcmp(arg, "fp") && strcmp(arg, "dwarf")) {
		err_set("--call-graph '%s': give fp (frame pointers) or dwarf (the "
			"binaries' CFI, unwound while recording)", arg);
		return -1;
	}
	*(enum rec_callgraph *)field = !strcmp(arg, "fp") ? REC_CG_FP : REC_CG_ONLINE;
	return 0;
}

/* Each group binds into struct live_opts: include it at the command's. */
const struct opt live_stack_opts[] = {
	OPT_CALLBACK(0, "call-graph", OPT_ARG, L(callgraph), "MODE",
	  "live: dwarf unwinds user stacks with the binaries'\n"
	  "CFI while recording, as record -g (16 KB copied a\n"
	  "hit); fp walks frame pointers (no copies)", set_call_graph),
	OPT_END,
};

const struct opt live_system_opts[] = {
	OPT_BOOL('a', "all-cpus", L(all),
	  "live: record the whole system while the view runs\n"
	  "(as record -a); also -C, -- command"),
	OPT_CALLBACK('C', NULL, OPT_ARG, 0, "LIST", "live: record only these CPUs (0-3,6)",
		     live_set_cpus),
	OPT_END,
};

const struct opt live_keep_opts[] = {
	LIVE_DURATION_OPT(0, "live: stop after SECS seconds"),
	OPT_STRING('o', "output", L(output), "FILE",
	  "live: also keep the recording in FILE (a stream\n"
	  "that report -i and perf read)"),
	OPT_CALLBACK(0, "mmap-pages", OPT_ARG, L(mmap_pages), "N",
	  "live: ring pages per CPU, a power of two (or 512K,\n"
	  "4M), as record -m: more when events are lost", set_pages),
	OPT_END,
};

const struct opt live_target_opts[] = {
	OPT_INCLUDE(live_system_opts),
	OPT_CALLBACK('t', NULL, OPT_ARG, 0, "TIDS", "live: record only these threads", set_tids),
	OPT_INCLUDE(live_keep_opts),
	OPT_U64('F', "freq", L(freq), "HZ", "live: samples per second per CPU (default 4000)", 1,
		"bad -F '%s': give a sampling rate in Hz, e.g. -F 999"),
	OPT_END,
};

const struct opt live_pid_opts[] = {
	OPT_CALLBACK('p', NULL, OPT_ARG, 0, "PIDS", "live: record these processes, all threads",
		     live_set_pids),
	OPT_END,
};

const struct opt live_interval_opts[] = {
	OPT_DOUBLE(0, "interval", L(interval), "SECS",
	  "print the view for each interval of SECS seconds\n"
	  "and start again (of recording time for a file)", 0,
	  "bad --interval '%s': give a positive number of seconds"),
	LIVE_COUNT_OPT(0, "stop after N intervals"),
	OPT_END,
};

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

