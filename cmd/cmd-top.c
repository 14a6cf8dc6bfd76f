/* cmd-top.c - `ember top`: the hottest symbols while they happen, as perf
 * top shows them: a full screen (plain ANSI) refreshed every -d seconds
 * with keys to sort, filter and expand callers, or report's table per
 * refresh with --stdio.  The options and the wiring: the screen is
 * views/top/ui.c's on screen/'s terminal view, which restores the
 * terminal on every way out. */
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "live/live.h"
#include "screen/screen.h"
#include "views/hist/hist.h"
#include "views/top/top.h"

#define CMD "top"

struct top_args {
	struct rp_opts rp;
	struct live_view lv;
	struct hist_opts keys;
	const char *sort;
	double delay;              /* -d */
	bool zero, stdio, graph, hide_kernel, hide_user;
};

#define A(f) offsetof(struct top_args, f)

/* -s KEYS: kept as given (the screen's prompt shows them) and parsed. */
static int set_sort(void *field, const char *arg)
{
	struct top_args *a = field;
	a->sort = arg;
	return hist_parse_sort(&a->keys, arg);
}

static const struct opt options[] = {
	OPT_DOUBLE('d', "delay", A(delay), "SECS", "seconds between refreshes (default 2)", 0,
		   "bad -d '%s': give the seconds between refreshes, e.g. -d 2"),
	OPT_BOOL('z', "zero", A(zero), "zero the counts at each refresh (default: decay by 1/8)"),
	OPT_CALLBACK('s', "sort", OPT_ARG, 0, "KEYS", "comm,pid,dso,sym,cpu (default dso,sym); pid: the\n"
	  "thread, TID:COMM (its name at the sample; tid: the same)", set_sort),
	OPT_BOOL('g', NULL, A(graph),
	  "record call chains (as record -g): children (inclusive)\n"
	  "weights, and callers to expand"),
	OPT_BOOL('K', "hide-kernel", A(hide_kernel), "hide kernel symbols"),
	OPT_BOOL('U', "hide-user", A(hide_user), "hide user symbols"),
	OPT_BOOL(0, "stdio", A(stdio),
	  "print each refresh as text: report's header lines and\n"
	  "table of that refresh's samples (as with -z), for scripts"),
	LIVE_COUNT_OPT(A(lv.opts), "exit after N refreshes"),
	OPT_INCLUDE_AT(live_target_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_pid_opts, A(lv.opts)),
	OPT_INCLUDE_AT(rp_sample_opts, A(rp)),
	OPT_INCLUDE_AT(rp_symbol_opts, A(rp)),
	OPT_END,
};

const struct opt_cmd top_cmd = {
	.name = CMD,
	.summary = "the hottest symbols, live, like perf top",
	.synopsis =
	"usage: ember top [-a | -C CPUS | -p PIDS | -t TIDS] [-d SECS] [options]\n"
	"\n"
	"Samples the system (or the targets) and shows the hottest symbols, refreshed\n"
	"every -d seconds; between refreshes the counts decay by 1/8 (-z zeroes\n"
	"them).  Keys: q quits; z toggles zeroing; s asks for sort keys; / asks for a\n"
	"regular expression that rows must match (empty: all); the arrows choose a\n"
	"row and Enter shows or hides its callers (with -g); K and U hide or show\n"
	"kernel and user symbols.  The top line says what the live path lost.\n"
	"\n",
	.opts = options,
	.column = 25,
	.notes = "Ctrl-C, SIGTERM and q restore the terminal and exit 0.\n",
};

/* ---- the full screen (views/top/ui.c on screen/) ------------------------------ */

struct top_run {
	struct top_ui *ui;
	struct top_table *t;
	struct screen *scr;
	struct replay *rp;
	struct live *live;
	u64 count;                 /* --count: refreshes before the end, 0 none */
};

/* What the header says of the live path now. */
static void live_now(void *ctx, struct top_ui_live *out)
{
	const struct top_run *r = ctx;
	out->lost = rp_summary(r->rp)->lost;
	out->backlog = live_backlog(r->live);
}

static int ui_sample(void *ctx, const struct rp_sample *s)
{
	struct top_run *r = ctx;
	top_add(r->t, s);
	return 0;
}

