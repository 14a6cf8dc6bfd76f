/* sched-lat.c - run-queue latency (like runqlat): from each
 * sched_wakeup(_new), and from each switch-out of a thread still runnable
 * (a preemption), to the thread's next switch-in, in log2 histograms, with
 * the longest wait and what ran on that CPU meanwhile.
 *
 * Each wait belongs to the waiting thread, on the CPU it then ran on, at
 * the time it ran: that is what --pid/--tid/--comm, --cpu and --time pick
 * (replay/filter.c), since the replay's own filter would drop one thread's
 * switch-out that is another's switch-in.  Waiting wakeups are kept across
 * --interval's resets (schedlat_reset), so a wait that spans an interval's
 * end counts in the interval it ended in. */
#include <stdlib.h>
#include <string.h>

#include "views/sched/sched.h"

#define LAT_SLOTS 64
#define CPU_LOG 256              /* recent switch-ins kept per CPU */
#define MEANWHILE_MAX 6          /* threads named beside the maximum */

struct lat_hist {
	u64 slot[LAT_SLOTS];
	u64 count;
};

struct lat_group {
	u32 pid;
	char comm[64];
	const struct rp_thread *rt;  /* latest thread measured: its comm now */
	struct lat_hist h;
};

/* What began a thread's wait for a CPU. */
enum wait_kind { WAIT_WAKEUP, WAIT_WAKEUP_NEW, WAIT_PREEMPT, WAIT_KINDS };

struct lat_thread {
	u32 tid;
	const struct rp_thread *rt;
	char comm[16];               /* from its wakeup, when rt is unknown */
	bool pending, running;
	bool slept;                  /* switched out asleep: needs a wakeup */
	u8 kind;                     /* of the pending wait */
	u64 wake_time;               /* when the pending wait began */
};

struct cpu_log {
	u64 time[CPU_LOG];
	u32 tid[CPU_LOG];
	u32 head, n;                 /* next slot, entries held */
};

struct meanwhile {
	u32 tid;
	char comm[64];
	u64 ns;
};

struct lat_max {
	u64 ns, wake_time, run_time;
	u32 tid, pid;
	int cpu;
	char comm[64];
	struct meanwhile who[MEANWHILE_MAX];
	int nwho;
	bool log_short;              /* the CPU's log did not reach back */
	bool preempted;              /* the wait began with a preemption */
};

struct schedlat {
	struct schedlat_opts o;
	const struct sched_tp *tp;
	VEC(struct lat_thread) threads;
	struct u64map thread_index;
	VEC(struct cpu_log *) cpus;
	struct lat_hist all;
	VEC(struct lat_group) groups;
	struct u64map group_index;   /* pid or comm hash -> index + 1 */
	/* Each wait is counted once, in the window and interval where it
	 * ended: measured, left out by a filter, superseded by a later
	 * wakeup, or never ended (at the end of the recording); a wakeup of
	 * a thread running or runnable begins none. */
	u64 waits[WAIT_KINDS], measured[WAIT_KINDS], filtered[WAIT_KINDS];
	u64 unfinished[WAIT_KINDS], superseded[WAIT_KINDS], while_running[WAIT_KINDS];
	u64 unwoken;                 /* ran after a sleep with no wakeup seen */
	u64 last_time;               /* of the latest event */
	struct lat_max max;
};

/* ---- state --------------------------------------------------------------- */

static struct lat_thread *lt_get(struct schedlat *sl, u32 tid)
{
	bool created;
	u64 *slot = u64map_slot(&sl->thread_index, tid, &created);
	if (created) {
		struct lat_thread t = { .tid = tid };
		VEC_PUSH(&sl->threads, t);
		*slot = sl->threads.n;
	}
	return &sl->threads.v[*slot - 1];
}

static const char *lt_comm(const struct lat_thread *t)
{
	if (t->rt)
		return t->rt->comm;
	return t->comm[0] ? t->comm : t->tid ? "[unknown]" : "swapper";
}

static struct cpu_log *cpu_log(struct schedlat *sl, u32 cpu)
{
	if (cpu >= 4096)
		return NULL;
	while (sl->cpus.n <= cpu)
		VEC_PUSH(&sl->cpus, NULL);
	if (!sl->cpus.v[cpu])
		sl->cpus.v[cpu] = xcalloc(1, sizeof(struct cpu_log));
	return sl->cpus.v[cpu];
}

