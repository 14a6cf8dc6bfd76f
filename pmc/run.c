/* run.c - one counting run of `ember stat`: start the command held at a
 * pipe until its counters are open, wait for it (or a duration, or the
 * watched processes to go), tick intervals, and read the totals. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmc/stat-internal.h"

/* One run in progress. */
struct run {
	const struct pmc_run_opts *o;
	struct pmc_counters ctr;
	struct pmc_reading *prev, *now;
	pid_t child;
	int go_fd;       /* write end: closing it lets the child exec */
	int status_fd;   /* read end: the child's exec errno, or EOF */
	int *pidfds;     /* the command's or the watched processes' */
	int npidfds;
	pid_t *polled;   /* watched threads without a pidfd (old kernels) */
	int npolled;
	u64 t0;
	double last_tick;   /* ns since t0 of the previous tick */
};

/* The child waits for the go signal, then execs; an exec failure is sent
 * back as an errno through a close-on-exec pipe. */
static void child_main(char **argv, int go_rd, int status_wr)
{
	char c;
	ssize_t n = read(go_rd, &c, 1);
	(void)n;
	execvp(argv[0], argv);
	int e = errno;
	if (write(status_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static int launch(struct run *r, char **argv)
{
	int go[2], st[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		err_set_errno("cannot make a pipe for the command");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err_set_errno("cannot fork for '%s'", argv[0]);
		return -1;
	}
	if (pid == 0) {
		close(go[1]);
		close(st[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		child_main(argv, go[0], st[1]);
	}
	close(go[0]);
	close(st[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->status_fd = st[0];
	return 0;
}

/* Lets the child exec; -1 with err_set() when exec failed. */
static int go(struct run *r, const char *name)
{
	close(r->go_fd);
	r->go_fd = -1;
	int e = 0;
	ssize_t n = read(r->status_fd, &e, sizeof(e));
	close(r->status_fd);
	r->status_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		errno = e;
		err_set_errno("cannot run '%s'", name);
		return -1;
	}
	return 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A pidfd for a process, or with thread for one thread (a -t target that
 * is not its process's leader: Linux 6.9 and later). */
static int pidfd_of(pid_t pid, bool thread)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD : 0);
#else
	(void)pid, (void)thread;
	errno = ENOSYS;
	return -1;
#endif
}

/* Descriptors that become readable when the process (or, for -t, the
 * thread) exits.  A thread the kernel cannot give a pidfd for is looked
 * up in /proc at each wake-up instead, as perf does for all its targets. */
static void watch_pids(struct run *r)
{
	const struct pmc_run_opts *o = r->o;
	int n = r->child ? 1 : o->nwatch;
	r->pidfds = xcalloc((size_t)(n ? n : 1), sizeof(int));
	r->polled = xcalloc((size_t)(n ? n : 1), sizeof(pid_t));
	for (int i = 0; i < n; i++) {
		pid_t pid = r->child ? r->child : o->watch[i];
		bool thread = !r->child && o->watch_threads;
		int fd = pidfd_of(pid, thread);
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
	if (r->child)
		return child_exited(r->child);
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
		if (!r->child)
			return true;
		if (!*forwarded)
			kill(r->child, SIGINT);
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
	if (!r->child)
		return;
	if (r->go_fd >= 0)      /* never started: let it go to exit */
		kill(r->child, SIGKILL), close(r->go_fd), r->go_fd = -1;
	while (wait4(r->child, &res->status, 0, &res->ru) < 0 && errno == EINTR)
		;
	res->have_child = true;
	r->child = 0;
}

static int prepare(struct run *r, struct pmc_target *t, pid_t *tid)
{
	const struct pmc_run_opts *o = r->o;
	if (o->command) {
		if (launch(r, o->command) < 0)
			return -1;
		if (!t->cpus) {
			*tid = r->child;
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
	if (r->child && go(r, r->o->command[0]) < 0)
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
	pmc_counters_close(&r->ctr);
	for (int i = 0; i < r->npidfds; i++)
		close(r->pidfds[i]);
	free(r->pidfds);
	free(r->polled);
	free(r->prev);
	free(r->now);
	if (r->go_fd >= 0)
		close(r->go_fd);
	if (r->status_fd >= 0)
		close(r->status_fd);
}

int pmc_run(const struct pmc_run_opts *o, struct pmc_run_result *res)
{
	struct run r = { .o = o, .go_fd = -1, .status_fd = -1 };
	struct pmc_target t = o->target;
	pid_t tid;
	memset(res, 0, sizeof(*res));
	int rc = -1;
	if (prepare(&r, &t, &tid) == 0 && start(&r, &t) == 0) {
		rc = loop(&r);
		if (rc == 0)
			finish(&r, res);
		/* --duration ended the count before the command ended. */
		if (r.child && !child_exited(r.child))
			kill(r.child, SIGTERM);
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
