/* test-bio.c - unit tests of the block I/O tracker: synthetic event
 * sequences for merges, splits, requeues, partial completions, remaps and
 * lost completions, whose outcome is known by construction; and blktrace
 * files written in the other byte order (a big-endian machine's), read
 * back equal to the same records in this machine's order; blkparse lines
 * through the replay's filters. */
#include <stdlib.h>
#include <unistd.h>

#include "block/block-internal.h"
#include "tests/unit/test.h"

#define DEV ((7u << 20) | 0)

static void ev(struct bio_tracker *bt, enum bio_kind k, u64 sector, u32 nr, u64 time)
{
	struct bio_ev e = { .kind = k, .dev = DEV, .sector = sector, .nr_sector = nr };
	strcpy(e.rwbs, "W");
	struct bio_who w = { .time = time, .pid = 42, .tid = 42, .comm = "dd" };
	bio_track(bt, &e, &w);
}

static void test_back_merge(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);
	ev(bt, BK_GETRQ, 0, 8, 110);
	ev(bt, BK_QUEUE, 8, 8, 120);
	ev(bt, BK_BACKMERGE, 8, 8, 121);
	ev(bt, BK_INSERT, 0, 16, 130);
	ev(bt, BK_ISSUE, 0, 16, 140);
	ev(bt, BK_COMPLETE, 0, 16, 200);
	CHECK(bio_nios(bt) == 2, "%zu I/Os", bio_nios(bt));
	const struct bio_io *rq = bio_get(bt, 0), *m = bio_get(bt, 1);
	CHECK(rq->state == BS_DONE && rq->nr_sector == 16, "state %d nr %u", rq->state, rq->nr_sector);
	CHECK(m->state == BS_MERGED && bio_request(bt, m) == rq, "merged state %d", m->state);
	CHECK(bio_done_time(bt, m) == 200, "merged I/O done at %llu",
	      (unsigned long long)bio_done_time(bt, m));
	CHECK(bio_counts(bt)->back_merges == 1, "back merges");
	bio_tracker_free(bt);
}

static void test_front_merge(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 16, 8, 100);
	ev(bt, BK_GETRQ, 16, 8, 110);
	ev(bt, BK_QUEUE, 8, 8, 120);
	ev(bt, BK_FRONTMERGE, 8, 8, 121);
	ev(bt, BK_ISSUE, 8, 16, 140);
	ev(bt, BK_COMPLETE, 8, 16, 200);
	const struct bio_io *rq = bio_get(bt, 0), *m = bio_get(bt, 1);
	CHECK(rq->state == BS_DONE && rq->sector == 8, "request at %llu state %d",
	      (unsigned long long)rq->sector, rq->state);
	CHECK(bio_done_time(bt, m) == 200, "front-merged I/O completes with its request");
	CHECK(rq->flags & BF_DIRECT, "no insert: issued directly");
	CHECK(rq->t[BT_I] == rq->t[BT_D], "a missing insert counts at issue");
	bio_tracker_free(bt);
}

static void test_split(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 256, 100);
	struct bio_ev x = { .kind = BK_SPLIT, .dev = DEV, .sector = 0, .old_sector = 128 };
	struct bio_who w = { .time = 105, .pid = 42, .tid = 42 };
	bio_track(bt, &x, &w);
	ev(bt, BK_GETRQ, 0, 128, 110);
	ev(bt, BK_QUEUE, 128, 128, 112);     /* the remainder, queued again */
	ev(bt, BK_GETRQ, 128, 128, 115);
	ev(bt, BK_ISSUE, 0, 128, 120);
	ev(bt, BK_ISSUE, 128, 128, 121);
	ev(bt, BK_COMPLETE, 0, 128, 150);
	ev(bt, BK_COMPLETE, 128, 128, 160);
	CHECK(bio_nios(bt) == 2, "%zu I/Os (the remainder's queue continues it)", bio_nios(bt));
	const struct bio_io *a = bio_get(bt, 0), *b = bio_get(bt, 1);
	CHECK(a->nr_sector == 128 && b->nr_sector == 128, "sizes %u %u", a->nr_sector, b->nr_sector);
	CHECK(b->t[BT_Q] == 100 && (b->flags & BF_SPLIT), "the remainder keeps the queue time");
	CHECK(a->state == BS_DONE && b->state == BS_DONE, "both done");
	bio_tracker_free(bt);
}

/* Three 1024 KiB bios queued back to back, each split into two requests
 * of 512 KiB: --size counts each bio as queued (1024 KiB), --seek and
 * btt's pattern see them sequential, by the bios' own sectors. */