static void log_push(struct cpu_log *l, u64 time, u32 tid)
{
	u32 last = (l->head + CPU_LOG - 1) % CPU_LOG;
	if (l->n && l->tid[last] == tid)
		return;              /* the same switch seen twice */
	l->time[l->head] = time;
	l->tid[l->head] = tid;
	l->head = (l->head + 1) % CPU_LOG;
	if (l->n < CPU_LOG)
		l->n++;
}

/* ---- the maximum and what ran meanwhile ---------------------------------- */

static void meanwhile_add(struct schedlat *sl, u32 tid, u64 ns)
{
	struct lat_max *m = &sl->max;
	for (int i = 0; i < m->nwho; i++)
		if (m->who[i].tid == tid) {
			m->who[i].ns += ns;
			return;
		}
	if (m->nwho == MEANWHILE_MAX)
		return;
	struct meanwhile *w = &m->who[m->nwho++];
	w->tid = tid;
	w->ns = ns;
	snprintf(w->comm, sizeof(w->comm), "%s", lt_comm(lt_get(sl, tid)));
}

/* Who held the CPU between the wakeup and the switch-in, from its log. */
static void meanwhile_fill(struct schedlat *sl, const struct cpu_log *l, u64 from, u64 to)
{
	u64 end = to;
	sl->max.nwho = 0;
	sl->max.log_short = true;
	for (u32 k = 0; l && k < l->n; k++) {
		u32 i = (l->head + CPU_LOG - 1 - k) % CPU_LOG;
		u64 start = l->time[i];
		if (start < end) {
			u64 lo = MAX(start, from);
			if (end > lo)
				meanwhile_add(sl, l->tid[i], end - lo);
		}
		end = MIN(end, start);
		if (start <= from) {
			sl->max.log_short = false;
			break;
		}
	}
}

static void note_max(struct schedlat *sl, const struct lat_thread *t, u64 lat, u64 now, u32 cpu)
{
	struct lat_max *m = &sl->max;
	m->ns = lat;
	m->wake_time = t->wake_time;
	m->run_time = now;
	m->tid = t->tid;
	m->preempted = t->kind == WAIT_PREEMPT;
	m->pid = t->rt ? t->rt->pid : t->tid;
	m->cpu = (int)cpu;
	snprintf(m->comm, sizeof(m->comm), "%s", lt_comm(t));
	meanwhile_fill(sl, cpu < sl->cpus.n ? sl->cpus.v[cpu] : NULL, t->wake_time, now);
}

/* ---- histograms ---------------------------------------------------------- */

static int log2_slot(u64 us)
{
	int s = 0;
	while (us >= 2 && s < LAT_SLOTS - 1) {
		us >>= 1;
		s++;
	}
	return s;
}

static void hist_add(struct lat_hist *h, u64 ns)
{
	h->slot[log2_slot(ns / 1000)]++;
	h->count++;
}

static struct lat_group *group_for(struct schedlat *sl, const struct lat_thread *t)
{
	const char *comm = lt_comm(t);
	u32 pid = t->rt ? t->rt->pid : t->tid;
	u64 key = pid;
	if (sl->o.per_comm) {
		key = 1469598103934665603ull;
		for (const char *p = comm; *p; p++)
			key = (key ^ (u8)*p) * 1099511628211ull;
	}
	bool created;
	u64 *slot = u64map_slot(&sl->group_index, key, &created);
	if (created) {
		struct lat_group g = { .pid = pid };
		snprintf(g.comm, sizeof(g.comm), "%s", comm);
		VEC_PUSH(&sl->groups, g);
		*slot = sl->groups.n;
	}
	return &sl->groups.v[*slot - 1];
}

static void group_add(struct lat_group *g, const struct lat_thread *t, u64 lat)
{
	hist_add(&g->h, lat);
	if (t->rt)
		g->rt = t->rt;
}

/* ---- events -------------------------------------------------------------- */

/* Whether a wait ending at time counts in this window (--time keeps the
 * waits that end inside it); outside, it is not counted at all. */
