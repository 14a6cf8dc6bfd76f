/* cmd-collapse.c - `ember collapse`: a recording as folded stacks, one
 * "comm;root;...;leaf COUNT" line per distinct stack, the input of flame
 * graph tools (ember flame --folded, flamegraph.pl, speedscope...). */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "views/collapse/collapse.h"

struct args {
	struct rp_opts rp;
	struct collapse_opts c;
	struct collapse_args ca;   /* &c, &rp */
};

#define A(f) offsetof(struct args, f)

static const struct opt options[] = {
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_INCLUDE_AT(collapse_options, A(ca)),
	OPT_INCLUDE_AT(collapse_rp_options, A(rp)),
	OPT_END,
};

const struct opt_cmd collapse_cmd = {
	.name = "collapse",
	.summary = "fold stacks into lines, like stackcollapse-perf.pl",
	.synopsis =
	"usage: ember collapse [-i FILE] [options] [filters]\n"
	"\n"
	"Prints one line per distinct stack, root first: comm;root;...;leaf COUNT,\n"
	"sorted, as `perf script | stackcollapse-perf.pl` prints for the same file.\n"
	"Only the first event's samples are folded (as stackcollapse-perf.pl does).\n"
	"\n",
	.opts = options,
	.notes =
	"By default a frameless leaf's caller is restored from record -g's stack\n"
	"snapshot, which perf script does not do: the one deliberate difference in\n"
	"the stacks (--no-leaf-fix turns it off).  Others: --pid shows the real pid\n"
	"(perf script's default output has none, so the script prints '?'); [vdso]\n"
	"frames are not marked _[k] by --annotate (they run in user space).\n",
};

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct collapse_opts *c, struct rp_opts *rp, int argc, char **argv)
{
	struct args a = { .rp = *rp, .c = *c };
	a.ca = (struct collapse_args){ &a.c, &a.rp };
	int rc = opt_parse(&collapse_cmd, argc, argv, &a);
	*rp = a.rp;                /* what was parsed is theirs to free */
	*c = a.c;
	if (rc >= 0)
		return rc;
	if (optind < argc) {
		cmd_error("collapse", "unexpected argument '%s' (to filter by pid or tid write "
			  "--pid=LIST; see 'ember collapse --help')", argv[optind]);
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_collapse(int argc, char **argv)
{
	struct collapse_opts c = { 0 };
	struct rp_opts rp;
	rp_opts_init(&rp);
	int rc = parse_args(&c, &rp, argc, argv);
	if (rc >= 0) {
		rp_opts_free(&rp);
		return rc;
	}
	rp_progress_if_tty(&rp);
	struct flame_tree *tree = flame_tree_new(NULL);
	struct collapse_notes notes = { 0 };
	rc = collapse_replay(&rp, &c, tree, FLAME_AFTER, &notes);
	rc = collapse_say("collapse", rp.input, rc, &notes);
	if (rc != EXIT_RUNTIME || flame_tree_total(tree, FLAME_AFTER)) {
		if (flame_write_folded(tree, stdout) < 0) {
			cmd_error("collapse", "%s", err_msg());
			rc = EXIT_RUNTIME;
		}
	}
	flame_tree_free(tree);
	rp_opts_free(&rp);
	return rc;
}
