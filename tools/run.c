/* run.c - runs a tool: opens the recording (a file, or the live engine's
 * stream), lets the tool find its tracepoints, drives its sink through
 * the replay, and hands its notes and what was lost to the command
 * (cmd/cmd-tools.c), which says them. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "tools/tools.h"

/* The sink a tool runs under: its intervals (--interval, each printed
 * and reset), and the end at --count. */
struct counted {
	struct rp_sink inner;
	const struct tool *t;
	const struct tool_env *env;
	struct live *live;         /* NULL for a file */
	u64 interval_ns;
	u64 left;
	u64 base;                  /* where the first interval began */
	bool done, ticked;
};

void tool_print_interval(const struct tool *t, double secs)
{
	fprintf(t->out, "[%.3f s]\n", secs);
	t->print(t->ctx, t->out);
	fputc('\n', t->out);
	fflush(t->out);
	if (t->reset)
		t->reset(t->ctx);
}

void tool_note(const struct tool_env *env, const char *fmt, ...)
{
	const struct tool *t = env ? env->tool : NULL;
	if (!t || !t->note)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->note(t, msg);
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
	if (tool_strings_take(c->env->strings, c->env, s))
		return 0;          /* a path probe's hit, for its sys_enter */
	int rc = !c->done && c->inner.sample ? c->inner.sample(c->inner.ctx, s) : 0;
	tool_strings_done(c->env->strings, s);
	return rc;
}

static int counted_event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct counted *c = ctx;
	if (ev->type == PERF_RECORD_LOST || ev->type == PERF_RECORD_LOST_SAMPLES)
		tool_strings_forget(c->env->strings);
	return !c->done && c->inner.event ? c->inner.event(c->inner.ctx, ev, t) : 0;
}

/* Live, each round of the stream (every 100 ms, events or none): the
 * tool's, then what it printed goes out (a pipe's stdout is buffered),
 * so a line-per-event tool's lines come as the events do. */
static int counted_round(void *ctx)
{
	struct counted *c = ctx;
	int rc = !c->done && c->inner.round ? c->inner.round(c->inner.ctx) : 0;
	fflush(c->t->out);
	return rc;
}

/* Without --interval, a summary tool prints the whole recording. */
static int counted_finish(void *ctx)
{
	struct counted *c = ctx;
	if (c->t->print && !c->ticked)
		c->t->print(c->t->ctx, c->t->out);
	return c->inner.finish ? c->inner.finish(c->inner.ctx) : 0;
}

/* A tool's replay: the replay, what the tool sees of it, and the sink
 * it runs under. */
struct tool_replay {
	struct rp_opts *o;
	struct replay *r;
	struct tool_env env;
	struct counted c;
};

struct tool_replay *tool_replay_open(struct tool *t, const struct tool_target *tg,
				     struct rp_opts *o, struct live *live)
{
	o->callchains = t->callchains;
	o->interval_ns = (u64)(tg->live.interval * 1e9 + 0.5);
	o->tracing = true;         /* the tools decode tracepoints by field name */
	o->filter = tg->filter;    /* tg's lists: taken back before the end */
	struct tool_replay *x = xcalloc(1, sizeof(*x));
	x->o = o;
	x->r = rp_open(o);
	if (!x->r)
		goto fail;
	x->env = (struct tool_env){ .reader = rp_reader(x->r), .out = t->out,
				    .filter = &o->filter, .tool = t };
	if (pd_trace_open_ids(x->env.reader, &x->env.trace, NULL, 0, NULL, NULL) < 0) {
		err_prefix("%s: tracing data", o->input);
		goto fail;
	}
	x->env.strings = tool_strings_new(&x->env);
	if (t->start && t->start(t->ctx, &x->env) < 0)
		goto fail;
	x->c = (struct counted){ .inner = t->sink, .t = t, .env = &x->env, .live = live,
				 .interval_ns = o->interval_ns, .left = tg->live.count };
	return x;
fail:;
	/* The reason, kept across the close. */
	char why[1024];
	snprintf(why, sizeof(why), "%s", err_msg());
	tool_replay_close(x);
	err_set("%s", why);
	return NULL;
}

int tool_replay_run(struct tool_replay *x)
{
	struct rp_sink sink = { .ctx = &x->c, .sample = counted_sample, .event = counted_event,
				 .tick = counted_tick, .round = counted_round,
				 .finish = counted_finish };
	return rp_run(x->r, &sink) < 0 && !x->c.done ? -1 : 0;
}

const struct rp_summary *tool_replay_summary(const struct tool_replay *x)
{
	return rp_summary(x->r);
}

bool tool_replay_counted_out(const struct tool_replay *x)
{
	return x->c.done;
}

void tool_replay_close(struct tool_replay *x)
{
	if (x->r)
		rp_close(x->r);
	tool_strings_free(x->env.strings);
	x->o->filter = (struct rp_filter){0};
	free(x);
}

bool tool_counting_fits(const struct tool *t, const struct tool_target *tg)
{
	/* Counts need no recording: counters, unless -o asks for one or a
	 * filter needs each event's task, CPU or time. */
	return !tg->input && !tg->live.output && t->count_events && !rp_filter_used(&tg->filter);
}

void tool_free(struct tool *t)
{
	if (!t)
		return;
	if (t->free)
		t->free(t->ctx);
	free(t);
}
