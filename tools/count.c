/* count.c - a summary tool's counting mode: live and without -o, a tool
 * that needs only how often each of its events happened opens them as
 * counters (pmc/stat's counting run), read at each --interval and at the
 * end, instead of sampling them into the ring: nothing is lost.  The
 * command (cmd/cmd-tools.c) runs it in steps and says what it found. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/child.h"
#include "pmc/stat/stat.h"
#include "tools/tools.h"

/* One counting run of a tool. */
struct tool_counting {
	struct tool *t;
	const struct tool_target *tg;
	struct pmc_list events;
	u64 *counts;               /* per event: one interval's */
	u64 left;                  /* --count intervals to go; 0: no limit */
	bool done;                 /* --count reached: later ticks are not shown */
	volatile sig_atomic_t *stop;
	struct stop_handlers stop_h;
	bool stopping;             /* stop_h installed */
	pid_t *tids;
	int *cpus;
	struct pmc_run_result res;
	bool ran;                  /* res holds a run's */
	struct tool_counted said;  /* what the command says of it */
};

/* Hands the tool each event's count over every CPU and task (scaled to
 * the enabled time if one ever shared the PMU: tracepoints never do). */
static void hand_counts(struct tool_counting *k, const struct pmc_reading *r,
			const struct pmc_counters *c)
{
	size_t per = (size_t)c->ncpus * (size_t)c->ntids;
	for (size_t ev = 0; ev < k->events.n; ev++) {
		double sum = 0;
		for (size_t j = 0; j < per; j++) {
			const struct pmc_reading *one = &r[ev * per + j];
			k->said.scaled |= one->running < one->enabled;
			sum += pmc_scaled(one);
		}
		k->counts[ev] = (u64)(sum + 0.5);
	}
	k->t->counted(k->t->ctx, &k->events, k->counts);
}

static void on_tick(void *ctx, double ts, double span_ns, const struct pmc_reading *delta,
		    const struct pmc_counters *c)
{
	struct tool_counting *k = ctx;
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

/* Events the kernel would not count: how many, the first one named. */
static void find_unopened(struct tool_counting *k)
{
	struct tool_counted *e = &k->said;
	e->nevents = k->events.n;
	for (size_t i = 0; i < k->events.n; i++)
		if (k->res.err[i] && !e->unopened++) {
			e->first = k->events.v[i].name;
			e->first_err = -k->res.err[i];
		}
}

struct tool_counting *tool_counting_new(struct tool *t, const struct tool_target *tg)
{
	struct pmc_list events = {0};
	if (t->count_events(t->ctx, &events) < 0) {
		pmc_list_free(&events);
		return NULL;
	}
	struct tool_counting *k = xcalloc(1, sizeof(*k));
	*k = (struct tool_counting){ .t = t, .tg = tg, .events = events, .left = tg->live.count,
				     .counts = xcalloc(events.n, sizeof(u64)) };
	return k;
}

const struct tool_counted *tool_counting_run(struct tool_counting *k, bool *usage)
{
	const struct tool_target *tg = k->tg;
	struct pmc_run_opts ro = { .events = &k->events, .duration_s = tg->live.duration,
				   .interval_ms = tg->live.interval * 1e3, .tick = on_tick,
				   .ctx = k, .close_later = true,
				   /* as live tools do: stdout is the tool's lines */
				   .stdout_taken = true };
	*usage = true;
	if (set_target(tg, &k->events, &ro, &k->tids, &k->cpus) < 0)
		return NULL;
	*usage = false;
	k->stop = ro.stop = stop_install(&k->stop_h, false);
	k->stopping = true;
	if (pmc_run(&ro, &k->res) < 0)
		return NULL;
	k->ran = true;
	find_unopened(k);
	return &k->said;
}

void tool_counting_total(struct tool_counting *k)
{
	struct pmc_counters c = { .ncpus = k->res.ncpus, .ntids = k->res.ntids };
	hand_counts(k, k->res.total, &c);
	k->t->print(k->t->ctx, k->t->out);
	fflush(k->t->out);
}

int tool_counting_status(const struct tool_counting *k, int *die_sig)
{
	return stop_exit_status(&k->res.end, die_sig);
}

void tool_counting_free(struct tool_counting *k)
{
	if (!k)
		return;
	if (k->stopping)
		stop_restore(&k->stop_h);
	if (k->ran)
		pmc_run_result_free(&k->res);
	free(k->counts);
	free(k->tids);
	free(k->cpus);
	pmc_list_free(&k->events);
	free(k);
}
