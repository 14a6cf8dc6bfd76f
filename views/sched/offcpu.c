/* offcpu.c - the off-CPU sink: follows each thread's switches (sched_switch
 * samples and switch records), turns switch-out -> switch-in into an
 * interval charged to the switch-out stack, and repairs what a lossy
 * recording leaves out (a missing switch-in closes at the thread's next
 * sign of running, and is counted).
 *
 * In a live session, when files are released, the stacks no aggregate
 * counts and no thread is off in are dropped once they are half of all
 * (drop_stacks; the stacks themselves are kept as places): offcpu -a over
 * 30 s grew from 42 to 162 MB before, 26 to 36 MB with it (its table, a
 * row per thread, grows), and with a filter that shows nothing, 44 and
 * 113 MB at 5 and 20 s before, 26 and 22 MB with it. */
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "views/sched/sched.h"

/* T_UNKNOWN: there before anything of it was seen; T_NEW: born in the
 * recording, not run yet. */
enum { T_UNKNOWN, T_NEW, T_ON, T_OFF, T_DEAD };

struct offcpu {
	struct offcpu_opts o;
	const struct sched_tp *tp;
	VEC(struct oc_thread) threads;
	struct u64map thread_index;        /* tid -> index + 1 */
	struct stackset stacks;            /* the switch-out and waker stacks,
					      as places: they outlive the
					      files (rp_opts.release_files) */
	VEC(struct oc_agg) aggs;
	struct u64map agg_index;           /* hash -> first agg index + 1 */
	struct oc_stats st;
	bool finished;                     /* open intervals counted to the end */
	size_t stacks_kept;                /* stacks after the last drop_stacks */
};

/* ---- threads ------------------------------------------------------------- */

static bool real_tid(u32 tid)
{
	return tid != 0 && tid != (u32)-1;   /* not the idle task, not "none" */
}

static struct oc_thread *thread_get(struct offcpu *oc, u32 tid, u64 now)
{
	bool created;
	u64 *slot = u64map_slot(&oc->thread_index, tid, &created);
	if (!created)
		return &oc->threads.v[*slot - 1];
	struct oc_thread t = { .pid = tid, .tid = tid, .state = T_UNKNOWN, .since = now,
			       .start = now, .stack = OC_NONE, .waker_stack = OC_NONE,
			       .cpu = -1 };
	VEC_PUSH(&oc->threads, t);
	*slot = oc->threads.n;
	return &oc->threads.v[oc->threads.n - 1];
}

static void thread_saw(struct oc_thread *t, const struct rp_thread *rt)
{
	if (rt && rt->tid == t->tid) {
		t->rt = rt;
		t->pid = rt->pid;
	}
}

const char *offcpu_comm(const struct oc_thread *t)
{
	return t->rt ? t->rt->comm : "[unknown]";
}

/* ---- stacks and aggregates ---------------------------------------------- */

/* --user-stacks-only and --kernel-stacks-only: the frames a stack keeps. */
static bool frame_kept(const void *ctx, const struct rp_frame *f)
{
	const struct offcpu *oc = ctx;
	return !(oc->o.user_only && f->kernel) && !(oc->o.kernel_only && !f->kernel);
}

static u32 stack_intern(struct offcpu *oc, const struct rp_frame *f, int n, u32 pid)
{
	bool added;
	return stackset_intern(&oc->stacks, f, n, pid, frame_kept, oc, &added);
}

static u64 agg_hash(const struct oc_thread *t, bool wakers)
{
	u64 h = hash_u64(((u64)t->tid << 32) ^ (u64)(u8)t->reason ^ ((u64)t->stack << 8));
	if (wakers && t->woken)
		h = hash_u64(h ^ ((u64)t->waker_stack << 32) ^ t->waker_tid);
	return h;
}

static bool agg_matches(const struct oc_agg *a, const struct oc_thread *t, bool wakers)
{
	bool woken = wakers && t->woken;
	return a->tid == t->tid && a->state == t->reason && a->stack == t->stack &&
	       a->waker_stack == (woken ? t->waker_stack : OC_NONE) &&
	       a->waker_tid == (woken ? t->waker_tid : 0);
}

