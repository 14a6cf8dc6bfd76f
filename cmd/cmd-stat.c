/* cmd-stat.c - the `ember stat` command: reads the options, picks the
 * events and targets, runs the count (run.c) once or -r times and prints
 * counts, metrics or the --ipc/--tlb table; the only printing part. */
#include <getopt.h>
#include <numa.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/child.h"
#include "pmc/stat/stat.h"

#define CMD "stat"

enum { OPT_DURATION = 256 };

enum metric_set { SET_NONE, SET_IPC, SET_TLB };

struct cli {
	struct pmc_list events;
	bool system_wide;
	int *cpus, ncpus;
	pid_t *pids, *tids;
	int npids, ntids;
	char **command;
	double interval_ms, duration;
	int repeat;
	const char *sep, *output;
	bool json;
	enum pmc_agg agg;
	enum metric_set set;
	/* Filled when the target is known. */
	char **thread_names;
	int *node_of;
	const struct pmc_cpu_table *table;
	enum pmc_tslot slot_of[PMC_T_NSLOTS];   /* event index -> role */
	FILE *out;
	bool header_done;
	unsigned long ticks_printed;   /* -I intervals shown so far */
};

static int parse_positive(const char *opt, const char *arg, double *out)
{
	if (parse_double(arg, out) < 0 || !(*out > 0))
		return cmd_bad(CMD, "give a positive number", "%s %s", opt, arg);
	return 0;
}

static int parse_repeat(struct cli *cl, const char *arg)
{
	if (parse_int(arg, &cl->repeat) < 0 || cl->repeat < 1)
		return cmd_bad(CMD, "give a number of runs, 1 or more", "-r %s", arg);
	return 0;
}

static int parse_targets(struct cli *cl, int c, const char *arg)
{
	int rc;
	if (c == 'C')
		rc = parse_cpu_list(arg, cpus_possible(), &cl->cpus, &cl->ncpus);
	else if (c == 'p')
		rc = parse_pid_list(arg, &cl->pids, &cl->npids);
	else
		rc = parse_pid_list(arg, &cl->tids, &cl->ntids);
	if (rc < 0)
		cmd_error(CMD, "-%c %s: %s", c, arg, err_msg());
	return rc;
}

#define A(f) offsetof(struct cli, f)

/* The options that print their own message: 0, or -1 after printing why. */
static int parse_option(struct cli *cl, int c, const char *arg)
{
	switch (c) {
	case 'e': return cmd_said(CMD, pmc_parse(&cl->events, arg));
	case 'C': case 'p': case 't': return parse_targets(cl, c, arg);
	case 'I': return parse_positive("-I", arg, &cl->interval_ms);
	case 'r': return parse_repeat(cl, arg);
	case OPT_DURATION:
		return parse_positive("--duration", arg, &cl->duration);
	default: return 0;
	}
}

static int parse_one(void *ctx, int c, const char *arg)
{
	return parse_option(ctx, c, arg) < 0 ? -2 : 1;
}

