/* cmd-tools.c - the commands of BCC's tools (execsnoop, opensnoop,
 * syscount, ...): one table of the tools, each with its options over the
 * shared target options and its help; one command runs any of them and
 * says what the run found.  The tools themselves are sinks in tools/. */
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "tools/tools.h"

/* Everything one tool's command line decides. */
struct tool_cli {
	struct tool_target tg;
	struct tool_opts o;
};

#define C(f) offsetof(struct tool_cli, f)
#define O(f) offsetof(struct tool_cli, o.f)
/* The shared groups, at their structs in tool_cli. */
#define TARGET OPT_INCLUDE_AT(tool_target_opts, C(tg))
#define INTERVALS OPT_INCLUDE_AT(live_interval_opts, C(tg.live))

/* -T N: how many rows (u32). */
static int set_top(void *field, const char *arg)
{
	u64 v;
	if (parse_u64(arg, &v) < 0 || !v || v > 1000000) {
		err_set("-T %s: give how many rows to print, e.g. -T 10", arg);
		return -1;
	}
	*(u32 *)field = (u32)v;
	return 0;
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
	TARGET,
	OPT_BOOL('x', "fails", O(failed), "include failed execs"),
	OPT_BOOL('t', "timestamp", O(timestamps),
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

static const struct opt opensnoop_opts[] = {
	TARGET,
	OPT_BOOL('x', "failed", O(failed), "only failed opens"),
	OPT_STRING('n', "name", O(name), "NAME", "only processes whose name contains NAME"),
	OPT_BOOL('T', "timestamp", O(timestamps),
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

static const struct opt statsnoop_opts[] = {
	TARGET,
	OPT_BOOL('x', "failed", O(failed), "only failed calls"),
	OPT_BOOL('t', "timestamp", O(timestamps),
	  "a TIME(s) column: seconds since the first event"),
	OPT_END,
};

static const struct opt syscount_opts[] = {
	TARGET,
	INTERVALS,
	OPT_BOOL('L', "latency", O(latency),
	  "total and average time in each syscall"),
	OPT_BOOL('P', "process", O(per_process), "by process, not by syscall"),
	OPT_CALLBACK('T', "top", OPT_ARG, O(top), "N", "print the N largest rows (default 10)",
		     set_top),
	OPT_END,
};

static const struct opt exitsnoop_opts[] = {
	TARGET,
	OPT_BOOL('x', "failed", O(failed), "only exits with a code or a signal"),
	OPT_BOOL(0, "per-thread", O(threads), "every thread's exit, not only processes'"),
	OPT_END,
};

static const struct opt cpudist_opts[] = {
	TARGET,
	INTERVALS,
	OPT_BOOL('O', "offcpu", O(offcpu), "off-CPU lengths instead"),
	OPT_BOOL('P', "pids", O(per_process), "a histogram per process"),
	OPT_BOOL('m', "milliseconds", O(millis), "in milliseconds, not microseconds"),
	OPT_END,
};

static const struct opt irqs_opts[] = {
	OPT_INCLUDE_AT(tool_target_opts_no_c, C(tg)),
	INTERVALS,
	OPT_BOOL('d', "dist", O(dist), "a histogram of durations for each"),
	OPT_BOOL('C', "count-only", O(counts), "how many times, not how long"),
	OPT_END,
};

static const struct opt funccount_opts[] = {
	TARGET,
	INTERVALS,
	OPT_BOOL('P', "per-process", O(per_process), "a count per process"),
	OPT_END,
};

static const struct opt stackcount_opts[] = {
	TARGET,
	INTERVALS,
	OPT_BOOL('f', "folded", O(folded), "folded lines (process;root;...;leaf N)"),
	OPT_SET('U', "user-stacks-only", O(stack_part), TOOL_STACKS_USER, 1,
		"the user-space frames of each stack only"),
	OPT_SET('K', "kernel-stacks-only", O(stack_part), TOOL_STACKS_KERNEL, 1,
		"the kernel frames of each stack only"),
	OPT_STRING(0, "flame", O(flame), "FILE.svg", "a flame graph of the stacks into FILE.svg"),
	OPT_INCLUDE_AT(live_stack_opts, C(tg.live)),
	OPT_END,
};

static const struct opt plain_opts[] = {
	TARGET,
	OPT_END,
};

static const struct opt writeback_opts[] = {
	TARGET,
	INTERVALS,
	OPT_END,
};

/* ---- The tools ---------------------------------------------------------- */

/* How the path tools read the paths the syscalls point at. */
#define PATHS_HOW                                                              \
	"path is fetched where the call is\n"                                  \
	"made: a uprobe at each syscall instruction of the C library and loader\n" \
	"(tracefs's uprobe_events, ember_PID/path_di and path_si, removed at the\n" \
	"end).  A program that makes its syscalls elsewhere (static, Go), or a\n" \
	"run without tracefs, gets the path from the copy of the caller's stack\n" \
	"or the file a literal lies in; a path in none shows as its address."


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
		   .opts = table, .stop_at_operand = true },                \
	  .make = mk }

/* funccount and stackcount: PATTERN, with options after it too (as BCC
 * takes them), and a command after --. */
#define PATTERN_SYNOPSIS(nm, what)                                             \
	"usage: ember " nm " [-a | -p PIDS | -C LIST] [--duration SECS] [-o FILE]\n" \
	"       [options] PATTERN [-- command [args]]\n"                      \
	"       ember " nm " -i FILE [options]\n\n" what "\n"
#define PATTERN_TOOL(nm, mk, table, sum, what)                                \
	{ .cmd = { .name = nm, .summary = sum, .synopsis = PATTERN_SYNOPSIS(nm, what), \
		   .opts = table },                                          \
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
	  PATHS_HOW),
	TOOL("statsnoop", statsnoop_new, statsnoop_opts,
	  "one line per stat: PID COMM RET ERR PATH",
	  "One line per stat, lstat, fstatat, statx and statfs, as BCC's statsnoop\n"
	  "prints it.  The " PATHS_HOW),
	TOOL("filelife", filelife_new, plain_opts,
	  "files created and deleted while tracing, with their age",
	  "Files created and deleted while tracing, as BCC's filelife shows them:\n"
	  "one line at each delete, TIME(s) (seconds since the first event), the\n"
	  "deleting process, the file's age and its path as the program gave it.\n"
	  "Syscall level, not the VFS's: a file is born at the first successful open\n"
	  "with O_CREAT (or creat) of its path seen, which may be of a file that\n"
	  "existed already, and dies at a successful unlink or unlinkat of the same\n"
	  "path; renames and links are not followed.  The " PATHS_HOW),
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
	  "User stacks are unwound with the binaries' CFI while recording, as\n"
	  "record -g does, so programs built without frame pointers show whole\n"
	  "stacks (--call-graph fp walks frame pointers instead).  Offline: 'ember\n"
	  "record --tool stackcount -e PATTERN -o FILE', then 'ember stackcount -i\n"
	  "FILE'.\n"),
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
	/* Live stacks unwound with CFI copy each hit's user stack: a storm of
	 * hits (200,000 getppid in 0.9 s) overflows the ring, frame pointers
	 * copy none (none lost there). */
	bool copies = live && t->callchains && tg->live.callgraph != REC_CG_FP;
	if (sum->lost)
		cmd_warn(t->name, "%llu events lost at the ring: the figures miss them%s",
			 (unsigned long long)sum->lost,
			 copies ? " (--call-graph fp copies no stacks)" : "");
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
