/* test-record.c - unit tests of record/'s pure pieces: the ring walk that
 * counts samples and losses, /proc and cpuinfo parsing, the build-id table,
 * and symbols/' build-id readers that record relies on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/record-internal.h"
#include "symbols/symbols.h"
#include "tests/unit/processes.h"
#include "tests/unit/test.h"

/* Puts a record of size bytes (type, misc) at ring position pos,
 * wrapping as the kernel does. */
static void put_record(u8 *ring, u64 mask, u64 pos, u32 type, u16 misc,
		       const u8 *body, u16 size)
{
	u8 rec[512] = {0};
	struct perf_event_header h = { .type = type, .misc = misc, .size = size };
	memcpy(rec, &h, sizeof(h));
	if (body)
		memcpy(rec + sizeof(h), body, size - sizeof(h));
	for (u16 i = 0; i < size; i++)
		ring[(pos + i) & mask] = rec[i];
}

struct seen { int calls; u16 size; };

static void on_bid(void *ctx, u64 pos, u16 size, u32 type)
{
	struct seen *s = ctx;
	s->calls++;
	s->size = size;
}

static void test_tally_walk_counts(void)
{
	u8 ring[512] = {0};
	u64 mask = sizeof(ring) - 1;
	/* Starts near the end so the records wrap around. */
	u64 pos = 400, tail = pos;
	u64 sample[5] = { 7, 0x1234, 0x0000000100000001ULL, 5000, 1 };
	put_record(ring, mask, pos, PERF_RECORD_SAMPLE, 0, (u8 *)sample, 48);
	pos += 48;
	u64 lost[2] = { 7, 42 };
	put_record(ring, mask, pos, PERF_RECORD_LOST, 0, (u8 *)lost, 24);
	pos += 24;
	sample[3] = 4000;
	put_record(ring, mask, pos, PERF_RECORD_SAMPLE, 0, (u8 *)sample, 48);
	pos += 48;
	put_record(ring, mask, pos, PERF_RECORD_THROTTLE, 0, NULL, 32);
	pos += 32;
	u8 mmap2[96] = {0};
	put_record(ring, mask, pos, PERF_RECORD_MMAP2,
		   PERF_RECORD_MISC_MMAP_BUILD_ID, mmap2, 88);
	pos += 88;
	put_record(ring, mask, pos, PERF_RECORD_MMAP2, 0, mmap2, 80);   /* no id */
	pos += 80;

	struct rec_tally t = {0};
	struct seen s = {0};
	rec_tally_walk(ring, mask, tail, pos, &t, on_bid, &s);
	CHECK(t.samples == 2, "samples %llu", (unsigned long long)t.samples);
	CHECK(t.lost == 42, "lost %llu", (unsigned long long)t.lost);
	CHECK(t.throttles == 1, "throttles %llu", (unsigned long long)t.throttles);
	CHECK(t.first_time == 4000 && t.last_time == 5000, "times %llu..%llu",
	      (unsigned long long)t.first_time, (unsigned long long)t.last_time);
	CHECK(s.calls == 2 && s.size == 80, "mmap2 records %d, last size %u",
	      s.calls, s.size);
}

static void test_tally_walk_stops_on_garbage(void)
{
	u8 ring[64] = {0};     /* a zero-size header must not loop forever */
	struct rec_tally t = {0};
	rec_tally_walk(ring, sizeof(ring) - 1, 0, 64, &t, NULL, NULL);
	CHECK(t.samples == 0, "samples %llu", (unsigned long long)t.samples);
}

