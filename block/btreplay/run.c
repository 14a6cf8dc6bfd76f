/* run.c - the replay: one submitter thread per stream (or per group of
 * streams folded together by -c), each with its own io_uring on O_DIRECT
 * descriptors, issuing its I/Os in order, each when its recorded offset
 * (divided by -x) has come, and noting how late it was.
 *
 * Each submitter (a thread named ember-replay, pinned to the recorded CPU
 * when this process may run there, so each I/O enters the block layer
 * from the CPU it was queued on) has its own ring (depth up to 128) and
 * two buffers of its largest I/O: reads land in one, writes come from the
 * other, all zeros (what the I/Os carry is not part of the replay).  Rings
 * and buffers are made before the threads start; an iteration begins for
 * all at one moment 2 ms ahead, behind a mutex and condition gate (a
 * failed thread start cannot leave the others waiting).  A submitter sends
 * every I/O that is due in one submit, sleeps to the next one's time
 * (TIMER_ABSTIME, timer slack 1 ns, steps of at most 50 ms) or waits for
 * a free slot.  A stop request (common/stop.c's counter) ends the issuing;
 * the I/Os in flight complete and are counted.  Lateness is the time just
 * before the submit less the due time.  On the shared VM, a replay of
 * tests/workloads/biopattern's 500 I/Os over 1.4 s landed within 1% of the
 * recorded span, lateness p50 0.04-0.6 ms and p99 8-17 ms (a loaded CPU's
 * wake-up latency; the submit itself took at most 2.4 ms). */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "block/btreplay/btreplay-internal.h"

#define MAX_DEPTH 128          /* I/Os in flight per submitter */

struct submitter {
	struct blkr_replay *r;
	const struct blkr_io **ios;   /* in issue order */
	u64 n;
	int cpu;                    /* pinned to it, or -1 */
	struct io_uring ring;
	bool ring_up;
	u32 depth, inflight;
	const struct blkr_io **slot;  /* the I/O in flight in each slot */
	u32 *free_slots, nfree;
	u64 *due;                   /* of the batch being submitted */
	u8 *rbuf, *wbuf;            /* reads land in one, writes come from the other */
	size_t buf_bytes;
	pthread_t thread;
	bool started;
	/* results */
	u64 reads, writes, bytes, skipped, errors;
	char first_error[384];
	char fatal[192];            /* the ring failed: the replay is cut short */
	struct blkr_late late;
};

struct blkr_replay {
	const struct blkr_plan *plan;
	struct blkr_opts o;
	struct blkr_targets t;
	struct submitter *sub;
	u32 nsub;
	/* The gate: each iteration begins when generation moves on and ends
	 * when running is back to 0; quit sends the threads home. */
	pthread_mutex_t mu;
	pthread_cond_t go, finished;
	u32 generation, running;
	bool quit;
	u64 t0;                     /* the current iteration's start */
	u32 max_depth;              /* I/Os in flight per submitter (submitter_depth) */
};

/* ---- folding the streams onto the submitters ------------------------------------ */

static int cmp_io_ptr(const void *a, const void *b)
{
	const struct blkr_io *x = *(const struct blkr_io *const *)a;
	const struct blkr_io *y = *(const struct blkr_io *const *)b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	/* Same time: by stream, then by place in it (the arrays' addresses). */
	return (uintptr_t)x < (uintptr_t)y ? -1 : (uintptr_t)x > (uintptr_t)y;
}

/* Submitter j takes streams j, j + nsub, ...; folded ones merged by time,
 * each stream's order kept. */
static void fold(struct blkr_replay *r)
{
	const struct blkr_plan *p = r->plan;
	for (u32 j = 0; j < r->nsub; j++) {
		struct submitter *s = &r->sub[j];
		for (u32 k = j; k < p->nstreams; k += r->nsub)
			s->n += p->streams[k].n;
		s->ios = xcalloc(s->n ? s->n : 1, sizeof(*s->ios));
		u64 n = 0;
		for (u32 k = j; k < p->nstreams; k += r->nsub)
			for (u64 i = 0; i < p->streams[k].n; i++)
				s->ios[n++] = &p->streams[k].ios[i];
		if (r->nsub < p->nstreams)
			qsort(s->ios, s->n, sizeof(*s->ios), cmp_io_ptr);
	}
}

