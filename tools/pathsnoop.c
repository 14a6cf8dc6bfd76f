/* pathsnoop.c - one line per syscall that takes a path, BCC's way:
 * opensnoop (open, openat, openat2: PID COMM FD ERR PATH) and statsnoop
 * (stat, lstat, fstatat, statx, statfs: PID COMM RET ERR PATH).  The
 * path is the one the path probe fetched where the call was made
 * (tools/strings.c), else read from the copy of the caller's stack taken
 * at the syscall's entry or from the file a literal lies in; a path in
 * none of these (the heap of a program whose syscalls the probes do not
 * see) shows as its address, never as a guess. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

#define MAX_CALLS 5

/* A tool of this file: its syscalls' tracepoints, entry and exit. */
struct pathsnoop_kind {
	const char *name;
	const char *enter[MAX_CALLS], *exit[MAX_CALLS];
	const char *ret_label;     /* the result's column: FD or RET */
	const char *missing;       /* what a recording without them lacks */
};

static const struct pathsnoop_kind opensnoop_kind = {
	"opensnoop",
	{ "syscalls:sys_enter_open", "syscalls:sys_enter_openat", "syscalls:sys_enter_openat2" },
	{ "syscalls:sys_exit_open", "syscalls:sys_exit_openat", "syscalls:sys_exit_openat2" },
	"FD", "syscalls:sys_exit_open* events",
};

static const struct pathsnoop_kind statsnoop_kind = {
	"statsnoop",
	{ "syscalls:sys_enter_newstat", "syscalls:sys_enter_newlstat",
	  "syscalls:sys_enter_newfstatat", "syscalls:sys_enter_statx",
	  "syscalls:sys_enter_statfs" },
	{ "syscalls:sys_exit_newstat", "syscalls:sys_exit_newlstat",
	  "syscalls:sys_exit_newfstatat", "syscalls:sys_exit_statx", "syscalls:sys_exit_statfs" },
	"RET", "syscalls:sys_exit_*stat* events",
};

struct pathsnoop {
	const struct pathsnoop_kind *kind;
	struct tool_opts o;
	const struct tool_env *env;
	u64 enter_id[MAX_CALLS], exit_id[MAX_CALLS];
	bool have_enter[MAX_CALLS], have_exit[MAX_CALLS];
	struct tool_pending path;  /* the path of each thread's call under way */
	u64 first_time;
	bool header;
	u64 unread;                /* paths found nowhere */
};

static int start(void *ctx, const struct tool_env *env)
{
	struct pathsnoop *x = ctx;
	const struct pathsnoop_kind *k = x->kind;
	x->env = env;
	bool any = false;
	for (int i = 0; i < MAX_CALLS && k->enter[i]; i++) {
		x->have_enter[i] = tool_tp_id(env, k->enter[i], &x->enter_id[i]);
		x->have_exit[i] = tool_tp_id(env, k->exit[i], &x->exit_id[i]);
		any |= x->have_exit[i];
	}
	if (!any)
		return tool_missing(k->name, k->missing);
	return 0;
}

/* Whether s is one of the calls' entries (*exit false) or exits. */
static bool is_call(const struct pathsnoop *x, const struct rp_sample *s, bool *exit)
{
	for (int i = 0; i < MAX_CALLS && x->kind->enter[i]; i++) {
		if (x->have_enter[i] && tool_is_tp(s, x->enter_id[i]))
			return !(*exit = false);
		if (x->have_exit[i] && tool_is_tp(s, x->exit_id[i]))
			return (*exit = true);
	}
	return false;
}

static void on_enter(struct pathsnoop *x, const struct rp_sample *s)
{
	char *out = tool_pending_slot(&x->path, s->s->tid);
	u64 addr = tool_path_arg(x->env, s);
	if (!tool_syscall_str(x->env, s, addr, out, TOOL_STR_MAX)) {
		snprintf(out, TOOL_STR_MAX, "[path at %#llx, not copied]", (unsigned long long)addr);
		x->unread++;
	} else if (!out[0]) {
		snprintf(out, TOOL_STR_MAX, "\"\"");   /* fstatat(fd, "", AT_EMPTY_PATH): fstat */
	}
}

static void on_exit_(struct pathsnoop *x, const struct rp_sample *s)
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
		fprintf(out, "%-6s %-16s %4s %3s %s\n", "PID", "COMM", x->kind->ret_label, "ERR",
			"PATH");
		x->header = true;
	}
	if (x->o.timestamps)
		fprintf(out, "%-14.9f ", (double)(s->s->time - x->first_time) / 1e9);
	fprintf(out, "%-6u %-16s %4lld %3lld %s\n", s->s->pid, comm, ret >= 0 ? (long long)ret : -1LL,
		ret < 0 ? (long long)-ret : 0LL, path ? path : "[entry not seen]");
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct pathsnoop *x = ctx;
	bool exit;
	if (!x->first_time)
		x->first_time = s->s->time;
	if (!is_call(x, s, &exit))
		return 0;
	if (exit)
		on_exit_(x, s);
	else
		on_enter(x, s);
	return 0;
}

static int finish(void *ctx)
{
	struct pathsnoop *x = ctx;
	if (x->unread)
		tool_note(x->env, "%llu paths were found neither by the path probes nor in the "
			  "stack copy or a mapped file (the heap, most likely)%s",
			  (unsigned long long)x->unread,
			  tool_strings_recorded(x->env->strings) ? ""
			  : "; the recording has no path probes");
	return 0;
}

static void pathsnoop_free(void *ctx)
{
	struct pathsnoop *x = ctx;
	tool_pending_free(&x->path);
	free(x);
}

static struct tool *pathsnoop_new(const struct pathsnoop_kind *kind, const struct tool_opts *o)
{
	struct pathsnoop *x = xcalloc(1, sizeof(*x));
	x->kind = kind;
	x->o = *o;
	tool_pending_init(&x->path);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = kind->name, .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, .finish = finish },
			    .free = pathsnoop_free };
	return t;
}

struct tool *opensnoop_new(const struct tool_opts *o)
{
	return pathsnoop_new(&opensnoop_kind, o);
}

struct tool *statsnoop_new(const struct tool_opts *o)
{
	return pathsnoop_new(&statsnoop_kind, o);
}
