/* offcpu-run.c - a recording replayed through the off-CPU sink, for
 * `ember offcpu` and `ember flame --wall`: checks the recording has what
 * the view needs, and hands the commands its warnings to print. */
#include <stdio.h>
#include <string.h>

#include "views/sched/sched.h"

static bool has_switch_records(struct pd_reader *r)
{
	for (size_t i = 0; i < pd_reader_nattrs(r); i++)
		if (pd_reader_attr(r, i)->attr.context_switch)
			return true;
	return false;
}

/* Whether the recording's sched_wakeup samples carry call chains (they do
 * only from 'record --off-cpu=wakers'). */
static bool wakeups_have_chains(struct pd_reader *r, const struct sched_tp *tp)
{
	for (size_t i = 0; i < pd_reader_nattrs(r); i++) {
		const struct perf_event_attr *a = &pd_reader_attr(r, i)->attr;
		if (a->type == PERF_TYPE_TRACEPOINT && a->config == tp->id[SCHED_WAKEUP] &&
		    (a->sample_type & PERF_SAMPLE_CALLCHAIN))
			return true;
	}
	return false;
}

static int check_recording(const char *input, const struct sched_tp *tp, struct pd_reader *r,
			   const struct offcpu_opts *o, struct offcpu_notes *n)
{
	if (!tp->have[SCHED_SWITCH] && !has_switch_records(r)) {
		err_set("%s has no sched:sched_switch events: record with "
			"'ember record --off-cpu'", input);
		return -1;
	}
	if (!tp->have[SCHED_SWITCH])
		snprintf(n->warn[0], sizeof(n->warn[0]), "%s has switch records but no "
			 "sched:sched_switch: intervals have no stacks (record with --off-cpu)",
			 input);
	if (o->wakers && !tp->have[SCHED_WAKEUP])
		snprintf(n->warn[1], sizeof(n->warn[1]), "%s has no sched:sched_wakeup events: "
			 "no wakers to show (record with 'ember record --off-cpu=wakers')", input);
	else if (o->wakers && !wakeups_have_chains(r, tp))
		snprintf(n->warn[1], sizeof(n->warn[1]), "%s has sched:sched_wakeup without "
			 "call chains: wakers are shown without their stacks (record with "
			 "'ember record --off-cpu=wakers')", input);
	return 0;
}

int offcpu_run(const struct rp_opts *rp, struct offcpu_opts *o, struct sched_tp *tp,
	       struct offcpu **oc, struct replay **r, struct offcpu_notes *n)
{
	/* One thread's switch-out is another's switch-in: the replay sees
	 * everything and the filters apply to intervals. */
	struct rp_opts all = *rp;
	memset(&all.filter, 0, sizeof(all.filter));
	all.tracing = true;
	o->filter = &rp->filter;
	*r = rp_open(&all);
	if (!*r)
		return -1;
	if (sched_tp_init(tp, rp_reader(*r)) < 0) {
		err_prefix("%s: tracing data", rp->input);
		return -1;
	}
	if (check_recording(rp->input, tp, rp_reader(*r), o, n) < 0)
		return -1;
	rp_set_callchains(*r, true);
	*oc = offcpu_new(o, tp);
	struct rp_sink sink = offcpu_sink(*oc);
	if (rp_run(*r, &sink) < 0)
		return -1;
	n->ran = true;
	n->summary = *rp_summary(*r);
	return 0;
}
