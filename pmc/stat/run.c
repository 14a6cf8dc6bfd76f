/* run.c - one counting run of `ember stat`: start the command held at a
 * pipe until its counters are open (common/child.c), wait for it (or a
 * duration, or the watched processes to go), tick intervals, and read the
 * totals. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/child.h"
#include "pmc/stat/stat.h"

/* One run in progress. */
struct run {
	const struct pmc_run_opts *o;
	struct pmc_counters ctr;
	struct pmc_reading *prev, *now;
	struct held_child child;   /* pid 0 without a command */
	int *pidfds;     /* the command's or the watched processes' */
	int npidfds;
	pid_t *polled;   /* watched threads without a pidfd (old kernels) */
	int npolled;
	u64 t0;
	double last_tick;   /* ns since t0 of the previous tick */
};

/* Descriptors that become readable when the process (or, for -t, the
 * thread) exits.  A thread the kernel cannot give a pidfd for is looked
 * up in /proc at each wake-up instead, as perf does for all its targets. */
static void watch_pids(struct run *r)
{
	const struct pmc_run_opts *o = r->o;
	int n = r->child.pid ? 1 : o->nwatch;
	r->pidfds = xcalloc((size_t)(n ? n : 1), sizeof(int));
	r->polled = xcalloc((size_t)(n ? n : 1), sizeof(pid_t));
	for (int i = 0; i < n; i++) {
		pid_t pid = r->child.pid ? r->child.pid : o->watch[i];
		bool thread = !r->child.pid && o->watch_threads;
		int fd = child_pidfd_open(pid, thread);
		if (fd >= 0)
			r->pidfds[r->npidfds++] = fd;
		else if (thread)
			r->polled[r->npolled++] = pid;
	}
}

/* Gone: no /proc entry, or only a zombie or dead task left of it. */
static bool task_gone(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	char *text = read_text_file(path, NULL);
	if (!text)
		return true;
	const char *paren = strrchr(text, ')');
	bool gone = paren && (paren[1] == ' ') &&
		    (paren[2] == 'Z' || paren[2] == 'X');
	free(text);
	return gone;
}

static bool child_exited(pid_t pid)
{
	siginfo_t si = {0};
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == pid;
}

static bool all_gone(struct run *r)
{
	if (r->child.pid)
		return child_exited(r->child.pid);
	if (!r->npidfds && !r->npolled)
		return false;
	for (int i = 0; i < r->npolled; i++)
		if (!task_gone(r->polled[i]))
			return false;
	struct pollfd p[64];
	int n = MIN(r->npidfds, 64);
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = r->pidfds[i], .events = POLLIN };
	if (n && poll(p, (nfds_t)n, 0) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (!(p[i].revents & POLLIN))
			return false;
	return true;
}

/* Sleeps until ms passed, a watched process exited, or a signal came. */
static void wait_some(struct run *r, int ms)
{
	struct pollfd p[64];
	int n = MIN(r->npidfds, 64);
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = r->pidfds[i], .events = POLLIN };
	/* Wake for the first exit only when it ends the run (one pid). */
	poll(p, n == 1 && !r->npolled ? 1 : 0, ms);
}

static double since(u64 t0)
{
	return (double)(now_ns() - t0);
}

static int tick(struct run *r)
{
	size_t n = pmc_counters_slots(&r->ctr);
	if (pmc_counters_read(&r->ctr, r->now) < 0)
		return -1;
	struct pmc_reading *delta = xmalloc(n * sizeof(*delta));
	for (size_t i = 0; i < n; i++)
		delta[i] = pmc_reading_delta(&r->now[i], &r->prev[i]);
	double t = since(r->t0);
	r->o->tick(r->o->ctx, t / 1e9, t - r->last_tick, delta, &r->ctr);
	r->last_tick = t;
	free(delta);
	memcpy(r->prev, r->now, n * sizeof(*r->prev));
	return 0;
}

/* Forwards a stop request to the command once, so it ends and we read. */
static bool should_stop(struct run *r, bool *forwarded)
{
	const struct pmc_run_opts *o = r->o;
	if (o->stop && *o->stop) {
		if (!r->child.pid)
			return true;
		if (!*forwarded)
			child_kill(&r->child, SIGINT);
		*forwarded = true;
	}
	if (o->duration_s > 0 && since(r->t0) >= o->duration_s * 1e9)
		return true;
	return all_gone(r);
}

