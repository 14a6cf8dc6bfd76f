/* cmd-offcpu.c - `ember offcpu`: where threads blocked and for how long, by
 * stack (like offcputime), optionally joined with their wakers (like
 * offwaketime), as a table, folded stacks or a flame graph. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "live/live.h"
#include "views/sched/sched.h"

#define CMD "offcpu"

enum view { VIEW_TABLE, VIEW_FOLDED, VIEW_FLAME, VIEW_THREADS };

struct args {
	struct rp_opts rp;
	struct offcpu_opts oc;
	enum view view;
	const char *flame_out, *title;
	struct live_view lv;       /* a target: record while it runs */
	struct replay *r;          /* the replay, for each interval's live line */
	u64 intervals;             /* --interval: printed so far */
	bool done, failed;         /* --count reached; a view could not print */
};

#define A(f) offsetof(struct args, f)

static int parse_us(const char *opt, const char *arg, u64 *ns)
{
	u64 us;
	if (parse_u64(arg, &us) < 0 || us > UINT64_MAX / 1000) {
		err_set("bad %s '%s' (microseconds, e.g. 1000)", opt, arg);
		return -1;
	}
	*ns = us * 1000;
	return 0;
}

static int set_min_us(void *field, const char *arg)
{
	return parse_us("--min-us", arg, field);
}

static int set_max_us(void *field, const char *arg)
{
	return parse_us("--max-us", arg, field);
}

static int set_state(void *field, const char *arg)
{
	if (!*arg || strspn(arg, "RSDTtXZPI") != strlen(arg)) {
		err_set("bad --state '%s' (letters of R S D T t X Z P I, e.g. SD)", arg);
		return -1;
	}
	*(const char **)field = arg;
	return 0;
}

/* --flame FILE: the view and its file (one of the exclusive views). */
static int set_flame(void *field, const char *arg)
{
	struct args *a = field;
	a->flame_out = arg;
	a->view = VIEW_FLAME;
	return 0;
}

static int check_args(struct args *a)
{
	if (a->lv.opts.interval > 0 && (a->view == VIEW_FLAME || a->view == VIEW_THREADS)) {
		cmd_error(CMD, "--interval is for the table and --folded");
		return EXIT_USAGE;
	}
	if (a->lv.opts.count && !(a->lv.opts.interval > 0)) {
		cmd_error(CMD, "--count counts intervals: add --interval SECS");
		return EXIT_USAGE;
	}
	if (a->oc.user_only && a->oc.kernel_only) {
		cmd_error(CMD, "--user-stacks-only and --kernel-stacks-only: pick one");
		return EXIT_USAGE;
	}
	if (a->oc.max_ns && a->oc.max_ns < a->oc.min_ns) {
		cmd_error(CMD, "--max-us is below --min-us: nothing could be shown");
		return EXIT_USAGE;
	}
	return -1;
}

static const struct opt options[] = {
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_SET(0, "folded", A(view), VIEW_FOLDED, 1, "folded stacks, microseconds as counts"),
	OPT_XCALLBACK(1, 0, "flame", OPT_ARG, 0, "FILE",
	  "an off-CPU flame graph (SVG, blue palette)", set_flame),
	OPT_STRING(0, "title", A(title), "TEXT",
	  "its title (default \"Off-CPU Time Flame Graph\")"),
	OPT_SET(0, "threads", A(view), VIEW_THREADS, 1,
	  "per thread: wall, on-CPU, off-CPU time (ms)"),
	OPT_BOOL(0, "wakers", A(oc.wakers),
	  "join each stack with its waker's (sched_wakeup; record\n"
	  "with --off-cpu=wakers for the wakers' stacks)"),
	OPT_CALLBACK(0, "min-us", OPT_ARG, A(oc.min_ns), "N",
	  "only intervals of at least N microseconds", set_min_us),
	OPT_CALLBACK(0, "max-us", OPT_ARG, A(oc.max_ns), "N",
	  "only intervals of at most N microseconds", set_max_us),
	OPT_CALLBACK(0, "state", OPT_ARG, A(oc.states), "LETTERS",
	  "only these states, e.g. S or SD", set_state),
	OPT_BOOL(0, "user-stacks-only", A(oc.user_only), "only the user part of each stack"),
	OPT_BOOL(0, "kernel-stacks-only", A(oc.kernel_only),
	  "only the kernel part of each stack"),
	OPT_INCLUDE_AT(rp_short_pid_opts, A(rp)),
	OPT_INCLUDE_AT(rp_view_opts, A(rp)),
	OPT_INCLUDE_AT(live_target_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_interval_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_stack_opts, A(lv.opts)),
	OPT_END,
};

