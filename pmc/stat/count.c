/* count.c - counting mode: opening events on tasks and CPUs (groups read
 * at once with PERF_FORMAT_GROUP), reading them, and scaling counts that
 * shared the PMU with others (multiplexing) to the whole enabled time. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmc/stat/stat.h"

/* ---- decoding and scaling ------------------------------------------- */

static int decode_group(const u64 *buf, size_t words, u64 rf,
			struct pmc_read_buf *out)
{
	size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	size_t head = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		      !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	if (words < head || buf[0] > PMC_GROUP_MAX ||
	    words < head + buf[0] * per) {
		err_set("group read of %zu words is short or has a bad member "
			"count", words);
		return -1;
	}
	size_t k = 1;
	out->n = (size_t)buf[0];
	out->enabled = rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? buf[k++] : 0;
	out->running = rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? buf[k++] : 0;
	for (size_t i = 0; i < out->n; i++, k += per) {
		out->value[i] = buf[k];
		out->id[i] = rf & PERF_FORMAT_ID ? buf[k + 1] : 0;
	}
	return 0;
}

int pmc_decode_read(const u64 *buf, size_t words, u64 rf,
		    struct pmc_read_buf *out)
{
	memset(out, 0, sizeof(*out));
	if (rf & PERF_FORMAT_GROUP)
		return decode_group(buf, words, rf, out);
	size_t need = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		      !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING) +
		      !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	if (words < need) {
		err_set("counter read of %zu words, want %zu", words, need);
		return -1;
	}
	size_t k = 1;
	out->n = 1;
	out->value[0] = buf[0];
	out->enabled = rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? buf[k++] : 0;
	out->running = rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? buf[k++] : 0;
	out->id[0] = rf & PERF_FORMAT_ID ? buf[k] : 0;
	return 0;
}

double pmc_scaled(const struct pmc_reading *r)
{
	if (r->running == 0)
		return 0;
	if (r->running >= r->enabled)
		return (double)r->value;
	return (double)r->value * ((double)r->enabled / (double)r->running);
}

double pmc_running_pct(const struct pmc_reading *r)
{
	if (r->enabled == 0 || r->running >= r->enabled)
		return 100.0;
	return 100.0 * (double)r->running / (double)r->enabled;
}

void pmc_reading_add(struct pmc_reading *sum, const struct pmc_reading *r)
{
	sum->value += r->value;
	sum->enabled += r->enabled;
	sum->running += r->running;
}

/* Counters only grow; a smaller value (a task's counter reset by exec
 * in an inherited child) is taken as a fresh start. */
static u64 grow(u64 now, u64 before)
{
	return now >= before ? now - before : now;
}

struct pmc_reading pmc_reading_delta(const struct pmc_reading *now,
				     const struct pmc_reading *before)
{
	struct pmc_reading d = {
		grow(now->value, before->value),
		grow(now->enabled, before->enabled),
		grow(now->running, before->running),
	};
	return d;
}

/* ---- opening ---------------------------------------------------------- */

bool pmc_err_unsupported(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV ||
	       err == EINVAL;
}

size_t pmc_counters_slots(const struct pmc_counters *c)
{
	return c->events->n * (size_t)c->ncpus * (size_t)c->ntids;
}

static size_t slot(const struct pmc_counters *c, size_t ev, int cpu, int tid)
{
	return (ev * (size_t)c->ncpus + (size_t)cpu) * (size_t)c->ntids +
	       (size_t)tid;
}

static bool is_leader_of_group(const struct pmc_list *l, size_t i)
{
	return (size_t)l->v[i].group == i && i + 1 < l->n &&
	       (size_t)l->v[i + 1].group == i;
}

/* open_one's return when the kernel took the event but not its filter
 * (the message is set). */
#define FILTER_FAILED 1

/* Opens one counter, with its tracepoint filter when it has one: 0, or
 * -errno of the open, or FILTER_FAILED. */
