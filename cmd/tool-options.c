/* tool-options.c - the options every tool shares: a recording to read
 * (-i), or a live target (-a, -p, -C, -- command) for --duration, with -o
 * to keep what was recorded (live's options, under the tools' letters);
 * and the filters of what the tool counts (the replay's shared layer):
 * --tid, --comm, --time, and on a file -p and -C, which live are targets. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "tools/tools.h"

/* Everything but the CPU list, whose short name differs; the live ones
 * take live's ids and are parsed by live_parse_opt. */
static const struct opt target_common[] = {
	OPT(TOOL_OPT_INPUT, 'i', "input", OPT_ARG, "FILE",
	  "read a recording (ember record --tool NAME)\n"
	  "instead of tracing live"),
	OPT(LV_OPT_OUTPUT, 'o', "output", OPT_ARG, "FILE", "live: keep the recording in FILE too"),
	OPT(LV_OPT_ALL, 'a', "all-cpus", OPT_NO_ARG, NULL, "live: the whole system (the default)"),
	OPT(LV_OPT_PIDS, 'p', "pid", OPT_ARG, "PIDS",
	  "live: only these processes; with -i, only their events"),
	OPT(LV_OPT_DURATION, 0, "duration", OPT_ARG, "SECS", "live: stop after SECS seconds"),
	OPT(RP_OPT_TID, 0, "tid", OPT_ARG, "LIST", "only these threads' events"),
	OPT(RP_OPT_COMM, 0, "comm", OPT_ARG, "LIST", "only these command names' events"),
	OPT(RP_OPT_TIME, 0, "time", OPT_ARG, "START,END",
	  "only events in this time range (seconds of the\n"
	  "recording's clock, as script's time column; either\n"
	  "end may be left empty)"),
	OPT_END,
};

const struct opt tool_target_opts[] = {
	OPT_INCLUDE(target_common),
	OPT(LV_OPT_CPUS, 'C', "cpu", OPT_ARG, "LIST",
	  "live: only these CPUs (0-3,6); with -i, only\n"
	  "events on them"),
	OPT_END,
};

/* For the tools whose -C is BCC's --count-only. */
const struct opt tool_target_opts_no_c[] = {
	OPT_INCLUDE(target_common),
	OPT(LV_OPT_CPUS, 0, "cpu", OPT_ARG, "LIST",
	  "live: only these CPUs (0-3,6); with -i, only\n"
	  "events on them"),
	OPT_END,
};

/* --tid, --comm and --time, parsed as every view parses them. */
static int parse_filter(struct tool_target *tg, int id, const char *arg)
{
	struct rp_opts o = { .filter = tg->filter };
	int rc = rp_parse_filter_opt(&o, id, arg);
	tg->filter = o.filter;
	return rc;
}

int tool_parse_target(struct tool_target *tg, int id, const char *arg)
{
	switch (id) {
	case TOOL_OPT_INPUT: tg->input = arg; return 1;
	case TOOL_OPT_EVENT: VEC_PUSH(&tg->events, arg); return 1;
	case RP_OPT_TID: case RP_OPT_COMM: case RP_OPT_TIME: return parse_filter(tg, id, arg);
	default: return live_parse_opt(&tg->live, id, arg);
	}
}

/* On a file -p and -C pick events, as --pid and --cpu do in the views:
 * the lists move to the filter. */
static void targets_to_filter(struct tool_target *tg)
{
	struct live_opts *lo = &tg->live;
	if (lo->pids) {
		tg->filter.pids = lo->pids;
		tg->filter.npids = lo->npids;
		lo->pids = NULL;
		lo->npids = 0;
	}
	if (lo->cpus) {
		tg->filter.cpus = lo->cpus;
		tg->filter.ncpus = lo->ncpus;
		lo->cpus = NULL;
		lo->ncpus = 0;
	}
}

int tool_finish_target(const char *cmd, struct tool_target *tg, int argc, char **argv)
{
	struct live_opts *lo = &tg->live;
	if (optind < argc)
		lo->command = argv + optind;
	if (tg->input)
		targets_to_filter(tg);
	bool live = lo->all || lo->pids || lo->cpus || lo->duration > 0 || lo->command ||
		    lo->output;
	if (tg->input && live) {
		cmd_error(cmd, "-i reads a recording: -a, --duration, -o and a command "
			  "are for tracing live; give one or the other");
		return EXIT_USAGE;
	}
	if (lo->pids && lo->command) {
		cmd_error(cmd, "-p with a command: trace either running processes or a command");
		return EXIT_USAGE;
	}
	if (lo->count && !lo->interval) {
		cmd_error(cmd, "--count counts intervals: add --interval SECS");
		return EXIT_USAGE;
	}
	return -1;
}