static int loop(struct run *r)
{
	const struct pmc_run_opts *o = r->o;
	double next = o->interval_ms > 0 ? o->interval_ms * 1e6 : 0;
	bool forwarded = false;
	while (!should_stop(r, &forwarded)) {
		double t = since(r->t0), wait = 100e6;
		if (next > 0)
			wait = MIN(wait, next - t);
		if (o->duration_s > 0)
			wait = MIN(wait, o->duration_s * 1e9 - t);
		if (wait > 0)
			wait_some(r, (int)(wait / 1e6) + (wait < 1e6));
		if (next > 0 && since(r->t0) >= next) {
			if (tick(r) < 0)
				return -1;
			next += o->interval_ms * 1e6;
		}
	}
	/* The part of an interval before the end is shown too, as perf does. */
	if (next > 0 && since(r->t0) - r->last_tick >= 1e6)
		return tick(r);
	return 0;
}

static void reap(struct run *r, struct pmc_run_result *res)
{
	if (!r->child.pid)
		return;
	/* One never started exits unexecuted when released. */
	if (r->child.go_fd < 0)
		child_reap(&r->child, true, &res->ru);
	child_release(&r->child);
	res->end = child_end_of(&r->child);
	r->child.pid = 0;
}

static int prepare(struct run *r, struct pmc_target *t, pid_t *tid)
{
	const struct pmc_run_opts *o = r->o;
	if (o->command) {
		if (child_fork(&r->child, o->command, NULL, o->stdout_taken) < 0)
			return -1;
		if (!t->cpus) {
			*tid = r->child.pid;
			t->tids = tid;
			t->ntids = 1;
			t->inherit = true;
			t->enable_on_exec = true;
		}
	}
	if (pmc_counters_open(&r->ctr, o->events, t) < 0)
		return -1;
	size_t n = pmc_counters_slots(&r->ctr);
	r->prev = xcalloc(n, sizeof(*r->prev));
	r->now = xcalloc(n, sizeof(*r->now));
	watch_pids(r);
	return 0;
}

static int start(struct run *r, const struct pmc_target *t)
{
	r->t0 = now_ns();
	if (!t->enable_on_exec && pmc_counters_enable(&r->ctr, true) < 0)
		return -1;
	if (r->child.pid && child_exec(&r->child) < 0)
		return -1;
	return 0;
}

static void finish(struct run *r, struct pmc_run_result *res)
{
	res->wall_ns = since(r->t0);
	pmc_counters_enable(&r->ctr, false);
	size_t n = pmc_counters_slots(&r->ctr);
	res->total = xcalloc(n, sizeof(*res->total));
	if (pmc_counters_read(&r->ctr, res->total) < 0)
		memset(res->total, 0, n * sizeof(*res->total));
	size_t nev = r->o->events->n ? r->o->events->n : 1;
	res->err = xmalloc(nev * sizeof(int));
	res->grouped = xmalloc(nev * sizeof(bool));
	memcpy(res->err, r->ctr.err, nev * sizeof(int));
	memcpy(res->grouped, r->ctr.in_group, nev * sizeof(bool));
	res->ncpus = r->ctr.ncpus;
	res->ntids = r->ctr.ntids;
}

static void cleanup(struct run *r, struct pmc_run_result *res)
{
	reap(r, res);
	if (r->o->close_later)
		pmc_counters_close_later(&r->ctr);
	else
		pmc_counters_close(&r->ctr);
	for (int i = 0; i < r->npidfds; i++)
		close(r->pidfds[i]);
	free(r->pidfds);
	free(r->polled);
	free(r->prev);
	free(r->now);
}

int pmc_run(const struct pmc_run_opts *o, struct pmc_run_result *res)
{
	struct run r = { .o = o, .child = { .go_fd = -1, .err_fd = -1, .pidfd = -1 } };
	struct pmc_target t = o->target;
	pid_t tid;
	memset(res, 0, sizeof(*res));
	int rc = -1;
	if (prepare(&r, &t, &tid) == 0 && start(&r, &t) == 0) {
		rc = loop(&r);
		if (rc == 0)
			finish(&r, res);
		/* --duration ended the count before the command ended. */
		if (r.child.pid && !child_exited(r.child.pid))
			child_kill(&r.child, SIGTERM);
	}
	cleanup(&r, res);
	return rc;
}

void pmc_run_result_free(struct pmc_run_result *r)
{
	free(r->total);
	free(r->err);
	free(r->grouped);
	memset(r, 0, sizeof(*r));
}

int pmc_tasks_of(pid_t pid, pid_t **tids, int *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d) {
		err_set("no such pid %d: check it with ps", (int)pid);
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		*tids = xrealloc(*tids, (size_t)(*n + 1) * sizeof(pid_t));
		(*tids)[(*n)++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	return 0;
}
