/* streamcut.c - where a perf stream (the pipe variant) arriving in pieces
 * can be cut and stay readable: after its last whole record and after its
 * last FINISHED_ROUND, found without keeping the stream (ember serve). */
#include <string.h>

#include "format/format-internal.h"

enum { CUT_HEADER, CUT_RECORD, CUT_SKIP };

void pd_cut_init(struct pd_cut *c)
{
	memset(c, 0, sizeof(*c));
	c->state = CUT_HEADER;
}

/* Bytes that follow a record outside its size: tracing data's and
 * AUXTRACE's; the sizes were checked to hold their fields. */
static u64 trailer_bytes(const struct pd_cut *c)
{
	if (c->type == PD_RECORD_HEADER_TRACING_DATA)
		return get_u32(c->head + 8);
	if (c->type == PD_RECORD_AUXTRACE)
		return get_u64(c->head + 8);
	return 0;
}

static void record_done(struct pd_cut *c)
{
	c->record_end = c->off;
	if (c->type == PD_RECORD_FINISHED_ROUND)
		c->round_end = c->off;
	c->head_len = 0;
	c->state = CUT_RECORD;
}

/* The pipe header: the magic and its own size, 16. */
static int header_done(struct pd_cut *c)
{
	if (get_u64(c->head) != PD_MAGIC || get_u64(c->head + 8) != 16) {
		err_set("offset 0: not a perf stream (the PERFILE2 pipe header)");
		return -1;
	}
	c->record_end = c->off;
	c->head_len = 0;
	c->state = CUT_RECORD;
	return 0;
}

/* The first 16 bytes of a record (fewer when it is smaller) are in head:
 * what is left of it, and of a trailer, is stepped over. */
static int record_head_done(struct pd_cut *c)
{
	u64 start = c->off - c->head_len;
	u64 min = c->type == PD_RECORD_HEADER_TRACING_DATA ? 12
		: c->type == PD_RECORD_AUXTRACE ? 16 : 8;
	if (c->size < min) {
		err_set("offset %llu: a record of type %u and size %u is too small",
			(unsigned long long)start, c->type, c->size);
		return -1;
	}
	c->skip = c->size - c->head_len;
	u64 extra = trailer_bytes(c);
	if (c->skip + extra < c->skip) {
		err_set("offset %llu: record trailer size overflows", (unsigned long long)start);
		return -1;
	}
	c->skip += extra;
	if (!c->skip)
		record_done(c);
	else
		c->state = CUT_SKIP;
	return 0;
}

/* Gathers head bytes; 1 when the piece wanted is complete. */
static size_t take_head(struct pd_cut *c, const u8 *p, size_t n, u32 want)
{
	size_t take = MIN(n, (size_t)(want - c->head_len));
	memcpy(c->head + c->head_len, p, take);
	c->head_len += (u32)take;
	c->off += take;
	return take;
}

static int feed_record(struct pd_cut *c, const u8 *p, size_t n, size_t *used)
{
	if (c->head_len < 8) {
		*used = take_head(c, p, n, 8);
		if (c->head_len < 8)
			return 0;
		c->type = get_u32(c->head);
		c->size = (u16)(get_u32(c->head + 4) >> 16);
		if (c->size < 8) {
			err_set("offset %llu: record size %u is smaller than its header",
				(unsigned long long)(c->off - 8), c->size);
			return -1;
		}
		return c->size == 8 ? record_head_done(c) : 0;
	}
	*used = take_head(c, p, n, MIN(c->size, 16u));
	if (c->head_len < MIN(c->size, 16u))
		return 0;
	return record_head_done(c);
}

int pd_cut_feed(struct pd_cut *c, const void *buf, size_t n)
{
	const u8 *p = buf;
	while (n) {
		size_t used = 0;
		int rc = 0;
		if (c->state == CUT_HEADER) {
			used = take_head(c, p, n, 16);
			if (c->head_len == 16)
				rc = header_done(c);
		} else if (c->state == CUT_RECORD) {
			rc = feed_record(c, p, n, &used);
		} else {
			used = (size_t)MIN((u64)n, c->skip);
			c->skip -= used;
			c->off += used;
			if (!c->skip)
				record_done(c);
		}
		if (rc < 0)
			return -1;
		p += used;
		n -= used;
	}
	return 0;
}

bool pd_cut_at_boundary(const struct pd_cut *c)
{
	return c->state != CUT_HEADER && c->off == c->record_end;
}

u64 pd_cut_safe_end(const struct pd_cut *c)
{
	return c->round_end ? c->round_end : c->record_end;
}
