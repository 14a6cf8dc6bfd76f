/* blktrace.c - reads blk_io_trace records: classic per-CPU blktrace files
 * (DEV.blktrace.N, merged by time) and the kernel blk tracer's binary output
 * ("# tracer: blk" lines, then each record behind a 16-byte ftrace header).
 * Records are in the writing machine's byte order: one whose magic reads
 * byte-swapped (a capture from a big-endian machine) is swapped field by
 * field. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/format.h"

#define BLK_MAGIC 0x65617400u         /* "tae" << 8 | version */
#define BLK_MAGIC_MASK 0xffffff00u
#define BLK_VERSION 0x07u
#define BLK_REC_SIZE 48u
#define FTRACE_HDR 16u
#define MAX_FILES 1024

struct blk_file {
	char *path;
	u8 *data;
	size_t len;
	bool ftrace;
	size_t at;                 /* the next record's offset */
	struct pd_blk_rec cur;     /* decoded, when has_cur */
	bool has_cur;
};

/* Records stream from each file in its own order (per-CPU files are in
 * time order); the files are merged by time as they are read. */
struct pd_blk_reader {
	VEC(struct blk_file) files;
	bool failed;
};

static u16 get16(const u8 *p) { u16 v; memcpy(&v, p, 2); return v; }
static u32 get32(const u8 *p) { u32 v; memcpy(&v, p, 4); return v; }
static u64 get64(const u8 *p) { u64 v; memcpy(&v, p, 8); return v; }

/* The same, in the other byte order when swap is set. */
static u16 rd16(const u8 *p, bool swap) { u16 v = get16(p); return swap ? __builtin_bswap16(v) : v; }
static u32 rd32(const u8 *p, bool swap) { u32 v = get32(p); return swap ? __builtin_bswap32(v) : v; }
static u64 rd64(const u8 *p, bool swap) { u64 v = get64(p); return swap ? __builtin_bswap64(v) : v; }

/* Whether a record's first word is the magic in this machine's order
 * (0), in the other order (1), or neither (-1). */
static int magic_order(u32 magic)
{
	if ((magic & BLK_MAGIC_MASK) == BLK_MAGIC)
		return 0;
	if ((__builtin_bswap32(magic) & BLK_MAGIC_MASK) == BLK_MAGIC)
		return 1;
	return -1;
}

static u8 *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		err_set_errno("%s", path);
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	u8 *buf = xmalloc(cap);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = xrealloc(buf, cap *= 2);
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		err_set("%s: read error", path);
		return NULL;
	}
	*len = n;
	/* Exactly the file's size: a read past its end is then one that
	 * AddressSanitizer (and the fuzzer) sees. */
	return xrealloc(buf, n ? n : 1);
}

/* The ftrace capture's text preamble: lines starting with '#'. */
static size_t skip_preamble(const u8 *d, size_t len)
{
	size_t at = 0;
	while (at < len && d[at] == '#') {
		const u8 *nl = memchr(d + at, '\n', len - at);
		if (!nl)
			return len;
		at = (size_t)(nl - d) + 1;
	}
	return at;
}

/* One record at d[at]; -1 with err_set() naming the offset when broken. */
static int decode_one(const struct blk_file *f, int file, size_t at, struct pd_blk_rec *r,
		      size_t *size)
{
	const u8 *d = f->data;
	size_t hdr = f->ftrace ? FTRACE_HDR : 0;
	if (f->len - at < hdr + BLK_REC_SIZE) {
		err_set("%s: offset %zu: record cut short (%zu bytes left, %u needed)", f->path,
			at, f->len - at, (unsigned)(hdr + BLK_REC_SIZE));
		return -1;
	}
	const u8 *p = d + at + hdr;
	u32 magic = get32(p);
	int order = magic_order(magic);
	if (order < 0) {
		err_set("%s: offset %zu: bad magic 0x%08x (not a blk_io_trace record)", f->path,
			at + hdr, magic);
		return -1;
	}
	bool sw = order == 1;
	memset(r, 0, sizeof(*r));
	r->version = (u8)(rd32(p, sw) & 0xff);
	r->sequence = rd32(p + 4, sw);
	r->time = rd64(p + 8, sw);
	r->sector = rd64(p + 16, sw);
	r->bytes = rd32(p + 24, sw);
	r->action = rd32(p + 28, sw);
	r->pid = rd32(p + 32, sw);
	r->device = rd32(p + 36, sw);
	r->cpu = rd32(p + 40, sw);
	r->error = rd16(p + 44, sw);
	r->pdu_len = rd16(p + 46, sw);
	if (f->len - at - hdr - BLK_REC_SIZE < r->pdu_len) {
		err_set("%s: offset %zu: payload of %u bytes runs past the end", f->path, at,
			(unsigned)r->pdu_len);
		return -1;
	}
	if (f->ftrace) {
		/* ftrace fills pid, cpu and time in its header, not always here;
		 * the header is in the same order as the record it frames. */
		r->pid = rd32(d + at, sw);
		r->cpu = rd32(d + at + 4, sw);
		r->time = rd64(d + at + 8, sw);
	}
	/* The payloads (remap, split, unplug) are big-endian on every
	 * machine; a comm is bytes: they need no swapping. */
	r->pdu = p + BLK_REC_SIZE;
	r->file = file;
	r->offset = at;
	*size = hdr + BLK_REC_SIZE + r->pdu_len;
	return 0;
}

/* Decodes the file's next record into cur; -1 with err_set() when the
 * file is damaged there. */
static int advance(struct blk_file *f, int file)
{
	size_t size;
	f->has_cur = false;
	if (f->at >= f->len)
		return 0;
	if (decode_one(f, file, f->at, &f->cur, &size) < 0)
		return -1;
	f->at += size;
	f->has_cur = true;
	return 0;
}

