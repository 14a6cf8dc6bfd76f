/* cmd-collapse.c - `ember collapse`: a recording as folded stacks, one
 * "comm;root;...;leaf COUNT" line per distinct stack, the input of flame
 * graph tools (ember flame --folded, flamegraph.pl, speedscope...). */
#include <getopt.h>
#include <stdio.h>

#include "report/collapse.h"
#include "report/report.h"

static const char usage_text[] =
	"usage: ember collapse [-i FILE] [options] [filters]\n"
	"\n"
	"Prints one line per distinct stack, root first: comm;root;...;leaf COUNT,\n"
	"sorted, as `perf script | stackcollapse-perf.pl` prints for the same file.\n"
	"Only the first event's samples are folded (as stackcollapse-perf.pl does).\n"
	"\n"
	"  -i, --input FILE      data file (default ember.data; - for stdin)\n"
	"      --weight WHAT     samples (default) or period: sum each sample's period\n"
	"                        (what stackcollapse-perf.pl does since 2022 when\n"
	"                        perf script shows the period)\n"
	"      --annotate        mark kernel frames _[k] and JIT frames _[j]\n"
	"      --pid             name the process frame comm-PID\n"
	"      --tid             name the process frame comm-PID/TID\n"
	"      --no-inline       one frame per machine frame; by default a DWARF-\n"
	"                        unwound frame shows the functions inlined at its\n"
	"                        address as their own frames, as perf script does\n"
	"      --srcline         add \" file:line\" to each frame the DWARF has a line\n"
	"                        for (an inline chain's outer frames: the call site)\n"
	"      --comm LIST, --pid=LIST, --tid=LIST, --cpu LIST, --time START,END\n"
	"                        only samples of these (note the '=' for --pid/--tid)\n"
	"      --no-leaf-fix     -g chains as the frame-pointer walk found them (by\n"
	"                        default a frameless leaf's caller is restored from\n"
	"                        record -g's stack snapshot, which perf script does\n"
	"                        not do: the one deliberate difference in the stacks)\n"
	"      --no-demangle     show C++/Rust symbols as recorded\n"
	"\n"
	"Deliberate differences from stackcollapse-perf.pl: --pid shows the real pid\n"
	"(perf script's default output has none, so the script prints '?'); [vdso]\n"
	"frames are not marked _[k] by --annotate (they run in user space).\n";

/* -1 to go on, or the exit status to stop with. */
static int parse_args(struct collapse_opts *c, struct rp_opts *rp, int argc, char **argv)
{
	static const struct option longopts[] = {
		COLLAPSE_LONGOPTS,
		RP_FILTER_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		int ours = collapse_parse_opt(c, rp, opt, optarg);
		if (ours < 0) {
			cmd_error("collapse", "%s", err_msg());
			return EXIT_USAGE;
		}
		if (ours)
			continue;
		switch (opt) {
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cmd_bad_option("collapse", opt, argv[optind - 1]);
		}
	}
	if (optind < argc) {
		cmd_error("collapse", "unexpected argument '%s' (to filter by pid or tid write "
			  "--pid=LIST; see 'ember collapse --help')", argv[optind]);
		return EXIT_USAGE;
	}
	return -1;
}

int collapse_say(const char *cmd, const char *input, int rc, const struct collapse_notes *n)
{
	if (n->no_callchains)
		cmd_warn(cmd, "%s has no callchains (record with -g); stacks are one frame deep",
			 input);
	if (rc < 0)
		cmd_error(cmd, "%s", err_msg());
	if (!n->replayed)
		return EXIT_RUNTIME;
	if (n->skipped)
		cmd_warn(cmd, "folded only %s samples; %llu samples of other events left out",
			 n->event, (unsigned long long)n->skipped);
	rp_warn_summary(cmd, &n->summary, input);
	return rc < 0 || n->summary.input_error ? EXIT_RUNTIME : EXIT_OK;
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