static int ui_tick(void *ctx, u64 end, bool last)
{
	struct top_run *r = ctx;
	if (last || live_stopping(r->live))
		return 0;
	if (top_ui_refresh(r->ui) >= r->count && r->count)
		live_stop(r->live);
	return 0;
}

static int ui_round(void *ctx)
{
	struct top_run *r = ctx;
	if (screen_take_redraw(r->scr))
		top_ui_draw(r->ui);             /* back from Ctrl-Z */
	if (!live_stopping(r->live) && !top_ui_keys(r->ui))
		live_stop(r->live);             /* q */
	return 0;
}

static int run_screen(struct top_args *a, struct replay *rp, struct live *live)
{
	struct top_run r = { .rp = rp, .live = live, .count = a->lv.opts.count };
	struct top_ui_opts o = { .sort = a->sort, .delay = a->delay, .zero = a->zero,
				 .graph = a->graph, .hide_kernel = a->hide_kernel,
				 .hide_user = a->hide_user, .live = live_now, .ctx = &r };
	r.t = top_new(&a->keys, a->graph);
	int rc = top_set_keys(r.t, &a->keys);
	if (rc == 0 && !(r.scr = screen_open(STDIN_FILENO, stdout)))
		rc = -1;
	if (rc == 0) {
		r.ui = top_ui_new(r.t, r.scr, &o);
		top_ui_draw(r.ui);
		struct rp_sink sink = { .ctx = &r, .sample = ui_sample, .tick = ui_tick,
					.round = ui_round };
		rc = rp_run(rp, &sink);
		screen_close(r.scr);
	}
	top_ui_free(r.ui);
	top_free(r.t);
	return rc;
}

/* --stdio: report's table per refresh, then the live counts. */
static int run_stdio(struct top_args *a, struct replay *rp, struct live *live)
{
	struct live_tables run = { .out = stdout, .live = live, .rp = rp,
				    .count = a->lv.opts.count };
	struct hist_opts h = a->keys;
	h.children = a->graph;
	h.graph = HG_NONE;
	struct hist_interval *iv = hist_interval_new(&h, rp, a->rp.interval_ns, stdout,
						     live_after_table, &run);
	struct rp_sink sink = hist_interval_sink(iv);
	int rc = rp_run(rp, &sink);
	hist_interval_free(iv);
	return rc;
}

/* ---- the command ------------------------------------------------------------- */

int cmd_top(int argc, char **argv)
{
	struct top_args a = { .delay = 2, .sort = "dso,sym",
			      .lv = { .cmd = CMD, .help = CMD, .all_by_default = true, .rp = &a.rp } };
	rp_opts_init(&a.rp);
	hist_parse_sort(&a.keys, a.sort);
	int rc = live_view_parse(&a.lv, opt_parse(&top_cmd, argc, argv, &a), argc, argv);
	if (rc < 0 && !a.stdio && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cmd_error(CMD, "the full screen needs a terminal: add --stdio for text");
		rc = EXIT_USAGE;
	}
	a.lv.opts.callgraph = a.graph ? REC_CG_ONLINE : REC_CG_NONE;
	a.rp.interval_ns = (u64)(a.delay * 1e9 + 0.5);
	if (rc < 0)
		rc = live_view_start(&a.lv, REC_LIVE_SAMPLES);   /* -a by default: always live */
	if (rc >= 0)
		goto out;
	struct live *live = a.lv.live;
	struct replay *rp = rp_open(&a.rp);
	rc = EXIT_RUNTIME;
	if (rp) {
		rp_set_callchains(rp, a.graph && rp_has_callchains(rp));
		/* The rows keep texts, --stdio's tables last a refresh. */
		rp_set_release_files(rp, true);
		int run = a.stdio ? run_stdio(&a, rp, live) : run_screen(&a, rp, live);
		rc = run < 0 ? EXIT_RUNTIME : EXIT_OK;
		if (run < 0)
			cmd_error(CMD, "%s", err_msg());
		rp_close(rp);
	} else {
		cmd_error(CMD, "%s", err_msg());
	}
out:
	rc = live_view_end(&a.lv, rc);
	rp_opts_free(&a.rp);
	return rc;
}
