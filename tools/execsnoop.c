/* execsnoop.c - one line per exec (BCC's execsnoop): PCOMM PID PPID RET
 * ARGS.  A successful exec is its sched_process_exec; its arguments come
 * from the uprobe record --tool puts at the dynamic loader's entry
 * (record/execargs.c), else from the new image's stack the exec sample
 * copied.  A failed one (-x) is sys_exit_execve's error, with the command
 * line its sys_enter pointed at. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

#define ARGS_MAX 20             /* BCC's default --max-args */
#define LINE_MAX_ TOOL_STR_MAX
/* How long (recording time) an exec's line waits for its loader's uprobe
 * record.  That record comes at the new image's first instruction, right
 * after execve returns: microseconds later, or a time slice or so when the
 * CPUs are busy.  A static program (or one with another loader) never
 * sends one: its line goes out at its next exec, its exit, the end of the
 * input, or once an event this much later passes. */
#define HOLD_NS 1000000000ULL
/* The kernel gives a uprobe's fetched data one page past its 16-byte
 * header (common fields and the probe's address): a string reaching that
 * end was cut there, and those after it come empty. */
#define UPROBE_DATA_END (16 + 4096)

enum { EX_EXEC, EX_ENTER, EX_ENTER_AT, EX_EXIT, EX_EXIT_AT, EX_N };
static const char *const tp_names[EX_N] = {
	"sched:sched_process_exec", "syscalls:sys_enter_execve", "syscalls:sys_enter_execveat",
	"syscalls:sys_exit_execve", "syscalls:sys_exit_execveat",
};

/* An exec whose line waits for the uprobe record of its pid. */
struct held_exec {
	u32 pid;
	u64 time;
	char comm[64];
	struct strbuf args;        /* from the stack copy or execve's pointers */
	bool used;
};

struct execsnoop {
	struct tool_opts o;
	const struct tool_env *env;
	u64 id[EX_N];
	bool have[EX_N];
	u64 args_id;               /* ember_PID:exec_args, when recorded */
	bool have_args;
	VEC(struct held_exec) held;   /* in exec order; slots reused */
	size_t nheld;                 /* of them in use */
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
	/* The uprobe's group is named after the recorder's pid: any ember_*. */
	x->have_args = tool_tp_ids(env, "ember_*:exec_args", &x->args_id, 1) == 1;
	if (!x->have[EX_EXEC])
		return tool_missing("execsnoop", "sched:sched_process_exec events");
	if (x->o.failed && !x->have[EX_EXIT])
		return tool_missing("execsnoop", "syscalls:sys_exit_execve events (for -x)");
	return 0;
}

/* argv[0..argc) joined by spaces, as far as the copy reaches: an
 * argument cut at buf's end, or one out of the copy after some, ends the
 * line in "...". */
static bool join_argv(const struct rp_sample *s, u64 argv, u64 argc, struct strbuf *sb)
{
	char buf[LINE_MAX_];
	u64 p;
	bool any = false, cut = false;
	for (u64 i = 0; i < argc && i < ARGS_MAX && !cut; i++) {
		const char *a = tool_user_u64(s, argv + 8 * i, &p) && p
				? tool_user_str(s, p, buf, sizeof(buf)) : NULL;
		if (!a) {
			cut = true;
			break;
		}
		sb_printf(sb, "%s%s", i ? " " : "", a);
		any = true;
		cut = strlen(a) == sizeof(buf) - 1;
	}
	if (any && (cut || argc > ARGS_MAX))
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
		/* The path the probe or the copy has, and "..." for the
		 * arguments no one read. */
		char buf[LINE_MAX_];
		const char *f = tool_syscall_str(x->env, s, tool_field(x->env, s, "filename"), buf,
						 sizeof(buf));
		if (f)
			sb_printf(&sb, "%s ...", f);
	}
	snprintf(out, LINE_MAX_, "%s", sb.s ? sb.s : "");
	sb_free(&sb);
}

