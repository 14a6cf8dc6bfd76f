/* cmd-tools.c - the commands of BCC's tools (execsnoop, opensnoop,
 * syscount, ...): one small option table each over the shared target
 * options; the tools themselves are sinks in report/tools/. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report/tools/tools.h"

/* Everything one tool's command line decides. */
struct tool_cli {
	struct tool_target tg;
	struct execsnoop_opts exec;
	struct opensnoop_opts open;
	struct syscount_opts sys;
	struct exitsnoop_opts exit;
	struct cpudist_opts dist;
	struct irqs_opts irqs;
	struct funccount_opts func;
	struct stackcount_opts stack;
	int argc;                  /* when parsed before run_tool */
};

enum {
	OPT_FAILED = TOOL_OPT_OWN, OPT_TIMESTAMPS, OPT_NAME, OPT_LATENCY, OPT_PER_PROCESS,
	OPT_TOP, OPT_THREADS, OPT_OFFCPU, OPT_MILLIS, OPT_DIST, OPT_COUNTS, OPT_FOLDED, OPT_FLAME,
};

static int parse_own(struct tool_cli *c, int id, const char *arg)
{
	u64 v;
	switch (id) {
	case OPT_FAILED:
		c->exec.failed = c->open.failed_only = c->exit.failed_only = true;
		return 1;
	case OPT_TIMESTAMPS: c->exec.timestamps = c->open.timestamps = true; return 1;
	case OPT_NAME: c->open.name = arg; return 1;
	case OPT_LATENCY: c->sys.latency = true; return 1;
	case OPT_PER_PROCESS:
		c->sys.per_process = c->dist.per_process = c->func.per_process = true;
		return 1;
	case OPT_TOP:
		if (parse_u64(arg, &v) < 0 || !v || v > 1000000) {
			err_set("-T %s: give how many rows to print, e.g. -T 10", arg);
			return -1;
		}
		c->sys.top = (u32)v;
		return 1;
	case OPT_THREADS: c->exit.threads = true; return 1;
	case OPT_OFFCPU: c->dist.offcpu = true; return 1;
	case OPT_MILLIS: c->dist.millis = true; return 1;
	case OPT_DIST: c->irqs.dist = true; return 1;
	case OPT_COUNTS: c->irqs.counts = true; return 1;
	case OPT_FOLDED: c->stack.folded = true; return 1;
	case OPT_FLAME: c->stack.flame = arg; return 1;
	default: return 0;
	}
}

static int parse_one(void *ctx, int id, const char *arg)
{
	struct tool_cli *c = ctx;
	int rc = tool_parse_target(&c->tg, id, arg);
	return rc ? rc : parse_own(c, id, arg);
}

/* Parses, builds the tool, runs it; the exit status. */
static int run_tool(const struct opt_cmd *cmd, int argc, char **argv, struct tool_cli *c,
		    struct tool *(*make)(struct tool_cli *c))
{
	/* argc 0: parsed already, the operands at optind. */
	int rc = argc ? opt_parse(cmd, argc, argv, c) : -1;
	if (rc < 0)
		rc = tool_finish_target(cmd->name, &c->tg, argc ? argc : c->argc, argv);
	if (rc < 0) {
		struct tool *t = make(c);
		rc = tool_run(t, &c->tg);
		tool_free(t);
	}
	tool_target_free(&c->tg);
	return rc;
}

#define TOOL_SYNOPSIS(name, what)                                              \
	"usage: ember " name " [-i FILE | [-a | -p PIDS | -C LIST] [--duration SECS]\n" \
	"       [-o FILE] [-- command [args]]] [options]\n\n" what "\n"            \
	"Live on the whole system by default (-a), on processes (-p), CPUs (-C)\n" \
	"or a command; or offline on a recording made with\n"                  \
	"'ember record --tool " name " [targets] -o FILE'.\n\n"

/* ---- execsnoop ----------------------------------------------------------- */

