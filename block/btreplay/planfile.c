/* planfile.c - the plan file: a versioned little-endian layout with a
 * magic, written whole and read with every count, size and offset checked
 * against the bytes there are before anything is allocated by it (a
 * regular file, read whole).  An error names the byte offset, and an I/O
 * by its place in its CPU's stream counted from 1, as target.c's errors
 * do (tests/fuzz/fuzz-plan.c feeds it).  Version 1:
 *
 *   offset        size    field
 *   0             8       magic "EMBRPLAN"
 *   8             4       version: 1 (a reader refuses others)
 *   12            4       header size H: 48 in version 1, a multiple of 8
 *                         up to 4096 (fields a later version adds are
 *                         skipped)
 *   16            4       devices D, 1..4096
 *   20            4       streams S, 1..65536
 *   24            8       I/Os N, 1 or more: the sum of the streams' counts
 *   32            8       recording time of the first I/O, ns (information)
 *   40            8       I/Os left out (neither read nor write)
 *   H             4 x D   each device: kernel dev_t, MAJOR << 20 | MINOR
 *   H+4D          16 x S  each stream: u32 CPU (increasing), u32 0, u64
 *                         its I/O count
 *   H+4D+16S      24 x N  each I/O, stream after stream: u64 offset (ns
 *                         after the first I/O; not before the previous one
 *                         of its stream; at most 2^50), u64 sector (512
 *                         bytes), u32 sectors (1..4194296: 2 GiB - 4 KiB,
 *                         Linux's MAX_RW_COUNT), u16 device index (< D),
 *                         u8 'R' or 'W', u8 flags (0)
 *
 * The file ends there: bytes past the last I/O are an error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block/btreplay/btreplay.h"

#define PLAN_MAGIC "EMBRPLAN"
#define PLAN_VERSION 1
#define HEADER_SIZE 48         /* version 1's; later ones may add fields */
#define MAX_HEADER 4096
#define DEV_SIZE 4
#define STREAM_SIZE 16
#define IO_SIZE 24
/* No plan waits longer than this for an I/O (about 13 days): a bad
 * offset must not leave a replay asleep for years. */
#define MAX_OFFSET (1ull << 50)

/* ---- little-endian fields ---------------------------------------------------- */

static void put32(u8 *p, u32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (u8)(v >> (8 * i));
}

static void put64(u8 *p, u64 v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (u8)(v >> (8 * i));
}

