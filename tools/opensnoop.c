/* opensnoop.c - one line per open, openat or openat2 (BCC's opensnoop):
 * PID COMM FD ERR PATH.  The path is read at the syscall's entry from the
 * copy of the user stack record --tool takes, or from the file a literal
 * lies in; a path in neither (the heap) shows as its address. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

enum { OP_ENTER, OP_ENTER_AT, OP_ENTER_AT2, OP_EXIT, OP_EXIT_AT, OP_EXIT_AT2, OP_N };
static const char *const tp_names[OP_N] = {
	"syscalls:sys_enter_open", "syscalls:sys_enter_openat", "syscalls:sys_enter_openat2",
	"syscalls:sys_exit_open", "syscalls:sys_exit_openat", "syscalls:sys_exit_openat2",
};

struct opensnoop {
	struct tool_opts o;
	const struct tool_env *env;
	u64 id[OP_N];
	bool have[OP_N];
	struct tool_pending path;  /* the path of each thread's open under way */
	u64 first_time;
	bool header;
	u64 unread;                /* paths in neither the copy nor a file */
};

static int start(void *ctx, const struct tool_env *env)
{
	struct opensnoop *x = ctx;
	x->env = env;
	bool any = false;
	for (int i = 0; i < OP_N; i++) {
		x->have[i] = tool_tp_id(env, tp_names[i], &x->id[i]);
		any |= x->have[i] && i >= OP_EXIT;
	}
	if (!any)
		return tool_missing("opensnoop", "syscalls:sys_exit_open* events");
	return 0;
}

/* OP_ENTER.. or OP_EXIT.. for the sample's tracepoint, -1 for others. */
static int kind_of(const struct opensnoop *x, const struct rp_sample *s)
{
	for (int i = 0; i < OP_N; i++)
		if (x->have[i] && tool_is_tp(s, x->id[i]))
			return i;
	return -1;
}

static void on_enter(struct opensnoop *x, const struct rp_sample *s)
{
	char *out = tool_pending_slot(&x->path, s->s->tid);
	u64 addr = tool_field(x->env, s, "filename");
	if (!tool_user_str(s, addr, out, TOOL_STR_MAX)) {
		snprintf(out, TOOL_STR_MAX, "[path at %#llx, not copied]", (unsigned long long)addr);
		x->unread++;
	}
}

static void on_exit_(struct opensnoop *x, const struct rp_sample *s)
{
	const char *path = tool_pending_take(&x->path, s->s->tid);
	s64 ret = (s64)tool_field(x->env, s, "ret");
	const char *comm = s->thread ? s->thread->comm : "?";
	if ((x->o.failed && ret >= 0) || (x->o.name && !strstr(comm, x->o.name)))
		return;
	FILE *out = x->env->out;
	if (!x->header) {
		if (x->o.timestamps)
			fprintf(out, "%-14s ", "TIME(s)");
		fprintf(out, "%-6s %-16s %4s %3s %s\n", "PID", "COMM", "FD", "ERR", "PATH");
		x->header = true;
	}
	if (x->o.timestamps)
		fprintf(out, "%-14.9f ", (double)(s->s->time - x->first_time) / 1e9);
	fprintf(out, "%-6u %-16s %4lld %3lld %s\n", s->s->pid, comm, ret >= 0 ? (long long)ret : -1LL,
		ret < 0 ? (long long)-ret : 0LL, path ? path : "[entry not seen]");
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct opensnoop *x = ctx;
	if (!x->first_time)
		x->first_time = s->s->time;
	int k = kind_of(x, s);
	if (k >= OP_EXIT)
		on_exit_(x, s);
	else if (k >= 0)
		on_enter(x, s);
	return 0;
}

static int finish(void *ctx)
{
	struct opensnoop *x = ctx;
	if (x->unread)
		tool_note(x->env, "%llu paths were neither in the stack copy nor in a mapped "
			  "file (the heap, most likely)", (unsigned long long)x->unread);
	return 0;
}

static void opensnoop_free(void *ctx)
{
	struct opensnoop *x = ctx;
	tool_pending_free(&x->path);
	free(x);
}

struct tool *opensnoop_new(const struct tool_opts *o)
{
	struct opensnoop *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_pending_init(&x->path);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "opensnoop", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, .finish = finish },
			    .free = opensnoop_free };
	return t;
}
