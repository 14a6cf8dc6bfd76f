/* cmd-flame.c - `ember flame`: an interactive SVG flame graph straight from
 * a recording (through the replay, no text in between), from folded text,
 * or from two profiles as a differential graph. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "views/collapse/collapse.h"
#include "views/sched/sched.h"

struct flame_args {
	struct rp_opts rp;
	struct collapse_opts c;
	struct flame_svg_opts svg;
	struct flame_tree_opts tree;
	const char *folded, *before, *after, *output;
	bool countname_set;
	bool wall, colors_set;
	int argc;                   /* for --diff's second value */
	char **argv;
	struct collapse_args ca;    /* &c, &rp: collapse's options */
};

#define A(f) offsetof(struct flame_args, f)

static int set_countname(void *field, const char *arg)
{
	struct flame_args *a = field;
	a->svg.countname = arg;
	a->countname_set = true;
	return 0;
}

static int set_colors(void *field, const char *arg)
{
	struct flame_args *a = field;
	a->colors_set = true;
	return flame_palette_parse(arg, &a->svg.palette);
}

static int set_minwidth(void *field, const char *arg)
{
	struct flame_svg_opts *svg = field;
	return flame_minwidth_parse(arg, &svg->minwidth, &svg->minwidth_percent);
}

/* --diff takes two values: the second is the next argument. */
static int take_diff(void *field, const char *arg)
{
	struct flame_args *a = field;
	if (optind >= a->argc) {
		err_set("--diff needs two files: --diff BEFORE AFTER");
		return -1;
	}
	a->before = arg;
	a->after = a->argv[optind++];
	return 0;
}

static const struct opt options[] = {
	OPT_TEXT("Input (one of):"),
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_STRING(0, "folded", A(folded), "FILE",
	  "folded stacks (\"a;b;c 42\" lines, from ember collapse or\n"
	  "any stackcollapse tool); - for stdin"),
	OPT_BOOL(0, "wall", A(wall),
	  "wall-clock time from an 'ember record --off-cpu -F HZ'\n"
	  "file: CPU samples (by period) and off-CPU intervals\n"
	  "in microseconds, off-CPU frames in aqua, so each\n"
	  "thread's total is its wall time (--tid: per thread)"),
	OPT_CALLBACK(0, "diff", OPT_ARG, 0, "BEFORE AFTER",
	  "differential graph: widths from AFTER, red where a\n"
	  "frame's share grew, blue where it shrank, deeper for\n"
	  "larger changes; each a data file or folded text", take_diff),
	OPT_TEXT("Output:"),
	OPT_STRING('o', "output", A(output), "FILE", "the SVG (default flame.svg; - for stdout)"),
	OPT_STRING(0, "title", A(svg.title), "TEXT", "the title"),
	OPT_STRING(0, "subtitle", A(svg.subtitle), "TEXT", "a line under the title"),
	OPT_INT(0, "width", A(svg.width), "PX", "image width (default 1200)", 100, 100000,
		"bad --width '%s' (pixels, 100 to 100000)"),
	OPT_INT(0, "height", A(svg.frame_height), "PX", "height of one frame (default 16)", 4, 1000,
		"bad --height '%s' (pixels per frame, 4 to 1000)"),
	OPT_CALLBACK(0, "minwidth", OPT_ARG, A(svg), "W",
	  "drop frames narrower than W pixels, or W% of the\n"
	  "width with a % sign (default 0.1)", set_minwidth),
	OPT_CALLBACK(0, "countname", OPT_ARG, 0, "WORD",
	  "what counts are (default samples; weight with\n"
	  "--weight period)", set_countname),
	OPT_CALLBACK(0, "colors", OPT_ARG, 0, "PALETTE",
	  "hot (default), io or blue (off-CPU), mem or green,\n"
	  "annotate (kernel orange, JIT green, inlined aqua,\n"
	  "user hot)", set_colors),
	OPT_BOOL(0, "hash", A(svg.hash),
	  "colour by name only: the same function gets the same\n"
	  "colour in every graph"),
	OPT_BOOL(0, "inverted", A(svg.inverted), "icicle graph: roots at the top"),
	OPT_BOOL(0, "reverse", A(tree.reverse),
	  "merge stacks from the leaves (callers of each leaf)"),
	OPT_BOOL(0, "negate", A(svg.negate),
	  "with --diff: widths from BEFORE, so frames that\n"
	  "vanished show (colours keep their meaning)"),
	OPT_TEXT("From a data file, as ember collapse:"),
	OPT_INCLUDE_AT(collapse_options, A(ca)),
	OPT_INCLUDE_AT(collapse_rp_options, A(rp)),
	OPT_END,
};

