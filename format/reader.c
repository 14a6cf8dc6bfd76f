/* reader.c - reads perf.data files and streams: the header, attrs and
 * features, then records one at a time, decoded (decode.c) and (by
 * default) put back into time order with the FINISHED_ROUND protocol.
 *
 * Records are read into a window that slides along the input (pread for
 * files, read for streams) and are handed out in place; the window keeps
 * every record still queued for ordering.  Copying from the page cache
 * costs about half of what mapping every page of a large file does, and
 * memory stays at the window, not the file.  A file's header and features
 * are read through a mapping, where only the pages touched fault in.
 * Every size read from the input is checked against what remains before
 * it is used.
 *
 * Compressed records (perf record -z) are inflated as they are read into
 * a second buffer (compress.c) that slides the same way: the records in
 * it are queued, ordered and handed out like the others, by offsets in
 * the decompressed stream marked with ZOFF. */
#include "format/format-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define MAX_RECORD 65535
/* Without FINISHED_ROUND records the queue is flushed oldest-first once it
 * holds this many events, or its records span this many bytes of input (the
 * window keeps them all): a bounded reorder window. */
#define REORDER_WINDOW (1u << 20)
#define REORDER_BYTES (256ull << 20)
/* A queued offset with this bit is one in the decompressed stream. */
#define ZOFF (1ull << 63)
/* The most one compressed record may inflate to, when the COMPRESSED
 * feature gives no mmap size, and the bounds put on the size it gives. */
#define INFLATE_DEFAULT (64u << 20)
#define INFLATE_MIN (1u << 20)
#define INFLATE_MAX (1u << 30)

struct queued {
	u64 time;
	u64 seq;    /* arrival order: ties keep input order */
	u64 offset; /* where the record is in the input (and the window) */
};

struct feature {
	const u8 *data;
	u64 len;
};

struct pd_reader {
	bool pipe, ordered;
	bool rounds;           /* deliver FINISHED_ROUND (pd_reader_opts) */
	bool round_seen;       /* ... one was read, not delivered yet */
	int fd;
	/* file mode */
	const u8 *map;
	size_t map_len;
	u64 data_begin, data_end;
	/* input bytes [win_off, win_off + win_len) are at win */
	u8 *win;
	u64 win_off;
	size_t win_len, win_cap;
	u64 hold_from;         /* lowest offset a queued record may have */
	u64 pos;               /* offset of the next record in the input */
	bool ended;            /* input exhausted (or stopped by an error) */
	/* decompressed records: [zpos, end of z) not yet read */
	struct pdz_stream *z;
	u64 zpos;
	u64 zhold_from;        /* lowest decompressed offset a queued record has */
	bool failed;           /* an error is pending after the queue drains */
	char error[512];

	VEC(struct pd_attr) attrs;
	struct u64map id_to_attr;  /* kernel id -> index + 1 */
	u64 last_id;           /* attr_by_id's last answer: records come in */
	size_t last_attr;      /* runs of one event (index + 1, 0 = none) */
	bool same_layout;      /* all attrs share sample_type (id positions) */

	struct feature feat[PD_FEAT_MAX];
	VEC(u8 *) owned;       /* feature bodies copied from a stream */
	char *strings[PD_FEAT_MAX];
	VEC(struct pd_reader_build_id) build_ids;
	VEC(struct pd_group) groups;

	/* time ordering */
	VEC(struct queued) queue;
	VEC(struct queued) merge_tmp;
	size_t out_next, out_end;  /* queue[out_next..out_end) are ready */
	u64 seq, max_time, round_limit, last_out_time;
	VEC(u64) scratch;      /* aligned copy of one record */

	struct pd_reader_stats stats;
};

/* A decompressed offset is named by its compressed record's offset and
 * its place in the decompressed stream. */
static int fail_at(struct pd_reader *r, u64 offset, const char *what)
{
	if (offset & ZOFF)
		snprintf(r->error, sizeof(r->error),
			 "offset %#llx (compressed; byte %llu of the decompressed data): %s",
			 (unsigned long long)pdz_file_offset(r->z, offset & ~ZOFF),
			 (unsigned long long)(offset & ~ZOFF), what);
	else
		snprintf(r->error, sizeof(r->error), "offset %#llx: %s",
			 (unsigned long long)offset, what);
	r->failed = true;
	r->ended = true;
	return -1;
}

/* ---- attrs ------------------------------------------------------------- */

static const char *software_name(u64 config)
{
	static const char *const names[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output",
		"cgroup-switches",
	};
	return config < ARRAY_SIZE(names) ? names[config] : "software";
}

static const char *hardware_name(u64 config)
{
	static const char *const names[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
	};
	return config < ARRAY_SIZE(names) ? names[config] : "hardware";
}

/* A name from type and config, until EVENT_DESC gives the real one. */
static char *default_name(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_SOFTWARE)
		return xstrdup(software_name(a->config));
	if (a->type == PERF_TYPE_HARDWARE)
		return xstrdup(hardware_name(a->config));
	return xasprintf("%u:%#llx", a->type, (unsigned long long)a->config);
}

/* Counts what a newer perf wrote that this reader skips, for the views'
 * one-line note: a feature section it has no id for. */
static void note_feature(struct pd_reader *r, int feat)
{
	if (feat <= PD_FEAT_LAST_KNOWN)
		return;
	if (!r->stats.unknown_features++)
		r->stats.first_unknown_feature = feat;
}

