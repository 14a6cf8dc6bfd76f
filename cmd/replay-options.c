/* replay-options.c - the replay's options as option table groups
 * (options-internal.h) and their parser: input, the sample filters
 * (--comm, --pid, --tid, --cpu, --time), symbols and unwinding; and the
 * progress line on a terminal.  Every view command and tool takes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

/* "START,END" in seconds (perf script's time column); either may be empty. */
static int parse_time_range(const char *arg, u64 *start, u64 *end)
{
	const char *comma = strchr(arg, ',');
	if (!comma) {
		err_set("bad --time '%s' (expected START,END in seconds, e.g. 1234.5,1236)", arg);
		return -1;
	}
	char *first = strndup(arg, (size_t)(comma - arg));
	double a = 0, b = 0;
	int rc = 0;
	if (*first && parse_double(first, &a) < 0)
		rc = -1;
	if (comma[1] && parse_double(comma + 1, &b) < 0)
		rc = -1;
	free(first);
	if (rc < 0 || a < 0 || b < 0 || (comma[1] && b < a)) {
		err_set("bad --time '%s' (expected START,END in seconds, e.g. 1234.5,1236)", arg);
		return -1;
	}
	*start = (u64)(a * 1e9 + 0.5);
	*end = comma[1] ? (u64)(b * 1e9 + 0.5) : 0;
	return 0;
}

const struct opt rp_input_opts[] = {
	OPT('i', 'i', "input", OPT_ARG, "FILE", "data file (default ember.data; - for stdin)"),
	OPT_END,
};

const struct opt rp_pid_tid_opts[] = {
	OPT(RP_OPT_PID, 0, "pid", OPT_ARG, "LIST", "only these processes (comma list)"),
	OPT(RP_OPT_TID, 0, "tid", OPT_ARG, "LIST", "only these threads"),
	OPT_END,
};

/* -p for --pid, in the views that take it as BCC's tools do. */
const struct opt rp_short_pid_opts[] = {
	OPT(RP_OPT_PID, 'p', NULL, OPT_ARG, "LIST", "the same as --pid"),
	OPT_END,
};

const struct opt rp_sample_opts[] = {
	OPT(RP_OPT_COMM, 0, "comm", OPT_ARG, "LIST", "only these command names"),
	OPT(RP_OPT_CPU, 0, "cpu", OPT_ARG, "LIST", "only these CPUs (0-3,6)"),
	OPT(RP_OPT_TIME, 0, "time", OPT_ARG, "START,END",
	  "only this time range (seconds, as script's time\n"
	  "column; either end may be left empty)"),
	OPT_END,
};

const struct opt rp_symbol_opts[] = {
	OPT(RP_OPT_NO_DEMANGLE, 0, "no-demangle", OPT_NO_ARG, NULL,
	  "show C++/Rust symbols as recorded"),
	OPT(RP_OPT_KALLSYMS, 0, "kallsyms", OPT_ARG, "FILE",
	  "the recording's kernel symbols (by default this\n"
	  "kernel's when the build-id is its, else ~/.debug's)"),
	OPT_END,
};

const struct opt rp_unwind_opts[] = {
	OPT(RP_OPT_UNWINDER, 0, "unwinder", OPT_ARG, "NAME",
	  "DWARF unwinder for --call-graph dwarf files:\n"
	  "libdw (default) or libunwind"),
	OPT(RP_OPT_LEAF_FIX, 0, "leaf-fix", OPT_NO_ARG, NULL,
	  "restore a frameless leaf's caller in -g chains from\n"
	  "record's stack snapshot (the default, but in script)"),
	OPT(RP_OPT_NO_LEAF_FIX, 0, "no-leaf-fix", OPT_NO_ARG, NULL,
	  "-g chains as the frame-pointer walk found them\n"
	  "(script's default, as perf script prints them)"),
	OPT(RP_OPT_INLINE, 0, "inline", OPT_NO_ARG, NULL,
	  "a DWARF-unwound frame shows the functions inlined at\n"
	  "its address as their own frames (the default)"),
	OPT(RP_OPT_NO_INLINE, 0, "no-inline", OPT_NO_ARG, NULL, "one frame per machine frame"),
	OPT_END,
};

const struct opt rp_view_opts[] = {
	OPT_INCLUDE(rp_pid_tid_opts),
	OPT_INCLUDE(rp_sample_opts),
	OPT_INCLUDE(rp_symbol_opts),
	OPT_INCLUDE(rp_unwind_opts),
	OPT_END,
};

int rp_parse_filter_opt(struct rp_opts *o, int opt, const char *arg)
{
	struct rp_filter *f = &o->filter;
	switch (opt) {
	case 'i':
		o->input = arg;
		return 1;
	case RP_OPT_COMM:
		f->comms = arg;
		return 1;
	case RP_OPT_PID:
		free(f->pids);
		return parse_pid_list(arg, &f->pids, &f->npids) < 0 ? -1 : 1;
	case RP_OPT_TID:
		free(f->tids);
		return parse_pid_list(arg, &f->tids, &f->ntids) < 0 ? -1 : 1;
	case RP_OPT_CPU:
		free(f->cpus);
		return parse_cpu_list(arg, 1 << 16, &f->cpus, &f->ncpus) < 0 ? -1 : 1;
	case RP_OPT_TIME:
		return parse_time_range(arg, &f->time_start, &f->time_end) < 0 ? -1 : 1;
	case RP_OPT_KALLSYMS:
		/* The recording's kernel symbols, as perf --kallsyms: taken
		 * whatever the build-ids say, relocated by the kernel map. */
		o->sym.kallsyms = arg;
		return 1;
	case RP_OPT_NO_DEMANGLE:
		o->sym.demangle = false;
		return 1;
	case RP_OPT_UNWINDER:
		o->unwinder_set = true;
		return unw_parse_backend(arg, &o->unwinder) < 0 ? -1 : 1;
	case RP_OPT_LEAF_FIX:
	case RP_OPT_NO_LEAF_FIX:
		o->leaf_fix = opt == RP_OPT_LEAF_FIX;
		return 1;
	case RP_OPT_INLINE:
	case RP_OPT_NO_INLINE:
		o->no_inline = opt == RP_OPT_NO_INLINE;
		return 1;
	default:
		return 0;
	}
}

/* "\rreading ... 42%"; total 0 means finished: erase the line. */
void rp_progress_line(u64 done, u64 total)
{
	if (!total) {
		fprintf(stderr, "\r%40s\r", "");
		return;
	}
	fprintf(stderr, "\rember: reading the recording... %3d%%",
		(int)(100.0 * (double)done / (double)total));
}

void rp_progress_if_tty(struct rp_opts *o)
{
	if (isatty(2))
		o->progress = rp_progress_line;
}