static const struct opt execsnoop_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT(OPT_FAILED, 'x', "fails", OPT_NO_ARG, NULL, "include failed execs"),
	OPT(OPT_TIMESTAMPS, 't', "timestamp", OPT_NO_ARG, NULL,
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

const struct opt_cmd execsnoop_cmd = {
	.name = "execsnoop",
	.summary = "one line per exec: PCOMM PID PPID RET ARGS",
	.synopsis = TOOL_SYNOPSIS("execsnoop",
	"One line per exec, as BCC's execsnoop prints it: the new program's name,\n"
	"its pid, its parent's, the return value and the command line (read from\n"
	"the new image's stack; the program's path when it is not there)."),
	.opts = execsnoop_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_execsnoop(struct tool_cli *c)
{
	return execsnoop_new(&c->exec);
}

int cmd_execsnoop(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&execsnoop_cmd, argc, argv, &c, make_execsnoop);
}

/* ---- opensnoop ----------------------------------------------------------- */

static const struct opt opensnoop_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT(OPT_FAILED, 'x', "failed", OPT_NO_ARG, NULL, "only failed opens"),
	OPT(OPT_NAME, 'n', "name", OPT_ARG, "NAME", "only processes whose name contains NAME"),
	OPT(OPT_TIMESTAMPS, 'T', "timestamp", OPT_NO_ARG, NULL,
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

const struct opt_cmd opensnoop_cmd = {
	.name = "opensnoop",
	.summary = "one line per open: PID COMM FD ERR PATH",
	.synopsis = TOOL_SYNOPSIS("opensnoop",
	"One line per open, openat and openat2, as BCC's opensnoop prints it.  The\n"
	"path is read from the copy of the caller's stack taken at the call, or\n"
	"from the file a literal path lies in; one on the heap shows as its address."),
	.opts = opensnoop_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_opensnoop(struct tool_cli *c)
{
	return opensnoop_new(&c->open);
}

int cmd_opensnoop(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&opensnoop_cmd, argc, argv, &c, make_opensnoop);
}

/* ---- syscount ------------------------------------------------------------ */

static const struct opt syscount_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(tool_interval_opts),
	OPT(OPT_LATENCY, 'L', "latency", OPT_NO_ARG, NULL,
	  "total and average time in each syscall"),
	OPT(OPT_PER_PROCESS, 'P', "process", OPT_NO_ARG, NULL, "by process, not by syscall"),
	OPT(OPT_TOP, 'T', "top", OPT_ARG, "N", "print the N largest rows (default 10)"),
	OPT_END,
};

const struct opt_cmd syscount_cmd = {
	.name = "syscount",
	.summary = "syscalls by count and time, per syscall or process",
	.synopsis = TOOL_SYNOPSIS("syscount",
	"Syscalls by count, as BCC's syscount prints them, the names from the\n"
	"kernel's table for this machine's arch.  With -L, the time from each\n"
	"entry to its exit; calls whose entry or exit was not seen are counted\n"
	"apart, never timed."),
	.opts = syscount_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_syscount(struct tool_cli *c)
{
	return syscount_new(&c->sys);
}

int cmd_syscount(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&syscount_cmd, argc, argv, &c, make_syscount);
}

/* ---- exitsnoop ----------------------------------------------------------- */

static const struct opt exitsnoop_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT(OPT_FAILED, 'x', "failed", OPT_NO_ARG, NULL, "only exits with a code or a signal"),
	OPT(OPT_THREADS, 0, "per-thread", OPT_NO_ARG, NULL, "every thread's exit, not only processes'"),
	OPT_END,
};

const struct opt_cmd exitsnoop_cmd = {
	.name = "exitsnoop",
	.summary = "one line per exit: its age and code, or the signal",
	.synopsis = TOOL_SYNOPSIS("exitsnoop",
	"One line per process exit, as BCC's exitsnoop prints it: name, pid, parent,\n"
	"thread, age (from the fork, when the recording saw it) and the exit code,\n"
	"or the signal that killed it."),
	.opts = exitsnoop_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_exitsnoop(struct tool_cli *c)
{
	return exitsnoop_new(&c->exit);
}

int cmd_exitsnoop(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&exitsnoop_cmd, argc, argv, &c, make_exitsnoop);
}

/* ---- cpudist ------------------------------------------------------------- */

static const struct opt cpudist_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(tool_interval_opts),
	OPT(OPT_OFFCPU, 'O', "offcpu", OPT_NO_ARG, NULL, "off-CPU lengths instead"),
	OPT(OPT_PER_PROCESS, 'P', "pids", OPT_NO_ARG, NULL, "a histogram per process"),
	OPT(OPT_MILLIS, 'm', "milliseconds", OPT_NO_ARG, NULL, "in milliseconds, not microseconds"),
	OPT_END,
};

const struct opt_cmd cpudist_cmd = {
	.name = "cpudist",
	.summary = "histograms of on-CPU (or off-CPU) run lengths",
	.synopsis = TOOL_SYNOPSIS("cpudist",
	"How long threads run each time they get a CPU, as BCC's cpudist shows\n"
	"it: a log2 histogram, from context-switch records."),
	.opts = cpudist_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_cpudist(struct tool_cli *c)
{
	return cpudist_new(&c->dist);
}

int cmd_cpudist(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&cpudist_cmd, argc, argv, &c, make_cpudist);
}

