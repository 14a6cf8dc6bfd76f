/* run.c - runs a tool: opens the recording (a file, or the live engine's
 * stream), lets the tool find its tracepoints, drives its sink through
 * the replay, and says what was lost. */
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "tools/tools.h"

/* The sink a tool runs under: its intervals (--interval, each printed
 * and reset), and the end at --count. */
struct counted {
	struct rp_sink inner;
	const struct tool *t;
	struct live *live;         /* NULL for a file */
	u64 interval_ns;
	u64 left;
	u64 base;                  /* where the first interval began */
	bool done, ticked;
};

void tool_print_interval(const struct tool *t, double secs)
{
	fprintf(stdout, "[%.3f s]\n", secs);
	t->print(t->ctx, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	if (t->reset)
		t->reset(t->ctx);
}

/* A summary tool's interval: "[seconds since the first interval began]",
 * what it gathered, then a fresh start.  The first interval begins at the
 * first event; live, the ticks come on the recording's clock, events or
 * none. */
static int summary_tick(struct counted *c, u64 end)
{
	if (!c->ticked)
		c->base = end > c->interval_ns ? end - c->interval_ns : 0;
	tool_print_interval(c->t, end > c->base ? (double)(end - c->base) / 1e9 : 0.0);
	c->ticked = true;
	return 0;
}

/* After the last --count interval: a file stops here; live, the recording
 * is told to stop and the replay reads what is left of its stream, which
 * the tool no longer sees. */
static int counted_tick(void *ctx, u64 end, bool last)
{
	struct counted *c = ctx;
	if (c->done)
		return 0;
	int rc = c->t->print ? summary_tick(c, end)
		 : c->inner.tick ? c->inner.tick(c->inner.ctx, end, last) : 0;
	if (rc == 0 && c->left && --c->left == 0) {
		c->done = true;
		if (c->live) {
			live_stop(c->live);
			return 0;
		}
		err_set("done");
		return -1;
	}
	return rc;
}

static int counted_sample(void *ctx, const struct rp_sample *s)
{
	struct counted *c = ctx;
	return !c->done && c->inner.sample ? c->inner.sample(c->inner.ctx, s) : 0;
}

static int counted_event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct counted *c = ctx;
	return !c->done && c->inner.event ? c->inner.event(c->inner.ctx, ev, t) : 0;
}

/* Live, each round of the stream (every 100 ms, events or none): the
 * tool's, then what it printed goes out (a pipe's stdout is buffered),
 * so a line-per-event tool's lines come as the events do. */
static int counted_round(void *ctx)
{
	struct counted *c = ctx;
	int rc = !c->done && c->inner.round ? c->inner.round(c->inner.ctx) : 0;
	fflush(stdout);
	return rc;
}

/* Without --interval, a summary tool prints the whole recording. */
static int counted_finish(void *ctx)
{
	struct counted *c = ctx;
	if (c->t->print && !c->ticked)
		c->t->print(c->t->ctx, stdout);
	return c->inner.finish ? c->inner.finish(c->inner.ctx) : 0;
}

static void say_losses(const char *cmd, const struct rp_summary *sum)
{
	if (sum->lost)
		cmd_warn(cmd, "%llu events lost at the ring: the figures miss them",
			 (unsigned long long)sum->lost);
	if (sum->input_error)
		cmd_error(cmd, "%s", sum->error);
}

/* Replays o's input (a file, or live's stream) into the tool; the exit
 * status, failures printed. */
static int replay_tool(struct tool *t, const struct tool_target *tg, struct rp_opts *o,
		       struct live *live)
{
	o->callchains = t->callchains;
	o->interval_ns = (u64)(tg->live.interval * 1e9 + 0.5);
	o->tracing = true;         /* the tools decode tracepoints by field name */
	o->filter = tg->filter;    /* tg's lists: taken back before the end */
	int rc = EXIT_RUNTIME;
	struct replay *r = rp_open(o);
	if (!r) {
		cmd_error(t->name, "%s", err_msg());
		o->filter = (struct rp_filter){0};
		return rc;
	}
	struct tool_env env = { .reader = rp_reader(r), .out = stdout, .filter = &o->filter };
	if (pd_trace_open_ids(env.reader, &env.trace, NULL, 0, NULL, NULL) < 0) {
		cmd_error(t->name, "%s: tracing data: %s", o->input, err_msg());
		goto close;
	}
	if (t->start && t->start(t->ctx, &env) < 0) {
		cmd_error(t->name, "%s", err_msg());
		goto close;
	}
	struct counted c = { .inner = t->sink, .t = t, .live = live,
			     .interval_ns = o->interval_ns, .left = tg->live.count };
	struct rp_sink sink = { .ctx = &c, .sample = counted_sample, .event = counted_event,
				 .tick = counted_tick, .round = counted_round,
				 .finish = counted_finish };
	if (rp_run(r, &sink) < 0 && !c.done)
		cmd_error(t->name, "%s", err_msg());
	else
		rc = EXIT_OK;
	fflush(stdout);
	say_losses(t->name, rp_summary(r));
	if (rp_summary(r)->input_error && !c.done)
		rc = EXIT_RUNTIME;
close:
	rp_close(r);
	o->filter = (struct rp_filter){0};
	return rc;
}

/* Live: the tool's events recorded on a thread of this process (live/),
 * its stream replayed as it comes; Ctrl-C, SIGTERM and SIGHUP end
 * the recording, the tool prints what it gathered and the exit is 0 (or the
 * command's status). */
static int run_live(struct tool *t, struct tool_target *tg)
{
	struct rp_opts o;
	rp_opts_init(&o);
	/* Each line as it is printed: `execsnoop > file` keeps every line
	 * the tool showed, however it ends. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	tg->live.tool = t->name;
	tg->live.events = tg->events.v;
	tg->live.nevents = tg->events.n;
	bool usage;
	struct live *l = live_start(&tg->live, REC_LIVE_TOOL, &o, &usage);
	int rc;
	if (!l) {
		cmd_error(t->name, "%s", err_msg());
		rc = usage ? EXIT_USAGE : EXIT_RUNTIME;
	} else {
		rc = replay_tool(t, tg, &o, l);
		rc = live_end(l, t->name, rc);
	}
	rp_opts_free(&o);
	return rc;
}

int tool_run(struct tool *t, struct tool_target *tg)
{
	if (rp_filter_refuse(&tg->filter, RP_FILTER_ALL & ~t->refused, t->name) < 0) {
		cmd_error(t->name, "%s", err_msg());
		return EXIT_USAGE;
	}
	/* Counts need no recording: counters, unless -o asks for one or a
	 * filter needs each event's task, CPU or time. */
	if (!tg->input && !tg->live.output && t->count_events && !rp_filter_used(&tg->filter)) {
		int rc = tool_run_counting(t, tg);
		if (rc >= 0)
			return rc;
	}
	if (!tg->input)
		return run_live(t, tg);
	struct rp_opts o;
	rp_opts_init(&o);
	o.input = tg->input;
	int rc = replay_tool(t, tg, &o, NULL);
	rp_opts_free(&o);
	return rc;
}

void tool_free(struct tool *t)
{
	if (!t)
		return;
	if (t->free)
		t->free(t->ctx);
	free(t);
}
