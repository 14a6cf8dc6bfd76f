/* interval.c - report's table per interval (report --interval, top
 * --stdio): a fresh histogram gathers each interval, is printed at the
 * interval's end under a line naming its span, with that interval's
 * lost samples, and is dropped. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/hist/hist.h"

struct hist_interval {
	struct hist_opts o;
	struct replay *rp;
	FILE *out;
	struct hist *h;
	struct rp_sink hs;         /* h's sink */
	u64 lost_before;           /* lost samples before this interval */
	u64 samples;               /* this interval's, to skip empty last ones */
	hist_interval_fn after;
	void *ctx;
	bool done;                 /* after() said so: nothing more is shown */
	u64 interval_ns;
	u64 start, last_end;       /* the first interval's start, the last's
				      end (recording time, ns) */
	u64 n;                     /* intervals ended */
};

static void renew(struct hist_interval *v)
{
	hist_free(v->h);
	v->h = hist_new(&v->o, v->rp);
	v->hs = hist_sink(v->h);
	v->samples = 0;
}

static int iv_sample(void *ctx, const struct rp_sample *s)
{
	struct hist_interval *v = ctx;
	if (v->done)
		return 0;
	v->samples++;
	return v->hs.sample(v->hs.ctx, s);
}

static int iv_event(void *ctx, const struct pd_event *ev, const struct rp_thread *t)
{
	struct hist_interval *v = ctx;
	return v->done || !v->hs.event ? 0 : v->hs.event(v->hs.ctx, ev, t);
}

static int call_after(struct hist_interval *v, u64 end, bool last)
{
	int rc = v->after ? v->after(v->ctx, end, last) : 0;
	if (rc > 0)
		v->done = true;
	return rc < 0 ? -1 : 0;
}

static void put_secs(FILE *out, u64 ns)
{
	fprintf(out, "%" PRIu64 ".%06" PRIu64, ns / 1000000000, ns % 1000000000 / 1000);
}

/* "# interval N: FROM - TO s (recording time A - B)": seconds from the
 * first interval's start, which is the recording's first timed event,
 * and the recording's clock as script's time column and --time show it.
 * An interval holds the samples at or after its start and before its end
 * (the last: up to the last event). */
static void print_span(struct hist_interval *v, u64 end)
{
	if (!v->n)
		v->start = v->last_end = end - MIN(end, v->interval_ns);
	u64 from = v->last_end, to = MAX(end, v->last_end);
	v->n++;
	fprintf(v->out, "# interval %" PRIu64 ": ", v->n);
	put_secs(v->out, from - v->start);
	fputs(" - ", v->out);
	put_secs(v->out, to - v->start);
	fputs(" s (recording time ", v->out);
	put_secs(v->out, from);
	fputs(" - ", v->out);
	put_secs(v->out, to);
	fputs(")\n", v->out);
	v->last_end = to;
}

/* The interval's table; once after() said done nothing more is shown. */
static int iv_tick(void *ctx, u64 end, bool last)
{
	struct hist_interval *v = ctx;
	if (v->done)
		return 0;
	if (last && !v->samples)
		return call_after(v, end, last);
	print_span(v, end);
	if (v->hs.finish && v->hs.finish(v->hs.ctx) < 0)
		return -1;
	struct rp_summary sum = *rp_summary(v->rp);
	u64 all_lost = sum.lost;
	sum.lost -= MIN(sum.lost, v->lost_before);
	v->lost_before = all_lost;
	hist_print(v->h, v->out, &sum);
	int rc = call_after(v, end, last);
	renew(v);
	return rc;
}

struct hist_interval *hist_interval_new(const struct hist_opts *o, struct replay *rp,
					u64 interval_ns, FILE *out, hist_interval_fn after,
					void *ctx)
{
	struct hist_interval *v = xcalloc(1, sizeof(*v));
	v->o = *o;
	v->interval_ns = interval_ns;
	v->rp = rp;
	v->out = out;
	v->after = after;
	v->ctx = ctx;
	renew(v);
	return v;
}

struct rp_sink hist_interval_sink(struct hist_interval *v)
{
	return (struct rp_sink){ .ctx = v, .sample = iv_sample, .event = iv_event, .tick = iv_tick };
}

void hist_interval_free(struct hist_interval *v)
{
	if (!v)
		return;
	hist_free(v->h);
	free(v);
}
