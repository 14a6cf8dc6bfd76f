/* writer-internal.h - what the writer's files (writer.c, features.c,
 * synth.c) share: the writer itself, a byte builder for feature bodies and
 * the buffered data path.  Private to format/. */
#ifndef EMBER_FORMAT_WRITER_INTERNAL_H
#define EMBER_FORMAT_WRITER_INTERNAL_H

#include "format/format.h"

/* perf pads header strings to 64 bytes and sizes some sections by that
 * rule (CPU_TOPOLOGY), so we must pad exactly the same way. */
#define PDW_NAME_ALIGN 64
#define PDW_ALIGN(x, a) (((x) + (a) - 1) / (a) * (a))

#define PDW_BUILD_ID_SIZE 20              /* SHA1, the longest build-id */

/* A growable byte string for feature bodies (built once, off the hot path). */
struct pdw_bytes {
	u8 *p;
	size_t len, cap;
};
void pdw_bytes_add(struct pdw_bytes *b, const void *p, size_t n);
void pdw_bytes_zeros(struct pdw_bytes *b, size_t n);
void pdw_bytes_u32(struct pdw_bytes *b, u32 v);
void pdw_bytes_u64(struct pdw_bytes *b, u64 v);
/* perf's header string: u32 padded length, then the string NUL-padded. */
void pdw_bytes_string(struct pdw_bytes *b, const char *s);
void pdw_bytes_free(struct pdw_bytes *b);

struct pdw_attr {
	struct perf_event_attr attr;
	char *name;
	u64 *ids;
	size_t nids;
};

struct pd_writer {
	int fd;
	bool own_fd;           /* false for stdout */
	int tee_fd;            /* pipe: every byte also goes here, or -1 */
	bool pipe;             /* the stream variant */
	bool begun;
	bool failed;           /* a write failed: later writes fail at once */
	char *path;            /* for error messages */
	char *fail_msg;        /* the first write error, repeated later */

	u64 stream_off;        /* pipe: bytes sent so far */
	u64 attrs_offset;      /* file: where the perf_file_attr array starts */
	u64 data_offset;       /* file: where the data section starts */
	u64 data_disk;         /* data bytes the kernel accepted */
	u64 data_safe;         /* data bytes known to end on a record boundary */
	u64 checkpoint_ns;       /* when the header last got data_safe */

	u8 *buf;               /* data not yet written */
	size_t buf_len, buf_cap;

	/* -z: records gather in zbuf and go into buf deflated, a batch at
	 * a time (when zbuf is full, and at each round) */
	struct pdz_out *z;
	u8 *zbuf;
	size_t zbuf_len, zbuf_cap;
	int zlevel;

	VEC(struct pdw_attr) attrs;

	struct pdw_bytes feat[PD_FEAT_MAX];
	u64 feat_set[PD_FEAT_MAX / 64];      /* has a body */
	u64 feat_sent[PD_FEAT_MAX / 64];     /* pipe: already streamed */
	size_t build_ids_sent;               /* pipe: bytes of BUILD_ID streamed */
};

static inline bool pdw_bit(const u64 *bits, int f)
{
	return bits[f / 64] >> (f % 64) & 1;
}

static inline void pdw_set_bit(u64 *bits, int f)
{
	bits[f / 64] |= 1ULL << (f % 64);
}

/* Batches of records deflated into COMPRESSED records (compress.c). */
struct pdz_out;
struct pdz_out *pdz_out_new(int level);
void pdz_out_free(struct pdz_out *o);
int pdz_deflate(struct pdz_out *o, const void *src, size_t n,
		int (*emit)(void *ctx, const void *rec, size_t len), void *ctx);
void pdz_out_totals(const struct pdz_out *o, u64 *in, u64 *out);

/* Appends record bytes to the data section (buffered); -1 on error. */
int pdw_data_append(struct pd_writer *w, const void *p, size_t n);

/* Fails (err_set) unless the writer can still take features; also checks f. */
int pdw_feature_check(struct pd_writer *w, int f);
/* The body of f was (re)built in w->feat[f]: record it, and in pipe mode
 * after begin stream what must not wait for close (tracing data). */
int pdw_feature_ready(struct pd_writer *w, int f);

#endif
