/* loop.c - the drain: rings grouped by NUMA node, each group drained by
 * one thread placed on its node (the main thread when there is one node),
 * woken by poll when a ring passes its watermark, until told to stop. */
#include <errno.h>
#include <sched.h>
#include <numa.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/record-internal.h"

#define REC_SCRATCH_BYTES 65536     /* a record's size is a u16 */
#define REC_IDLE_DRAIN_MS 1000      /* keep the file fresh when quiet */
#define REC_LIVE_DRAIN_MS 100       /* a live view's keys and clock */

static int node_of_cpu(int cpu)
{
	if (numa_available() < 0)
		return 0;
	int n = numa_node_of_cpu(cpu);
	return n < 0 ? 0 : n;
}

static struct rec_node *node_for(struct rec_session *s, int node)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].node == node)
			return &s->nodes[i];
	struct rec_node *n = &s->nodes[s->nnodes++];
	n->s = s;
	n->node = node;
	n->rings = xcalloc((size_t)s->ncpus, sizeof(*n->rings));
	n->scratch = xmalloc(REC_SCRATCH_BYTES);
	return n;
}

static void add_pfd(struct rec_node *n, int fd, size_t cap)
{
	if (fd < 0 || (size_t)n->npfd >= cap)
		return;
	n->pfd[n->npfd++] = (struct pollfd){ .fd = fd, .events = POLLIN };
}

/* Every event fd is polled, not just each ring's owner: a task event's
 * fd hangs up when its task exits while others still feed the ring. */
static void node_pollfds(struct rec_session *s, struct rec_node *n)
{
	size_t cap = (size_t)s->ncpus * s->nthreads * s->nevsels + 2 +
		     (size_t)s->ntarget_pidfds;
	n->pfd = xcalloc(cap, sizeof(*n->pfd));
	for (int ci = 0; ci < s->ncpus; ci++) {
		if (node_for(s, node_of_cpu(s->cpus[ci])) != n)
			continue;
		for (int ti = 0; ti < s->nthreads; ti++)
			for (int ei = 0; ei < s->nevsels; ei++)
				add_pfd(n, *rec_fd_slot(s, ci, ti, ei), cap);
	}
	n->nevent_pfd = n->npfd;
	if (s->nnodes > 1) {
		add_pfd(n, s->stop_efd, cap);
		return;
	}
	add_pfd(n, s->child.pidfd, cap);
	for (int i = 0; i < s->ntarget_pidfds; i++)
		add_pfd(n, s->target_pidfds[i], cap);
}

int rec_nodes_setup(struct rec_session *s)
{
	s->nodes = xcalloc((size_t)s->ncpus, sizeof(*s->nodes));
	for (int ci = 0; ci < s->ncpus; ci++) {
		struct rec_node *n = node_for(s, node_of_cpu(s->cpus[ci]));
		n->rings[n->nrings++] = &s->rings[ci];
	}
	if (s->nnodes > 1) {
		s->stop_efd = eventfd(0, EFD_CLOEXEC);
		if (s->stop_efd < 0) {
			err_set_errno("eventfd");
			return -1;
		}
	}
	for (int i = 0; i < s->nnodes; i++)
		node_pollfds(s, &s->nodes[i]);
	return 0;
}

void rec_nodes_free(struct rec_session *s)
{
	for (int i = 0; s->nodes && i < s->nnodes; i++) {
		free(s->nodes[i].rings);
		free(s->nodes[i].pfd);
		free(s->nodes[i].scratch);
	}
	free(s->nodes);
	s->nodes = NULL;
	if (s->stop_efd >= 0)
		close(s->stop_efd);
	s->stop_efd = -1;
}

/* A FINISHED_ROUND promises readers that nothing later in the file is
 * older than what came before the previous one.  With several nodes that
 * holds only once every node has made a pass since the last round, so the
 * round closes with the last of them. */
static int end_of_pass(struct rec_node *n, bool had)
{
	struct rec_session *s = n->s;
	s->round_had_data |= had;
	if (!n->passed) {
		n->passed = true;
		s->round_passes++;
	}
	if (s->round_passes < s->nnodes)
		return 0;
	for (int i = 0; i < s->nnodes; i++)
		s->nodes[i].passed = false;
	s->round_passes = 0;
	/* A live view takes its wall-clock ticks at rounds: one each pass. */
	bool write_round = s->round_had_data || s->o->live;
	s->round_had_data = false;
	return write_round ? pd_writer_finished_round(s->w) : 0;
}

/* One pass over the node's rings.  Passes of different nodes never
 * interleave in the file: each holds the writer throughout (and with it
 * the online unwinder's maps). */