static int open_one(struct pmc_counters *c, const struct pmc_target *t,
		    size_t ev, int ci, int ti)
{
	const struct pmc_event *e = &c->events->v[ev];
	struct perf_event_attr a = e->attr;
	size_t leader = (size_t)e->group;
	int group_fd = -1;
	if (leader != ev && c->fd[slot(c, leader, ci, ti)] >= 0)
		group_fd = c->fd[slot(c, leader, ci, ti)];
	a.size = sizeof(a);
	a.read_format = PMC_READ_FORMAT;
	if (is_leader_of_group(c->events, ev))
		a.read_format |= PERF_FORMAT_GROUP;
	/* Only a leader starts disabled: members follow it. */
	a.disabled = group_fd < 0;
	a.inherit = t->inherit;
	a.enable_on_exec = t->enable_on_exec && group_fd < 0;
	pid_t pid = t->tids ? t->tids[ti] : -1;
	int cpu = t->cpus ? t->cpus[ci] : -1;
	int fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, group_fd,
			      PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (e->filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, e->filter) < 0) {
		err_set_errno("filter '%s' on %s", e->filter, e->name);
		close(fd);
		return FILTER_FAILED;
	}
	size_t s = slot(c, ev, ci, ti);
	c->fd[s] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id[s]) < 0)
		c->id[s] = 0;
	c->in_group[ev] = group_fd >= 0;
	return 0;
}

static int open_event(struct pmc_counters *c, const struct pmc_target *t,
		      size_t ev)
{
	for (int ci = 0; ci < c->ncpus; ci++) {
		for (int ti = 0; ti < c->ntids; ti++) {
			int rc = open_one(c, t, ev, ci, ti);
			if (rc == 0)
				continue;
			if (rc == FILTER_FAILED)
				return -1;
			c->err[ev] = rc;
			if (pmc_err_unsupported(-rc))
				return 0;
			pmc_explain_open_error(&c->events->v[ev], rc);
			return -1;
		}
	}
	return 0;
}

int pmc_counters_open(struct pmc_counters *c, const struct pmc_list *events,
		      const struct pmc_target *t)
{
	memset(c, 0, sizeof(*c));
	c->events = events;
	c->ncpus = t->cpus ? t->ncpus : 1;
	c->ntids = t->tids ? t->ntids : 1;
	size_t n = pmc_counters_slots(c);
	c->fd = xmalloc(n * sizeof(*c->fd));
	c->id = xcalloc(n, sizeof(*c->id));
	c->err = xcalloc(events->n ? events->n : 1, sizeof(*c->err));
	c->in_group = xcalloc(events->n ? events->n : 1, sizeof(*c->in_group));
	for (size_t i = 0; i < n; i++)
		c->fd[i] = -1;
	fd_limit_raise();
	for (size_t ev = 0; ev < events->n; ev++) {
		if (open_event(c, t, ev) < 0) {
			pmc_counters_close(c);
			return -1;
		}
	}
	return 0;
}

int pmc_counters_enable(struct pmc_counters *c, bool on)
{
	for (size_t ev = 0; ev < c->events->n; ev++) {
		if (c->in_group[ev])
			continue;   /* members follow their leader */
		for (int ci = 0; ci < c->ncpus; ci++)
			for (int ti = 0; ti < c->ntids; ti++) {
				int fd = c->fd[slot(c, ev, ci, ti)];
				unsigned long req = on ? PERF_EVENT_IOC_ENABLE
						       : PERF_EVENT_IOC_DISABLE;
				if (fd >= 0 && ioctl(fd, req, 0) < 0) {
					err_set_errno("cannot %s counter '%s'",
						      on ? "enable" : "disable",
						      c->events->v[ev].name);
					return -1;
				}
			}
	}
	return 0;
}

/* Reads the counter in slot s (a whole group when it leads one) and files
 * each value under the event whose id it carries. */