static const struct opt options[] = {
	OPT('e', 'e', "event", OPT_ARG, "EVENTS",
	  "events to count (repeatable; {a,b} groups are\n"
	  "read together); default: task-clock,\n"
	  "context-switches, cpu-migrations, page-faults,\n"
	  "cycles, instructions, branches, branch-misses"),
	OPT_BOOL('a', "all-cpus", A(system_wide), "system-wide, on every CPU"),
	OPT('C', 'C', "cpu", OPT_ARG, "LIST", "system-wide on these CPUs (0-3,6)"),
	OPT('p', 'p', "pid", OPT_ARG, "PIDS", "these processes (all their threads)"),
	OPT('t', 't', "tid", OPT_ARG, "TIDS", "these threads"),
	OPT('I', 'I', "interval-print", OPT_ARG, "MS", "print the counts every MS milliseconds"),
	OPT('r', 'r', "repeat", OPT_ARG, "N", "run the command N times: mean and +- stddev"),
	OPT_STRING('x', "field-separator", A(sep), "SEP", "CSV output"),
	OPT_BOOL(0, "json", A(json), "JSON output, one object per line"),
	OPT_SET('A', "per-cpu", A(agg), PMC_AGG_CPU, 0, "a row per CPU (with -a or -C)"),
	OPT_SET(0, "per-node", A(agg), PMC_AGG_NODE, 0, "a row per NUMA node (with -a or -C)"),
	OPT_SET(0, "per-thread", A(agg), PMC_AGG_THREAD, 0, "a row per thread (with -p or -t)"),
	OPT(OPT_DURATION, 0, "duration", OPT_ARG, "SECS", "stop after SECS seconds"),
	OPT_SET(0, "ipc", A(set), SET_IPC, 0, "K_CYCLES, K_INSTR and IPC (needs a hardware PMU)"),
	OPT_SET(0, "tlb", A(set), SET_TLB, 0, "tlbstat columns: walks, walk cycles, DTLB% ITLB%"),
	OPT_STRING('o', "output", A(output), "FILE", "write the counts to FILE (default: stderr)"),
	OPT_END,
};

const struct opt_cmd stat_cmd = {
	.name = CMD,
	.summary = "count events with derived metrics, like perf stat",
	.synopsis =
	"usage: ember stat [options] [-- command [args]]\n"
	"\n"
	"Counts events while a command runs (or for -p/-t tasks, or system-wide\n"
	"with -a/-C) and prints the counts with derived metrics, like perf stat.\n"
	"\n",
	.opts = options,
	.column = 25,
	.stop_at_operand = true,
	.one = parse_one,
};

/* Combinations perf refuses too, each with the way out. */
static int check_cli(struct cli *cl)
{
	bool cpu_wide = cl->system_wide || cl->cpus;
	if (cl->pids && cl->tids)
		return cmd_bad(CMD, "give one of them", "-p and -t");
	if ((cl->pids || cl->tids) && (cl->command || cpu_wide))
		return cmd_bad(CMD, "count either running tasks, a command or CPUs",
			       "-p/-t with a command or -a/-C");
	if (!cl->pids && !cl->tids && !cl->command && !cpu_wide)
		return cmd_bad(CMD, "give a command (ember stat -- CMD), -p, -t, -a or -C",
			       "nothing to count");
	if (cl->repeat > 1 && !cl->command)
		return cmd_bad(CMD, "-r repeats a command", "-r without a command");
	if (cl->repeat > 1 && cl->interval_ms > 0)
		return cmd_bad(CMD, "use one of them", "-r with -I");
	if (cl->interval_ms > 0 && cl->interval_ms < 10)
		return cmd_bad(CMD, "give -I 10 or more", "-I below 10 ms");
	if ((cl->agg == PMC_AGG_CPU || cl->agg == PMC_AGG_NODE) && !cpu_wide)
		return cmd_bad(CMD, "per-CPU counts need system-wide counting",
			       "-A/--per-node without -a or -C");
	if (cl->agg == PMC_AGG_THREAD && !cl->pids && !cl->tids)
		return cmd_bad(CMD, "give the process or threads to split",
			       "--per-thread without -p or -t");
	if (cl->sep && cl->json)
		return cmd_bad(CMD, "pick one output format", "-x with --json");
	if (cl->set != SET_NONE && cl->events.n)
		return cmd_bad(CMD, "the metric set picks its events",
			       "--ipc/--tlb with -e");
	if (cl->set != SET_NONE && cl->agg != PMC_AGG_GLOBAL)
		return cmd_bad(CMD, "the table has one row per interval",
			       "--ipc/--tlb with a per-CPU/node/thread split");
	if (cl->set != SET_NONE && cl->repeat > 1)
		return cmd_bad(CMD, "use -I for a series", "--ipc/--tlb with -r");
	/* Looked up as exec will, so a typo is a usage error, as in record. */
	return cl->command ? cmd_said(CMD, child_command_check(cl->command[0])) : 0;
}

