/* target.c - the options every tool shares: a recording to read (-i), or
 * a live target (-a, -p, -C, -- command) for --duration, with -o to keep
 * what was recorded, and --interval/--count for the summary tools. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report/tools/tools.h"

/* Everything but the CPU list, whose short name differs. */
static const struct opt target_common[] = {
	OPT(TOOL_OPT_INPUT, 'i', "input", OPT_ARG, "FILE",
	  "read a recording (ember record --tool NAME)\n"
	  "instead of tracing live"),
	OPT(TOOL_OPT_OUTPUT, 'o', "output", OPT_ARG, "FILE", "live: keep the recording in FILE too"),
	OPT(TOOL_OPT_ALL, 'a', "all-cpus", OPT_NO_ARG, NULL, "live: the whole system (the default)"),
	OPT(TOOL_OPT_PID, 'p', "pid", OPT_ARG, "PIDS", "live: only these processes"),
	OPT(TOOL_OPT_DURATION, 0, "duration", OPT_ARG, "SECS", "live: stop after SECS seconds"),
	OPT_END,
};

const struct opt tool_target_opts[] = {
	OPT_INCLUDE(target_common),
	OPT(TOOL_OPT_CPU, 'C', "cpu", OPT_ARG, "LIST", "live: only these CPUs (0-3,6)"),
	OPT_END,
};

/* For the tools whose -C is BCC's --count-only. */
const struct opt tool_target_opts_no_c[] = {
	OPT_INCLUDE(target_common),
	OPT(TOOL_OPT_CPU, 0, "cpu", OPT_ARG, "LIST", "live: only these CPUs (0-3,6)"),
	OPT_END,
};

const struct opt tool_interval_opts[] = {
	OPT(TOOL_OPT_INTERVAL, 0, "interval", OPT_ARG, "SECS",
	  "print a summary every SECS seconds of the\n"
	  "recording, then start again"),
	OPT(TOOL_OPT_COUNT, 0, "count", OPT_ARG, "N", "stop after N intervals"),
	OPT_END,
};

static int positive_seconds(const char *opt, const char *arg, double *v)
{
	if (parse_double(arg, v) < 0 || !(*v > 0)) {
		err_set("%s %s: give a positive number of seconds", opt, arg);
		return -1;
	}
	return 1;
}

int tool_parse_target(struct tool_target *tg, int id, const char *arg)
{
	double secs;
	switch (id) {
	case TOOL_OPT_INPUT: tg->input = arg; return 1;
	case TOOL_OPT_OUTPUT: tg->output = arg; return 1;
	case TOOL_OPT_ALL: tg->all = true; return 1;
	case TOOL_OPT_PID: tg->pids = arg; return 1;
	case TOOL_OPT_CPU: tg->cpus = arg; return 1;
	case TOOL_OPT_EVENT: VEC_PUSH(&tg->events, arg); return 1;
	case TOOL_OPT_DURATION:
		tg->duration = arg;
		return positive_seconds("--duration", arg, &secs);
	case TOOL_OPT_INTERVAL:
		if (positive_seconds("--interval", arg, &secs) < 0)
			return -1;
		tg->interval_ns = (u64)(secs * 1e9);
		return 1;
	case TOOL_OPT_COUNT:
		if (parse_u64(arg, &tg->count) < 0 || !tg->count) {
			err_set("--count %s: give a positive number of intervals", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

int tool_finish_target(const char *cmd, struct tool_target *tg, int argc, char **argv)
{
	if (optind < argc)
		tg->command = argv + optind;
	bool live = tg->all || tg->pids || tg->cpus || tg->duration || tg->command || tg->output;
	if (tg->input && live) {
		cmd_error(cmd, "-i reads a recording: -a, -p, -C, --duration, -o and a command "
			  "are for tracing live; give one or the other");
		return EXIT_USAGE;
	}
	if (tg->pids && tg->command) {
		cmd_error(cmd, "-p with a command: trace either running processes or a command");
		return EXIT_USAGE;
	}
	if (tg->count && !tg->interval_ns) {
		cmd_error(cmd, "--count counts intervals: add --interval SECS");
		return EXIT_USAGE;
	}
	return -1;
}

void tool_target_free(struct tool_target *tg)
{
	VEC_FREE(&tg->events);
}
