/* cmd-export.c - `ember export`: a recording's samples (or its off-CPU
 * time) as a profile other tools read: pprof's gzipped profile.proto
 * (go tool pprof, Pyroscope, Parca) or speedscope's JSON. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "export/export.h"

#define CMD "export"

enum format { FMT_PPROF, FMT_SPEEDSCOPE };

struct args {
	struct rp_opts rp;
	struct ex_profile_opts ex;
	enum format format;
	bool format_set;
	const char *out;
};

#define A(f) offsetof(struct args, f)

static int parse_format(void *field, const char *arg)
{
	struct args *a = field;
	if (!strcmp(arg, "pprof"))
		a->format = FMT_PPROF;
	else if (!strcmp(arg, "speedscope"))
		a->format = FMT_SPEEDSCOPE;
	else {
		err_set("bad --format '%s' (expected pprof or speedscope)", arg);
		return -1;
	}
	a->format_set = true;
	return 0;
}

static const struct opt options[] = {
	OPT_CALLBACK('f', "format", OPT_ARG, 0, "FMT",
	  "pprof (gzipped profile.proto) or speedscope (JSON)", parse_format),
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_STRING('o', "output", A(out), "FILE", "write here (default: standard output)"),
	OPT_STRING('e', "event", A(ex.event), "NAME",
	  "the event whose samples are exported (default the\n"
	  "first one sampled; names as report's headers show them)"),
	OPT_SET(0, "off-cpu", A(ex.kind), EX_OFFCPU, 0,
	  "export off-CPU time (ns blocked, by switch-out stack)\n"
	  "of a 'record --off-cpu' file instead of samples"),
	OPT_BOOL(0, "labels", A(ex.labels),
	  "pprof: label each sample with its pid, tid and comm"),
	OPT_BOOL(0, "per-process", A(ex.per_process),
	  "speedscope: a profile per process, not per thread"),
	OPT_INCLUDE_AT(rp_view_opts, A(rp)),
	OPT_END,
};

const struct opt_cmd export_cmd = {
	.name = CMD,
	.summary = "write a profile for pprof or speedscope",
	.synopsis =
	"usage: ember export --format pprof|speedscope [-i FILE] [-o OUT] [options]\n"
	"\n"
	"Writes the recording's samples as a profile other tools read: pprof's\n"
	"gzipped profile.proto (go tool pprof, Grafana Pyroscope, Parca) or\n"
	"speedscope's JSON file format.  Frames are resolved as report resolves\n"
	"them (--call-graph dwarf files unwound, inline frames included).\n"
	"\n",
	.opts = options,
	.notes =
	"pprof's sample types are samples/count and, for cpu-clock and task-clock,\n"
	"cpu/nanoseconds (the samples' periods); other events give EVENT/count,\n"
	"--off-cpu intervals/count and off-cpu/nanoseconds.  One mapping per file\n"
	"with its build-id; a location's lines are its inline chain, innermost\n"
	"first.  speedscope's weights are in the same unit (\"none\" for counts).\n",
};

/* The wall-clock time of the recording's start: its end is the file's
 * modification time (now for a stream), its length the samples' span. */
static void set_time(struct ex_profile *p, const char *input, u64 first, u64 last)
{
	u64 duration = last > first ? last - first : 0;
	struct stat st;
	u64 end;
	if (strcmp(input, "-") && stat(input, &st) == 0)
		end = (u64)st.st_mtim.tv_sec * 1000000000ULL + (u64)st.st_mtim.tv_nsec;
	else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		end = (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
	}
	ex_profile_set_time(p, end > duration ? end - duration : 0, duration);
}

/* Samples: the replay feeds the profile (ex_sink).  The exit status. */
static int run_samples(struct args *a, struct ex_profile **p, struct replay **r)
{
	*r = rp_open(&a->rp);
	if (!*r) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	if (!rp_has_callchains(*r))
		cmd_warn(CMD, "%s has no callchains (record with -g); stacks are one frame deep",
			 a->rp.input);
	rp_set_callchains(*r, true);
	a->ex.rp = *r;
	*p = ex_profile_new(&a->ex);
	struct rp_sink sink = ex_sink(*p);
	int rc = rp_run(*r, &sink);
	if (rc < 0)
		cmd_error(CMD, "%s", err_msg());
	const struct rp_summary *sum = rp_summary(*r);
	rp_warn_summary(CMD, sum, a->rp.input);
	return rc < 0 || sum->input_error ? EXIT_RUNTIME : EXIT_OK;
}

/* What the user should hear of the samples taken and left out; the exit
 * status (a named event with no samples fails). */
static int say_event(const struct args *a, const struct ex_profile *p, int rc)
{
	if (ex_profile_event(p)) {
		if (ex_profile_skipped(p))
			cmd_warn(CMD, "exported only %s samples; %llu samples of other events "
				 "left out (choose one with --event)", ex_profile_event(p),
				 (unsigned long long)ex_profile_skipped(p));
		return rc;
	}
	/* Samples there were, but the filters kept none: an empty profile is
	 * the right answer, not a missing event. */
	if (rp_filter_used(&a->rp.filter) && rp_summary(a->ex.rp)->samples) {
		if (rc == EXIT_OK)
			cmd_warn(CMD, "no sample of %s passes the filters: the profile is empty",
				 a->rp.input);
		return rc;
	}
	if (a->ex.event) {
		cmd_error(CMD, "%s has no samples of event '%s' (its events are the section "
			  "names of 'ember report -i %s')", a->rp.input, a->ex.event, a->rp.input);
		return EXIT_RUNTIME;
	}
	if (rc == EXIT_OK)
		cmd_warn(CMD, "%s has no samples: the profile is empty", a->rp.input);
	return rc;
}