/* ... and an event whose samples cannot be decoded past their counter
 * values (read_format bits newer than this ABI). */
static void note_attr(struct pd_reader *r, const struct perf_event_attr *a)
{
	if ((a->sample_type & PERF_SAMPLE_READ) && a->read_format >= PERF_FORMAT_MAX)
		r->stats.unknown_read_formats++;
}

/* Copies an on-disk attr of `size` bytes into a zeroed struct, so fields
 * newer than the file read as 0 and fields newer than us are ignored. */
static int add_attr(struct pd_reader *r, const u8 *p, size_t size, const u8 *ids,
		    size_t nids, u64 offset)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	if (size < PERF_ATTR_SIZE_VER0)
		return fail_at(r, offset, "event attribute too small");
	memcpy(&attr, p, MIN(size, sizeof(attr)));
	attr.size = sizeof(attr);
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	a.ids = xcalloc(nids ? nids : 1, sizeof(u64));
	for (size_t i = 0; i < nids; i++)
		a.ids[i] = get_u64(ids + 8 * i);
	a.nids = nids;
	a.index = (int)r->attrs.n;
	a.name = default_name(&a.attr);
	VEC_PUSH(&r->attrs, a);
	note_attr(r, &a.attr);
	for (size_t i = 0; i < nids; i++)
		*u64map_slot(&r->id_to_attr, a.ids[i], NULL) = r->attrs.n;
	r->last_attr = 0;      /* an id may have moved to the new attr */
	r->same_layout = true;
	for (size_t i = 1; i < r->attrs.n; i++)
		if (r->attrs.v[i].attr.sample_type != r->attrs.v[0].attr.sample_type)
			r->same_layout = false;
	return 0;
}

static const struct pd_attr *attr_by_id(struct pd_reader *r, u64 id)
{
	if (r->last_attr && r->last_id == id)
		return &r->attrs.v[r->last_attr - 1];
	const u64 *slot = u64map_get(&r->id_to_attr, id);
	if (!slot)
		return r->attrs.n ? &r->attrs.v[0] : NULL;
	r->last_id = id;
	r->last_attr = *slot;
	return &r->attrs.v[*slot - 1];
}

/* Which attr a record belongs to.  With PERF_SAMPLE_IDENTIFIER the id is at
 * a fixed place; otherwise only a common sample_type makes ID findable. */
static const struct pd_attr *attr_of(struct pd_reader *r, const u8 *rec,
				     size_t size, u32 type)
{
	if (r->attrs.n <= 1)
		return r->attrs.n ? &r->attrs.v[0] : NULL;
	const struct perf_event_attr *a0 = &r->attrs.v[0].attr;
	u64 t = a0->sample_type;
	if (type == PERF_RECORD_SAMPLE) {
		if (t & PERF_SAMPLE_IDENTIFIER)
			return size >= 16 ? attr_by_id(r, get_u64(rec + 8)) : NULL;
		if (!r->same_layout || !(t & PERF_SAMPLE_ID))
			return &r->attrs.v[0];
		size_t pos = 8;
		pos += (t & PERF_SAMPLE_IP) ? 8 : 0;
		pos += (t & PERF_SAMPLE_TID) ? 8 : 0;
		pos += (t & PERF_SAMPLE_TIME) ? 8 : 0;
		pos += (t & PERF_SAMPLE_ADDR) ? 8 : 0;
		return pos + 8 <= size ? attr_by_id(r, get_u64(rec + pos)) : NULL;
	}
	if (!a0->sample_id_all)
		return &r->attrs.v[0];
	if (t & PERF_SAMPLE_IDENTIFIER)
		return size >= 16 ? attr_by_id(r, get_u64(rec + size - 8)) : NULL;
	if (!r->same_layout || !(t & PERF_SAMPLE_ID))
		return &r->attrs.v[0];
	size_t from_end = 8;
	from_end += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	from_end += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	return size >= 8 + from_end ? attr_by_id(r, get_u64(rec + size - from_end)) : NULL;
}

/* ---- decoding ------------------------------------------------------------ */

/* Fills ev from one whole kernel record at rec (8-byte aligned), decoded
 * by decode.c with the attr the record names. */
static int decode(struct pd_reader *r, const u8 *rec, u64 offset, struct pd_event *ev)
{
	const struct perf_event_header *h = (const void *)rec;
	/* perf's own record types carry no sample_id trailer. */
	const struct pd_attr *a = h->type < PD_RECORD_HEADER_ATTR ?
				  attr_of(r, rec, h->size, h->type) : NULL;
	int rc = pd_decode(a, rec, ev);
	ev->offset = (offset & ZOFF) ? pdz_file_offset(r->z, offset & ~ZOFF) : offset;
	if (rc < 0) {
		char what[96];
		snprintf(what, sizeof(what), "record of type %u and size %u is malformed",
			 h->type, h->size);
		return fail_at(r, offset, what);
	}
	return 0;
}

/* A record handed on with its body unread: no view may lose it unsaid. */
static void count_undecoded(struct pd_reader *r, u32 type)
{
	struct pd_reader_stats *st = &r->stats;
	st->nr_undecoded++;
	for (int i = 0; i < st->nr_undecoded_types; i++)
		if (st->undecoded[i].type == type) {
			st->undecoded[i].count++;
			return;
		}
	if (st->nr_undecoded_types < (int)ARRAY_SIZE(st->undecoded)) {
		st->undecoded[st->nr_undecoded_types].type = type;
		st->undecoded[st->nr_undecoded_types++].count = 1;
	}
}

