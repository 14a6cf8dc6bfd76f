/* run.c - runs a tool: opens the recording (a file, or the live
 * recorder's stream), lets the tool find its tracepoints, drives its sink
 * through the replay, and says what was lost. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "report/tools/tools-internal.h"

/* The live recorder, for the stop signals to reach (a signal handler
 * has nowhere else to look). */
static volatile sig_atomic_t live_recorder;

static void forward_stop(int sig)
{
	(void)sig;
	if (live_recorder > 0)
		kill((pid_t)live_recorder, SIGINT);
}

/* --count: the sink's tick passes through here and stops the replay once
 * the last interval is printed. */
struct counted {
	struct rp_sink inner;
	const struct tool *t;
	u64 left;
	u64 first_time;
	bool done, ticked;
};

/* A summary tool's interval: "[seconds since the first event]", what it
 * gathered, then a fresh start. */
static int summary_tick(struct counted *c, u64 end)
{
	fprintf(stdout, "[%.3f s]\n", c->first_time && end > c->first_time
		? (double)(end - c->first_time) / 1e9 : 0.0);
	c->t->print(c->t->ctx, stdout);
	fputc('\n', stdout);
	if (c->t->reset)
		c->t->reset(c->t->ctx);
	c->ticked = true;
	return 0;
}

static int counted_tick(void *ctx, u64 end, bool last)
{
	struct counted *c = ctx;
	if (c->done)
		return 0;
	int rc = c->t->print ? summary_tick(c, end)
		 : c->inner.tick ? c->inner.tick(c->inner.ctx, end, last) : 0;
	if (rc == 0 && c->left && --c->left == 0) {
		c->done = true;
		err_set("done");
		return -1;
	}
	return rc;
}

static int counted_sample(void *ctx, const struct rp_sample *s)
{
	struct counted *c = ctx;
	if (!c->first_time)
		c->first_time = s->s->time;
	return c->inner.sample ? c->inner.sample(c->inner.ctx, s) : 0;
}

static int counted_event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct counted *c = ctx;
	if (!c->first_time && ev->has_time)
		c->first_time = ev->s.time;
	return c->inner.event ? c->inner.event(c->inner.ctx, ev, t) : 0;
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

/* 0, or the exit status of a failure (printed). */
static int replay_tool(struct tool *t, const struct tool_target *tg, const char *input,
		       struct counted *c, char *open_error)
{
	struct rp_opts o;
	rp_opts_init(&o);
	o.input = input;
	o.callchains = t->callchains;
	o.interval_ns = tg->interval_ns;
	o.tracing = true;          /* the tools decode tracepoints by field name */
	int rc = EXIT_RUNTIME;
	struct replay *r = rp_open(&o);
	if (!r) {
		/* Live, the recorder says why its stream is empty. */
		if (open_error)
			snprintf(open_error, 512, "%s", err_msg());
		else
			cmd_error(t->name, "%s", err_msg());
		goto out;
	}
	struct tool_env env = { .reader = rp_reader(r), .out = stdout };
	if (pd_trace_open_ids(env.reader, &env.trace, NULL, 0, NULL, NULL) < 0) {
		cmd_error(t->name, "%s: tracing data: %s", input, err_msg());
		goto close;
	}
	if (t->start && t->start(t->ctx, &env) < 0) {
		cmd_error(t->name, "%s", err_msg());
		goto close;
	}
	c->inner = t->sink;
	c->t = t;
	c->left = tg->count;
	struct rp_sink sink = { .ctx = c, .sample = counted_sample, .event = counted_event,
				 .tick = counted_tick, .finish = counted_finish };
	if (rp_run(r, &sink) < 0 && !c->done)
		cmd_error(t->name, "%s", err_msg());
	else
		rc = EXIT_OK;
	fflush(stdout);
	say_losses(t->name, rp_summary(r));
	if (rp_summary(r)->input_error && !c->done)
		rc = EXIT_RUNTIME;
close:
	rp_close(r);
out:
	rp_opts_free(&o);
	return rc;
}

/* The recorder reads our standard input's place; the replay reads its
 * stream as standard input ("-"). */
static int run_live(struct tool *t, const struct tool_target *tg)
{
	struct tool_live l;
	int keep_stdin = fcntl(0, F_DUPFD_CLOEXEC, 0);
	if (tool_live_start(&l, t->name, tg) < 0) {
		cmd_error(t->name, "%s", err_msg());
		close(keep_stdin);
		return EXIT_RUNTIME;
	}
	live_recorder = l.recorder;
	struct sigaction sa = { .sa_handler = forward_stop }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	dup2(l.fd, 0);
	struct counted c = {0};
	char open_error[512] = "";
	int rc = replay_tool(t, tg, "-", &c, open_error);
	int rec = tool_live_stop(&l, c.done || rc != EXIT_OK);
	close(0);
	live_recorder = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	dup2(keep_stdin, 0);
	close(keep_stdin);
	/* The recorder said why it failed; a Ctrl-C or a command's own
	 * status comes back as record gives it. */
	if (open_error[0] && !rec)
		cmd_error(t->name, "the recorder's stream: %s", open_error);
	if ((rc == EXIT_OK || open_error[0]) && !c.done && rec)
		rc = rec;
	return rc;
}

int tool_run(struct tool *t, struct tool_target *tg)
{
	if (tg->input) {
		struct counted c = {0};
		return replay_tool(t, tg, tg->input, &c, NULL);
	}
	return run_live(t, tg);
}

void tool_free(struct tool *t)
{
	if (!t)
		return;
	if (t->free)
		t->free(t->ctx);
	free(t);
}
