/* live-view.c - the sequence every view that runs live or on a file goes
 * through around its own work (report, sched lat, offcpu, bio, top, the
 * tools) after its line is parsed: whether a target was given, the
 * recording's start or a file's settings, and one end for every path, so
 * none misses a step.  The command layer's: it prints the recorder's
 * warnings and failures and picks the exit status. */
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

bool live_view_target(const struct live_view *v)
{
	const struct live_opts *o = &v->opts;
	return o->all || o->cpus || o->pids || o->tids || o->command;
}

int live_view_start(struct live_view *v, enum rec_live_kind kind)
{
	if (!live_view_target(v)) {
		if (v->progress && isatty(2))
			v->rp->progress = v->progress;
		if (v->opts.interval > 0)
			v->rp->interval_ns = (u64)(v->opts.interval * 1e9 + 0.5);
		return -1;
	}
	bool usage;
	v->live = live_start(&v->opts, kind, v->rp, &usage);
	if (v->live)
		return -1;
	cmd_error(v->cmd, "%s", err_msg());
	return usage ? EXIT_USAGE : EXIT_RUNTIME;
}

int live_end(struct live *l, const char *cmd, int status)
{
	live_stop(l);
	const char *note;
	while ((note = live_next_note(l)))
		cmd_warn(cmd, "%s", note);
	bool usage;
	int command;
	if (live_finish(l, &usage, &command) < 0) {
		cmd_error(cmd, "%s", err_msg());
		return usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	return status ? status : command;
}

int live_view_end(struct live_view *v, int status)
{
	if (v->live)
		status = live_end(v->live, v->cmd, status);
	v->live = NULL;
	live_opts_free(&v->opts);
	return status;
}