static struct oc_agg *agg_get(struct offcpu *oc, const struct oc_thread *t)
{
	u64 h = agg_hash(t, oc->o.wakers);
	u64 *head = u64map_get(&oc->agg_index, h);
	for (u32 i = head ? (u32)*head - 1 : OC_NONE; i != OC_NONE; i = oc->aggs.v[i].next)
		if (agg_matches(&oc->aggs.v[i], t, oc->o.wakers))
			return &oc->aggs.v[i];
	bool woken = oc->o.wakers && t->woken;
	struct oc_agg a = { .pid = t->pid, .tid = t->tid, .state = t->reason, .stack = t->stack,
			    .waker_stack = woken ? t->waker_stack : OC_NONE,
			    .waker_pid = woken ? t->waker_pid : 0,
			    .waker_tid = woken ? t->waker_tid : 0,
			    .hash = h, .next = head ? (u32)*head - 1 : OC_NONE };
	snprintf(a.comm, sizeof(a.comm), "%s", offcpu_comm(t));
	if (woken)
		snprintf(a.waker_comm, sizeof(a.waker_comm), "%s",
			 t->waker_rt ? t->waker_rt->comm : t->waker_tid ? "[unknown]" : "swapper");
	VEC_PUSH(&oc->aggs, a);
	*u64map_slot(&oc->agg_index, h, NULL) = oc->aggs.n;
	return &oc->aggs.v[oc->aggs.n - 1];
}

/* ---- intervals ----------------------------------------------------------- */

/* The part of from..to inside the --time window, in *ns; false when they
 * do not meet (an instant inside the window is kept, with no length). */
static bool window_part(const struct rp_filter *f, u64 from, u64 to, u64 *ns)
{
	if (to < from)
		to = from;
	if (f && (to < f->time_start || (f->time_end && from > f->time_end)))
		return false;
	rp_filter_clip(f, &from, &to);
	*ns = to > from ? to - from : 0;
	return true;
}

/* Whether the interval t is closing at now is shown, and its part in the
 * window: --min-us and --max-us take its whole length, --state its
 * state, --cpu the CPU it was switched out on. */
static bool interval_shown(const struct offcpu *oc, const struct oc_thread *t, u64 now,
			   u64 *part)
{
	const struct offcpu_opts *o = &oc->o;
	u64 dur = now > t->since ? now - t->since : 0;
	if (dur < o->min_ns || (o->max_ns && dur > o->max_ns))
		return false;
	if (o->states && !strchr(o->states, t->reason))
		return false;
	if (!rp_filter_cpu(o->filter, t->cpu))
		return false;
	return window_part(o->filter, t->since, now, part);
}

/* Whether t is one of the threads asked about (--pid, --tid, --comm):
 * only their intervals are shown and counted. */
static bool thread_asked(const struct offcpu *oc, const struct oc_thread *t)
{
	return rp_filter_task(oc->o.filter, t->pid, t->tid, offcpu_comm(t));
}

/* t, seen on-CPU since t->since, stops running at now: its time counts
 * when it ran on a --cpu CPU, within the window. */
static void add_on(struct offcpu *oc, struct oc_thread *t, u64 now)
{
	u64 ns;
	if (t->state == T_ON && rp_filter_cpu(oc->o.filter, t->cpu) &&
	    window_part(oc->o.filter, t->since, now, &ns))
		t->on_ns += ns;
}

/* t runs from now on CPU cpu. */
static void run_from(struct oc_thread *t, u64 now, int cpu)
{
	t->state = T_ON;
	t->since = now;
	t->cpu = cpu;
}

/* Ends t's off-CPU interval at now, where t runs on cpu; marks say how
 * it ended. */
