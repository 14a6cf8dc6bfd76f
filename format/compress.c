/* compress.c - zstd for perf.data's compressed records (perf record -z):
 * the reader's side inflates each PERF_RECORD_COMPRESSED payload into one
 * buffer of decompressed records, the writer's side deflates batches of
 * records into such payloads.  Both are one zstd stream per file, as perf
 * writes and reads them (a record may begin in one compressed record and
 * end in the next).
 *
 * A compressed record may inflate to the COMPRESSED feature's mmap size
 * (the recording's ring, which perf compresses a ring's worth at a time;
 * 1 MiB to 1 GiB, 64 MiB without the feature: window.c), no more: a bomb
 * stops there with an error.  The writer gathers records into batches of
 * at most a ring's worth, deflated and flushed at each FINISHED_ROUND
 * (which stays plain) or when full, so no compressed record inflates past
 * the mmap size written in the feature. */
#include <sanitizer/asan_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

#include "format/format-internal.h"
#include "format/writer-internal.h"

/* ---- Reading ------------------------------------------------------------ */

/* Decompressed offset where a compressed record's output begins, and the
 * record's offset in the input: what an error or an event names. */
struct pdz_seg {
	u64 zoff, file_off;
};

struct pdz_stream {
	ZSTD_DCtx *ds;
	u8 *buf;               /* decompressed bytes [base, base + len) */
	u64 base;
	size_t len, cap;
	VEC(struct pdz_seg) segs;
};

struct pdz_stream *pdz_new(void)
{
	struct pdz_stream *z = xcalloc(1, sizeof(*z));
	z->ds = xneed(ZSTD_createDCtx(), "a zstd context");
	return z;
}

void pdz_free(struct pdz_stream *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->ds);
	VEC_FREE(&z->segs);
	if (z->buf)
		ASAN_UNPOISON_MEMORY_REGION(z->buf, z->cap);
	free(z->buf);
	free(z);
}

const u8 *pdz_at(const struct pdz_stream *z, u64 zoff)
{
	return z->buf + (zoff - z->base);
}

u64 pdz_end(const struct pdz_stream *z)
{
	return z->base + z->len;
}

/* The compressed record whose output holds byte zoff: the last segment
 * beginning at or before it. */
u64 pdz_file_offset(const struct pdz_stream *z, u64 zoff)
{
	size_t lo = 0, hi = z->segs.n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->segs.v[mid].zoff <= zoff)
			lo = mid;
		else
			hi = mid;
	}
	return z->segs.n ? z->segs.v[lo].file_off : 0;
}

/* Drops what lies before keep (rounded down to 8, so a record's alignment
 * in the buffer is its alignment in the decompressed stream), and the
 * segments that end before it. */
static void slide(struct pdz_stream *z, u64 keep)
{
	keep = MIN(MAX(keep, z->base), pdz_end(z)) & ~(u64)7;
	size_t drop = (size_t)(keep - z->base);
	if (drop) {
		memmove(z->buf, z->buf + drop, z->len - drop);
		z->len -= drop;
	}
	z->base = keep;
	size_t first = 0;
	while (first + 1 < z->segs.n && z->segs.v[first + 1].zoff <= keep)
		first++;
	if (first) {
		memmove(z->segs.v, z->segs.v + first, (z->segs.n - first) * sizeof(*z->segs.v));
		z->segs.n -= first;
	}
}

/* Under ASan the room past the decompressed bytes is poisoned, so a read
 * past them is reported although the buffer goes on (no-ops otherwise). */
static void poison_room(struct pdz_stream *z)
{
	if (z->buf)
		ASAN_POISON_MEMORY_REGION(z->buf + z->len, z->cap - z->len);
}

/* Room for at least want more bytes at the end. */
static void reserve(struct pdz_stream *z, size_t want)
{
	if (z->cap - z->len >= want)
		return;
	size_t cap = z->cap ? z->cap : 1u << 20;
	while (cap - z->len < want)
		cap *= 2;
	if (z->buf)
		ASAN_UNPOISON_MEMORY_REGION(z->buf + z->len, z->cap - z->len);
	z->buf = xrealloc(z->buf, cap);
	z->cap = cap;
}

