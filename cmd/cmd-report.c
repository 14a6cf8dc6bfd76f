/* cmd-report.c - `ember report`: the summary of a recording by comm, dso,
 * symbol or source line, with self/children percentages and call graphs. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "live/live.h"
#include "views/hist/hist.h"

struct report_args {
	struct rp_opts rp;
	struct hist_opts hist;
	int children;              /* -1 unset, 0 no, 1 yes */
	bool graph_set;            /* -g given */
	int branches;              /* -1 unset, 0 no, 1 yes */
	int argc;                  /* for "-g none": the next word */
	char **argv;
	struct live_view lv;       /* a target: report while recording */
};

static int parse_graph(struct report_args *a, const char *arg)
{
	a->graph_set = true;
	if (!arg || !strcmp(arg, "caller") || !strncmp(arg, "graph", 5))
		a->hist.graph = HG_CALLER;
	else if (!strcmp(arg, "callee"))
		a->hist.graph = HG_CALLEE;
	else if (!strcmp(arg, "none"))
		a->hist.graph = HG_NONE;
	else {
		err_set("bad -g '%s' (expected caller, callee or none)", arg);
		return -1;
	}
	return 0;
}

/* Whether arg names a call-graph mode (parse_graph's words). */
static bool graph_word(const char *arg)
{
	return arg && (!strcmp(arg, "caller") || !strcmp(arg, "callee") ||
		       !strcmp(arg, "none") || !strncmp(arg, "graph", 5));
}

#define A(f) offsetof(struct report_args, f)

static int set_sort(void *field, const char *arg)
{
	return hist_parse_sort(field, arg);
}

/* -g[MODE], and "-g none" as perf takes it: getopt gives an optional
 * argument only when attached. */
static int set_graph(void *field, const char *arg)
{
	struct report_args *a = field;
	if (!arg && optind < a->argc && graph_word(a->argv[optind]))
		arg = a->argv[optind++];
	return parse_graph(a, arg);
}

static int set_graph_caller(void *field, const char *arg)
{
	struct report_args *a = field;
	a->graph_set = true;
	a->hist.graph = HG_CALLER;
	return 0;
}

static int set_double(void *field, const char *arg)
{
	return parse_double(arg, field);
}

/* --stdio: accepted for perf users, text being the only output. */
static int accept(void *field, const char *arg)
{
	return 0;
}

static const struct opt options[] = {
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_CALLBACK('s', "sort", OPT_ARG, A(hist), "KEYS",
	  "comm,pid,dso,sym,cpu,srcline (default comm,dso,sym)\n"
	  "comm: the thread's name at each sample (a thread\n"
	  "renamed shows in a row per name).  pid: perf's key,\n"
	  "one row per thread (tid is another name for it),\n"
	  "shown TID:COMM with the thread's latest name.\n"
	  "srcline: file:line of the sampled address; with\n"
	  "--children a caller's row is the line of its call\n"
	  "(as script -F srcline shows it; perf 6.1 prints\n"
	  "SYM+garbage there).  No line known: SYM+OFFSET\n"
	  "(decimal), else DSO[ADDR], else ??:0, as perf prints\n"
	  "when its lookup fails (perf's addr2line says ??:0 for\n"
	  "some files without DWARF).  Long lines are not cut.", set_sort),
	OPT_SET(0, "children", A(children), 1, 0,
	  "add callers' inclusive time (default with callchains)"),
	OPT_SET(0, "no-children", A(children), 0, 0, "self time only"),
	OPT_CALLBACK('g', "call-graph", OPT_OPT_ARG, 0, "caller|callee|none",
	  "print call trees under each entry", set_graph),
	OPT_CALLBACK('G', NULL, OPT_NO_ARG, 0, NULL, "-g caller", set_graph_caller),
	OPT_CALLBACK(0, "percent-limit", OPT_ARG, A(hist.percent_limit), "P",
	  "hide entries under P percent", set_double),
	OPT_FALSE(0, "group", A(hist.no_group),
	  "an event group in one table, a column per member\n"
	  "(the default, as in perf, for files with groups)"),
	OPT_BOOL(0, "no-group", A(hist.no_group), "a section per event, group members too"),
	OPT_SET('b', "branch-stack", A(branches), 1, 0,
	  "count the samples' branches by source and target\n"
	  "(the default, as in perf, for files with branch stacks)"),
	OPT_SET(0, "no-branch-stack", A(branches), 0, 0,
	  "the usual table of the samples, with call graphs"),
	OPT_CALLBACK(0, "stdio", OPT_NO_ARG, 0, NULL,
	  "text output (the only kind; accepted for perf users)", accept),
	OPT_INCLUDE_AT(rp_view_opts, A(rp)),
	OPT_INCLUDE_AT(live_target_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_pid_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_interval_opts, A(lv.opts)),
	OPT_END,
};