/* The recorded CPU of the submitter's first stream, when we may run there. */
static int pin_cpu(const struct blkr_replay *r, u32 j)
{
	cpu_set_t set;
	u32 cpu = r->plan->streams[j].cpu;
	if (sched_getaffinity(0, sizeof(set), &set) < 0 || cpu >= CPU_SETSIZE ||
	    !CPU_ISSET(cpu, &set))
		return -1;
	return (int)cpu;
}

/* ---- rings and buffers -------------------------------------------------------------- */

static void *zeroed_pages(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The requests a target's queue holds at once (sysfs nr_requests), 0 when
 * unknown. */
static u32 queue_requests(u32 dev)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/nr_requests", BIO_MAJOR(dev),
		 BIO_MINOR(dev));
	FILE *f = fopen(path, "re");
	unsigned n = 0;
	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* How many I/Os one submitter keeps in flight: half of the smallest
 * target queue shared among the submitters.  A queue out of requests
 * fails io_uring's non-blocking issue with EAGAIN after the bio was
 * queued, and the retry queues it again: the block layer would see one
 * recorded I/O twice (seen with 128 in flight on a loop device's 128). */
static u32 submitter_depth(const struct blkr_replay *r)
{
	u32 least = 0;
	for (u32 i = 0; i < r->t.n; i++) {
		u32 n = queue_requests(r->t.v[i].dev);
		if (n && (!least || n < least))
			least = n;
	}
	if (!least)
		return MAX_DEPTH / 4;
	return MAX(MIN(least / 2 / MAX(r->nsub, 1), (u32)MAX_DEPTH), 1);
}

static int setup_submitter(struct blkr_replay *r, struct submitter *s)
{
	u64 largest = 0, issued = 0;
	for (u64 i = 0; i < s->n; i++)
		if (!s->ios[i]->write || r->o.write) {
			largest = MAX(largest, (u64)s->ios[i]->nr_sector * 512);
			issued++;
		}
	s->depth = (u32)MAX(MIN(issued, (u64)r->max_depth), 1);
	s->slot = xcalloc(s->depth, sizeof(*s->slot));
	s->due = xcalloc(s->depth, sizeof(*s->due));
	s->free_slots = xcalloc(s->depth, sizeof(*s->free_slots));
	for (u32 i = 0; i < s->depth; i++)
		s->free_slots[s->nfree++] = s->depth - 1 - i;
	/* Reads may land in one buffer together and writes share one of
	 * zeros: what the I/Os carry is not part of the replay. */
	s->buf_bytes = (size_t)MAX(largest, 4096);
	s->rbuf = zeroed_pages(s->buf_bytes);
	s->wbuf = zeroed_pages(s->buf_bytes);
	if (!s->rbuf || !s->wbuf) {
		err_set_errno("cannot map %zu bytes of I/O buffers", 2 * s->buf_bytes);
		return -1;
	}
	int rc = io_uring_queue_init(s->depth, &s->ring, 0);
	if (rc < 0) {
		errno = -rc;
		err_set_errno("io_uring_queue_init (%u entries)", s->depth);
		return -1;
	}
	s->ring_up = true;
	return 0;
}

static void free_submitter(struct submitter *s)
{
	if (s->ring_up)
		io_uring_queue_exit(&s->ring);
	if (s->rbuf)
		munmap(s->rbuf, s->buf_bytes);
	if (s->wbuf)
		munmap(s->wbuf, s->buf_bytes);
	free(s->ios);
	free(s->slot);
	free(s->due);
	free(s->free_slots);
}

/* ---- issuing ----------------------------------------------------------------------- */

static u64 due_at(const struct blkr_replay *r, const struct blkr_io *io)
{
	if (r->o.no_stall)
		return r->t0;
	double f = r->o.factor > 0 ? r->o.factor : 1;
	return r->t0 + (u64)((double)io->offset / f);
}

static void note_completion(struct submitter *s, const struct io_uring_cqe *cqe)
{
	u32 slot = (u32)io_uring_cqe_get_data64(cqe);
	const struct blkr_io *io = s->slot[slot];
	u64 len = (u64)io->nr_sector * 512;
	if (cqe->res == (int)len) {
		*(io->write ? &s->writes : &s->reads) += 1;
		s->bytes += len;
	} else {
		const struct blkr_target *t = &s->r->t.v[s->r->t.of_dev[io->dev]];
		if (!s->errors++)
			snprintf(s->first_error, sizeof(s->first_error), "%s of %llu bytes at sector "
				 "%llu of %s: %s", io->write ? "a write" : "a read",
				 (unsigned long long)len, (unsigned long long)io->sector, t->path,
				 cqe->res < 0 ? strerror(-cqe->res) : "short transfer");
	}
	s->free_slots[s->nfree++] = slot;
	s->inflight--;
}

/* Takes the completions there are (waiting for one when wait). */
static void reap(struct submitter *s, bool wait)
{
	struct io_uring_cqe *cqe;
	if (wait && s->inflight) {
		int rc;
		while ((rc = io_uring_wait_cqe(&s->ring, &cqe)) == -EINTR)
			;
		if (rc < 0) {
			snprintf(s->fatal, sizeof(s->fatal), "io_uring_wait_cqe: %s", strerror(-rc));
			return;
		}
	}
	while (s->inflight && io_uring_peek_cqe(&s->ring, &cqe) == 0) {
		note_completion(s, cqe);
		io_uring_cqe_seen(&s->ring, cqe);
	}
}

static void prep(struct submitter *s, const struct blkr_io *io, u32 batch, u64 due)
{
	const struct blkr_target *t = &s->r->t.v[s->r->t.of_dev[io->dev]];
	u32 slot = s->free_slots[--s->nfree];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);   /* depth slots: never NULL */
	u32 len = io->nr_sector * 512;   /* at most BLKR_MAX_BYTES: target.c checked */
	if (io->write)
		io_uring_prep_write(sqe, t->fd, s->wbuf, len, io->sector * 512);
	else
		io_uring_prep_read(sqe, t->fd, s->rbuf, len, io->sector * 512);
	io_uring_sqe_set_data64(sqe, slot);
	s->slot[slot] = io;
	s->due[batch] = due;
	s->inflight++;
}