/* --off-cpu: offcpu_run's aggregates, each a stack of its thread. */
static int run_offcpu(struct args *a, struct ex_profile **p, struct offcpu **oc,
		      struct replay **r)
{
	/* The frames keep their files: each location gets its mapping
	 * (file and build-id), as the samples' do. */
	struct offcpu_opts o = { .keep_files = true };
	struct sched_tp tp;
	struct offcpu_notes notes = { 0 };
	int rc = offcpu_run(&a->rp, &o, &tp, oc, r, &notes);
	int status = offcpu_say_run(CMD, a->rp.input, rc, &notes);   /* says the error */
	if (!*oc || !notes.ran)
		return EXIT_RUNTIME;
	a->ex.rp = *r;
	*p = ex_profile_new(&a->ex);
	for (size_t i = 0; i < offcpu_naggs(*oc); i++) {
		const struct oc_agg *g = offcpu_agg(*oc, i);
		u32 n = 0;
		const struct rp_frame *f = g->stack == OC_NONE ? NULL : offcpu_stack(*oc, g->stack, &n);
		struct ex_stack st = { f, (int)n, g->pid, g->tid, g->comm, NULL, g->count,
				       g->total_ns, 0 };
		ex_profile_add_stack(*p, &st);
	}
	return status;
}

/* Where the profile goes: standard output, or OUT written as a temporary
 * file beside it (made before the replay, so a bad path fails at once)
 * and renamed over OUT once complete. */
struct output {
	FILE *f;
	char *tmp;                  /* NULL for standard output */
};

static int open_output(const struct args *a, struct output *o)
{
	o->f = stdout;
	o->tmp = NULL;
	if (!a->out || !strcmp(a->out, "-"))
		return 0;
	o->tmp = xasprintf("%s.XXXXXX", a->out);
	int fd = mkstemp(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		cmd_error(CMD, "cannot write %s: %m (give -o a path in a writable folder)", a->out);
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	fchmod(fd, 0644);
	return 0;
}

/* Ends the output: OUT renamed into place when ok, else removed. */
static int close_output(const struct args *a, struct output *o, bool ok)
{
	if (!o->tmp)
		return 0;
	int rc = fclose(o->f);
	if (ok && rc != 0)
		cmd_error(CMD, "writing %s failed: %m", a->out);
	if (ok && rc == 0 && rename(o->tmp, a->out) != 0) {
		cmd_error(CMD, "cannot write %s: %m", a->out);
		rc = -1;
	}
	if (!ok || rc != 0)
		unlink(o->tmp);
	free(o->tmp);
	return ok && rc == 0 ? 0 : -1;
}

static int write_profile(const struct args *a, const struct ex_profile *p, FILE *out)
{
	int rc = a->format == FMT_PPROF ? ex_pprof_write(p, out)
					: ex_speedscope_write(p, a->rp.input, out);
	if (rc < 0) {
		cmd_error(CMD, "%s: %s", a->out ? a->out : "standard output", err_msg());
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct args *a, int argc, char **argv)
{
	int rc = opt_parse(&export_cmd, argc, argv, a);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cmd_extra_argument(CMD, CMD, argv[optind]);
	if (!a->format_set) {
		cmd_error(CMD, "which format? give --format pprof or --format speedscope");
		return EXIT_USAGE;
	}
	bool to_stdout = !a->out || !strcmp(a->out, "-");
	if (a->format == FMT_PPROF && to_stdout && isatty(1)) {
		cmd_error(CMD, "pprof is gzipped binary: give -o FILE (e.g. -o cpu.pb.gz) "
			  "or redirect standard output");
		return EXIT_USAGE;
	}
	if (a->ex.per_process && a->format != FMT_SPEEDSCOPE)
		cmd_warn(CMD, "--per-process is speedscope's; pprof keeps threads apart with --labels");
	if (a->ex.labels && a->format != FMT_PPROF)
		cmd_warn(CMD, "--labels is pprof's; speedscope has a profile per thread");
	if (a->ex.event && a->ex.kind == EX_OFFCPU) {
		cmd_error(CMD, "--event and --off-cpu exclude each other: pick one");
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_export(int argc, char **argv)
{
	struct args a = { .format = FMT_PPROF };
	rp_opts_init(&a.rp);
	int rc = parse_args(&a, argc, argv);
	if (rc >= 0) {
		rp_opts_free(&a.rp);
		return rc;
	}
	struct output out;
	if (open_output(&a, &out) < 0) {
		rp_opts_free(&a.rp);
		return EXIT_RUNTIME;
	}
	rp_progress_if_tty(&a.rp);
	struct ex_profile *p = NULL;
	struct replay *r = NULL;
	struct offcpu *oc = NULL;
	u64 first = 0, last = 0;
	if (a.ex.kind == EX_OFFCPU) {
		rc = run_offcpu(&a, &p, &oc, &r);
		if (oc) {
			first = offcpu_stats(oc)->first_time;
			last = offcpu_stats(oc)->last_time;
		}
	} else {
		rc = run_samples(&a, &p, &r);
		if (p) {
			rc = say_event(&a, p, rc);
			ex_profile_span(p, &first, &last);
		}
	}
	/* A partial input still gives what came before it. */
	bool written = false;
	if (p && (rc == EXIT_OK || ex_profile_samples(p))) {
		set_time(p, a.rp.input, first, last);
		int w = write_profile(&a, p, out.f);
		written = w == EXIT_OK;
		if (w != EXIT_OK)
			rc = w;
	}
	if (close_output(&a, &out, written) < 0 && written)
		rc = EXIT_RUNTIME;
	ex_profile_free(p);
	offcpu_free(oc);
	rp_close(r);
	rp_opts_free(&a.rp);
	return rc;
}
