/* exitsnoop.c - one line per process exit (BCC's exitsnoop): PCOMM PID
 * PPID TID AGE(s) EXIT_CODE.  The code is exit_group's (or exit's, for a
 * thread) argument; a process a signal killed shows the signal, seen
 * delivered with its default action, and ", core dumped" when its parent
 * was told CLD_DUMPED.  Each line waits for the records that come after
 * the exit tracepoint (do_exit's order: sched_process_exit, perf's EXIT
 * record, then the parent's SIGCHLD): the EXIT record names the real
 * parent, BCC's PPID (a thread's is its process's parent), and the
 * SIGCHLD's code says whether a core was written. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

enum { XS_EXIT, XS_EXIT_GROUP, XS_THREAD_EXIT, XS_SIGNAL, XS_SIGCHLD, XS_N };
static const char *const tp_names[XS_N] = {
	"sched:sched_process_exit", "syscalls:sys_enter_exit_group", "syscalls:sys_enter_exit",
	"signal:signal_deliver", "signal:signal_generate",
};

/* A line waits at most this long (recording time) for its records: a
 * per-task recording never sees the SIGCHLD, sent after the task's own
 * events are gone, and a full ring may drop the EXIT record.  Live, no
 * later event may come: two rounds of the stream end the wait too (a
 * round delivers all that was recorded before the round before it). */
#define HOLD_NS 100000000ull
#define HOLD_ROUNDS 2

/* An exit whose line waits for its EXIT record and SIGCHLD. */
struct held {
	u64 time;
	u32 pid, tid;
	u64 ppid;                  /* from the EXIT record, + 1; 0: none yet */
	bool want_exit, want_chld; /* what it still waits for */
	bool dumped;               /* CLD_DUMPED: a core was written */
	u32 rounds;                /* live: rounds of the stream since */
	char comm[32], text[48], age[32];
};

struct exitsnoop {
	struct tool_opts o;
	const struct tool_env *env;
	u64 id[XS_N];
	bool have[XS_N];
	bool task_records;         /* the recording has EXIT records */
	struct tool_forks forks;
	struct u64map code;        /* pid (exit_group) or tid (exit) -> code + 1 */
	struct u64map sig;         /* pid -> fatal signal */
	VEC(struct held) held;     /* oldest first, printed in that order */
	size_t first;              /* held[first..] are waiting */
	bool header;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct exitsnoop *x = ctx;
	x->env = env;
	for (int i = 0; i < XS_N; i++)
		x->have[i] = tool_tp_id(env, tp_names[i], &x->id[i]);
	for (size_t i = 0; i < pd_reader_nattrs(env->reader); i++)
		x->task_records |= pd_reader_attr(env->reader, i)->attr.task;
	if (!x->have[XS_EXIT])
		return tool_missing("exitsnoop", "sched:sched_process_exit events");
	return 0;
}

/* Signals whose default action ends the process. */
static bool kills_by_default(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return false;
	default:
		return sig > 0 && sig < 65;
	}
}

static void set(struct u64map *m, u64 key, u64 v)
{
	bool created;
	*u64map_slot(m, key, &created) = v;
}

/* 0 when absent (or cleared). */
static u64 get(const struct u64map *m, u64 key)
{
	u64 *v = u64map_get(m, key);
	return v ? *v : 0;
}

static const char *exit_text(struct exitsnoop *x, u32 pid, u32 tid, char *buf, size_t cap)
{
	u64 c = get(&x->code, pid), tc = get(&x->code, (u64)tid << 32);
	u64 sig = get(&x->sig, pid);
	if (c || (!sig && tc)) {
		u64 code = (c ? c : tc) - 1;
		if (code & 0xff)
			snprintf(buf, cap, "code %llu", (unsigned long long)(code & 0xff));
		else
			snprintf(buf, cap, "0");
	} else if (sig) {
		const char *name = sigabbrev_np((int)sig);
		snprintf(buf, cap, "signal %llu (%s)", (unsigned long long)sig, name ? name : "?");
	} else {
		snprintf(buf, cap, "?");
	}
	return buf;
}

static void print_line(struct exitsnoop *x, const struct held *h)
{
	FILE *out = x->env->out;
	if (!x->header) {
		fprintf(out, "%-16s %-7s %-7s %-7s %-7s %s\n", "PCOMM", "PID", "PPID", "TID", "AGE(s)",
			"EXIT_CODE");
		x->header = true;
	}
	char ppid[24] = "?";
	const char *pp = ppid;
	if (h->ppid)
		snprintf(ppid, sizeof(ppid), "%llu", (unsigned long long)(h->ppid - 1));
	else
		pp = tool_forks_ppid(&x->forks, h->pid, ppid);
	fprintf(out, "%-16s %-7u %-7s %-7u %-7s %s%s\n", h->comm, h->pid, pp, h->tid, h->age,
		h->text, h->dumped ? ", core dumped" : "");
}

/* Prints the waiting lines, oldest first, while the oldest has what it
 * waits for or has waited HOLD_NS by now (all of them when force). */
static void release(struct exitsnoop *x, u64 now, bool force)
{
	while (x->first < x->held.n) {
		const struct held *h = &x->held.v[x->first];
		if (!force && (h->want_exit || h->want_chld) && now < h->time + HOLD_NS &&
		    h->rounds < HOLD_ROUNDS)
			break;
		print_line(x, h);
		x->first++;
	}
	/* The waiting ones move to the front once they are the lesser half. */
	if (x->first && x->first >= x->held.n - x->first) {
		memmove(x->held.v, x->held.v + x->first, (x->held.n - x->first) * sizeof(*x->held.v));
		x->held.n -= x->first;
		x->first = 0;
	}
}