static bool ends_inside(const struct schedlat *sl, u64 time)
{
	return rp_filter_time(sl->o.filter, time);
}

/* The wait of t ended at now: t ran on cpu. */
static void wait_measured(struct schedlat *sl, struct lat_thread *t, u64 now, u32 cpu)
{
	t->pending = false;
	if (!ends_inside(sl, now))
		return;
	u64 lat = now > t->wake_time ? now - t->wake_time : 0;
	u32 pid = t->rt ? t->rt->pid : t->tid;
	sl->waits[t->kind]++;
	bool kind_asked = t->kind == WAIT_PREEMPT ? !sl->o.no_preemptions : !sl->o.no_wakeups;
	if (!kind_asked || !rp_filter_task(sl->o.filter, pid, t->tid, lt_comm(t)) ||
	    !rp_filter_cpu(sl->o.filter, (int)cpu)) {
		sl->filtered[t->kind]++;
		return;
	}
	sl->measured[t->kind]++;
	hist_add(&sl->all, lat);
	if (sl->o.per_comm || sl->o.per_pid)
		group_add(group_for(sl, t), t, lat);
	if (lat >= sl->max.ns)
		note_max(sl, t, lat, now, cpu);
}

static void switched_in(struct schedlat *sl, u32 tid, u64 now, u32 cpu,
			const struct rp_thread *rt)
{
	struct lat_thread *t = lt_get(sl, tid);
	if (rt && rt->tid == tid)
		t->rt = rt;
	if (t->slept && !t->pending && !t->running &&
	    rp_filter_pass(sl->o.filter, t->rt ? t->rt->pid : tid, tid, lt_comm(t), (int)cpu, now))
		sl->unwoken++;       /* its wakeup was lost (idle CPU) */
	t->slept = false;
	if (t->pending)
		wait_measured(sl, t, now, cpu);
	t = lt_get(sl, tid);
	t->running = true;
	struct cpu_log *l = cpu_log(sl, cpu);
	if (l)
		log_push(l, now, tid);
}

/* A switch-out; state is its letter, or 0 for a switch record (which
 * follows the tracepoint and adds nothing but the end of the run). */
static void switched_out(struct schedlat *sl, u32 tid, const struct rp_thread *rt, char state,
			 u64 now)
{
	struct lat_thread *t = lt_get(sl, tid);
	if (rt && rt->tid == tid)
		t->rt = rt;
	bool slept = state && state != 'R' && state != 'X' && state != 'Z';
	if (t->running || slept)
		t->slept = slept;
	/* Preempted, still runnable: it waits for a CPU from now, as
	 * runqlat counts (a wait already begun, its switch-in lost, goes on). */
	if (state == 'R' && !t->pending) {
		t->pending = true;
		t->kind = WAIT_PREEMPT;
		t->wake_time = now;
	}
	t->running = false;
}

static void woken(struct schedlat *sl, const struct sched_ev *e, u64 now)
{
	enum wait_kind kind = e->kind == SCHED_WAKEUP_NEW ? WAIT_WAKEUP_NEW : WAIT_WAKEUP;
	struct lat_thread *t = lt_get(sl, e->target);
	if (e->comm[0])
		memcpy(t->comm, e->comm, sizeof(t->comm));
	/* Running, or preempted and still waiting: no new wait begins. */
	if ((t->running && kind == WAIT_WAKEUP) || (t->pending && t->kind == WAIT_PREEMPT)) {
		if (ends_inside(sl, now)) {
			sl->waits[kind]++;
			sl->while_running[kind]++;
		}
		return;
	}
	if (t->pending && ends_inside(sl, now)) {
		sl->waits[t->kind]++;
		sl->superseded[t->kind]++;   /* as runqlat: the latest wakeup counts */
	}
	t->pending = true;
	t->kind = kind;
	t->wake_time = now;
}

static int sl_sample(void *ctx, const struct rp_sample *s)
{
	struct schedlat *sl = ctx;
	struct sched_ev e;
	sl->last_time = MAX(sl->last_time, s->s->time);
	switch (sched_tp_decode(sl->tp, s->attr, s->s, &e)) {
	case SCHED_SWITCH:
		if (e.prev_pid)
			switched_out(sl, e.prev_pid, s->thread, e.prev_state, s->s->time);
		switched_in(sl, e.next_pid, s->s->time, s->s->cpu, NULL);
		break;
	case SCHED_WAKEUP:
	case SCHED_WAKEUP_NEW:
		woken(sl, &e, s->s->time);
		break;
	default:
		break;
	}
	return 0;
}