/* ---- softirqs, hardirqs -------------------------------------------------- */

static const struct opt irqs_opts[] = {
	OPT_INCLUDE(tool_target_opts_no_c),
	OPT_INCLUDE(tool_interval_opts),
	OPT(OPT_DIST, 'd', "dist", OPT_NO_ARG, NULL, "a histogram of durations for each"),
	OPT(OPT_COUNTS, 'C', "count-only", OPT_NO_ARG, NULL, "how many times, not how long"),
	OPT_END,
};

const struct opt_cmd softirqs_cmd = {
	.name = "softirqs",
	.summary = "time in soft interrupts, by vector",
	.synopsis = TOOL_SYNOPSIS("softirqs",
	"Time spent in soft interrupts, by vector (timer, net_rx, rcu...), as BCC's\n"
	"softirqs shows it, from softirq_entry to softirq_exit on each CPU.  -C is\n"
	"--count-only, as in BCC: CPUs are chosen with --cpu."),
	.opts = irqs_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

const struct opt_cmd hardirqs_cmd = {
	.name = "hardirqs",
	.summary = "time in hardware interrupt handlers, by handler",
	.synopsis = TOOL_SYNOPSIS("hardirqs",
	"Time spent in hardware interrupt handlers, by handler name, as BCC's\n"
	"hardirqs shows it, from irq_handler_entry to irq_handler_exit.  The\n"
	"local timer and IPIs have no handler events and are not counted.  -C is\n"
	"--count-only, as in BCC: CPUs are chosen with --cpu."),
	.opts = irqs_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_softirqs(struct tool_cli *c)
{
	return irqs_new(&c->irqs);
}

static struct tool *make_hardirqs(struct tool_cli *c)
{
	c->irqs.hard = true;
	return irqs_new(&c->irqs);
}

int cmd_softirqs(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&softirqs_cmd, argc, argv, &c, make_softirqs);
}

int cmd_hardirqs(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&hardirqs_cmd, argc, argv, &c, make_hardirqs);
}

/* ---- funccount ----------------------------------------------------------- */

static const struct opt funccount_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(tool_interval_opts),
	OPT(OPT_PER_PROCESS, 'P', "per-process", OPT_NO_ARG, NULL, "a count per process"),
	OPT_END,
};

const struct opt_cmd funccount_cmd = {
	.name = "funccount",
	.summary = "count hits of tracepoints and user functions (uprobes)",
	.synopsis =
	"usage: ember funccount [-a | -p PIDS | -C LIST] [--duration SECS] [-o FILE]\n"
	"       [options] PATTERN [-- command [args]]\n"
	"       ember funccount -i FILE [options]\n"
	"\n"
	"Counts every hit of the events PATTERN names, as BCC's funccount does:\n"
	"tracepoints (sched:sched_switch, t:syscalls:sys_enter_*; globs), user\n"
	"functions u:PATH:SYMBOL and their returns ur:PATH:SYMBOL (a library by\n"
	"short name: u:libc:malloc).  Uprobes are opened through the uprobe PMU and\n"
	"go away with the tool.  Offline: 'ember record --tool funccount -e PATTERN\n"
	"-o FILE', then 'ember funccount -i FILE'.\n"
	"\n",
	.opts = funccount_opts,
	/* Options after PATTERN too, as BCC takes them; a command after --. */
	.one = parse_one,
};