/* Counts what the input holds, once per record as it is read. */
static void count_record(struct pd_reader *r, const struct pd_event *ev)
{
	if (ev->type == PERF_RECORD_SAMPLE) {
		r->stats.nr_samples++;
	} else if (ev->type == PERF_RECORD_LOST) {
		r->stats.nr_lost_records++;
		r->stats.lost_samples += ev->u.lost.lost;
	} else if (ev->type == PERF_RECORD_LOST_SAMPLES) {
		r->stats.lost_samples += ev->u.lost_samples.lost;
	} else if (!pdd_type_decoded(ev->type)) {
		count_undecoded(r, ev->type);
	}
}

/* ---- input: a window on the file (pread) or the stream (read) ---------- */

/* The largest first window, and how much one read asks for.  A file's
 * first window is smaller when its data is; a stream's starts small.  The
 * window doubles when the records still queued fill half of it. */
#define WINDOW_START (8u << 20)
#define WINDOW_STREAM_START (64u << 10)
#define WINDOW_READ (1u << 20)

/* Where the bytes of input offset off are; the window (or, for a
 * decompressed offset, the decompressed buffer) holds them. */
static const u8 *win_at(const struct pd_reader *r, u64 off)
{
	if (off & ZOFF)
		return pdz_at(r->z, off & ~ZOFF);
	return r->win + (off - r->win_off);
}

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

/* Makes input bytes [r->pos, r->pos + n) available in the window,
 * keeping every record still queued.  1 when they are, 0 when the input
 * ends first, -1 on a failed read. */
static int window_need(struct pd_reader *r, size_t n)
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

/* An aligned copy of a record that sits misaligned (after a compressed
 * record, whose size need not be a multiple of 8). */
static const u8 *aligned(struct pd_reader *r, const u8 *src, u16 size)
{
	if (!((uintptr_t)src & 7))
		return src;
	VEC_GROW(&r->scratch, (size_t)(size + 7) / 8);
	memcpy(r->scratch.v, src, size);
	return (const u8 *)r->scratch.v;
}

/* The next record of the input file or stream itself, as next_raw. */
static int next_file_record(struct pd_reader *r, const u8 **rec, u64 *offset)
{
	*offset = r->pos;
	if (!r->pipe) {
		if (r->pos >= r->data_end)
			return 0;
		if (r->data_end - r->pos < 8)
			return r->stats.truncated ? 0 : fail_at(r, r->pos, "truncated record header");
	}
	int got = window_need(r, 8);
	if (got < 0 && !r->pipe)
		return fail_at(r, r->pos, "cannot read the file");
	if (got <= 0)   /* a stream ends cleanly only between records */
		return r->win_off + r->win_len == r->pos ? 0 :
		       fail_at(r, r->pos, "truncated record header");
	u8 hdr[8];
	memcpy(hdr, win_at(r, r->pos), 8);
	u16 size = get_u32(hdr + 4) >> 16;
	if (size < 8)
		return fail_at(r, r->pos, "record size is smaller than its header");
	/* A file cut while recording ends with a partial record. */
	if (!r->pipe && r->data_end - r->pos < size)
		return r->stats.truncated ? 0 :
		       fail_at(r, r->pos, "record runs past the end of the data");
	if (window_need(r, size) != 1)
		return fail_at(r, r->pos, r->pipe ? "record runs past the end of the stream"
						  : "cannot read the file");
	const u8 *src = win_at(r, r->pos);
	r->pos += size;
	*rec = aligned(r, src, size);
	return 1;
}

/* ---- compressed records --------------------------------------------------- */

/* What one compressed record may inflate to: the recording's ring size
 * (the COMPRESSED feature's mmap size; perf compresses a ring's worth at
 * a time), within bounds; 0 when the feature names no zstd. */
static size_t inflate_limit(const struct pd_reader *r)
{
	const struct feature *f = &r->feat[PD_FEAT_COMPRESSED];
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
			return fail_at(r, offset, "compressed record's data size runs past it");
		data = rec + 16;
		n = (size_t)get_u64(rec + 8);
	}
	size_t limit = inflate_limit(r);
	if (!limit)
		return fail_at(r, offset, "the COMPRESSED feature names a method other than "
				  "zstd, the only one perf writes");
	if (!r->z)
		r->z = pdz_new();
	r->stats.nr_compressed++;
	if (pdz_inflate(r->z, data, n, offset, MIN(r->zpos, r->zhold_from), limit) < 0)
		return fail_at(r, offset, err_msg());
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
		return fail_at(r, ZOFF | r->zpos, "record size is smaller than its header");
	if (end - r->zpos < size)
		return 0;
	/* Their bodies would lie outside the record, or nest compression. */
	if (type == PD_RECORD_HEADER_TRACING_DATA || type == PD_RECORD_COMPRESSED ||
	    type == PD_RECORD_COMPRESSED2 || type == PD_RECORD_AUXTRACE)
		return fail_at(r, ZOFF | r->zpos, "a record of this type cannot be compressed");
	*offset = ZOFF | r->zpos;
	r->zpos += size;
	*rec = aligned(r, src, size);
	return 1;
}

