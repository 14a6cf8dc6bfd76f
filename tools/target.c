/* target.c - the end of what every tool's target options filled
 * (cmd/tool-options.c parses them): a recording to read (-i), or a live
 * target, and the filters of what the tool counts. */
#include <stdlib.h>

#include "tools/tools.h"

void tool_target_free(struct tool_target *tg)
{
	free(tg->filter.pids);
	free(tg->filter.tids);
	free(tg->filter.cpus);
	VEC_FREE(&tg->events);
	live_opts_free(&tg->live);
}
