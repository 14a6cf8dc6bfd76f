/* ember.c - main(): the table of subcommands and nothing else.
 * Each command lives in its module (record/cmd-record.c, ...). */
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "pmc/pmc.h"
#include "record/record.h"
#include "report/report.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "sample and trace into a perf.data file" },
	{ "report", cmd_report, "summarize a recording by comm, dso and symbol" },
	{ "script", cmd_script, "print one line per sample, like perf script" },
	{ "collapse", cmd_collapse, "fold stacks into lines, like stackcollapse-perf.pl" },
	{ "flame", cmd_flame, "write an interactive SVG flame graph" },
	{ "stat", cmd_stat, "count events with derived metrics, like perf stat" },
	{ "list", cmd_list, "list the events and metric sets this machine offers" },
	{ "offcpu", cmd_offcpu, "time blocked off-CPU, by stack, like offcputime" },
	{ "sched", cmd_sched, "wakeup-to-run latency histograms, like runqlat" },
	{ "bio", cmd_bio, "block I/O phases, latency histograms and per-I/O lines" },
	{ "verify", cmd_verify, "check a data file or blktrace capture record by record" },
	{ "archive", cmd_archive, "pack the symbols a recording needs, like perf archive" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: ember [--version] [--help] COMMAND [ARGS]\n\n"
		     "ember is a Linux profiler and event recorder on perf_event_open(2).\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'ember COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("ember %s\n", EMBER_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (name[0] == '-')
		fprintf(stderr, "ember: unknown option '%s' (see 'ember --help')\n", name);
	else
		fprintf(stderr, "ember: unknown command '%s' (see 'ember --help')\n", name);
	return EXIT_USAGE;
}
