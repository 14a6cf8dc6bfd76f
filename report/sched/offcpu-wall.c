/* offcpu-wall.c - the wall-clock view behind `ember flame --wall`: CPU
 * samples weighted to time by their period plus off-CPU intervals, one
 * tree, so that on-CPU and off-CPU time of a thread add up to its life. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/sched/sched.h"

struct wall {
	struct flame_tree *tree;
	const char *thread_fmt;
	const struct rp_filter *filter;
	struct strbuf names;
	VEC(size_t) ends;
	VEC(struct flame_frame) frames;
	u64 other_samples;            /* samples of events that are not time */
};

static int wall_frames_add(struct wall *w, u64 us)
{
	VEC_GROW(&w->frames, w->ends.n);
	size_t start = 0, n = MIN(w->ends.n, (size_t)FLAME_MAX_DEPTH);
	for (size_t i = 0; i < n; i++) {
		w->frames.v[i] = (struct flame_frame){ w->names.s + start, w->ends.v[i] - start,
						       FLAME_USER };
		start = w->ends.v[i];
	}
	return flame_tree_add(w->tree, w->frames.v, n, us, FLAME_AFTER);
}

static int wall_on_cpu(void *ctx, const struct rp_sample *s)
{
	struct wall *w = ctx;
	if (!sched_is_clock_event(s->attr)) {
		w->other_samples++;
		return 0;
	}
	const struct rp_filter *f = w->filter;
	if (!s->thread || !sched_filter_match(f, s->s->pid, s->s->tid, s->thread->comm) ||
	    s->s->time < f->time_start || (f->time_end && s->s->time > f->time_end))
		return 0;
	sb_reset(&w->names);
	w->ends.n = 0;
	offcpu_thread_frame(&w->names, s->thread->comm, s->s->pid, s->s->tid, w->thread_fmt);
	VEC_PUSH(&w->ends, w->names.len);
	for (int i = s->nframes - 1; i >= 0; i--) {
		offcpu_frame_name(&s->frames[i], &w->names);
		VEC_PUSH(&w->ends, w->names.len);
	}
	/* Clock events count nanoseconds: the period is the time on CPU. */
	return wall_frames_add(w, (s->s->period + 500) / 1000);
}

static void wall_free(struct wall *w)
{
	sb_free(&w->names);
	VEC_FREE(&w->ends);
	VEC_FREE(&w->frames);
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
	sched_tp_free(&tp);
	wall_free(&w);
	if (rc < 0)
		err_set("%s", run_error);
	return rc;
}
