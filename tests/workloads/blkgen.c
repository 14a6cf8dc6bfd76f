/* blkgen.c - a blktrace capture known by construction: classic per-CPU
 * files (BASE.blktrace.0 and .1) of N requests on two devices, each with
 * one of seven stories at known times: plain, requeued and issued again
 * (R then D, or R then I and D), requeued twice, back and front merges,
 * and issued without an insert, so btt and ember bio can be compared on
 * requeues, which no device here makes on demand.
 *
 * usage: blkgen BASE [N]   N requests (default 140, a multiple of 7 is
 *                          every story on both devices equally)
 * prints: blkgen: N requests, R records in BASE.blktrace.{0,1}
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* blk_io_trace's layout (48 bytes, this machine's order) and the action
 * bits: the low 16 say what happened, the high 16 its categories. */
enum { TA_QUEUE = 1, TA_BACKMERGE, TA_FRONTMERGE, TA_GETRQ, TA_SLEEPRQ, TA_REQUEUE,
       TA_ISSUE, TA_COMPLETE, TA_INSERT = 12 };
enum { TC_WRITE = 1 << 1, TC_SYNC = 1 << 3, TC_QUEUE = 1 << 4, TC_REQUEUE = 1 << 5,
       TC_ISSUE = 1 << 6, TC_COMPLETE = 1 << 7, TC_NOTIFY = 1 << 10 };
#define MAGIC 0x65617407u
#define DEV_A ((8u << 20) | 0u)     /* 8,0 and 8,16: not a remapper's major */
#define DEV_B ((8u << 20) | 16u)
#define PID 4242
#define NCPU 2

struct rec {
	uint64_t time, sector;
	uint32_t bytes, action, dev, cpu;
	const char *pdu;               /* a notify's comm, or NULL */
};

static struct rec *recs;
static size_t nrecs, cap;

static void add(uint64_t time, uint32_t dev, uint64_t sector, uint32_t sectors,
		uint32_t act, uint32_t cat, uint32_t cpu)
{
	if (nrecs == cap) {
		cap = cap ? cap * 2 : 1024;
		recs = realloc(recs, cap * sizeof(*recs));
		if (!recs) {
			perror("blkgen");
			exit(1);
		}
	}
	recs[nrecs++] = (struct rec){ .time = time, .sector = sector, .bytes = sectors * 512,
				      .action = act | cat << 16, .dev = dev, .cpu = cpu };
}

/* Request k: its device, sector, direction, CPUs and time unit vary with
 * k, its story with k % 7.  Times are ns; u is the story's step. */