/* -1 to go on, or the exit status to stop with. */
static int parse_cli(struct cli *cl, int argc, char **argv)
{
	cl->repeat = 1;
	int rc = opt_parse(&stat_cmd, argc, argv, cl);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		cl->command = argv + optind;
	return check_cli(cl) < 0 ? EXIT_USAGE : -1;
}

/* ---- events ------------------------------------------------------------ */

static const char default_events[] =
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,"
	"instructions,branches,branch-misses";

/* The --ipc or --tlb events of this CPU; -1 after printing why not. */
static int metric_set_events(struct cli *cl)
{
	const char *opt = cl->set == SET_IPC ? "--ipc" : "--tlb";
	if (!pmc_have_hw_pmu()) {
		cmd_error(CMD, "%s: this machine has no hardware PMU (cycles "
			  "cannot be counted, e.g. a VM without a virtual PMU): "
			  "run it on bare metal or a VM with PMU passthrough", opt);
		return -1;
	}
	struct pmc_cpuid id;
	if (pmc_cpuid_read(&id) < 0 || !(cl->table = pmc_table_for(&id))) {
		cmd_error(CMD, "%s: %s", opt, err_msg());
		return -1;
	}
	int last = cl->set == SET_IPC ? PMC_T_INSTR : PMC_T_NSLOTS - 1;
	for (int s = 0; s <= last; s++) {
		const struct pmc_raw_event *e = &cl->table->ev[s];
		if (!e->name)
			continue;
		cl->slot_of[cl->events.n] = (enum pmc_tslot)s;
		pmc_list_add_raw(&cl->events, e->config, e->name);
	}
	return 0;
}

static int pick_events(struct cli *cl)
{
	if (cl->set != SET_NONE)
		return metric_set_events(cl);
	if (cl->events.n)
		return 0;
	if (pmc_parse(&cl->events, default_events) < 0) {
		cmd_error(CMD, "default events: %s", err_msg());
		return -1;
	}
	return 0;
}

/* ---- targets ----------------------------------------------------------- */

static int add_tasks_of(pid_t pid, pid_t **tids, int *n)
{
	if (pmc_tasks_of(pid, tids, n) == 0)
		return 0;
	cmd_error(CMD, "-p %d: no such process: check the pid", (int)pid);
	return -1;
}

static char *thread_name(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	char *comm = read_text_file(path, NULL);
	if (comm)
		comm[strcspn(comm, "\n")] = '\0';
	char *name = xasprintf("%s-%d", comm ? comm : "?", (int)tid);
	free(comm);
	return name;
}

/* -p becomes the threads of each process; -a every online CPU. */
static int resolve_targets(struct cli *cl)
{
	for (int i = 0; i < cl->npids; i++)
		if (add_tasks_of(cl->pids[i], &cl->tids, &cl->ntids) < 0)
			return -1;
	if (cl->system_wide && !cl->cpus && (cl->ncpus = cpus_online(&cl->cpus)) < 0) {
		cmd_error(CMD, "-a: %s", err_msg());
		return -1;
	}
	for (int i = 0; !cl->pids && i < cl->ntids; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d", (int)cl->tids[i]);
		if (access(path, F_OK) < 0) {
			cmd_error(CMD, "-t %d: no such thread: check the tid",
				  (int)cl->tids[i]);
			return -1;
		}
	}
	if (cl->tids) {
		cl->thread_names = xcalloc((size_t)cl->ntids, sizeof(char *));
		for (int i = 0; i < cl->ntids; i++)
			cl->thread_names[i] = thread_name(cl->tids[i]);
	}
	if (cl->cpus) {
		bool numa = numa_available() >= 0;
		cl->node_of = xcalloc((size_t)cl->ncpus, sizeof(int));
		for (int i = 0; i < cl->ncpus; i++)
			cl->node_of[i] = numa ? MAX(0, numa_node_of_cpu(cl->cpus[i])) : 0;
	}
	return 0;
}

