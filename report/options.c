/* options.c - what the analysis commands share: input, the sample
 * filters (--comm, --pid, --tid, --cpu, --time), symbols and unwinding
 * as option table groups (common/options.h) and their parser, collapse's
 * options (collapse and flame), the progress line and the warnings after
 * a replay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

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

const struct opt collapse_options[] = {
	OPT(COLLAPSE_OPT_WEIGHT, 0, "weight", OPT_ARG, "WHAT",
	  "samples (default) or period: sum each sample's period\n"
	  "(what stackcollapse-perf.pl does since 2022 when\n"
	  "perf script shows the period)"),
	OPT(COLLAPSE_OPT_ANNOTATE, 0, "annotate", OPT_NO_ARG, NULL,
	  "mark kernel frames _[k] and JIT frames _[j]"),
	OPT(COLLAPSE_OPT_PID, 0, "pid", OPT_OPT_ARG, "LIST",
	  "name the process frame comm-PID; --pid=LIST: only\n"
	  "these processes (note the '=')"),
	OPT(COLLAPSE_OPT_TID, 0, "tid", OPT_OPT_ARG, "LIST",
	  "name the process frame comm-PID/TID; --tid=LIST:\n"
	  "only these threads"),
	OPT(COLLAPSE_OPT_SRCLINE, 0, "srcline", OPT_NO_ARG, NULL,
	  "add \" file:line\" to each frame the DWARF has a line\n"
	  "for (an inline chain's outer frames: the call site)"),
	OPT_INCLUDE(rp_sample_opts),
	OPT_INCLUDE(rp_symbol_opts),
	OPT_INCLUDE(rp_unwind_opts),
	OPT_END,
};

int collapse_parse_opt(struct collapse_opts *c, struct rp_opts *rp, int opt, const char *arg)
{
	switch (opt) {
	case COLLAPSE_OPT_PID:
		if (arg)
			return rp_parse_filter_opt(rp, RP_OPT_PID, arg);
		c->pid = true;
		return 1;
	case COLLAPSE_OPT_TID:
		if (arg)
			return rp_parse_filter_opt(rp, RP_OPT_TID, arg);
		c->tid = true;
		return 1;
	case COLLAPSE_OPT_ANNOTATE:
		c->annotate = true;
		return 1;
	case COLLAPSE_OPT_SRCLINE:
		c->srcline = true;
		return 1;
	case COLLAPSE_OPT_WEIGHT:
		if (!strcmp(arg, "period") || !strcmp(arg, "samples")) {
			c->weight_period = !strcmp(arg, "period");
			return 1;
		}
		err_set("bad --weight '%s' (expected samples or period)", arg);
		return -1;
	default:
		return rp_parse_filter_opt(rp, opt, arg);
	}
}

void rp_opts_init(struct rp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->input = "ember.data";
	o->sym.demangle = true;
	o->leaf_fix = true;
}

void rp_opts_free(struct rp_opts *o)
{
	free(o->filter.pids);
	free(o->filter.tids);
	free(o->filter.cpus);
	o->filter.pids = o->filter.tids = NULL;
	o->filter.cpus = NULL;
}

/* "\rreading ... 42%"; total 0 means finished: erase the line. */
static void progress_stderr(u64 done, u64 total)
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
		o->progress = progress_stderr;
}

/* "3 of type 17 (KSYMBOL), 1 of type 200 (unknown)": the records the
 * reader handed on unread, by type. */
static void undecoded_list(const struct pd_reader_stats *st, struct strbuf *sb)
{
	u64 listed = 0;
	for (int i = 0; i < st->nr_undecoded_types; i++) {
		const char *name = pd_record_name(st->undecoded[i].type);
		sb_printf(sb, "%s%llu of type %u (%s)", i ? ", " : "",
			  (unsigned long long)st->undecoded[i].count, st->undecoded[i].type,
			  name ? name : "unknown");
		listed += st->undecoded[i].count;
	}
	if (listed < st->nr_undecoded)
		sb_printf(sb, ", %llu of other types", (unsigned long long)(st->nr_undecoded - listed));
}

/* What every view owes its user first: the input is not all there. */
static void warn_incomplete(const char *cmd, const struct rp_summary *sum, const char *input)
{
	if (sum->truncated)
		cmd_warn(cmd, "%s was not closed cleanly; showing what it holds", input);
	if (sum->input.nr_undecoded) {
		struct strbuf sb = {0};
		undecoded_list(&sum->input, &sb);
		cmd_warn(cmd, "%s: %llu records of types this ember does not decode were "
			 "left out: %s", input, (unsigned long long)sum->input.nr_undecoded, sb.s);
		sb_free(&sb);
	}
	if (sum->input.bad_times)
		cmd_warn(cmd, "%s: offset %llu: %llu record%s with a time outside the recording's "
			 "span left out: damaged (ember verify lists them)", input, (unsigned long long)sum->input.first_bad_time_offset,
			 (unsigned long long)sum->input.bad_times,
			 sum->input.bad_times == 1 ? "" : "s");
}