static void test_split_views(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	for (u64 i = 0; i < 3; i++) {
		u64 at = i * 2048, t = 1000 * (i + 1);
		ev(bt, BK_QUEUE, at, 2048, t);
		struct bio_ev x = { .kind = BK_SPLIT, .dev = DEV, .sector = at,
				    .old_sector = at + 1024 };
		strcpy(x.rwbs, "W");
		bio_track(bt, &x, &(struct bio_who){ .time = t + 1, .pid = 42, .tid = 42 });
		for (u64 part = at; part < at + 2048; part += 1024) {
			ev(bt, BK_GETRQ, part, 1024, t + 10);
			ev(bt, BK_ISSUE, part, 1024, t + 20);
			ev(bt, BK_COMPLETE, part, 1024, t + 500);
		}
	}
	struct bio_view_opts o = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bio_print_size(bt, &o, f);
	bio_print_seek(bt, &o, f);
	bio_print_btt(bt, &o, f);
	fclose(f);
	CHECK(strstr(buf, "Process name = dd: 3 I/Os") &&
	      strstr(buf, "      1024 -> 2047       : 3 "), "--size: 3 of 1024 KiB:\n%s", buf);
	CHECK(strstr(buf, ": 2 I/Os after the first, 2 sequential (100.0%)"), "--seek:\n%s", buf);
	CHECK(strstr(buf, "pattern: 2 sequential (100.0%), 0 random"), "btt:\n%s", buf);
	CHECK(strstr(buf, "I/Os: 3 completed, 3145728 bytes"), "btt: 3 I/Os of 3 MiB");
	free(buf);
	bio_tracker_free(bt);
}

static void test_requeue_and_partial(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 16, 100);
	ev(bt, BK_GETRQ, 0, 16, 110);
	ev(bt, BK_ISSUE, 0, 16, 120);
	ev(bt, BK_REQUEUE, 0, 16, 130);
	ev(bt, BK_ISSUE, 0, 16, 140);
	ev(bt, BK_COMPLETE, 0, 8, 150);
	const struct bio_io *rq = bio_get(bt, 0);
	CHECK(rq->state == BS_REQUEST, "half completed: still in flight");
	ev(bt, BK_COMPLETE, 8, 8, 160);
	CHECK(rq->state == BS_DONE && rq->t[BT_C] == 160, "done at %llu",
	      (unsigned long long)rq->t[BT_C]);
	CHECK(rq->t[BT_D] == 140 && rq->requeues == 1, "issued again at %llu after a requeue",
	      (unsigned long long)rq->t[BT_D]);
	bio_tracker_free(bt);
}

static void test_lost_and_before(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_COMPLETE, 999, 8, 50);     /* begun before the recording */
	ev(bt, BK_QUEUE, 0, 8, 100);
	ev(bt, BK_GETRQ, 0, 8, 110);
	ev(bt, BK_ISSUE, 0, 8, 120);
	/* its completion never arrives; the same place is used again */
	ev(bt, BK_QUEUE, 0, 8, 200);
	ev(bt, BK_GETRQ, 0, 8, 210);
	ev(bt, BK_ISSUE, 0, 8, 220);
	ev(bt, BK_COMPLETE, 0, 8, 300);
	CHECK(bio_counts(bt)->before == 1, "before %llu", (unsigned long long)bio_counts(bt)->before);
	CHECK(bio_counts(bt)->lost == 1, "lost %llu", (unsigned long long)bio_counts(bt)->lost);
	CHECK(bio_get(bt, 0)->state == BS_LOST && bio_get(bt, 1)->state == BS_DONE,
	      "states %d %d", bio_get(bt, 0)->state, bio_get(bt, 1)->state);
	CHECK(bio_get(bt, 1)->t[BT_C] == 300, "the second completes");
	bio_tracker_free(bt);
}

static void test_rq_merge_and_remap(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);
	ev(bt, BK_GETRQ, 0, 8, 101);
	ev(bt, BK_QUEUE, 8, 8, 102);
	ev(bt, BK_GETRQ, 8, 8, 103);
	ev(bt, BK_RQ_MERGE, 8, 8, 104);
	ev(bt, BK_ISSUE, 0, 16, 110);
	ev(bt, BK_COMPLETE, 0, 16, 120);
	CHECK(bio_done_time(bt, bio_get(bt, 1)) == 120, "an absorbed request completes with the other");
	ev(bt, BK_QUEUE, 64, 8, 130);
	struct bio_ev r = { .kind = BK_BIO_REMAP, .dev = (8u << 20), .sector = 2112,
			    .nr_sector = 8, .old_dev = DEV, .old_sector = 64 };
	struct bio_who w = { .time = 131 };
	bio_track(bt, &r, &w);
	CHECK(bio_get(bt, 2)->state == BS_REMAPPED, "remapped: state %d", bio_get(bt, 2)->state);
	bio_tracker_free(bt);
}

