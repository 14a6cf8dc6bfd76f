/* test-pair.c - the tools' begin/end pairer (tools/pair.c): ends pair
 * with their key's begin, an end without one pairs nothing, an end of
 * another value or older than its begin leaves the begin under way, and
 * reset forgets every begin. */
#include "tools/tools.h"

#include "test.h"

static void test_pairs(void)
{
	struct tool_pair p;
	tool_pair_init(&p);
	u64 ns = 0, value = 0;
	CHECK(!tool_pair_begin(&p, 7, 100, 42), "a first begin replaces nothing");
	CHECK(!tool_pair_begin(&p, 8, 150, 43), "another key's begin is its own");
	CHECK(tool_pair_end(&p, 7, 130, &ns, &value), "key 7 ends");
	CHECK(ns == 30 && value == 42, "ns %llu value %llu", (unsigned long long)ns,
	      (unsigned long long)value);
	CHECK(!tool_pair_end(&p, 7, 140, &ns, NULL), "key 7's begin is over");
	CHECK(tool_pair_end(&p, 8, 150, &ns, NULL) && ns == 0, "an end at its begin's time");
	/* A begin over one still under way: the first's end never came. */
	CHECK(!tool_pair_begin(&p, 9, 200, 0), "a first begin");
	CHECK(tool_pair_begin(&p, 9, 250, 0), "a second begin replaces one under way");
	CHECK(tool_pair_end(&p, 9, 260, &ns, NULL) && ns == 10, "the latest begin pairs");
	/* Keys are any u64, 0 too; many keys grow the table. */
	for (u64 k = 0; k < 1000; k++)
		tool_pair_begin(&p, k * 0x9e3779b97f4a7c15ull, 1000 + k, k);
	bool all = true;
	for (u64 k = 0; k < 1000; k++)
		all &= tool_pair_end(&p, k * 0x9e3779b97f4a7c15ull, 3000, &ns, &value) &&
		       ns == 2000 - k && value == k;
	CHECK(all, "1000 keys pair with their own begins");
	tool_pair_free(&p);
}

static void test_unpaired(void)
{
	struct tool_pair p;
	tool_pair_init(&p);
	u64 ns = 99;
	CHECK(!tool_pair_end(&p, 1, 100, &ns, NULL), "an end without a begin");
	CHECK(ns == 99, "no duration made up");
	/* Time 0 is no begin (a record without a time). */
	CHECK(!tool_pair_begin(&p, 2, 0, 0), "a begin at time 0");
	CHECK(!tool_pair_end(&p, 2, 10, &ns, NULL), "pairs nothing");
	/* An end older than its begin leaves the begin under way... */
	tool_pair_begin(&p, 3, 500, 0);
	CHECK(!tool_pair_end(&p, 3, 400, &ns, NULL), "an end older than its begin");
	CHECK(tool_pair_end(&p, 3, 600, &ns, NULL) && ns == 100, "the begin stayed");
	/* ... unless the tool drops it. */
	tool_pair_begin(&p, 3, 700, 0);
	tool_pair_drop(&p, 3);
	tool_pair_drop(&p, 12345);   /* a key never seen: nothing */
	CHECK(!tool_pair_end(&p, 3, 800, &ns, NULL), "a dropped begin pairs nothing");
	tool_pair_free(&p);
}

static void test_end_of(void)
{
	struct tool_pair p;
	tool_pair_init(&p);
	u64 ns = 0;
	tool_pair_begin(&p, 0, 100, 5);
	CHECK(!tool_pair_end_of(&p, 0, 120, 6, &ns), "an end of another value");
	CHECK(!tool_pair_end_of(&p, 0, 90, 5, &ns), "an end older than its begin");
	CHECK(tool_pair_end_of(&p, 0, 130, 5, &ns) && ns == 30, "the begin stayed for its own end");
	CHECK(!tool_pair_end_of(&p, 0, 140, 5, &ns), "and is over");
	tool_pair_begin(&p, 1, 100, UINT64_MAX);
	CHECK(tool_pair_end_of(&p, 1, 101, UINT64_MAX, &ns) && ns == 1, "any value matches");
	tool_pair_free(&p);
}

static void test_reset(void)
{
	struct tool_pair p;
	tool_pair_init(&p);
	u64 ns;
	tool_pair_begin(&p, 1, 100, 0);
	tool_pair_begin(&p, 2, 100, 0);
	tool_pair_reset(&p);
	CHECK(!tool_pair_end(&p, 1, 200, &ns, NULL), "reset forgets key 1's begin");
	CHECK(!tool_pair_end(&p, 2, 200, &ns, NULL), "and key 2's");
	CHECK(!tool_pair_begin(&p, 1, 300, 0), "a begin after a reset replaces nothing");
	CHECK(tool_pair_end(&p, 1, 350, &ns, NULL) && ns == 50, "and pairs");
	tool_pair_reset(&p);
	tool_pair_reset(&p);         /* twice, and on an empty pairer */
	tool_pair_free(&p);
	struct tool_pair q;
	tool_pair_init(&q);
	tool_pair_free(&q);          /* never used */
}

int main(void)
{
	RUN(test_pairs);
	RUN(test_unpaired);
	RUN(test_end_of);
	RUN(test_reset);
	return test_summary();
}
