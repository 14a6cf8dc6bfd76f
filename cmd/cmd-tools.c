/* cmd-tools.c - the commands of BCC's tools (execsnoop, opensnoop,
 * syscount, ...): one table of the tools, each with its options over the
 * shared target options and its help; one command runs any of them and
 * says what the run found.  The tools themselves are sinks in tools/. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "tools/tools.h"

/* Everything one tool's command line decides. */
struct tool_cli {
	struct tool_target tg;
	struct tool_opts o;
};

enum {
	OPT_FAILED = TOOL_OPT_OWN, OPT_TIMESTAMPS, OPT_NAME, OPT_LATENCY, OPT_PER_PROCESS,
	OPT_TOP, OPT_THREADS, OPT_OFFCPU, OPT_MILLIS, OPT_DIST, OPT_COUNTS, OPT_FOLDED, OPT_FLAME,
};

static int parse_own(struct tool_opts *o, int id, const char *arg)
{
	u64 v;
	switch (id) {
	case OPT_FAILED: o->failed = true; return 1;
	case OPT_TIMESTAMPS: o->timestamps = true; return 1;
	case OPT_NAME: o->name = arg; return 1;
	case OPT_LATENCY: o->latency = true; return 1;
	case OPT_PER_PROCESS: o->per_process = true; return 1;
	case OPT_TOP:
		if (parse_u64(arg, &v) < 0 || !v || v > 1000000) {
			err_set("-T %s: give how many rows to print, e.g. -T 10", arg);
			return -1;
		}
		o->top = (u32)v;
		return 1;
	case OPT_THREADS: o->threads = true; return 1;
	case OPT_OFFCPU: o->offcpu = true; return 1;
	case OPT_MILLIS: o->millis = true; return 1;
	case OPT_DIST: o->dist = true; return 1;
	case OPT_COUNTS: o->counts = true; return 1;
	case OPT_FOLDED: o->folded = true; return 1;
	case OPT_FLAME: o->flame = arg; return 1;
	default: return 0;
	}
}

static int parse_one(void *ctx, int id, const char *arg)
{
	struct tool_cli *c = ctx;
	int rc = tool_parse_target(&c->tg, id, arg);
	return rc ? rc : parse_own(&c->o, id, arg);
}

#define TOOL_SYNOPSIS(name, what)                                              \
	"usage: ember " name " [-i FILE | [-a | -p PIDS | -C LIST] [--duration SECS]\n" \
	"       [-o FILE] [-- command [args]]] [options]\n\n" what "\n"            \
	"Live on the whole system by default (-a), on processes (-p), CPUs (-C)\n" \
	"or a command; or offline on a recording made with\n"                  \
	"'ember record --tool " name " [targets] -o FILE', where -p and -C\n"  \
	"pick the events of those processes and CPUs.\n\n"

/* ---- Each tool's own options ------------------------------------------ */

static const struct opt execsnoop_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT(OPT_FAILED, 'x', "fails", OPT_NO_ARG, NULL, "include failed execs"),
	OPT(OPT_TIMESTAMPS, 't', "timestamp", OPT_NO_ARG, NULL,
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

static const struct opt opensnoop_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT(OPT_FAILED, 'x', "failed", OPT_NO_ARG, NULL, "only failed opens"),
	OPT(OPT_NAME, 'n', "name", OPT_ARG, "NAME", "only processes whose name contains NAME"),
	OPT(OPT_TIMESTAMPS, 'T', "timestamp", OPT_NO_ARG, NULL,
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

static const struct opt syscount_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(live_interval_opts),
	OPT(OPT_LATENCY, 'L', "latency", OPT_NO_ARG, NULL,
	  "total and average time in each syscall"),
	OPT(OPT_PER_PROCESS, 'P', "process", OPT_NO_ARG, NULL, "by process, not by syscall"),
	OPT(OPT_TOP, 'T', "top", OPT_ARG, "N", "print the N largest rows (default 10)"),
	OPT_END,
};

static const struct opt exitsnoop_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT(OPT_FAILED, 'x', "failed", OPT_NO_ARG, NULL, "only exits with a code or a signal"),
	OPT(OPT_THREADS, 0, "per-thread", OPT_NO_ARG, NULL, "every thread's exit, not only processes'"),
	OPT_END,
};

