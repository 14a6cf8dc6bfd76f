/* writeback.c - the kernel's writeback work (ember writeback): each
 * writeback_start to the same flusher's writeback_written is one piece of
 * work, summed by its reason (background, periodic, sync, ...): how many,
 * pages written (the work's page budget spent) and how long they took;
 * printed per --interval or for the whole recording. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

struct writeback {
	const struct tool_env *env;
	u64 start_id, written_id;
	struct tool_pair works;    /* tid -> the work under way: nr_pages at its start */
	struct tool_counts rows;   /* by reason */
	struct strbuf line;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct writeback *x = ctx;
	x->env = env;
	if (!tool_tp_id(env, "writeback:writeback_start", &x->start_id) ||
	    !tool_tp_id(env, "writeback:writeback_written", &x->written_id))
		return tool_missing("writeback", "writeback:writeback_start/written events");
	return 0;
}

/* The reason's name as the kernel prints it ("reason=sync"), from the
 * event's own print format, so new reasons need no table here. */
static void reason_name(struct writeback *x, const struct rp_sample *s, char *buf, size_t cap)
{
	sb_reset(&x->line);
	snprintf(buf, cap, "%llu", (unsigned long long)tool_field(x->env, s, "reason"));
	if (pd_trace_format(x->env->trace, s->attr->attr.config, s->s->raw, s->s->raw_size,
			    &x->line) < 0 || !x->line.s)
		return;
	const char *r = strstr(x->line.s, "reason=");
	if (r)
		snprintf(buf, cap, "%.*s", (int)strcspn(r + 7, " "), r + 7);
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct writeback *x = ctx;
	if (tool_is_tp(s, x->start_id)) {
		tool_pair_begin(&x->works, s->s->tid, s->s->time, tool_field(x->env, s, "nr_pages"));
		return 0;
	}
	u64 ns, budget;
	if (!tool_is_tp(s, x->written_id) ||
	    !tool_pair_end(&x->works, s->s->tid, s->s->time, &ns, &budget))
		return 0;
	char reason[32];
	reason_name(x, s, reason, sizeof(reason));
	struct tool_row *r = tool_counts_row(&x->rows, tool_field(x->env, s, "reason"), reason);
	u64 left = tool_field(x->env, s, "nr_pages");
	r->count++;
	r->total_ns += ns;
	if (ns > r->max_ns)
		r->max_ns = ns;
	r->value += budget >= left ? budget - left : 0;
	return 0;
}

static void print_rows(void *ctx, FILE *out)
{
	struct writeback *x = ctx;
	struct tool_row **v = tool_counts_sorted(&x->rows, true);
	fprintf(out, "%-16s %8s %10s %12s %10s %10s\n", "REASON", "COUNT", "PAGES", "TOTAL(ms)",
		"AVG(ms)", "MAX(ms)");
	for (size_t i = 0; i < x->rows.rows.n; i++)
		fprintf(out, "%-16s %8llu %10llu %12.3f %10.3f %10.3f\n", v[i]->label,
			(unsigned long long)v[i]->count, (unsigned long long)v[i]->value,
			v[i]->total_ns / 1e6, v[i]->total_ns / 1e6 / (double)v[i]->count,
			v[i]->max_ns / 1e6);
	free(v);
}

static void reset(void *ctx)
{
	struct writeback *x = ctx;
	tool_counts_reset(&x->rows);
}

static void writeback_free(void *ctx)
{
	struct writeback *x = ctx;
	tool_pair_free(&x->works);
	tool_counts_free(&x->rows);
	sb_free(&x->line);
	free(x);
}

struct tool *writeback_new(const struct tool_opts *o)
{
	(void)o;
	struct writeback *x = xcalloc(1, sizeof(*x));
	tool_pair_init(&x->works);
	tool_counts_init(&x->rows);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "writeback", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample },
			    .print = print_rows, .reset = reset, .free = writeback_free,
			    /* The work runs in kernel flusher threads, for no one task. */
			    .refused = RP_FILTER_PID | RP_FILTER_TID | RP_FILTER_COMM };
	return t;
}
