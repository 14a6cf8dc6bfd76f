/* irqs.c - time in interrupts (BCC's softirqs and hardirqs): from each
 * CPU's softirq_entry to its softirq_exit, by vector; from each
 * irq_handler_entry to its exit, by handler.  Totals by default, -d log2
 * histograms, -C counts. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

struct irqs {
	struct tool_opts o;
	bool hard;                 /* hardirqs, not softirqs */
	const struct tool_env *env;
	u64 entry_id, exit_id;
	struct tool_pair running;  /* cpu -> the entry under way: its vector or irq */
	struct tool_counts rows;
	u64 unpaired;
};

/* The kernel's softirq vectors, in its order (softirq_to_name). */
static const char *const vec_names[] = {
	"hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched", "hrtimer", "rcu",
};

static int start(void *ctx, const struct tool_env *env)
{
	struct irqs *x = ctx;
	x->env = env;
	const char *tool = x->hard ? "hardirqs" : "softirqs";
	bool ok = x->hard ? tool_tp_id(env, "irq:irq_handler_entry", &x->entry_id) &&
			      tool_tp_id(env, "irq:irq_handler_exit", &x->exit_id)
			    : tool_tp_id(env, "irq:softirq_entry", &x->entry_id) &&
			      tool_tp_id(env, "irq:softirq_exit", &x->exit_id);
	if (!ok)
		return tool_missing(tool, x->hard ? "irq:irq_handler_entry/exit events"
						    : "irq:softirq_entry/exit events");
	return 0;
}

static u64 key_of(struct irqs *x, const struct rp_sample *s)
{
	return tool_field(x->env, s, x->hard ? "irq" : "vec");
}

static void on_entry(struct irqs *x, const struct rp_sample *s)
{
	u64 key = key_of(x, s);
	if (tool_pair_begin(&x->running, s->s->cpu, s->s->time, key))
		x->unpaired++;
	if (x->hard) {           /* the handler's name is only at entry */
		char name[64];
		tool_counts_row(&x->rows, key, tool_field_str(x->env, s, "name", name, sizeof(name)));
	}
}

static void on_exit_(struct irqs *x, const struct rp_sample *s)
{
	u64 key = key_of(x, s), ns;
	if (!tool_pair_end_of(&x->running, s->s->cpu, s->s->time, key, &ns)) {
		x->unpaired++;
		return;
	}
	char label[32];
	if (!x->hard)
		snprintf(label, sizeof(label), "%s", key < ARRAY_SIZE(vec_names) ? vec_names[key] : "?");
	else
		snprintf(label, sizeof(label), "irq %llu", (unsigned long long)key);
	struct tool_row *r = tool_counts_row(&x->rows, key, label);
	r->count++;
	r->total_ns += ns;
	if (x->o.dist)
		tool_hist_add(tool_counts_hist(&x->rows, r), ns / 1000);
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct irqs *x = ctx;
	if (tool_is_tp(s, x->entry_id))
		on_entry(x, s);
	else if (tool_is_tp(s, x->exit_id))
		on_exit_(x, s);
	return 0;
}

static void print_rows(void *ctx, FILE *out)
{
	struct irqs *x = ctx;
	struct tool_row **v = tool_counts_sorted(&x->rows, !x->o.counts);
	const char *what = x->hard ? "HARDIRQ" : "SOFTIRQ";
	if (!x->o.dist)
		fprintf(out, "%-26s %11s\n", what, x->o.counts ? "TOTAL_count" : "TOTAL_usecs");
	for (size_t i = 0; i < x->rows.rows.n; i++) {
		const struct tool_row *r = v[i];
		if (!r->count)
			continue;
		if (x->o.dist) {
			fprintf(out, "\n%s = %s\n", x->hard ? "hardirq" : "softirq", r->label);
			tool_hist_print(r->hist, "usecs", out);
		} else if (x->o.counts) {
			fprintf(out, "%-26s %11llu\n", r->label, (unsigned long long)r->count);
		} else {
			fprintf(out, "%-26s %11llu\n", r->label, (unsigned long long)(r->total_ns / 1000));
		}
	}
	free(v);
}

static void reset(void *ctx)
{
	struct irqs *x = ctx;
	tool_counts_reset(&x->rows);
}

static void irqs_free(void *ctx)
{
	struct irqs *x = ctx;
	tool_pair_free(&x->running);
	tool_counts_free(&x->rows);
	free(x);
}

static struct tool *irqs_new(const struct tool_opts *o, bool hard)
{
	struct irqs *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	x->hard = hard;
	tool_pair_init(&x->running);
	tool_counts_init(&x->rows);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = hard ? "hardirqs" : "softirqs", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, },
			    .print = print_rows, .reset = reset,
			    .free = irqs_free,
			    /* An interrupt runs in whatever task it interrupts. */
			    .refused = RP_FILTER_PID | RP_FILTER_TID | RP_FILTER_COMM };
	return t;
}

struct tool *softirqs_new(const struct tool_opts *o)
{
	return irqs_new(o, false);
}

struct tool *hardirqs_new(const struct tool_opts *o)
{
	return irqs_new(o, true);
}