static const struct opt cpudist_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(live_interval_opts),
	OPT(OPT_OFFCPU, 'O', "offcpu", OPT_NO_ARG, NULL, "off-CPU lengths instead"),
	OPT(OPT_PER_PROCESS, 'P', "pids", OPT_NO_ARG, NULL, "a histogram per process"),
	OPT(OPT_MILLIS, 'm', "milliseconds", OPT_NO_ARG, NULL, "in milliseconds, not microseconds"),
	OPT_END,
};

static const struct opt irqs_opts[] = {
	OPT_INCLUDE(tool_target_opts_no_c),
	OPT_INCLUDE(live_interval_opts),
	OPT(OPT_DIST, 'd', "dist", OPT_NO_ARG, NULL, "a histogram of durations for each"),
	OPT(OPT_COUNTS, 'C', "count-only", OPT_NO_ARG, NULL, "how many times, not how long"),
	OPT_END,
};

static const struct opt funccount_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(live_interval_opts),
	OPT(OPT_PER_PROCESS, 'P', "per-process", OPT_NO_ARG, NULL, "a count per process"),
	OPT_END,
};

static const struct opt stackcount_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(live_interval_opts),
	OPT(OPT_FOLDED, 'f', "folded", OPT_NO_ARG, NULL, "folded lines (process;root;...;leaf N)"),
	OPT(OPT_FLAME, 0, "flame", OPT_ARG, "FILE.svg", "a flame graph of the stacks into FILE.svg"),
	OPT_END,
};

static const struct opt plain_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_END,
};

static const struct opt writeback_opts[] = {
	OPT_INCLUDE(tool_target_opts),
	OPT_INCLUDE(live_interval_opts),
	OPT_END,
};

/* ---- The tools ---------------------------------------------------------- */

/* One tool's command: its option table and help, its constructor, and
 * whether it takes a PATTERN operand (funccount, stackcount). */
struct tool_cmd {
	struct opt_cmd cmd;
	struct tool *(*make)(const struct tool_opts *o);
	bool pattern;
};

/* A tool with the usual synopsis: targets, then its options. */
#define TOOL(nm, mk, table, sum, what)                                        \
	{ .cmd = { .name = nm, .summary = sum, .synopsis = TOOL_SYNOPSIS(nm, what), \
		   .opts = table, .stop_at_operand = true, .one = parse_one }, \
	  .make = mk }

/* funccount and stackcount: PATTERN, with options after it too (as BCC
 * takes them), and a command after --. */
#define PATTERN_SYNOPSIS(nm, what)                                             \
	"usage: ember " nm " [-a | -p PIDS | -C LIST] [--duration SECS] [-o FILE]\n" \
	"       [options] PATTERN [-- command [args]]\n"                      \
	"       ember " nm " -i FILE [options]\n\n" what "\n"
#define PATTERN_TOOL(nm, mk, table, sum, what)                                \
	{ .cmd = { .name = nm, .summary = sum, .synopsis = PATTERN_SYNOPSIS(nm, what), \
		   .opts = table, .one = parse_one },                         \
	  .make = mk, .pattern = true }

