/* test-offcpu.c - the off-CPU interval rules on histories built by hand:
 * intervals, merging by stack, repairs of missing switch-ins, intervals
 * open at the end or begun before, dead threads, filters. */
#include <string.h>

#include "tests/unit/test.h"
#include "views/sched/sched.h"

static const struct rp_frame stack_a[] = {
	{ .ip = 0xffffffff81000010, .kernel = true }, { .ip = 0x401000 }, { .ip = 0x402000 },
};
static const struct rp_frame stack_b[] = {
	{ .ip = 0xffffffff81000020, .kernel = true }, { .ip = 0x403000 },
};

static struct offcpu *fresh(const struct offcpu_opts *o)
{
	static const struct offcpu_opts none;
	return offcpu_new(o ? o : &none, NULL);
}

static void finish(struct offcpu *oc)
{
	struct rp_sink sink = offcpu_sink(oc);
	sink.finish(sink.ctx);
}

static const struct oc_agg *only_agg(struct offcpu *oc)
{
	return offcpu_naggs(oc) == 1 ? offcpu_agg(oc, 0) : NULL;
}

static void test_interval(void)
{
	struct offcpu *oc = fresh(NULL);
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 5000, 0);
	offcpu_feed_switch_out(oc, 10, 10, 6000, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 9000, 0);
	finish(oc);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->total_ns == 7000 && a->count == 2, "one stack, 7000 ns in 2");
	CHECK(a && a->state == 'S' && !a->repaired && !a->open, "plain S intervals");
	u32 n;
	CHECK(a && offcpu_stack(oc, a->stack, &n) && n == 3, "the whole stack kept");
	offcpu_free(oc);
}

static void test_stacks_apart(void)
{
	struct offcpu *oc = fresh(NULL);
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 2000, 0);
	offcpu_feed_switch_out(oc, 10, 10, 3000, stack_b, 2, 'D', 0);
	offcpu_feed_switch_in(oc, 10, 7000, 0);
	finish(oc);
	CHECK(offcpu_naggs(oc) == 2, "two stacks, got %zu", offcpu_naggs(oc));
	for (size_t i = 0; i < offcpu_naggs(oc); i++) {
		const struct oc_agg *a = offcpu_agg(oc, i);
		CHECK(a->total_ns == (a->state == 'D' ? 4000u : 1000u), "state %c: %llu ns",
		      a->state, (unsigned long long)a->total_ns);
	}
	offcpu_free(oc);
}

static void test_missing_switch_in(void)
{
	struct offcpu *oc = fresh(NULL);
	/* No switch-in: the next sample of the thread shows it ran. */
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S', 0);
	offcpu_feed_running(oc, 10, 9000, 0);
	offcpu_feed_switch_in(oc, 10, 9500, 0);   /* a late one changes nothing */
	finish(oc);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->total_ns == 8000 && a->repaired == 1, "closed at the sample, repaired");
	CHECK(offcpu_stats(oc)->repaired == 1, "counted");
	offcpu_free(oc);

	oc = fresh(NULL);
	/* Two switch-outs in a row: the first closes at the second. */
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S', 0);
	offcpu_feed_switch_out(oc, 10, 10, 4000, stack_b, 2, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 5000, 0);
	finish(oc);
	CHECK(offcpu_naggs(oc) == 2 && offcpu_stats(oc)->repaired == 1, "one repaired of two");
	u64 total = 0;
	for (size_t i = 0; i < offcpu_naggs(oc); i++)
		total += offcpu_agg(oc, i)->total_ns;
	CHECK(total == 4000, "3000 + 1000 ns, got %llu", (unsigned long long)total);
	offcpu_free(oc);
}

static void test_open_and_begun_before(void)
{
	struct offcpu *oc = fresh(NULL);
	offcpu_note_time(oc, 500);
	offcpu_feed_switch_in(oc, 11, 800, 0);     /* off since before: not charged */
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S', 0);
	offcpu_note_time(oc, 20000);
	finish(oc);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->tid == 10 && a->total_ns == 19000 && a->open == 1,
	      "open interval counted to the end and marked");
	const struct oc_thread *t11 = NULL;
	for (size_t i = 0; i < offcpu_nthreads(oc); i++)
		if (offcpu_thread(oc, i)->tid == 11)
			t11 = offcpu_thread(oc, i);
	CHECK(t11 && t11->begun_before == 1 && t11->off_ns == 0, "begun before: counted only");
	offcpu_free(oc);
}