/* ---- btt's phases when requests are issued again ------------------------ */

/* A phase's row of the btt table (its first device's): MIN, AVG, MAX in
 * ns and N; all 0 when the row shows none. */
static bool btt_row(const struct bio_tracker *bt, const char *phase, u64 v[4])
{
	char buf[8192];
	FILE *out = fmemopen(buf, sizeof(buf), "w");
	struct bio_view_opts o = { 0 };
	int rc = bio_print_btt(bt, &o, out);
	fclose(out);
	memset(v, 0, 4 * sizeof(*v));
	const char *line = buf;
	while (line && strncmp(line, phase, 3)) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	if (rc || !line)
		return false;
	unsigned long long s[3], ns[3], n;
	if (sscanf(line + 3, " %llu.%llu %llu.%llu %llu.%llu %llu", &s[0], &ns[0], &s[1], &ns[1],
		   &s[2], &ns[2], &n) != 7)
		return strstr(line, " - ") != NULL;
	for (int i = 0; i < 3; i++)
		v[i] = s[i] * 1000000000ull + ns[i];
	v[3] = n;
	return true;
}

static bool row_is(const struct bio_tracker *bt, const char *phase, u64 min, u64 avg, u64 max,
		   u64 n)
{
	u64 v[4];
	bool ok = btt_row(bt, phase, v) && v[0] == min && v[1] == avg && v[2] == max && v[3] == n;
	if (!ok)
		fprintf(stderr, "%s: MIN %llu AVG %llu MAX %llu N %llu\n", phase,
			(unsigned long long)v[0], (unsigned long long)v[1],
			(unsigned long long)v[2], (unsigned long long)v[3]);
	return ok;
}

/* A request with a bio merged in, requeued twice (issued again straight
 * from the dispatch list, then inserted again first): G2I counts at each
 * insert, I2D (the request's I/O) and M2D (the merged one) at each issue,
 * D2C from the last issue, for each I/O, as btt counts them.  An interval
 * ends while it is requeued: what it counted goes with it. */
static void test_requeue_phases(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);
	ev(bt, BK_GETRQ, 0, 8, 110);
	ev(bt, BK_QUEUE, 8, 8, 120);
	ev(bt, BK_BACKMERGE, 8, 8, 121);
	ev(bt, BK_INSERT, 0, 16, 130);
	ev(bt, BK_ISSUE, 0, 16, 140);      /* I2D 10, M2D 19 */
	ev(bt, BK_REQUEUE, 0, 16, 150);
	ev(bt, BK_ISSUE, 0, 16, 175);      /* I2D 45, M2D 54 */
	ev(bt, BK_REQUEUE, 0, 16, 180);
	struct bio_tracker *none = bio_take_done(bt);   /* nothing finished yet */
	CHECK(bio_nios(none) == 0 && bio_nios(bt) == 2, "in flight across the interval");
	bio_tracker_free(none);
	ev(bt, BK_INSERT, 0, 16, 190);     /* G2I 80 (the first 20) */
	ev(bt, BK_ISSUE, 0, 16, 200);      /* I2D 10, M2D 79 */
	ev(bt, BK_COMPLETE, 0, 16, 300);
	const struct bio_again *a = bio_again_of(bt, bio_get(bt, 0));
	CHECK(a && a->i2d.n == 3 && a->i2d.sum == 65 && a->g2i.n == 2 && a->g2i.sum == 100,
	      "the request's I/O: I2D at each issue, G2I at each insert");
	CHECK(row_is(bt, "G2I", 20, 50, 80, 2), "G2I at each insert");
	CHECK(row_is(bt, "I2D", 10, 22, 45, 3), "I2D at each of 3 issues (65 ns / 3, rounded)");
	CHECK(row_is(bt, "M2D", 19, 51, 79, 3), "M2D for the merged I/O at each issue");
	CHECK(row_is(bt, "Q2M", 1, 1, 1, 1), "Q2M of the merged I/O");
	CHECK(row_is(bt, "D2C", 100, 100, 100, 2), "D2C from the last issue, for each I/O");
	CHECK(row_is(bt, "Q2C", 180, 190, 200, 2), "Q2C for each I/O");
	struct bio_tracker *done = bio_take_done(bt);
	CHECK(row_is(done, "I2D", 10, 22, 45, 3) && row_is(done, "M2D", 19, 51, 79, 3),
	      "the interval's tracker counts the same");
	bio_tracker_free(done);
	bio_tracker_free(bt);

	/* Without a requeue: one of each, and none of G2I or I2D when the
	 * request was issued without an insert; an insert that begins at a
	 * front-merged I/O's sector is that I/O's. */
	bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);
	ev(bt, BK_GETRQ, 0, 8, 110);
	ev(bt, BK_ISSUE, 0, 8, 140);
	ev(bt, BK_COMPLETE, 0, 8, 200);
	CHECK(row_is(bt, "G2I", 0, 0, 0, 0) && row_is(bt, "I2D", 0, 0, 0, 0) &&
	      row_is(bt, "Q2G", 10, 10, 10, 1), "issued without an insert: no G2I, no I2D");
	ev(bt, BK_QUEUE, 108, 8, 300);
	ev(bt, BK_GETRQ, 108, 8, 310);
	ev(bt, BK_QUEUE, 100, 8, 320);
	ev(bt, BK_FRONTMERGE, 100, 8, 322);
	ev(bt, BK_INSERT, 100, 16, 330);
	ev(bt, BK_ISSUE, 100, 16, 345);
	ev(bt, BK_COMPLETE, 100, 16, 400);
	CHECK(row_is(bt, "I2D", 15, 15, 15, 1) && row_is(bt, "M2D", 0, 0, 0, 0) &&
	      row_is(bt, "G2I", 0, 0, 0, 0), "the insert is the front-merged I/O's");
	bio_tracker_free(bt);
}

