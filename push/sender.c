/* sender.c - the upload thread: profiles handed over by a live view wait
 * in a short queue and go out in order; a failed one goes to the spool,
 * which drains, oldest first, once the backend answers again.  The view
 * only ever copies into the queue, so it never waits on the network.
 *
 * push_sender_put copies a profile into a queue of 4 and returns (a full
 * queue moves its oldest to the spool).  While the backend fails, each new
 * profile gets one attempt and the spool is tried again after 2, 4 ... 60
 * s; once an upload goes through, the spool drains, oldest first (a
 * spooled profile refused with a 4xx that is its own fault is dropped).
 * push_sender_finish gives the queue and the spool until a deadline,
 * spools the rest and joins. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "push/push.h"

#define QUEUE_MAX 4
#define SPOOL_WAIT_FIRST 2.0       /* seconds before the spool is tried again */
#define SPOOL_WAIT_MAX 60.0

struct queued {
	struct push_profile p;
	void *data;
};

struct push_sender {
	struct push_client *c;
	struct push_spool *s;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queued q[QUEUE_MAX];
	size_t head, n;
	bool finishing;
	u64 deadline;
	bool healthy;              /* the last upload went through */
	u64 spool_at;              /* when to try the spool again (unhealthy) */
	double spool_wait;
	struct push_stats st;
	struct strbuf buf;         /* a spooled profile's bytes */
};

static void note_error(struct push_sender *ps)
{
	snprintf(ps->st.last_error, sizeof(ps->st.last_error), "%s", err_msg());
}

/* A profile that is not going out now: into the spool, or lost. */
static void keep_or_drop(struct push_sender *ps, const struct push_profile *p)
{
	if (ps->s && push_spool_put(ps->s, p, &ps->st.dropped) == 0) {
		ps->st.spooled++;
		return;
	}
	if (ps->s)
		note_error(ps);
	ps->st.dropped++;
}

static void mark(struct push_sender *ps, bool ok)
{
	ps->healthy = ok;
	if (ok) {
		ps->spool_wait = SPOOL_WAIT_FIRST;
		return;
	}
	note_error(ps);
	ps->spool_at = now_ns() + (u64)(ps->spool_wait * 1e9);
	ps->spool_wait = MIN(ps->spool_wait * 2, SPOOL_WAIT_MAX);
}

/* The queue's oldest, sent with the lock released (held on return). */
static void send_queued(struct push_sender *ps)
{
	struct queued e = ps->q[ps->head];
	ps->head = (ps->head + 1) % QUEUE_MAX;
	ps->n--;
	bool late = ps->finishing && now_ns() >= ps->deadline;
	int attempts = ps->healthy ? 0 : 1;   /* during an outage: one try each */
	pthread_mutex_unlock(&ps->mu);
	int rc = late ? -1 : push_send(ps->c, &e.p, attempts);
	pthread_mutex_lock(&ps->mu);
	if (rc == 0) {
		ps->st.sent++;
		mark(ps, true);
	} else {
		if (!late) {
			ps->st.failed++;
			mark(ps, false);
		}
		keep_or_drop(ps, &e.p);
	}
	free(e.data);
}

/* A 4xx that is the profile's fault (not the credentials' or the
 * address's): sending it again would fail again. */
static bool refused_for_good(long status)
{
	return status >= 400 && status < 500 && status != 401 && status != 403 &&
	       status != 404 && status != 408 && status != 429;
}

/* The spool's oldest, sent with the lock released (held on return). */
static void send_spooled(struct push_sender *ps)
{
	struct push_profile p;
	u64 id;
	if (push_spool_oldest(ps->s, &p, &ps->buf, &id, &ps->st.dropped) <= 0)
		return;
	int attempts = ps->healthy ? 0 : 1;
	pthread_mutex_unlock(&ps->mu);
	int rc = push_send(ps->c, &p, attempts);
	long status = push_last_status(ps->c);
	pthread_mutex_lock(&ps->mu);
	if (rc == 0 || refused_for_good(status)) {
		push_spool_remove(ps->s, id);
		if (rc == 0) {
			ps->st.sent++;
			ps->st.sent_from_spool++;
		} else {
			ps->st.dropped++;
		}
	}
	mark(ps, rc == 0);
}