static void test_maps_line(void)
{
	char line[] = "7f12a000-7f12c000 r-xp 00002000 fe:01 123456   "
		      "/usr/lib/libx name.so\n";
	struct rec_maps_line m;
	CHECK(rec_parse_maps_line(line, &m) == 0, "parse failed");
	CHECK(m.start == 0x7f12a000 && m.end == 0x7f12c000, "range");
	CHECK(m.pgoff == 0x2000 && m.maj == 0xfe && m.min == 1 && m.ino == 123456,
	      "pgoff %llx dev %x:%x ino %llu", (unsigned long long)m.pgoff,
	      m.maj, m.min, (unsigned long long)m.ino);
	CHECK(m.prot == (PROT_READ | PROT_EXEC) && m.flags == MAP_PRIVATE, "prot");
	CHECK(!strcmp(m.name, "/usr/lib/libx name.so"), "name '%s'", m.name);

	char anon[] = "7f000000-7f001000 rwxs 00000000 00:00 0 \n";
	CHECK(rec_parse_maps_line(anon, &m) == 0, "anon parse failed");
	CHECK(!strcmp(m.name, "//anon") && m.flags == MAP_SHARED, "anon '%s'", m.name);
	char bad[] = "not a maps line";
	CHECK(rec_parse_maps_line(bad, &m) < 0, "garbage accepted");
}

static void test_kernel_text(void)
{
	const char *ks = "0000000000000000 A fixed_percpu_data\n"
			 "ffffffff81000000 T _text\n"
			 "ffffffff81000000 T startup_64\n";
	const char *iomem = "00001000-0009fbff : System RAM\n"
			    "  01000000-02209987 : Kernel code\n"
			    "  02400000-02e09fff : Kernel rodata\n";
	u64 start = 0, len = 0;
	CHECK(rec_kernel_text(ks, iomem, &start, &len) == 0, "%s", err_msg());
	CHECK(start == 0xffffffff81000000ULL, "start %llx", (unsigned long long)start);
	CHECK(len == 0x1209988, "len %llx", (unsigned long long)len);
	CHECK(rec_kernel_text(ks, NULL, &start, &len) == 0 && len == ~0ULL - start,
	      "no iomem: len %llx", (unsigned long long)len);
	const char *hidden = "0000000000000000 T _text\n";
	CHECK(rec_kernel_text(hidden, iomem, &start, &len) < 0, "hidden accepted");
}

static const char cpuinfo[] =
	"processor\t: 0\n"
	"vendor_id\t: AuthenticAMD\n"
	"cpu family\t: 26\n"
	"model\t\t: 2\n"
	"model name\t: AMD   EPYC  9R45 \n"
	"stepping\t: 1\n";

static void test_cpuinfo(void)
{
	char out[128];
	CHECK(rec_cpuid_from_cpuinfo(cpuinfo, out, sizeof(out)) == 0, "%s", err_msg());
	CHECK(!strcmp(out, "AuthenticAMD,26,2,1"), "cpuid '%s'", out);
	CHECK(rec_cpudesc_from_cpuinfo(cpuinfo, out, sizeof(out)) == 0, "%s", err_msg());
	CHECK(!strcmp(out, "AMD EPYC 9R45"), "cpudesc '%s'", out);
	CHECK(rec_cpuid_from_cpuinfo("processor : 0\n", out, sizeof(out)) < 0,
	      "incomplete cpuinfo accepted");
}

static void test_notes_build_id(void)
{
	/* Two notes: an unrelated one first, then GNU build-id of 20 bytes. */
	u8 blob[64] = {0}, id[20];
	u32 n1[3] = { 6, 4, 0x101 };
	memcpy(blob, n1, 12);
	memcpy(blob + 12, "Linux\0\0\0", 8);
	memcpy(blob + 20, "\1\2\3\4", 4);
	u32 n2[3] = { 4, 20, 3 };
	memcpy(blob + 24, n2, 12);
	memcpy(blob + 36, "GNU\0", 4);
	for (int i = 0; i < 20; i++)
		blob[40 + i] = (u8)(0xa0 + i);
	CHECK(sym_notes_build_id(blob, 60, id, sizeof(id)) == 20, "%s", err_msg());
	CHECK(id[0] == 0xa0 && id[19] == 0xb3, "id %02x..%02x", id[0], id[19]);
	CHECK(sym_notes_build_id(blob, 50, id, sizeof(id)) < 0, "truncated accepted");
	char hex[41];
	sym_build_id_hex(id, 2, hex);
	CHECK(!strcmp(hex, "a0a1"), "hex '%s'", hex);
}