/* The btt table's share line. */
static bool shares_are(const struct bio_tracker *bt, const char *want)
{
	char buf[8192];
	FILE *out = fmemopen(buf, sizeof(buf), "w");
	struct bio_view_opts o = { 0 };
	int rc = bio_print_btt(bt, &o, out);
	fclose(out);
	const char *line = strstr(buf, "share of Q2C:");
	size_t n = line ? strcspn(line, "\n") : 0;
	bool ok = !rc && line && n == strlen(want) && !strncmp(line, want, n);
	if (!ok)
		fprintf(stderr, "%.*s\n", (int)n, line ? line : "(no share line)");
	return ok;
}

/* A request issued without an insert spends getrq to issue in G2D, its
 * own row and share, never in G2I's; a share is named only where its row
 * counted some: G2I and I2D once a request is inserted. */
static void test_btt_shares(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);
	ev(bt, BK_GETRQ, 0, 8, 110);
	ev(bt, BK_ISSUE, 0, 8, 140);
	ev(bt, BK_COMPLETE, 0, 8, 200);
	CHECK(row_is(bt, "G2D", 30, 30, 30, 1) && row_is(bt, "G2I", 0, 0, 0, 0),
	      "issued without an insert: G2D 30 ns, no G2I");
	CHECK(shares_are(bt, "share of Q2C: Q2G 10.00%  G2D 30.00%  D2C 60.00%"),
	      "no G2I or I2D share with their rows at N 0");
	ev(bt, BK_QUEUE, 1000, 8, 300);
	ev(bt, BK_GETRQ, 1000, 8, 310);
	ev(bt, BK_INSERT, 1000, 8, 330);
	ev(bt, BK_ISSUE, 1000, 8, 345);
	ev(bt, BK_COMPLETE, 1000, 8, 400);
	CHECK(row_is(bt, "G2D", 30, 30, 30, 1) && row_is(bt, "G2I", 20, 20, 20, 1) &&
	      row_is(bt, "I2D", 15, 15, 15, 1), "one of each: G2D, G2I, I2D");
	CHECK(shares_are(bt, "share of Q2C: Q2G 10.00%  G2I 10.00%  G2D 15.00%  I2D 7.50%  "
			 "D2C 57.50%"), "the shares of both requests' 200 ns");
	bio_tracker_free(bt);
	bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);
	CHECK(shares_are(bt, "share of Q2C: - (no request seen from queue to completion)"),
	      "none measured: no share");
	bio_tracker_free(bt);
}

/* ---- byte-swapped blktrace files ------------------------------------------ */

struct raw_rec {
	u32 seq; u64 time, sector; u32 bytes, action, pid, dev, cpu; u16 error;
	const char *pdu; u16 pdu_len;
};

static void put(u8 *p, const void *v, size_t n, bool swap)
{
	const u8 *b = v;
	for (size_t i = 0; i < n; i++)
		p[i] = swap ? b[n - 1 - i] : b[i];
}

