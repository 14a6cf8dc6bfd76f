/* format-internal.h - what the reader (reader.c) and the record decoder
 * (decode.c) share: unaligned loads and a bounds-checked cursor over input
 * bytes.  Private to format/. */
#ifndef EMBER_FORMAT_INTERNAL_H
#define EMBER_FORMAT_INTERNAL_H

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

#endif
