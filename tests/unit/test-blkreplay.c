/* test-blkreplay.c - unit tests of the block replay (block/btreplay/):
 * plans built from synthetic tracker events (streams per CPU, a split
 * joined again, what is left out), the plan file written and read back
 * and refused when damaged (each error naming the offset), the lateness
 * histogram's percentiles, and the target checks that need no device. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "block/btreplay/btreplay.h"
#include "tests/unit/test.h"

#define DEV ((7u << 20) | 3)

static void ev(struct bio_tracker *bt, enum bio_kind k, u64 sector, u32 nr, u64 time,
	       u32 cpu, const char *rwbs)
{
	struct bio_ev e = { .kind = k, .dev = DEV, .sector = sector, .nr_sector = nr };
	snprintf(e.rwbs, sizeof(e.rwbs), "%s", rwbs);
	struct bio_who w = { .time = time, .pid = 42, .tid = 42, .cpu = cpu, .comm = "dd" };
	bio_track(bt, &e, &w);
}

/* CPU 3: a write at 1000 and a 256-sector write split at 128 (its
 * remainder queued again); CPU 1: a read; a discard and a flush. */
static struct bio_tracker *pattern(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 1000, 3, "WS");
	ev(bt, BK_QUEUE, 100, 16, 1500, 1, "R");
	ev(bt, BK_QUEUE, 1024, 256, 2000, 3, "W");
	struct bio_ev x = { .kind = BK_SPLIT, .dev = DEV, .sector = 1024, .old_sector = 1152 };
	strcpy(x.rwbs, "W");
	struct bio_who w = { .time = 2001, .pid = 42, .tid = 42, .cpu = 3 };
	bio_track(bt, &x, &w);
	ev(bt, BK_QUEUE, 1152, 128, 2002, 3, "W");
	ev(bt, BK_QUEUE, 4096, 64, 2500, 1, "D");
	ev(bt, BK_QUEUE, 0, 0, 2600, 1, "FWS");
	return bt;
}

static void test_plan_from_tracker(void)
{
	struct bio_tracker *bt = pattern();
	struct bio_view_opts v = { 0 };
	struct blkr_extract_opts o = { .v = &v };
	struct blkr_plan p;
	CHECK(blkr_plan_from_bio(&p, bt, &o) == 0, "%s", err_msg());
	CHECK(p.ndevs == 1 && p.devs[0] == DEV, "%u devices", p.ndevs);
	CHECK(p.nstreams == 2 && p.streams[0].cpu == 1 && p.streams[1].cpu == 3,
	      "%u streams", p.nstreams);
	CHECK(blkr_plan_nios(&p) == 3 && p.left_out == 2, "%llu I/Os, %llu left out",
	      (unsigned long long)blkr_plan_nios(&p), (unsigned long long)p.left_out);
	CHECK(p.start == 1000 && blkr_plan_span(&p) == 1000, "start %llu span %llu",
	      (unsigned long long)p.start, (unsigned long long)blkr_plan_span(&p));
	const struct blkr_io *a = p.streams[1].ios;
	CHECK(a[0].offset == 0 && a[0].sector == 0 && a[0].nr_sector == 8 && a[0].write,
	      "first write");
	CHECK(a[1].offset == 1000 && a[1].sector == 1024 && a[1].nr_sector == 256 && a[1].write,
	      "the split write joined again: %u sectors at %llu", a[1].nr_sector,
	      (unsigned long long)a[1].sector);
	const struct blkr_io *r = p.streams[0].ios;
	CHECK(r[0].offset == 500 && r[0].nr_sector == 16 && !r[0].write, "the read");
	blkr_plan_free(&p);

	/* --cpu and -d narrow the plan; nothing left is an error. */
	int cpus[] = { 1 };
	struct rp_filter by_cpu = { .cpus = cpus, .ncpus = 1 };
	v.filter = &by_cpu;
	CHECK(blkr_plan_from_bio(&p, bt, &o) == 0 && blkr_plan_nios(&p) == 1, "CPU 1 only");
	blkr_plan_free(&p);
	v.dev = DEV + 1;
	CHECK(blkr_plan_from_bio(&p, bt, &o) < 0 && strstr(err_msg(), "nothing to replay"), "%s",
	      err_msg());
	bio_tracker_free(bt);
}

static char path[] = "/tmp/ember-test-plan.XXXXXX";

static size_t file_bytes(u8 *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, size, f) : 0;
	if (f)
		fclose(f);
	return n;
}

