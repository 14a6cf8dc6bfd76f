/* metrics.c - what stat derives from counts: the ratio perf prints beside
 * each counter (CPUs utilized, GHz, IPC, miss shares, rates), the tlbstat
 * columns, and the mean and noise of repeated runs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pmc/stat/stat.h"

/* ---- repeat statistics ------------------------------------------------ */

void pmc_stats_add(struct pmc_stats *s, double x)
{
	s->n += 1;
	double d = x - s->mean;
	s->mean += d / s->n;
	s->m2 += d * (x - s->mean);
}

double pmc_stats_stddev_mean(const struct pmc_stats *s)
{
	if (s->n < 2)
		return 0;
	double variance = s->m2 / (s->n - 1);
	return sqrt(variance / s->n);
}

double pmc_stats_rel_pct(const struct pmc_stats *s)
{
	if (s->mean == 0)
		return 0;
	return 100.0 * pmc_stats_stddev_mean(s) / fabs(s->mean);
}

/* ---- per-counter metrics ---------------------------------------------- */

static bool is(const struct pmc_row_event *e, u32 type, u64 config)
{
	return e->type == type && e->config == config;
}

static bool is_clock(const struct pmc_row_event *e)
{
	return is(e, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK) ||
	       is(e, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
}

/* The counted value of the first event of this type and config. */
static bool find(const struct pmc_row_event *row, size_t n, u32 type,
		 u64 config, double *v)
{
	for (size_t i = 0; i < n; i++)
		if (row[i].counted && is(&row[i], type, config)) {
			*v = row[i].value;
			return true;
		}
	return false;
}

/* Time on CPU in ns: task-clock, or cpu-clock when that is what ran. */
static bool find_clock(const struct pmc_row_event *row, size_t n, double *ns)
{
	return find(row, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, ns) ||
	       find(row, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, ns);
}

static void set(struct pmc_metric *m, double v, const char *unit, bool pct)
{
	m->ok = true;
	m->value = v;
	m->percent = pct;
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
}

/* Events per second of CPU time, with a K/M/G prefix as perf picks it. */
static void rate(struct pmc_metric *m, double count, double clock_ns)
{
	double r = count / (clock_ns / 1e9);
	const char *unit = "/sec";
	if (r >= 1e9)
		r /= 1e9, unit = "G/sec";
	else if (r >= 1e6)
		r /= 1e6, unit = "M/sec";
	else if (r >= 1e3)
		r /= 1e3, unit = "K/sec";
	set(m, r, unit, false);
}

static void share(struct pmc_metric *m, double part, double whole,
		  const char *unit)
{
	if (whole > 0)
		set(m, 100.0 * part / whole, unit, true);
}

/* Hardware counters relative to others: IPC, GHz, miss and stall shares. */
static bool hw_metric(const struct pmc_row_event *row, size_t n,
		      const struct pmc_row_event *e, struct pmc_metric *m)
{
	double cycles = 0, other = 0, clock = 0;
	bool have_cycles = find(row, n, PERF_TYPE_HARDWARE,
				PERF_COUNT_HW_CPU_CYCLES, &cycles);
	switch (e->config) {
	case PERF_COUNT_HW_CPU_CYCLES:
		if (find_clock(row, n, &clock) && clock > 0)
			set(m, e->value / clock, "GHz", false);
		return true;
	case PERF_COUNT_HW_INSTRUCTIONS:
		if (have_cycles && cycles > 0)
			set(m, e->value / cycles, "insn per cycle", false);
		return true;
	case PERF_COUNT_HW_BRANCH_MISSES:
		if (find(row, n, PERF_TYPE_HARDWARE,
			 PERF_COUNT_HW_BRANCH_INSTRUCTIONS, &other))
			share(m, e->value, other, "of all branches");
		return true;
	case PERF_COUNT_HW_CACHE_MISSES:
		if (find(row, n, PERF_TYPE_HARDWARE,
			 PERF_COUNT_HW_CACHE_REFERENCES, &other))
			share(m, e->value, other, "of all cache refs");
		return true;
	case PERF_COUNT_HW_STALLED_CYCLES_FRONTEND:
		if (have_cycles)
			share(m, e->value, cycles, "frontend cycles idle");
		return true;
	case PERF_COUNT_HW_STALLED_CYCLES_BACKEND:
		if (have_cycles)
			share(m, e->value, cycles, "backend cycles idle");
		return true;
	}
	return false;
}

/* "L1-dcache-load-misses" against "L1-dcache-loads" of the same cache. */
static bool cache_metric(const struct pmc_row_event *row, size_t n,
			 const struct pmc_row_event *e, struct pmc_metric *m)
{
	static const char *const units[PERF_COUNT_HW_CACHE_MAX] = {
		"of all L1-dcache accesses", "of all L1-icache accesses",
		"of all LL-cache accesses", "of all dTLB cache accesses",
		"of all iTLB cache accesses", "of all branch accesses",
		"of all node accesses",
	};
	u64 cache = e->config & 0xff;
	if ((e->config >> 16) != PERF_COUNT_HW_CACHE_RESULT_MISS ||
	    cache >= PERF_COUNT_HW_CACHE_MAX)
		return false;
	double access;
	u64 access_cfg = e->config & 0xffff;
	if (find(row, n, PERF_TYPE_HW_CACHE, access_cfg, &access))
		share(m, e->value, access, units[cache]);
	return true;
}

void pmc_metric_for(const struct pmc_row_event *row, size_t n, size_t i,
		    double wall_ns, struct pmc_metric *m)
{
	const struct pmc_row_event *e = &row[i];
	memset(m, 0, sizeof(*m));
	if (!e->counted)
		return;
	if (is_clock(e)) {
		if (wall_ns > 0)
			set(m, e->value / wall_ns, "CPUs utilized", false);
		return;
	}
	if (e->type == PERF_TYPE_HARDWARE && hw_metric(row, n, e, m))
		return;
	if (e->type == PERF_TYPE_HW_CACHE && cache_metric(row, n, e, m))
		return;
	double clock;
	/* Everything else (tracepoints and PMU events too) as a rate over
	 * CPU time, like perf. */
	if (find_clock(row, n, &clock) && clock > 0)
		rate(m, e->value, clock);
}

/* ---- tlbstat columns -------------------------------------------------- */

static const char *const tcol_names[PMC_C_NCOLS] = {
	"K_CYCLES", "K_INSTR", "IPC", "DTLB_WALKS", "ITLB_WALKS",
	"K_DTLBCYC", "K_ITLBCYC", "DTLB%", "ITLB%",
};

const char *pmc_tcol_name(enum pmc_tcol c)
{
	return c < PMC_C_NCOLS ? tcol_names[c] : "?";
}

static void col(struct pmc_tlb_row *r, enum pmc_tcol c, bool have, double v)
{
	r->have[c] = have;
	r->v[c] = have ? v : 0;
}

/* Sums a load and a store part; either may be missing from a family. */
static bool sum2(const double *v, const bool *have, int a, int b, double *out)
{
	*out = (have[a] ? v[a] : 0) + (have[b] ? v[b] : 0);
	return have[a] || have[b];
}

void pmc_tlb_compute(const double *v, const bool *have, struct pmc_tlb_row *r)
{
	bool hc = have[PMC_T_CYCLES], hi = have[PMC_T_INSTR];
	double cyc = v[PMC_T_CYCLES], ins = v[PMC_T_INSTR], dw, dc;
	col(r, PMC_C_K_CYCLES, hc, cyc / 1000);
	col(r, PMC_C_K_INSTR, hi, ins / 1000);
	col(r, PMC_C_IPC, hc && hi, cyc > 0 ? ins / cyc : 0);
	bool hdw = sum2(v, have, PMC_T_DTLB_LOAD_WALKS, PMC_T_DTLB_STORE_WALKS, &dw);
	col(r, PMC_C_DTLB_WALKS, hdw, dw);
	col(r, PMC_C_ITLB_WALKS, have[PMC_T_ITLB_WALKS], v[PMC_T_ITLB_WALKS]);
	bool hdc = sum2(v, have, PMC_T_DTLB_LOAD_CYC, PMC_T_DTLB_STORE_CYC, &dc);
	col(r, PMC_C_K_DTLBCYC, hdc, dc / 1000);
	col(r, PMC_C_K_ITLBCYC, have[PMC_T_ITLB_CYC], v[PMC_T_ITLB_CYC] / 1000);
	col(r, PMC_C_DTLB_PCT, hdc && hc, cyc > 0 ? 100.0 * dc / cyc : 0);
	col(r, PMC_C_ITLB_PCT, have[PMC_T_ITLB_CYC] && hc,
	    cyc > 0 ? 100.0 * v[PMC_T_ITLB_CYC] / cyc : 0);
}
