/* tool-options.c - the options every tool shares: a recording to read
 * (-i), or a live target (-a, -p, -C, -- command) for --duration, with -o
 * to keep what was recorded (live's options, under the tools' letters);
 * and the filters of what the tool counts (the replay's shared layer):
 * --tid, --comm, --time, and on a file -p and -C, which live are targets. */
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "tools/tools.h"

#define T(f) offsetof(struct tool_target, f)

/* Everything but the CPU list, whose short name differs: bound into
 * struct tool_target (live's options in its live_opts, the filters in
 * its rp_filter). */
static const struct opt target_common[] = {
	OPT_STRING('i', "input", T(input), "FILE",
	  "read a recording (ember record --tool NAME)\n"
	  "instead of tracing live"),
	OPT_STRING('o', "output", T(live.output), "FILE", "live: keep the recording in FILE too"),
	OPT_BOOL('a', "all-cpus", T(live.all), "live: the whole system (the default)"),
	OPT_CALLBACK('p', "pid", OPT_ARG, T(live), "PIDS",
	  "live: only these processes; with -i, only their events", live_set_pids),
	LIVE_DURATION_OPT(T(live), "live: stop after SECS seconds"),
	OPT_CALLBACK(0, "tid", OPT_ARG, T(filter), "LIST", "only these threads' events",
		     rp_set_tids),
	OPT_STRING(0, "comm", T(filter.comms), "LIST", "only these command names' events"),
	OPT_CALLBACK(0, "time", OPT_ARG, T(filter), "START,END",
	  "only events in this time range (seconds of the\n"
	  "recording's clock, as script's time column; either\n"
	  "end may be left empty)", rp_set_time),
	OPT_END,
};

const struct opt tool_target_opts[] = {
	OPT_INCLUDE(target_common),
	OPT_CALLBACK('C', "cpu", OPT_ARG, T(live), "LIST",
	  "live: only these CPUs (0-3,6); with -i, only\n"
	  "events on them", live_set_cpus),
	OPT_END,
};

/* For the tools whose -C is BCC's --count-only. */
const struct opt tool_target_opts_no_c[] = {
	OPT_INCLUDE(target_common),
	OPT_CALLBACK(0, "cpu", OPT_ARG, T(live), "LIST",
	  "live: only these CPUs (0-3,6); with -i, only\n"
	  "events on them", live_set_cpus),
	OPT_END,
};

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
	if (tg->input && lo->callgraph != REC_CG_NONE) {
		cmd_error(cmd, "--call-graph chooses how a live recording walks stacks: "
			  "with -i the file's stacks are used (record --tool %s "
			  "--call-graph fp for frame pointers)", cmd);
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