static void interval_close(struct offcpu *oc, struct oc_thread *t, u64 now, int cpu,
			   bool repaired, bool open)
{
	bool asked = thread_asked(oc, t);
	u64 part;
	if (asked) {
		oc->st.intervals++;
		oc->st.repaired += repaired;
		oc->st.open += open;
	}
	if (asked && interval_shown(oc, t, now, &part)) {
		struct oc_agg *a = agg_get(oc, t);
		a->total_ns += part;
		a->count++;
		a->repaired += repaired;
		a->open += open;
		oc->st.shown++;
		oc->st.shown_ns += part;
		t->off_ns += part;
		t->intervals++;
		t->repaired += repaired;
		t->open += open;
	}
	run_from(t, now, cpu);
	t->woken = false;
}

static void interval_open(struct offcpu *oc, struct oc_thread *t, u64 now, u32 stack,
			  char reason, int cpu)
{
	add_on(oc, t, now);
	t->cpu = cpu;
	if (reason == 'X' || reason == 'Z') {
		/* Its last switch: a dead thread is not waiting for anything. */
		t->state = T_DEAD;
		t->end = now;
		t->exited = true;
		return;
	}
	t->state = T_OFF;
	t->since = now;
	t->stack = stack;
	t->reason = reason;
	t->woken = false;
}

/* Something showed t running at now on cpu. */
static void saw_running(struct offcpu *oc, struct oc_thread *t, u64 now, int cpu)
{
	t->seen = true;
	if (t->state == T_OFF)
		interval_close(oc, t, now, cpu, true, false);   /* its switch-in was lost */
	else if (t->state == T_UNKNOWN || t->state == T_NEW)
		run_from(t, now, cpu);
}

static void switched_in(struct offcpu *oc, u32 tid, u64 now, int cpu)
{
	if (!real_tid(tid))
		return;
	struct oc_thread *t = thread_get(oc, tid, now);
	t->seen = true;
	if (t->state == T_OFF) {
		interval_close(oc, t, now, cpu, false, false);
	} else if (t->state == T_UNKNOWN) {
		/* Off since before the recording: its stack and start are
		 * unknown, so it is counted, not charged. */
		t->begun_before++;
		run_from(t, now, cpu);
	} else if (t->state == T_NEW) {
		run_from(t, now, cpu);       /* its first run */
	}
}

static void switched_out(struct offcpu *oc, struct oc_thread *t, u64 now, u32 stack, char reason,
			 int cpu)
{
	t->seen = true;
	if (t->state == T_OFF)
		interval_close(oc, t, now, cpu, true, false);   /* ran since, unseen */
	interval_open(oc, t, now, stack, reason, cpu);
}

/* ---- the sink ------------------------------------------------------------ */

void offcpu_note_time(struct offcpu *oc, u64 t)
{
	if (!t)
		return;              /* a record made at the start, not an event */
	if (!oc->st.first_time || t < oc->st.first_time)
		oc->st.first_time = t;
	if (t > oc->st.last_time)
		oc->st.last_time = t;
}

void offcpu_feed_switch_out(struct offcpu *oc, u32 tid, u32 pid, u64 now,
			    const struct rp_frame *f, int n, char state, int cpu)
{
	if (!real_tid(tid))
		return;
	u32 stack = stack_intern(oc, f, n, pid);
	struct oc_thread *t = thread_get(oc, tid, now);
	t->pid = pid;
	switched_out(oc, t, now, stack, state, cpu);
}

void offcpu_feed_switch_in(struct offcpu *oc, u32 tid, u64 now, int cpu)
{
	switched_in(oc, tid, now, cpu);
}

void offcpu_feed_running(struct offcpu *oc, u32 tid, u64 now, int cpu)
{
	if (real_tid(tid))
		saw_running(oc, thread_get(oc, tid, now), now, cpu);
}

void offcpu_feed_fork(struct offcpu *oc, u32 tid, u32 pid, u64 now)
{
	if (!real_tid(tid))
		return;
	struct oc_thread *t = thread_get(oc, tid, now);
	/* Born now, to run once switched in: no earlier life to account. */
	*t = (struct oc_thread){ .pid = pid, .tid = tid, .state = T_NEW, .since = now,
				 .start = now, .forked = true, .stack = OC_NONE,
				 .waker_stack = OC_NONE, .cpu = -1 };
}