/* Compressed data left at the end: a record cut short, unless the file
 * itself was (its recorder killed). */
static int inflated_end(struct pd_reader *r)
{
	if (!r->z || pdz_end(r->z) == r->zpos || r->stats.truncated)
		return 0;
	return fail_at(r, ZOFF | r->zpos, "compressed data ends inside a record");
}

/* Returns the next raw record of the input (not yet decoded) in *rec, or
 * 0 at the end, -1 on error: the records inflated from compressed ones
 * first, then the input's own.  *rec is 8-byte aligned and valid until
 * the next call. */
static int next_raw(struct pd_reader *r, const u8 **rec, u64 *offset)
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

/* ---- records perf's tools add (types >= 64) ----------------------------- */

static void keep_feature(struct pd_reader *r, int feat, const u8 *p, u64 len)
{
	if (feat <= 0 || feat >= PD_FEAT_MAX)
		return;
	u8 *copy = xmalloc(len ? len : 1);
	memcpy(copy, p, len);
	VEC_PUSH(&r->owned, copy);
	r->feat[feat].data = copy;
	r->feat[feat].len = len;
}

/* The body of a HEADER_TRACING_DATA record follows it outside its size. */
static int read_tracing_data(struct pd_reader *r, const u8 *rec, u16 size, u64 offset)
{
	if (size < 12)
		return fail_at(r, offset, "tracing-data record too small");
	u32 len = get_u32(rec + 8);
	if (!r->pipe && r->data_end - r->pos < len)
		return fail_at(r, offset, "tracing data runs past the end");
	if (window_need(r, len) != 1)
		return fail_at(r, offset, r->pipe ? "tracing data runs past the end of the stream"
						  : "cannot read the file");
	keep_feature(r, PD_FEAT_TRACING_DATA, win_at(r, r->pos), len);
	r->pos += len;
	return 0;
}

static void add_build_id(struct pd_reader *r, const u8 *rec, size_t size)
{
	/* header, s32 pid, u8 build_id[24] (size at [20] when flagged), name */
	if (size < 8 + 4 + 24 + 1)
		return;
	const char *name = pdd_string_in(rec + 36, rec + size);
	if (!name)
		return;
	struct pd_reader_build_id b;
	u16 misc = (u16)(get_u32(rec + 4) & 0xffff);
	b.pid = (s32)get_u32(rec + 8);
	b.cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	memcpy(b.id, rec + 12, 20);
	b.size = (misc & (1 << 15)) ? MIN(rec[32], 20) : 20;
	b.filename = xstrdup(name);
	VEC_PUSH(&r->build_ids, b);
}

static void parse_feature(struct pd_reader *r, int feat);

/* Handles one user record. 1 when consumed here, 0 to deliver, -1 error. */
static int user_record(struct pd_reader *r, const u8 *rec, u64 offset)
{
	u16 size = get_u32(rec + 4) >> 16;
	switch (get_u32(rec)) {
	case PD_RECORD_HEADER_ATTR: {
		if (size < 8 + PERF_ATTR_SIZE_VER0)
			return fail_at(r, offset, "attr record too small");
		u32 asize = get_u32(rec + 12);
		if (asize == 0)
			asize = PERF_ATTR_SIZE_VER0;
		if (asize > (u32)size - 8u)
			return fail_at(r, offset, "attr record's attr size runs past it");
		size_t nids = (size - 8 - asize) / 8;
		return add_attr(r, rec + 8, asize, rec + 8 + asize, nids, offset) < 0 ? -1 : 1;
	}
	case PD_RECORD_HEADER_TRACING_DATA:
		return read_tracing_data(r, rec, size, offset) < 0 ? -1 : 1;
	case PD_RECORD_HEADER_FEATURE:
		/* One with no body is perf's end-of-features mark (its id is
		 * the writer's feature count), not a feature. */
		if (size > 16 && get_u64(rec + 8) < PD_FEAT_MAX) {
			int feat = (int)get_u64(rec + 8);
			note_feature(r, feat);
			keep_feature(r, feat, rec + 16, size - 16u);
			parse_feature(r, feat);
		}
		return 1;
	case PD_RECORD_HEADER_BUILD_ID:
		add_build_id(r, rec, size);
		return 1;
	/* Read and dropped on purpose, as nothing a view shows is in them:
	 * markers (rounds are handled by the caller, FINISHED_INIT ends the
	 * synthesized part); the event-type names of old perf files, which
	 * EVENT_DESC gives again; the id -> cpu/tid index, while records carry
	 * their own; TSC conversion, for hardware traces only; the thread and
	 * CPU lists of the recording's targets; event updates (the CPUs of an
	 * event, its name again in a stream, stat's units and scales). */
	case PD_RECORD_FINISHED_ROUND:
	case PD_RECORD_HEADER_EVENT_TYPE:
	case PD_RECORD_ID_INDEX:
	case PD_RECORD_FINISHED_INIT:
	case PD_RECORD_TIME_CONV:
	case PD_RECORD_THREAD_MAP:
	case PD_RECORD_CPU_MAP:
	case PD_RECORD_EVENT_UPDATE:
		return 1;
	default:
		return 0;      /* delivered; counted when decode.c has no body */
	}
}

