/* cmd-bio-replay.c - `ember bio --replay DEV` and `--save-plan`: the block
 * I/O of a recording (or of a plan file) issued again onto devices with
 * its recorded timing, as btrecord and btreplay do (block/btreplay/).
 * Here: the replay's options, which cmd-bio.c's table includes, and the
 * messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block/btreplay/btreplay.h"
#include "cmd/cmd-bio-internal.h"
#include "common/child.h"

#define CMD "bio"

enum { OPT_REPLAY = 0x7400, OPT_PLAN, OPT_SAVE_PLAN, OPT_FORCE, OPT_MAP };

struct bio_replay {
	const char *dest, *plan, *save;
	struct blkr_opts o;
	VEC(struct blkr_map) maps;
	bool tuned;            /* an option that only --replay uses was given */
};

const struct opt bio_replay_opts[] = {
	OPT_TEXT("Replay (btrecord, btreplay):"),
	OPT(OPT_REPLAY, 0, "replay", OPT_ARG, "DEV",
	  "issue the recording's block I/O again onto DEV: each\n"
	  "I/O as queued (sector, size, direction) at its recorded\n"
	  "time, in order per recorded CPU, one submitter each\n"
	  "(io_uring, O_DIRECT); prints the lateness and totals,\n"
	  "also when Ctrl-C, SIGTERM or SIGHUP stops it"),
	OPT(OPT_PLAN, 0, "plan", OPT_ARG, "FILE", "replay a plan file (--save-plan) instead of -i"),
	OPT(OPT_SAVE_PLAN, 0, "save-plan", OPT_ARG, "FILE",
	  "write the I/O to replay to a plan file (btrecord);\n"
	  "with --replay, replay it too"),
	OPT('W', 'W', "write", OPT_NO_ARG, NULL,
	  "issue the writes too (writing zeros); without -W reads\n"
	  "are replayed and writes counted and skipped"),
	OPT(OPT_FORCE, 0, "force", OPT_NO_ARG, NULL,
	  "write to a device that is mounted, holds a filesystem\n"
	  "or partition table, or is the one recorded"),
	OPT('x', 'x', "accel", OPT_ARG, "FACTOR", "issue at the recorded times divided by FACTOR"),
	OPT('N', 'N', "no-stall", OPT_NO_ARG, NULL, "issue as fast as possible, in order"),
	OPT('c', 'c', "submitters", OPT_ARG, "N",
	  "fold the recorded CPUs' streams onto N submitters"),
	OPT(OPT_MAP, 0, "map", OPT_ARG, "OLD=NEW",
	  "replay the I/O recorded on OLD onto NEW (NAME,\n"
	  "/dev/NAME or MAJ:MIN; once per device)"),
	OPT('I', 'I', "iterations", OPT_ARG, "N", "replay N times, one after the other"),
	OPT_END,
};

static int parse_map(struct bio_replay *b, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1]) {
		err_set("--map '%s': give OLD=NEW, e.g. --map loop0=loop1", arg);
		return -1;
	}
	char old[256];
	snprintf(old, sizeof(old), "%.*s", (int)(eq - arg), arg);
	u32 from = bio_dev_parse(old);
	if (!from) {
		err_prefix("--map '%s'", arg);
		return -1;
	}
	for (size_t i = 0; i < b->maps.n; i++)
		if (b->maps.v[i].from == from) {
			err_set("--map '%s': %s is mapped twice", arg, old);
			return -1;
		}
	VEC_PUSH(&b->maps, ((struct blkr_map){ .from = from, .to = eq + 1 }));
	return 1;
}

static int parse_count(const char *arg, u32 *out, const char *what)
{
	u64 v;
	if (parse_u64(arg, &v) < 0 || !v || v > 1000000) {
		err_set("bad %s '%s': give a count from 1 to 1000000", what, arg);
		return -1;
	}
	*out = (u32)v;
	return 1;
}

static int parse_tuning(struct bio_replay *b, int opt, const char *arg)
{
	b->tuned = true;
	switch (opt) {
	case 'W': b->o.write = true; return 1;
	case OPT_FORCE: b->o.force = true; return 1;
	case 'N': b->o.no_stall = true; return 1;
	case 'x':
		if (parse_double(arg, &b->o.factor) < 0 || !(b->o.factor > 0) || b->o.factor > 1e6) {
			err_set("bad -x '%s': give a speed-up factor above 0, e.g. -x 2", arg);
			return -1;
		}
		return 1;
	case 'c': return parse_count(arg, &b->o.submitters, "-c");
	case 'I': return parse_count(arg, &b->o.iterations, "-I");
	case OPT_MAP: return parse_map(b, arg);
	default: return 0;
	}
}