/* One blk_io_trace record, in this machine's order or swapped. */
static size_t pack(u8 *out, const struct raw_rec *r, bool swap)
{
	u32 magic = 0x65617407;
	put(out, &magic, 4, swap);
	put(out + 4, &r->seq, 4, swap);
	put(out + 8, &r->time, 8, swap);
	put(out + 16, &r->sector, 8, swap);
	put(out + 24, &r->bytes, 4, swap);
	put(out + 28, &r->action, 4, swap);
	put(out + 32, &r->pid, 4, swap);
	put(out + 36, &r->dev, 4, swap);
	put(out + 40, &r->cpu, 4, swap);
	put(out + 44, &r->error, 2, swap);
	put(out + 46, &r->pdu_len, 2, swap);
	memcpy(out + 48, r->pdu, r->pdu_len);   /* payloads are big-endian anyway */
	return 48 + r->pdu_len;
}

#define ACT(a, cat) ((u32)(a) | (u32)(cat) << 16)

/* A write queued by "writer" on 7,0, remapped from 8,16, issued and
 * completed with an error; then a read; in two per-CPU files. */
static void write_capture(const char *base, bool swap)
{
	static const char remap[16] = { 0, 0x80, 0, 0x10, 0, 0x70, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34 };
	const struct raw_rec recs[2][4] = { {
		{ 1, 1000, 0, 0, ACT(PD_BLK_TN_PROCESS, PD_BLK_TC_NOTIFY), 77, DEV, 0, 0, "writer", 7 },
		{ 2, 2000, 4096, 65536, ACT(PD_BLK_TA_QUEUE, PD_BLK_TC_WRITE | PD_BLK_TC_QUEUE), 77, DEV, 0, 0, "", 0 },
		{ 3, 2200, 4096, 65536, ACT(PD_BLK_TA_GETRQ, PD_BLK_TC_WRITE | PD_BLK_TC_QUEUE), 77, DEV, 0, 0, "", 0 },
		{ 4, 2500, 9999, 8, ACT(PD_BLK_TA_REMAP, PD_BLK_TC_WRITE | PD_BLK_TC_QUEUE), 77, DEV, 0, 0, remap, 16 },
	}, {
		{ 1, 2800, 4096, 65536, ACT(PD_BLK_TA_INSERT, PD_BLK_TC_WRITE | PD_BLK_TC_QUEUE), 77, DEV, 1, 0, "", 0 },
		{ 2, 3000, 4096, 65536, ACT(PD_BLK_TA_ISSUE, PD_BLK_TC_WRITE | PD_BLK_TC_ISSUE), 77, DEV, 1, 0, "", 0 },
		{ 3, 9000, 4096, 65536, ACT(PD_BLK_TA_COMPLETE, PD_BLK_TC_WRITE | PD_BLK_TC_COMPLETE), 0, DEV, 1, 5, "", 0 },
		{ 4, 9500, 8192, 4096, ACT(PD_BLK_TA_QUEUE, PD_BLK_TC_READ | PD_BLK_TC_QUEUE), 78, DEV, 1, 0, "", 0 },
	} };
	for (int cpu = 0; cpu < 2; cpu++) {
		char path[256];
		snprintf(path, sizeof(path), "%s.blktrace.%d", base, cpu);
		FILE *f = fopen(path, "wb");
		for (int i = 0; i < 4; i++) {
			u8 buf[128];
			fwrite(buf, 1, pack(buf, &recs[cpu][i], swap), f);
		}
		fclose(f);
	}
}

static void remove_capture(const char *base)
{
	char path[256];
	for (int cpu = 0; cpu < 2; cpu++) {
		snprintf(path, sizeof(path), "%s.blktrace.%d", base, cpu);
		unlink(path);
	}
}

static bool same_rec(const struct pd_blk_rec *a, const struct pd_blk_rec *b)
{
	return a->time == b->time && a->sector == b->sector && a->sequence == b->sequence &&
	       a->bytes == b->bytes && a->action == b->action && a->pid == b->pid &&
	       a->device == b->device && a->cpu == b->cpu && a->error == b->error &&
	       a->pdu_len == b->pdu_len && a->version == b->version && a->file == b->file &&
	       !memcmp(a->pdu, b->pdu, a->pdu_len);
}