const struct opt_cmd report_cmd = {
	.name = "report",
	.summary = "summarize a recording by comm, dso and symbol",
	.synopsis =
	"usage: ember report [-i FILE] [options]\n"
	"       ember report -a|-C CPUS|-p PIDS|-t TIDS [--interval SECS] [options]\n"
	"       ember report [options] -- command [args]\n"
	"\n"
	"Summarizes a recording (ember's or perf's perf.data) like perf report --stdio.\n"
	"Given a target it records while it reports, with no file (-o keeps one):\n"
	"one table at the end (Ctrl-C, --duration, the command's end), or one per\n"
	"--interval (on a file too), each under a line naming its span.  -g then\n"
	"records call chains as record -g does.\n"
	"\n",
	.opts = options,
	.column = 25,
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct report_args *a, int argc, char **argv)
{
	a->argc = argc;
	a->argv = argv;
	return live_view_parse(&a->lv, opt_parse(&report_cmd, argc, argv, a), argc, argv);
}

/* How user stacks were recovered, as comment lines after the table. */
static void print_unwind_summary(const struct rp_opts *o, const struct rp_summary *sum)
{
	const struct unw_stats *u = &sum->unwind;
	if (u->samples)
		printf("#\n# dwarf unwinding (%s): %llu user stacks, %llu frames, "
		       "%llu cut short by the stack copy, %llu taken further by the "
		       "other unwinder (asked for %llu)\n",
		       unw_backend_name(o->unwinder_set ? o->unwinder : UNW_BACKEND_DEFAULT),
		       (unsigned long long)u->samples, (unsigned long long)u->frames,
		       (unsigned long long)u->cut, (unsigned long long)u->second,
		       (unsigned long long)u->asked);
	if (u->leaf_checked)
		printf("#\n# leaf-fix: %llu of %llu frame-pointer chains had their leaf's "
		       "caller restored (--no-leaf-fix shows them as recorded)\n",
		       (unsigned long long)u->leaf_repaired, (unsigned long long)u->leaf_checked);
}

/* Whether any event samples branch stacks. */
static bool samples_branches(struct replay *rp)
{
	struct pd_reader *r = rp_reader(rp);
	for (size_t i = 0; i < pd_reader_nattrs(r); i++)
		if (pd_reader_attr(r, i)->attr.sample_type & PERF_SAMPLE_BRANCH_STACK)
			return true;
	return false;
}

/* 1 to report by branch, 0 not, -1 after saying -b cannot be.  By default
 * as perf: when the header marks the samples as having branch stacks. */
static int branch_mode(const struct report_args *a, struct replay *rp)
{
	if (a->branches == 0)
		return 0;
	bool have = samples_branches(rp);
	if (a->branches < 0)
		return have && pd_reader_feature(rp_reader(rp), PD_FEAT_BRANCH_STACK, NULL);
	if (!have) {
		cmd_error("report", "-b: %s has no branch stacks (record with -b, -j or "
			  "--call-graph lbr)", a->rp.input);
		return -1;
	}
	return 1;
}