static void test_file_build_ids(void)
{
	u8 id[20];
	int n = sym_read_build_id("/proc/self/exe", id, sizeof(id));
	CHECK(n == 20, "own build-id: %d (%s)", n, err_msg());
	CHECK(sym_read_build_id("/proc/self/status", id, sizeof(id)) < 0, "text file has one");
	n = sym_kernel_build_id(id, sizeof(id));
	CHECK(n == 20 || n < 0, "kernel build-id size %d", n);
}

static void test_bids_table(void)
{
	struct rec_bids b;
	rec_bids_init(&b);
	rec_bids_add(&b, "/usr/bin/true", 13, NULL, 0, NULL);
	rec_bids_add(&b, "/usr/bin/true", 13, (const u8 *)"abcdefghijklmnopqrst", 20, NULL);
	rec_bids_add(&b, "[vdso]", 6, NULL, 0, NULL);
	rec_bids_add(&b, "//anon", 6, NULL, 0, NULL);
	rec_bids_add(&b, "/tmp/x (deleted)", 16, NULL, 0, NULL);
	CHECK(b.v.n == 1, "entries %zu", b.v.n);
	CHECK(b.v.n && b.v.v[0].size == 20 && b.v.v[0].id[0] == 'a', "id not filled");

	u8 rec[128] = {0};
	struct perf_event_header h = { PERF_RECORD_MMAP2,
				       PERF_RECORD_MISC_MMAP_BUILD_ID, 96 };
	memcpy(rec, &h, sizeof(h));
	rec[40] = 4;                        /* build_id_size */
	memcpy(rec + 44, "\x11\x22\x33\x44", 4);
	strcpy((char *)rec + 72, "/lib/libz.so");
	rec_bids_note_mmap2(&b, rec, 96);
	CHECK(b.v.n == 2 && !strcmp(b.v.v[1].filename, "/lib/libz.so") &&
	      b.v.v[1].size == 4 && b.v.v[1].id[3] == 0x44, "mmap2 record not taken");

	/* Without the flag: maj 254, min 1 where the id would be; the file
	 * is listed, its id left to be read at the end. */
	memset(rec, 0, sizeof(rec));
	h.misc = 0;
	memcpy(rec, &h, sizeof(h));
	rec[40] = 254;
	rec[44] = 1;
	strcpy((char *)rec + 72, "/lib/libm.so");
	rec_bids_note_mmap2(&b, rec, 96);
	CHECK(b.v.n == 3 && !strcmp(b.v.v[2].filename, "/lib/libm.so") && b.v.v[2].size == 0,
	      "mmap2 without an id: %zu entries, size %u", b.v.n, b.v.n > 2 ? b.v.v[2].size : 99);
	/* The flag leaked onto such a record (another session's event): the
	 * device numbers are not taken for an id. */
	h.misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
	memcpy(rec, &h, sizeof(h));
	strcpy((char *)rec + 72, "/lib/libc.so");
	rec_bids_note_mmap2(&b, rec, 96);
	CHECK(b.v.n == 4 && b.v.v[3].size == 0, "leaked flag: device numbers taken as an id");
	rec_bids_free(&b);
}

/* ---- the online unwinder letting go of exited processes ------------------ */

#define OL_ID 77
#define OL_SEC 1000000000ULL
#define OL_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |     \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
		 PERF_SAMPLE_STACK_USER)
#define OL_REGS ((1ULL << 6) | (1ULL << 7) | (1ULL << 8))   /* x86 bp, sp, ip */

/* A FORK or EXIT record with the sample_id trailer OL_TYPE gives (tid,
 * time, identifier), into buf; its size. */