/* In the order 'ember --help' lists them. */
static const struct tool_cmd tools[] = {
	TOOL("execsnoop", execsnoop_new, execsnoop_opts,
	  "one line per exec: PCOMM PID PPID RET ARGS",
	  "One line per exec, as BCC's execsnoop prints it: the new program's name,\n"
	  "its pid, its parent's, the return value and the command line: for a\n"
	  "dynamic program from a uprobe at the dynamic loader's entry (tracefs's\n"
	  "uprobe_events, ember_PID/exec_args, removed at the end), else from the\n"
	  "new image's stack (the program's path and \"...\" when it is not there)."),
	TOOL("opensnoop", opensnoop_new, opensnoop_opts, "one line per open: PID COMM FD ERR PATH",
	  "One line per open, openat and openat2, as BCC's opensnoop prints it.  The\n"
	  "path is read from the copy of the caller's stack taken at the call, or\n"
	  "from the file a literal path lies in; one on the heap shows as its address."),
	TOOL("syscount", syscount_new, syscount_opts,
	  "syscalls by count and time, per syscall or process",
	  "Syscalls by count, as BCC's syscount prints them, the names from the\n"
	  "kernel's table for this machine's arch.  With -L, the time from each\n"
	  "entry to its exit; calls whose entry or exit was not seen are counted\n"
	  "apart, never timed.  Live without -L, -P, -o or a filter (--tid, --comm,\n"
	  "--time: each event's task and time), the counts come from\n"
	  "one counter per syscalls:sys_enter_* tracepoint, not from recorded\n"
	  "events: none is lost at any rate.  Syscalls without a tracepoint (the\n"
	  "ones the kernel does not implement) and 32-bit programs' calls are\n"
	  "not counted then; -L, -P and -o record raw_syscalls, which sees every call."),
	TOOL("exitsnoop", exitsnoop_new, exitsnoop_opts,
	  "one line per exit: its age and code, or the signal",
	  "One line per process exit, as BCC's exitsnoop prints it: name, pid, parent\n"
	  "(the real parent at the exit, from perf's EXIT record; a thread's is its\n"
	  "process's), thread, age (from the task's fork, when the recording saw it)\n"
	  "and the exit code, or the signal that killed it, with \", core dumped\"\n"
	  "when the parent was told so (its SIGCHLD comes after a traced task's own\n"
	  "events end: seen system-wide, -a or -C, not with -p or a command alone)."),
	TOOL("cpudist", cpudist_new, cpudist_opts, "histograms of on-CPU (or off-CPU) run lengths",
	  "How long threads run each time they get a CPU, as BCC's cpudist shows\n"
	  "it: a log2 histogram, from context-switch records."),
	TOOL("softirqs", softirqs_new, irqs_opts, "time in soft interrupts, by vector",
	  "Time spent in soft interrupts, by vector (timer, net_rx, rcu...), as BCC's\n"
	  "softirqs shows it, from softirq_entry to softirq_exit on each CPU.  -C is\n"
	  "--count-only, as in BCC: CPUs are chosen with --cpu.  An interrupt runs in\n"
	  "whatever task it interrupts: --pid, --tid and --comm are refused."),
	TOOL("hardirqs", hardirqs_new, irqs_opts, "time in hardware interrupt handlers, by handler",
	  "Time spent in hardware interrupt handlers, by handler name, as BCC's\n"
	  "hardirqs shows it, from irq_handler_entry to irq_handler_exit.  The\n"
	  "local timer and IPIs have no handler events and are not counted.  -C is\n"
	  "--count-only, as in BCC: CPUs are chosen with --cpu.  An interrupt runs in\n"
	  "whatever task it interrupts: --pid, --tid and --comm are refused."),
	PATTERN_TOOL("funccount", funccount_new, funccount_opts,
	  "count hits of tracepoints and user functions (uprobes)",
	  "Counts every hit of the events PATTERN names, as BCC's funccount does:\n"
	  "tracepoints (sched:sched_switch, t:syscalls:sys_enter_*; globs), user\n"
	  "functions u:PATH:SYMBOL and their returns ur:PATH:SYMBOL (a library by\n"
	  "short name: u:libc:malloc).  Uprobes are opened through the uprobe PMU and\n"
	  "go away with the tool.  Offline: 'ember record --tool funccount -e PATTERN\n"
	  "-o FILE', then 'ember funccount -i FILE'.\n"),
	TOOL("oomkill", oomkill_new, plain_opts,
	  "one line per OOM kill: victim, pages, the task that triggered it",
	  "One line per OOM kill, as BCC's oomkill prints it: the recording time, the\n"
	  "task whose allocation ran the OOM killer, the victim and its resident pages."),
	TOOL("drsnoop", drsnoop_new, plain_opts, "direct reclaim stalls: COMM PID LAT(ms) PAGES",
	  "One line per direct reclaim a task stalled in, as BCC's drsnoop prints it,\n"
	  "with the pages reclaimed; reclaims of a memory cgroup over its limit too\n"
	  "(KIND memcg)."),
	TOOL("writeback", writeback_new, writeback_opts,
	  "writeback work by reason: count, pages, durations",
	  "The kernel's writeback work, from each writeback_start to its\n"
	  "writeback_written, summed by reason (background, periodic, sync...):\n"
	  "how many, the pages written and how long they took; per --interval.  The\n"
	  "work runs in the kernel's flusher threads: --pid, --tid and --comm are\n"
	  "refused."),
	PATTERN_TOOL("stackcount", stackcount_new, stackcount_opts,
	  "the stacks that led to tracepoints or user functions, counted",
	  "Counts the call stacks of every hit of the events PATTERN names (as\n"
	  "funccount takes them), as BCC's stackcount does: each unique stack of a\n"
	  "process, leaf first, with its count; --folded or --flame for the whole.\n"
	  "Call chains are frame-pointer walks (user code built without frame\n"
	  "pointers shows short stacks).  Offline: 'ember record --tool stackcount\n"
	  "-e PATTERN -o FILE', then 'ember stackcount -i FILE'.\n"),
};