int bio_replay_parse(struct bio_replay **bp, int opt, const char *arg)
{
	if (opt != OPT_REPLAY && opt != OPT_PLAN && opt != OPT_SAVE_PLAN && opt != 'W' &&
	    opt != OPT_FORCE && opt != 'N' && opt != 'x' && opt != 'c' && opt != 'I' &&
	    opt != OPT_MAP)
		return 0;
	if (!*bp)
		*bp = xcalloc(1, sizeof(**bp));
	struct bio_replay *b = *bp;
	switch (opt) {
	case OPT_REPLAY: b->dest = arg; return 1;
	case OPT_PLAN: b->plan = arg; return 1;
	case OPT_SAVE_PLAN: b->save = arg; return 1;
	default: return parse_tuning(b, opt, arg);
	}
}

int bio_replay_check(const struct bio_replay *b, bool input_set, bool other_view)
{
	if (!b)
		return -1;
	const char *why = NULL;
	if (b->tuned && !b->dest)
		why = "-W, --force, -x, -N, -c, --map and -I shape a replay: add --replay DEV";
	else if (!b->dest && !b->save)
		why = "--plan FILE is replayed: add --replay DEV, or --save-plan FILE to rewrite it";
	else if (b->plan && input_set)
		why = "-i and --plan: replay a recording or a plan, not both";
	else if (other_view)
		why = "--replay and --save-plan replace the views, the live target and --interval: "
		      "drop those";
	else if (b->o.no_stall && b->o.factor > 0)
		why = "-N and -x: issue as fast as possible or at a speed-up, not both";
	if (!why)
		return -1;
	cmd_error(CMD, "%s", why);
	return EXIT_USAGE;
}

void bio_replay_free(struct bio_replay *b)
{
	if (!b)
		return;
	VEC_FREE(&b->maps);
	free(b);
}

/* ---- the plan ---------------------------------------------------------------------- */

/* The recording's I/Os through the bio library, then the plan of them. */
static int plan_of_recording(struct blkr_plan *p, const struct rp_opts *rp,
			     const struct bio_view_opts *v)
{
	struct bio_data d = { 0 };
	struct bio_load_opts lo = { .rp = rp };
	int rc = bio_load(&d, &lo);
	if (d.warning[0])
		cmd_warn(CMD, "%s", d.warning);
	if (rc == 0 && d.replayed)
		rp_warn_view(CMD, &d.summary, rp->input, "some I/Os may be missing from the replay");
	if (rc == 0) {
		struct bio_view_opts vo = *v;
		vo.filter = &rp->filter;
		struct blkr_extract_opts eo = { .v = &vo };
		rc = blkr_plan_from_bio(p, d.bt, &eo);
		if (rc < 0)
			err_prefix("%s", rp->input);
	}
	bio_data_free(&d);
	return rc;
}

static void count_dirs(const struct blkr_plan *p, u64 *reads, u64 *writes)
{
	*reads = *writes = 0;
	for (u32 s = 0; s < p->nstreams; s++)
		for (u64 i = 0; i < p->streams[s].n; i++)
			*(p->streams[s].ios[i].write ? writes : reads) += 1;
}

static void print_plan(const struct blkr_plan *p, const char *verb, const char *where)
{
	u64 r, w, span = blkr_plan_span(p);
	count_dirs(p, &r, &w);
	printf("%s %llu I/Os (%llu reads, %llu writes) of %u device%s, queued on %u CPU%s "
	       "over %llu.%03llu s%s%s\n", verb, (unsigned long long)(r + w),
	       (unsigned long long)r, (unsigned long long)w, p->ndevs, p->ndevs == 1 ? "" : "s",
	       p->nstreams, p->nstreams == 1 ? "" : "s", (unsigned long long)(span / 1000000000),
	       (unsigned long long)(span % 1000000000 / 1000000), where ? " " : "",
	       where ? where : "");
	if (p->left_out)
		printf("left out: %llu I/Os neither read nor write (discards, flushes)\n",
		       (unsigned long long)p->left_out);
}

/* ---- the replay --------------------------------------------------------------------- */

static void print_ms(const char *name, u64 ns, const char *sep)
{
	printf("%s %llu.%03llu ms%s", name, (unsigned long long)(ns / 1000000),
	       (unsigned long long)(ns % 1000000 / 1000), sep);
}