static void test_dead_thread(void)
{
	struct offcpu *oc = fresh(NULL);
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'X', 0);
	offcpu_note_time(oc, 9000);
	finish(oc);
	CHECK(offcpu_naggs(oc) == 0, "a dead thread's last switch is no interval");
	offcpu_free(oc);
}

static void test_filters(void)
{
	struct offcpu_opts o = { .min_ns = 2000, .max_ns = 5000, .states = "S" };
	struct offcpu *oc = fresh(&o);
	offcpu_feed_switch_out(oc, 10, 10, 0, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 1000, 0);                 /* too short */
	offcpu_feed_switch_out(oc, 10, 10, 2000, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 5000, 0);                 /* kept: 3000 */
	offcpu_feed_switch_out(oc, 10, 10, 6000, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 16000, 0);                /* too long */
	offcpu_feed_switch_out(oc, 10, 10, 17000, stack_a, 3, 'D', 0);
	offcpu_feed_switch_in(oc, 10, 20000, 0);                /* wrong state */
	finish(oc);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->total_ns == 3000 && a->count == 1, "only the 3000 ns S interval");
	CHECK(offcpu_stats(oc)->intervals == 4 && offcpu_stats(oc)->shown == 1, "4 seen, 1 shown");
	offcpu_free(oc);

	struct offcpu_opts u = { .user_only = true };
	oc = fresh(&u);
	offcpu_feed_switch_out(oc, 10, 10, 0, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 1000, 0);
	finish(oc);
	u32 n = 0;
	a = only_agg(oc);
	const struct rp_frame *f = a ? offcpu_stack(oc, a->stack, &n) : NULL;
	CHECK(f && n == 2 && !f[0].kernel && f[0].ip == 0x401000, "user frames only");
	offcpu_free(oc);
}

/* Stacks are kept as places: a file released and loaded again (other
 * dso and sym pointers, the same names) lands on the stack it had, and a
 * symbol's memory reused by another after the release does not. */
static void test_reload(void)
{
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *d = sym_dso_get(c, "/tmp/offcpu-reload.so", NULL, 0, 0);
	struct sym first = { .start = 0x1000, .size = 0x40, .name = "wait_here" };
	struct sym again = first;
	struct rp_frame f[2] = { { .ip = 0xffffffff81000010, .kernel = true },
				 { .ip = 0x401010, .addr = 0x1010, .dso = d, .sym = &first } };
	struct offcpu *oc = fresh(NULL);
	struct rp_sink sink = offcpu_sink(oc);
	offcpu_feed_switch_out(oc, 10, 10, 1000, f, 2, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 2000, 0);
	sink.forget_files(sink.ctx);
	f[1].sym = &again;
	offcpu_feed_switch_out(oc, 10, 10, 3000, f, 2, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 5000, 0);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->total_ns == 3000 && a->count == 2, "the reloaded file's stack is the one it had");
	u32 n = 0;
	const struct rp_frame *k = a ? offcpu_stack(oc, a->stack, &n) : NULL;
	CHECK(k && n == 2 && !k[1].dso && k[1].sym && !strcmp(k[1].sym->name, "wait_here") &&
	      k[1].sym != &first && k[1].sym != &again &&
	      !strcmp(k[1].file, "/tmp/offcpu-reload.so"), "kept frames name their own records");
	sink.forget_files(sink.ctx);
	first.name = "other_fn";       /* first's memory now another symbol's */
	f[1].sym = &first;
	offcpu_feed_switch_out(oc, 10, 10, 6000, f, 2, 'S', 0);
	offcpu_feed_switch_in(oc, 10, 7000, 0);
	CHECK(offcpu_naggs(oc) == 2, "a reused pointer is another stack (%zu aggregates)",
	      offcpu_naggs(oc));
	offcpu_free(oc);
	sym_ctx_free(c);
}

/* A live view drops the stacks nothing counts (threads the filter leaves
 * out) when files are released; a thread off in a kept stack, and the
 * aggregates, keep theirs. */
