/* oomkill.c - one line per OOM kill (BCC's oomkill): when, the task whose
 * allocation ran the OOM killer (oom:mark_victim fires in its context),
 * the victim's pid and name, and the victim's resident pages. */
#include <stdlib.h>

#include "tools/tools.h"

struct oomkill {
	const struct tool_env *env;
	u64 victim_id;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct oomkill *x = ctx;
	x->env = env;
	if (!tool_tp_id(env, "oom:mark_victim", &x->victim_id))
		return tool_missing("oomkill", "oom:mark_victim events");
	return 0;
}

/* Recording time in seconds, as perf script prints it. */
static int sample(void *ctx, const struct rp_sample *s)
{
	struct oomkill *x = ctx;
	if (!tool_is_tp(s, x->victim_id))
		return 0;
	char victim[64];
	tool_field_str(x->env, s, "comm", victim, sizeof(victim));
	/* The rss fields are in kB. */
	u64 kb = tool_field(x->env, s, "anon_rss") + tool_field(x->env, s, "file_rss") +
		 tool_field(x->env, s, "shmem_rss");
	fprintf(x->env->out, "%.6f Triggered by PID %u (\"%s\"), OOM kill of PID %llu (\"%s\"), "
		"%llu pages\n", (double)s->s->time / 1e9, s->s->pid, s->thread ? s->thread->comm : "?",
		(unsigned long long)tool_field(x->env, s, "pid"), victim,
		(unsigned long long)(kb / 4));
	return 0;
}

struct tool *oomkill_new(const struct tool_opts *o)
{
	(void)o;
	struct oomkill *x = xcalloc(1, sizeof(*x));
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "oomkill", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample }, .free = free };
	return t;
}
