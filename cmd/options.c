/* options.c - what the analysis commands share beyond the replay's own
 * option groups (replay-options.c): collapse's options (collapse and
 * flame) and the warnings after a replay. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

/* collapse's own options: callbacks on the struct collapse_args the
 * table includes them at. */
static int set_weight(void *field, const char *arg)
{
	struct collapse_args *ca = field;
	if (!strcmp(arg, "period") || !strcmp(arg, "samples")) {
		ca->c->weight_period = !strcmp(arg, "period");
		return 0;
	}
	err_set("bad --weight '%s' (expected samples or period)", arg);
	return -1;
}

static int set_annotate(void *field, const char *arg)
{
	((struct collapse_args *)field)->c->annotate = true;
	return 0;
}

static int set_srcline(void *field, const char *arg)
{
	((struct collapse_args *)field)->c->srcline = true;
	return 0;
}

/* Bare --pid/--tid name process frames; --pid=LIST filters. */
static int name_or_filter(struct collapse_args *ca, const char *arg, bool tid)
{
	if (arg)
		return (tid ? rp_set_tids : rp_set_pids)(&ca->rp->filter, arg);
	if (tid)
		ca->c->tid = true;
	else
		ca->c->pid = true;
	return 0;
}

static int set_pid(void *field, const char *arg)
{
	return name_or_filter(field, arg, false);
}

static int set_tid(void *field, const char *arg)
{
	return name_or_filter(field, arg, true);
}

const struct opt collapse_options[] = {
	OPT_CALLBACK(0, "weight", OPT_ARG, 0, "WHAT",
	  "samples (default) or period: sum each sample's period\n"
	  "(what stackcollapse-perf.pl does since 2022 when\n"
	  "perf script shows the period)", set_weight),
	OPT_CALLBACK(0, "annotate", OPT_NO_ARG, 0, NULL,
	  "mark kernel frames _[k] and JIT frames _[j]", set_annotate),
	OPT_CALLBACK(0, "pid", OPT_OPT_ARG, 0, "LIST",
	  "name the process frame comm-PID; --pid=LIST: only\n"
	  "these processes (note the '=')", set_pid),
	OPT_CALLBACK(0, "tid", OPT_OPT_ARG, 0, "LIST",
	  "name the process frame comm-PID/TID; --tid=LIST:\n"
	  "only these threads", set_tid),
	OPT_CALLBACK(0, "srcline", OPT_NO_ARG, 0, NULL,
	  "add \" file:line\" to each frame the DWARF has a line\n"
	  "for (an inline chain's outer frames: the call site)", set_srcline),
	OPT_END,
};

/* After them, the replay's groups collapse takes. */
const struct opt collapse_rp_options[] = {
	OPT_INCLUDE(rp_sample_opts),
	OPT_INCLUDE(rp_symbol_opts),
	OPT_INCLUDE(rp_unwind_opts),
	OPT_END,
};

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
	const struct empty_runs *e = &sum->empty;
	if (!e->intervals)
		return;
	cmd_warn(cmd, "%llu empty intervals not shown, in %llu run%s of %d or more (the longest "
		 "%.6f - %.6f s: a gap in the recording, or a damaged time)",
		 (unsigned long long)e->intervals, (unsigned long long)e->runs,
		 e->runs == 1 ? "" : "s", EMPTY_RUN_MIN, e->from / 1e9, e->to / 1e9);
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