/* n files the recording used, in some state (e.g. "missing here"): which,
 * and, when archive can, how to bring the recorded ones here. */
static void warn_files(const char *cmd, u64 n, const char *state_one,
		       const char *state_many, const char *names, bool archive_helps)
{
	bool one = n == 1;
	cmd_warn(cmd, "%llu file%s the recording used %s: %s; %s frames show as "
		 "[unknown]%s%s%s", (unsigned long long)n, one ? "" : "s",
		 one ? state_one : state_many, names, one ? "its" : "their",
		 archive_helps ? " (ember archive on the recording machine packs " : "",
		 archive_helps ? (one ? "it" : "them") : "",
		 archive_helps ? "; unpack the tar into ~/.debug)" : "");
}

/* Frames left unnamed because their files are not the recorded ones. */
static void warn_symbols(const char *cmd, const struct rp_summary *sum)
{
	const struct sym_kernel_info *k = &sum->kernel;
	if (k->used && k->unknown)
		cmd_warn(cmd, "the recording's kernel (build-id %s) is not this one (%s): "
			 "kernel frames show as [unknown]; put its kallsyms in "
			 "~/.debug/[kernel.kallsyms]/%s/kallsyms (ember archive on the "
			 "recording machine packs it)", k->recorded, k->running, k->recorded);
	if (sum->nmismatched)
		warn_files(cmd, sum->nmismatched, "has another build-id here",
			   "have other build-ids here", sum->mismatched, true);
	if (sum->nmissing)
		warn_files(cmd, sum->nmissing, "is missing here", "are missing here",
			   sum->missing, true);
	if (sum->ndeleted)
		warn_files(cmd, sum->ndeleted, "was deleted while it ran",
			   "were deleted while they ran", sum->deleted, false);
}

/* One line each for what a newer perf wrote that this ember skipped. */
static void note_newer(const char *cmd, const struct rp_summary *sum, const char *input)
{
	const struct pd_reader_stats *st = &sum->input;
	if (st->unknown_features)
		cmd_warn(cmd, "%s has %u header feature%s newer than this ember "
			 "(first: id %d), skipped; the rest reads as usual", input, st->unknown_features,
			 st->unknown_features == 1 ? "" : "s", st->first_unknown_feature);
	if (st->unknown_read_formats)
		cmd_warn(cmd, "%s: %u event%s read counter values in a layout newer than this "
			 "ember (read_format): their samples show without call chains",
			 input, st->unknown_read_formats, st->unknown_read_formats == 1 ? "" : "s");
}

void rp_warn_view(const char *cmd, const struct rp_summary *sum, const char *input,
		  const char *lost_effect)
{
	warn_incomplete(cmd, sum, input);
	rp_warn_empty_intervals(cmd, sum);
	warn_symbols(cmd, sum);
	note_newer(cmd, sum, input);
	if (sum->lost)
		cmd_warn(cmd, "%llu events were lost while recording: %s (use a larger %s)",
			 (unsigned long long)sum->lost, lost_effect,
			 sum->live ? "--mmap-pages" : "record -m");
	if (sum->input_error)
		cmd_error(cmd, "%s: %s (the figures cover what came before)", input, sum->error);
}

/* Intervals skipped as empty, in one line. */
void rp_warn_empty_intervals(const char *cmd, const struct rp_summary *sum)
{
	if (!sum->empty_intervals)
		return;
	cmd_warn(cmd, "%llu empty intervals not shown, in %llu run%s of %d or more (the longest "
		 "%.6f - %.6f s: a gap in the recording, or a damaged time)",
		 (unsigned long long)sum->empty_intervals, (unsigned long long)sum->empty_runs,
		 sum->empty_runs == 1 ? "" : "s", EMPTY_RUN_MIN, sum->empty_from / 1e9,
		 sum->empty_to / 1e9);
}

void rp_warn_summary(const char *cmd, const struct rp_summary *sum, const char *input)
{
	warn_incomplete(cmd, sum, input);
	rp_warn_empty_intervals(cmd, sum);
	warn_symbols(cmd, sum);
	note_newer(cmd, sum, input);
	if (sum->input_error)
		cmd_error(cmd, "%s: %s (the output covers what came before)", input, sum->error);
}