static void request(unsigned k)
{
	uint32_t dev = (k / 7) % 2 ? DEV_B : DEV_A;
	uint64_t s = 4096 + (uint64_t)k * 256, t = 1000000 + (uint64_t)k * 40000;
	uint64_t u = 1000 + (k * 37 % 11) * 130;
	uint32_t rw = k % 2 ? TC_WRITE | TC_SYNC : 0, q = TC_QUEUE | rw;
	uint32_t is = TC_ISSUE | rw, rq = TC_REQUEUE | rw, done = TC_COMPLETE | rw;
	uint32_t a = k % NCPU, b = (k + 1) % NCPU;   /* submitter's CPU, driver's */
	switch (k % 7) {
	case 0:   /* plain */
		add(t, dev, s, 8, TA_QUEUE, q, a);
		add(t + u, dev, s, 8, TA_GETRQ, q, a);
		add(t + 2 * u, dev, s, 8, TA_INSERT, q, a);
		add(t + 4 * u, dev, s, 8, TA_ISSUE, is, a);
		add(t + 20 * u, dev, s, 8, TA_COMPLETE, done, b);
		break;
	case 1:   /* requeued from the dispatch list: issued again, no insert */
		add(t, dev, s, 8, TA_QUEUE, q, a);
		add(t + u, dev, s, 8, TA_GETRQ, q, a);
		add(t + 2 * u, dev, s, 8, TA_INSERT, q, a);
		add(t + 4 * u, dev, s, 8, TA_ISSUE, is, a);
		add(t + 5 * u, dev, s, 8, TA_REQUEUE, rq, a);
		add(t + 9 * u, dev, s, 8, TA_ISSUE, is, b);
		add(t + 25 * u, dev, s, 8, TA_COMPLETE, done, b);
		break;
	case 2:   /* requeued through the requeue list: inserted again */
		add(t, dev, s, 8, TA_QUEUE, q, a);
		add(t + u, dev, s, 8, TA_GETRQ, q, a);
		add(t + 2 * u, dev, s, 8, TA_INSERT, q, a);
		add(t + 4 * u, dev, s, 8, TA_ISSUE, is, a);
		add(t + 5 * u, dev, s, 8, TA_REQUEUE, rq, a);
		add(t + 6 * u, dev, s, 8, TA_INSERT, q, b);
		add(t + 8 * u, dev, s, 8, TA_ISSUE, is, b);
		add(t + 22 * u, dev, s, 8, TA_COMPLETE, done, b);
		break;
	case 3:   /* a back merge, then requeued twice */
		add(t, dev, s, 8, TA_QUEUE, q, a);
		add(t + u, dev, s, 8, TA_GETRQ, q, a);
		add(t + 2 * u, dev, s + 8, 8, TA_QUEUE, q, a);
		add(t + 2 * u + 100, dev, s + 8, 8, TA_BACKMERGE, q, a);
		add(t + 3 * u, dev, s, 16, TA_INSERT, q, a);
		add(t + 5 * u, dev, s, 16, TA_ISSUE, is, b);
		add(t + 6 * u, dev, s, 16, TA_REQUEUE, rq, b);
		add(t + 8 * u, dev, s, 16, TA_ISSUE, is, b);
		add(t + 9 * u, dev, s, 16, TA_REQUEUE, rq, b);
		add(t + 12 * u, dev, s, 16, TA_ISSUE, is, a);
		add(t + 30 * u, dev, s, 16, TA_COMPLETE, done, b);
		break;
	case 4:   /* a front merge */
		add(t, dev, s + 8, 8, TA_QUEUE, q, a);
		add(t + u, dev, s + 8, 8, TA_GETRQ, q, a);
		add(t + 2 * u, dev, s, 8, TA_QUEUE, q, a);
		add(t + 2 * u + 100, dev, s, 8, TA_FRONTMERGE, q, a);
		add(t + 3 * u, dev, s, 16, TA_INSERT, q, a);
		add(t + 5 * u, dev, s, 16, TA_ISSUE, is, a);
		add(t + 21 * u, dev, s, 16, TA_COMPLETE, done, b);
		break;
	case 5:   /* issued without an insert (straight to the driver) */
		add(t, dev, s, 8, TA_QUEUE, q, a);
		add(t + u, dev, s, 8, TA_GETRQ, q, a);
		add(t + 3 * u, dev, s, 8, TA_ISSUE, is, a);
		add(t + 18 * u, dev, s, 8, TA_COMPLETE, done, b);
		break;
	default:  /* a back merge, requeued and inserted again */
		add(t, dev, s, 8, TA_QUEUE, q, a);
		add(t + u, dev, s, 8, TA_GETRQ, q, a);
		add(t + 2 * u, dev, s + 8, 8, TA_QUEUE, q, a);
		add(t + 2 * u + 100, dev, s + 8, 8, TA_BACKMERGE, q, a);
		add(t + 3 * u, dev, s, 16, TA_INSERT, q, a);
		add(t + 5 * u, dev, s, 16, TA_ISSUE, is, a);
		add(t + 7 * u, dev, s, 16, TA_REQUEUE, rq, a);
		add(t + 10 * u, dev, s, 16, TA_INSERT, q, b);
		add(t + 11 * u, dev, s, 16, TA_ISSUE, is, b);
		add(t + 27 * u, dev, s, 16, TA_COMPLETE, done, b);
		break;
	}
}

/* By time; equal times keep the order they were added in. */
static int by_time(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a < b ? -1 : a > b;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static int write_rec(FILE *f, const struct rec *r, uint32_t seq)
{
	unsigned char b[48 + 16] = { 0 };
	uint16_t pdu = r->pdu ? (uint16_t)(strlen(r->pdu) + 1) : 0;
	put32(b, MAGIC);
	put32(b + 4, seq);
	put64(b + 8, r->time);
	put64(b + 16, r->sector);
	put32(b + 24, r->bytes);
	put32(b + 28, r->action);
	put32(b + 32, PID);
	put32(b + 36, r->dev);
	put32(b + 40, r->cpu);
	memcpy(b + 46, &pdu, 2);
	if (pdu)
		memcpy(b + 48, r->pdu, pdu);
	return fwrite(b, 1, 48u + pdu, f) == 48u + pdu ? 0 : -1;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 140;
	if (argc < 2 || argc > 3 || n <= 0 || n > 100000) {
		fprintf(stderr, "usage: blkgen BASE [N]\n");
		return 2;
	}
	/* Each CPU's file names the submitter first, as blktrace does. */
	for (uint32_t cpu = 0; cpu < NCPU; cpu++) {
		add(1, DEV_A, 0, 0, 0, TC_NOTIFY, cpu);
		recs[nrecs - 1].pdu = "blkgen";
		recs[nrecs - 1].bytes = 0;
	}
	for (long k = 0; k < n; k++)
		request((unsigned)k);
	qsort(recs, nrecs, sizeof(*recs), by_time);
	size_t requeues = 0;
	for (uint32_t cpu = 0; cpu < NCPU; cpu++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.blktrace.%u", argv[1], cpu);
		FILE *f = fopen(path, "wb");
		if (!f) {
			perror(path);
			return 1;
		}
		uint32_t seq = 0;
		int bad = 0;
		for (size_t i = 0; i < nrecs; i++)
			if (recs[i].cpu == cpu) {
				bad |= write_rec(f, &recs[i], ++seq);
				requeues += (recs[i].action & 0xffff) == TA_REQUEUE;
			}
		if (fclose(f) || bad) {
			perror(path);
			return 1;
		}
	}
	printf("blkgen: %ld requests, %zu R records in %s.blktrace.{0,1}\n", n, requeues, argv[1]);
	free(recs);
	return 0;
}
