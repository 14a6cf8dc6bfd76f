/* syscount.c - syscalls by count (BCC's syscount), with -L their total
 * and average time from each thread's sys_enter to its sys_exit, with -P
 * by process.  A call whose exit was not seen (lost, still running at the
 * end, or an exit that never returns) and an exit whose entry came before
 * the recording are counted apart: no duration is made up for them.
 * Without -L and -P, live, the counts come from counters (count.c), one
 * per syscalls:sys_enter_<name> tracepoint: none is lost.  A syscall
 * without a tracepoint is not counted: the 26 the kernel does not
 * implement (sys_ni_syscall: afs_syscall, create_module..., ENOSYS at
 * once) and 32-bit compat calls.  Sampling raw_syscalls beside the
 * counters would cost every syscall another probe: 150,000 getppid under
 * perf stat took 1.34x with the syscalls:* counters alone, 1.57x with one
 * raw_syscalls counter added.  `ember syscount -- /bin/true` takes
 * 0.14-0.34 s in all (360 tracepoints, 720 opens), since the counters'
 * grace-period closes happen on the ember-close thread. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

#define TOP_DEFAULT 10

struct syscount {
	struct tool_opts o;
	const struct tool_env *env;
	u64 enter_id, exit_id;
	struct tool_counts rows;
	struct tool_pair calls;    /* tid -> the entry under way: its number */
	u64 no_exit, no_entry;     /* unpaired, in this interval */
	u64 *keys;                 /* counting mode: each counter's row key */
};

/* Counting mode's rows of syscalls the table does not have (newer than
 * the headers): keyed apart from numbers, labelled by tracepoint. */
#define KEY_UNNUMBERED (1ull << 32)

static int start(void *ctx, const struct tool_env *env)
{
	struct syscount *x = ctx;
	x->env = env;
	if (!tool_tp_id(env, "raw_syscalls:sys_enter", &x->enter_id))
		return tool_missing("syscount", "raw_syscalls:sys_enter events");
	if (x->o.latency && !tool_tp_id(env, "raw_syscalls:sys_exit", &x->exit_id))
		return tool_missing("syscount", "raw_syscalls:sys_exit events (for -L)");
	return 0;
}

static struct tool_row *row_of(struct syscount *x, const struct rp_sample *s, u64 nr)
{
	char label[64];
	if (x->o.per_process) {
		/* Named as it is last, by its main thread (BCC reads
		 * /proc/PID/comm as it prints): a process that execs is the
		 * program it became, not the shell that forked it. */
		struct tool_row *r = tool_counts_row(&x->rows, s->s->pid, NULL);
		const struct rp_thread *t = s->thread;
		if (t && (!r->label[0] || (t->tid == t->pid && strcmp(r->label, t->comm))))
			snprintf(r->label, sizeof(r->label), "%s", t->comm);
		return r;
	}
	const char *name = tool_syscall_name(nr);
	if (!name)
		snprintf(label, sizeof(label), "[%llu]", (unsigned long long)nr);
	return tool_counts_row(&x->rows, nr, name ? name : label);
}

static void on_enter(struct syscount *x, const struct rp_sample *s)
{
	u64 nr = tool_field(x->env, s, "id");
	row_of(x, s, nr)->count++;
	if (!x->o.latency)
		return;
	if (tool_pair_begin(&x->calls, s->s->tid, s->s->time, nr))
		x->no_exit++;      /* the last one's exit never came */
}

static void on_exit_(struct syscount *x, const struct rp_sample *s)
{
	u64 nr = tool_field(x->env, s, "id"), ns;
	if (!tool_pair_end_of(&x->calls, s->s->tid, s->s->time, nr, &ns)) {
		x->no_entry++;
		return;
	}
	struct tool_row *r = row_of(x, s, nr);
	r->total_ns += ns;
	r->timed++;
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct syscount *x = ctx;
	if (tool_is_tp(s, x->enter_id))
		on_enter(x, s);
	else if (x->o.latency && tool_is_tp(s, x->exit_id))
		on_exit_(x, s);
	return 0;
}

/* ---- Counting mode: one counter per syscalls:sys_enter_<name> ---------- */

#define ENTER_PREFIX "sys_enter_"

static const char *tp_syscall(const struct pmc_event *e)
{
	return e->tp_name + strlen(ENTER_PREFIX);
}

/* The table's number for a tracepoint the kernel names otherwise: newstat
 * is stat, sendfile64 sendfile, umount umount2; taken only when the
 * table's name has no tracepoint of its own.  -1: none. */
