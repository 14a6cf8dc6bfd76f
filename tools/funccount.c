/* funccount.c - hits of the events given to count (BCC's funccount):
 * tracepoints (globs) and user functions (uprobes, u:PATH:SYMBOL), each
 * hit recorded; -P counts per process. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

struct funccount {
	struct tool_opts o;
	const struct tool_env *env;
	struct tool_counts rows;   /* key: attr index << 32 | pid (-P) */
};

static int start(void *ctx, const struct tool_env *env)
{
	struct funccount *x = ctx;
	x->env = env;
	return 0;
}

static const char *event_name(const struct funccount *x, const struct pd_attr *a)
{
	const char *n = a->attr.type == PERF_TYPE_TRACEPOINT && x->env->trace
			? pd_trace_name(x->env->trace, a->attr.config) : NULL;
	return n ? n : a->name ? a->name : "?";
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct funccount *x = ctx;
	if (!s->attr)
		return 0;
	u64 key = (u64)(u32)s->attr->index << 32 | (x->o.per_process ? s->s->pid : 0);
	struct tool_row *r = tool_counts_row(&x->rows, key, event_name(x, s->attr));
	r->count++;
	return 0;
}

static void print_rows(void *ctx, FILE *out)
{
	struct funccount *x = ctx;
	struct tool_row **v = tool_counts_sorted(&x->rows, false);
	if (x->o.per_process)
		fprintf(out, "%-40s %-7s %10s\n", "FUNC", "PID", "COUNT");
	else
		fprintf(out, "%-40s %10s\n", "FUNC", "COUNT");
	for (size_t i = 0; i < x->rows.rows.n; i++) {
		if (x->o.per_process)
			fprintf(out, "%-40s %-7u %10llu\n", v[i]->label, (u32)v[i]->key,
				(unsigned long long)v[i]->count);
		else
			fprintf(out, "%-40s %10llu\n", v[i]->label, (unsigned long long)v[i]->count);
	}
	free(v);
}

static void reset(void *ctx)
{
	struct funccount *x = ctx;
	tool_counts_reset(&x->rows);
}

static void funccount_free(void *ctx)
{
	struct funccount *x = ctx;
	tool_counts_free(&x->rows);
	free(x);
}

struct tool *funccount_new(const struct tool_opts *o)
{
	struct funccount *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_counts_init(&x->rows);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "funccount", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample },
			    .print = print_rows, .reset = reset, .free = funccount_free };
	return t;
}