static size_t ol_task(u64 *buf, u32 type, u32 pid, u32 ppid, u64 time)
{
	struct perf_event_header h = { type, 0, 8 + 24 + 24 };
	memcpy(buf, &h, sizeof(h));
	u32 ids[4] = { pid, ppid, pid, ppid };
	memcpy(buf + 1, ids, sizeof(ids));
	buf[3] = time;
	buf[4] = (u64)pid << 32 | pid;
	buf[5] = time;
	buf[6] = OL_ID;
	return h.size;
}

/* A user-mode sample of pid at time, its ip at ip, with a small stack. */
static size_t ol_sample(u64 *buf, u32 pid, u64 time, u64 ip)
{
	u64 *p = buf + 1;
	*p++ = OL_ID;
	*p++ = ip;
	*p++ = (u64)pid << 32 | pid;
	*p++ = time;
	*p++ = 0;                            /* no kernel chain */
	*p++ = PERF_SAMPLE_REGS_ABI_64;
	u64 stack = (u64)(uintptr_t)__builtin_frame_address(0);
	*p++ = stack;                        /* bp */
	*p++ = stack;                        /* sp */
	*p++ = ip;
	*p++ = 64;
	memset(p, 0, 64);
	p += 8;
	*p++ = 64;                           /* dyn_size */
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
				       (u16)((u8 *)p - (u8 *)buf) };
	memcpy(buf, &h, sizeof(h));
	return h.size;
}

/* This test's own executable mapping, as an MMAP2 would give it. */
static bool ol_own_text(struct rec_online_map *m, char *path, size_t cap)
{
	struct self_text t;
	if (!self_text_of((const void *)(uintptr_t)ol_own_text, &t) || strlen(t.path) >= cap)
		return false;
	strcpy(path, t.path);
	*m = (struct rec_online_map){ (u32)getpid(), t.start, t.end - t.start, t.pgoff, t.maj,
				      t.min, PROT_READ | PROT_EXEC, t.ino, path, 0 };
	return true;
}

/* An online unwinder for OL_TYPE samples, and this test's own text
 * mapping; NULL (after a failed check, or none possible) when either
 * cannot be had.  ol_end frees both. */
static struct rec_online *ol_start(struct rec_evsel *ev, struct rec_online_map *text,
				   char *path, size_t cap)
{
	*ev = (struct rec_evsel){ .attr = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(ev->attr),
		.sample_type = OL_TYPE, .sample_regs_user = OL_REGS, .sample_stack_user = 64,
		.sample_id_all = 1 } };
	VEC_PUSH(&ev->ids, OL_ID);
	struct rec_session s = { .evsels = ev, .nevsels = 1 };
	struct rec_online *o = rec_online_new(&s, true);
	CHECK(o != NULL, "no online unwinder: %s", err_msg());
	if (o && ol_own_text(text, path, cap))
		return o;
	rec_online_free(o);
	VEC_FREE(&ev->ids);
	return NULL;
}

static void ol_end(struct rec_online *o, struct rec_evsel *ev)
{
	rec_online_free(o);
	VEC_FREE(&ev->ids);
}

/* An exited process's maps and files go once the drain is a margin past
 * its exit, not before; a sample of it after that finds no maps (counted,
 * no crash: ASan checks no freed memory is read); a pid reused by a new
 * process keeps the new one's maps. */