const struct opt_cmd offcpu_cmd = {
	.name = CMD,
	.summary = "time blocked off-CPU, by stack, like offcputime",
	.synopsis =
	"usage: ember offcpu [-i FILE] [--folded | --flame OUT.svg | --threads] [options]\n"
	"\n"
	"Off-CPU time from a recording made with 'ember record --off-cpu': each\n"
	"interval runs from a thread's switch-out (the stack and state then) to its\n"
	"next switch-in, summed per unique stack.  States: S sleeping, D\n"
	"uninterruptible, R preempted (runnable), I idle, T stopped.  The filters\n"
	"pick intervals: --cpu by the CPU the thread was switched out on, --time\n"
	"clips each to the range (--min-us and --max-us take its whole length).\n"
	"--threads: per thread, WALL_MS its life in the recording (birth or start\n"
	"to exit or end) within --time; ON_MS the time seen on-CPU (switch-in or a\n"
	"sample to switch-out) on the --cpu CPUs; OFF_MS the intervals the filters\n"
	"keep; OTHER_MS the rest (unknown or filtered out).  Threads never seen\n"
	"switching or sampled are left out.  User stacks are unwound with the\n"
	"binaries' CFI while recording (a 16 KB copy a switch), whole for code\n"
	"built without frame pointers, the wakers' too; --call-graph fp (live, or\n"
	"record --off-cpu --call-graph fp) walks frame pointers instead, cheap at\n"
	"any rate of switches: the caller of a frameless libc wrapper a thread\n"
	"blocked in (read, poll...) then comes back from a stack snapshot\n"
	"(--no-leaf-fix keeps the chain as walked).\n"
	"Given a target (-a, -C, -t, -- command) it records what it needs while it\n"
	"runs and shows the result at the end (Ctrl-C, --duration, the command's\n"
	"end), or the table or folded stacks of each --interval; -p stays the\n"
	"filter, as in offcputime.  An off-CPU interval counts in the --interval\n"
	"in which it ended (the last one takes those still open).\n"
	"\n",
	.opts = options,
	.notes =
	"Intervals still open at the end are counted to the end and marked open;\n"
	"those begun before the recording are left out and counted.  A missing\n"
	"switch-in (perf_events can lose events on idle CPUs) closes the interval\n"
	"at the thread's next sign of running; such intervals are marked repaired\n"
	"and counted.\n",
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct args *a, int argc, char **argv)
{
	int rc = live_view_parse(&a->lv, opt_parse(&offcpu_cmd, argc, argv, a), argc, argv);
	return rc >= 0 ? rc : check_args(a);
}

/* ---- the run ------------------------------------------------------------- */

