/* rows.c - a run's counters ([event][cpu][thread]) summed into the rows
 * stat shows: the total, one per CPU (-A), per NUMA node (--per-node) or
 * per thread (--per-thread), then each row's lines with their metrics. */
#include <stdlib.h>
#include <string.h>

#include "pmc/stat/stat.h"

static size_t count_rows(const struct pmc_view *v)
{
	int max_node = 0;
	switch (v->agg) {
	case PMC_AGG_CPU: return (size_t)v->ncpus;
	case PMC_AGG_THREAD: return (size_t)v->ntids;
	case PMC_AGG_NODE:
		for (int c = 0; c < v->ncpus; c++)
			max_node = MAX(max_node, v->node_of ? v->node_of[c] : 0);
		return (size_t)max_node + 1;
	default: return 1;
	}
}

static size_t row_of(const struct pmc_view *v, int ci, int ti)
{
	switch (v->agg) {
	case PMC_AGG_CPU: return (size_t)ci;
	case PMC_AGG_THREAD: return (size_t)ti;
	case PMC_AGG_NODE: return v->node_of ? (size_t)v->node_of[ci] : 0;
	default: return 0;
	}
}

static char *row_label(const struct pmc_view *v, size_t row)
{
	switch (v->agg) {
	case PMC_AGG_CPU:
		return xasprintf("CPU%d", v->cpus ? v->cpus[row] : (int)row);
	case PMC_AGG_THREAD:
		return xstrdup(v->thread_names ? v->thread_names[row] : "?");
	case PMC_AGG_NODE:
		return xasprintf("N%zu", row);
	default:
		return NULL;
	}
}

void pmc_rows_build(const struct pmc_view *v, const struct pmc_reading *slots,
		    const int *err, struct pmc_rows *out)
{
	size_t nev = v->events->n;
	memset(out, 0, sizeof(*out));
	out->nrows = count_rows(v);
	out->nev = nev;
	out->err = err;
	out->r = xcalloc(out->nrows * (nev ? nev : 1), sizeof(*out->r));
	out->label = xcalloc(out->nrows, sizeof(char *));
	out->ncpus = xcalloc(out->nrows, sizeof(int));
	for (size_t row = 0; row < out->nrows; row++)
		out->label[row] = row_label(v, row);
	for (int ci = 0; ci < v->ncpus; ci++)
		out->ncpus[row_of(v, ci, 0)]++;
	for (size_t e = 0; e < nev; e++)
		for (int ci = 0; ci < v->ncpus; ci++)
			for (int ti = 0; ti < v->ntids; ti++) {
				size_t s = (e * (size_t)v->ncpus + (size_t)ci) *
					   (size_t)v->ntids + (size_t)ti;
				size_t row = row_of(v, ci, ti);
				pmc_reading_add(&out->r[row * nev + e], &slots[s]);
			}
}

void pmc_rows_free(struct pmc_rows *rows)
{
	for (size_t i = 0; i < rows->nrows; i++)
		free(rows->label[i]);
	free(rows->label);
	free(rows->ncpus);
	free(rows->r);
	memset(rows, 0, sizeof(*rows));
}

static bool is_clock_attr(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK ||
		a->config == PERF_COUNT_SW_CPU_CLOCK);
}

static enum pmc_state state_of(const struct pmc_rows *rows, size_t e,
			       const struct pmc_reading *r)
{
	if (rows->err && rows->err[e])
		return PMC_NOT_SUPPORTED;
	return r->running ? PMC_COUNTED : PMC_NOT_COUNTED;
}

/* The row's counters as the metric code sees them. */
static void row_events(const struct pmc_view *v, const struct pmc_rows *rows,
		       size_t row, const struct pmc_stats *stats,
		       struct pmc_row_event *out)
{
	for (size_t e = 0; e < rows->nev; e++) {
		const struct pmc_reading *r = &rows->r[row * rows->nev + e];
		const struct perf_event_attr *a = &v->events->v[e].attr;
		out[e].type = a->type;
		out[e].config = a->config;
		out[e].counted = state_of(rows, e, r) == PMC_COUNTED;
		out[e].value = stats ? stats[row * rows->nev + e].mean
				     : pmc_scaled(r);
	}
}

static const char *agg_kind(enum pmc_agg a)
{
	return a == PMC_AGG_NODE ? "node" : a == PMC_AGG_THREAD ? "thread"
								: "cpu";
}

static void format_one(struct strbuf *sb, const struct pmc_view *v,
		       const struct pmc_rows *rows, size_t row, size_t e,
		       const struct pmc_row_event *re, const struct pmc_stats *stats,
		       bool interval, double ts, double wall_ns)
{
	size_t nev = rows->nev;
	const struct pmc_reading *r = &rows->r[row * nev + e];
	struct pmc_out_line l = {
		.interval = interval, .ts = ts,
		.agg = rows->label[row], .agg_cpus = rows->ncpus[row],
		.agg_kind = agg_kind(v->agg),
		.event = v->events->v[e].name,
		.clock = is_clock_attr(&v->events->v[e].attr),
		.state = state_of(rows, e, r),
		.value = re[e].value,
		.running = r->running,
		.pcnt = pmc_running_pct(r),
		.repeat = stats != NULL,
		.noise_pct = stats ? pmc_stats_rel_pct(&stats[row * nev + e]) : 0,
	};
	pmc_metric_for(re, nev, e, wall_ns, &l.metric);
	pmc_format_line(sb, v->mode, v->sep, &l);
}

/* perf lists -A and --per-thread event by event (each CPU or thread in
 * turn), and --per-node node by node. */
void pmc_rows_format(struct strbuf *sb, const struct pmc_view *v,
		     const struct pmc_rows *rows, const struct pmc_stats *stats,
		     bool interval, double ts, double wall_ns)
{
	size_t nev = rows->nev, nrows = rows->nrows;
	struct pmc_row_event *re = xcalloc(nrows * (nev ? nev : 1), sizeof(*re));
	for (size_t row = 0; row < nrows; row++)
		row_events(v, rows, row, stats, re + row * nev);
	bool by_event = v->agg == PMC_AGG_CPU || v->agg == PMC_AGG_THREAD;
	size_t outer = by_event ? nev : nrows, inner = by_event ? nrows : nev;
	for (size_t i = 0; i < outer; i++)
		for (size_t j = 0; j < inner; j++) {
			size_t row = by_event ? j : i, e = by_event ? i : j;
			if (v->agg == PMC_AGG_NODE && rows->ncpus[row] == 0)
				continue;   /* a node with none of the CPUs */
			format_one(sb, v, rows, row, e, re + row * nev, stats,
				   interval, ts, wall_ns);
		}
	free(re);
}

void pmc_rows_add_stats(const struct pmc_rows *rows, struct pmc_stats *stats)
{
	for (size_t i = 0; i < rows->nrows * rows->nev; i++)
		pmc_stats_add(&stats[i], pmc_scaled(&rows->r[i]));
}