static int inflate(struct pdz_stream *z, const u8 *src, size_t n, u64 file_off, u64 keep,
		   size_t limit)
{
	slide(z, keep);
	struct pdz_seg seg = { pdz_end(z), file_off };
	VEC_PUSH(&z->segs, seg);
	ZSTD_inBuffer in = { src, n, 0 };
	size_t produced = 0, chunk = ZSTD_DStreamOutSize();
	for (;;) {
		reserve(z, chunk);
		ASAN_UNPOISON_MEMORY_REGION(z->buf + z->len, z->cap - z->len);
		/* One byte past the limit tells a bomb from data that fits. */
		size_t room = MIN(z->cap - z->len, limit + 1 - produced);
		ZSTD_outBuffer out = { z->buf + z->len, room, 0 };
		size_t in_before = in.pos;
		size_t ret = ZSTD_decompressStream(z->ds, &out, &in);
		if (ZSTD_isError(ret)) {
			err_set("compressed data is damaged (zstd: %s)", ZSTD_getErrorName(ret));
			return -1;
		}
		z->len += out.pos;
		produced += out.pos;
		if (produced > limit) {
			err_set("compressed record inflates to more than %zu bytes, the most "
				"a recording's ring holds: damaged or hostile data", limit);
			return -1;
		}
		if (in.pos == in.size && out.pos < room)
			return 0;      /* all input taken, all output given */
		if (out.pos == 0 && in.pos == in_before) {
			err_set("compressed data is damaged (zstd made no progress)");
			return -1;
		}
	}
}

int pdz_inflate(struct pdz_stream *z, const u8 *src, size_t n, u64 file_off, u64 keep,
		size_t limit)
{
	int rc = inflate(z, src, n, file_off, keep, limit);
	poison_room(z);
	return rc;
}

/* ---- Writing ------------------------------------------------------------ */

/* Payload bytes per record: the record's u16 size holds the header too. */
#define PDZ_PAYLOAD_MAX (0xffffu - sizeof(struct perf_event_header))

struct pdz_out {
	ZSTD_CCtx *cc;
	u8 *rec;               /* one COMPRESSED record being filled */
	u64 in_bytes, out_bytes;
};

struct pdz_out *pdz_out_new(int level)
{
	struct pdz_out *o = xcalloc(1, sizeof(*o));
	o->cc = xneed(ZSTD_createCCtx(), "a zstd context");
	ZSTD_CCtx_setParameter(o->cc, ZSTD_c_compressionLevel, level);
	o->rec = xmalloc(0xffff);
	return o;
}

void pdz_out_free(struct pdz_out *o)
{
	if (!o)
		return;
	ZSTD_freeCCtx(o->cc);
	free(o->rec);
	free(o);
}

/* Compresses n bytes and flushes them, so the records emitted hold all of
 * them (a reader inflates no more than n bytes from any of them).  Each
 * record goes to emit; -1 when emit fails or zstd does (err_set). */
int pdz_deflate(struct pdz_out *o, const void *src, size_t n,
		int (*emit)(void *ctx, const void *rec, size_t len), void *ctx)
{
	ZSTD_inBuffer in = { src, n, 0 };
	size_t left;
	do {
		ZSTD_outBuffer out = { o->rec + sizeof(struct perf_event_header),
				       PDZ_PAYLOAD_MAX, 0 };
		left = ZSTD_compressStream2(o->cc, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(left)) {
			err_set("zstd: %s", ZSTD_getErrorName(left));
			return -1;
		}
		if (!out.pos)
			continue;
		struct perf_event_header h = { PD_RECORD_COMPRESSED, 0,
					       (u16)(sizeof(h) + out.pos) };
		memcpy(o->rec, &h, sizeof(h));
		if (emit(ctx, o->rec, h.size) < 0)
			return -1;
		o->out_bytes += h.size;
	} while (left);
	o->in_bytes += n;
	return 0;
}

void pdz_out_totals(const struct pdz_out *o, u64 *in, u64 *out)
{
	*in = o->in_bytes;
	*out = o->out_bytes;
}