static void print_line(struct execsnoop *x, u64 time, const char *comm, u32 pid, s64 ret,
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
		fprintf(out, "%-8.3f ", (double)(time - x->first_time) / 1e9);
	char ppid[16];
	fprintf(out, "%-16s %-7u %-7s %3lld %s\n", comm, pid,
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
static void stack_args(struct execsnoop *x, const struct rp_sample *s, struct strbuf *sb)
{
	u64 sp = s->s->user_regs && s->s->user_abi ? s->s->user_regs[0] : 0, argc;
	u32 old = (u32)tool_field(x->env, s, "old_pid");
	const char *before = tool_pending_peek(&x->args, old);
	if (sp && tool_user_u64(s, sp, &argc) && join_argv(s, sp + 8, argc, sb)) {
		;
	} else if (before) {
		sb_puts(sb, before);
	} else {
		char buf[LINE_MAX_];
		sb_printf(sb, "%s ...", tool_field_str(x->env, s, "filename", buf, sizeof(buf)));
	}
}

/* The uprobe's argv[0..argc): argc says where argv ends (the slots past
 * it hold envp); an empty slot, a string cut at the kernel's page or more
 * arguments than slots end the line in "...", as BCC does.  False when
 * the record holds none. */
static bool uprobe_args(struct execsnoop *x, const struct rp_sample *s, struct strbuf *sb)
{
	u64 argc = tool_field(x->env, s, "argc"), loc;
	const char *raw = (const char *)s->s->raw;
	bool cut = false;
	u64 i = 0;
	for (; i < argc; i++) {
		char field[24];
		snprintf(field, sizeof(field), "a%llu", (unsigned long long)i);
		if (pd_trace_field(x->env->trace, x->args_id, raw, s->s->raw_size, field, &loc) < 0)
			break;   /* past the recorded slots */
		size_t len;
		const char *a = tool_data_loc(s, loc, &len);
		if (!a || len == 0) {
			cut = true;
			break;
		}
		sb_printf(sb, "%s%.*s", i ? " " : "", (int)strnlen(a, len), a);
		if ((size_t)(a - raw) + len >= UPROBE_DATA_END) {
			cut = true;
			i++;
			break;
		}
	}
	if (i == 0)
		return false;
	if (cut || i < argc)
		sb_puts(sb, " ...");
	return true;
}

/* A held line goes out with the arguments it had. */
static void release(struct execsnoop *x, struct held_exec *h, const char *args)
{
	print_line(x, h->time, h->comm, h->pid, 0, args ? args : h->args.s ? h->args.s : "");
	h->used = false;
	x->nheld--;
}

static struct held_exec *held_of(struct execsnoop *x, u32 pid)
{
	for (size_t i = 0; x->nheld && i < x->held.n; i++)
		if (x->held.v[i].used && x->held.v[i].pid == pid)
			return &x->held.v[i];
	return NULL;
}

/* Lines whose uprobe will not come: those held since before `before`
 * (0: all), oldest first. */
static void release_due(struct execsnoop *x, u64 before)
{
	while (x->nheld) {
		struct held_exec *oldest = NULL;
		for (size_t i = 0; i < x->held.n; i++)
			if (x->held.v[i].used && (!oldest || x->held.v[i].time < oldest->time))
				oldest = &x->held.v[i];
		if (before && oldest->time + HOLD_NS >= before)
			return;
		release(x, oldest, NULL);
	}
}

static struct held_exec *hold_slot(struct execsnoop *x)
{
	for (size_t i = 0; i < x->held.n; i++)
		if (!x->held.v[i].used)
			return &x->held.v[i];
	VEC_PUSH(&x->held, (struct held_exec){0});
	return &x->held.v[x->held.n - 1];
}

/* Without the uprobe the line is printed now; with it, it waits for the
 * pid's uprobe record (see HOLD_NS), the stack's arguments kept for when
 * none comes.  Waiting for every exec, not just those of programs whose
 * PT_INTERP is the probed loader: offline the files may be gone or
 * changed, and the record can be missing even then. */
static void on_exec(struct execsnoop *x, const struct rp_sample *s)
{
	u32 pid = (u32)tool_field(x->env, s, "pid");
	const char *comm = s->thread ? s->thread->comm : "?";
	struct held_exec *h = held_of(x, pid);
	if (h)
		release(x, h, NULL);   /* exec'd again: no loader ran between */
	if (!x->have_args) {
		struct strbuf sb = {0};
		stack_args(x, s, &sb);
		print_line(x, s->s->time, comm, pid, 0, sb.s ? sb.s : "");
		sb_free(&sb);
		return;
	}
	h = hold_slot(x);
	h->used = true;
	x->nheld++;
	h->pid = pid;
	h->time = s->s->time;
	snprintf(h->comm, sizeof(h->comm), "%s", comm);
	sb_reset(&h->args);
	stack_args(x, s, &h->args);
}

static void on_uprobe(struct execsnoop *x, const struct rp_sample *s)
{
	struct held_exec *h = held_of(x, s->s->pid);
	if (!h)
		return;    /* the loader run by hand, or its exec before the recording */
	struct strbuf sb = {0};
	release(x, h, uprobe_args(x, s, &sb) ? sb.s : NULL);
	sb_free(&sb);
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct execsnoop *x = ctx;
	if (!x->first_time)
		x->first_time = s->s->time;
	if (x->nheld)
		release_due(x, s->s->time);
	if (x->have_args && tool_is_tp(s, x->args_id)) {
		on_uprobe(x, s);
	} else if (tool_is_tp(s, x->id[EX_EXEC]) && x->have[EX_EXEC]) {
		on_exec(x, s);
	} else if (((x->have[EX_ENTER] && tool_is_tp(s, x->id[EX_ENTER])) ||
				   (x->have[EX_ENTER_AT] && tool_is_tp(s, x->id[EX_ENTER_AT])))) {
		struct held_exec *h = held_of(x, s->s->pid);
		if (h)
			release(x, h, NULL);   /* execs again: its loader never ran */
		enter_args(x, s, tool_pending_slot(&x->args, s->s->tid));
	} else if (((x->have[EX_EXIT] && tool_is_tp(s, x->id[EX_EXIT])) ||
				   (x->have[EX_EXIT_AT] && tool_is_tp(s, x->id[EX_EXIT_AT])))) {
		s64 ret = (s64)tool_field(x->env, s, "ret");
		const char *args = tool_pending_take(&x->args, s->s->tid);
		if (ret < 0 && x->o.failed)
			print_line(x, s->s->time, s->thread ? s->thread->comm : "?", s->s->pid, ret,
				   args ? args : "?");
	}
	return 0;
}

static int event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct execsnoop *x = ctx;
	(void)t;
	tool_forks_event(&x->forks, ev);
	struct held_exec *h;
	if (ev->type == PERF_RECORD_EXIT && ev->u.task.pid == ev->u.task.tid && x->nheld &&
	    (h = held_of(x, ev->u.task.pid)))
		release(x, h, NULL);   /* gone without its loader running */
	return 0;
}

static int finish(void *ctx)
{
	release_due(ctx, 0);
	return 0;
}

static void execsnoop_free(void *ctx)
{
	struct execsnoop *x = ctx;
	tool_forks_free(&x->forks);
	tool_pending_free(&x->args);
	for (size_t i = 0; i < x->held.n; i++)
		sb_free(&x->held.v[i].args);
	VEC_FREE(&x->held);
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
			    .sink = { .ctx = x, .sample = sample, .event = event,
				      .finish = finish },
			    .free = execsnoop_free };
	return t;
}