static void test_blktrace_swapped(void)
{
	char dir[] = "/tmp/ember-test-bio-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp failed");
		return;
	}
	/* Bases without a file of their own: the per-CPU files are read. */
	char nat[64], sw[64];
	snprintf(nat, sizeof(nat), "%s/native", dir);
	snprintf(sw, sizeof(sw), "%s/swapped", dir);
	write_capture(nat, false);
	write_capture(sw, true);
	CHECK(pd_blk_probe(sw), "a swapped capture is not recognised");
	struct pd_blk_reader *a = pd_blk_open(nat), *b = pd_blk_open(sw);
	CHECK(a && b, "open: %s", err_msg());
	int n = 0, ra = 0, rb = 0;
	struct pd_blk_rec x, y;
	while (a && b && (ra = pd_blk_next(a, &x)) == 1 && (rb = pd_blk_next(b, &y)) == 1) {
		n++;
		CHECK(same_rec(&x, &y), "record %d differs: time %llu/%llu action %#x/%#x", n,
		      (unsigned long long)x.time, (unsigned long long)y.time, x.action, y.action);
	}
	CHECK(n == 8 && ra == 0, "%d records read in step (rc %d/%d)", n, ra, rb);
	CHECK(n < 1 || (x.time == 9500 && x.error == 0), "last native record wrong");
	pd_blk_close(a);
	pd_blk_close(b);

	/* Through the tracker: the same I/Os, phases, comm and error. */
	struct bio_tracker *ta = bio_tracker_new(NULL), *tb = bio_tracker_new(NULL);
	CHECK(bio_feed_blktrace(ta, nat) == 0 && bio_feed_blktrace(tb, sw) == 0, "feed: %s",
	      err_msg());
	CHECK(bio_nios(ta) == bio_nios(tb) && bio_nios(ta) >= 2, "I/Os %zu vs %zu", bio_nios(ta),
	      bio_nios(tb));
	for (size_t i = 0; i < bio_nios(ta) && i < bio_nios(tb); i++) {
		const struct bio_io *p = bio_get(ta, i), *q = bio_get(tb, i);
		CHECK(!memcmp(p->t, q->t, sizeof(p->t)) && p->sector == q->sector &&
		      p->nr_sector == q->nr_sector && p->error == q->error &&
		      !strcmp(p->comm, q->comm) && !strcmp(p->rwbs, q->rwbs),
		      "I/O %zu differs (sector %llu/%llu, comm %s/%s)", i,
		      (unsigned long long)p->sector, (unsigned long long)q->sector, p->comm, q->comm);
	}
	const struct bio_io *w = bio_nios(tb) ? bio_get(tb, 0) : NULL;
	CHECK(w && w->t[BT_Q] == 2000 && w->t[BT_G] == 2200 && w->t[BT_I] == 2800 && w->t[BT_D] == 3000 && w->t[BT_C] == 9000 &&
	      w->error == -5 && !strcmp(w->comm, "writer") && w->nr_sector == 128,
	      "swapped write decoded wrong");
	CHECK(bio_counts(tb)->remaps == bio_counts(ta)->remaps, "remaps differ");
	bio_tracker_free(ta);
	bio_tracker_free(tb);
	remove_capture(nat);
	remove_capture(sw);
	rmdir(dir);
}

/* blkparse lines through a filter: the events of the tasks, CPUs and
 * times it passes, each line as it is without the filter (the time column
 * counts from the first event, shown or not). */