/* ---- printing ---------------------------------------------------------- */

static enum pmc_out_mode out_mode(const struct cli *cl)
{
	return cl->json ? PMC_OUT_JSON : cl->sep ? PMC_OUT_CSV : PMC_OUT_TEXT;
}

static struct pmc_view view_of(const struct cli *cl, int ncpus, int ntids)
{
	struct pmc_view v = {
		.events = &cl->events, .agg = cl->agg,
		.ncpus = ncpus, .ntids = ntids,
		.cpus = cl->cpus, .node_of = cl->node_of,
		.thread_names = cl->thread_names,
		.mode = out_mode(cl), .sep = cl->sep ? cl->sep : ",",
	};
	return v;
}

static void emit(struct cli *cl, struct strbuf *sb)
{
	if (sb->len)
		fwrite(sb->s, 1, sb->len, cl->out);
	fflush(cl->out);
	sb_reset(sb);
}

/* The --ipc/--tlb row: every counter summed, then the columns. */
static void tlb_row(const struct cli *cl, const struct pmc_reading *slots,
		    int ncpus, int ntids, const int *err, struct pmc_tlb_row *row)
{
	double v[PMC_T_NSLOTS] = {0};
	bool have[PMC_T_NSLOTS] = {0};
	size_t per = (size_t)ncpus * (size_t)ntids;
	for (size_t e = 0; e < cl->events.n; e++) {
		struct pmc_reading sum = {0};
		for (size_t k = 0; k < per; k++)
			pmc_reading_add(&sum, &slots[e * per + k]);
		enum pmc_tslot s = cl->slot_of[e];
		have[s] = !err[e];
		v[s] = pmc_scaled(&sum);
	}
	pmc_tlb_compute(v, have, row);
}

static const char *agg_title(enum pmc_agg a)
{
	return a == PMC_AGG_CPU ? "CPU" : a == PMC_AGG_NODE ? "node"
				: a == PMC_AGG_THREAD ? "thread" : NULL;
}

/* perf repeats its interval header every 25 intervals so a long series
 * stays readable on a terminal; CSV and JSON carry it once or never. */
#define HEADER_EVERY 25

static bool header_due(const struct cli *cl, bool interval)
{
	bool text = out_mode(cl) == PMC_OUT_TEXT;
	if (interval && text)
		return cl->ticks_printed % HEADER_EVERY == 0;
	if (cl->set == SET_NONE)
		return false;
	/* The --ipc/--tlb table: its column names once in CSV/JSON. */
	return !cl->header_done || (text && !interval);
}

static void print_counts(struct cli *cl, const struct pmc_reading *slots,
			 int ncpus, int ntids, const int *err, bool interval,
			 double ts, double wall_ns)
{
	struct strbuf sb = {0};
	bool header = header_due(cl, interval);
	if (cl->set != SET_NONE) {
		struct pmc_tlb_row row;
		tlb_row(cl, slots, ncpus, ntids, err, &row);
		if (header)
			pmc_format_tlb_header(&sb, out_mode(cl), cl->sep,
					      cl->set == SET_IPC, interval);
		pmc_format_tlb_row(&sb, out_mode(cl), cl->sep, &row,
				   cl->set == SET_IPC, interval, ts);
	} else {
		struct pmc_view v = view_of(cl, ncpus, ntids);
		struct pmc_rows rows;
		pmc_rows_build(&v, slots, err, &rows);
		if (header)
			pmc_format_interval_header(&sb, agg_title(cl->agg));
		pmc_rows_format(&sb, &v, &rows, NULL, interval, ts, wall_ns);
		pmc_rows_free(&rows);
	}
	cl->header_done = true;
	cl->ticks_printed += interval;
	emit(cl, &sb);
	free(sb.s);
}

