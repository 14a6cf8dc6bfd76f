/* window.c - the reader's input as raw records: a window that slides
 * along the file (pread) or the stream (read) and holds every record still
 * queued for ordering, and the records inflated from compressed ones
 * (compress.c) after them.  Records are handed out in place. */
#include "format/format-internal.h"

#include <errno.h>
#include <unistd.h>

/* The most one compressed record may inflate to, when the COMPRESSED
 * feature gives no mmap size, and the bounds put on the size it gives. */
#define INFLATE_DEFAULT (64u << 20)
#define INFLATE_MIN (1u << 20)
#define INFLATE_MAX (1u << 30)

/* The largest first window, and how much one read asks for.  A file's
 * first window is smaller when its data is; a stream's starts small.  The
 * window doubles when the records still queued fill half of it. */
#define WINDOW_START (8u << 20)
#define WINDOW_STREAM_START (64u << 10)
#define WINDOW_READ (1u << 20)

/* Drops the window's bytes before offset keep (rounded down to 8, so a
 * record's alignment in the window is its alignment in the input). */
static void window_slide(struct pd_reader *r, u64 keep)
{
	keep &= ~(u64)7;
	u64 end = r->win_off + r->win_len;
	if (keep >= end) {
		r->win_off = keep;
		r->win_len = 0;
		return;
	}
	if (keep > r->win_off) {
		size_t drop = (size_t)(keep - r->win_off);
		memmove(r->win, r->win + drop, r->win_len - drop);
		r->win_len -= drop;
		r->win_off = keep;
	}
}

/* Reads more input after the window's end; the bytes read (0 at the end
 * of the input), or -1. */
static ssize_t window_read(struct pd_reader *r)
{
	u64 at = r->win_off + r->win_len;
	size_t room = MIN(r->win_cap - r->win_len, (size_t)WINDOW_READ);
	for (;;) {
		ssize_t got;
		if (r->pipe) {
			got = read(r->fd, r->win + r->win_len, room);
		} else {
			room = (size_t)MIN((u64)room, r->data_end - at);
			got = room ? pread(r->fd, r->win + r->win_len, room, (off_t)at) : 0;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got > 0)
			r->win_len += (size_t)got;
		return got;
	}
}

static size_t first_window(const struct pd_reader *r)
{
	if (r->pipe)
		return WINDOW_STREAM_START;
	return (size_t)MAX(MIN((u64)WINDOW_START, r->data_end - r->data_begin), 4096);
}

int pdr_window_need(struct pd_reader *r, size_t n)
{
	if (r->pos >= r->win_off && r->pos + n <= r->win_off + r->win_len)
		return 1;
	if (!r->pipe && r->pos + n > r->data_end)
		return 0;
	window_slide(r, MIN(r->pos, r->hold_from));
	u64 want = r->pos + n - r->win_off;    /* bytes the window must hold */
	/* A file's sizes are checked against its length, so its window can
	 * grow to what is wanted at once; a stream's only with the bytes that
	 * arrive, so a size that lies costs a few times what the stream holds. */
	size_t floor_cap = r->pipe ? 0 : (size_t)MIN(want + WINDOW_READ, r->data_end - r->win_off);
	while (r->win_len < want) {
		if (r->win_cap < floor_cap || r->win_len >= r->win_cap / 2) {
			size_t cap = r->win_cap ? r->win_cap * 2 : first_window(r);
			while (cap < floor_cap)
				cap *= 2;
			r->win = xrealloc(r->win, cap);
			r->win_cap = cap;
		}
		ssize_t got = window_read(r);
		if (got < 0)
			return -1;
		if (got == 0) {
			/* a stream's end; in a file, one that shrank under us */
			return r->pipe ? 0 : -1;
		}
	}
	return 1;
}

/* The next record of the input file or stream itself, as pdr_next_raw. */
static int next_file_record(struct pd_reader *r, const u8 **rec, u64 *offset)
{
	*offset = r->pos;
	if (!r->pipe) {
		if (r->pos >= r->data_end)
			return 0;
		if (r->data_end - r->pos < 8)
			return r->stats.truncated ? 0 : pdr_fail_at(r, r->pos, "truncated record header");
	}
	int got = pdr_window_need(r, 8);
	if (got < 0 && !r->pipe)
		return pdr_fail_at(r, r->pos, "cannot read the file");
	if (got <= 0)   /* a stream ends cleanly only between records */
		return r->win_off + r->win_len == r->pos ? 0 :
		       pdr_fail_at(r, r->pos, "truncated record header");
	u8 hdr[8];
	memcpy(hdr, pdr_at(r, r->pos), 8);
	u16 size = get_u32(hdr + 4) >> 16;
	if (size < 8)
		return pdr_fail_at(r, r->pos, "record size is smaller than its header");
	/* A file cut while recording ends with a partial record. */
	if (!r->pipe && r->data_end - r->pos < size)
		return r->stats.truncated ? 0 :
		       pdr_fail_at(r, r->pos, "record runs past the end of the data");
	if (pdr_window_need(r, size) != 1)
		return pdr_fail_at(r, r->pos, r->pipe ? "record runs past the end of the stream"
						  : "cannot read the file");
	const u8 *src = pdr_at(r, r->pos);
	r->pos += size;
	*rec = pdr_aligned(r, src, size);
	return 1;
}