static size_t blkparse_lines(const struct rp_filter *f, char *buf, size_t size)
{
	FILE *out = fmemopen(buf, size, "w");
	struct bio_blkparse bp = { .out = out, .filter = f };
	struct bio_ev e = { .kind = BK_QUEUE, .dev = DEV, .nr_sector = 8 };
	strcpy(e.rwbs, "W");
	static const struct bio_who who[] = {
		{ .time = 1000, .pid = 42, .tid = 42, .cpu = 0, .seq = 1, .comm = "dd" },
		{ .time = 2000, .pid = 43, .tid = 44, .cpu = 1, .seq = 2, .comm = "fio" },
		{ .time = 3000, .pid = 42, .tid = 42, .cpu = 1, .seq = 3, .comm = "dd" },
		{ .time = 4000, .pid = 0, .tid = 0, .cpu = 0, .seq = 4, .comm = NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(who); i++) {
		e.sector = i * 8;
		bio_blkparse_line(&bp, &e, &who[i]);
	}
	fclose(out);
	size_t n = 0;
	for (const char *p = buf; *p; p++)
		n += *p == '\n';
	return n;
}

/* Whether every line of part is a line of all. */
static bool lines_in(const char *part, const char *all)
{
	for (const char *p = part; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		bool found = false;
		for (const char *a = all; *a && !found;) {
			const char *anl = strchr(a, '\n');
			size_t m = anl ? (size_t)(anl - a) + 1 : strlen(a);
			found = m == n && !memcmp(a, p, n);
			a += m;
		}
		if (!found)
			return false;
		p += n;
	}
	return true;
}

static void test_blkparse_filter(void)
{
	char all[1024], buf[1024];
	CHECK(blkparse_lines(NULL, all, sizeof(all)) == 4, "unfiltered: 4 lines");
	pid_t pid = 42, tid = 44;
	int cpu = 1;
	struct rp_filter by_pid = { .pids = &pid, .npids = 1 };
	CHECK(blkparse_lines(&by_pid, buf, sizeof(buf)) == 2, "--pid 42: 2 lines");
	CHECK(lines_in(buf, all) && strstr(buf, "0.000002000"),
	      "--pid 42: the unfiltered lines (the third 2 us after the first)");
	struct rp_filter by_tid = { .tids = &tid, .ntids = 1 };
	CHECK(blkparse_lines(&by_tid, buf, sizeof(buf)) == 1 && strstr(buf, "[fio]"),
	      "--tid 44: fio's line");
	struct rp_filter by_cpu = { .cpus = &cpu, .ncpus = 1 };
	CHECK(blkparse_lines(&by_cpu, buf, sizeof(buf)) == 2, "--cpu 1: 2 lines");
	struct rp_filter by_comm = { .comms = "fio,dd" };
	CHECK(blkparse_lines(&by_comm, buf, sizeof(buf)) == 3 && lines_in(buf, all),
	      "--comm fio,dd: 3 lines (not the comm-less one)");
	struct rp_filter by_time = { .time_start = 2000, .time_end = 3000 };
	CHECK(blkparse_lines(&by_time, buf, sizeof(buf)) == 2 && strstr(buf, "0.000001000"),
	      "--time: 2 lines, times from the first event");
}

/* An I/O is shown by the task, CPU and time of its queue: one queued on
 * CPU 0 and split (the split seen on CPU 1, in another task), and one
 * queued on CPU 1.  --cpu 0 shows the first and its remainder only. */
static void test_cpu_filter(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	struct bio_ev q = { .kind = BK_QUEUE, .dev = DEV, .sector = 0, .nr_sector = 256 };
	strcpy(q.rwbs, "W");
	struct bio_who w0 = { .time = 100, .pid = 42, .tid = 42, .cpu = 0, .comm = "dd" };
	bio_track(bt, &q, &w0);
	struct bio_ev x = { .kind = BK_SPLIT, .dev = DEV, .sector = 0, .old_sector = 128 };
	struct bio_who w1 = { .time = 105, .pid = 7, .tid = 7, .cpu = 1, .comm = "kworker" };
	bio_track(bt, &x, &w1);
	q.sector = 4096;
	q.nr_sector = 8;
	struct bio_who w2 = { .time = 110, .pid = 43, .tid = 43, .cpu = 1, .comm = "fio" };
	bio_track(bt, &q, &w2);
	CHECK(bio_nios(bt) == 3, "%zu I/Os", bio_nios(bt));
	const struct bio_io *rest = bio_get(bt, 1);
	CHECK((rest->flags & BF_SPLIT) && rest->cpu == 0 && rest->pid == 42 &&
	      !strcmp(rest->comm, "dd"), "the remainder is the queuer's: CPU %u pid %u %s",
	      rest->cpu, rest->pid, rest->comm);
	int cpu = 0;
	struct rp_filter by_cpu = { .cpus = &cpu, .ncpus = 1 };
	struct bio_view_opts o = { .filter = &by_cpu };
	bool shown[3];
	for (int i = 0; i < 3; i++)
		shown[i] = bio_io_shown(bio_get(bt, (size_t)i), &o);
	CHECK(shown[0] && shown[1] && !shown[2], "--cpu 0: %d %d %d", shown[0], shown[1],
	      shown[2]);
	cpu = 1;
	for (int i = 0; i < 3; i++)
		shown[i] = bio_io_shown(bio_get(bt, (size_t)i), &o);
	CHECK(!shown[0] && !shown[1] && shown[2], "--cpu 1: %d %d %d", shown[0], shown[1],
	      shown[2]);
	bio_tracker_free(bt);
}

/* Intervals: finished I/Os leave with their merged ones, in-flight ones
 * stay and complete later through the rebuilt maps. */
static void test_take_done(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	ev(bt, BK_QUEUE, 0, 8, 100);      /* a: request, b merged into it */
	ev(bt, BK_GETRQ, 0, 8, 110);
	ev(bt, BK_QUEUE, 64, 8, 115);     /* c: in flight across the tick */
	ev(bt, BK_GETRQ, 64, 8, 116);
	ev(bt, BK_QUEUE, 8, 8, 120);
	ev(bt, BK_BACKMERGE, 8, 8, 121);
	ev(bt, BK_ISSUE, 0, 16, 140);
	ev(bt, BK_ISSUE, 64, 8, 141);
	ev(bt, BK_COMPLETE, 0, 16, 200);
	struct bio_tracker *done = bio_take_done(bt);
	CHECK(bio_nios(done) == 2 && bio_nios(bt) == 1, "%zu done, %zu kept", bio_nios(done),
	      bio_nios(bt));
	const struct bio_io *m = bio_get(done, 1);
	CHECK(bio_request(done, m) == bio_get(done, 0) && bio_done_time(done, m) == 200,
	      "the merged I/O still finds its request");
	bio_io_list l = { 0 };
	bio_served(done, bio_get(done, 0), &l);
	CHECK(l.n == 2 && l.v[1] == m, "the request served itself and the merged I/O");
	CHECK(bio_counts(done)->back_merges == 1 && bio_counts(bt)->back_merges == 0,
	      "the counts go with the interval");
	bio_tracker_free(done);
	ev(bt, BK_COMPLETE, 64, 8, 300);
	CHECK(bio_get(bt, 0)->state == BS_DONE && bio_get(bt, 0)->t[BT_C] == 300,
	      "the kept request completes after the split");
	done = bio_take_done(bt);
	CHECK(bio_nios(done) == 1 && bio_nios(bt) == 0, "then it leaves too");
	VEC_FREE(&l);
	bio_tracker_free(done);
	bio_tracker_free(bt);
}

static int count_interval(void *ctx, const struct bio_tracker *bt, u64 end, bool last)
{
	u64 *v = ctx;
	(void)end;
	v[0]++;
	v[1] += bio_nios(bt);
	return last ? 0 : v[0] >= v[2];
}

/* Ticks end intervals; a request counts once, in the interval it completed. */
static void test_ticks(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	u64 seen[3] = { 0, 0, 100 };      /* intervals, I/Os, stop after */
	bio_set_interval(bt, 1000, count_interval, seen);
	for (u64 i = 0; i < 10; i++) {
		u64 t = 1 + i * 500;
		CHECK(bio_tick_until(bt, t) == 0, "tick");
		ev(bt, BK_QUEUE, i * 8, 8, t);
		ev(bt, BK_GETRQ, i * 8, 8, t + 1);
		ev(bt, BK_ISSUE, i * 8, 8, t + 2);
		ev(bt, BK_COMPLETE, i * 8, 8, t + 700);
	}
	CHECK(bio_tick(bt, 6000, true) == 0, "last tick");
	CHECK(seen[0] == 5 && seen[1] == 10, "%llu intervals, %llu I/Os",
	      (unsigned long long)seen[0], (unsigned long long)seen[1]);
	bio_tracker_free(bt);
	bt = bio_tracker_new(NULL);
	u64 two[3] = { 0, 0, 2 };
	bio_set_interval(bt, 1000, count_interval, two);
	for (u64 t = 1; t < 10000; t += 100)
		bio_tick_until(bt, t);
	CHECK(two[0] == 2 && bio_stopped(bt), "stopped after 2 intervals (%llu)",
	      (unsigned long long)two[0]);
	bio_tracker_free(bt);
}

static void count_done(void *ctx, const struct bio_tracker *bt, const struct bio_io *rq)
{
	(void)bt;
	(void)rq;
	(*(u64 *)ctx)++;
}

/* --snoop's tracker forgets finished I/Os: memory stays bounded, and an
 * I/O in flight across a forgetting still completes. */
static void test_forget(void)
{
	struct bio_tracker *bt = bio_tracker_new(NULL);
	u64 done = 0;
	size_t most = 0;
	bio_set_forget(bt, true);
	bio_set_done(bt, count_done, &done);
	ev(bt, BK_QUEUE, 1u << 30, 8, 1);       /* in flight all along */
	ev(bt, BK_GETRQ, 1u << 30, 8, 2);
	ev(bt, BK_ISSUE, 1u << 30, 8, 3);
	for (u64 i = 0; i < 20000; i++) {
		u64 t = 10 + i * 10;
		ev(bt, BK_QUEUE, i * 8, 8, t);
		ev(bt, BK_GETRQ, i * 8, 8, t + 1);
		ev(bt, BK_ISSUE, i * 8, 8, t + 2);
		ev(bt, BK_COMPLETE, i * 8, 8, t + 5);
		most = MAX(most, bio_nios(bt));
	}
	ev(bt, BK_COMPLETE, 1u << 30, 8, 300000);
	CHECK(done == 20001, "%llu requests completed", (unsigned long long)done);
	CHECK(most <= 4096, "at most %zu I/Os held", most);
	bio_tracker_free(bt);
}

int main(void)
{
	RUN(test_back_merge);
	RUN(test_front_merge);
	RUN(test_split);
	RUN(test_split_views);
	RUN(test_requeue_and_partial);
	RUN(test_lost_and_before);
	RUN(test_rq_merge_and_remap);
	RUN(test_requeue_phases);
	RUN(test_btt_shares);
	RUN(test_blktrace_swapped);
	RUN(test_blkparse_filter);
	RUN(test_cpu_filter);
	RUN(test_take_done);
	RUN(test_ticks);
	RUN(test_forget);
	return test_summary();
}