static void test_drop_stacks(void)
{
	pid_t asked = 99;
	struct rp_filter only = { .pids = &asked, .npids = 1 };
	struct offcpu_opts o = { .filter = &only };
	struct offcpu *oc = fresh(&o);
	struct rp_sink sink = offcpu_sink(oc);
	offcpu_feed_switch_out(oc, 99, 99, 0, stack_b, 2, 'S', 0);
	offcpu_feed_switch_in(oc, 99, 500, 0);          /* counted: its stack stays */
	for (u32 i = 0; i < 3000; i++) {
		struct rp_frame f[2] = { stack_a[0], { .ip = 0x500000 + i } };
		offcpu_feed_switch_out(oc, 10, 10, 1000 + 10 * i, f, 2, 'S', 0);
		offcpu_feed_switch_in(oc, 10, 1005 + 10 * i, 0);
	}
	offcpu_feed_switch_out(oc, 99, 99, 40000, stack_a, 3, 'D', 0);   /* off now */
	sink.forget_files(sink.ctx);
	u32 n = 0;
	CHECK(!offcpu_stack(oc, 2, &n), "the 3000 stacks of the thread left out are dropped");
	offcpu_feed_switch_in(oc, 99, 41000, 0);
	offcpu_feed_switch_out(oc, 99, 99, 42000, stack_b, 2, 'S', 0);
	offcpu_feed_switch_in(oc, 99, 42500, 0);
	finish(oc);
	CHECK(offcpu_naggs(oc) == 2, "%zu aggregates, want 2", offcpu_naggs(oc));
	for (size_t i = 0; i < offcpu_naggs(oc); i++) {
		const struct oc_agg *a = offcpu_agg(oc, i);
		const struct rp_frame *f = offcpu_stack(oc, a->stack, &n);
		bool is_b = a->state == 'S';
		CHECK(f && n == (is_b ? 2u : 3u) && f[1].ip == (is_b ? 0x403000u : 0x401000u) &&
		      a->total_ns == (is_b ? 1000u : 1000u) && a->count == (is_b ? 2u : 1u),
		      "aggregate %c: its stack and times kept", a->state);
	}
	offcpu_free(oc);
}

static void test_state_letters(void)
{
	CHECK(sched_state_char(0) == 'R', "running/preempted");
	CHECK(sched_state_char(0x100) == 'R', "preemption bit above the states");
	CHECK(sched_state_char(1) == 'S' && sched_state_char(2) == 'D', "S and D");
	CHECK(sched_state_char(0x80) == 'I' && sched_state_char(0x10) == 'X', "I and X");
}

static const struct oc_thread *thread_of(const struct offcpu *oc, u32 tid)
{
	for (size_t i = 0; i < offcpu_nthreads(oc); i++)
		if (offcpu_thread(oc, i)->tid == tid)
			return offcpu_thread(oc, i);
	return NULL;
}

static u64 agg_total(const struct offcpu *oc, u32 tid, char state)
{
	u64 ns = 0;
	for (size_t i = 0; i < offcpu_naggs(oc); i++)
		if (offcpu_agg(oc, i)->tid == tid && offcpu_agg(oc, i)->state == state)
			ns += offcpu_agg(oc, i)->total_ns;
	return ns;
}

/* --time 2000,4000: every span, walls too, is clipped to the window. */
static void test_time_window(void)
{
	struct rp_filter f = { .time_start = 2000, .time_end = 4000 };
	struct offcpu_opts o = { .filter = &f };
	struct offcpu *oc = fresh(&o);
	offcpu_note_time(oc, 100);
	offcpu_feed_fork(oc, 10, 10, 500);
	offcpu_feed_switch_in(oc, 10, 600, 0);
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S', 0);   /* S 1000..3000 */
	offcpu_feed_switch_in(oc, 10, 3000, 0);
	offcpu_feed_switch_out(oc, 10, 10, 3500, stack_b, 2, 'R', 0);   /* R 3500..3600 */
	offcpu_feed_switch_in(oc, 10, 3600, 0);
	offcpu_feed_fork(oc, 11, 10, 5000);                    /* born after it */
	offcpu_feed_switch_in(oc, 11, 5100, 0);
	offcpu_note_time(oc, 10000);
	finish(oc);
	const struct oc_thread *t = thread_of(oc, 10);
	CHECK(t && offcpu_thread_wall(oc, t) == 2000, "wall clipped to the window: %llu",
	      t ? (unsigned long long)offcpu_thread_wall(oc, t) : 0ull);
	CHECK(t && t->on_ns == 900, "on: 3000..3500 and 3600..4000, got %llu",
	      t ? (unsigned long long)t->on_ns : 0ull);
	CHECK(t && t->off_ns == 1100, "off: 2000..3000 and 3500..3600, got %llu",
	      t ? (unsigned long long)t->off_ns : 0ull);
	CHECK(agg_total(oc, 10, 'S') == 1000 && agg_total(oc, 10, 'R') == 100,
	      "the table clipped too: S %llu, R %llu", (unsigned long long)agg_total(oc, 10, 'S'),
	      (unsigned long long)agg_total(oc, 10, 'R'));
	CHECK(t && offcpu_thread_shown(oc, t), "the thread alive in the window is shown");
	t = thread_of(oc, 11);
	CHECK(t && !offcpu_thread_wall(oc, t) && !offcpu_thread_shown(oc, t),
	      "a thread born after the window is not");
	offcpu_free(oc);
}