static void test_plan_file(void)
{
	struct bio_tracker *bt = pattern();
	struct bio_view_opts v = { 0 };
	struct blkr_extract_opts o = { .v = &v };
	struct blkr_plan p, q;
	blkr_plan_from_bio(&p, bt, &o);
	bio_tracker_free(bt);
	int fd = mkstemp(path);
	close(fd);
	CHECK(blkr_plan_save(&p, path) == 0, "%s", err_msg());
	CHECK(blkr_plan_load(&q, path) == 0, "%s", err_msg());
	CHECK(q.nstreams == 2 && blkr_plan_nios(&q) == 3 && q.start == 1000 && q.left_out == 2 &&
	      !memcmp(q.streams[1].ios, p.streams[1].ios, 2 * sizeof(struct blkr_io)),
	      "read back the same");
	blkr_plan_free(&q);

	u8 buf[4096], bad[4096];
	size_t n = file_bytes(buf, sizeof(buf));
	/* 48 header + 4 device + 2 * 16 streams + 3 * 24 I/Os */
	CHECK(n == 48 + 4 + 32 + 72, "%zu bytes", n);
	CHECK(blkr_plan_parse(&q, buf, n - 1, "P") < 0 && strstr(err_msg(), "cut short"), "%s",
	      err_msg());
	memcpy(bad, buf, n);
	bad[0] = 'X';
	CHECK(blkr_plan_parse(&q, bad, n, "P") < 0 && strstr(err_msg(), "not a plan file"), "%s",
	      err_msg());
	memcpy(bad, buf, n);
	bad[8] = 2;
	CHECK(blkr_plan_parse(&q, bad, n, "P") < 0 && strstr(err_msg(), "version 2 at offset 8"),
	      "%s", err_msg());
	/* The first I/O (CPU 1's read) names a device the plan lacks. */
	memcpy(bad, buf, n);
	bad[84 + 20] = 1;
	CHECK(blkr_plan_parse(&q, bad, n, "P") < 0 &&
	      strstr(err_msg(), "P: I/O 1 of CPU 1 at offset 84: its device index"), "%s",
	      err_msg());
	/* CPU 3's second I/O (the last) before its first. */
	memcpy(bad, buf, n);
	memset(bad + 84 + 48, 0, 8);
	bad[84 + 24] = 5;
	CHECK(blkr_plan_parse(&q, bad, n, "P") < 0 &&
	      strstr(err_msg(), "I/O 2 of CPU 3 at offset 132") &&
	      strstr(err_msg(), "before the previous"), "%s", err_msg());
	/* CPU 3's first write made 4 GiB + 4 KiB: one read or write moves
	 * at most 2 GiB - 4 KiB, and the length would not fit 32 bits. */
	memcpy(bad, buf, n);
	bad[108 + 16] = 8, bad[108 + 17] = 0, bad[108 + 18] = 0x80, bad[108 + 19] = 0;
	CHECK(blkr_plan_parse(&q, bad, n, "P") < 0 &&
	      strstr(err_msg(), "P: I/O 1 of CPU 3 at offset 108: its size, 4294971392 bytes, "
		     "is over the 2147479552"), "%s", err_msg());
	/* 2 GiB - 4 KiB is the most, and it reads. */
	bad[108 + 16] = 0xf8, bad[108 + 17] = 0xff, bad[108 + 18] = 0x3f;
	CHECK(blkr_plan_parse(&q, bad, n, "P") == 0 && q.streams[1].ios[0].nr_sector == 4194296,
	      "%s", err_msg());
	blkr_plan_free(&q);
	/* A stream claiming more I/Os than the header counts. */
	memcpy(bad, buf, n);
	bad[52 + 8] = 9;
	CHECK(blkr_plan_parse(&q, bad, n, "P") < 0 && strstr(err_msg(), "stream 0 at offset 52"),
	      "%s", err_msg());
	unlink(path);
	blkr_plan_free(&p);
}

static void test_lateness(void)
{
	struct blkr_late l = { 0 }, m = { 0 };
	CHECK(blkr_late_quantile(&l, 0.5) == 0, "empty");
	for (u64 us = 1; us <= 1000; us++)
		blkr_late_add(&l, us * 1000);
	u64 p50 = blkr_late_quantile(&l, 0.5), p99 = blkr_late_quantile(&l, 0.99);
	CHECK(p50 >= 500000 && p50 <= 500000 * 103 / 100, "p50 %llu", (unsigned long long)p50);
	CHECK(p99 >= 990000 && p99 <= 990000 * 103 / 100, "p99 %llu", (unsigned long long)p99);
	CHECK(l.max == 1000000 && blkr_late_quantile(&l, 1) == 1000000, "max");
	blkr_late_add(&m, 7);
	blkr_late_add(&m, UINT64_MAX);
	blkr_late_merge(&m, &l);
	CHECK(m.n == 1002 && m.max == UINT64_MAX && blkr_late_quantile(&m, 0.0001) == 7,
	      "merged: %llu values", (unsigned long long)m.n);
}

/* What br_prepare refuses before it touches a device. */
static void test_targets(void)
{
	u32 devs[] = { DEV, DEV + 1 };
	struct blkr_io io = { .nr_sector = 8 };
	struct blkr_stream st = { .cpu = 0, .n = 1, .ios = &io };
	struct blkr_plan p = { .ndevs = 1, .devs = devs, .nstreams = 1, .streams = &st };
	struct blkr_opts o = { .dest = "/dev/null" };
	bool usage = false;
	CHECK(!blkr_prepare(&p, &o, &usage) && usage && strstr(err_msg(), "is not a block device"),
	      "%s", err_msg());
	p.ndevs = 2;
	usage = false;
	CHECK(!blkr_prepare(&p, &o, &usage) && usage && strstr(err_msg(), "--map OLD=NEW"), "%s",
	      err_msg());
	struct blkr_map map = { .from = DEV + 5, .to = "loop0" };
	o.maps = &map;
	o.nmaps = 1;
	p.ndevs = 1;
	CHECK(!blkr_prepare(&p, &o, &usage) && usage && strstr(err_msg(), "the plan has no I/O on"),
	      "%s", err_msg());
}

int main(void)
{
	RUN(test_plan_from_tracker);
	RUN(test_plan_file);
	RUN(test_lateness);
	RUN(test_targets);
	return test_summary();
}