static void test_online_release(void)
{
	struct rec_evsel ev;
	char path[4096];
	struct rec_online_map text;
	struct rec_online *o = ol_start(&ev, &text, path, sizeof(path));
	if (!o)
		return;
	u32 pid = text.pid, reused = pid + 1, parent = pid + 2;
	u64 ip = (u64)(uintptr_t)test_online_release;
	u64 buf[64];
	const void *out;
	const struct rec_online_stats *st = rec_online_stats(o);
	rec_online_add_map(o, &text);
	CHECK(st->files == 1, "files opened %llu", (unsigned long long)st->files);

	ol_task(buf, PERF_RECORD_EXIT, pid, pid, 10 * OL_SEC);
	rec_online_sideband(o, buf);
	rec_online_pass_end(o, 0, 1);
	ol_sample(buf, pid, 10 * OL_SEC + 1, ip);      /* a late one: still unwound */
	CHECK(rec_online_sample(o, buf, false, &out) > 0, "sample not rewritten");
	rec_online_pass_end(o, 0, 1);
	CHECK(st->maps_released == 0 && st->no_maps == 0,
	      "let go of before the margin: %llu maps, %llu samples without",
	      (unsigned long long)st->maps_released, (unsigned long long)st->no_maps);

	/* A pid that exits and comes back as another process before the
	 * drain is past its exit: the new process's maps stay. */
	ol_task(buf, PERF_RECORD_FORK, parent, 1, 10 * OL_SEC);
	rec_online_sideband(o, buf);
	ol_task(buf, PERF_RECORD_EXIT, reused, reused, 10 * OL_SEC);
	rec_online_sideband(o, buf);
	ol_task(buf, PERF_RECORD_FORK, reused, parent, 10 * OL_SEC + 5);
	rec_online_sideband(o, buf);

	ol_task(buf, PERF_RECORD_FORK, parent + 1, 1, 12 * OL_SEC);   /* time passes */
	rec_online_sideband(o, buf);
	rec_online_pass_end(o, 0, 1);
	CHECK(st->maps_released == 1 && st->files_closed == 1,
	      "after the margin: %llu maps let go of, %llu files closed",
	      (unsigned long long)st->maps_released, (unsigned long long)st->files_closed);
	ol_sample(buf, pid, 10 * OL_SEC + 2, ip);      /* later still */
	CHECK(rec_online_sample(o, buf, false, &out) > 0, "sample not rewritten");
	CHECK(st->no_maps == 1, "samples without maps %llu", (unsigned long long)st->no_maps);
	ol_sample(buf, reused, 12 * OL_SEC, ip);
	rec_online_sample(o, buf, false, &out);
	CHECK(st->no_maps == 1, "the reused pid lost its maps (%llu samples without)",
	      (unsigned long long)st->no_maps);
	ol_end(o, &ev);
}

/* An MMAP2 record of m (pid's, at m->time) into buf; its size. */
static size_t ol_mmap2(u64 *buf, const struct rec_online_map *m)
{
	size_t name = (strlen(m->path) + 8) & ~(size_t)7;
	u64 *p = buf + 1;
	*p++ = (u64)m->pid << 32 | m->pid;
	*p++ = m->start;
	*p++ = m->len;
	*p++ = m->pgoff;
	*p++ = (u64)m->min << 32 | m->maj;
	*p++ = m->ino;
	*p++ = 0;                            /* inode generation */
	*p++ = m->prot;                      /* prot, flags 0 */
	memset(p, 0, name);
	memcpy(p, m->path, strlen(m->path));
	p += name / 8;
	*p++ = (u64)m->pid << 32 | m->pid;
	*p++ = m->time;
	*p++ = OL_ID;
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
				       (u16)((u8 *)p - (u8 *)buf) };
	memcpy(buf, &h, sizeof(h));
	return h.size;
}

/* A COMM record of an exec by pid at time into buf. */
static size_t ol_exec(u64 *buf, u32 pid, u64 time)
{
	u64 *p = buf + 1;
	*p++ = (u64)pid << 32 | pid;
	memset(p, 0, 16);
	memcpy(p, "prog", 4);
	p += 2;
	*p++ = (u64)pid << 32 | pid;
	*p++ = time;
	*p++ = OL_ID;
	struct perf_event_header h = { PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC,
				       (u16)((u8 *)p - (u8 *)buf) };
	memcpy(buf, &h, sizeof(h));
	return h.size;
}

