/* ember.c - main(): the table of commands and the help that lists them.
 * Each command is a file of cmd/; its option table says what it takes,
 * its subcommands and handovers (opt_run). */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/common.h"

/* Each command's name and summary come from its option table; run is
 * NULL for a command of subcommands (the table names theirs). */
struct command {
	const struct opt_cmd *opts;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ &record_cmd, cmd_record },
	{ &report_cmd, cmd_report },
	{ &top_cmd, cmd_top },
	{ &script_cmd, cmd_script },
	{ &collapse_cmd, cmd_collapse },
	{ &flame_cmd, cmd_flame },
	{ &export_cmd, cmd_export },
	{ &stat_cmd, cmd_stat },
	{ &list_cmd, cmd_list },
	{ &trace_cmd, cmd_trace },
	{ &offcpu_cmd, cmd_offcpu },
	{ &sched_cmd, NULL },
	{ &bio_cmd, cmd_bio },
	{ &btrace_cmd, cmd_btrace },
	{ &verify_cmd, cmd_verify },
	{ &archive_cmd, cmd_archive },
	{ &serve_cmd, cmd_serve },
	{ &push_cmd, cmd_push },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(name, commands[i].opts->name))
			return &commands[i];
	return NULL;
}

/* BCC's tools (cmd/cmd-tools.c), listed in a group of their own. */
static bool is_tool(const char *name)
{
	for (size_t i = 0; tool_command(i); i++)
		if (!strcmp(name, tool_command(i)->name))
			return true;
	return false;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: ember [--version] [--help] COMMAND [ARGS]\n\n"
		     "ember is a Linux profiler and event recorder on perf_event_open(2).\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].opts->name, commands[i].opts->summary);
	fprintf(out, "\nTools (BCC's, from tracepoints and uprobes; live, or -i FILE):\n");
	for (size_t i = 0; tool_command(i); i++)
		fprintf(out, "  %-10s %s\n", tool_command(i)->name, tool_command(i)->summary);
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
	/* The command names, one a line, for the completion script. */
	if (!strcmp(name, "--list-commands")) {
		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			printf("%s\n", commands[i].opts->name);
		for (size_t i = 0; tool_command(i); i++)
			printf("%s\n", tool_command(i)->name);
		return EXIT_OK;
	}
	const struct command *c = find_command(name);
	if (c)
		return opt_run(c->opts, c->run, argc - 1, argv + 1);
	if (is_tool(name))
		return cmd_tool(argc - 1, argv + 1);
	if (name[0] == '-')
		fprintf(stderr, "ember: unknown option '%s' (see 'ember --help')\n", name);
	else
		fprintf(stderr, "ember: unknown command '%s' (see 'ember --help')\n", name);
	return EXIT_USAGE;
}
