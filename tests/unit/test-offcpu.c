/* test-offcpu.c - the off-CPU interval rules on histories built by hand:
 * intervals, merging by stack, repairs of missing switch-ins, intervals
 * open at the end or begun before, dead threads, filters. */
#include <string.h>

#include "report/sched/sched.h"
#include "tests/unit/test.h"

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
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 5000);
	offcpu_feed_switch_out(oc, 10, 10, 6000, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 9000);
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
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 2000);
	offcpu_feed_switch_out(oc, 10, 10, 3000, stack_b, 2, 'D');
	offcpu_feed_switch_in(oc, 10, 7000);
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
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S');
	offcpu_feed_running(oc, 10, 9000);
	offcpu_feed_switch_in(oc, 10, 9500);   /* a late one changes nothing */
	finish(oc);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->total_ns == 8000 && a->repaired == 1, "closed at the sample, repaired");
	CHECK(offcpu_stats(oc)->repaired == 1, "counted");
	offcpu_free(oc);

	oc = fresh(NULL);
	/* Two switch-outs in a row: the first closes at the second. */
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S');
	offcpu_feed_switch_out(oc, 10, 10, 4000, stack_b, 2, 'S');
	offcpu_feed_switch_in(oc, 10, 5000);
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
	offcpu_feed_switch_in(oc, 11, 800);     /* off since before: not charged */
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'S');
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
	offcpu_feed_switch_out(oc, 10, 10, 1000, stack_a, 3, 'X');
	offcpu_note_time(oc, 9000);
	finish(oc);
	CHECK(offcpu_naggs(oc) == 0, "a dead thread's last switch is no interval");
	offcpu_free(oc);
}

static void test_filters(void)
{
	struct offcpu_opts o = { .min_ns = 2000, .max_ns = 5000, .states = "S" };
	struct offcpu *oc = fresh(&o);
	offcpu_feed_switch_out(oc, 10, 10, 0, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 1000);                 /* too short */
	offcpu_feed_switch_out(oc, 10, 10, 2000, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 5000);                 /* kept: 3000 */
	offcpu_feed_switch_out(oc, 10, 10, 6000, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 16000);                /* too long */
	offcpu_feed_switch_out(oc, 10, 10, 17000, stack_a, 3, 'D');
	offcpu_feed_switch_in(oc, 10, 20000);                /* wrong state */
	finish(oc);
	const struct oc_agg *a = only_agg(oc);
	CHECK(a && a->total_ns == 3000 && a->count == 1, "only the 3000 ns S interval");
	CHECK(offcpu_stats(oc)->intervals == 4 && offcpu_stats(oc)->shown == 1, "4 seen, 1 shown");
	offcpu_free(oc);

	struct offcpu_opts u = { .user_only = true };
	oc = fresh(&u);
	offcpu_feed_switch_out(oc, 10, 10, 0, stack_a, 3, 'S');
	offcpu_feed_switch_in(oc, 10, 1000);
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
	offcpu_feed_switch_out(oc, 10, 10, 1000, f, 2, 'S');
	offcpu_feed_switch_in(oc, 10, 2000);
	sink.forget_files(sink.ctx);
	f[1].sym = &again;
	offcpu_feed_switch_out(oc, 10, 10, 3000, f, 2, 'S');
	offcpu_feed_switch_in(oc, 10, 5000);
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
	offcpu_feed_switch_out(oc, 10, 10, 6000, f, 2, 'S');
	offcpu_feed_switch_in(oc, 10, 7000);
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
	offcpu_feed_switch_out(oc, 99, 99, 0, stack_b, 2, 'S');
	offcpu_feed_switch_in(oc, 99, 500);          /* counted: its stack stays */
	for (u32 i = 0; i < 3000; i++) {
		struct rp_frame f[2] = { stack_a[0], { .ip = 0x500000 + i } };
		offcpu_feed_switch_out(oc, 10, 10, 1000 + 10 * i, f, 2, 'S');
		offcpu_feed_switch_in(oc, 10, 1005 + 10 * i);
	}
	offcpu_feed_switch_out(oc, 99, 99, 40000, stack_a, 3, 'D');   /* off now */
	sink.forget_files(sink.ctx);
	u32 n = 0;
	CHECK(!offcpu_stack(oc, 2, &n), "the 3000 stacks of the thread left out are dropped");
	offcpu_feed_switch_in(oc, 99, 41000);
	offcpu_feed_switch_out(oc, 99, 99, 42000, stack_b, 2, 'S');
	offcpu_feed_switch_in(oc, 99, 42500);
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
	return test_summary();
}
