/* count.c - a summary tool's counting mode: live and without -o, a tool
 * that needs only how often each of its events happened opens them as
 * counters (pmc/stat's counting run), read at each --interval and at the
 * end, instead of sampling them into the ring: nothing is lost. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/child.h"
#include "pmc/stat/stat.h"
#include "tools/tools.h"

/* One counting run of a tool. */
struct counting {
	struct tool *t;
	const struct pmc_list *events;
	u64 *counts;               /* per event: one interval's */
	u64 left;                  /* --count intervals to go; 0: no limit */
	bool done;                 /* --count reached: later ticks are not shown */
	bool scaled;               /* a counter ran less than it was enabled */
	volatile sig_atomic_t *stop;
};

/* Hands the tool each event's count over every CPU and task (scaled to
 * the enabled time if one ever shared the PMU: tracepoints never do). */
static void hand_counts(struct counting *k, const struct pmc_reading *r, const struct pmc_counters *c)
{
	size_t per = (size_t)c->ncpus * (size_t)c->ntids;
	for (size_t ev = 0; ev < k->events->n; ev++) {
		double sum = 0;
		for (size_t j = 0; j < per; j++) {
			const struct pmc_reading *one = &r[ev * per + j];
			k->scaled |= one->running < one->enabled;
			sum += pmc_scaled(one);
		}
		k->counts[ev] = (u64)(sum + 0.5);
	}
	k->t->counted(k->t->ctx, k->events, k->counts);
}

static void on_tick(void *ctx, double ts, double span_ns, const struct pmc_reading *delta,
		    const struct pmc_counters *c)
{
	struct counting *k = ctx;
	if (k->done)
		return;
	hand_counts(k, delta, c);
	tool_print_interval(k->t, ts);
	if (k->left && --k->left == 0) {
		k->done = true;
		*k->stop = 1;      /* pmc_run ends (a command gets SIGINT) */
	}
}

/* Per CPU (-a, the default, or -C), the tool's own syscalls left out as
 * the sampling path leaves them; per task with inherit for -p (each
 * thread; on -C's CPUs only, when given) and a command (pmc_run's). */
static int set_target(const struct tool_target *tg, struct pmc_list *events,
		      struct pmc_run_opts *ro, pid_t **tids, int **cpus)
{
	const struct live_opts *lo = &tg->live;
	struct pmc_target *t = &ro->target;
	ro->command = lo->command;
	if (lo->command && child_command_check(lo->command[0]) < 0)
		return -1;
	if (lo->pids) {
		int n = 0;
		for (int i = 0; i < lo->npids; i++)
			if (pmc_tasks_of(lo->pids[i], tids, &n) < 0)
				return -1;
		*t = (struct pmc_target){ .tids = *tids, .ntids = n, .inherit = true,
					  .cpus = lo->cpus, .ncpus = lo->ncpus };
		ro->watch = lo->pids;
		ro->nwatch = lo->npids;
		return 0;
	}
	if (lo->command && !lo->cpus && !lo->all)
		return 0;
	int n = lo->cpus ? lo->ncpus : cpus_online(cpus);
	if (n < 0)
		return -1;
	*t = (struct pmc_target){ .cpus = lo->cpus ? lo->cpus : *cpus, .ncpus = n };
	char self[48];
	snprintf(self, sizeof(self), "common_pid != %d", (int)getpid());
	for (size_t i = 0; i < events->n; i++) {
		struct pmc_event *e = &events->v[i];
		if (e->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		char *f = e->filter ? xasprintf("(%s) && %s", e->filter, self) : xstrdup(self);
		free(e->filter);
		e->filter = f;
	}
	return 0;
}

/* Events the kernel would not count: said once, the first one named. */
static void say_unopened(const char *tool, const struct pmc_list *events, const int *err)
{
	size_t n = 0, first = 0;
	for (size_t i = 0; i < events->n; i++)
		if (err[i] && !n++)
			first = i;
	if (n)
		cmd_warn(tool, "%zu of %zu events could not be counted here, %s among them (%s): "
			 "their counts are missing", n, events->n, events->v[first].name,
			 strerror(-err[first]));
}

/* The tools' exit status: the command's, else 0 (Ctrl-C included). */
static int exit_status(const struct child_end *end)
{
	int die_sig;
	int rc = stop_exit_status(end, &die_sig);
	return die_sig ? EXIT_OK : rc;
}

static int run(struct counting *k, const struct tool_target *tg, struct pmc_run_opts *ro)
{
	struct pmc_run_result res;
	if (pmc_run(ro, &res) < 0) {
		cmd_error(k->t->name, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	say_unopened(k->t->name, k->events, res.err);
	if (!tg->live.interval) {
		struct pmc_counters c = { .ncpus = res.ncpus, .ntids = res.ntids };
		hand_counts(k, res.total, &c);
		k->t->print(k->t->ctx, stdout);
		fflush(stdout);
	}
	if (k->scaled)
		cmd_warn(k->t->name, "some counters ran only part of the time (time_running < "
			 "time_enabled): their counts are scaled estimates");
	int rc = exit_status(&res.end);
	pmc_run_result_free(&res);
	return rc;
}

int tool_run_counting(struct tool *t, const struct tool_target *tg)
{
	struct pmc_list events = {0};
	if (t->count_events(t->ctx, &events) < 0) {
		cmd_warn(t->name, "cannot count: %s; sampling instead", err_msg());
		pmc_list_free(&events);
		return -1;
	}
	pid_t *tids = NULL;
	int *cpus = NULL;
	struct counting k = { .t = t, .events = &events, .left = tg->live.count,
			      .counts = xcalloc(events.n, sizeof(u64)) };
	struct pmc_run_opts ro = { .events = &events, .duration_s = tg->live.duration,
				   .interval_ms = tg->live.interval * 1e3, .tick = on_tick,
				   .ctx = &k, .close_later = true,
				   /* as live tools do: stdout is the tool's lines */
				   .stdout_taken = true };
	int rc = EXIT_USAGE;
	if (set_target(tg, &events, &ro, &tids, &cpus) < 0) {
		cmd_error(t->name, "%s", err_msg());
	} else {
		struct stop_handlers h;
		k.stop = ro.stop = stop_install(&h, false);
		rc = run(&k, tg, &ro);
		stop_restore(&h);
	}
	free(k.counts);
	free(tids);
	free(cpus);
	pmc_list_free(&events);
	return rc;
}