/* Whether pid's maps for a sample at time hold a mapping at addr. */
static bool ol_mapped(struct rec_online *o, u32 pid, u64 time, u64 addr)
{
	const struct sym_maps *m = rec_online_maps_at(o, pid, time);
	return m && sym_maps_find((struct sym_maps *)m, addr) != NULL;
}


/* A pass reads one ring after another: a child's FORK read before its
 * parent's mmaps, which came first, still gives the child the parent's
 * maps once the pass's side-band records are applied in time order. */
static void test_online_sideband_order(void)
{
	struct rec_evsel ev;
	char path[4096];
	struct rec_online_map text;
	struct rec_online *o = ol_start(&ev, &text, path, sizeof(path));
	if (!o)
		return;
	u32 parent = text.pid, child = parent + 1;
	u64 buf[600];
	ol_task(buf, PERF_RECORD_FORK, child, parent, 20);   /* one ring ... */
	rec_online_sideband(o, buf);
	text.time = 10;                                      /* ... the next */
	ol_mmap2(buf, &text);
	rec_online_sideband(o, buf);
	rec_online_sideband_flush(o);
	CHECK(ol_mapped(o, parent, 30, text.start), "the parent's text is not mapped");
	CHECK(ol_mapped(o, child, 30, text.start),
	      "the child forked after its parent's mmap has no copy of it");
	ol_end(o, &ev);
}

/* A pid that execs twice within one pass: a sample from each image finds
 * that image's maps, not the last one's nor the one before it. */
static void test_online_exec_chain(void)
{
	struct rec_evsel ev;
	char path[4096];
	struct rec_online_map text;
	struct rec_online *o = ol_start(&ev, &text, path, sizeof(path));
	if (!o)
		return;
	u32 pid = text.pid;
	u64 buf[600];
	struct rec_online_map second = { pid, 0x100000, 0x1000, 0, 0, 0, PROT_READ | PROT_EXEC,
					 1, "/nonexistent/second", 21 };
	struct rec_online_map third = second;
	third.start = 0x200000;
	third.path = "/nonexistent/third";
	third.time = 31;
	text.time = 10;
	ol_mmap2(buf, &text);
	rec_online_sideband(o, buf);
	ol_exec(buf, pid, 20);
	rec_online_sideband(o, buf);
	ol_mmap2(buf, &second);
	rec_online_sideband(o, buf);
	ol_exec(buf, pid, 30);
	rec_online_sideband(o, buf);
	ol_mmap2(buf, &third);
	rec_online_sideband(o, buf);
	rec_online_sideband_flush(o);
	CHECK(ol_mapped(o, pid, 15, text.start) && !ol_mapped(o, pid, 15, second.start),
	      "a sample of the first image does not find its maps");
	CHECK(ol_mapped(o, pid, 25, second.start) && !ol_mapped(o, pid, 25, text.start),
	      "a sample of the second image does not find its maps");
	CHECK(ol_mapped(o, pid, 35, third.start) && !ol_mapped(o, pid, 35, second.start),
	      "a sample of the last image does not find its maps");
	ol_end(o, &ev);
}

/* Beside the code, a file's segments mapped after it (.eh_frame's, read
 * through memory by libunwind) are kept; one mapped before it, and a data
 * file, are not. */
static void test_online_segments(void)
{
	struct rec_evsel ev;
	char path[4096];
	struct rec_online_map text;
	struct rec_online *o = ol_start(&ev, &text, path, sizeof(path));
	if (!o)
		return;
	struct rec_online_map head = text, tables = text, data = text;
	head.start = text.start - 0x1000;
	head.len = 0x1000;
	head.prot = PROT_READ;
	tables.start = text.start + text.len;
	tables.len = 0x1000;
	tables.prot = PROT_READ;
	data.start = tables.start + 0x100000;
	data.len = 0x1000;
	data.prot = PROT_READ;
	data.ino = text.ino + 1;
	data.path = "/var/data";
	rec_online_add_map(o, &head);
	rec_online_add_map(o, &text);
	rec_online_add_map(o, &tables);
	rec_online_add_map(o, &data);
	CHECK(ol_mapped(o, text.pid, 1, text.start), "the text is not mapped");
	CHECK(ol_mapped(o, text.pid, 1, tables.start), "the segment after the text is not kept");
	CHECK(!ol_mapped(o, text.pid, 1, head.start), "the segment before the text is kept");
	CHECK(!ol_mapped(o, text.pid, 1, data.start), "a data file is kept");
	CHECK(rec_online_stats(o)->files == 1, "files opened %llu",
	      (unsigned long long)rec_online_stats(o)->files);
	ol_end(o, &ev);
}