const struct opt_cmd *tool_command(size_t i)
{
	return i < ARRAY_SIZE(tools) ? &tools[i].cmd : NULL;
}

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

/* ---- Running a tool ---------------------------------------------------- */

/* A tool's notes as they come, as its own messages: "ember NAME: ...". */
static void say_note(const struct tool *t, const char *msg)
{
	cmd_error(t->name, "%s", msg);
}

/* After a counting run: the events not counted, the totals (without
 * --interval), the scaled counts; the exit status: the command's, else 0
 * (Ctrl-C included). */
static int say_counted(struct tool *t, const struct tool_target *tg, struct tool_counting *k,
		       const struct tool_counted *e)
{
	if (e->unopened)
		cmd_warn(t->name, "%zu of %zu events could not be counted here, %s among them (%s): "
			 "their counts are missing", e->unopened, e->nevents, e->first,
			 strerror(e->first_err));
	if (!tg->live.interval)
		tool_counting_total(k);
	if (e->scaled)
		cmd_warn(t->name, "some counters ran only part of the time (time_running < "
			 "time_enabled): their counts are scaled estimates");
	int die_sig;
	int rc = tool_counting_status(k, &die_sig);
	return die_sig ? EXIT_OK : rc;
}

/* Counting mode (tools/count.c): the exit status, or -1 when this kernel
 * lacks the counters' events (then the tool samples). */
static int run_counting(struct tool *t, const struct tool_target *tg)
{
	struct tool_counting *k = tool_counting_new(t, tg);
	if (!k) {
		cmd_warn(t->name, "cannot count: %s; sampling instead", err_msg());
		return -1;
	}
	bool usage;
	const struct tool_counted *e = tool_counting_run(k, &usage);
	int rc;
	if (!e) {
		cmd_error(t->name, "%s", err_msg());
		rc = usage ? EXIT_USAGE : EXIT_RUNTIME;
	} else {
		rc = say_counted(t, tg, k, e);
	}
	tool_counting_free(k);
	return rc;
}

/* Replays o's input (a file, or live's stream) into the tool; the exit
 * status, failures said: what was printed goes out first, then what was
 * lost. */
