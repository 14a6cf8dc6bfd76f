/* execsnoop.c - one line per exec (BCC's execsnoop): PCOMM PID PPID RET
 * ARGS.  A successful exec is its sched_process_exec, which fires with the
 * new image's stack in place: argc and argv lie at the user sp the sample
 * copied.  A failed one (-x) is sys_exit_execve's error, with the command
 * line its sys_enter pointed at. */
#include <stdlib.h>
#include <string.h>

#include "report/tools/tools.h"

#define ARGS_MAX 20             /* BCC's default --max-args */
#define LINE_MAX_ TOOL_STR_MAX

enum { EX_EXEC, EX_ENTER, EX_ENTER_AT, EX_EXIT, EX_EXIT_AT, EX_N };
static const char *const tp_names[EX_N] = {
	"sched:sched_process_exec", "syscalls:sys_enter_execve", "syscalls:sys_enter_execveat",
	"syscalls:sys_exit_execve", "syscalls:sys_exit_execveat",
};

struct execsnoop {
	struct tool_opts o;
	const struct tool_env *env;
	u64 id[EX_N];
	bool have[EX_N];
	struct tool_forks forks;
	struct tool_pending args;  /* the command line of an execve under way */
	u64 first_time;
	bool header;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct execsnoop *x = ctx;
	x->env = env;
	for (int i = 0; i < EX_N; i++)
		x->have[i] = tool_tp_id(env, tp_names[i], &x->id[i]);
	if (!x->have[EX_EXEC])
		return tool_missing("execsnoop", "sched:sched_process_exec events");
	if (x->o.failed && !x->have[EX_EXIT])
		return tool_missing("execsnoop", "syscalls:sys_exit_execve events (for -x)");
	return 0;
}

/* argv[0..argc) joined by spaces, as far as the copy reaches. */
static bool join_argv(const struct rp_sample *s, u64 argv, u64 argc, struct strbuf *sb)
{
	char buf[LINE_MAX_];
	u64 p;
	bool any = false;
	for (u64 i = 0; i < argc && i < ARGS_MAX; i++) {
		const char *a = tool_user_u64(s, argv + 8 * i, &p) && p
				? tool_user_str(s, p, buf, sizeof(buf)) : NULL;
		if (!a)
			break;
		sb_printf(sb, "%s%s", i ? " " : "", a);
		any = true;
	}
	if (any && argc > ARGS_MAX)
		sb_puts(sb, " ...");
	return any;
}

/* From execve's pointers: argv ends at its NULL entry. */
static void enter_args(const struct execsnoop *x, const struct rp_sample *s, char *out)
{
	struct strbuf sb = {0};
	u64 argv = tool_field(x->env, s, "argv"), n = 0, p;
	while (n < ARGS_MAX + 1 && tool_user_u64(s, argv + 8 * n, &p) && p)
		n++;
	if (!join_argv(s, argv, n, &sb)) {
		char buf[LINE_MAX_];
		const char *f = tool_user_str(s, tool_field(x->env, s, "filename"), buf, sizeof(buf));
		sb_puts(&sb, f ? f : "");
	}
	snprintf(out, LINE_MAX_, "%s", sb.s ? sb.s : "");
	sb_free(&sb);
}

static void print_line(struct execsnoop *x, const struct rp_sample *s, u32 pid, s64 ret,
		       const char *args)
{
	FILE *out = x->env->out;
	if (!x->header) {
		if (x->o.timestamps)
			fprintf(out, "%-8s ", "TIME(s)");
		fprintf(out, "%-16s %-7s %-7s %3s %s\n", "PCOMM", "PID", "PPID", "RET", "ARGS");
		x->header = true;
	}
	if (x->o.timestamps)
		fprintf(out, "%-8.3f ", (double)(s->s->time - x->first_time) / 1e9);
	char ppid[16];
	fprintf(out, "%-16s %-7u %-7s %3lld %s\n", s->thread ? s->thread->comm : "?", pid,
		tool_forks_ppid(&x->forks, pid, ppid),
		(long long)ret, args);
}

/* The arguments come from the new image's stack when the copy reaches
 * them (record --tool takes 16 KiB from the sp, past the kernel's random
 * gap of up to 8 KiB below the strings).  perf's copy stops at a page no
 * one has touched, and a gap over 4 KiB leaves one in about a fifth of
 * execs (30 of 180 of /bin/true here): no event sees past it.  Then the
 * command line the execve call pointed at (strings on its stack or in its
 * file), else the path and "..." to say the arguments are not known. */
static void on_exec(struct execsnoop *x, const struct rp_sample *s)
{
	struct strbuf sb = {0};
	u64 sp = s->s->user_regs && s->s->user_abi ? s->s->user_regs[0] : 0, argc;
	u32 old = (u32)tool_field(x->env, s, "old_pid");
	const char *before = tool_pending_peek(&x->args, old);
	if (sp && tool_user_u64(s, sp, &argc) && join_argv(s, sp + 8, argc, &sb)) {
		;
	} else if (before) {
		sb_puts(&sb, before);
	} else {
		char buf[LINE_MAX_];
		sb_printf(&sb, "%s ...", tool_field_str(x->env, s, "filename", buf, sizeof(buf)));
	}
	print_line(x, s, (u32)tool_field(x->env, s, "pid"), 0, sb.s ? sb.s : "");
	sb_free(&sb);
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct execsnoop *x = ctx;
	if (!x->first_time)
		x->first_time = s->s->time;
	if (tool_is_tp(s, x->id[EX_EXEC]) && x->have[EX_EXEC]) {
		on_exec(x, s);
	} else if (((x->have[EX_ENTER] && tool_is_tp(s, x->id[EX_ENTER])) ||
				   (x->have[EX_ENTER_AT] && tool_is_tp(s, x->id[EX_ENTER_AT])))) {
		enter_args(x, s, tool_pending_slot(&x->args, s->s->tid));
	} else if (((x->have[EX_EXIT] && tool_is_tp(s, x->id[EX_EXIT])) ||
				   (x->have[EX_EXIT_AT] && tool_is_tp(s, x->id[EX_EXIT_AT])))) {
		s64 ret = (s64)tool_field(x->env, s, "ret");
		const char *args = tool_pending_take(&x->args, s->s->tid);
		if (ret < 0 && x->o.failed)
			print_line(x, s, s->s->pid, ret, args ? args : "?");
	}
	return 0;
}

static int event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct execsnoop *x = ctx;
	(void)t;
	tool_forks_event(&x->forks, ev);
	return 0;
}

static void execsnoop_free(void *ctx)
{
	struct execsnoop *x = ctx;
	tool_forks_free(&x->forks);
	tool_pending_free(&x->args);
	free(x);
}

struct tool *execsnoop_new(const struct tool_opts *o)
{
	struct execsnoop *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_forks_init(&x->forks);
	tool_pending_init(&x->args);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "execsnoop", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, .event = event },
			    .free = execsnoop_free };
	return t;
}
