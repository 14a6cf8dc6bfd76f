/* exitsnoop.c - one line per process exit (BCC's exitsnoop): PCOMM PID
 * PPID TID AGE(s) EXIT_CODE.  The code is exit_group's (or exit's, for a
 * thread) argument; a process a signal killed shows the signal, seen
 * delivered with its default action. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "report/tools/tools.h"

enum { XS_EXIT, XS_EXIT_GROUP, XS_THREAD_EXIT, XS_SIGNAL, XS_N };
static const char *const tp_names[XS_N] = {
	"sched:sched_process_exit", "syscalls:sys_enter_exit_group", "syscalls:sys_enter_exit",
	"signal:signal_deliver",
};

struct exitsnoop {
	struct tool_opts o;
	const struct tool_env *env;
	u64 id[XS_N];
	bool have[XS_N];
	struct tool_forks forks;
	struct u64map code;        /* pid (exit_group) or tid (exit) -> code + 1 */
	struct u64map sig;         /* pid -> fatal signal */
	bool header;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct exitsnoop *x = ctx;
	x->env = env;
	for (int i = 0; i < XS_N; i++)
		x->have[i] = tool_tp_id(env, tp_names[i], &x->id[i]);
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

static void on_exit_(struct exitsnoop *x, const struct rp_sample *s)
{
	u32 pid = s->s->pid, tid = (u32)tool_field(x->env, s, "pid");
	bool group_dead = tool_field(x->env, s, "group_dead") || pid == tid;
	if (!x->o.threads && !group_dead)
		return;
	char text[64], comm[32], ppid[16], age[32] = "?";
	exit_text(x, pid, tid, text, sizeof(text));
	if (x->o.failed && !strcmp(text, "0"))
		return;
	u64 *born = u64map_get(&x->forks.born, pid);
	if (born && *born <= s->s->time)
		snprintf(age, sizeof(age), "%.2f", (double)(s->s->time - *born) / 1e9);
	FILE *out = x->env->out;
	if (!x->header) {
		fprintf(out, "%-16s %-7s %-7s %-7s %-7s %s\n", "PCOMM", "PID", "PPID", "TID", "AGE(s)",
			"EXIT_CODE");
		x->header = true;
	}
	tool_field_str(x->env, s, "comm", comm, sizeof(comm));
	fprintf(out, "%-16s %-7u %-7s %-7u %-7s %s\n", comm, pid,
		tool_forks_ppid(&x->forks, pid, ppid), tid, age, text);
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
	}
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
	return 0;
}

static void exitsnoop_free(void *ctx)
{
	struct exitsnoop *x = ctx;
	tool_forks_free(&x->forks);
	u64map_free(&x->code);
	u64map_free(&x->sig);
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
			    .sink = { .ctx = x, .sample = sample, .event = event },
			    .free = exitsnoop_free };
	return t;
}