/* The report by branch; the exit status. */
static int report_branches(struct report_args *a, struct replay *rp)
{
	rp_set_callchains(rp, false);
	rp_set_branches(rp, true);
	struct brtable *b = br_new(rp);
	struct rp_sink sink = br_sink(b);
	int rc = rp_run(rp, &sink);
	const struct rp_summary *sum = rp_summary(rp);
	if (rc == 0)
		br_print(b, stdout, sum);
	else
		cmd_error("report", "%s", err_msg());
	rp_warn_summary("report", sum, a->rp.input);
	br_free(b);
	return rc < 0 || sum->input_error ? EXIT_RUNTIME : EXIT_OK;
}

static int report_table(struct report_args *a, struct replay *rp, struct live *live)
{
	struct live_tables run = { .out = stdout, .live = live, .rp = rp,
				    .count = a->lv.opts.count };
	struct hist *h = NULL;
	struct hist_interval *iv = NULL;
	struct rp_sink sink;
	if (a->rp.interval_ns) {
		rp_set_release_files(rp, true);   /* a fresh table each interval */
		iv = hist_interval_new(&a->hist, rp, a->rp.interval_ns, stdout, live_after_table,
				      &run);
		sink = hist_interval_sink(iv);
	} else {
		h = hist_new(&a->hist, rp);
		sink = hist_sink(h);
		/* Its stacks settle into places before each release. */
		rp_set_release_files(rp, live != NULL);
	}
	int rc = rp_run(rp, &sink);
	const struct rp_summary *sum = rp_summary(rp);
	if (rc == 0 && h) {
		hist_print(h, stdout, sum);
		print_unwind_summary(&a->rp, sum);
		if (live)
			live_print_counts(stdout, live, sum);
	}
	if (rc < 0)
		cmd_error("report", "%s", err_msg());
	rp_warn_summary("report", rp_summary(rp), a->rp.input);
	hist_free(h);
	hist_interval_free(iv);
	return rc < 0 || sum->input_error ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	/* perf's default sort, comm,dso,sym (set as keys: nothing to fail). */
	struct report_args a = {
		.children = -1, .branches = -1,
		.hist = { .keys = { HK_COMM, HK_DSO, HK_SYM }, .nkeys = 3 },
		.lv = { .cmd = "report", .help = "report", .rp = &a.rp },
	};
	rp_opts_init(&a.rp);
	int rc = parse_args(&a, argc, argv);
	bool wants_chains = a.children == 1 || (a.graph_set && a.hist.graph != HG_NONE);
	a.lv.opts.callgraph = wants_chains ? REC_CG_ONLINE : REC_CG_NONE;
	if (rc < 0)
		rc = live_view_start(&a.lv, REC_LIVE_SAMPLES);
	if (rc >= 0)
		goto out;
	/* Big writes: reports run to tens of thousands of lines. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	a.rp.defer_kernel = true;
	struct replay *rp = rp_open(&a.rp);
	if (!rp) {
		cmd_error("report", "%s", err_msg());
		rc = EXIT_RUNTIME;
		goto out;
	}
	int by_branch = branch_mode(&a, rp);
	if (by_branch != 0) {
		rc = by_branch > 0 ? report_branches(&a, rp) : EXIT_USAGE;
	} else {
		bool chains = rp_has_callchains(rp);
		a.hist.children = a.children < 0 ? chains : a.children;
		/* As perf: call trees shown when recorded, callers first with
		 * children, callees first without. */
		if (!a.graph_set && chains)
			a.hist.graph = a.hist.children ? HG_CALLER : HG_CALLEE;
		rp_set_callchains(rp, chains && (a.hist.children || a.hist.graph != HG_NONE));
		rc = report_table(&a, rp, a.lv.live);
	}
	rp_close(rp);
out:
	rc = live_view_end(&a.lv, rc);
	rp_opts_free(&a.rp);
	return rc;
}
