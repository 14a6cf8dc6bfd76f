/* events.c - decodes the block tracepoints by field name, through the
 * format data the recording carries, so kernels that move fields around
 * still decode. */
#include <string.h>

#include "block/block.h"

/* The ids of format/'s block set, each in its kind's place (one past its
 * place in the set). */
int bio_tp_init(struct bio_tp *tp, struct pd_reader *r)
{
	memset(tp, 0, sizeof(*tp));
	int n;
	const char *const *names = pd_tracepoints(PD_TP_BLOCK, &n);
	return pd_trace_open_ids(r, &tp->trace, names, n, tp->id + 1, tp->have + 1);
}

static enum bio_kind kind_of(const struct bio_tp *tp, const struct pd_attr *a)
{
	if (!tp->trace || !a || a->attr.type != PERF_TYPE_TRACEPOINT)
		return BK_OTHER;
	for (int k = BK_QUEUE; k < BK_MAX; k++)
		if (tp->have[k] && tp->id[k] == a->attr.config)
			return (enum bio_kind)k;
	return BK_OTHER;
}

static int num(const struct bio_tp *tp, const struct pd_sample *s, u64 id,
	       const char *name, u64 *v)
{
	return pd_trace_field(tp->trace, id, s->raw, s->raw_size, name, v);
}

/* The fields only some events have. */
static void decode_extra(const struct bio_tp *tp, const struct pd_sample *s, u64 id,
			 struct bio_ev *out)
{
	u64 v;
	if (out->kind == BK_COMPLETE || out->kind == BK_ERROR)
		out->error = num(tp, s, id, "error", &v) < 0 ? 0 : (s32)v;
	if (out->kind == BK_SPLIT && num(tp, s, id, "new_sector", &v) == 0)
		out->old_sector = v;
	if (out->kind == BK_BIO_REMAP || out->kind == BK_RQ_REMAP) {
		if (num(tp, s, id, "old_dev", &v) == 0)
			out->old_dev = (u32)v;
		if (num(tp, s, id, "old_sector", &v) == 0)
			out->old_sector = v;
	}
}

enum bio_kind bio_tp_decode(const struct bio_tp *tp, const struct pd_attr *a,
			    const struct pd_sample *s, struct bio_ev *out)
{
	memset(out, 0, sizeof(*out));
	enum bio_kind k = kind_of(tp, a);
	if (k == BK_OTHER)
		return k;
	u64 id = a->attr.config, dev, sector, nr = 0;
	if (k == BK_PLUG || k == BK_UNPLUG) {
		out->kind = k;   /* no device: the queue's owner plugged */
		if (k == BK_UNPLUG && num(tp, s, id, "nr_rq", &nr) == 0)
			out->nr_sector = (u32)nr;
		return k;
	}
	if (num(tp, s, id, "dev", &dev) < 0 || num(tp, s, id, "sector", &sector) < 0)
		return BK_OTHER;
	/* block_split has no size: the split point says it. */
	if (k != BK_SPLIT && num(tp, s, id, "nr_sector", &nr) < 0)
		return BK_OTHER;
	out->kind = k;
	out->dev = (u32)dev;
	out->sector = sector;
	out->nr_sector = (u32)nr;
	if (pd_trace_field_str(tp->trace, id, s->raw, s->raw_size, "rwbs", out->rwbs,
			       sizeof(out->rwbs)) < 0)
		out->rwbs[0] = '\0';
	decode_extra(tp, s, id, out);
	return k;
}
