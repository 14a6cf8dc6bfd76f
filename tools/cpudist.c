/* cpudist.c - how long threads run at a time (BCC's cpudist): a log2
 * histogram of on-CPU run lengths, from each thread's switch-in to its
 * switch-out (context-switch records, which per-task recordings have
 * too); -O the off-CPU lengths, from switch-out to switch-in; -P a
 * histogram per process.  The idle task is left out. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"
#include "views/sched/sched.h"

struct cpudist {
	struct tool_opts o;
	const struct tool_env *env;
	struct tool_pair runs;     /* tid -> its last switch (in, or out with -O) */
	struct u64map tgid;        /* tid -> its process, seen at a switch */
	struct tool_counts rows;   /* by pid (-P) or one row, key 0 */
};

static int start(void *ctx, const struct tool_env *env)
{
	struct cpudist *x = ctx;
	x->env = env;
	for (size_t i = 0; i < pd_reader_nattrs(env->reader); i++)
		if (pd_reader_attr(env->reader, i)->attr.context_switch)
			return 0;
	return tool_missing("cpudist", "context-switch records");
}

static void add(struct cpudist *x, u32 pid, const char *comm, u64 ns)
{
	struct tool_row *r = tool_counts_row(&x->rows, x->o.per_process ? pid : 0,
					      x->o.per_process ? comm : NULL);
	if (x->o.per_process && strcmp(r->label, comm))   /* named as it is last */
		snprintf(r->label, sizeof(r->label), "%s", comm);
	r->count++;
	r->total_ns += ns;
	tool_hist_add(tool_counts_hist(&x->rows, r), x->o.millis ? ns / 1000000 : ns / 1000);
}

static int event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct cpudist *x = ctx;
	u32 tid;
	bool out, preempt, created;
	if (!sched_switch_record(ev, &tid, &out, &preempt) || !tid)
		return 0;
	if (out)
		*u64map_slot(&x->tgid, tid, &created) = ev->s.pid;
	/* On-CPU: in -> out; off-CPU: out -> in. */
	if (out == x->o.offcpu) {
		tool_pair_begin(&x->runs, tid, ev->s.time, 0);
		return 0;
	}
	u64 ns;
	bool paired = tool_pair_end(&x->runs, tid, ev->s.time, &ns, NULL);
	tool_pair_drop(&x->runs, tid);   /* an end older than its begin ends it too */
	if (!paired)
		return 0;
	u64 *tg = u64map_get(&x->tgid, tid);
	u32 pid = tg ? (u32)*tg : ev->s.pid;
	const char *comm = t ? t->comm : "?";
	/* A run (or a wait) is the task's, on this CPU, ending now. */
	if (rp_filter_pass(x->env->filter, pid, tid, comm, (int)ev->s.cpu, ev->s.time))
		add(x, pid, comm, ns);
	return 0;
}

static void print_hists(void *ctx, FILE *out)
{
	struct cpudist *x = ctx;
	struct tool_row **v = tool_counts_sorted(&x->rows, true);
	const char *unit = x->o.millis ? "msecs" : "usecs";
	for (size_t i = 0; i < x->rows.rows.n; i++) {
		if (x->o.per_process)
			fprintf(out, "\npid = %llu %s\n\n", (unsigned long long)v[i]->key, v[i]->label);
		tool_hist_print(v[i]->hist, unit, out);
	}
	if (!x->rows.rows.n)
		fprintf(out, "no %s intervals seen\n", x->o.offcpu ? "off-CPU" : "on-CPU");
	free(v);
}

static void reset(void *ctx)
{
	struct cpudist *x = ctx;
	tool_counts_reset(&x->rows);
}

static void cpudist_free(void *ctx)
{
	struct cpudist *x = ctx;
	tool_pair_free(&x->runs);
	u64map_free(&x->tgid);
	tool_counts_free(&x->rows);
	free(x);
}

struct tool *cpudist_new(const struct tool_opts *o)
{
	struct cpudist *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_pair_init(&x->runs);
	u64map_init(&x->tgid);
	tool_counts_init(&x->rows);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "cpudist", .ctx = x, .start = start,
			    .sink = { .ctx = x, .event = event, },
			    .print = print_hists, .reset = reset,
			    .free = cpudist_free };
	return t;
}