static int write_flame(const struct args *a, struct flame_tree *t)
{
	struct flame_svg_opts svg;
	flame_svg_opts_default(&svg);
	svg.palette = FLAME_PAL_IO;
	svg.title = a->title ? a->title : "Off-CPU Time Flame Graph";
	svg.countname = "us";
	FILE *out = fopen(a->flame_out, "w");
	if (!out) {
		cmd_error(CMD, "cannot create %s: %s", a->flame_out, strerror(errno));
		return EXIT_RUNTIME;
	}
	int rc = flame_write_svg(t, &svg, out);
	if (fclose(out) != 0 && rc == 0) {
		err_set_errno("closing the SVG");
		rc = -1;
	}
	if (rc < 0) {
		cmd_error(CMD, "%s: %s", a->flame_out, err_msg());
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int show_folded(const struct args *a, const struct offcpu *oc)
{
	struct flame_tree *t = flame_tree_new(NULL);
	int rc = offcpu_fold(oc, t, FLAME_USER, NULL) < 0 ? EXIT_RUNTIME : EXIT_OK;
	if (rc != EXIT_OK)
		cmd_error(CMD, "%s", err_msg());
	else if (a->view == VIEW_FLAME && !flame_tree_total(t, FLAME_AFTER)) {
		cmd_error(CMD, "no off-CPU time to draw (check the filters)");
		rc = EXIT_RUNTIME;
	} else if (a->view == VIEW_FLAME) {
		rc = write_flame(a, t);
	} else if (flame_write_folded(t, stdout) < 0) {
		cmd_error(CMD, "%s", err_msg());
		rc = EXIT_RUNTIME;
	}
	flame_tree_free(t);
	return rc;
}

/* Folded text and graphs have no room for the footer: say it on stderr. */
static void note_repairs(const struct offcpu *oc)
{
	const struct oc_stats *st = offcpu_stats(oc);
	if (st->repaired || st->open || st->begun_before)
		cmd_warn(CMD, "%llu intervals repaired (switch-in missing), %llu open at the "
			 "end, %llu begun before the recording (left out)",
			 (unsigned long long)st->repaired, (unsigned long long)st->open,
			 (unsigned long long)st->begun_before);
}

static int show(const struct args *a, const struct offcpu *oc)
{
	switch (a->view) {
	case VIEW_TABLE:
		if (offcpu_print_table(oc, stdout) < 0)
			break;
		return EXIT_OK;
	case VIEW_THREADS:
		if (offcpu_print_threads(oc, stdout) < 0)
			break;
		note_repairs(oc);
		return EXIT_OK;
	default:
		note_repairs(oc);
		return show_folded(a, oc);
	}
	cmd_error(CMD, "%s", err_msg());
	return EXIT_RUNTIME;
}

/* --interval: each interval's view, then what the live path lost; then
 * the aggregates begin anew. */
static int on_tick(void *ctx, struct offcpu *oc, u64 end, bool last)
{
	(void)end;
	struct args *a = ctx;
	if (a->done)
		return 0;
	if (show(a, oc) != EXIT_OK) {
		a->failed = a->done = true;   /* said */
		return 0;
	}
	offcpu_reset(oc);
	a->done = live_interval_end(stdout, a->lv.live, a->r, last, &a->intervals, a->lv.opts.count);
	return 0;
}

int cmd_offcpu(int argc, char **argv)
{
	struct args a = { .lv = { .cmd = CMD, .help = CMD, .rp = &a.rp } };
	rp_opts_init(&a.rp);
	int rc = parse_args(&a, argc, argv);
	a.rp.live_keep_threads = true;   /* the intervals keep their threads */
	if (rc < 0)
		rc = live_view_start(&a.lv, a.oc.wakers ? REC_LIVE_OFFCPU_WAKERS : REC_LIVE_OFFCPU);
	if (rc >= 0)
		goto out;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	struct live *live = a.lv.live;
	bool intervals = a.rp.interval_ns != 0;
	/* The stacks are kept as places: files no process maps can go. */
	a.rp.release_files = live != NULL;
	if (intervals) {
		a.oc.on_tick = on_tick;
		a.oc.on_tick_ctx = &a;
	}
	struct sched_tp tp = { 0 };
	struct offcpu *oc = NULL;
	struct offcpu_notes notes = { 0 };
	rc = offcpu_run(&a.rp, &a.oc, &tp, &oc, &a.r, &notes);
	rc = offcpu_say_run(CMD, a.rp.input, rc, &notes);
	if (a.failed && rc == EXIT_OK)
		rc = EXIT_RUNTIME;
	if (!intervals && oc && (rc == EXIT_OK || offcpu_naggs(oc))) {
		int src = show(&a, oc);
		if (rc == EXIT_OK)
			rc = src;
	}
	if (live && !intervals && a.r)   /* no replay when the stream never began */
		live_print_counts(stdout, live, rp_summary(a.r));
	fflush(stdout);
	offcpu_free(oc);
	rp_close(a.r);
out:
	rc = live_view_end(&a.lv, rc);
	rp_opts_free(&a.rp);
	return rc;
}