static int replay_tool(struct tool *t, const struct tool_target *tg, struct rp_opts *o,
		       struct live *live)
{
	struct tool_replay *x = tool_replay_open(t, tg, o, live);
	if (!x) {
		cmd_error(t->name, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	int rc = EXIT_OK;
	if (tool_replay_run(x) < 0) {
		cmd_error(t->name, "%s", err_msg());
		rc = EXIT_RUNTIME;
	}
	fflush(stdout);
	const struct rp_summary *sum = tool_replay_summary(x);
	if (sum->lost)
		cmd_warn(t->name, "%llu events lost at the ring: the figures miss them",
			 (unsigned long long)sum->lost);
	if (sum->input_error) {
		cmd_error(t->name, "%s", sum->error);
		if (!tool_replay_counted_out(x))
			rc = EXIT_RUNTIME;
	}
	tool_replay_close(x);
	return rc;
}

/* Live: the tool's events recorded on a thread of this process (live/),
 * its stream replayed as it comes; Ctrl-C, SIGTERM and SIGHUP end
 * the recording, the tool prints what it gathered and the exit is 0 (or the
 * command's status). */
static int run_live(struct tool *t, struct tool_target *tg)
{
	struct rp_opts o;
	rp_opts_init(&o);
	/* Each line as it is printed: `execsnoop > file` keeps every line
	 * the tool showed, however it ends. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	tg->live.tool = t->name;
	tg->live.events = tg->events.v;
	tg->live.nevents = tg->events.n;
	bool usage;
	struct live *l = live_start(&tg->live, REC_LIVE_TOOL, &o, &usage);
	int rc;
	if (!l) {
		cmd_error(t->name, "%s", err_msg());
		rc = usage ? EXIT_USAGE : EXIT_RUNTIME;
	} else {
		rc = replay_tool(t, tg, &o, l);
		rc = live_end(l, t->name, rc);
	}
	rp_opts_free(&o);
	return rc;
}

/* Runs tool t on the target: counting, live or offline; the exit status,
 * everything said as "ember NAME: ...". */
static int run_tool(struct tool *t, struct tool_target *tg)
{
	t->out = stdout;
	t->note = say_note;
	if (rp_filter_refuse(&tg->filter, RP_FILTER_ALL & ~t->refused, t->name) < 0) {
		cmd_error(t->name, "%s", err_msg());
		return EXIT_USAGE;
	}
	if (tool_counting_fits(t, tg)) {
		int rc = run_counting(t, tg);
		if (rc >= 0)
			return rc;
	}
	if (!tg->input)
		return run_live(t, tg);
	struct rp_opts o;
	rp_opts_init(&o);
	o.input = tg->input;
	int rc = replay_tool(t, tg, &o, NULL);
	rp_opts_free(&o);
	return rc;
}

/* Parses (for funccount and stackcount: options anywhere, PATTERN, a
 * command after --), builds the tool, runs it; the exit status. */
int cmd_tool(int argc, char **argv)
{
	const struct tool_cmd *tc = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(tools) && !tc; i++)
		if (!strcmp(argv[0], tools[i].cmd.name))
			tc = &tools[i];
	if (!tc) {
		fprintf(stderr, "ember: no tool named '%s' (see 'ember --help')\n", argv[0]);
		return EXIT_USAGE;
	}
	struct tool_cli c = {0};
	int rc = opt_parse(&tc->cmd, argc, argv, &c);
	if (rc < 0 && tc->pattern)
		rc = pattern_operands(tc->cmd.name, &c, argc, argv);
	if (rc < 0)
		rc = tool_finish_target(tc->cmd.name, &c.tg, argc, argv);
	if (rc < 0) {
		struct tool *t = tc->make(&c.o);
		rc = run_tool(t, &c.tg);
		tool_free(t);
	}
	tool_target_free(&c.tg);
	return rc;
}