static int drain_node(struct rec_node *n)
{
	struct rec_session *s = n->s;
	bool had = false, locked = s->nnodes > 1;
	int rc = 0;
	if (locked)
		pthread_mutex_lock(&s->wlock);
	for (int i = 0; i < n->nrings; i++)
		rec_ring_sideband(n->rings[i], n);
	if (s->online)
		rec_online_sideband_flush(s->online);
	for (int i = 0; i < n->nrings && rc == 0; i++)
		rc = rec_ring_drain(n->rings[i], n, &had);
	if (rc == 0 && s->online)
		rec_online_pass_end(s->online, (int)(n - s->nodes), s->nnodes);
	if (rc == 0)
		rc = end_of_pass(n, had);
	if (locked)
		pthread_mutex_unlock(&s->wlock);
	return rc;
}

int rec_drain_all(struct rec_session *s)
{
	for (int i = 0; i < s->nnodes; i++)
		if (drain_node(&s->nodes[i]) < 0)
			return -1;
	return 0;
}

/* Hung-up task events stay out of the poll set; true when none is left,
 * i.e. every task we followed has exited. */
static bool drop_hangups(struct rec_node *n)
{
	int live = 0;
	for (int i = 0; i < n->nevent_pfd; i++) {
		if (n->pfd[i].revents & (POLLHUP | POLLERR))
			n->pfd[i].fd = -1;
		live += n->pfd[i].fd >= 0;
	}
	return live == 0;
}

/* ms until time t (0 when passed), at most cap; cap when t is 0 (none). */
static int ms_until(u64 t, int cap)
{
	if (!t)
		return cap;
	u64 now = now_ns();
	return now >= t ? 0 : (int)MIN((t - now + 999999) / 1000000, (u64)cap);
}

/* deadline, wake_by (0: none): times to wake by even when nothing
 * happens; a quiet loop still wakes every REC_IDLE_DRAIN_MS. */
static int wait_events(struct rec_session *s, struct pollfd *pfd, int n, u64 deadline,
		       u64 wake_by)
{
	int idle = s->o->live ? REC_LIVE_DRAIN_MS : REC_IDLE_DRAIN_MS;
	int ms = ms_until(wake_by, ms_until(deadline, idle));
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	int r = ppoll(pfd, (nfds_t)n, &ts, &s->poll_mask);
	if (r < 0 && errno != EINTR) {
		err_set_errno("poll");
		return -1;
	}
	return 0;
}

/* True when the targets are gone: the command exited, or every -p/-t
 * task did. */
static bool targets_gone(struct rec_session *s, struct pollfd *ctl, int nctl)
{
	if (s->child.pid)
		return child_reap(&s->child, false, NULL) == 1;
	if (!s->ntarget_pidfds)
		return false;
	int left = 0;
	for (int i = 0; i < nctl; i++) {
		if (ctl[i].fd >= 0 && (ctl[i].revents & POLLIN))
			ctl[i].fd = -1;
		left += ctl[i].fd >= 0;
	}
	return left == 0;
}

/* ---- keeping off a pinned command's CPUs ----------------------------------
 * A drain thread keeps off the CPUs the command is confined to (taskset,
 * a cpuset) when it may run elsewhere.  Otherwise it takes its turns on
 * the command's CPUs, and the scheduler tends to put it there, since the
 * rings' wakeups come from there: with fio pinned to one CPU of two, the
 * drain sat on fio's CPU in 5 to 6 of 8 runs and cost fio about 1.4 more
 * points of IOPS (bench/bio.sh).  Looked at again every 100 ms (a quiet
 * drain wakes for it while the command runs), as a
 * command may pin itself after exec (taskset does). */
#define KEEP_OFF_EVERY_NS 100000000ull

struct keep_off {
	u64 next;                  /* when to look again */
	cpu_set_t allowed;         /* where the thread may run of itself */
	bool have_allowed;
};

/* Returns when to look again (0: never), which a quiet loop wakes for. */
static u64 keep_off_command(const struct rec_session *s, struct keep_off *k)
{
	u64 now = now_ns();
	if (!s->child.pid)
		return 0;
	if (now < k->next)
		return k->next;
	k->next = now + KEEP_OFF_EVERY_NS;
	if (!k->have_allowed) {
		if (sched_getaffinity(0, sizeof(k->allowed), &k->allowed) < 0)
			return 0;
		k->have_allowed = true;
	}
	cpu_set_t cmd, rest, cur;
	if (sched_getaffinity(s->child.pid, sizeof(cmd), &cmd) < 0)
		return 0;  /* gone, or more CPUs than a cpu_set_t holds */
	CPU_ZERO(&rest);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &k->allowed) && !CPU_ISSET(c, &cmd))
			CPU_SET(c, &rest);
	if (CPU_COUNT(&rest) == 0)
		rest = k->allowed;   /* the command may run wherever we may */
	if (sched_getaffinity(0, sizeof(cur), &cur) == 0 && !CPU_EQUAL(&cur, &rest))
		sched_setaffinity(0, sizeof(rest), &rest);
	return k->next;
}