/* ---- compressed records --------------------------------------------------- */

/* What one compressed record may inflate to: the recording's ring size
 * (the COMPRESSED feature's mmap size; perf compresses a ring's worth at
 * a time), within bounds; 0 when the feature names no zstd. */
static size_t inflate_limit(const struct pd_reader *r)
{
	const struct pdr_feature *f = &r->feat[PD_FEAT_COMPRESSED];
	if (!f->data || f->len < 20)
		return INFLATE_DEFAULT;
	if (get_u32(f->data + 4) != 1)     /* PERF_COMP_ZSTD */
		return 0;
	u32 mmap_len = get_u32(f->data + 16);
	return mmap_len ? MIN(MAX(mmap_len, INFLATE_MIN), INFLATE_MAX) : INFLATE_DEFAULT;
}

/* Inflates a COMPRESSED (or COMPRESSED2) record's payload after what is
 * still to be read or queued of the decompressed stream. */
static int inflate_record(struct pd_reader *r, const u8 *rec, u64 offset)
{
	u16 size = get_u32(rec + 4) >> 16;
	const u8 *data = rec + 8;
	size_t n = size - 8u;
	if (get_u32(rec) == PD_RECORD_COMPRESSED2) {
		if (size < 16 || get_u64(rec + 8) > size - 16u)
			return pdr_fail_at(r, offset, "compressed record's data size runs past it");
		data = rec + 16;
		n = (size_t)get_u64(rec + 8);
	}
	size_t limit = inflate_limit(r);
	if (!limit)
		return pdr_fail_at(r, offset, "the COMPRESSED feature names a method other than "
				  "zstd, the only one perf writes");
	if (!r->z)
		r->z = pdz_new();
	r->stats.nr_compressed++;
	if (pdz_inflate(r->z, data, n, offset, MIN(r->zpos, r->zhold_from), limit) < 0)
		return pdr_fail_at(r, offset, err_msg());
	return 0;
}

/* The next whole record of the decompressed stream: 1, or 0 when it holds
 * none yet, -1 on error. */
static int next_inflated(struct pd_reader *r, const u8 **rec, u64 *offset)
{
	u64 end = pdz_end(r->z);
	if (end - r->zpos < 8)
		return 0;
	const u8 *src = pdz_at(r->z, r->zpos);
	u16 size = get_u32(src + 4) >> 16;
	u32 type = get_u32(src);
	if (size < 8)
		return pdr_fail_at(r, ZOFF | r->zpos, "record size is smaller than its header");
	if (end - r->zpos < size)
		return 0;
	/* Their bodies would lie outside the record, or nest compression. */
	if (type == PD_RECORD_HEADER_TRACING_DATA || type == PD_RECORD_COMPRESSED ||
	    type == PD_RECORD_COMPRESSED2 || type == PD_RECORD_AUXTRACE)
		return pdr_fail_at(r, ZOFF | r->zpos, "a record of this type cannot be compressed");
	*offset = ZOFF | r->zpos;
	r->zpos += size;
	*rec = pdr_aligned(r, src, size);
	return 1;
}

/* Compressed data left at the end: a record cut short, unless the file
 * itself was (its recorder killed). */
static int inflated_end(struct pd_reader *r)
{
	if (!r->z || pdz_end(r->z) == r->zpos || r->stats.truncated)
		return 0;
	return pdr_fail_at(r, ZOFF | r->zpos, "compressed data ends inside a record");
}

int pdr_next_raw(struct pd_reader *r, const u8 **rec, u64 *offset)
{
	for (;;) {
		int got = r->z ? next_inflated(r, rec, offset) : 0;
		if (got)
			return got;
		got = next_file_record(r, rec, offset);
		if (got == 0)
			return inflated_end(r);
		u32 type = got > 0 ? get_u32(*rec) : 0;
		if (type != PD_RECORD_COMPRESSED && type != PD_RECORD_COMPRESSED2)
			return got;
		if (inflate_record(r, *rec, *offset) < 0)
			return -1;
	}
}