/* PATTERN, then an optional "-- command": BCC's "t:" prefix is dropped. */
static int pattern_operands(const char *cmd, struct tool_cli *c, int argc, char **argv)
{
	if (optind < argc && strcmp(argv[optind], "--")) {
		const char *p = argv[optind++];
		VEC_PUSH(&c->tg.events, strncmp(p, "t:", 2) ? p : p + 2);
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (!c->tg.input && !c->tg.events.n) {
		cmd_error(cmd, "give a PATTERN: u:libc:malloc, sched:sched_switch ...");
		return EXIT_USAGE;
	}
	if (c->tg.input && c->tg.events.n) {
		cmd_error(cmd, "-i FILE counts the events the file has: leave out PATTERN");
		return EXIT_USAGE;
	}
	return -1;
}

static struct tool *make_funccount(struct tool_cli *c)
{
	return funccount_new(&c->func);
}

/* funccount and stackcount: options anywhere, PATTERN, a command after --. */
static int run_pattern_tool(const struct opt_cmd *cmd, int argc, char **argv,
			    struct tool *(*make)(struct tool_cli *c))
{
	struct tool_cli c = {0};
	int rc = opt_parse(cmd, argc, argv, &c);
	if (rc < 0)
		rc = pattern_operands(cmd->name, &c, argc, argv);
	if (rc >= 0) {
		tool_target_free(&c.tg);
		return rc;
	}
	c.argc = argc;
	return run_tool(cmd, 0, argv, &c, make);
}

int cmd_funccount(int argc, char **argv)
{
	return run_pattern_tool(&funccount_cmd, argc, argv, make_funccount);
}

/* ---- stackcount ---------------------------------------------------------- */

static const struct opt stackcount_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(tool_interval_opts),
	OPT(OPT_FOLDED, 'f', "folded", OPT_NO_ARG, NULL, "folded lines (process;root;...;leaf N)"),
	OPT(OPT_FLAME, 0, "flame", OPT_ARG, "FILE.svg", "a flame graph of the stacks into FILE.svg"),
	OPT_END,
};

const struct opt_cmd stackcount_cmd = {
	.name = "stackcount",
	.summary = "the stacks that led to tracepoints or user functions, counted",
	.synopsis =
	"usage: ember stackcount [-a | -p PIDS | -C LIST] [--duration SECS] [-o FILE]\n"
	"       [options] PATTERN [-- command [args]]\n"
	"       ember stackcount -i FILE [options]\n"
	"\n"
	"Counts the call stacks of every hit of the events PATTERN names (as\n"
	"funccount takes them), as BCC's stackcount does: each unique stack of a\n"
	"process, leaf first, with its count; --folded or --flame for the whole.\n"
	"Call chains are frame-pointer walks (user code built without frame\n"
	"pointers shows short stacks).  Offline: 'ember record --tool stackcount\n"
	"-e PATTERN -o FILE', then 'ember stackcount -i FILE'.\n"
	"\n",
	.opts = stackcount_opts,
	.one = parse_one,
};

static struct tool *make_stackcount(struct tool_cli *c)
{
	return stackcount_new(&c->stack);
}

int cmd_stackcount(int argc, char **argv)
{
	return run_pattern_tool(&stackcount_cmd, argc, argv, make_stackcount);
}

/* ---- oomkill, drsnoop ---------------------------------------------------- */

static const struct opt plain_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_END,
};

const struct opt_cmd oomkill_cmd = {
	.name = "oomkill",
	.summary = "one line per OOM kill: victim, pages, the task that triggered it",
	.synopsis = TOOL_SYNOPSIS("oomkill",
	"One line per OOM kill, as BCC's oomkill prints it: the recording time, the\n"
	"task whose allocation ran the OOM killer, the victim and its resident pages."),
	.opts = plain_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

const struct opt_cmd drsnoop_cmd = {
	.name = "drsnoop",
	.summary = "direct reclaim stalls: COMM PID LAT(ms) PAGES",
	.synopsis = TOOL_SYNOPSIS("drsnoop",
	"One line per direct reclaim a task stalled in, as BCC's drsnoop prints it,\n"
	"with the pages reclaimed; reclaims of a memory cgroup over its limit too\n"
	"(KIND memcg)."),
	.opts = plain_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_oomkill(struct tool_cli *c)
{
	(void)c;
	return oomkill_new();
}

static struct tool *make_drsnoop(struct tool_cli *c)
{
	(void)c;
	return drsnoop_new();
}

int cmd_oomkill(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&oomkill_cmd, argc, argv, &c, make_oomkill);
}

int cmd_drsnoop(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&drsnoop_cmd, argc, argv, &c, make_drsnoop);
}

/* ---- writeback ----------------------------------------------------------- */

static const struct opt writeback_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(tool_interval_opts),
	OPT_END,
};

const struct opt_cmd writeback_cmd = {
	.name = "writeback",
	.summary = "writeback work by reason: count, pages, durations",
	.synopsis = TOOL_SYNOPSIS("writeback",
	"The kernel's writeback work, from each writeback_start to its\n"
	"writeback_written, summed by reason (background, periodic, sync...):\n"
	"how many, the pages written and how long they took; per --interval."),
	.opts = writeback_opts,
	.stop_at_operand = true,
	.one = parse_one,
};

static struct tool *make_writeback(struct tool_cli *c)
{
	(void)c;
	return writeback_new();
}

int cmd_writeback(int argc, char **argv)
{
	struct tool_cli c = {0};
	return run_tool(&writeback_cmd, argc, argv, &c, make_writeback);
}