static int add_file(struct pd_blk_reader *br, const char *path)
{
	struct blk_file f = { .path = xstrdup(path) };
	f.data = slurp(path, &f.len);
	if (!f.data) {
		free(f.path);
		return -1;
	}
	f.ftrace = f.len > 0 && f.data[0] == '#';
	f.at = f.ftrace ? skip_preamble(f.data, f.len) : 0;
	VEC_PUSH(&br->files, f);
	return advance(&br->files.v[br->files.n - 1], (int)br->files.n - 1);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* PATH itself, or PATH.blktrace.0, .1, ... (blktrace's per-CPU names). */
static int add_files(struct pd_blk_reader *br, const char *path)
{
	if (exists(path))
		return add_file(br, path);
	char name[4096];
	for (int cpu = 0; cpu < MAX_FILES; cpu++) {
		snprintf(name, sizeof(name), "%s.blktrace.%d", path, cpu);
		if (!exists(name))
			break;
		if (add_file(br, name) < 0)
			return -1;
	}
	if (!br->files.n) {
		err_set("%s: no such file, nor %s.blktrace.0", path, path);
		return -1;
	}
	return 0;
}

struct pd_blk_reader *pd_blk_open(const char *path)
{
	struct pd_blk_reader *br = xcalloc(1, sizeof(*br));
	if (add_files(br, path) < 0) {
		pd_blk_close(br);
		return NULL;
	}
	return br;
}

/* The earliest current record across files (ties: the lower file). */
int pd_blk_next(struct pd_blk_reader *br, struct pd_blk_rec *out)
{
	if (br->failed)
		return -1;
	struct blk_file *best = NULL;
	for (size_t i = 0; i < br->files.n; i++) {
		struct blk_file *f = &br->files.v[i];
		if (f->has_cur && (!best || f->cur.time < best->cur.time))
			best = f;
	}
	if (!best)
		return 0;
	*out = best->cur;
	if (advance(best, (int)(best - br->files.v)) < 0) {
		br->failed = true;
		best->has_cur = false;
	}
	return 1;
}

void pd_blk_close(struct pd_blk_reader *br)
{
	if (!br)
		return;
	for (size_t i = 0; i < br->files.n; i++) {
		free(br->files.v[i].path);
		free(br->files.v[i].data);
	}
	VEC_FREE(&br->files);
	free(br);
}

static int walk_file(const char *path, int file, pd_blk_walk_fn fn, void *ctx)
{
	struct blk_file f = { .path = (char *)path };
	f.data = slurp(path, &f.len);
	if (!f.data)
		return -1;
	f.ftrace = f.len > 0 && f.data[0] == '#';
	size_t at = f.ftrace ? skip_preamble(f.data, f.len) : 0, size;
	int rc = 0;
	while (at < f.len && rc == 0) {
		struct pd_blk_rec r;
		rc = decode_one(&f, file, at, &r, &size);
		if (rc == 0)
			rc = fn(ctx, &r, path);
		at += size;
	}
	free(f.data);
	return rc;
}

int pd_blk_walk(const char *path, pd_blk_walk_fn fn, void *ctx)
{
	if (exists(path))
		return walk_file(path, 0, fn, ctx);
	char name[4096];
	int cpu;
	for (cpu = 0; cpu < MAX_FILES; cpu++) {
		snprintf(name, sizeof(name), "%s.blktrace.%d", path, cpu);
		if (!exists(name))
			break;
		if (walk_file(name, cpu, fn, ctx) < 0)
			return -1;
	}
	if (!cpu) {
		err_set("%s: no such file, nor %s.blktrace.0", path, path);
		return -1;
	}
	return 0;
}

/* Whether a path holds (or names per-CPU files of) blk_io_trace records
 * rather than a perf.data file. */
bool pd_blk_probe(const char *path)
{
	char name[4096];
	snprintf(name, sizeof(name), "%s.blktrace.0", path);
	if (!exists(path))
		return exists(name);
	FILE *f = fopen(path, "rb");
	u8 head[16] = { 0 };
	size_t n = f ? fread(head, 1, sizeof(head), f) : 0;
	if (f)
		fclose(f);
	if (n >= 4 && magic_order(get32(head)) >= 0)
		return true;
	return n >= 13 && !memcmp(head, "# tracer: blk", 13);
}

/* ---- payloads ------------------------------------------------------------- */

static u32 be32(const u8 *p) { return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3]; }
static u64 be64(const u8 *p) { return (u64)be32(p) << 32 | be32(p + 4); }

/* A cgroup id leads the payload when the action carries the cgroup flag. */
static const u8 *payload(const struct pd_blk_rec *r, u16 *len)
{
	u16 skip = (r->action & PD_BLK_TA_CGROUP) ? 8 : 0;
	*len = r->pdu_len > skip ? (u16)(r->pdu_len - skip) : 0;
	return r->pdu + skip;
}

int pd_blk_remap(const struct pd_blk_rec *r, u32 *dev_from, u32 *dev_to, u64 *sector_from)
{
	u16 len;
	const u8 *p = payload(r, &len);
	if (len < 16)
		return -1;
	*dev_from = be32(p);
	*dev_to = be32(p + 4);
	*sector_from = be64(p + 8);
	return 0;
}

int pd_blk_split(const struct pd_blk_rec *r, u64 *new_sector)
{
	u16 len;
	const u8 *p = payload(r, &len);
	if (len < 8)
		return -1;
	*new_sector = be64(p);
	return 0;
}

int pd_blk_comm(const struct pd_blk_rec *r, char *buf, size_t size)
{
	u16 len;
	const u8 *p = payload(r, &len);
	if (!size)
		return -1;
	size_t n = strnlen((const char *)p, len);
	n = n < size - 1 ? n : size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}