static int sl_event(void *ctx, const struct pd_event *ev, const struct rp_thread *rt)
{
	struct schedlat *sl = ctx;
	u32 tid;
	bool out, preempt;
	if (!sched_switch_record(ev, &tid, &out, &preempt) || tid == (u32)-1)
		return 0;
	if (ev->has_time)
		sl->last_time = MAX(sl->last_time, ev->s.time);
	if (out)
		switched_out(sl, tid, rt, 0, ev->s.time);
	else
		switched_in(sl, tid, ev->s.time, ev->s.cpu, rt);
	return 0;
}

static int sl_finish(void *ctx)
{
	struct schedlat *sl = ctx;
	/* The waits still open end with the recording. */
	if (!ends_inside(sl, sl->last_time))
		return 0;
	for (size_t i = 0; i < sl->threads.n; i++) {
		const struct lat_thread *t = &sl->threads.v[i];
		if (t->pending) {
			sl->waits[t->kind]++;
			sl->unfinished[t->kind]++;
		}
	}
	return 0;
}

struct rp_sink schedlat_sink(struct schedlat *sl)
{
	return (struct rp_sink){ .ctx = sl, .sample = sl_sample, .event = sl_event,
				 .finish = sl_finish };
}

struct schedlat *schedlat_new(const struct schedlat_opts *o, const struct sched_tp *tp)
{
	struct schedlat *sl = xcalloc(1, sizeof(*sl));
	sl->o = *o;
	sl->tp = tp;
	u64map_init(&sl->thread_index);
	u64map_init(&sl->group_index);
	return sl;
}

void schedlat_free(struct schedlat *sl)
{
	if (!sl)
		return;
	for (size_t i = 0; i < sl->cpus.n; i++)
		free(sl->cpus.v[i]);
	VEC_FREE(&sl->cpus);
	VEC_FREE(&sl->threads);
	VEC_FREE(&sl->groups);
	u64map_free(&sl->thread_index);
	u64map_free(&sl->group_index);
	free(sl);
}

void schedlat_reset(struct schedlat *sl)
{
	memset(&sl->all, 0, sizeof(sl->all));
	VEC_FREE(&sl->groups);
	u64map_free(&sl->group_index);
	u64map_init(&sl->group_index);
	memset(sl->waits, 0, sizeof(sl->waits));
	memset(sl->measured, 0, sizeof(sl->measured));
	memset(sl->filtered, 0, sizeof(sl->filtered));
	memset(sl->unfinished, 0, sizeof(sl->unfinished));
	memset(sl->superseded, 0, sizeof(sl->superseded));
	memset(sl->while_running, 0, sizeof(sl->while_running));
	sl->unwoken = 0;
	memset(&sl->max, 0, sizeof(sl->max));
}

/* ---- output -------------------------------------------------------------- */

static void print_hist(const struct lat_hist *h, FILE *out)
{
	int top = -1;
	u64 most = 0;
	for (int i = 0; i < LAT_SLOTS; i++)
		if (h->slot[i]) {
			top = i;
			most = MAX(most, h->slot[i]);
		}
	fprintf(out, "%10s%-14s : count     distribution\n", "usecs", "");
	for (int i = 0; i <= top; i++) {
		u64 lo = i ? 1ull << i : 0, hi = (1ull << (i + 1)) - 1;
		int stars = (int)(h->slot[i] * 40 / most);
		char bar[41];
		memset(bar, '*', (size_t)stars);
		memset(bar + stars, ' ', (size_t)(40 - stars));
		bar[40] = '\0';
		fprintf(out, "%10llu -> %-10llu : %-8llu |%s|\n", (unsigned long long)lo,
			(unsigned long long)hi, (unsigned long long)h->slot[i], bar);
	}
}