static void submit(struct submitter *s, u32 batch)
{
	u64 now = now_ns();
	int rc = io_uring_submit(&s->ring);
	if (rc < 0) {
		snprintf(s->fatal, sizeof(s->fatal), "io_uring_submit: %s", strerror(-rc));
		return;
	}
	for (u32 i = 0; i < batch; i++)
		blkr_late_add(&s->late, now > s->due[i] ? now - s->due[i] : 0);
}

static bool stopping(const struct blkr_replay *r)
{
	return r->o.stop && *r->o.stop;
}

/* Sleeps in steps of at most STOP_CHECK_NS, so that a stop request (the
 * signal lands on one thread) ends the others' waits too. */
#define STOP_CHECK_NS 50000000ull

static void sleep_until(const struct blkr_replay *r, u64 t)
{
	while (!stopping(r)) {
		u64 now = now_ns();
		if (now >= t)
			return;
		u64 until = t - now > STOP_CHECK_NS ? now + STOP_CHECK_NS : t;
		struct timespec ts = { .tv_sec = (time_t)(until / 1000000000),
				       .tv_nsec = (long)(until % 1000000000) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* One pass over the submitter's I/Os: those due go out together, one
 * submit for all; between them it sleeps, or waits for a free slot.  A
 * stop request ends the issuing; what is in flight completes and is
 * counted. */
static void replay_once(struct submitter *s)
{
	struct blkr_replay *r = s->r;
	u64 i = 0;
	while ((i < s->n || s->inflight) && !s->fatal[0]) {
		if (i < s->n && stopping(r))
			i = s->n;
		reap(s, false);
		u64 now = now_ns();
		u32 batch = 0;
		for (; i < s->n && s->nfree; i++) {
			const struct blkr_io *io = s->ios[i];
			if (io->write && !r->o.write) {
				s->skipped++;
				continue;
			}
			u64 due = due_at(r, io);
			if (due > now)
				break;
			prep(s, io, batch++, due);
		}
		if (batch)
			submit(s, batch);
		else if (i < s->n && s->nfree)
			sleep_until(r, due_at(r, s->ios[i]));
		else
			reap(s, true);
	}
}

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;
	struct blkr_replay *r = s->r;
	if (s->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	prctl(PR_SET_TIMERSLACK, 1UL);   /* wake at the due time, not 50 us later */
	pthread_setname_np(pthread_self(), "ember-replay");
	for (u32 seen = 0;;) {
		pthread_mutex_lock(&r->mu);
		while (r->generation == seen)
			pthread_cond_wait(&r->go, &r->mu);
		seen = r->generation;
		bool quit = r->quit;
		pthread_mutex_unlock(&r->mu);
		if (quit)
			return NULL;
		replay_once(s);
		pthread_mutex_lock(&r->mu);
		if (--r->running == 0)
			pthread_cond_signal(&r->finished);
		pthread_mutex_unlock(&r->mu);
	}
}

/* ---- the whole --------------------------------------------------------------------- */

struct blkr_replay *blkr_prepare(const struct blkr_plan *p, const struct blkr_opts *o, bool *usage)
{
	struct blkr_replay *r = xcalloc(1, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->go, NULL);
	pthread_cond_init(&r->finished, NULL);
	r->plan = p;
	r->o = *o;
	r->nsub = o->submitters && o->submitters < p->nstreams ? o->submitters : p->nstreams;
	r->sub = xcalloc(r->nsub, sizeof(*r->sub));
	if (blkr_targets_open(&r->t, p, o, usage) < 0) {
		blkr_free(r);
		return NULL;
	}
	fold(r);
	r->max_depth = submitter_depth(r);   /* the targets' sysfs, read once */
	for (u32 j = 0; j < r->nsub; j++) {
		r->sub[j].r = r;
		r->sub[j].cpu = pin_cpu(r, j);
		if (setup_submitter(r, &r->sub[j]) < 0) {
			blkr_free(r);
			return NULL;
		}
	}
	return r;
}

static int start_threads(struct blkr_replay *r)
{
	for (u32 j = 0; j < r->nsub; j++) {
		int rc = pthread_create(&r->sub[j].thread, NULL, submitter_main, &r->sub[j]);
		if (rc) {
			errno = rc;
			err_set_errno("cannot start submitter %u", j);
			return -1;
		}
		r->sub[j].started = true;
	}
	return 0;
}

static void sum_results(const struct blkr_replay *r, struct blkr_result *res)
{
	struct blkr_late late = { 0 };
	for (u32 j = 0; j < r->nsub; j++) {
		const struct submitter *s = &r->sub[j];
		res->reads += s->reads;
		res->writes += s->writes;
		res->bytes += s->bytes;
		res->writes_skipped += s->skipped;
		if (s->errors && !res->errors)
			snprintf(res->first_error, sizeof(res->first_error), "%s", s->first_error);
		res->errors += s->errors;
		blkr_late_merge(&late, &s->late);
	}
	res->late_p50 = blkr_late_quantile(&late, 0.5);
	res->late_p99 = blkr_late_quantile(&late, 0.99);
	res->late_max = late.max;
}

/* Every iteration starts all submitters at one moment, 2 ms ahead so each
 * is waiting when it comes, and ends when all are done. */
int blkr_run(struct blkr_replay *r, struct blkr_result *res)
{
	memset(res, 0, sizeof(*res));
	res->submitters = r->nsub;
	res->targets = r->t.n;
	int rc = 0;
	if (start_threads(r) < 0) {
		rc = -1;
		goto out;
	}
	u32 iterations = r->o.iterations ? r->o.iterations : 1;
	res->planned = blkr_plan_nios(r->plan) * iterations;
	for (u32 it = 0; it < iterations && rc == 0 && !stopping(r); it++) {
		pthread_mutex_lock(&r->mu);
		r->t0 = now_ns() + 2000000;
		r->running = r->nsub;
		r->generation++;
		pthread_cond_broadcast(&r->go);
		while (r->running)
			pthread_cond_wait(&r->finished, &r->mu);
		pthread_mutex_unlock(&r->mu);
		res->elapsed += now_ns() - r->t0;
		for (u32 j = 0; j < r->nsub && rc == 0; j++)
			if (r->sub[j].fatal[0]) {
				err_set("submitter %u: %s", j, r->sub[j].fatal);
				rc = -1;
			}
	}
out:
	sum_results(r, res);
	res->stopped = stopping(r);
	return rc;
}

const char *blkr_target_path(const struct blkr_replay *r, u32 i)
{
	return i < r->t.n ? r->t.v[i].path : "";
}

void blkr_free(struct blkr_replay *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->quit = true;
	r->generation++;
	pthread_cond_broadcast(&r->go);
	pthread_mutex_unlock(&r->mu);
	for (u32 j = 0; j < r->nsub; j++) {
		if (r->sub[j].started)
			pthread_join(r->sub[j].thread, NULL);
		free_submitter(&r->sub[j]);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->go);
	pthread_cond_destroy(&r->finished);
	blkr_targets_close(&r->t);
	free(r->sub);
	free(r);
}