const struct opt_cmd flame_cmd = {
	.name = "flame",
	.summary = "write an interactive SVG flame graph",
	.synopsis =
	"usage: ember flame [-i FILE | --folded FILE|- | --diff BEFORE AFTER] [-o OUT] [options]\n"
	"\n"
	"Writes one self-contained SVG (no network, no external script): hover shows\n"
	"a frame's count and share, a click zooms (Reset Zoom restores), Search or\n"
	"Ctrl-F highlights frames by regular expression and shows their share.\n"
	"Opening OUT?s=REGEX searches and OUT?zoom=NAME zooms on load.\n"
	"\n",
	.opts = options,
	.notes =
	"Frames are sorted by name at each level, so the same input gives the same\n"
	"bytes.  Frames dropped by --minwidth leave their share as a gap at the right\n"
	"of their parent.\n",
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct flame_args *a, int argc, char **argv)
{
	a->argc = argc;
	a->argv = argv;
	a->ca = (struct collapse_args){ &a->c, &a->rp };
	int rc = opt_parse(&flame_cmd, argc, argv, a);
	if (rc >= 0)
		return rc;
	if (optind < argc) {
		cmd_error("flame", "unexpected argument '%s' (to filter by pid or tid write "
			  "--pid=LIST; see 'ember flame --help')", argv[optind]);
		return EXIT_USAGE;
	}
	if (a->wall && (a->folded || a->before)) {
		cmd_error("flame", "--wall reads a data file (-i): not with --folded or --diff");
		return EXIT_USAGE;
	}
	if (a->folded && a->before) {
		cmd_error("flame", "--folded and --diff both given: pick one input");
		return EXIT_USAGE;
	}
	return -1;
}

/* ---- Inputs ------------------------------------------------------------ */

/* perf.data files (and their pipe form) open with this magic. */
static bool is_data_file(const char *path)
{
	if (!strcmp(path, "-"))
		return false;
	FILE *f = fopen(path, "rb");
	char magic[8] = { 0 };
	if (!f)
		return false;
	size_t got = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return got == sizeof(magic) && !memcmp(magic, "PERFILE2", 8);
}

static void warn_bad_lines(const char *path, const struct flame_parse_stats *st)
{
	if (st->bad_lines)
		cmd_warn("flame", "%s: %llu malformed lines skipped (first: line %llu: %s)", path,
			 (unsigned long long)st->bad_lines, (unsigned long long)st->first_bad_line,
			 st->first_bad_why);
	if (st->saturated)
		cmd_warn("flame", "%s: counts overflowed and were capped", path);
}

