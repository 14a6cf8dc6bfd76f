/* replay-options.c - the replay's options as option table groups
 * (options-internal.h) and their parser: input, the sample filters
 * (--comm, --pid, --tid, --cpu, --time), symbols and unwinding; and the
 * progress line on a terminal.  Every view command and tool takes them. */
#include <stddef.h>
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

#define R(f) offsetof(struct rp_opts, f)
#define F(f) offsetof(struct rp_filter, f)

/* The filter's lists and range (fields of struct rp_filter, so the
 * tools' target table binds them too): 0, or -1 with err_set(). */
int rp_set_pids(void *field, const char *arg)
{
	struct rp_filter *f = field;
	free(f->pids);
	return parse_pid_list(arg, &f->pids, &f->npids);
}

int rp_set_tids(void *field, const char *arg)
{
	struct rp_filter *f = field;
	free(f->tids);
	return parse_pid_list(arg, &f->tids, &f->ntids);
}

static int set_cpus(void *field, const char *arg)
{
	struct rp_filter *f = field;
	free(f->cpus);
	return parse_cpu_list(arg, 1 << 16, &f->cpus, &f->ncpus);
}

int rp_set_time(void *field, const char *arg)
{
	struct rp_filter *f = field;
	return parse_time_range(arg, &f->time_start, &f->time_end);
}

static int set_unwinder(void *field, const char *arg)
{
	struct rp_opts *o = field;
	o->unwinder_set = true;
	return unw_parse_backend(arg, &o->unwinder);
}

/* Each group binds into struct rp_opts: include it at the command's. */
const struct opt rp_input_opts[] = {
	OPT_STRING('i', "input", R(input), "FILE", "data file (default ember.data; - for stdin)"),
	OPT_END,
};

const struct opt rp_pid_tid_opts[] = {
	OPT_CALLBACK(0, "pid", OPT_ARG, R(filter), "LIST", "only these processes (comma list)",
		     rp_set_pids),
	OPT_CALLBACK(0, "tid", OPT_ARG, R(filter), "LIST", "only these threads", rp_set_tids),
	OPT_END,
};

/* -p for --pid, in the views that take it as BCC's tools do. */
const struct opt rp_short_pid_opts[] = {
	OPT_CALLBACK('p', NULL, OPT_ARG, R(filter), "LIST", "the same as --pid", rp_set_pids),
	OPT_END,
};

const struct opt rp_sample_opts[] = {
	OPT_STRING(0, "comm", R(filter.comms), "LIST", "only these command names"),
	OPT_CALLBACK(0, "cpu", OPT_ARG, R(filter), "LIST", "only these CPUs (0-3,6)", set_cpus),
	OPT_CALLBACK(0, "time", OPT_ARG, R(filter), "START,END",
	  "only this time range (seconds, as script's time\n"
	  "column; either end may be left empty)", rp_set_time),
	OPT_END,
};

const struct opt rp_symbol_opts[] = {
	OPT_FALSE(0, "no-demangle", R(sym.demangle), "show C++/Rust symbols as recorded"),
	/* The recording's kernel symbols, as perf --kallsyms: taken
	 * whatever the build-ids say, relocated by the kernel map. */
	OPT_STRING(0, "kallsyms", R(sym.kallsyms), "FILE",
	  "the recording's kernel symbols (by default this\n"
	  "kernel's when the build-id is its, else ~/.debug's)"),
	OPT_END,
};

const struct opt rp_unwind_opts[] = {
	OPT_CALLBACK(0, "unwinder", OPT_ARG, 0, "NAME",
	  "DWARF unwinder for --call-graph dwarf files:\n"
	  "libdw (default) or libunwind", set_unwinder),
	OPT_BOOL(0, "leaf-fix", R(leaf_fix),
	  "restore a frameless leaf's caller in -g chains from\n"
	  "record's stack snapshot (the default, but in script)"),
	OPT_FALSE(0, "no-leaf-fix", R(leaf_fix),
	  "-g chains as the frame-pointer walk found them\n"
	  "(script's default, as perf script prints them)"),
	OPT_FALSE(0, "inline", R(no_inline),
	  "a DWARF-unwound frame shows the functions inlined at\n"
	  "its address as their own frames (the default)"),
	OPT_BOOL(0, "no-inline", R(no_inline), "one frame per machine frame"),
	OPT_END,
};

const struct opt rp_view_opts[] = {
	OPT_INCLUDE(rp_pid_tid_opts),
	OPT_INCLUDE(rp_sample_opts),
	OPT_INCLUDE(rp_symbol_opts),
	OPT_INCLUDE(rp_unwind_opts),
	OPT_END,
};

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