static void print_max(const struct schedlat *sl, FILE *out)
{
	const struct lat_max *m = &sl->max;
	if (!sl->all.count)
		return;
	fprintf(out, "max: %llu us: %s (%u/%u) %s at %llu.%06llu, ran on CPU %d at %llu.%06llu\n",
		(unsigned long long)(m->ns / 1000), m->comm, m->pid, m->tid,
		m->preempted ? "preempted" : "woken",
		(unsigned long long)(m->wake_time / 1000000000),
		(unsigned long long)(m->wake_time % 1000000000 / 1000), m->cpu,
		(unsigned long long)(m->run_time / 1000000000),
		(unsigned long long)(m->run_time % 1000000000 / 1000));
	fprintf(out, "meanwhile on CPU %d:", m->cpu);
	for (int i = 0; i < m->nwho; i++)
		fprintf(out, "%s %s (%u) %llu us", i ? "," : "", m->who[i].comm, m->who[i].tid,
			(unsigned long long)(m->who[i].ns / 1000));
	if (!m->nwho)
		fputs(" nothing recorded", out);
	fputs(m->log_short ? " (the CPU's switches before that were not recorded)\n" : "\n", out);
}

static void print_header(const struct schedlat *sl, FILE *out)
{
	const struct schedlat_opts *o = &sl->o;
	fprintf(out, "run-queue waits (%s, to the run): %llu measured, %llu after a wakeup, "
		"%llu after a preemption\n",
		o->no_preemptions ? "from a wakeup; --waits wakeup" :
		o->no_wakeups ? "from a preemption; --waits preempt" :
		"as runqlat counts them: from a wakeup, or from a preemption",
		(unsigned long long)sl->all.count,
		(unsigned long long)(sl->measured[WAIT_WAKEUP] + sl->measured[WAIT_WAKEUP_NEW]),
		(unsigned long long)sl->measured[WAIT_PREEMPT]);
}

static void print_summary(const struct schedlat *sl, FILE *out)
{
	const u64 *w = sl->waits, *m = sl->measured, *r = sl->while_running;
	const u64 *s = sl->superseded, *u = sl->unfinished, *f = sl->filtered;
	enum { W = WAIT_WAKEUP, N = WAIT_WAKEUP_NEW, P = WAIT_PREEMPT };
	fprintf(out, "wakeups: %llu recorded (%llu sched_wakeup, %llu sched_wakeup_new): "
		"%llu measured, %llu while already running or runnable, %llu superseded by a "
		"later wakeup, %llu never ran before the end, %llu filtered out\n",
		(unsigned long long)(w[W] + w[N]), (unsigned long long)w[W],
		(unsigned long long)w[N], (unsigned long long)(m[W] + m[N]),
		(unsigned long long)(r[W] + r[N]), (unsigned long long)(s[W] + s[N]),
		(unsigned long long)(u[W] + u[N]), (unsigned long long)(f[W] + f[N]));
	/* A wakeup of a preempted thread begins no wait: none supersedes. */
	fprintf(out, "preemptions: %llu switch-outs still runnable: %llu measured, "
		"%llu never ran before the end, %llu filtered out\n",
		(unsigned long long)w[P], (unsigned long long)m[P], (unsigned long long)u[P],
		(unsigned long long)f[P]);
	if (sl->unwoken)
		fprintf(out, "unwoken: %llu switch-ins after a sleep had no recorded wakeup "
			"(lost: perf_events drops events on idle CPUs; keep the CPUs busy, "
			"e.g. with a SCHED_IDLE spinner)\n", (unsigned long long)sl->unwoken);
}

int schedlat_print(struct schedlat *sl, FILE *out)
{
	print_header(sl, out);
	if (sl->o.per_comm || sl->o.per_pid) {
		for (size_t i = 0; i < sl->groups.n; i++) {
			const struct lat_group *g = &sl->groups.v[i];
			if (sl->o.per_comm)
				fprintf(out, "\ncomm = %s\n", g->comm);
			else
				fprintf(out, "\npid = %u %s\n", g->pid, g->rt ? g->rt->comm : g->comm);
			print_hist(&g->h, out);
		}
		fputc('\n', out);
	} else {
		print_hist(&sl->all, out);
	}
	print_summary(sl, out);
	print_max(sl, out);
	if (ferror(out)) {
		err_set("writing the histogram failed");
		return -1;
	}
	return 0;
}