static void on_tick(void *ctx, double ts, double span_ns,
		    const struct pmc_reading *delta, const struct pmc_counters *c)
{
	/* The wall time of an interval is the interval itself. */
	print_counts(ctx, delta, c->ncpus, c->ntids, c->err, true, ts, span_ns);
}

static void describe_target(const struct cli *cl, struct strbuf *sb)
{
	if (cl->system_wide) {
		sb_puts(sb, "'system wide'");
	} else if (cl->command) {
		sb_puts(sb, "'");
		for (char **a = cl->command; *a; a++)
			sb_printf(sb, "%s%s", a == cl->command ? "" : " ", *a);
		sb_puts(sb, "'");
	} else if (cl->cpus) {
		sb_puts(sb, "'CPU(s)");
		for (int i = 0; i < cl->ncpus; i++)
			sb_printf(sb, "%s%d", i ? "," : " ", cl->cpus[i]);
		sb_puts(sb, "'");
	} else {
		const pid_t *ids = cl->pids ? cl->pids : cl->tids;
		int n = cl->pids ? cl->npids : cl->ntids;
		sb_printf(sb, "%s id '", cl->pids ? "process" : "thread");
		for (int i = 0; i < n; i++)
			sb_printf(sb, "%s%d", i ? "," : "", (int)ids[i]);
		sb_puts(sb, "'");
	}
}

static void print_header(struct cli *cl)
{
	struct strbuf sb = {0};
	sb_puts(&sb, "\n Performance counter stats for ");
	describe_target(cl, &sb);
	if (cl->repeat > 1)
		sb_printf(&sb, " (%d runs)", cl->repeat);
	sb_puts(&sb, ":\n\n");
	emit(cl, &sb);
	free(sb.s);
}