/* A process whose EXIT was lost (a ring overflowed): found gone at two
 * looks running, its maps are let go of once the drain is a margin past
 * the second look; until then its samples still unwind.  A live process
 * keeps its maps, and one found gone is counted once. */
static void test_online_lost_exit(void)
{
	struct rec_evsel ev;
	char path[4096];
	struct rec_online_map text;
	struct rec_online *o = ol_start(&ev, &text, path, sizeof(path));
	u32 dead = dead_pid();
	CHECK(dead > 0, "fork failed");
	if (!o || !dead) {
		ol_end(o, &ev);
		return;
	}
	const struct rec_online_stats *st = rec_online_stats(o);
	u64 ip = (u64)(uintptr_t)test_online_lost_exit;
	u64 buf[64];
	const void *out;
	struct rec_online_map gone = text;
	gone.pid = dead;
	rec_online_add_map(o, &text);
	rec_online_add_map(o, &gone);
	ol_task(buf, PERF_RECORD_EXIT, text.pid + 100000, 1, 10 * OL_SEC);   /* time passes */
	rec_online_sideband(o, buf);
	rec_online_pass_end(o, 0, 1);

	rec_online_check_alive(o);
	CHECK(st->vanished == 0, "taken for gone at the first look");
	rec_online_check_alive(o);
	CHECK(st->vanished == 1, "found gone twice: %llu taken for gone",
	      (unsigned long long)st->vanished);
	ol_sample(buf, dead, 10 * OL_SEC + 1, ip);        /* drained late: still unwound */
	CHECK(rec_online_sample(o, buf, false, &out) > 0, "sample not rewritten");
	rec_online_pass_end(o, 0, 1);
	CHECK(st->maps_released == 0 && st->no_maps == 0,
	      "let go of before the margin: %llu maps, %llu samples without",
	      (unsigned long long)st->maps_released, (unsigned long long)st->no_maps);

	ol_task(buf, PERF_RECORD_EXIT, text.pid + 100001, 1, 12 * OL_SEC);
	rec_online_sideband(o, buf);
	rec_online_pass_end(o, 0, 1);
	CHECK(st->maps_released == 1, "after the margin: %llu maps let go of",
	      (unsigned long long)st->maps_released);
	CHECK(!rec_online_maps_at(o, dead, 12 * OL_SEC), "the gone process's maps are kept");
	CHECK(ol_mapped(o, text.pid, 12 * OL_SEC, text.start), "a live process lost its maps");
	rec_online_check_alive(o);
	rec_online_check_alive(o);
	CHECK(st->vanished == 1, "counted again: %llu", (unsigned long long)st->vanished);
	ol_end(o, &ev);
}

int main(void)
{
	RUN(test_tally_walk_counts);
	RUN(test_tally_walk_stops_on_garbage);
	RUN(test_maps_line);
	RUN(test_kernel_text);
	RUN(test_cpuinfo);
	RUN(test_notes_build_id);
	RUN(test_file_build_ids);
	RUN(test_bids_table);
	RUN(test_online_release);
	RUN(test_online_sideband_order);
	RUN(test_online_exec_chain);
	RUN(test_online_segments);
	RUN(test_online_lost_exit);
	return test_summary();
}