/* With one node: this thread polls the rings and the targets together. */
static int loop_single(struct rec_session *s, u64 deadline)
{
	struct rec_node *n = &s->nodes[0];
	struct keep_off k = { 0 };
	while (!*s->stop) {
		u64 look = keep_off_command(s, &k);
		if (wait_events(s, n->pfd, n->npfd, deadline, look) < 0 || drain_node(n) < 0)
			return -1;
		bool all_hup = drop_hangups(n) && s->threads[0] != -1;
		if (targets_gone(s, n->pfd + n->nevent_pfd, n->npfd - n->nevent_pfd) ||
		    all_hup || (deadline && now_ns() >= deadline))
			break;
	}
	return 0;
}

static void *node_thread(void *arg)
{
	struct rec_node *n = arg;
	numa_run_on_node(n->node);
	struct keep_off k = { 0 };
	while (!(n->pfd[n->nevent_pfd].revents & POLLIN)) {
		u64 look = keep_off_command(n->s, &k);
		if (poll(n->pfd, (nfds_t)n->npfd, ms_until(look, REC_IDLE_DRAIN_MS)) < 0 &&
		    errno != EINTR)
			break;
		if (drain_node(n) < 0) {
			n->result = -1;
			snprintf(n->err, sizeof(n->err), "%s", err_msg());
			break;
		}
		drop_hangups(n);
	}
	return NULL;
}

/* With several nodes: node threads drain, this one watches the targets. */
static int loop_multi(struct rec_session *s, u64 deadline)
{
	for (int i = 0; i < s->nnodes; i++)
		s->nodes[i].thread_started =
			pthread_create(&s->nodes[i].thread, NULL, node_thread,
				       &s->nodes[i]) == 0;
	struct pollfd ctl[1 + 64];
	int nctl = 0;
	if (s->child.pidfd >= 0)
		ctl[nctl++] = (struct pollfd){ .fd = s->child.pidfd, .events = POLLIN };
	for (int i = 0; i < s->ntarget_pidfds && nctl < (int)ARRAY_SIZE(ctl); i++)
		ctl[nctl++] = (struct pollfd){ .fd = s->target_pidfds[i], .events = POLLIN };
	int rc = 0;
	while (!*s->stop && rc == 0) {
		rc = wait_events(s, ctl, nctl, deadline, 0);
		if (targets_gone(s, ctl, nctl) || (deadline && now_ns() >= deadline))
			break;
	}
	u64 one = 1;
	if (write(s->stop_efd, &one, sizeof(one)) < 0)
		rc = -1;
	for (int i = 0; i < s->nnodes; i++) {
		if (s->nodes[i].thread_started)
			pthread_join(s->nodes[i].thread, NULL);
		if (s->nodes[i].result < 0) {
			err_set("%s", s->nodes[i].err);
			rc = -1;
		}
	}
	return rc;
}

/* Stopping early: the command gets SIGINT as from a terminal, and we keep
 * draining while it winds down; a second signal kills it. */
static int stop_child(struct rec_session *s)
{
	struct held_child *c = &s->child;
	if (!c->pid || child_reap(c, false, NULL) == 1)
		return 0;
	child_kill(c, SIGINT);
	sig_atomic_t seen = *s->stop;
	while (child_reap(c, false, NULL) == 0) {
		if (*s->stop > seen && *s->stop >= 2)
			child_kill(c, SIGKILL);
		struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
		struct timespec ts = { 0, 50 * 1000000L };
		ppoll(&p, c->pidfd >= 0 ? 1 : 0, &ts, &s->poll_mask);
		if (rec_drain_all(s) < 0)
			return -1;
	}
	return 0;
}

int rec_loop(struct rec_session *s)
{
	u64 deadline = s->o->duration > 0
		? now_ns() + (u64)(s->o->duration * 1e9) : 0;
	int rc = s->nnodes > 1 ? loop_multi(s, deadline) : loop_single(s, deadline);
	if (rc < 0) {
		if (s->child.pid && !s->child.exited)
			child_kill(&s->child, SIGINT);
		return -1;
	}
	return stop_child(s);
}
