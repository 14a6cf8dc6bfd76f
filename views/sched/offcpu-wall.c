/* offcpu-wall.c - the wall-clock view behind `ember flame --wall`: CPU
 * samples weighted to time by their period plus off-CPU intervals, one
 * tree, so that on-CPU and off-CPU time of a thread add up to its life. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/sched/sched.h"

struct wall {
	struct flame_tree *tree;
	const char *thread_fmt;
	const struct rp_filter *filter;
	struct offcpu_folder folder;
	u64 other_samples;            /* samples of events that are not time */
};

static int wall_on_cpu(void *ctx, const struct rp_sample *s)
{
	struct wall *w = ctx;
	if (!sched_is_clock_event(s->attr)) {
		w->other_samples++;
		return 0;
	}
	if (!s->thread || !rp_filter_pass(w->filter, s->s->pid, s->s->tid, s->thread->comm,
					  (int)s->s->cpu, s->s->time))
		return 0;
	struct rp_fold *fo = &w->folder.fold;
	rp_fold_reset(fo);
	rp_fold_process(fo, s->thread->comm, s->s->pid, s->s->tid, offcpu_thread_show(w->thread_fmt));
	bool java = rp_fold_java(s->thread->comm);
	for (int i = s->nframes - 1; i >= 0; i--)
		rp_fold_frame(fo, &s->frames[i], java);
	/* Clock events count nanoseconds: the period is the time on CPU. */
	return offcpu_folder_add(&w->folder, w->tree, FLAME_USER, (s->s->period + 500) / 1000);
}

static void wall_free(struct wall *w)
{
	offcpu_folder_free(&w->folder);
}

int offcpu_wall_replay(const struct rp_opts *rp, const char *thread_fmt,
		       struct flame_tree *tree, struct offcpu_wall_notes *wn)
{
	struct wall w = { .tree = tree, .thread_fmt = thread_fmt, .filter = &rp->filter };
	struct offcpu_opts o = { .on_cpu = wall_on_cpu, .on_cpu_ctx = &w };
	struct sched_tp tp = { 0 };
	struct offcpu *oc = NULL;
	struct replay *r = NULL;
	int rc = offcpu_run(rp, &o, &tp, &oc, &r, &wn->run);
	char run_error[1024] = "";
	if (rc < 0)
		snprintf(run_error, sizeof(run_error), "%s", err_msg());
	u64 on_cpu = flame_tree_total(tree, FLAME_AFTER);
	wn->no_cpu_samples = oc && rc == 0 && !wn->run.summary.input_error && !on_cpu;
	wn->other_samples = w.other_samples;
	/* Off-CPU stacks go in last, so frames shared with on-CPU stacks keep
	 * the on-CPU colour and frames only ever off-CPU get the other. */
	if (oc && offcpu_fold(oc, tree, FLAME_INLINED, thread_fmt) < 0)
		snprintf(wn->fold_error, sizeof(wn->fold_error), "%s", err_msg());
	if (oc) {
		wn->stats = *offcpu_stats(oc);
		wn->have_stats = true;
	}
	offcpu_free(oc);
	rp_close(r);
	wall_free(&w);
	if (rc < 0)
		err_set("%s", run_error);
	return rc;
}