static void print_result(const struct bio_replay *b, const struct blkr_result *res)
{
	printf("replayed: %llu I/Os (%llu reads, %llu writes), %llu bytes in %llu.%03llu s, "
	       "%u submitter%s, %u iteration%s\n",
	       (unsigned long long)(res->reads + res->writes), (unsigned long long)res->reads,
	       (unsigned long long)res->writes, (unsigned long long)res->bytes,
	       (unsigned long long)(res->elapsed / 1000000000),
	       (unsigned long long)(res->elapsed % 1000000000 / 1000000), res->submitters,
	       res->submitters == 1 ? "" : "s", b->o.iterations ? b->o.iterations : 1,
	       b->o.iterations > 1 ? "s" : "");
	if (res->writes_skipped)
		printf("writes skipped: %llu (replay them with -W)\n",
		       (unsigned long long)res->writes_skipped);
	if (b->o.no_stall) {
		printf("lateness: not measured (-N issues each I/O as soon as it can)\n");
	} else {
		print_ms("lateness: p50", res->late_p50, ",");
		print_ms(" p99", res->late_p99, ",");
		print_ms(" max", res->late_max, "\n");
	}
}

/* The replay under the stop handlers (SIGINT, SIGTERM, SIGHUP): a stop
 * ends the issuing, the I/Os in flight complete, and the totals say what
 * was written before we end by that signal, as record does. */
static int replay(struct bio_replay *b, const struct blkr_plan *p)
{
	b->o.dest = b->dest;
	b->o.maps = b->maps.v;
	b->o.nmaps = b->maps.n;
	struct stop_handlers h;
	b->o.stop = stop_install(&h, false);
	bool usage;
	struct blkr_replay *r = blkr_prepare(p, &b->o, &usage);
	if (!r) {
		stop_restore(&h);
		cmd_error(CMD, "%s", err_msg());
		return usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	char where[300];
	snprintf(where, sizeof(where), "onto %s%s", blkr_target_path(r, 0),
		 b->maps.n > 1 ? " and others" : "");
	print_plan(p, "replaying", where);
	fflush(stdout);
	struct blkr_result res;
	int rc = blkr_run(r, &res);
	blkr_free(r);   /* the submitters joined: no thread is left to take a signal */
	stop_restore(&h);
	print_result(b, &res);
	if (rc < 0)
		cmd_error(CMD, "the replay stopped: %s", err_msg());
	if (res.errors)
		cmd_error(CMD, "%llu I/Os failed; the first: %s", (unsigned long long)res.errors,
			  res.first_error);
	int sig = stop_signal();
	if (res.stopped && sig) {
		u64 done = res.reads + res.writes + res.errors + res.writes_skipped;
		cmd_error(CMD, "stopped by SIG%s after %llu of the plan's %llu I/Os", sigabbrev_np(sig),
			  (unsigned long long)done, (unsigned long long)res.planned);
		cmd_die_of(sig);
	}
	return rc < 0 || res.errors ? EXIT_RUNTIME : EXIT_OK;
}

/* A plan file keeps each I/O's sector, size and time offset by CPU, not
 * who queued it nor when: the filters pick a recording's I/Os, not a
 * plan's, and are refused with one.  -1 to go on, or the exit status. */
static int plan_refuses(const struct bio_replay *b, const struct rp_opts *rp,
			const struct bio_view_opts *v)
{
	if (!b->plan)
		return -1;
	if (rp_filter_refuse(&rp->filter, 0, "a plan file (--plan)") < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_USAGE;
	}
	if (v->dev) {
		cmd_error(CMD, "-d: a plan file (--plan) holds the I/Os it was saved with; "
			  "leave -d out (--map picks where each device's go)");
		return EXIT_USAGE;
	}
	return -1;
}

int bio_replay_cmd(struct bio_replay *b, const struct rp_opts *rp, const struct bio_view_opts *v)
{
	int refused = plan_refuses(b, rp, v);
	if (refused >= 0)
		return refused;
	struct blkr_plan p;
	int rc = b->plan ? blkr_plan_load(&p, b->plan) : plan_of_recording(&p, rp, v);
	if (rc < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	if (b->save) {
		if (blkr_plan_save(&p, b->save) < 0) {
			cmd_error(CMD, "%s", err_msg());
			blkr_plan_free(&p);
			return EXIT_RUNTIME;
		}
		char where[300];
		snprintf(where, sizeof(where), "to %s", b->save);
		print_plan(&p, "plan: wrote", where);
	}
	rc = b->dest ? replay(b, &p) : EXIT_OK;
	blkr_plan_free(&p);
	return rc;
}
