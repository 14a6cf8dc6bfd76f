/* test-bio.c - unit tests of the block I/O tracker: synthetic event
 * sequences for merges, splits, requeues, partial completions, remaps and
 * lost completions, whose outcome is known by construction. */
#include "report/bio.h"
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

int main(void)
{
	RUN(test_back_merge);
	RUN(test_front_merge);
	RUN(test_split);
	RUN(test_requeue_and_partial);
	RUN(test_lost_and_before);
	RUN(test_rq_merge_and_remap);
	return test_summary();
}