static void on_exit_(struct exitsnoop *x, const struct rp_sample *s)
{
	u32 pid = s->s->pid, tid = (u32)tool_field(x->env, s, "pid");
	bool group_dead = tool_field(x->env, s, "group_dead");
	if (!x->o.threads && !group_dead && pid != tid)
		return;
	struct held h = { .time = s->s->time, .pid = pid, .tid = tid,
			  .want_exit = x->task_records,
			  .want_chld = group_dead && x->have[XS_SIGCHLD] };
	exit_text(x, pid, tid, h.text, sizeof(h.text));
	if (x->o.failed && !strcmp(h.text, "0"))
		return;
	/* A thread's age from its own fork, as BCC takes the task's start. */
	u64 *born = u64map_get(&x->forks.born, x->o.threads ? tid : pid);
	snprintf(h.age, sizeof(h.age), "?");
	if (born && *born <= s->s->time)
		snprintf(h.age, sizeof(h.age), "%.2f", (double)(s->s->time - *born) / 1e9);
	tool_field_str(x->env, s, "comm", h.comm, sizeof(h.comm));
	VEC_PUSH(&x->held, h);
}

/* The oldest waiting line of tid (or of pid's process line) that still
 * waits for what is asked; NULL when none. */
static struct held *waiting(struct exitsnoop *x, u32 id, bool by_pid)
{
	for (size_t i = x->first; i < x->held.n; i++) {
		struct held *h = &x->held.v[i];
		if (by_pid ? h->pid == id && h->want_chld : h->tid == id && h->want_exit)
			return h;
	}
	return NULL;
}

/* The parent told of the exit (exit_notify, in the exiting task): the
 * code says whether a core was written.  Stops and continues (codes
 * CLD_STOPPED, CLD_CONTINUED) and user-sent SIGCHLDs are not exits. */
static void on_sigchld(struct exitsnoop *x, const struct rp_sample *s)
{
	if (tool_field(x->env, s, "sig") != SIGCHLD)
		return;
	int code = (int)tool_field(x->env, s, "code");
	struct held *h = code >= CLD_EXITED && code <= CLD_DUMPED ? waiting(x, s->s->pid, true) : NULL;
	if (h) {
		h->want_chld = false;
		h->dumped = code == CLD_DUMPED;
	}
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct exitsnoop *x = ctx;
	if (x->have[XS_EXIT] && tool_is_tp(s, x->id[XS_EXIT])) {
		on_exit_(x, s);
	} else if (x->have[XS_EXIT_GROUP] && tool_is_tp(s, x->id[XS_EXIT_GROUP])) {
		set(&x->code, s->s->pid, tool_field(x->env, s, "error_code") + 1);
	} else if (x->have[XS_THREAD_EXIT] && tool_is_tp(s, x->id[XS_THREAD_EXIT])) {
		set(&x->code, (u64)s->s->tid << 32, tool_field(x->env, s, "error_code") + 1);
	} else if (x->have[XS_SIGNAL] && tool_is_tp(s, x->id[XS_SIGNAL])) {
		int sig = (int)tool_field(x->env, s, "sig");
		/* A group exit sends the other threads SIGKILL too: the first
		 * fatal signal is the cause. */
		if (!tool_field(x->env, s, "sa_handler") && kills_by_default(sig) &&
		    !get(&x->sig, s->s->pid) && !get(&x->code, s->s->pid))
			set(&x->sig, s->s->pid, (u64)sig);
	} else if (x->have[XS_SIGCHLD] && tool_is_tp(s, x->id[XS_SIGCHLD])) {
		on_sigchld(x, s);
	}
	release(x, s->s->time, false);
	return 0;
}

static int event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct exitsnoop *x = ctx;
	(void)t;
	tool_forks_event(&x->forks, ev);
	/* A pid used again starts clean. */
	if (ev->type == PERF_RECORD_FORK) {
		set(&x->code, ev->u.task.pid == ev->u.task.tid ? ev->u.task.pid
			      : (u64)ev->u.task.tid << 32, 0);
		if (ev->u.task.pid == ev->u.task.tid)
			set(&x->sig, ev->u.task.pid, 0);
	}
	/* The EXIT record's ppid is the real parent's pid (a thread's, its
	 * process's parent), read as the task exits. */
	struct held *h = ev->type == PERF_RECORD_EXIT ? waiting(x, ev->u.task.tid, false) : NULL;
	if (h) {
		h->want_exit = false;
		h->ppid = (u64)ev->u.task.ppid + 1;
	}
	if (ev->has_time)
		release(x, ev->s.time, false);
	return 0;
}

static int round_(void *ctx)
{
	struct exitsnoop *x = ctx;
	for (size_t i = x->first; i < x->held.n; i++)
		x->held.v[i].rounds++;
	release(x, 0, false);
	return 0;
}

static int finish(void *ctx)
{
	release(ctx, 0, true);
	return 0;
}

static void exitsnoop_free(void *ctx)
{
	struct exitsnoop *x = ctx;
	tool_forks_free(&x->forks);
	u64map_free(&x->code);
	u64map_free(&x->sig);
	VEC_FREE(&x->held);
	free(x);
}

struct tool *exitsnoop_new(const struct tool_opts *o)
{
	struct exitsnoop *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_forks_init(&x->forks);
	u64map_init(&x->code);
	u64map_init(&x->sig);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "exitsnoop", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, .event = event, .round = round_,
				      .finish = finish },
			    .free = exitsnoop_free };
	return t;
}