static double tv_sec(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void print_footer(struct cli *cl, const struct pmc_stats *wall,
			 const struct pmc_run_result *last)
{
	fputs("\n", cl->out);
	if (cl->repeat > 1)
		fprintf(cl->out, "%18.6f +- %.6f seconds time elapsed  ( +- %5.2f%% )\n",
			wall->mean / 1e9, pmc_stats_stddev_mean(wall) / 1e9,
			pmc_stats_rel_pct(wall));
	else
		fprintf(cl->out, "%18.9f seconds time elapsed\n", wall->mean / 1e9);
	if (last->end.ran && cl->repeat == 1)
		fprintf(cl->out, "\n%18.9f seconds user\n%18.9f seconds sys\n",
			tv_sec(last->ru.ru_utime), tv_sec(last->ru.ru_stime));
	fputs("\n", cl->out);
}

/* ---- running ----------------------------------------------------------- */

static struct pmc_run_opts run_opts(struct cli *cl, volatile sig_atomic_t *stop)
{
	struct pmc_run_opts o = {
		.events = &cl->events,
		.target = {
			.cpus = cl->cpus, .ncpus = cl->ncpus,
			.tids = cl->cpus ? NULL : cl->tids, .ntids = cl->ntids,
			.inherit = cl->pids != NULL,
		},
		.command = cl->command,
		.watch = cl->pids ? cl->pids : cl->tids,
		.nwatch = cl->pids ? cl->npids : cl->ntids,
		.watch_threads = !cl->pids,
		.interval_ms = cl->interval_ms,
		.duration_s = cl->duration,
		.stop = stop,
		.tick = on_tick,
		.ctx = cl,
	};
	return o;
}

/* Prints the totals of the last run, or the means of all runs. */
static void print_final(struct cli *cl, const struct pmc_run_result *r,
			struct pmc_stats *stats, const struct pmc_stats *wall)
{
	bool text = out_mode(cl) == PMC_OUT_TEXT;
	if (text && cl->set == SET_NONE)
		print_header(cl);
	if (cl->repeat > 1) {
		struct pmc_view v = view_of(cl, r->ncpus, r->ntids);
		struct pmc_rows rows;
		struct strbuf sb = {0};
		pmc_rows_build(&v, r->total, r->err, &rows);
		pmc_rows_format(&sb, &v, &rows, stats, false, 0, wall->mean);
		pmc_rows_free(&rows);
		emit(cl, &sb);
		free(sb.s);
	} else {
		print_counts(cl, r->total, r->ncpus, r->ntids, r->err, false, 0,
			     r->wall_ns);
	}
	if (text && cl->set == SET_NONE)
		print_footer(cl, wall, r);
}

/* Why some --tlb columns show '-', under the table. */
static void print_note(struct cli *cl)
{
	if (out_mode(cl) == PMC_OUT_TEXT && cl->set == SET_TLB && cl->table &&
	    cl->table->note)
		fprintf(cl->out, "- : %s (%s)\n", cl->table->note, cl->table->name);
}

/* Runs the count once or -r times and prints.  -1, with how the last
 * command ended in *end, or EXIT_RUNTIME after printing why. */
static int run_all(struct cli *cl, volatile sig_atomic_t *stop, struct child_end *end)
{
	struct pmc_run_opts o = run_opts(cl, stop);
	struct pmc_run_result r = {0};
	struct pmc_stats wall = {0}, *stats = NULL;
	for (int i = 0; i < cl->repeat && !*stop; i++) {
		pmc_run_result_free(&r);
		if (pmc_run(&o, &r) < 0) {
			cmd_error(CMD, "%s", err_msg());
			pmc_run_result_free(&r);
			free(stats);
			return EXIT_RUNTIME;
		}
		pmc_stats_add(&wall, r.wall_ns);
		struct pmc_view v = view_of(cl, r.ncpus, r.ntids);
		struct pmc_rows rows;
		pmc_rows_build(&v, r.total, r.err, &rows);
		if (!stats)
			stats = xcalloc(rows.nrows * (rows.nev ? rows.nev : 1),
					sizeof(*stats));
		pmc_rows_add_stats(&rows, stats);
		pmc_rows_free(&rows);
		*end = r.end;
	}
	/* With -I the intervals were the output, as in perf. */
	if (r.total && cl->interval_ms == 0)
		print_final(cl, &r, stats, &wall);
	print_note(cl);
	pmc_run_result_free(&r);
	free(stats);
	return -1;
}

static void free_cli(struct cli *cl)
{
	pmc_list_free(&cl->events);
	free(cl->cpus);
	free(cl->pids);
	free(cl->tids);
	free(cl->node_of);
	for (int i = 0; cl->thread_names && i < cl->ntids; i++)
		free(cl->thread_names[i]);
	free(cl->thread_names);
	if (cl->out && cl->out != stderr)
		fclose(cl->out);
}

static int open_output(struct cli *cl)
{
	cl->out = stderr;
	if (!cl->output)
		return 0;
	cl->out = fopen(cl->output, "w");
	if (!cl->out) {
		cmd_error(CMD, "-o %s: cannot create it: %m", cl->output);
		return -1;
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct cli cl = {0};
	int rc = EXIT_USAGE, die_sig = 0;
	int parsed = parse_cli(&cl, argc, argv);
	if (parsed >= 0) {
		rc = parsed;
		goto out;
	}
	/* A pid or tid that does not exist is bad input, as in record. */
	if (resolve_targets(&cl) < 0)
		goto out;
	rc = EXIT_RUNTIME;
	if (pick_events(&cl) < 0 || open_output(&cl) < 0)
		goto out;
	/* Ctrl-C and SIGTERM end the count (the command gets SIGINT too);
	 * as perf, we end by that signal once the counts are printed. */
	struct stop_handlers h;
	struct child_end end = {0};
	rc = run_all(&cl, stop_install(&h, false), &end);
	stop_restore(&h);
	if (rc < 0)
		rc = stop_exit_status(&end, &die_sig);
out:
	free_cli(&cl);
	if (die_sig)
		cmd_die_of(die_sig);
	return rc;
}
