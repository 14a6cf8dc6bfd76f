/* drsnoop.c - reclaim stalls (BCC's drsnoop): one line per direct reclaim
 * a task went through, from mm_vmscan_direct_reclaim_begin to its end,
 * with the pages it reclaimed; a cgroup's reclaim for a task over its
 * memory limit (memcg_reclaim) too, marked as such in a last column. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

enum { DR_BEGIN, DR_END, DR_MEMCG_BEGIN, DR_MEMCG_END, DR_N };
static const char *const tp_names[DR_N] = {
	"vmscan:mm_vmscan_direct_reclaim_begin", "vmscan:mm_vmscan_direct_reclaim_end",
	"vmscan:mm_vmscan_memcg_reclaim_begin", "vmscan:mm_vmscan_memcg_reclaim_end",
};

struct drsnoop {
	const struct tool_env *env;
	u64 id[DR_N];
	bool have[DR_N];
	struct tool_pair reclaims; /* tid -> its reclaim under way */
	u64 first_time;
	bool header;
	bool timestamps;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct drsnoop *x = ctx;
	x->env = env;
	for (int i = 0; i < DR_N; i++)
		x->have[i] = tool_tp_id(env, tp_names[i], &x->id[i]);
	if (!x->have[DR_END] && !x->have[DR_MEMCG_END])
		return tool_missing("drsnoop", "vmscan:mm_vmscan_direct_reclaim_* events");
	return 0;
}

static int kind_of(const struct drsnoop *x, const struct rp_sample *s)
{
	for (int i = 0; i < DR_N; i++)
		if (x->have[i] && tool_is_tp(s, x->id[i]))
			return i;
	return -1;
}

static void print_end(struct drsnoop *x, const struct rp_sample *s, u64 ns, bool memcg)
{
	FILE *out = x->env->out;
	if (!x->header) {
		fprintf(out, "%-14s %-16s %-7s %8s %8s %s\n", "TIME(s)", "COMM", "PID", "LAT(ms)",
			"PAGES", "KIND");
		x->header = true;
	}
	fprintf(out, "%-14.6f %-16s %-7u %8.3f %8llu %s\n",
		(double)(s->s->time - x->first_time) / 1e9, s->thread ? s->thread->comm : "?",
		s->s->pid, ns / 1e6, (unsigned long long)tool_field(x->env, s, "nr_reclaimed"),
		memcg ? "memcg" : "direct");
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct drsnoop *x = ctx;
	if (!x->first_time)
		x->first_time = s->s->time;
	int k = kind_of(x, s);
	u64 ns;
	if (k == DR_BEGIN || k == DR_MEMCG_BEGIN) {
		tool_pair_begin(&x->reclaims, s->s->tid, s->s->time, 0);
	} else if (k == DR_END || k == DR_MEMCG_END) {
		if (tool_pair_end(&x->reclaims, s->s->tid, s->s->time, &ns, NULL))
			print_end(x, s, ns, k == DR_MEMCG_END);
		tool_pair_drop(&x->reclaims, s->s->tid);  /* an end older than its begin ends it too */
	}
	return 0;
}

static void drsnoop_free(void *ctx)
{
	struct drsnoop *x = ctx;
	tool_pair_free(&x->reclaims);
	free(x);
}

struct tool *drsnoop_new(const struct tool_opts *o)
{
	(void)o;
	struct drsnoop *x = xcalloc(1, sizeof(*x));
	tool_pair_init(&x->reclaims);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "drsnoop", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample }, .free = drsnoop_free };
	return t;
}
