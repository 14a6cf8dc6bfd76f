/* test-stat.c - unit tests of the counting side of pmc/: group read
 * decoding, multiplex scaling, derived metrics, repeat statistics, the
 * IPC/TLB tables against the vendors' event codes, output layouts, and a
 * live group read of software events on this machine.  Hardware counts are
 * values as real PMU machines report them. */
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmc/stat/stat.h"
#include "tests/unit/test.h"

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* A {cycles,instructions,branch-misses} group read on a Skylake server
 * (read_format GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID). */
static void test_decode_group(void)
{
	u64 buf[] = { 3, 1000234567, 1000234567, 2891734501, 101, 4512339012,
		      102, 12345678, 103 };
	struct pmc_read_buf rb;
	int rc = pmc_decode_read(buf, ARRAY_SIZE(buf),
				 PMC_READ_FORMAT | PERF_FORMAT_GROUP, &rb);
	CHECK(rc == 0, "%s", err_msg());
	CHECK(rb.n == 3, "%zu members", rb.n);
	CHECK(rb.enabled == 1000234567 && rb.running == 1000234567, "times");
	CHECK(rb.value[1] == 4512339012 && rb.id[1] == 102, "second member");
	CHECK(rb.value[2] == 12345678 && rb.id[2] == 103, "third member");
	/* A buffer cut short is refused, not read past. */
	CHECK(pmc_decode_read(buf, 6, PMC_READ_FORMAT | PERF_FORMAT_GROUP,
			      &rb) < 0, "short group accepted");
	u64 huge[] = { 1000, 1, 1 };
	CHECK(pmc_decode_read(huge, 3, PMC_READ_FORMAT | PERF_FORMAT_GROUP,
			      &rb) < 0, "absurd member count accepted");
}

static void test_decode_single(void)
{
	u64 buf[] = { 77, 5000, 2500, 42 };
	struct pmc_read_buf rb;
	CHECK(pmc_decode_read(buf, 4, PMC_READ_FORMAT, &rb) == 0, "%s", err_msg());
	CHECK(rb.n == 1 && rb.value[0] == 77 && rb.id[0] == 42, "value/id");
	CHECK(rb.enabled == 5000 && rb.running == 2500, "times");
	CHECK(pmc_decode_read(buf, 3, PMC_READ_FORMAT, &rb) < 0, "short read");
}

/* Eight hardware events on four counters: each ran about a quarter of the
 * time (counts from a Skylake laptop, perf stat -e with 8 events). */
static void test_multiplex_scaling(void)
{
	struct pmc_reading r = { 1234567890, 1000000000, 250000000 };
	CHECK(near(pmc_scaled(&r), 4938271560.0, 1), "scaled %f", pmc_scaled(&r));
	CHECK(near(pmc_running_pct(&r), 25.0, 1e-9), "pct %f", pmc_running_pct(&r));
	struct pmc_reading full = { 5, 100, 100 };
	CHECK(pmc_scaled(&full) == 5 && pmc_running_pct(&full) == 100, "full");
	struct pmc_reading never = { 0, 100, 0 };
	CHECK(pmc_scaled(&never) == 0, "never ran");
	/* Interval deltas scale with the interval's own times. */
	struct pmc_reading a = { 1000, 2000, 1000 }, b = { 4000, 4000, 2000 };
	struct pmc_reading d = pmc_reading_delta(&b, &a);
	CHECK(d.value == 3000 && d.enabled == 2000 && d.running == 1000, "delta");
	CHECK(near(pmc_scaled(&d), 6000, 1e-9), "delta scaled");
}

static struct pmc_row_event hw(u64 config, double v)
{
	return (struct pmc_row_event){ PERF_TYPE_HARDWARE, config, true, v };
}

static struct pmc_row_event sw(u64 config, double v)
{
	return (struct pmc_row_event){ PERF_TYPE_SOFTWARE, config, true, v };
}

/* perf stat -- make -j1 on a Skylake (i7-6700) box: the metrics perf
 * printed beside each count. */
