/* cmd-flame.c - `ember flame`: an interactive SVG flame graph straight from
 * a recording (through the replay, no text in between), from folded text,
 * or from two profiles as a differential graph. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "views/collapse/collapse.h"
#include "views/sched/sched.h"

enum {
	OPT_FOLDED = 0x2000, OPT_DIFF, OPT_TITLE, OPT_SUBTITLE, OPT_WIDTH, OPT_HEIGHT,
	OPT_MINWIDTH, OPT_COUNTNAME, OPT_COLORS, OPT_HASH, OPT_INVERTED, OPT_REVERSE,
	OPT_NEGATE, OPT_WALL,
};

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
};

/* The graph's own options.  1 handled, 0 not, -1 err_set. */
static int parse_graph_opt(struct flame_args *a, int opt, const char *arg)
{
	switch (opt) {
	case OPT_TITLE: a->svg.title = arg; return 1;
	case OPT_SUBTITLE: a->svg.subtitle = arg; return 1;
	case OPT_COUNTNAME: a->svg.countname = arg; a->countname_set = true; return 1;
	case OPT_HASH: a->svg.hash = true; return 1;
	case OPT_INVERTED: a->svg.inverted = true; return 1;
	case OPT_REVERSE: a->tree.reverse = true; return 1;
	case OPT_NEGATE: a->svg.negate = true; return 1;
	case OPT_COLORS: a->colors_set = true; return flame_palette_parse(arg, &a->svg.palette) < 0 ? -1 : 1;
	case OPT_MINWIDTH:
		return flame_minwidth_parse(arg, &a->svg.minwidth, &a->svg.minwidth_percent) < 0 ? -1 : 1;
	case OPT_WIDTH:
		if (parse_int(arg, &a->svg.width) < 0 || a->svg.width < 100 || a->svg.width > 100000) {
			err_set("bad --width '%s' (pixels, 100 to 100000)", arg);
			return -1;
		}
		return 1;
	case OPT_HEIGHT:
		if (parse_int(arg, &a->svg.frame_height) < 0 || a->svg.frame_height < 4 ||
		    a->svg.frame_height > 1000) {
			err_set("bad --height '%s' (pixels per frame, 4 to 1000)", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

/* --diff takes two values: the second is the next argument. */
static int take_diff(struct flame_args *a)
{
	if (optind >= a->argc) {
		err_set("--diff needs two files: --diff BEFORE AFTER");
		return -1;
	}
	a->before = optarg;
	a->after = a->argv[optind++];
	return 1;
}

static int parse_one(void *ctx, int opt, const char *arg)
{
	struct flame_args *a = ctx;
	int rc = collapse_parse_opt(&a->c, &a->rp, opt, optarg);
	if (!rc)
		rc = parse_graph_opt(a, opt, optarg);
	if (rc)
		return rc;
	switch (opt) {
	case OPT_FOLDED: a->folded = optarg; return 1;
	case OPT_DIFF: return take_diff(a);
	case OPT_WALL: a->wall = true; return 1;
	case 'o': a->output = optarg; return 1;
	default: return 0;
	}
}

static const struct opt options[] = {
	OPT_TEXT("Input (one of):"),
	OPT_INCLUDE(rp_input_opts),
	OPT(OPT_FOLDED, 0, "folded", OPT_ARG, "FILE",
	  "folded stacks (\"a;b;c 42\" lines, from ember collapse or\n"
	  "any stackcollapse tool); - for stdin"),
	OPT(OPT_WALL, 0, "wall", OPT_NO_ARG, NULL,
	  "wall-clock time from an 'ember record --off-cpu -F HZ'\n"
	  "file: CPU samples (by period) and off-CPU intervals\n"
	  "in microseconds, off-CPU frames in aqua, so each\n"
	  "thread's total is its wall time (--tid: per thread)"),
	OPT(OPT_DIFF, 0, "diff", OPT_ARG, "BEFORE AFTER",
	  "differential graph: widths from AFTER, red where a\n"
	  "frame's share grew, blue where it shrank, deeper for\n"
	  "larger changes; each a data file or folded text"),
	OPT_TEXT("Output:"),
	OPT('o', 'o', "output", OPT_ARG, "FILE", "the SVG (default flame.svg; - for stdout)"),
	OPT(OPT_TITLE, 0, "title", OPT_ARG, "TEXT", "the title"),
	OPT(OPT_SUBTITLE, 0, "subtitle", OPT_ARG, "TEXT", "a line under the title"),
	OPT(OPT_WIDTH, 0, "width", OPT_ARG, "PX", "image width (default 1200)"),
	OPT(OPT_HEIGHT, 0, "height", OPT_ARG, "PX", "height of one frame (default 16)"),
	OPT(OPT_MINWIDTH, 0, "minwidth", OPT_ARG, "W",
	  "drop frames narrower than W pixels, or W% of the\n"
	  "width with a % sign (default 0.1)"),
	OPT(OPT_COUNTNAME, 0, "countname", OPT_ARG, "WORD",
	  "what counts are (default samples; weight with\n"
	  "--weight period)"),
	OPT(OPT_COLORS, 0, "colors", OPT_ARG, "PALETTE",
	  "hot (default), io or blue (off-CPU), mem or green,\n"
	  "annotate (kernel orange, JIT green, inlined aqua,\n"
	  "user hot)"),
	OPT(OPT_HASH, 0, "hash", OPT_NO_ARG, NULL,
	  "colour by name only: the same function gets the same\n"
	  "colour in every graph"),
	OPT(OPT_INVERTED, 0, "inverted", OPT_NO_ARG, NULL, "icicle graph: roots at the top"),
	OPT(OPT_REVERSE, 0, "reverse", OPT_NO_ARG, NULL,
	  "merge stacks from the leaves (callers of each leaf)"),
	OPT(OPT_NEGATE, 0, "negate", OPT_NO_ARG, NULL,
	  "with --diff: widths from BEFORE, so frames that\n"
	  "vanished show (colours keep their meaning)"),
	OPT_TEXT("From a data file, as ember collapse:"),
	OPT_INCLUDE(collapse_options),
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
	.one = parse_one,
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct flame_args *a, int argc, char **argv)
{
	a->argc = argc;
	a->argv = argv;
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