static int read_slot(const struct pmc_counters *c, size_t ev, int ci, int ti,
		     struct pmc_reading *out)
{
	size_t s = slot(c, ev, ci, ti);
	u64 buf[3 + 2 * PMC_GROUP_MAX];
	ssize_t got = read(c->fd[s], buf, sizeof(buf));
	if (got < 0) {
		err_set_errno("cannot read counter '%s'", c->events->v[ev].name);
		return -1;
	}
	u64 rf = PMC_READ_FORMAT;
	if (is_leader_of_group(c->events, ev))
		rf |= PERF_FORMAT_GROUP;
	struct pmc_read_buf rb;
	if (pmc_decode_read(buf, (size_t)got / sizeof(u64), rf, &rb) < 0)
		return -1;
	if (!(rf & PERF_FORMAT_GROUP)) {
		out[s] = (struct pmc_reading){ rb.value[0], rb.enabled,
					       rb.running };
		return 0;
	}
	for (size_t k = 0; k < rb.n; k++) {
		for (size_t e = ev; e < c->events->n; e++) {
			if ((size_t)c->events->v[e].group != ev)
				break;
			size_t se = slot(c, e, ci, ti);
			if (c->fd[se] >= 0 && c->id[se] == rb.id[k]) {
				out[se] = (struct pmc_reading){ rb.value[k],
								rb.enabled,
								rb.running };
				break;
			}
		}
	}
	return 0;
}

int pmc_counters_read(const struct pmc_counters *c, struct pmc_reading *out)
{
	memset(out, 0, pmc_counters_slots(c) * sizeof(*out));
	for (size_t ev = 0; ev < c->events->n; ev++) {
		if (c->in_group[ev])
			continue;   /* came with its leader's read */
		for (int ci = 0; ci < c->ncpus; ci++)
			for (int ti = 0; ti < c->ntids; ti++)
				if (c->fd[slot(c, ev, ci, ti)] >= 0 &&
				    read_slot(c, ev, ci, ti, out) < 0)
					return -1;
	}
	return 0;
}

void pmc_counters_close(struct pmc_counters *c)
{
	if (c->fd) {
		size_t n = pmc_counters_slots(c);
		for (size_t i = 0; i < n; i++)
			if (c->fd[i] >= 0)
				close(c->fd[i]);
	}
	free(c->fd);
	free(c->id);
	free(c->err);
	free(c->in_group);
	memset(c, 0, sizeof(*c));
}

/* The child that closes: every other descriptor goes first (a pipe the
 * caller's caller reads to its end, our stdout), then it waits for the
 * parent's copies to be gone (the pipe's EOF), so that its own closes are
 * the last ones and take the kernel's time, not the parent's.  No stdio,
 * no exit handlers. */
static void close_in_child(const struct pmc_counters *c, int wait_fd)
{
	size_t n = pmc_counters_slots(c);
	int top = wait_fd;
	for (size_t i = 0; i < n; i++)
		top = MAX(top, c->fd[i]);
	bool *keep = calloc((size_t)top + 1, sizeof(bool));
	if (!keep)
		_exit(1);
	keep[wait_fd] = true;
	for (size_t i = 0; i < n; i++)
		if (c->fd[i] >= 0)
			keep[c->fd[i]] = true;
	for (int fd = 0; fd < top; fd++)
		if (!keep[fd])
			close(fd);
	syscall(SYS_close_range, top + 1, ~0u, 0);
	prctl(PR_SET_NAME, "ember-close");
	signal(SIGINT, SIG_IGN);
	char b;
	while (read(wait_fd, &b, 1) < 0 && errno == EINTR)
		;
	for (size_t i = 0; i < n; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	_exit(0);
}

void pmc_counters_close_later(struct pmc_counters *c)
{
	int p[2] = { -1, -1 };
	pid_t pid = c->fd && pipe(p) == 0 ? fork() : -1;
	if (pid == 0) {
		close(p[1]);
		close_in_child(c, p[0]);
	}
	pmc_counters_close(c);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
}