static u32 get32(const u8 *p)
{
	u32 v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static u64 get64(const u8 *p)
{
	u64 v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- writing -------------------------------------------------------------------- */

static size_t plan_size(const struct blkr_plan *p)
{
	return HEADER_SIZE + (size_t)p->ndevs * DEV_SIZE + (size_t)p->nstreams * STREAM_SIZE +
	       (size_t)blkr_plan_nios(p) * IO_SIZE;
}

static void encode(const struct blkr_plan *p, u8 *buf)
{
	memcpy(buf, PLAN_MAGIC, 8);
	put32(buf + 8, PLAN_VERSION);
	put32(buf + 12, HEADER_SIZE);
	put32(buf + 16, p->ndevs);
	put32(buf + 20, p->nstreams);
	put64(buf + 24, blkr_plan_nios(p));
	put64(buf + 32, p->start);
	put64(buf + 40, p->left_out);
	u8 *at = buf + HEADER_SIZE;
	for (u32 i = 0; i < p->ndevs; i++, at += DEV_SIZE)
		put32(at, p->devs[i]);
	for (u32 s = 0; s < p->nstreams; s++, at += STREAM_SIZE) {
		put32(at, p->streams[s].cpu);
		put32(at + 4, 0);
		put64(at + 8, p->streams[s].n);
	}
	for (u32 s = 0; s < p->nstreams; s++)
		for (u64 i = 0; i < p->streams[s].n; i++, at += IO_SIZE) {
			const struct blkr_io *io = &p->streams[s].ios[i];
			put64(at, io->offset);
			put64(at + 8, io->sector);
			put32(at + 16, io->nr_sector);
			at[20] = (u8)io->dev;
			at[21] = (u8)(io->dev >> 8);
			at[22] = io->write ? 'W' : 'R';
			at[23] = io->flags;
		}
}

int blkr_plan_save(const struct blkr_plan *p, const char *path)
{
	size_t size = plan_size(p);
	u8 *buf = xcalloc(1, size);
	encode(p, buf);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -1 : write_all(fd, buf, size);
	if (rc < 0)
		err_set_errno("%s: cannot write the plan", path);
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		err_set_errno("%s: cannot write the plan", path);
		rc = -1;
	}
	free(buf);
	return rc;
}

/* ---- reading ------------------------------------------------------------------ */

struct parse {
	const u8 *b;
	size_t len;
	const char *name;
	u32 ndevs, nstreams, hsize;
	u64 nios;
};

static int check_header(struct parse *ps, struct blkr_plan *p)
{
	const u8 *b = ps->b;
	if (ps->len < 8 || memcmp(b, PLAN_MAGIC, 8)) {
		err_set("%s is not a plan file (no %s magic at offset 0): make one with "
			"'ember bio -i FILE --save-plan PLAN'", ps->name, PLAN_MAGIC);
		return -1;
	}
	if (ps->len < HEADER_SIZE) {
		err_set("%s: %zu bytes, shorter than a plan header (%d)", ps->name, ps->len, HEADER_SIZE);
		return -1;
	}
	u32 version = get32(b + 8);
	if (version != PLAN_VERSION) {
		err_set("%s: plan version %u at offset 8; this ember reads version %d", ps->name,
			version, PLAN_VERSION);
		return -1;
	}
	ps->hsize = get32(b + 12);
	ps->ndevs = get32(b + 16);
	ps->nstreams = get32(b + 20);
	ps->nios = get64(b + 24);
	p->start = get64(b + 32);
	p->left_out = get64(b + 40);
	if (ps->hsize < HEADER_SIZE || ps->hsize > MAX_HEADER || ps->hsize % 8) {
		err_set("%s: header size %u at offset 12: a multiple of 8 from %d to %d", ps->name,
			ps->hsize, HEADER_SIZE, MAX_HEADER);
		return -1;
	}
	if (!ps->ndevs || ps->ndevs > BLKR_MAX_DEVS) {
		err_set("%s: %u devices at offset 16: from 1 to %d", ps->name, ps->ndevs, BLKR_MAX_DEVS);
		return -1;
	}
	if (!ps->nstreams || ps->nstreams > BLKR_MAX_STREAMS) {
		err_set("%s: %u streams at offset 20: from 1 to %d", ps->name, ps->nstreams,
			BLKR_MAX_STREAMS);
		return -1;
	}
	return 0;
}

/* The file holds exactly what the header counts, nothing more or less. */
static int check_size(const struct parse *ps)
{
	size_t tables = (size_t)ps->hsize + (size_t)ps->ndevs * DEV_SIZE +
			(size_t)ps->nstreams * STREAM_SIZE;
	if (ps->len < tables || ps->nios > (ps->len - tables) / IO_SIZE ||
	    tables + ps->nios * IO_SIZE != ps->len) {
		err_set("%s: %zu bytes, but its header (%u devices, %u streams, %llu I/Os) "
			"makes %llu: the file is cut short or has bytes past its end",
			ps->name, ps->len, ps->ndevs, ps->nstreams, (unsigned long long)ps->nios,
			(unsigned long long)tables + (unsigned long long)ps->nios * IO_SIZE);
		return -1;
	}
	if (!ps->nios) {
		err_set("%s: a plan of no I/O (offset 24)", ps->name);
		return -1;
	}
	return 0;
}

static int read_streams(const struct parse *ps, struct blkr_plan *p)
{
	size_t at = ps->hsize;
	p->devs = xcalloc(ps->ndevs, sizeof(*p->devs));
	for (u32 i = 0; i < ps->ndevs; i++, at += DEV_SIZE)
		p->devs[i] = get32(ps->b + at);
	p->ndevs = ps->ndevs;
	p->streams = xcalloc(ps->nstreams, sizeof(*p->streams));
	p->nstreams = ps->nstreams;
	u64 total = 0;
	for (u32 s = 0; s < ps->nstreams; s++, at += STREAM_SIZE) {
		struct blkr_stream *st = &p->streams[s];
		st->cpu = get32(ps->b + at);
		st->n = get64(ps->b + at + 8);
		if (get32(ps->b + at + 4) || (s && st->cpu <= p->streams[s - 1].cpu)) {
			err_set("%s: stream %u at offset %zu: CPUs must increase and its "
				"reserved field be 0", ps->name, s, at);
			return -1;
		}
		if (!st->n || st->n > ps->nios - total) {
			err_set("%s: stream %u at offset %zu: %llu I/Os, but %llu are left of the "
				"%llu the header counts", ps->name, s, at, (unsigned long long)st->n,
				(unsigned long long)(ps->nios - total), (unsigned long long)ps->nios);
			return -1;
		}
		total += st->n;
	}
	if (total != ps->nios) {
		err_set("%s: the streams hold %llu I/Os, the header (offset 24) counts %llu",
			ps->name, (unsigned long long)total, (unsigned long long)ps->nios);
		return -1;
	}
	return 0;
}

/* An I/O is named as the replay names it (target.c): its place in its
 * CPU's stream, counted from 1, and here its byte offset too. */
static int bad_io(const struct parse *ps, const struct blkr_stream *st, u64 k, size_t at,
		  const char *what)
{
	err_set("%s: I/O %llu of CPU %u at offset %zu: %s", ps->name, (unsigned long long)k + 1,
		st->cpu, at, what);
	return -1;
}

/* The I/O k of stream st, at `at`. */
static int read_io(const struct parse *ps, const struct blkr_stream *st, u64 k, size_t at)
{
	struct blkr_io *io = &st->ios[k];
	const struct blkr_io *prev = k ? &st->ios[k - 1] : NULL;
	char why[128];
	const u8 *b = ps->b + at;
	io->offset = get64(b);
	io->sector = get64(b + 8);
	io->nr_sector = get32(b + 16);
	io->dev = (u16)(b[20] | b[21] << 8);
	io->write = b[22] == 'W';
	io->flags = b[23];
	if (io->dev >= ps->ndevs)
		return bad_io(ps, st, k, at, "its device index is past the plan's devices");
	if (b[22] != 'R' && b[22] != 'W')
		return bad_io(ps, st, k, at, "its direction is neither R nor W");
	if (io->flags)
		return bad_io(ps, st, k, at, "flags set that version 1 does not have");
	if (!io->nr_sector)
		return bad_io(ps, st, k, at, "its size is 0 sectors");
	if (io->nr_sector > BLKR_MAX_SECTORS) {
		snprintf(why, sizeof(why), "its size, %llu bytes, is over the %u one read or "
			 "write moves", (unsigned long long)io->nr_sector * 512, BLKR_MAX_BYTES);
		return bad_io(ps, st, k, at, why);
	}
	if (io->sector > (u64)INT64_MAX / 512 - io->nr_sector)
		return bad_io(ps, st, k, at, "its sector is past any device's end");
	if (io->offset > MAX_OFFSET)
		return bad_io(ps, st, k, at, "its time offset is over 13 days");
	if (prev && io->offset < prev->offset)
		return bad_io(ps, st, k, at, "its time offset is before the previous I/O's");
	return 0;
}

static int read_ios(const struct parse *ps, struct blkr_plan *p)
{
	size_t at = (size_t)ps->hsize + (size_t)ps->ndevs * DEV_SIZE +
		    (size_t)ps->nstreams * STREAM_SIZE;
	for (u32 s = 0; s < p->nstreams; s++) {
		struct blkr_stream *st = &p->streams[s];
		st->ios = xcalloc(st->n, sizeof(*st->ios));
		for (u64 k = 0; k < st->n; k++, at += IO_SIZE)
			if (read_io(ps, st, k, at) < 0)
				return -1;
	}
	return 0;
}

int blkr_plan_parse(struct blkr_plan *p, const void *buf, size_t len, const char *name)
{
	memset(p, 0, sizeof(*p));
	struct parse ps = { .b = buf, .len = len, .name = name };
	int rc = check_header(&ps, p);
	if (rc == 0)
		rc = check_size(&ps);
	if (rc == 0)
		rc = read_streams(&ps, p);
	if (rc == 0)
		rc = read_ios(&ps, p);
	if (rc < 0)
		blkr_plan_free(p);
	return rc;
}

int blkr_plan_load(struct blkr_plan *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_set_errno("%s: cannot read the plan", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		err_set("%s is not a regular file: give the plan file --save-plan wrote", path);
		return -1;
	}
	size_t len = (size_t)st.st_size, got = 0;
	u8 *buf = xmalloc(len ? len : 1);
	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	int rc = got == len ? blkr_plan_parse(p, buf, len, path) : -1;
	if (got != len)
		err_set_errno("%s: cannot read the plan (%zu of %zu bytes)", path, got, len);
	close(fd);
	free(buf);
	return rc;
}
