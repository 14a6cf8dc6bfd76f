/* push.c - the continuous profiler's sink: a live recording's samples
 * gathered into one profile per interval (export/), encoded as pprof at
 * each tick and handed to push/'s sender thread, so the replay (and the
 * recorder behind it) never waits on the network. */
#include <stdlib.h>
#include <time.h>

#include "live/live.h"

struct live_push {
	struct ex_profile *prof;
	struct push_sender *sender;
	u64 interval_ns;
	live_push_fn after;
	void *ctx;
	bool anchored;             /* the first tick tied recording to wall time */
	u64 anchor_rec, anchor_wall;
	u64 prev_until;            /* wall ns: the last interval's end */
	u64 prev_end;              /* recording ns */
};

static u64 wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000u + (u64)ts.tv_nsec;
}

/* An interval's end in wall-clock time: the first tick's wall time plus
 * recording time since, so a replay running behind does not shift it. */
static u64 until_of(struct live_push *lp, u64 end)
{
	if (!lp->anchored) {
		lp->anchored = true;
		lp->anchor_rec = end;
		lp->anchor_wall = wall_ns();
		lp->prev_until = lp->anchor_wall - MIN(lp->anchor_wall, lp->interval_ns);
	}
	end = MAX(end, lp->prev_end);
	lp->prev_end = end;
	return lp->anchor_wall + (end - MIN(end, lp->anchor_rec));
}

static int lp_sample(void *ctx, const struct rp_sample *s)
{
	struct live_push *lp = ctx;
	return ex_profile_add(lp->prof, s);
}

static int lp_tick(void *ctx, u64 end, bool last)
{
	struct live_push *lp = ctx;
	u64 until = until_of(lp, end), from = MIN(lp->prev_until, until);
	lp->prev_until = until;
	struct live_push_interval iv = {
		.from = from / 1000000000u, .until = until / 1000000000u,
		.samples = ex_profile_samples(lp->prof), .last = last,
	};
	iv.until = MAX(iv.until, iv.from + 1);   /* Pyroscope wants from < until */
	if (iv.samples) {
		void *gz;
		ex_profile_set_time(lp->prof, from, until - from);
		if (ex_pprof_encode(lp->prof, &gz, &iv.bytes) < 0)
			return -1;
		struct push_profile p = { .format = PUSH_PPROF, .data = gz, .len = iv.bytes,
					  .from = iv.from, .until = iv.until };
		push_sender_put(lp->sender, &p);
		free(gz);
	}
	ex_profile_reset(lp->prof);
	return lp->after ? lp->after(lp->ctx, &iv) : 0;
}

struct live_push *live_push_new(struct replay *rp, struct push_sender *sender, u64 interval_ns,
				live_push_fn after, void *ctx)
{
	struct live_push *lp = xcalloc(1, sizeof(*lp));
	struct ex_profile_opts eo = { .kind = EX_SAMPLES, .rp = rp };
	lp->prof = ex_profile_new(&eo);
	lp->sender = sender;
	lp->interval_ns = interval_ns;
	lp->after = after;
	lp->ctx = ctx;
	return lp;
}

struct rp_sink live_push_sink(struct live_push *lp)
{
	return (struct rp_sink){ .ctx = lp, .sample = lp_sample, .tick = lp_tick };
}

void live_push_free(struct live_push *lp)
{
	if (!lp)
		return;
	ex_profile_free(lp->prof);
	free(lp);
}