/* --cpu 1, --state S, --min-us: the thread view counts what the table
 * shows; on-CPU time is that on the listed CPUs. */
static void test_thread_filters(void)
{
	int cpus[] = { 1 };
	struct rp_filter f = { .cpus = cpus, .ncpus = 1 };
	struct offcpu_opts o = { .filter = &f, .states = "S", .min_ns = 150 };
	struct offcpu *oc = fresh(&o);
	offcpu_feed_fork(oc, 20, 20, 100);                     /* all on CPU 0 */
	offcpu_feed_switch_in(oc, 20, 100, 0);
	offcpu_feed_switch_out(oc, 20, 20, 200, stack_a, 3, 'S', 0);
	offcpu_feed_switch_in(oc, 20, 1200, 0);
	offcpu_feed_fork(oc, 21, 21, 100);                     /* all on CPU 1 */
	offcpu_feed_switch_in(oc, 21, 100, 1);
	offcpu_feed_switch_out(oc, 21, 21, 300, stack_a, 3, 'R', 1);   /* R: not S */
	offcpu_feed_switch_in(oc, 21, 400, 1);
	offcpu_feed_switch_out(oc, 21, 21, 500, stack_a, 3, 'S', 1);   /* 100: too short */
	offcpu_feed_switch_in(oc, 21, 600, 1);
	offcpu_feed_switch_out(oc, 21, 21, 700, stack_a, 3, 'S', 1);   /* kept: 1000 */
	offcpu_feed_switch_in(oc, 21, 1700, 1);
	offcpu_note_time(oc, 2000);
	finish(oc);
	const struct oc_thread *t = thread_of(oc, 20);
	CHECK(t && !t->on_ns && !t->off_ns && !offcpu_thread_shown(oc, t),
	      "CPU 0's thread has nothing on CPU 1");
	t = thread_of(oc, 21);
	CHECK(t && t->off_ns == 1000 && t->intervals == 1, "off: the one S interval of 1000, "
	      "got %llu in %u", t ? (unsigned long long)t->off_ns : 0ull, t ? t->intervals : 0);
	CHECK(t && t->on_ns == 700, "on: 200 + 100 + 100 + 300, got %llu",
	      t ? (unsigned long long)t->on_ns : 0ull);
	CHECK(t && offcpu_thread_wall(oc, t) == 1900 && offcpu_thread_shown(oc, t),
	      "wall from its birth to the end");
	CHECK(offcpu_naggs(oc) == 1 && agg_total(oc, 21, 'S') == 1000, "the table alike");
	offcpu_free(oc);
}

/* The threads a system-wide recording lists at its start (forks at time
 * 0) are no births; nothing of them is known until seen, and time is
 * on-CPU only once seen running. */
static void test_listed_at_start(void)
{
	struct offcpu *oc = fresh(NULL);
	struct rp_sink sink = offcpu_sink(oc);
	struct pd_event ev = { .type = PERF_RECORD_FORK, .has_time = true };
	ev.u.task.pid = ev.u.task.ppid = 1;
	ev.u.task.tid = 30;
	sink.event(sink.ctx, &ev, NULL);
	ev.u.task.tid = 31;
	sink.event(sink.ctx, &ev, NULL);
	offcpu_note_time(oc, 1000);
	offcpu_feed_switch_out(oc, 31, 1, 4000, stack_a, 3, 'S', 0);
	offcpu_note_time(oc, 9000);
	finish(oc);
	const struct oc_thread *t = thread_of(oc, 30);
	CHECK(t && !t->forked && !t->seen && !t->on_ns && !offcpu_thread_shown(oc, t),
	      "never seen: no birth, no on-CPU time, not shown");
	CHECK(t && t->start == 1000, "there from the recording's start");
	t = thread_of(oc, 31);
	CHECK(t && !t->on_ns && t->off_ns == 5000, "its time before the first switch-out is "
	      "unknown, not on-CPU: on %llu", t ? (unsigned long long)t->on_ns : 0ull);
	offcpu_free(oc);
}

int main(void)
{
	RUN(test_state_letters);
	RUN(test_interval);
	RUN(test_stacks_apart);
	RUN(test_missing_switch_in);
	RUN(test_open_and_begun_before);
	RUN(test_dead_thread);
	RUN(test_filters);
	RUN(test_reload);
	RUN(test_drop_stacks);
	RUN(test_time_window);
	RUN(test_thread_filters);
	RUN(test_listed_at_start);
	return test_summary();
}
