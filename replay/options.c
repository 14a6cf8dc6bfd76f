/* options.c - the replay's options' defaults and their end (the option
 * groups that fill them, and their parser, are the command layer's:
 * cmd/replay-options.c). */
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

void rp_opts_init(struct rp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->input = "ember.data";
	o->sym.demangle = true;
	o->leaf_fix = true;
}

void rp_opts_free(struct rp_opts *o)
{
	free(o->filter.pids);
	free(o->filter.tids);
	free(o->filter.cpus);
	o->filter.pids = o->filter.tids = NULL;
	o->filter.cpus = NULL;
}