static void test_metrics_skylake(void)
{
	struct pmc_row_event row[] = {
		sw(PERF_COUNT_SW_TASK_CLOCK, 1000230000.0),
		sw(PERF_COUNT_SW_CONTEXT_SWITCHES, 123),
		sw(PERF_COUNT_SW_PAGE_FAULTS, 45678),
		hw(PERF_COUNT_HW_CPU_CYCLES, 2891734501.0),
		hw(PERF_COUNT_HW_INSTRUCTIONS, 4512339012.0),
		hw(PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 823456789.0),
		hw(PERF_COUNT_HW_BRANCH_MISSES, 12345678.0),
		hw(PERF_COUNT_HW_CACHE_REFERENCES, 98765432.0),
		hw(PERF_COUNT_HW_CACHE_MISSES, 23456789.0),
		hw(PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 578346900.0),
	};
	size_t n = ARRAY_SIZE(row);
	struct pmc_metric m;
	pmc_metric_for(row, n, 0, 1.05e9, &m);
	CHECK(m.ok && near(m.value, 0.9526, 1e-3) && !strcmp(m.unit, "CPUs utilized"),
	      "cpus %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 1, 1.05e9, &m);
	CHECK(m.ok && near(m.value, 122.97, 0.01) && !strcmp(m.unit, "/sec"),
	      "cs rate %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 2, 1.05e9, &m);
	CHECK(m.ok && near(m.value, 45.667, 1e-3) && !strcmp(m.unit, "K/sec"),
	      "faults rate %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 3, 1.05e9, &m);
	CHECK(m.ok && near(m.value, 2.891, 1e-3) && !strcmp(m.unit, "GHz"),
	      "GHz %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 4, 1.05e9, &m);
	CHECK(m.ok && near(m.value, 1.5604, 1e-3) && !strcmp(m.unit, "insn per cycle"),
	      "IPC %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 5, 1.05e9, &m);
	CHECK(m.ok && near(m.value, 823.267, 1e-2) && !strcmp(m.unit, "M/sec"),
	      "branch rate %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 6, 1.05e9, &m);
	CHECK(m.ok && m.percent && near(m.value, 1.4993, 1e-3),
	      "branch-miss %f %s", m.value, m.unit);
	pmc_metric_for(row, n, 8, 1.05e9, &m);
	CHECK(m.ok && m.percent && near(m.value, 23.750, 1e-2) &&
	      !strcmp(m.unit, "of all cache refs"), "cache-miss %f", m.value);
	pmc_metric_for(row, n, 9, 1.05e9, &m);
	CHECK(m.ok && m.percent && near(m.value, 20.0, 1e-2) &&
	      !strcmp(m.unit, "frontend cycles idle"), "stalled %f", m.value);
}

/* Without cycles or task-clock there is nothing to relate to; a counter
 * that did not count has no metric either. */
static void test_metrics_missing(void)
{
	struct pmc_row_event row[] = {
		hw(PERF_COUNT_HW_INSTRUCTIONS, 1000),
		sw(PERF_COUNT_SW_CONTEXT_SWITCHES, 10),
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false, 0 },
	};
	struct pmc_metric m;
	pmc_metric_for(row, 3, 0, 1e9, &m);
	CHECK(!m.ok, "IPC without cycles");
	pmc_metric_for(row, 3, 1, 1e9, &m);
	CHECK(!m.ok, "rate without a clock");
	pmc_metric_for(row, 3, 2, 1e9, &m);
	CHECK(!m.ok, "metric of a counter that did not count");
	/* dTLB-load-misses against dTLB-loads: a hw-cache share. */
	u64 loads = PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_READ << 8;
	u64 misses = loads | (u64)PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
	struct pmc_row_event c[] = {
		{ PERF_TYPE_HW_CACHE, loads, true, 1200000000.0 },
		{ PERF_TYPE_HW_CACHE, misses, true, 3000000.0 },
	};
	pmc_metric_for(c, 2, 1, 1e9, &m);
	CHECK(m.ok && m.percent && near(m.value, 0.25, 1e-9) &&
	      !strcmp(m.unit, "of all dTLB cache accesses"), "dTLB %f", m.value);
}

/* perf stat -r 5 reports the standard deviation of the mean. */
static void test_repeat_stats(void)
{
	struct pmc_stats s = {0};
	double runs[] = { 10, 12, 14 };
	for (size_t i = 0; i < 3; i++)
		pmc_stats_add(&s, runs[i]);
	CHECK(near(s.mean, 12, 1e-12), "mean %f", s.mean);
	CHECK(near(pmc_stats_stddev_mean(&s), sqrt(4.0 / 3.0), 1e-12), "stddev");
	CHECK(near(pmc_stats_rel_pct(&s), 9.6225, 1e-3), "rel %f",
	      pmc_stats_rel_pct(&s));
	struct pmc_stats one = {0};
	pmc_stats_add(&one, 5);
	CHECK(pmc_stats_stddev_mean(&one) == 0, "one run has no noise");
	/* Large counts must not lose precision (Welford, not sum of squares). */
	struct pmc_stats big = {0};
	pmc_stats_add(&big, 1e12 + 1);
	pmc_stats_add(&big, 1e12 + 3);
	CHECK(near(pmc_stats_stddev_mean(&big), 1.0, 1e-6), "big %f",
	      pmc_stats_stddev_mean(&big));
}

/* The tlbstat columns from a Skylake run of a TLB-hungry workload. */
static void test_tlb_columns(void)
{
	double v[PMC_T_NSLOTS] = { 10e9, 8e9, 1200000, 300000, 50000,
				   400e6, 100e6, 20e6 };
	bool have[PMC_T_NSLOTS];
	for (int i = 0; i < PMC_T_NSLOTS; i++)
		have[i] = true;
	struct pmc_tlb_row r;
	pmc_tlb_compute(v, have, &r);
	CHECK(near(r.v[PMC_C_K_CYCLES], 1e7, 1e-6), "K_CYCLES");
	CHECK(near(r.v[PMC_C_IPC], 0.8, 1e-12), "IPC %f", r.v[PMC_C_IPC]);
	CHECK(r.v[PMC_C_DTLB_WALKS] == 1500000, "DTLB walks %f", r.v[PMC_C_DTLB_WALKS]);
	CHECK(r.v[PMC_C_ITLB_WALKS] == 50000, "ITLB walks");
	CHECK(near(r.v[PMC_C_K_DTLBCYC], 500000, 1e-6), "K_DTLBCYC");
	CHECK(near(r.v[PMC_C_DTLB_PCT], 5.0, 1e-9), "DTLB%% %f", r.v[PMC_C_DTLB_PCT]);
	CHECK(near(r.v[PMC_C_ITLB_PCT], 0.2, 1e-9), "ITLB%% %f", r.v[PMC_C_ITLB_PCT]);
	/* AMD Zen: no walk cycles, no separate store walks. */
	bool zen[PMC_T_NSLOTS] = { true, true, true, false, true, false, false,
				   false };
	double zv[PMC_T_NSLOTS] = { 3e9, 6e9, 250000, 0, 9000, 0, 0, 0 };
	pmc_tlb_compute(zv, zen, &r);
	CHECK(r.have[PMC_C_DTLB_WALKS] && r.v[PMC_C_DTLB_WALKS] == 250000, "zen walks");
	CHECK(!r.have[PMC_C_K_DTLBCYC] && !r.have[PMC_C_DTLB_PCT] &&
	      !r.have[PMC_C_ITLB_PCT], "zen cycles columns must be absent");
	struct strbuf sb = {0};
	pmc_format_tlb_row(&sb, PMC_OUT_TEXT, ",", &r, false, false, 0);
	CHECK(strstr(sb.s, " 2.00 ") && strstr(sb.s, " -") &&
	      !strstr(sb.s, " 0.00"), "'-' not zero: '%s'", sb.s);
	sb_reset(&sb);
	pmc_format_tlb_row(&sb, PMC_OUT_JSON, ",", &r, false, true, 1.5);
	CHECK(strstr(sb.s, "\"DTLB%\" : null") && strstr(sb.s, "\"interval\" : 1.5"),
	      "json '%s'", sb.s);
	sb_free(&sb);
}

static const struct pmc_cpu_table *table_named(const char *name)
{
	size_t n;
	const struct pmc_cpu_table *t = pmc_tables(&n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static void expect_code(const char *table, enum pmc_tslot s, const char *name,
			u64 config)
{
	const struct pmc_cpu_table *t = table_named(table);
	CHECK(t != NULL, "no table %s", table);
	if (!t)
		return;
	if (!name) {
		CHECK(t->ev[s].name == NULL, "%s slot %d should be absent", table, s);
		return;
	}
	CHECK(t->ev[s].name && !strcmp(t->ev[s].name, name), "%s slot %d: %s",
	      table, s, t->ev[s].name ? t->ev[s].name : "(none)");
	CHECK(t->ev[s].config == config, "%s %s: 0x%llx want 0x%llx", table, name,
	      (unsigned long long)t->ev[s].config, (unsigned long long)config);
}

/* One published event: the vendor data's EventCode, UMask and
 * CounterMask as written there, and where it was read. */
struct published {
	const char *table;
	enum pmc_tslot slot;
	const char *name;
	unsigned code, umask, cmask;
	const char *source;
};

#define LX "linux tools/perf/pmu-events/arch/x86/"

/* Each row checked by hand against the file named in it (Linux perf's
 * copies of Intel's perfmon event lists and of the events AMD published
 * for its PPRs).  Intel umask 0x0e = WALK_COMPLETED (all page sizes);
 * umask 0x10 with CounterMask 1 = WALK_ACTIVE.  An absent UMask is 0. */
static const struct published published[] = {
	/* Skylake: pipeline.json and virtual-memory.json of skylake/ (client)
	 * and skylakex/ (server, model 0x55), identical for these events. */
	{ "Intel Skylake", PMC_T_CYCLES, "cpu_clk_unhalted.thread_p", 0x3c, 0x00, 0,
	  LX "skylake/pipeline.json CPU_CLK_UNHALTED.THREAD_P" },
	{ "Intel Skylake", PMC_T_INSTR, "inst_retired.any_p", 0xc0, 0x00, 0,
	  LX "skylake/pipeline.json INST_RETIRED.ANY_P" },
	{ "Intel Skylake", PMC_T_DTLB_LOAD_WALKS, "dtlb_load_misses.walk_completed", 0x08, 0x0e, 0,
	  LX "skylakex/virtual-memory.json DTLB_LOAD_MISSES.WALK_COMPLETED" },
	{ "Intel Skylake", PMC_T_DTLB_STORE_WALKS, "dtlb_store_misses.walk_completed", 0x49, 0x0e, 0,
	  LX "skylakex/virtual-memory.json DTLB_STORE_MISSES.WALK_COMPLETED" },
	{ "Intel Skylake", PMC_T_ITLB_WALKS, "itlb_misses.walk_completed", 0x85, 0x0e, 0,
	  LX "skylakex/virtual-memory.json ITLB_MISSES.WALK_COMPLETED" },
	{ "Intel Skylake", PMC_T_DTLB_LOAD_CYC, "dtlb_load_misses.walk_active", 0x08, 0x10, 1,
	  LX "skylake/virtual-memory.json DTLB_LOAD_MISSES.WALK_ACTIVE" },
	{ "Intel Skylake", PMC_T_DTLB_STORE_CYC, "dtlb_store_misses.walk_active", 0x49, 0x10, 1,
	  LX "skylake/virtual-memory.json DTLB_STORE_MISSES.WALK_ACTIVE" },
	{ "Intel Skylake", PMC_T_ITLB_CYC, "itlb_misses.walk_active", 0x85, 0x10, 1,
	  LX "skylake/virtual-memory.json ITLB_MISSES.WALK_ACTIVE" },
	/* Ice Lake: icelake/ (client); icelakex/virtual-memory.json (server,
	 * models 0x6a/0x6c) and tigerlake/virtual-memory.json (0x8c/0x8d) have
	 * the same three TLB events with the same codes. */
	{ "Intel Ice Lake", PMC_T_CYCLES, "cpu_clk_unhalted.thread_p", 0x3c, 0x00, 0,
	  LX "icelake/pipeline.json CPU_CLK_UNHALTED.THREAD_P" },
	{ "Intel Ice Lake", PMC_T_INSTR, "inst_retired.any_p", 0xc0, 0x00, 0,
	  LX "icelake/pipeline.json INST_RETIRED.ANY_P" },
	{ "Intel Ice Lake", PMC_T_DTLB_LOAD_WALKS, "dtlb_load_misses.walk_completed", 0x08, 0x0e, 0,
	  LX "icelake/virtual-memory.json DTLB_LOAD_MISSES.WALK_COMPLETED" },
	{ "Intel Ice Lake", PMC_T_DTLB_STORE_WALKS, "dtlb_store_misses.walk_completed", 0x49, 0x0e, 0,
	  LX "icelake/virtual-memory.json DTLB_STORE_MISSES.WALK_COMPLETED" },
	{ "Intel Ice Lake", PMC_T_ITLB_WALKS, "itlb_misses.walk_completed", 0x85, 0x0e, 0,
	  LX "icelake/virtual-memory.json ITLB_MISSES.WALK_COMPLETED" },
	{ "Intel Ice Lake", PMC_T_DTLB_LOAD_CYC, "dtlb_load_misses.walk_active", 0x08, 0x10, 1,
	  LX "icelake/virtual-memory.json DTLB_LOAD_MISSES.WALK_ACTIVE" },
	{ "Intel Ice Lake", PMC_T_DTLB_STORE_CYC, "dtlb_store_misses.walk_active", 0x49, 0x10, 1,
	  LX "icelake/virtual-memory.json DTLB_STORE_MISSES.WALK_ACTIVE" },
	{ "Intel Ice Lake", PMC_T_ITLB_CYC, "itlb_misses.walk_active", 0x85, 0x10, 1,
	  LX "icelake/virtual-memory.json ITLB_MISSES.WALK_ACTIVE" },
	/* Sapphire Rapids (Golden Cove): the TLB events moved to 0x11-0x13. */
	{ "Intel Sapphire Rapids", PMC_T_CYCLES, "cpu_clk_unhalted.thread_p", 0x3c, 0x00, 0,
	  LX "sapphirerapids/pipeline.json CPU_CLK_UNHALTED.THREAD_P" },
	{ "Intel Sapphire Rapids", PMC_T_INSTR, "inst_retired.any_p", 0xc0, 0x00, 0,
	  LX "sapphirerapids/pipeline.json INST_RETIRED.ANY_P" },
	{ "Intel Sapphire Rapids", PMC_T_DTLB_LOAD_WALKS, "dtlb_load_misses.walk_completed", 0x12, 0x0e, 0,
	  LX "sapphirerapids/virtual-memory.json DTLB_LOAD_MISSES.WALK_COMPLETED" },
	{ "Intel Sapphire Rapids", PMC_T_DTLB_STORE_WALKS, "dtlb_store_misses.walk_completed", 0x13, 0x0e, 0,
	  LX "sapphirerapids/virtual-memory.json DTLB_STORE_MISSES.WALK_COMPLETED" },
	{ "Intel Sapphire Rapids", PMC_T_ITLB_WALKS, "itlb_misses.walk_completed", 0x11, 0x0e, 0,
	  LX "sapphirerapids/virtual-memory.json ITLB_MISSES.WALK_COMPLETED" },
	{ "Intel Sapphire Rapids", PMC_T_DTLB_LOAD_CYC, "dtlb_load_misses.walk_active", 0x12, 0x10, 1,
	  LX "sapphirerapids/virtual-memory.json DTLB_LOAD_MISSES.WALK_ACTIVE" },
	{ "Intel Sapphire Rapids", PMC_T_DTLB_STORE_CYC, "dtlb_store_misses.walk_active", 0x13, 0x10, 1,
	  LX "sapphirerapids/virtual-memory.json DTLB_STORE_MISSES.WALK_ACTIVE" },
	{ "Intel Sapphire Rapids", PMC_T_ITLB_CYC, "itlb_misses.walk_active", 0x11, 0x10, 1,
	  LX "sapphirerapids/virtual-memory.json ITLB_MISSES.WALK_ACTIVE" },
	/* Zen 2: the DTLB row is the OR of tlb_reload_{4k,coalesced_page,2m,
	 * 1g}_l2_miss (0x10|0x20|0x40|0x80); Zen 2 has no single name for it. */
	{ "AMD Zen 2", PMC_T_CYCLES, "ls_not_halted_cyc", 0x76, 0x00, 0,
	  LX "amdzen2/memory.json ls_not_halted_cyc" },
	{ "AMD Zen 2", PMC_T_INSTR, "ex_ret_instr", 0xc0, 0x00, 0,
	  LX "amdzen2/core.json ex_ret_instr" },
	{ "AMD Zen 2", PMC_T_DTLB_LOAD_WALKS, "ls_l1_d_tlb_miss.tlb_reload_*_l2_miss", 0x45, 0xf0, 0,
	  LX "amdzen2/memory.json ls_l1_d_tlb_miss.tlb_reload_*_l2_miss" },
	{ "AMD Zen 2", PMC_T_ITLB_WALKS, "bp_l1_tlb_miss_l2_tlb_miss", 0x85, 0xff, 0,
	  LX "amdzen2/cache.json bp_l1_tlb_miss_l2_tlb_miss" },
	/* Zen 3: as Zen 2 (bp_l1_tlb_miss_l2_tlb_miss is 0xff there too). */
	{ "AMD Zen 3", PMC_T_CYCLES, "ls_not_halted_cyc", 0x76, 0x00, 0,
	  LX "amdzen3/memory.json ls_not_halted_cyc" },
	{ "AMD Zen 3", PMC_T_INSTR, "ex_ret_instr", 0xc0, 0x00, 0,
	  LX "amdzen3/core.json ex_ret_instr" },
	{ "AMD Zen 3", PMC_T_DTLB_LOAD_WALKS, "ls_l1_d_tlb_miss.tlb_reload_*_l2_miss", 0x45, 0xf0, 0,
	  LX "amdzen3/memory.json ls_l1_d_tlb_miss.tlb_reload_*_l2_miss" },
	{ "AMD Zen 3", PMC_T_ITLB_WALKS, "bp_l1_tlb_miss_l2_tlb_miss", 0x85, 0xff, 0,
	  LX "amdzen3/cache.json bp_l1_tlb_miss_l2_tlb_miss" },
	/* Zen 4 names both halves. */
	{ "AMD Zen 4", PMC_T_CYCLES, "ls_not_halted_cyc", 0x76, 0x00, 0,
	  LX "amdzen4/core.json ls_not_halted_cyc" },
	{ "AMD Zen 4", PMC_T_INSTR, "ex_ret_instr", 0xc0, 0x00, 0,
	  LX "amdzen4/core.json ex_ret_instr" },
	{ "AMD Zen 4", PMC_T_DTLB_LOAD_WALKS, "ls_l1_d_tlb_miss.all_l2_miss", 0x45, 0xf0, 0,
	  LX "amdzen4/memory.json ls_l1_d_tlb_miss.all_l2_miss" },
	{ "AMD Zen 4", PMC_T_ITLB_WALKS, "bp_l1_tlb_miss_l2_tlb_miss.all", 0x85, 0x0f, 0,
	  LX "amdzen4/memory.json bp_l1_tlb_miss_l2_tlb_miss.all" },
};

/* The raw config from the published fields, spelled out here rather than
 * through pmc_intel_raw()/pmc_amd_raw() so a slip there shows too:
 * IA32_PERFEVTSELx event 7:0, umask 15:8, cmask 31:24; AMD PERF_CTLx
 * event 7:0 and 35:32, umask 15:8. */
static u64 published_config(const struct published *p)
{
	if (!strncmp(p->table, "AMD", 3))
		return (u64)(p->code & 0xff) | (u64)p->umask << 8 |
		       (u64)(p->code >> 8) << 32;
	return (u64)p->code | (u64)p->umask << 8 | (u64)p->cmask << 24;
}

static void test_tables_published(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(published); i++) {
		const struct published *p = &published[i];
		const struct pmc_cpu_table *t = table_named(p->table);
		CHECK(t != NULL, "no table %s", p->table);
		if (!t)
			continue;
		const struct pmc_raw_event *e = &t->ev[p->slot];
		CHECK(e->name && !strcmp(e->name, p->name), "%s slot %d: %s, want %s (%s)",
		      p->table, p->slot, e->name ? e->name : "(none)", p->name, p->source);
		CHECK(e->config == published_config(p), "%s %s: 0x%llx, want 0x%llx (%s)",
		      p->table, p->name, (unsigned long long)e->config,
		      (unsigned long long)published_config(p), p->source);
	}
	/* Every named slot of every table is one of the rows above. */
	size_t n, named = 0;
	const struct pmc_cpu_table *t = pmc_tables(&n);
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < PMC_T_NSLOTS; s++)
			named += t[i].ev[s].name != NULL;
	CHECK(named == ARRAY_SIZE(published), "%zu table events, %zu checked",
	      named, ARRAY_SIZE(published));
}

/* Zen has no walk-cycle events and counts DTLB walks for loads and stores
 * in one event: those slots stay empty, with a footnote. */
static void test_tables_amd_gaps(void)
{
	const char *zens[] = { "AMD Zen 2", "AMD Zen 3", "AMD Zen 4" };
	for (int k = 0; k < 3; k++) {
		expect_code(zens[k], PMC_T_DTLB_STORE_WALKS, NULL, 0);
		expect_code(zens[k], PMC_T_DTLB_LOAD_CYC, NULL, 0);
		expect_code(zens[k], PMC_T_DTLB_STORE_CYC, NULL, 0);
		expect_code(zens[k], PMC_T_ITLB_CYC, NULL, 0);
		CHECK(table_named(zens[k]) && table_named(zens[k])->note,
		      "%s needs a footnote for its '-' columns", zens[k]);
	}
}

/* The encoders agree with the published layouts (SPR walk_active; an AMD
 * event select above 0xff goes to config bits 35:32). */
static void test_raw_encoders(void)
{
	CHECK(pmc_intel_raw(0x12, 0x10, 1) == 0x01001012, "pmc_intel_raw");
	CHECK(pmc_amd_raw(0x1c0, 0x01) == 0x1000001c0ULL, "0x%llx",
	      (unsigned long long)pmc_amd_raw(0x1c0, 0x01));
}

static const char *table_for_text(const char *cpuinfo)
{
	struct pmc_cpuid id;
	if (pmc_cpuid_parse(cpuinfo, &id) < 0)
		return "parse error";
	const struct pmc_cpu_table *t = pmc_table_for(&id);
	return t ? t->name : NULL;
}

#define CPUINFO(v, f, m, name) \
	"processor\t: 0\nvendor_id\t: " v "\ncpu family\t: " f "\nmodel\t\t: " m \
	"\nmodel name\t: " name "\nstepping\t: 4\n"

static void test_cpu_detection(void)
{
	struct { const char *text, *want; } cases[] = {
		{ CPUINFO("GenuineIntel", "6", "85", "Intel(R) Xeon(R) Gold 6148"), "Intel Skylake" },
		{ CPUINFO("GenuineIntel", "6", "94", "Intel(R) Core(TM) i7-6700"), "Intel Skylake" },
		{ CPUINFO("GenuineIntel", "6", "106", "Intel(R) Xeon(R) Platinum 8380"), "Intel Ice Lake" },
		{ CPUINFO("GenuineIntel", "6", "143", "Intel(R) Xeon(R) Platinum 8480+"), "Intel Sapphire Rapids" },
		{ CPUINFO("AuthenticAMD", "23", "49", "AMD EPYC 7742 64-Core"), "AMD Zen 2" },
		{ CPUINFO("AuthenticAMD", "25", "1", "AMD EPYC 7763 64-Core"), "AMD Zen 3" },
		{ CPUINFO("AuthenticAMD", "25", "17", "AMD EPYC 9654 96-Core"), "AMD Zen 4" },
		{ CPUINFO("AuthenticAMD", "25", "97", "AMD Ryzen 9 7950X"), "AMD Zen 4" },
		{ CPUINFO("AuthenticAMD", "26", "2", "AMD EPYC"), NULL },
		{ CPUINFO("GenuineIntel", "6", "23", "Intel(R) Core(TM)2 Duo"), NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = table_for_text(cases[i].text);
		bool ok = cases[i].want ? got && !strcmp(got, cases[i].want) : !got;
		CHECK(ok, "case %zu: got %s want %s", i, got ? got : "none",
		      cases[i].want ? cases[i].want : "none");
	}
	struct pmc_cpuid id = { PMC_VENDOR_AMD, 26, 2 };
	CHECK(!pmc_table_for(&id) && strstr(err_msg(), "family 0x1a model 0x2"),
	      "message: %s", err_msg());
	CHECK(pmc_cpuid_parse("processor : 0\n", &id) < 0, "no fields accepted");
}

static void test_format_text(void)
{
	struct strbuf sb = {0};
	struct pmc_out_line l = {
		.event = "task-clock", .clock = true, .state = PMC_COUNTED,
		.value = 860000, .running = 860000, .pcnt = 100,
		.metric = { true, 0.008, "CPUs utilized", false },
	};
	pmc_format_line(&sb, PMC_OUT_TEXT, ",", &l);
	CHECK(!strcmp(sb.s, "              0.86 msec task-clock                       #    0.008 CPUs utilized\n"),
	      "'%s'", sb.s);
	sb_reset(&sb);
	struct pmc_out_line ns = { .event = "cycles", .state = PMC_NOT_SUPPORTED,
				   .pcnt = 100 };
	pmc_format_line(&sb, PMC_OUT_TEXT, ",", &ns);
	CHECK(!strcmp(sb.s, "   <not supported>      cycles\n"), "'%s'", sb.s);
	sb_reset(&sb);
	/* Multiplexed: the running share in parentheses; noise with -r. */
	struct pmc_out_line mx = { .event = "instructions", .state = PMC_COUNTED,
				   .value = 4938271560.0, .pcnt = 25,
				   .repeat = true, .noise_pct = 1.5 };
	pmc_format_line(&sb, PMC_OUT_TEXT, ",", &mx);
	CHECK(strstr(sb.s, "        4938271560      instructions") &&
	      strstr(sb.s, "( +-  1.50% )") && strstr(sb.s, "(25.00%)"), "'%s'", sb.s);
	sb_reset(&sb);
	struct pmc_out_line cpu = l;
	cpu.agg = "CPU1";
	cpu.interval = true;
	cpu.ts = 0.2;
	pmc_format_line(&sb, PMC_OUT_TEXT, ",", &cpu);
	CHECK(!strncmp(sb.s, "     0.200000000 CPU1                     0.86 msec", 51),
	      "'%s'", sb.s);
	sb_free(&sb);
}

static void test_format_csv_json(void)
{
	struct strbuf sb = {0};
	struct pmc_out_line l = {
		.event = "page-faults", .state = PMC_COUNTED, .value = 75,
		.running = 837850, .pcnt = 100,
		.metric = { true, 89.515, "K/sec", false },
	};
	pmc_format_line(&sb, PMC_OUT_CSV, ",", &l);
	CHECK(!strcmp(sb.s, "75,,page-faults,837850,100.00,89.515,K/sec\n"), "'%s'", sb.s);
	sb_reset(&sb);
	struct pmc_out_line ns = { .event = "cycles", .state = PMC_NOT_SUPPORTED,
				   .pcnt = 100 };
	pmc_format_line(&sb, PMC_OUT_CSV, ";", &ns);
	CHECK(!strcmp(sb.s, "<not supported>;;cycles;0;100.00;;\n"), "'%s'", sb.s);
	sb_reset(&sb);
	l.agg = "N0";
	l.agg_kind = "node";
	l.agg_cpus = 2;
	pmc_format_line(&sb, PMC_OUT_JSON, ",", &l);
	CHECK(!strcmp(sb.s, "{\"node\" : \"N0\", \"cpus\" : 2, \"counter-value\" : "
			    "\"75.000000\", \"unit\" : \"\", \"event\" : \"page-faults\", "
			    "\"event-runtime\" : 837850, \"pcnt-running\" : 100.00, "
			    "\"metric-value\" : 89.515000, \"metric-unit\" : \"K/sec\"}\n"),
	      "'%s'", sb.s);
	sb_reset(&sb);
	struct pmc_out_line q = { .event = "a\"b", .state = PMC_NOT_COUNTED };
	pmc_format_line(&sb, PMC_OUT_JSON, ",", &q);
	CHECK(strstr(sb.s, "\"a\\\"b\"") && strstr(sb.s, "<not counted>"), "'%s'", sb.s);
	sb_free(&sb);
}

/* Two CPUs on two nodes, two events: rows per CPU and per node. */
static void test_rows(void)
{
	struct pmc_list l = {0};
	CHECK(pmc_parse(&l, "task-clock,cs") == 0, "%s", err_msg());
	struct pmc_reading slots[4] = {
		{ 100000000, 100000000, 100000000 }, { 100000000, 100000000, 100000000 },
		{ 30, 100000000, 100000000 }, { 10, 100000000, 100000000 },
	};
	int cpus[] = { 0, 1 }, node_of[] = { 0, 1 }, err[] = { 0, 0 };
	struct pmc_view v = { .events = &l, .agg = PMC_AGG_GLOBAL, .ncpus = 2,
			      .ntids = 1, .cpus = cpus, .node_of = node_of,
			      .mode = PMC_OUT_CSV, .sep = "," };
	struct pmc_rows rows;
	pmc_rows_build(&v, slots, err, &rows);
	CHECK(rows.nrows == 1 && rows.r[1].value == 40, "total cs %llu",
	      (unsigned long long)rows.r[1].value);
	pmc_rows_free(&rows);
	v.agg = PMC_AGG_CPU;
	pmc_rows_build(&v, slots, err, &rows);
	struct strbuf sb = {0};
	pmc_rows_format(&sb, &v, &rows, NULL, false, 0, 1e8);
	CHECK(strstr(sb.s, "CPU0,100.00,msec,task-clock") &&
	      strstr(sb.s, "CPU1,10,,cs,100000000,100.00,100.000,/sec"), "'%s'", sb.s);
	/* perf's -A order: event by event, each CPU in turn. */
	CHECK(strstr(sb.s, "CPU1,100.00") < strstr(sb.s, "CPU0,30"), "order '%s'", sb.s);
	pmc_rows_free(&rows);
	sb_reset(&sb);
	v.agg = PMC_AGG_NODE;
	pmc_rows_build(&v, slots, err, &rows);
	pmc_rows_format(&sb, &v, &rows, NULL, false, 0, 1e8);
	CHECK(rows.nrows == 2 && strstr(sb.s, "N1,1,10,,cs"), "'%s'", sb.s);
	pmc_rows_free(&rows);
	sb_free(&sb);
	pmc_list_free(&l);
}

/* A live group of software events read at once on this machine: the
 * page-fault member must see every page this test touches. */
static void test_live_group_read(void)
{
	struct pmc_list l = {0};
	CHECK(pmc_parse(&l, "{task-clock,page-faults,cycles}") == 0, "%s", err_msg());
	pid_t self = getpid();
	struct pmc_target t = { .tids = &self, .ntids = 1 };
	struct pmc_counters c;
	if (pmc_counters_open(&c, &l, &t) < 0) {
		CHECK(0, "open: %s", err_msg());
		pmc_list_free(&l);
		return;
	}
	CHECK(c.in_group[1], "page-faults should be read with its leader");
	CHECK(c.err[2] != 0 || pmc_have_hw_pmu(), "cycles without a PMU opened");
	pmc_counters_enable(&c, true);
	long page = sysconf(_SC_PAGESIZE), n = 2000;
	volatile char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise((void *)p, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
	pmc_counters_enable(&c, false);
	struct pmc_reading r[3];
	CHECK(pmc_counters_read(&c, r) == 0, "%s", err_msg());
	/* AddressSanitizer's shadow memory adds a page per eight touched. */
	CHECK(r[1].value >= (u64)n && r[1].value < (u64)n + n / 4 + 200,
	      "faults %llu",
	      (unsigned long long)r[1].value);
	CHECK(r[0].value > 0 && r[0].enabled == r[1].enabled,
	      "group members share times");
	munmap((void *)p, (size_t)(n * page));
	pmc_counters_close(&c);
	pmc_list_free(&l);
}

int main(void)
{
	RUN(test_decode_group);
	RUN(test_decode_single);
	RUN(test_multiplex_scaling);
	RUN(test_metrics_skylake);
	RUN(test_metrics_missing);
	RUN(test_repeat_stats);
	RUN(test_tlb_columns);
	RUN(test_tables_published);
	RUN(test_tables_amd_gaps);
	RUN(test_raw_encoders);
	RUN(test_cpu_detection);
	RUN(test_format_text);
	RUN(test_format_csv_json);
	RUN(test_rows);
	RUN(test_live_group_read);
	return test_summary();
}
