/* load.c - where the block events come from: a blktrace capture fed
 * straight to the tracker, or a recording replayed through it (its block
 * tracepoints decoded, the submitters' stacks interned when asked). */
#include <string.h>

#include "block/block.h"

/* What the command asked to see as the events pass. */
static void set_callbacks(struct bio_tracker *bt, const struct bio_load_opts *o)
{
	/* The blkparse lines are filtered per event: by the task each ran
	 * in, its CPU and time (the views pick I/Os by their queue's). */
	if (o->blkparse) {
		o->blkparse->filter = &o->rp->filter;
		bio_set_hook(bt, bio_blkparse_line, o->blkparse);
	}
	if (o->done)
		bio_set_done(bt, o->done, o->done_ctx);
	bio_set_forget(bt, o->forget);
	if (o->interval)
		bio_set_interval(bt, o->rp->interval_ns, o->interval, o->interval_ctx);
}

/* A blktrace capture: no replay, no tracing data; the same tracker. */
static int load_blktrace(struct bio_data *d, const struct bio_load_opts *o)
{
	if (o->stacks) {
		err_set("%s: blktrace captures hold no stacks: record with "
			"'ember record --block -g' for --stacks and --folded", o->rp->input);
		return -1;
	}
	d->bt = bio_tracker_new(NULL);
	set_callbacks(d->bt, o);
	int rc = bio_feed_blktrace(d->bt, o->rp->input);
	bio_empty_intervals(d->bt, &d->summary);
	return rc;
}

static int check_recording(struct bio_data *d, const char *input)
{
	const struct bio_tp *tp = &d->tp;
	if (!tp->have[BK_QUEUE] && !tp->have[BK_ISSUE] && !tp->have[BK_COMPLETE]) {
		err_set("%s has no block events: record with 'ember record --block'", input);
		return -1;
	}
	if (!tp->have[BK_COMPLETE])
		snprintf(d->warning, sizeof(d->warning), "%s has no block:block_rq_complete "
			 "events: no latency can be measured", input);
	return 0;
}

/* Whole callchains only for the stacks, interned as the I/Os begin. */
static int want_callchains(struct bio_data *d, const struct bio_load_opts *o, struct replay *r)
{
	rp_set_callchains(r, false);
	if (!o->stacks)
		return 0;
	if (!rp_has_callchains(r)) {
		err_set("%s has no stacks: record with 'ember record --block -g' for "
			"--stacks and --folded", o->rp->input);
		return -1;
	}
	rp_set_callchains(r, true);
	d->st = bio_stacks_new();
	return 0;
}

static int run(struct bio_data *d, const struct bio_load_opts *o, struct replay *r)
{
	d->bt = bio_tracker_new(&d->tp);
	bio_set_stacks(d->bt, d->st);
	set_callbacks(d->bt, o);
	struct rp_sink sink = bio_sink(d->bt);
	if (o->replay)
		*o->replay = r;
	int rc = rp_run(r, &sink);
	if (o->replay)
		*o->replay = NULL;
	if (rc < 0 && !bio_stopped(d->bt))
		return -1;
	d->summary = *rp_summary(r);
	d->replayed = true;
	return 0;
}

static int load_recording(struct bio_data *d, const struct bio_load_opts *o)
{
	/* Completions run in other tasks' time: the filters apply to I/Os. */
	struct rp_opts all = *o->rp;
	memset(&all.filter, 0, sizeof(all.filter));
	all.tracing = true;
	struct replay *r = rp_open(&all);
	if (!r)
		return -1;
	int rc = bio_tp_init(&d->tp, rp_reader(r)) < 0 ? -1 : 0;
	if (rc < 0)
		err_prefix("%s: tracing data", o->rp->input);
	if (rc == 0)
		rc = check_recording(d, o->rp->input);
	if (rc == 0)
		rc = want_callchains(d, o, r);
	if (rc == 0)
		rc = run(d, o, r);
	rp_close(r);   /* sets no error: the message stays */
	d->tp.trace = NULL;   /* the reader's, closed with it */
	return rc;
}

int bio_input_refuse(const struct rp_opts *rp)
{
	if (!rp->input || !strcmp(rp->input, "-") || !pd_blk_probe(rp->input))
		return 0;
	return rp_filter_refuse(&rp->filter, RP_FILTER_ALL & ~RP_FILTER_PID,
				"a blktrace capture (its ids are threads': --tid)");
}

int bio_load(struct bio_data *d, const struct bio_load_opts *o)
{
	const char *input = o->rp->input;
	if (strcmp(input, "-") && pd_blk_probe(input))
		return load_blktrace(d, o);
	return load_recording(d, o);
}

void bio_data_free(struct bio_data *d)
{
	bio_tracker_free(d->bt);
	bio_stacks_free(d->st);
	d->bt = NULL;
	d->st = NULL;
}