static void on_switch(struct offcpu *oc, const struct rp_sample *s, const struct sched_ev *e)
{
	u64 now = s->s->time;
	oc->st.switches++;
	if (real_tid(e->prev_pid)) {
		struct oc_thread *t = thread_get(oc, e->prev_pid, now);
		thread_saw(t, s->thread);
		u32 pid = s->thread && s->thread->tid == e->prev_pid ? s->thread->pid : t->pid;
		offcpu_feed_switch_out(oc, e->prev_pid, pid, now, s->frames, s->nframes,
				       e->prev_state, (int)s->s->cpu);
	}
	switched_in(oc, e->next_pid, now, (int)s->s->cpu);
}

static void on_wakeup(struct offcpu *oc, const struct rp_sample *s, const struct sched_ev *e)
{
	u64 now = s->s->time;
	oc->st.wakeups++;
	if (e->kind != SCHED_WAKEUP || !oc->o.wakers || !real_tid(e->target))
		return;
	struct oc_thread *t = thread_get(oc, e->target, now);
	if (t->state != T_OFF)
		return;
	/* The last waker before the switch-in is the one that counts. */
	u32 waker = real_tid(s->s->tid) ? s->s->tid : 0;
	u32 pid = s->thread ? s->thread->pid : waker;
	/* Without a call chain the one frame would be the tracepoint's own
	 * address: the waker is known, its stack is not. */
	bool chain = s->attr && (s->attr->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	u32 stack = stack_intern(oc, s->frames, chain ? s->nframes : 0, pid);
	t = thread_get(oc, e->target, now);       /* the vector may have moved */
	t->woken = true;
	t->waker_stack = stack;
	t->waker_tid = waker;
	t->waker_pid = waker ? pid : 0;
	t->waker_rt = waker ? s->thread : NULL;
}

static int oc_sample(void *ctx, const struct rp_sample *s)
{
	struct offcpu *oc = ctx;
	struct sched_ev e;
	enum sched_kind k = sched_tp_decode(oc->tp, s->attr, s->s, &e);
	offcpu_note_time(oc, s->s->time);
	if (k == SCHED_SWITCH) {
		on_switch(oc, s, &e);
		return 0;
	}
	if (real_tid(s->s->tid)) {
		struct oc_thread *t = thread_get(oc, s->s->tid, s->s->time);
		thread_saw(t, s->thread);
		saw_running(oc, t, s->s->time, (int)s->s->cpu);
	}
	if (k != SCHED_OTHER) {
		on_wakeup(oc, s, &e);
		return 0;
	}
	return oc->o.on_cpu ? oc->o.on_cpu(oc->o.on_cpu_ctx, s) : 0;
}

/* A switch record: a switch-in, or a switch-out whose sched_switch sample
 * is missing (then the interval has no stack). */
static void on_switch_record(struct offcpu *oc, const struct pd_event *ev,
			     const struct rp_thread *rt)
{
	u32 tid;
	bool out, preempt;
	if (!sched_switch_record(ev, &tid, &out, &preempt) || !real_tid(tid))
		return;
	if (!out) {
		switched_in(oc, tid, ev->s.time, (int)ev->s.cpu);
		return;
	}
	struct oc_thread *t = thread_get(oc, tid, ev->s.time);
	thread_saw(t, rt);
	t->seen = true;
	if (t->state == T_ON || t->state == T_UNKNOWN || t->state == T_NEW) {
		oc->st.no_stack++;
		interval_open(oc, t, ev->s.time, OC_NONE, preempt ? 'R' : '?', (int)ev->s.cpu);
	}
}

static void on_task(struct offcpu *oc, const struct pd_event *ev)
{
	u64 now = ev->has_time ? ev->s.time : oc->st.last_time;
	if (!real_tid(ev->u.task.tid))
		return;
	/* A fork at time 0 is the recording's list of the threads there at
	 * its start (as perf writes it), not a birth: their past is unknown. */
	if (ev->type == PERF_RECORD_FORK && ev->has_time && ev->s.time) {
		offcpu_feed_fork(oc, ev->u.task.tid, ev->u.task.pid, now);
		return;
	}
	struct oc_thread *t = thread_get(oc, ev->u.task.tid, now);
	t->pid = ev->u.task.pid;
	if (ev->type == PERF_RECORD_FORK)
		return;
	t->exited = true;
	if (!t->end)
		t->end = now;
}

static int oc_event(void *ctx, const struct pd_event *ev, const struct rp_thread *rt)
{
	struct offcpu *oc = ctx;
	if (ev->has_time)
		offcpu_note_time(oc, ev->s.time);
	if (ev->type == PERF_RECORD_FORK || ev->type == PERF_RECORD_EXIT)
		on_task(oc, ev);
	else
		on_switch_record(oc, ev, rt);
	return 0;
}

/* Intervals still open are counted to the end of the recording. */
static int oc_finish(void *ctx)
{
	struct offcpu *oc = ctx;
	if (oc->finished)
		return 0;          /* the last tick did it */
	oc->finished = true;
	u64 end = oc->st.last_time;
	for (size_t i = 0; i < oc->threads.n; i++) {
		struct oc_thread *t = &oc->threads.v[i];
		if (!t->end)
			t->end = end;
		if (t->state == T_OFF)
			interval_close(oc, t, t->end, t->cpu, false, true);
		add_on(oc, t, t->end);       /* running at its exit or the end */
		/* Threads that were there at the start live from the start. */
		if (!t->forked)
			t->start = oc->st.first_time;
		/* Only threads the recording followed count: a per-task
		 * recording sees other threads only as they are switched in. */
		if (t->rt && thread_asked(oc, t))
			oc->st.begun_before += t->begun_before;
	}
	return 0;
}

static int oc_tick(void *ctx, u64 end, bool last)
{
	struct offcpu *oc = ctx;
	if (last)
		oc_finish(oc);
	return oc->o.on_tick(oc->o.on_tick_ctx, oc, end, last);
}

/* A stack id after stackset_compact (to: old id -> new one). */
static u32 moved(const u32 *to, u32 id)
{
	return id == OC_NONE ? OC_NONE : to[id];
}

static void mark(bool *used, u32 id)
{
	if (id != OC_NONE)
		used[id] = true;
}

/* The aggregates' index anew, their stacks' ids having changed. */
static void reindex_aggs(struct offcpu *oc)
{
	u64map_free(&oc->agg_index);
	u64map_init(&oc->agg_index);
	for (size_t i = 0; i < oc->aggs.n; i++) {
		struct oc_agg *a = &oc->aggs.v[i];
		struct oc_thread key = { .tid = a->tid, .reason = a->state, .stack = a->stack,
					 .woken = a->waker_stack != OC_NONE,
					 .waker_stack = a->waker_stack, .waker_tid = a->waker_tid };
		a->hash = agg_hash(&key, oc->o.wakers);
		u64 *head = u64map_slot(&oc->agg_index, a->hash, NULL);
		a->next = *head ? (u32)*head - 1 : OC_NONE;
		*head = i + 1;
	}
}

/* A live view's stacks that no aggregate counts and no thread waits in
 * are dropped (those of threads another filter leaves out, or of
 * intervals printed and reset), once they are half of all: a long
 * session keeps what it shows, not every stack it saw. */
static void drop_stacks(struct offcpu *oc)
{
	size_t n = oc->stacks.stacks.n;
	if (n < 2 * oc->stacks_kept + 1024)
		return;
	bool *used = xcalloc(n, sizeof(*used));
	for (size_t i = 0; i < oc->aggs.n; i++) {
		mark(used, oc->aggs.v[i].stack);
		mark(used, oc->aggs.v[i].waker_stack);
	}
	/* A thread's stacks count only while it is off (its open interval). */
	for (size_t i = 0; i < oc->threads.n; i++) {
		if (oc->threads.v[i].state != T_OFF)
			continue;
		mark(used, oc->threads.v[i].stack);
		mark(used, oc->threads.v[i].waker_stack);
	}
	u32 *to = stackset_compact(&oc->stacks, used);
	for (size_t i = 0; i < oc->aggs.n; i++) {
		oc->aggs.v[i].stack = moved(to, oc->aggs.v[i].stack);
		oc->aggs.v[i].waker_stack = moved(to, oc->aggs.v[i].waker_stack);
	}
	for (size_t i = 0; i < oc->threads.n; i++) {
		oc->threads.v[i].stack = moved(to, oc->threads.v[i].stack);
		oc->threads.v[i].waker_stack = moved(to, oc->threads.v[i].waker_stack);
	}
	reindex_aggs(oc);
	oc->stacks_kept = oc->stacks.stacks.n;
	free(to);
	free(used);
}

/* Before the replay releases files (live, at most once a second): the
 * stacks hold none of theirs; the stacks nothing counts go too. */
static int oc_forget_files(void *ctx)
{
	struct offcpu *oc = ctx;
	stackset_forget(&oc->stacks);
	drop_stacks(oc);
	return 0;
}

struct rp_sink offcpu_sink(struct offcpu *oc)
{
	return (struct rp_sink){ .ctx = oc, .sample = oc_sample, .event = oc_event,
				 .tick = oc->o.on_tick ? oc_tick : NULL, .finish = oc_finish,
				 .forget_files = oc_forget_files };
}

void offcpu_reset(struct offcpu *oc)
{
	oc->aggs.n = 0;
	u64map_free(&oc->agg_index);
	u64map_init(&oc->agg_index);
	u64 first = oc->st.first_time, last = oc->st.last_time;
	u64 switches = oc->st.switches, wakeups = oc->st.wakeups;
	oc->st = (struct oc_stats){ .first_time = first, .last_time = last,
				    .switches = switches, .wakeups = wakeups };
}

struct offcpu *offcpu_new(const struct offcpu_opts *o, const struct sched_tp *tp)
{
	struct offcpu *oc = xcalloc(1, sizeof(*oc));
	oc->o = *o;
	oc->tp = tp;
	u64map_init(&oc->thread_index);
	stackset_init(&oc->stacks);
	if (!o->keep_files)
		stackset_keep_places(&oc->stacks);
	u64map_init(&oc->agg_index);
	return oc;
}

void offcpu_free(struct offcpu *oc)
{
	if (!oc)
		return;
	VEC_FREE(&oc->threads);
	stackset_free(&oc->stacks);
	VEC_FREE(&oc->aggs);
	u64map_free(&oc->thread_index);
	u64map_free(&oc->agg_index);
	free(oc);
}

size_t offcpu_naggs(const struct offcpu *oc) { return oc->aggs.n; }
const struct oc_agg *offcpu_agg(const struct offcpu *oc, size_t i) { return &oc->aggs.v[i]; }
size_t offcpu_nthreads(const struct offcpu *oc) { return oc->threads.n; }
const struct oc_thread *offcpu_thread(const struct offcpu *oc, size_t i) { return &oc->threads.v[i]; }
const struct oc_stats *offcpu_stats(const struct offcpu *oc) { return &oc->st; }
const struct rp_filter *oc_filter(const struct offcpu *oc) { return oc->o.filter; }

const struct rp_frame *offcpu_stack(const struct offcpu *oc, u32 stack, u32 *n)
{
	if (stack == OC_NONE || stack >= oc->stacks.stacks.n) {
		*n = 0;
		return NULL;
	}
	return stackset_frames(&oc->stacks, stack, n);
}

u64 offcpu_thread_wall(const struct offcpu *oc, const struct oc_thread *t)
{
	u64 ns;
	return window_part(oc->o.filter, t->start, t->end, &ns) ? ns : 0;
}

bool offcpu_thread_shown(const struct offcpu *oc, const struct oc_thread *t)
{
	const struct rp_filter *f = oc->o.filter;
	/* Threads only ever seen being switched in were not followed (a
	 * per-task recording's neighbours); those never seen at all (the
	 * threads listed at the start of a system-wide one) have nothing
	 * to tell. */
	if (!t->seen || (!t->rt && !t->forked) || !thread_asked(oc, t))
		return false;
	if (!offcpu_thread_wall(oc, t))
		return false;
	return !(f && f->ncpus) || t->on_ns || t->off_ns;
}
