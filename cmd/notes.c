/* notes.c - the messages commands print after a replay that more than one
 * command runs: collapse_replay's (collapse, flame) and offcpu_run's
 * (offcpu, flame --wall, export --off-cpu), from the notes those fill. */
#include "cmd/cmd.h"

/* Says what collapse_replay found; an exit status. */
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

/* Says what offcpu_run found (flame --wall too); an exit status. */
int offcpu_say_run(const char *cmd, const char *input, int rc, const struct offcpu_notes *n)
{
	for (size_t i = 0; i < ARRAY_SIZE(n->warn); i++)
		if (n->warn[i][0])
			cmd_warn(cmd, "%s", n->warn[i]);
	if (rc < 0) {
		cmd_error(cmd, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	/* The whole stacks' 16 KB copies are what a storm of switches
	 * overflows; frame-pointer chains copy none. */
	rp_warn_view(cmd, &n->summary, input, "some intervals may be repaired or missing; "
		     "--call-graph fp stacks copy no stack");
	return n->summary.input_error ? EXIT_RUNTIME : EXIT_OK;
}