/* ---- ordering ------------------------------------------------------------ */

/* Drops the already delivered prefix of the queue. */
static void queue_compact(struct pd_reader *r)
{
	if (r->out_next == 0)
		return;
	size_t rest = r->queue.n - r->out_next;
	memmove(r->queue.v, r->queue.v + r->out_next, rest * sizeof(struct queued));
	r->queue.n = rest;
	r->out_next = r->out_end = 0;
}

static bool queued_before(const struct queued *x, const struct queued *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/* Merges the sorted runs a[0..na) and a[na..n) through tmp. */
static void merge_runs(struct queued *a, size_t na, size_t n, struct queued *tmp)
{
	size_t i = 0, j = na, k = 0;
	while (i < na && j < n)
		tmp[k++] = queued_before(&a[j], &a[i]) ? a[j++] : a[i++];
	while (i < na)
		tmp[k++] = a[i++];
	memcpy(a, tmp, k * sizeof(*a));   /* a[j..n) is already in place */
}

/* Sorts the queue by time.  Each CPU's ring is already in time order, so
 * the queue is a few sorted runs: merging them is close to linear. */
static void queue_sort(struct pd_reader *r)
{
	struct queued *a = r->queue.v;
	size_t n = r->queue.n;
	VEC_GROW(&r->merge_tmp, n);
	for (;;) {
		size_t start = 0, merged = 0;
		while (start < n) {
			size_t end = start + 1;
			while (end < n && !queued_before(&a[end], &a[end - 1]))
				end++;
			size_t end2 = end;
			if (end < n) {
				end2 = end + 1;
				while (end2 < n && !queued_before(&a[end2], &a[end2 - 1]))
					end2++;
				merge_runs(a + start, end - start, end2 - start, r->merge_tmp.v);
				merged++;
			}
			start = end2;
		}
		if (!merged)
			return;
	}
}

/* Sorts the queue and marks the events with time <= limit as ready. */
static void queue_release(struct pd_reader *r, u64 limit)
{
	queue_compact(r);
	queue_sort(r);
	size_t k = 0;
	while (k < r->queue.n && r->queue.v[k].time <= limit)
		k++;
	r->out_next = 0;
	r->out_end = k;
	/* The window must keep what stays queued; records queued later come
	 * from r->pos on.  (Released ones are all delivered before the next
	 * read: fill_queue reads only when none is left.) */
	r->hold_from = r->pos;
	r->zhold_from = r->zpos;
	for (size_t i = k; i < r->queue.n; i++) {
		u64 off = r->queue.v[i].offset;
		if (off & ZOFF)
			r->zhold_from = MIN(r->zhold_from, off & ~ZOFF);
		else
			r->hold_from = MIN(r->hold_from, off);
	}
}

static void enqueue(struct pd_reader *r, u64 offset, u64 time)
{
	struct queued q = { time, r->seq++, offset };
	VEC_PUSH(&r->queue, q);
	if (time > r->max_time)
		r->max_time = time;
}

/* A record's time, read straight from where its attr's sample_type puts
 * it (the full decode waits until the record is delivered).  Untimed or
 * too-short records get the latest time seen: they stay near their
 * neighbours. */
static u64 record_time(struct pd_reader *r, const u8 *rec)
{
	u16 size = get_u32(rec + 4) >> 16;
	u32 type = get_u32(rec);
	const struct pd_attr *a = attr_of(r, rec, size, type);
	if (!a || !(a->attr.sample_type & PERF_SAMPLE_TIME))
		return r->max_time;
	u64 t = a->attr.sample_type;
	size_t pos;
	if (type == PERF_RECORD_SAMPLE) {
		pos = 8 + ((t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0) + ((t & PERF_SAMPLE_IP) ? 8 : 0) +
		      ((t & PERF_SAMPLE_TID) ? 8 : 0);
	} else {
		if (!a->id_trailer_size || size < 8 + a->id_trailer_size)
			return r->max_time;
		pos = size - a->id_trailer_size + ((t & PERF_SAMPLE_TID) ? 8 : 0);
	}
	return pos + 8 <= size ? get_u64(rec + pos) : r->max_time;
}

/* Reads one record of the input into the queue (or handles it here).
 * 1 when something was read, 0 at the end, -1 on an error. */
static int queue_one(struct pd_reader *r)
{
	const u8 *rec;
	u64 offset;
	int got = next_raw(r, &rec, &offset);
	if (got <= 0)
		return got;
	u32 type = get_u32(rec);
	if (type == PD_RECORD_FINISHED_ROUND) {
		queue_release(r, r->round_limit);
		r->round_limit = r->max_time;
		r->round_seen = r->rounds;
		return 1;
	}
	if (type >= PD_RECORD_HEADER_ATTR) {
		int used = user_record(r, rec, offset);
		if (used)
			return used < 0 ? -1 : 1;
	}
	u64 time = record_time(r, rec);
	if (time < r->last_out_time)
		r->stats.reordered_late++;
	enqueue(r, offset, time);
	size_t queued = r->queue.n - r->out_next;
	bool held_big = r->pos - r->hold_from >= REORDER_BYTES ||
			(r->z && r->zpos - r->zhold_from >= REORDER_BYTES);
	if (queued >= REORDER_WINDOW || (queued > 1 && held_big)) {
		/* the oldest half by time */
		queue_compact(r);
		queue_sort(r);
		queue_release(r, r->queue.v[queued / 2].time);
	}
	return 1;
}

/* Reads input until some events are ready or the input ends.  At the end,
 * or at an error, everything queued is released: what was readable before
 * a damaged record is still delivered, and the error comes after it. */
static void fill_queue(struct pd_reader *r)
{
	while (r->out_next == r->out_end && !r->ended && !r->round_seen) {
		if (queue_one(r) <= 0) {
			r->ended = true;
			queue_release(r, UINT64_MAX);
		}
	}
}

static int next_ordered(struct pd_reader *r, struct pd_event *ev)
{
	if (r->out_next == r->out_end)
		fill_queue(r);
	if (r->out_next == r->out_end && r->round_seen) {
		r->round_seen = false;
		memset(ev, 0, sizeof(*ev));
		ev->type = PD_RECORD_FINISHED_ROUND;
		return 1;
	}
	if (r->out_next == r->out_end) {
		if (r->failed) {
			err_set("%s", r->error);
			return -1;
		}
		return 0;
	}
	struct queued *q = &r->queue.v[r->out_next++];
	const u8 *rec = win_at(r, q->offset);
	rec = aligned(r, rec, get_u32(rec + 4) >> 16);
	r->last_out_time = q->time;
	if (decode(r, rec, q->offset, ev) < 0) {
		/* A damaged record ends the input here. */
		r->out_next = r->out_end = r->queue.n;
		err_set("%s", r->error);
		return -1;
	}
	count_record(r, ev);
	return 1;
}

static int next_unordered(struct pd_reader *r, struct pd_event *ev)
{
	for (;;) {
		const u8 *rec;
		u64 offset;
		if (r->ended) {
			if (r->failed)
				err_set("%s", r->error);
			return r->failed ? -1 : 0;
		}
		int got = next_raw(r, &rec, &offset);
		if (got == 0) {
			r->ended = true;
			return 0;
		}
		if (got < 0) {
			err_set("%s", r->error);
			return -1;
		}
		if (get_u32(rec) >= PD_RECORD_HEADER_ATTR) {
			int used = user_record(r, rec, offset);
			if (used < 0) {
				err_set("%s", r->error);
				return -1;
			}
			if (used)
				continue;
		}
		if (decode(r, rec, offset, ev) < 0) {
			err_set("%s", r->error);
			return -1;
		}
		count_record(r, ev);
		return 1;
	}
}

int pd_reader_next(struct pd_reader *r, struct pd_event *ev)
{
	return r->ordered ? next_ordered(r, ev) : next_unordered(r, ev);
}

/* ---- opening: header, attrs, features ----------------------------------- */

static void parse_string_feature(struct pd_reader *r, int feat)
{
	const struct feature *f = &r->feat[feat];
	if (!f->data || f->len < 4)
		return;
	u32 len = get_u32(f->data);
	if (len > f->len - 4)
		return;
	free(r->strings[feat]);
	r->strings[feat] = strndup((const char *)f->data + 4, len);
}

/* Names attrs from EVENT_DESC: u32 nr, u32 attr_size, then per event the
 * attr, u32 nr_ids, a string, and the ids. */
static void parse_event_desc(struct pd_reader *r)
{
	const struct feature *f = &r->feat[PD_FEAT_EVENT_DESC];
	if (!f->data || f->len < 8)
		return;
	struct cursor c = { f->data, f->data + f->len };
	u32 nr, asize, nids, slen;
	if (!take_pair32(&c, &nr, &asize))
		return;
	for (u32 i = 0; i < nr && i < r->attrs.n; i++) {
		const u8 *p;
		if (!take(&c, asize, NULL) || !take(&c, 8, &p))
			return;
		nids = get_u32(p);
		slen = get_u32(p + 4);
		const u8 *name;
		if (!take(&c, slen, &name) || !take_array(&c, nids, 8, NULL))
			return;
		if (slen && memchr(name, 0, slen)) {
			free(r->attrs.v[i].name);
			r->attrs.v[i].name = xstrdup((const char *)name);
		}
	}
}

static void free_groups(struct pd_reader *r)
{
	for (size_t i = 0; i < r->groups.n; i++)
		free(r->groups.v[i].name);
	r->groups.n = 0;
}

/* GROUP_DESC: u32 nr, then per group a string (u32 length, the padded
 * bytes), u32 leader index, u32 member count; "{anon_group}" is perf's
 * no name.  (A stream's may come before its attrs: users check the
 * indexes against pd_reader_nattrs.) */
static void parse_groups(struct pd_reader *r)
{
	const struct feature *f = &r->feat[PD_FEAT_GROUP_DESC];
	free_groups(r);
	if (!f->data || f->len < 4)
		return;
	struct cursor c = { f->data, f->data + f->len };
	const u8 *p;
	take(&c, 4, &p);
	u32 nr = get_u32(p);
	for (u32 i = 0; i < nr; i++) {
		u32 leader, members;
		const u8 *name;
		if (!take(&c, 4, &p))
			return;
		u32 len = get_u32(p);
		if (!take(&c, len, &name) || !take_pair32(&c, &leader, &members))
			return;
		if (!members)
			continue;
		const char *str = pdd_string_in(name, name + len);
		struct pd_group g = { NULL, leader, members };
		if (str && strcmp(str, "{anon_group}"))
			g.name = xstrdup(str);
		VEC_PUSH(&r->groups, g);
	}
}

static void parse_build_ids(struct pd_reader *r)
{
	const struct feature *f = &r->feat[PD_FEAT_BUILD_ID];
	if (!f->data)
		return;   /* no section: NULL + 0 is still undefined in C */
	const u8 *p = f->data, *end = f->data + f->len;
	while (end - p >= 8) {
		u16 size = get_u32(p + 4) >> 16;
		if (size < 8 || size > end - p)
			break;
		add_build_id(r, p, size);
		p += size;
	}
}

/* Makes the decoded form of one feature available. */
static void parse_feature(struct pd_reader *r, int feat)
{
	switch (feat) {
	case PD_FEAT_HOSTNAME:
	case PD_FEAT_OSRELEASE:
	case PD_FEAT_VERSION:
	case PD_FEAT_ARCH:
	case PD_FEAT_CPUDESC:
	case PD_FEAT_CPUID:
		parse_string_feature(r, feat);
		break;
	case PD_FEAT_EVENT_DESC:
		parse_event_desc(r);
		break;
	case PD_FEAT_BUILD_ID:
		parse_build_ids(r);
		break;
	case PD_FEAT_GROUP_DESC:
		parse_groups(r);
		break;
	}
}

/* The feature table follows the data: one (offset, size) per set bit. */
static void find_features(struct pd_reader *r, const u8 *bitmap, u64 table)
{
	for (int feat = 1; feat < PD_FEAT_MAX; feat++) {
		if (!(bitmap[feat / 8] & (1u << (feat % 8))))
			continue;
		note_feature(r, feat);
		if (table + 16 > r->map_len)
			return;
		u64 off = get_u64(r->map + table), len = get_u64(r->map + table + 8);
		table += 16;
		if (off > r->map_len || len > r->map_len - off)
			continue; /* a damaged section is skipped, not fatal */
		r->feat[feat].data = r->map + off;
		r->feat[feat].len = len;
	}
}

static int open_file(struct pd_reader *r, const char *path)
{
	struct stat st;
	if (fstat(r->fd, &st) < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	if (st.st_size < FILE_HEADER_SIZE) {
		err_set("%s: offset 0: file is too short for a perf.data header (%lld bytes)",
			path, (long long)st.st_size);
		return -1;
	}
	r->map_len = (size_t)st.st_size;
	/* Header, attrs and features only: the records come by pread. */
	void *m = mmap(NULL, r->map_len, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (m == MAP_FAILED) {
		err_set_errno("%s: cannot map", path);
		return -1;
	}
	r->map = m;
	const u8 *h = r->map;
	if (get_u64(h + 8) < FILE_HEADER_SIZE) {
		err_set("%s: offset 8: header size %llu is too small", path,
			(unsigned long long)get_u64(h + 8));
		return -1;
	}
	u64 attr_size = get_u64(h + 16), attrs_off = get_u64(h + 24),
	    attrs_len = get_u64(h + 32), data_off = get_u64(h + 40),
	    data_len = get_u64(h + 48);
	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096) {
		err_set("%s: offset 16: attr size %llu is not plausible", path,
			(unsigned long long)attr_size);
		return -1;
	}
	if (attrs_off > r->map_len || attrs_len > r->map_len - attrs_off) {
		err_set("%s: offset 24: attrs section lies outside the file", path);
		return -1;
	}
	for (u64 at = attrs_off; at + attr_size <= attrs_off + attrs_len; at += attr_size) {
		const u8 *fa = r->map + at;
		u64 ids_off = get_u64(fa + attr_size - 16), ids_len = get_u64(fa + attr_size - 8);
		if (ids_off > r->map_len || ids_len > r->map_len - ids_off) {
			err_set("%s: offset %#llx: event ids lie outside the file", path,
				(unsigned long long)at);
			return -1;
		}
		if (add_attr(r, fa, attr_size - 16, r->map + ids_off, ids_len / 8, at) < 0) {
			err_set("%s: %s", path, r->error);
			return -1;
		}
	}
	if (r->attrs.n == 0) {
		err_set("%s: offset 24: the file describes no events", path);
		return -1;
	}
	if (data_off < FILE_HEADER_SIZE || data_off > r->map_len) {
		err_set("%s: offset 40: data section starts outside the file", path);
		return -1;
	}
	r->data_begin = data_off;
	r->pos = data_off;
	r->win_off = data_off;
	r->hold_from = r->ordered ? data_off : UINT64_MAX;
	r->zhold_from = r->ordered ? 0 : UINT64_MAX;
	/* Writers add the features when they close the file: none means the
	 * recorder was killed or failed, and its header's data size is only
	 * its last checkpoint. */
	bool closed = false;
	for (int i = 0; i < PD_FEAT_MAX / 8; i++)
		closed |= h[72 + i] != 0;
	if (!closed || data_len == 0 || data_len > r->map_len - data_off) {
		/* A recorder that did not finish: read what is there. */
		r->stats.truncated = true;
		data_len = r->map_len - data_off;
	} else {
		find_features(r, h + 72, data_off + data_len);
	}
	r->data_end = data_off + data_len;
	r->stats.data_size = data_len;
	return 0;
}

static int open_stream(struct pd_reader *r, const char *path)
{
	if (window_need(r, PIPE_HEADER_SIZE) != 1) {
		err_set("%s: offset 0: stream ends before its header", path);
		return -1;
	}
	if (get_u64(win_at(r, 0)) != PD_MAGIC) {
		err_set("%s: offset 0: not a perf.data stream (bad magic)", path);
		return -1;
	}
	if (get_u64(win_at(r, 8)) != PIPE_HEADER_SIZE) {
		err_set("%s: offset 8: not a perf.data stream header", path);
		return -1;
	}
	r->pos = PIPE_HEADER_SIZE;
	return 0;
}

struct pd_reader *pd_reader_open(const char *path, const struct pd_reader_opts *opts)
{
	struct pd_reader *r = xcalloc(1, sizeof(*r));
	r->ordered = !(opts && opts->unordered);
	r->rounds = r->ordered && opts && opts->rounds;
	u64map_init(&r->id_to_attr);
	bool use_fd = opts && opts->fd > 0;
	bool use_stdin = use_fd || !strcmp(path, "-");
	r->fd = use_fd ? opts->fd : use_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err_set_errno("%s", path);
		goto fail;
	}
	u8 magic[16];
	if (!use_stdin) {
		ssize_t n = pread(r->fd, magic, sizeof(magic), 0);
		if (n < 8) {
			err_set("%s: offset 0: file is too short for a perf.data header", path);
			goto fail;
		}
		if (get_u64(magic) != PD_MAGIC) {
			err_set("%s: offset 0: not a perf.data file (bad magic)", path);
			goto fail;
		}
		r->pipe = n >= 16 && get_u64(magic + 8) == PIPE_HEADER_SIZE;
	} else {
		r->pipe = true;
	}
	if (r->pipe) {
		r->hold_from = r->ordered ? 0 : UINT64_MAX;
		r->zhold_from = r->hold_from;
		if (open_stream(r, path) < 0)
			goto fail;
	} else if (open_file(r, path) < 0) {
		goto fail;
	}
	if (!r->pipe) {
		for (int feat = 1; feat < PD_FEAT_MAX; feat++)
			parse_feature(r, feat);
	} else if (r->ordered) {
		/* Read the stream's attrs (they lead it) before returning. */
		fill_queue(r);
	}
	return r;
fail:
	pd_reader_close(r);
	return NULL;
}

void pd_reader_close(struct pd_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->map_len);
	if (r->fd > 0)
		close(r->fd);
	for (size_t i = 0; i < r->attrs.n; i++) {
		free(r->attrs.v[i].ids);
		free(r->attrs.v[i].name);
	}
	VEC_FREE(&r->attrs);
	u64map_free(&r->id_to_attr);
	for (size_t i = 0; i < r->owned.n; i++)
		free(r->owned.v[i]);
	VEC_FREE(&r->owned);
	for (int i = 0; i < PD_FEAT_MAX; i++)
		free(r->strings[i]);
	for (size_t i = 0; i < r->build_ids.n; i++)
		free((char *)r->build_ids.v[i].filename);
	VEC_FREE(&r->build_ids);
	free_groups(r);
	VEC_FREE(&r->groups);
	VEC_FREE(&r->queue);
	VEC_FREE(&r->merge_tmp);
	VEC_FREE(&r->scratch);
	pdz_free(r->z);
	free(r->win);
	free(r);
}

/* ---- accessors ------------------------------------------------------------ */

size_t pd_reader_nattrs(const struct pd_reader *r)
{
	return r->attrs.n;
}

const struct pd_attr *pd_reader_attr(const struct pd_reader *r, size_t i)
{
	return i < r->attrs.n ? &r->attrs.v[i] : NULL;
}

const struct pd_attr *pd_reader_attr_of_id(const struct pd_reader *r, u64 id)
{
	const u64 *slot = u64map_get(&r->id_to_attr, id);
	return slot ? &r->attrs.v[*slot - 1] : NULL;
}

const char *pd_reader_string(const struct pd_reader *r, int feat)
{
	return feat > 0 && feat < PD_FEAT_MAX ? r->strings[feat] : NULL;
}

const void *pd_reader_feature(const struct pd_reader *r, int feat, size_t *len)
{
	if (feat <= 0 || feat >= PD_FEAT_MAX || !r->feat[feat].data)
		return NULL;
	if (len)
		*len = r->feat[feat].len;
	return r->feat[feat].data;
}

size_t pd_reader_nbuild_ids(const struct pd_reader *r)
{
	return r->build_ids.n;
}

const struct pd_reader_build_id *pd_reader_build_id(const struct pd_reader *r, size_t i)
{
	return i < r->build_ids.n ? &r->build_ids.v[i] : NULL;
}

size_t pd_reader_ngroups(const struct pd_reader *r)
{
	return r->groups.n;
}

const struct pd_group *pd_reader_group(const struct pd_reader *r, size_t i)
{
	return i < r->groups.n ? &r->groups.v[i] : NULL;
}

const struct pd_reader_stats *pd_reader_stats(const struct pd_reader *r)
{
	return &r->stats;
}

bool pd_reader_is_pipe(const struct pd_reader *r)
{
	return r->pipe;
}

u64 pd_reader_position(const struct pd_reader *r, u64 *total)
{
	*total = r->pipe ? 0 : r->data_end - r->data_begin;
	return r->pipe ? r->pos : r->pos - r->data_begin;
}
