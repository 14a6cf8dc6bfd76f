/* format-internal.h - what the reader's files (reader.c, window.c,
 * order.c, header.c, attrs.c) and the record decoder (decode.c) share:
 * unaligned loads, a bounds-checked cursor over input bytes, the reader
 * itself.  Private to format/. */
#ifndef EMBER_FORMAT_INTERNAL_H
#define EMBER_FORMAT_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "format/format.h"

/* Loads that never trust alignment: feature sections and records inside
 * them sit wherever the writer put them.  Inline because every field of
 * every record goes through them. */
static inline u64 get_u64(const u8 *p)
{
	u64 v;
	memcpy(&v, p, 8);
	return v;
}

static inline u32 get_u32(const u8 *p)
{
	u32 v;
	memcpy(&v, p, 4);
	return v;
}

/* Input bytes [p, end) not yet taken; each take checks what remains. */
struct cursor {
	const u8 *p, *end;
};

static inline bool take(struct cursor *c, size_t n, const u8 **out)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	if (out)
		*out = c->p;
	c->p += n;
	return true;
}

static inline bool take_u64(struct cursor *c, u64 *v)
{
	const u8 *p;
	if (!take(c, 8, &p))
		return false;
	*v = get_u64(p);
	return true;
}

static inline bool take_pair32(struct cursor *c, u32 *a, u32 *b)
{
	const u8 *p;
	if (!take(c, 8, &p))
		return false;
	*a = get_u32(p);
	*b = get_u32(p + 4);
	return true;
}

/* nr entries of each bytes; nr comes from the input, so the product is
 * only formed once it is known to fit. */
static inline bool take_array(struct cursor *c, u64 nr, size_t each, const u8 **out)
{
	if (nr > (u64)(c->end - c->p) / each)
		return false;
	return take(c, nr * each, out);
}

/* A NUL-terminated string inside [p, end), or NULL. */
const char *pdd_string_in(const u8 *p, const u8 *end);

/* Whether decode.c decodes records of this type (samples and the
 * side-band bodies it knows); the reader counts the others. */
bool pdd_type_decoded(u32 type);

/* The decompressed records of a file's compressed records (compress.c):
 * one zstd stream, inflated record by record into a buffer that keeps
 * every byte from the oldest record still queued on. */
struct pdz_stream;
struct pdz_stream *pdz_new(void);
void pdz_free(struct pdz_stream *z);
/* Drops the bytes before keep, then appends the n bytes at src inflated;
 * -1 with err_set() when zstd fails or they come to more than limit
 * bytes.  file_off is the compressed record's offset in the input. */
int pdz_inflate(struct pdz_stream *z, const u8 *src, size_t n, u64 file_off, u64 keep,
		size_t limit);
/* Where decompressed byte zoff is (it must be held); the end of what was
 * inflated; the input offset of the compressed record zoff came from. */
const u8 *pdz_at(const struct pdz_stream *z, u64 zoff);
u64 pdz_end(const struct pdz_stream *z);
u64 pdz_file_offset(const struct pdz_stream *z, u64 zoff);

/* ---- The reader, in parts ------------------------------------------------
 * reader.c opens, hands out the next event and closes; window.c brings
 * the input's raw records in (the window, compressed records inflated);
 * order.c puts them back into time order (FINISHED_ROUND); header.c reads
 * the file header, attrs and features, and the records that carry them in
 * a stream; attrs.c keeps the attrs and finds each record's. */

/* A queued offset with this bit is one in the decompressed stream. */
#define ZOFF (1ull << 63)

struct pdr_queued {
	u64 time;
	u64 seq;    /* arrival order: ties keep input order */
	u64 offset; /* where the record is in the input (and the window) */
};

struct pdr_feature {
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

	struct pdr_feature feat[PD_FEAT_MAX];
	VEC(u8 *) owned;       /* feature bodies copied from a stream */
	char *strings[PD_FEAT_MAX];
	VEC(struct pd_reader_build_id) build_ids;
	VEC(struct pd_group) groups;