static int load_folded(struct flame_tree *t, const char *path, enum flame_side side)
{
	bool std = !strcmp(path, "-");
	FILE *f = std ? stdin : fopen(path, "r");
	if (!f) {
		cmd_error("flame", "cannot open %s: %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	struct flame_parse_stats st = { 0 };
	int rc = flame_parse_file(t, f, side, &st);
	if (!std)
		fclose(f);
	if (rc < 0) {
		cmd_error("flame", "%s: %s", path, err_msg());
		return EXIT_RUNTIME;
	}
	warn_bad_lines(path, &st);
	return EXIT_OK;
}

/* --wall: the library folds; what it found is said here. */
static int load_wall(struct flame_args *a, struct flame_tree *t)
{
	struct offcpu_wall_notes wn = { 0 };
	int rc = offcpu_wall_replay(&a->rp, a->c.tid ? "tid" : a->c.pid ? "pid" : NULL, t, &wn);
	rc = offcpu_say_run("flame", a->rp.input, rc, &wn.run);
	if (wn.no_cpu_samples)
		cmd_warn("flame", "%s has no cpu-clock samples: the graph is off-CPU time only "
			 "(record with --off-cpu -F 999)", a->rp.input);
	if (wn.other_samples)
		cmd_warn("flame", "%llu samples of events that do not measure time left out",
			 (unsigned long long)wn.other_samples);
	if (wn.fold_error[0]) {
		cmd_error("flame", "%s", wn.fold_error);
		rc = EXIT_RUNTIME;
	}
	const struct oc_stats *st = &wn.stats;
	if (wn.have_stats && (st->repaired || st->open || st->begun_before))
		cmd_warn("flame", "off-CPU: %llu intervals repaired (switch-in missing), %llu "
			 "open at the end, %llu begun before the recording (left out)",
			 (unsigned long long)st->repaired, (unsigned long long)st->open,
			 (unsigned long long)st->begun_before);
	return rc;
}

static int load(struct flame_args *a, struct flame_tree *t, const char *path, bool folded,
		enum flame_side side)
{
	if (folded)
		return load_folded(t, path, side);
	a->rp.input = path;
	if (a->wall)
		return load_wall(a, t);
	struct collapse_notes notes = { 0 };
	int rc = collapse_replay(&a->rp, &a->c, t, side, &notes);
	return collapse_say("flame", a->rp.input, rc, &notes);
}

static int load_all(struct flame_args *a, struct flame_tree *t)
{
	if (a->before) {
		int rc = load(a, t, a->before, !is_data_file(a->before), FLAME_BEFORE);
		if (rc == EXIT_OK)
			rc = load(a, t, a->after, !is_data_file(a->after), FLAME_AFTER);
		if (rc == EXIT_OK && !flame_tree_total(t, FLAME_BEFORE)) {
			cmd_error("flame", "%s: no stacks to compare against", a->before);
			rc = EXIT_RUNTIME;
		}
		return rc;
	}
	if (a->folded)
		return load(a, t, a->folded, true, FLAME_AFTER);
	return load(a, t, a->rp.input, false, FLAME_AFTER);
}

/* ---- Output ------------------------------------------------------------ */

static int write_svg(struct flame_args *a, struct flame_tree *t)
{
	bool std = !strcmp(a->output, "-");
	FILE *out = std ? stdout : fopen(a->output, "w");
	if (!out) {
		cmd_error("flame", "cannot create %s: %s", a->output, strerror(errno));
		return EXIT_RUNTIME;
	}
	/* Big writes: the SVG is streamed frame by frame. */
	char *buf = std ? NULL : xmalloc(1 << 16);
	if (buf)
		setvbuf(out, buf, _IOFBF, 1 << 16);
	int rc = flame_write_svg(t, &a->svg, out);
	if (!std && fclose(out) != 0 && rc == 0) {
		err_set_errno("closing the SVG");
		rc = -1;
	}
	free(buf);
	if (rc < 0) {
		cmd_error("flame", "%s: %s", a->output, err_msg());
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Time, not samples; on-CPU warm and off-CPU aqua unless told otherwise. */
static void wall_defaults(struct flame_args *a)
{
	if (!a->countname_set)
		a->svg.countname = "us";
	if (!a->colors_set)
		a->svg.palette = FLAME_PAL_ANNOTATE;
	if (!a->svg.title)
		a->svg.title = "Wall-Clock Time Flame Graph";
}

int cmd_flame(int argc, char **argv)
{
	struct flame_args a = { .output = "flame.svg" };
	rp_opts_init(&a.rp);
	/* Kinds (kernel, JIT) always reach the tree: the annotate palette
	 * needs them, and names stay free of suffixes. */
	a.c.annotate = true;
	flame_svg_opts_default(&a.svg);
	int rc = parse_args(&a, argc, argv);
	if (rc >= 0) {
		rp_opts_free(&a.rp);
		return rc;
	}
	if (a.c.weight_period && !a.countname_set)
		a.svg.countname = "weight";
	if (a.wall)
		wall_defaults(&a);
	rp_progress_if_tty(&a.rp);
	struct flame_tree *t = flame_tree_new(&a.tree);
	rc = load_all(&a, t);
	enum flame_side shown = a.before && a.svg.negate ? FLAME_BEFORE : FLAME_AFTER;
	if (rc == EXIT_OK && !flame_tree_total(t, shown)) {
		cmd_error("flame", "no stacks in the input: nothing to draw");
		rc = EXIT_RUNTIME;
	}
	/* A partial recording still gets its graph, with the error printed. */
	if (flame_tree_total(t, shown)) {
		int wrc = write_svg(&a, t);
		if (wrc != EXIT_OK)
			rc = wrc;
	}
	flame_tree_free(t);
	rp_opts_free(&a.rp);
	return rc;
}