static long other_spelling(const char *name, const bool *has_tp)
{
	char alt[64];
	size_t len = strlen(name);
	long nr = -1;
	if (!strncmp(name, "new", 3))
		nr = tool_syscall_nr(name + 3);
	if (nr < 0 && len > 2 && len < sizeof(alt) && !strcmp(name + len - 2, "64")) {
		snprintf(alt, sizeof(alt), "%.*s", (int)len - 2, name);
		nr = tool_syscall_nr(alt);
	}
	if (nr < 0 && len + 2 < sizeof(alt)) {
		snprintf(alt, sizeof(alt), "%s2", name);
		nr = tool_syscall_nr(alt);
	}
	return nr >= 0 && !has_tp[nr] ? nr : -1;
}

/* Every syscall entry tracepoint, each keyed by its number in the table
 * the sampling path names them by.  Syscalls without a tracepoint (the
 * ones this kernel does not implement) have no counter. */
static int count_events(void *ctx, struct pmc_list *events)
{
	struct syscount *x = ctx;
	if (pmc_parse(events, "syscalls:" ENTER_PREFIX "*") < 0)
		return -1;
	bool *has_tp = xcalloc(tool_syscall_slots(), sizeof(bool));
	x->keys = xcalloc(events->n, sizeof(u64));
	for (size_t i = 0; i < events->n; i++) {
		long nr = tool_syscall_nr(tp_syscall(&events->v[i]));
		x->keys[i] = nr >= 0 ? (u64)nr : KEY_UNNUMBERED + i;
		if (nr >= 0)
			has_tp[nr] = true;
	}
	for (size_t i = 0; i < events->n; i++) {
		if (x->keys[i] < KEY_UNNUMBERED)
			continue;
		long nr = other_spelling(tp_syscall(&events->v[i]), has_tp);
		if (nr >= 0) {
			x->keys[i] = (u64)nr;
			has_tp[nr] = true;
		}
	}
	free(has_tp);
	return 0;
}

static void counted(void *ctx, const struct pmc_list *events, const u64 *counts)
{
	struct syscount *x = ctx;
	for (size_t i = 0; i < events->n; i++) {
		if (!counts[i])
			continue;
		const char *name = x->keys[i] < KEY_UNNUMBERED ? tool_syscall_name(x->keys[i])
							      : tp_syscall(&events->v[i]);
		tool_counts_row(&x->rows, x->keys[i], name)->count += counts[i];
	}
}

static void print_rows(void *ctx, FILE *out)
{
	struct syscount *x = ctx;
	struct tool_row **v = tool_counts_sorted(&x->rows, x->o.latency);
	u32 top = x->o.top ? x->o.top : TOP_DEFAULT;
	if (x->o.per_process)
		fprintf(out, "%-7s %-16s %10s", "PID", "COMM", "COUNT");
	else
		fprintf(out, "%-22s %10s", "SYSCALL", "COUNT");
	fprintf(out, x->o.latency ? " %14s %12s\n" : "\n", "TOTAL (us)", "AVG (us)");
	for (size_t i = 0; i < x->rows.rows.n && i < top; i++) {
		if (x->o.per_process)
			fprintf(out, "%-7llu %-16s %10llu", (unsigned long long)v[i]->key, v[i]->label,
				(unsigned long long)v[i]->count);
		else
			fprintf(out, "%-22s %10llu", v[i]->label, (unsigned long long)v[i]->count);
		if (x->o.latency)
			fprintf(out, " %14.3f %12.3f", v[i]->total_ns / 1e3,
				v[i]->timed ? v[i]->total_ns / 1e3 / (double)v[i]->timed : 0.0);
		fputc('\n', out);
	}
	free(v);
	if (x->o.latency && (x->no_exit || x->no_entry))
		fprintf(out, "untimed: %llu calls whose exit was not seen, %llu exits whose "
			"entry was not seen\n", (unsigned long long)x->no_exit,
			(unsigned long long)x->no_entry);
}

static void reset(void *ctx)
{
	struct syscount *x = ctx;
	tool_counts_reset(&x->rows);
	x->no_exit = x->no_entry = 0;
}

static void syscount_free(void *ctx)
{
	struct syscount *x = ctx;
	tool_counts_free(&x->rows);
	tool_pair_free(&x->calls);
	free(x->keys);
	free(x);
}

struct tool *syscount_new(const struct tool_opts *o)
{
	struct syscount *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_counts_init(&x->rows);
	tool_pair_init(&x->calls);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "syscount", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, },
			    .print = print_rows, .reset = reset,
			    .free = syscount_free };
	/* Counts alone need no samples; times (-L) and pids (-P) do. */
	if (!o->latency && !o->per_process) {
		t->count_events = count_events;
		t->counted = counted;
	}
	return t;
}