static bool spool_due(const struct push_sender *ps)
{
	if (!ps->s || !push_spool_count(ps->s))
		return false;
	if (ps->finishing)   /* while the backend answers and time is left */
		return ps->healthy && now_ns() < ps->deadline;
	return ps->healthy || now_ns() >= ps->spool_at;
}

static void wait_for_work(struct push_sender *ps)
{
	if (!ps->s || !push_spool_count(ps->s) || ps->healthy) {
		pthread_cond_wait(&ps->cv, &ps->mu);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	u64 now = now_ns(), left = ps->spool_at > now ? ps->spool_at - now : 0;
	u64 at = (u64)ts.tv_sec * 1000000000u + (u64)ts.tv_nsec + left;
	ts.tv_sec = (time_t)(at / 1000000000u);
	ts.tv_nsec = (long)(at % 1000000000u);
	pthread_cond_timedwait(&ps->cv, &ps->mu, &ts);
}

static void *sender_main(void *arg)
{
	struct push_sender *ps = arg;
	pthread_mutex_lock(&ps->mu);
	for (;;) {
		if (ps->n)
			send_queued(ps);
		else if (spool_due(ps))
			send_spooled(ps);
		else if (ps->finishing)
			break;
		else
			wait_for_work(ps);
	}
	pthread_mutex_unlock(&ps->mu);
	return NULL;
}

struct push_sender *push_sender_start(struct push_client *c, struct push_spool *s)
{
	struct push_sender *ps = xcalloc(1, sizeof(*ps));
	ps->c = c;
	ps->s = s;
	ps->healthy = true;
	ps->spool_wait = SPOOL_WAIT_FIRST;
	pthread_mutex_init(&ps->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ps->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&ps->thread, NULL, sender_main, ps) != 0)
		abort();   /* as an allocation failure: nothing sane follows */
	return ps;
}

void push_sender_put(struct push_sender *ps, const struct push_profile *p)
{
	struct queued e = { *p, xmalloc(p->len ? p->len : 1) };
	memcpy(e.data, p->data, p->len);
	e.p.data = e.data;
	pthread_mutex_lock(&ps->mu);
	ps->st.queued++;
	if (ps->n == QUEUE_MAX) {   /* the network is slow: the oldest waits on disk */
		struct queued *old = &ps->q[ps->head];
		keep_or_drop(ps, &old->p);
		free(old->data);
		ps->head = (ps->head + 1) % QUEUE_MAX;
		ps->n--;
	}
	ps->q[(ps->head + ps->n) % QUEUE_MAX] = e;
	ps->n++;
	pthread_cond_signal(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
}

void push_sender_stats(struct push_sender *ps, struct push_stats *st)
{
	pthread_mutex_lock(&ps->mu);
	*st = ps->st;
	st->in_spool = ps->s ? push_spool_count(ps->s) : 0;
	pthread_mutex_unlock(&ps->mu);
}

void push_sender_finish(struct push_sender *ps, double seconds, struct push_stats *st)
{
	u64 deadline = now_ns() + (u64)(seconds * 1e9);
	pthread_mutex_lock(&ps->mu);
	ps->finishing = true;
	ps->deadline = deadline;
	pthread_cond_signal(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
	push_client_set_deadline(ps->c, deadline);
	pthread_join(ps->thread, NULL);
	push_client_set_deadline(ps->c, 0);
	push_sender_stats(ps, st);
	pthread_mutex_destroy(&ps->mu);
	pthread_cond_destroy(&ps->cv);
	sb_free(&ps->buf);
	free(ps);
}