	/* time ordering */
	VEC(struct pdr_queued) queue;
	VEC(struct pdr_queued) merge_tmp;
	size_t out_next, out_end;  /* queue[out_next..out_end) are ready */
	u64 seq, max_time, round_limit, last_out_time;
	VEC(u64) scratch;      /* aligned copy of one record */
	/* The header's first and last sample times (HEADER_SAMPLE_TIME);
	 * span_last 0: unknown.  A time outside them is damage. */
	u64 span_first, span_last;

	struct pd_trace *trace;    /* opts.tracing: the tracing data parsed */
	char *trace_error;         /* ... or why it could not be */

	struct pd_reader_stats stats;
};

/* reader.c: stops the input at offset (a decompressed one when it has
 * ZOFF) with an error that names it, told once the queue drains; -1. */
int pdr_fail_at(struct pd_reader *r, u64 offset, const char *what);

/* window.c: where the bytes of input offset off are; the window (or, for
 * a decompressed offset, the decompressed buffer) holds them. */
static inline const u8 *pdr_at(const struct pd_reader *r, u64 off)
{
	if (off & ZOFF)
		return pdz_at(r->z, off & ~ZOFF);
	return r->win + (off - r->win_off);
}

/* An aligned copy of a record that sits misaligned (after a compressed
 * record, whose size need not be a multiple of 8). */
static inline const u8 *pdr_aligned(struct pd_reader *r, const u8 *src, u16 size)
{
	if (!((uintptr_t)src & 7))
		return src;
	VEC_GROW(&r->scratch, (size_t)(size + 7) / 8);
	memcpy(r->scratch.v, src, size);
	return (const u8 *)r->scratch.v;
}

/* Makes input bytes [r->pos, r->pos + n) available in the window,
 * keeping every record still queued.  1 when they are, 0 when the input
 * ends first, -1 on a failed read. */
int pdr_window_need(struct pd_reader *r, size_t n);
/* The next raw record of the input (not yet decoded) in *rec, or 0 at
 * the end, -1 on error: the records inflated from compressed ones first,
 * then the input's own.  *rec is 8-byte aligned and valid until the next
 * call. */
int pdr_next_raw(struct pd_reader *r, const u8 **rec, u64 *offset);

/* order.c: reads input until some events are ready (queue[out_next ..
 * out_end)) or the input ends. */
void pdr_fill_queue(struct pd_reader *r);

/* attrs.c: adds an attr read at offset (size bytes on disk) and its nids
 * kernel ids; -1 (pdr_fail_at) when it is too small. */
int pdr_add_attr(struct pd_reader *r, const u8 *p, size_t size, const u8 *ids, size_t nids,
		 u64 offset);
/* Which attr a record belongs to (NULL when it names none that exists). */
const struct pd_attr *pdr_attr_of(struct pd_reader *r, const u8 *rec, size_t size, u32 type);
void pdr_attrs_free(struct pd_reader *r);

/* header.c: the file's header, attrs and features, or the stream's
 * header (its attrs and features come as records); -1 with err_set(). */
int pdr_read_header(struct pd_reader *r, const char *path, bool use_stdin);
/* Handles one of perf's own records (type >= PD_RECORD_HEADER_ATTR):
 * 1 when consumed here, 0 to deliver, -1 on error. */
int pdr_user_record(struct pd_reader *r, const u8 *rec, u64 offset);
/* Frees what pdr_read_header and pdr_user_record kept. */
void pdr_header_free(struct pd_reader *r);
/* Parses the tracing data read so far (opts.tracing), or notes why not;
 * trusted: this process's own recording (opts.own_recording). */
void pdr_read_trace(struct pd_reader *r, bool trusted);

/* tracedata.c: the tracing data parsed; NULL with err_set() naming the
 * offset when it is malformed.  It forks (a crash in libtraceevent costs
 * a child, not the command), so it wants a process that runs one thread:
 * the reader calls it as it opens (pdr_read_trace), the fuzz target in a
 * process of its own. */
struct pd_trace *pd_trace_parse(const void *data, size_t len);
/* The same without the trial child, for tracing data this process made
 * itself from this kernel's tracefs (a live view's own recording). */
struct pd_trace *pd_trace_parse_trusted(const void *data, size_t len);
void pd_trace_free(struct pd_trace *t);
/* How many threads this process runs (1 when /proc cannot tell). */
int pdt_threads(void);

#endif
