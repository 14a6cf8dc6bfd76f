/* cmd-trace.c - `ember trace`: bpftrace's language over perf_event_open
 * (trace/).  Built so far: -l, the probes a pattern matches, and -lv,
 * with the fields a program reads through args. */
#include <stddef.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "trace/trace.h"

#define CMD "trace"

struct trace_args {
	bool list, verbose;
};
#define A(f) offsetof(struct trace_args, f)

static const struct opt options[] = {
	OPT_BOOL('l', "list", A(list), "list the probes PATTERN matches (every one without it)"),
	OPT_BOOL('v', "verbose", A(verbose), "with -l: each tracepoint's fields, as args has them"),
	OPT_END,
};

const struct opt_cmd trace_cmd = {
	.name = CMD,
	.summary = "list the probes of bpftrace's language this machine offers",
	.synopsis =
	"usage: ember trace -l [-v] [PATTERN]\n"
	"\n"
	"The probes a bpftrace program may name on this machine, as bpftrace -l\n"
	"prints them: tracepoint:SYSTEM:NAME (alias t), uprobe:FILE:FUNCTION\n"
	"(alias u; FILE a path, a library's short name such as libc, or a program\n"
	"on $PATH), software:EVENT: and hardware:EVENT:.  PATTERN is a probe type\n"
	"with globs (t:syscalls:sys_enter_open*, u:libc:mall*) or one glob over\n"
	"whole names (*sched_switch*).  -v adds each tracepoint's fields, as the\n"
	"format files declare them (the common_ ones left out).  kprobe, kfunc\n"
	"and their returns read the kernel's functions, which ember cannot\n"
	"without BPF: such a pattern is refused.\n"
	"\n",
	.opts = options,
};

static void print_probe(const char *name, const char *const *fields, void *ctx)
{
	FILE *out = ctx;
	fprintf(out, "%s\n", name);
	for (size_t i = 0; fields[i]; i++)
		fprintf(out, "    %s\n", fields[i]);
}

int cmd_trace(int argc, char **argv)
{
	struct trace_args a = {0};
	int rc = opt_parse(&trace_cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (!a.list) {
		cmd_error(CMD, "give -l [PATTERN]: ember trace lists the probes a program may "
			  "name (see 'ember trace --help')");
		return EXIT_USAGE;
	}
	if (argc - optind > 1)
		return cmd_extra_argument(CMD, CMD, argv[optind + 1]);
	if (trace_list(optind < argc ? argv[optind] : NULL, a.verbose, print_probe, stdout) < 0) {
		cmd_error(CMD, "-l: %s", err_msg());
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
