/* track.c - the block I/O sink: follows each queued I/O by device and
 * sector into its request and on to completion, through merges (the
 * merged I/O finishes with its request), splits, remaps and requeues
 * (a request issued again counts its phases again, as btt does).
 *
 * I/Os never seen completing are counted apart, not averaged in.  A split
 * bio is one I/O: its remainder (BF_SPLIT) keeps the head's task, CPU,
 * queue time and stack and adds its bytes, not its count; the head keeps
 * the bio as queued (q_sector, q_nr_sector), which --size, --seek and
 * btt's pattern line count.  With --interval, each tick hands the view a
 * tracker of the I/Os whose story ended since the last (completed, lost or
 * remapped; merged ones go with their request) and keeps those in flight,
 * so an I/O counts in the interval its request completed, intervals add
 * up to the whole, and memory holds one interval.  --snoop prints each
 * request as it completes (a done hook), finished I/Os dropped now and
 * then so a stream's memory stays bounded. */
#include <stdlib.h>
#include <string.h>

#include "block/block-internal.h"

#define NONE 0u   /* index + 1 in the maps; 0 is "no I/O" */

/* I/Os in flight by key: few at a time however long the recording, so a
 * small table whose entries leave when the I/O moves on stays in cache
 * (linear probing, deletion by backward shift). */
struct inflight {
	u64 *keys;
	u32 *vals;               /* index + 1; NONE marks an empty slot */
	size_t cap, n;           /* cap a power of two */
};

typedef VEC(struct bio_again) again_vec;

struct bio_tracker {
	const struct bio_tp *tp;
	VEC(struct bio_io) ios;
	again_vec again;         /* bio_io.again's, in the order of their I/Os */
	struct inflight pending; /* (dev, sector) -> queued I/O awaiting a request */
	struct inflight rq;      /* (dev, start sector) -> request in flight */
	struct inflight rq_end;  /* (dev, end sector) -> request, for back merges */
	struct bio_counts c;
	bio_event_fn hook;
	void *hook_ctx;
	u32 seq;                 /* events seen, for perf.data sources */
	bio_stack_fn stack_of;   /* names the submitter's stack, or NULL */
	struct bio_stacks *stacks;
	u32 cur_stack;           /* the stack of the event being tracked */
	u64 first_q;             /* the first queue event's time */
	bio_done_fn done;        /* each request as it completes */
	void *done_ctx;
	bool forget;             /* drop finished I/Os now and then */
	size_t forget_at;        /* ... when this many are held */
	u64 interval, next_tick; /* intervals: length, end of the current one */
	/* skipped in long runs (bio_tick_until): rp_summary.empty */
	struct empty_runs empty;
	bio_interval_fn on_interval;
	void *interval_ctx;
	bool stopped;            /* on_interval asked to stop */
};

static u64 key_of(u32 dev, u64 sector)
{
	return hash_u64(sector ^ ((u64)dev << 40) ^ ((u64)dev >> 24));
}

static void if_init(struct inflight *m)
{
	m->cap = 256;
	m->n = 0;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
}

static void if_free(struct inflight *m)
{
	free(m->keys);
	free(m->vals);
}

/* The slot of key, or the empty slot where it would go. */
static size_t if_slot(const struct inflight *m, u64 key)
{
	size_t mask = m->cap - 1, i = key & mask;   /* keys are hashes already */
	while (m->vals[i] != NONE && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static u32 if_get(const struct inflight *m, u64 key)
{
	return m->vals[if_slot(m, key)];
}

static void if_set(struct inflight *m, u64 key, u32 val);

static void if_grow(struct inflight *m)
{
	struct inflight old = *m;
	m->cap *= 2;
	m->n = 0;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	for (size_t i = 0; i < old.cap; i++)
		if (old.vals[i] != NONE)
			if_set(m, old.keys[i], old.vals[i]);
	if_free(&old);
}

static void if_set(struct inflight *m, u64 key, u32 val)
{
	if ((m->n + 1) * 2 > m->cap)
		if_grow(m);
	size_t i = if_slot(m, key);
	m->n += m->vals[i] == NONE;
	m->keys[i] = key;
	m->vals[i] = val;
}

/* Removes slot i, shifting later entries of its run back into the gap. */
static void if_del_slot(struct inflight *m, size_t i)
{
	size_t mask = m->cap - 1, j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (m->vals[j] == NONE)
			break;
		size_t home = m->keys[j] & mask;
		bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
		if (movable) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->vals[i] = NONE;
	m->n--;
}

/* The I/O a map holds for (dev, sector) in one of the given states, or
 * NULL; a hash collision or a stale slot reads as absent. */
static struct bio_io *find(struct bio_tracker *bt, struct inflight *m, u32 dev, u64 sector,
			   bool by_end, u8 state)
{
	u32 v = if_get(m, key_of(dev, sector));
	if (v == NONE)
		return NULL;
	struct bio_io *io = &bt->ios.v[v - 1];
	u64 at = by_end ? io->sector + io->nr_sector : io->sector;
	return io->dev == dev && at == sector && io->state == state ? io : NULL;
}

static u32 index_of(const struct bio_tracker *bt, const struct bio_io *io)
{
	return (u32)(io - bt->ios.v) + 1;
}

static void put(struct bio_tracker *bt, struct inflight *m, u32 dev, u64 sector,
		const struct bio_io *io)
{
	if_set(m, key_of(dev, sector), index_of(bt, io));
}

static void unput(struct bio_tracker *bt, struct inflight *m, u32 dev, u64 sector,
		  const struct bio_io *io)
{
	size_t i = if_slot(m, key_of(dev, sector));
	if (m->vals[i] == index_of(bt, io))
		if_del_slot(m, i);
}

static void rq_index(struct bio_tracker *bt, struct bio_io *rq)
{
	put(bt, &bt->rq, rq->dev, rq->sector, rq);
	put(bt, &bt->rq_end, rq->dev, rq->sector + rq->nr_sector, rq);
}

static void rq_unindex(struct bio_tracker *bt, struct bio_io *rq)
{
	unput(bt, &bt->rq, rq->dev, rq->sector, rq);
	unput(bt, &bt->rq_end, rq->dev, rq->sector + rq->nr_sector, rq);
}

static struct bio_io *new_io(struct bio_tracker *bt, const struct bio_ev *e,
			     const struct bio_who *s)
{
	struct bio_io io = { .dev = e->dev, .sector = e->sector, .nr_sector = e->nr_sector,
			     .own_sector = e->nr_sector, .q_sector = e->sector,
			     .q_nr_sector = e->nr_sector, .stack = bt->cur_stack,
			     .pid = s->pid, .tid = s->tid, .cpu = (u16)s->cpu };
	memcpy(io.rwbs, e->rwbs, sizeof(io.rwbs) - 1);
	if (s->comm)
		strncpy(io.comm, s->comm, sizeof(io.comm) - 1);
	VEC_PUSH(&bt->ios, io);
	return &bt->ios.v[bt->ios.n - 1];
}

/* ---- the events ---------------------------------------------------------- */

/* A split's remainder is queued again by the kernel (or not, by version):
 * a queue event at its sector continues it rather than starting anew. */
static void on_queue(struct bio_tracker *bt, const struct bio_ev *e, const struct bio_who *s)
{
	struct bio_io *old = find(bt, &bt->pending, e->dev, e->sector, false, BS_QUEUED);
	if (old && (old->flags & BF_SPLIT) && !(old->flags & BF_NO_QUEUE)) {
		old->flags |= BF_NO_QUEUE;   /* seen once; a third queue is new */
		old->nr_sector = old->own_sector = old->q_nr_sector = e->nr_sector;
		return;
	}
	if (old) {
		old->state = BS_LOST;        /* its place taken before it went on */
		bt->c.lost++;
	}
	struct bio_io *io = new_io(bt, e, s);
	io->t[BT_Q] = s->time;
	if (!bt->first_q)
		bt->first_q = s->time;
	put(bt, &bt->pending, e->dev, e->sector, io);
}

static void on_split(struct bio_tracker *bt, const struct bio_ev *e, const struct bio_who *s)
{
	struct bio_io *io = find(bt, &bt->pending, e->dev, e->sector, false, BS_QUEUED);
	u64 end = io ? io->sector + io->nr_sector : 0;
	bt->c.splits++;
	if (!io || e->old_sector <= io->sector || e->old_sector >= end)
		return;
	io->nr_sector = io->own_sector = (u32)(e->old_sector - io->sector);
	struct bio_io head = *io;   /* new_io may move io */
	struct bio_ev rest = *e;
	rest.sector = e->old_sector;
	rest.nr_sector = (u32)(end - e->old_sector);
	struct bio_io *r = new_io(bt, &rest, s);
	/* The remainder was queued with the head: by the same task, on the
	 * same CPU, at the same time, from the same stack. */
	r->t[BT_Q] = head.t[BT_Q];
	r->stack = head.stack;
	r->pid = head.pid;
	r->tid = head.tid;
	r->cpu = head.cpu;
	memcpy(r->comm, head.comm, sizeof(r->comm));
	r->flags |= BF_SPLIT;
	put(bt, &bt->pending, rest.dev, rest.sector, r);
}

static void on_getrq(struct bio_tracker *bt, const struct bio_ev *e, const struct bio_who *s)
{
	struct bio_io *old = find(bt, &bt->rq, e->dev, e->sector, false, BS_REQUEST);
	if (old) {
		old->state = BS_LOST;        /* same place, earlier request: lost */
		rq_unindex(bt, old);
		bt->c.lost++;
	}
	struct bio_io *io = find(bt, &bt->pending, e->dev, e->sector, false, BS_QUEUED);
	if (!io) {
		io = new_io(bt, e, s);
		io->flags |= BF_NO_QUEUE;
	}
	unput(bt, &bt->pending, io->dev, io->sector, io);
	io->state = BS_REQUEST;
	io->t[BT_G] = s->time;
	rq_index(bt, io);
}

static void merge_into(struct bio_tracker *bt, struct bio_io *io, struct bio_io *rq,
		       u64 new_start, u8 flag)
{
	rq_unindex(bt, rq);
	rq->nr_sector += io->nr_sector;
	rq->sector = new_start;
	rq_index(bt, rq);
	unput(bt, &bt->pending, io->dev, io->sector, io);
	io->state = BS_MERGED;
	io->parent = index_of(bt, rq);
	io->sibling = rq->child;
	rq->child = index_of(bt, io);
	io->flags |= flag;
}

static void on_bio_merge(struct bio_tracker *bt, const struct bio_ev *e, u64 time, bool back)
{
	struct bio_io *io = find(bt, &bt->pending, e->dev, e->sector, false, BS_QUEUED);
	struct bio_io *rq = back ? find(bt, &bt->rq_end, e->dev, e->sector, true, BS_REQUEST)
				 : find(bt, &bt->rq, e->dev, e->sector + e->nr_sector, false,
					BS_REQUEST);
	if (back)
		bt->c.back_merges++;
	else
		bt->c.front_merges++;
	if (io && rq) {
		merge_into(bt, io, rq, back ? rq->sector : io->sector,
			   back ? BF_BACKMERGE : BF_FRONTMERGE);
		io->m_at = time;
	}
}

/* A request absorbed by the one ending where it starts. */
static void on_rq_merge(struct bio_tracker *bt, const struct bio_ev *e)
{
	bt->c.rq_merges++;
	struct bio_io *io = find(bt, &bt->rq, e->dev, e->sector, false, BS_REQUEST);
	if (!io)
		return;
	rq_unindex(bt, io);
	struct bio_io *rq = find(bt, &bt->rq_end, e->dev, e->sector, true, BS_REQUEST);
	if (!rq) {
		io->state = BS_LOST;
		bt->c.lost++;
		return;
	}
	io->state = BS_REQUEST;   /* merge_into wants it out of pending only */
	merge_into(bt, io, rq, rq->sector, BF_BACKMERGE);
}

/* ---- phases counted again (btt's G2I, I2D and M2D) ---------------------- */

void bio_phase_add(struct bio_phase *p, u64 from, u64 to)
{
	if (!from || !to)
		return;
	u64 d = to > from ? to - from : 1;
	if (!p->n || d < p->min)
		p->min = d;
	if (d > p->max)
		p->max = d;
	p->sum += d;
	p->n++;
}

void bio_phase_merge(struct bio_phase *into, const struct bio_phase *p)
{
	if (!p->n)
		return;
	if (!into->n || p->min < into->min)
		into->min = p->min;
	if (p->max > into->max)
		into->max = p->max;
	into->sum += p->sum;
	into->n += p->n;
}

/* An issue at time d counts I2D from the I/O's insert, or M2D from its
 * merge when no insert began at its sector. */
static void add_issue(struct bio_again *a, const struct bio_io *io, u64 d)
{
	if (io->i_at)
		bio_phase_add(&a->i2d, io->i_at, d);
	else
		bio_phase_add(&a->m2d, io->m_at, d);
}

/* From its first repeat on, an I/O counts in a bio_again: what its stamps
 * hold so far (the request issued at d, or not yet when 0) goes in first. */
static void again_begin(struct bio_tracker *bt, struct bio_io *io, u64 d)
{
	if (io->again)
		return;
	struct bio_again a = { 0 };
	bio_phase_add(&a.g2i, io->t[BT_G], io->i_at);
	add_issue(&a, io, d);
	VEC_PUSH(&bt->again, a);
	io->again = (u32)bt->again.n;
}

/* Each I/O of a request (itself, those merged in, and theirs): begins
 * counting again (begin), or counts an issue at d in the I/Os that do. */
static void again_walk(struct bio_tracker *bt, struct bio_io *io, u64 d, bool begin, int depth)
{
	if (begin)
		again_begin(bt, io, d);
	else if (io->again)
		add_issue(&bt->again.v[io->again - 1], io, d);
	if (depth >= 64)
		return;
	for (u32 c = io->child; c; c = bt->ios.v[c - 1].sibling)
		again_walk(bt, &bt->ios.v[c - 1], d, begin, depth + 1);
}

const struct bio_again *bio_again_of(const struct bio_tracker *bt, const struct bio_io *io)
{
	return io->again ? &bt->again.v[io->again - 1] : NULL;
}

/* The I/O an insert's sector falls in: the request's, or the one merged
 * in front of it. */
static struct bio_io *leftmost(struct bio_tracker *bt, struct bio_io *rq)
{
	for (u32 c = rq->child; c; c = bt->ios.v[c - 1].sibling)
		if (bt->ios.v[c - 1].sector == rq->sector)
			return &bt->ios.v[c - 1];
	return rq;
}

static void on_insert(struct bio_tracker *bt, struct bio_io *rq, u64 time)
{
	struct bio_io *io = leftmost(bt, rq);
	if (io->i_at)
		again_walk(bt, rq, rq->t[BT_D], true, 0);   /* inserted twice, no requeue seen */
	io->i_at = time;
	if (io->again)
		bio_phase_add(&bt->again.v[io->again - 1].g2i, io->t[BT_G], time);
}

static void on_issue(struct bio_tracker *bt, struct bio_io *rq, u64 time)
{
	if (rq->t[BT_D])
		again_walk(bt, rq, rq->t[BT_D], true, 0);   /* issued twice, no requeue seen */
	again_walk(bt, rq, time, false, 0);
}

static void on_stamp(struct bio_tracker *bt, const struct bio_ev *e, u64 time, int which)
{
	struct bio_io *rq = find(bt, &bt->rq, e->dev, e->sector, false, BS_REQUEST);
	if (!rq)
		return;
	if (which == BT_I)
		on_insert(bt, rq, time);
	if (which == BT_D)
		on_issue(bt, rq, time);
	if (which == BT_D && !rq->stack)
		rq->stack = bt->cur_stack;   /* queued unseen: the issuer's */
	if (which == BT_D && !rq->t[BT_I]) {
		rq->flags |= BF_DIRECT;
		rq->t[BT_I] = time;
	}
	if (which == BT_D || !rq->t[which])
		rq->t[which] = time;
}

static void on_requeue(struct bio_tracker *bt, const struct bio_ev *e)
{
	struct bio_io *rq = find(bt, &bt->rq, e->dev, e->sector, false, BS_REQUEST);
	bt->c.requeues++;
	if (rq) {
		again_walk(bt, rq, rq->t[BT_D], true, 0);
		rq->requeues++;
		rq->t[BT_D] = 0;
	}
}

static void on_remap(struct bio_tracker *bt, const struct bio_ev *e, bool bio)
{
	struct inflight *m = bio ? &bt->pending : &bt->rq;
	struct bio_io *io = find(bt, m, e->old_dev, e->old_sector, false,
				 bio ? BS_QUEUED : BS_REQUEST);
	if (bio)
		bt->c.remaps++;
	else
		bt->c.rq_remaps++;
	if (!io)
		return;
	if (bio)
		unput(bt, m, io->dev, io->sector, io);
	else
		rq_unindex(bt, io);
	io->state = BS_REMAPPED;
}

/* A completion may cover part of a request (the rest completes later). */
static void on_complete(struct bio_tracker *bt, const struct bio_ev *e, u64 time)
{
	struct bio_io *rq = find(bt, &bt->rq, e->dev, e->sector, false, BS_REQUEST);
	if (!rq) {
		bt->c.before++;
		return;
	}
	if (e->error) {
		rq->error = e->error;
		bt->c.errors++;
	}
	if (e->nr_sector && e->nr_sector < rq->nr_sector) {
		unput(bt, &bt->rq, rq->dev, rq->sector, rq);
		rq->sector += e->nr_sector;
		rq->nr_sector -= e->nr_sector;
		put(bt, &bt->rq, rq->dev, rq->sector, rq);
		return;
	}
	rq_unindex(bt, rq);
	rq->state = BS_DONE;
	rq->t[BT_C] = time;
	if (bt->done)
		bt->done(bt->done_ctx, bt, rq);
}

/* ---- finished I/Os out: intervals, and bounded memory -------------------- */

/* An I/O's story is over when its request's is: completed, lost or
 * remapped.  Merged I/Os go with their request, so the indices that link
 * them (parent, child, sibling) stay within one tracker. */
static bool finished(const struct bio_tracker *bt, const struct bio_io *io)
{
	u8 st = bio_request(bt, io)->state;
	return st == BS_DONE || st == BS_LOST || st == BS_REMAPPED;
}

static u32 relink(const u32 *to, u32 v)
{
	return v ? to[v - 1] : NONE;
}

static void if_clear(struct inflight *m)
{
	memset(m->vals, 0, m->cap * sizeof(*m->vals));
	m->n = 0;
}

/* An I/O's bio_again, copied from one list to another. */
static struct bio_io again_move(const again_vec *from, again_vec *to, struct bio_io io)
{
	if (io.again) {
		VEC_PUSH(to, from->v[io.again - 1]);
		io.again = (u32)to->n;
	}
	return io;
}

/* Splits bt's I/Os: the finished ones into out (when given), the others
 * kept in order; the in-flight maps rebuilt for those kept. */
static void split_done(struct bio_tracker *bt, struct bio_tracker *out)
{
	size_t n = bt->ios.n, kept = 0, gone = 0;
	u32 *to = xcalloc(n ? n : 1, sizeof(*to));
	bool *fin = xcalloc(n ? n : 1, sizeof(*fin));
	for (size_t i = 0; i < n; i++) {
		fin[i] = finished(bt, &bt->ios.v[i]);
		to[i] = (u32)(fin[i] ? ++gone : ++kept);
	}
	if (out)
		VEC_GROW(&out->ios, gone);
	again_vec stay = { 0 };   /* the kept I/Os' bio_again */
	for (size_t i = 0, k = 0; i < n; i++) {
		struct bio_io io = bt->ios.v[i];
		io.parent = relink(to, io.parent);
		io.child = relink(to, io.child);
		io.sibling = relink(to, io.sibling);
		if (!fin[i])
			bt->ios.v[k++] = again_move(&bt->again, &stay, io);
		else if (out)
			out->ios.v[out->ios.n++] = again_move(&bt->again, &out->again, io);
	}
	VEC_FREE(&bt->again);
	bt->again = stay;
	bt->ios.n = kept;
	if_clear(&bt->pending);
	if_clear(&bt->rq);
	if_clear(&bt->rq_end);
	for (size_t i = 0; i < kept; i++) {
		struct bio_io *io = &bt->ios.v[i];
		if (io->state == BS_QUEUED)
			put(bt, &bt->pending, io->dev, io->sector, io);
		else if (io->state == BS_REQUEST)
			rq_index(bt, io);
	}
	free(to);
	free(fin);
}

static void forget_done(struct bio_tracker *bt)
{
	split_done(bt, NULL);
	bt->forget_at = MAX(bt->ios.n * 2, (size_t)4096);
}

void bio_set_forget(struct bio_tracker *bt, bool on)
{
	bt->forget = on;
	bt->forget_at = 4096;
}

struct bio_tracker *bio_take_done(struct bio_tracker *bt)
{
	struct bio_tracker *out = bio_tracker_new(bt->tp);
	out->stacks = bt->stacks;
	out->first_q = bt->first_q;
	split_done(bt, out);
	out->c = bt->c;
	memset(&bt->c, 0, sizeof(bt->c));
	return out;
}

void bio_set_done(struct bio_tracker *bt, bio_done_fn fn, void *ctx)
{
	bt->done = fn;
	bt->done_ctx = ctx;
}

static int cmp_io_ptr(const void *a, const void *b)
{
	const struct bio_io *x = *(const struct bio_io *const *)a;
	const struct bio_io *y = *(const struct bio_io *const *)b;
	return x < y ? -1 : x > y;
}

void bio_served(const struct bio_tracker *bt, const struct bio_io *rq, bio_io_list *out)
{
	out->n = 0;
	VEC_PUSH(out, rq);
	/* The list grows as it is walked: each I/O's merged ones follow. */
	for (size_t i = 0; i < out->n; i++)
		for (u32 c = out->v[i]->child; c; c = bt->ios.v[c - 1].sibling)
			VEC_PUSH(out, &bt->ios.v[c - 1]);
	if (out->n > 2)
		qsort(out->v + 1, out->n - 1, sizeof(*out->v), cmp_io_ptr);
}

/* ---- intervals ----------------------------------------------------------- */

void bio_set_interval(struct bio_tracker *bt, u64 interval_ns, bio_interval_fn fn, void *ctx)
{
	bt->interval = interval_ns;
	bt->on_interval = fn;
	bt->interval_ctx = ctx;
}

bool bio_stopped(const struct bio_tracker *bt) { return bt->stopped; }

int bio_tick(struct bio_tracker *bt, u64 end, bool last)
{
	if (!bt->on_interval || bt->stopped)
		return 0;
	int rc;
	if (last) {
		rc = bt->on_interval(bt->interval_ctx, bt, end, true);
	} else {
		struct bio_tracker *done = bio_take_done(bt);
		rc = bt->on_interval(bt->interval_ctx, done, end, false);
		bio_tracker_free(done);
	}
	if (rc > 0)
		bt->stopped = true;
	return rc < 0 ? -1 : 0;
}

void bio_empty_intervals(const struct bio_tracker *bt, struct rp_summary *s)
{
	s->empty = bt->empty;
}

int bio_tick_until(struct bio_tracker *bt, u64 t)
{
	if (!bt->interval)
		return 0;
	if (!bt->next_tick)
		bt->next_tick = t + bt->interval;
	for (; t >= bt->next_tick && !bt->stopped; bt->next_tick += bt->interval) {
		if (bio_tick(bt, bt->next_tick, false) < 0)
			return -1;
		/* A long run of empty intervals is skipped and counted, as the
		 * replay does (rp_summary.empty). */
		bt->next_tick += empty_runs_skip(&bt->empty, bt->next_tick, t, bt->interval) *
				 bt->interval;
	}
	return 0;
}

void bio_set_stack_fn(struct bio_tracker *bt, bio_stack_fn fn, struct bio_stacks *st)
{
	bt->stack_of = fn;
	bt->stacks = st;
}

const struct bio_stacks *bio_get_stacks(const struct bio_tracker *bt) { return bt->stacks; }

void bio_set_hook(struct bio_tracker *bt, bio_event_fn fn, void *ctx)
{
	bt->hook = fn;
	bt->hook_ctx = ctx;
}

void bio_track(struct bio_tracker *bt, const struct bio_ev *e, const struct bio_who *w)
{
	if (bt->forget && bt->ios.n >= bt->forget_at)
		forget_done(bt);
	if (bt->hook)
		bt->hook(bt->hook_ctx, e, w);
	switch (e->kind) {
	case BK_QUEUE: on_queue(bt, e, w); break;
	case BK_SPLIT: on_split(bt, e, w); break;
	case BK_GETRQ: on_getrq(bt, e, w); break;
	case BK_BACKMERGE: on_bio_merge(bt, e, w->time, true); break;
	case BK_FRONTMERGE: on_bio_merge(bt, e, w->time, false); break;
	case BK_RQ_MERGE: on_rq_merge(bt, e); break;
	case BK_INSERT: on_stamp(bt, e, w->time, BT_I); break;
	case BK_ISSUE: on_stamp(bt, e, w->time, BT_D); break;
	case BK_REQUEUE: on_requeue(bt, e); break;
	case BK_BIO_REMAP: on_remap(bt, e, true); break;
	case BK_RQ_REMAP: on_remap(bt, e, false); break;
	case BK_COMPLETE: on_complete(bt, e, w->time); break;
	default: break;
	}
}

/* The stack matters only where an I/O can begin, or be issued with no
 * submitter seen: the events that run in the submitter's context. */
static bool names_submitter(enum bio_kind k)
{
	return k == BK_QUEUE || k == BK_GETRQ || k == BK_ISSUE || k == BK_SPLIT;
}

static int bt_sample(void *ctx, const struct rp_sample *s)
{
	struct bio_tracker *bt = ctx;
	struct bio_ev e;
	if (bio_tp_decode(bt->tp, s->attr, s->s, &e) == BK_OTHER)
		return 0;
	bt->cur_stack = bt->stack_of && names_submitter(e.kind) ? bt->stack_of(bt->stacks, s) : 0;
	struct bio_who w = { .time = s->s->time, .pid = s->s->pid, .tid = s->s->tid,
			     .cpu = s->s->cpu, .seq = ++bt->seq,
			     .comm = s->thread ? s->thread->comm : NULL };
	bio_track(bt, &e, &w);
	return 0;
}

/* A stop asked for (--count) ends the replay as an error would; the
 * caller tells them apart with bio_stopped. */
static int bt_tick(void *ctx, u64 end, bool last)
{
	struct bio_tracker *bt = ctx;
	if (bio_tick(bt, end, last) < 0)
		return -1;
	if (bt->stopped) {
		err_set("stopped after the intervals asked for");
		return -1;
	}
	return 0;
}

struct rp_sink bio_sink(struct bio_tracker *bt)
{
	return (struct rp_sink){ .ctx = bt, .sample = bt_sample, .tick = bt_tick };
}

struct bio_tracker *bio_tracker_new(const struct bio_tp *tp)
{
	struct bio_tracker *bt = xcalloc(1, sizeof(*bt));
	bt->tp = tp;
	if_init(&bt->pending);
	if_init(&bt->rq);
	if_init(&bt->rq_end);
	return bt;
}

void bio_tracker_free(struct bio_tracker *bt)
{
	if (!bt)
		return;
	VEC_FREE(&bt->ios);
	VEC_FREE(&bt->again);
	if_free(&bt->pending);
	if_free(&bt->rq);
	if_free(&bt->rq_end);
	free(bt);
}

size_t bio_nios(const struct bio_tracker *bt) { return bt->ios.n; }
u64 bio_first_queue(const struct bio_tracker *bt) { return bt->first_q; }
const struct bio_io *bio_get(const struct bio_tracker *bt, size_t i) { return &bt->ios.v[i]; }
const struct bio_counts *bio_counts(const struct bio_tracker *bt) { return &bt->c; }

/* Merges chain (a request absorbed by another): follow to the end. */
const struct bio_io *bio_request(const struct bio_tracker *bt, const struct bio_io *io)
{
	for (int hops = 0; io->state == BS_MERGED && io->parent && hops < 64; hops++)
		io = &bt->ios.v[io->parent - 1];
	return io;
}

u64 bio_done_time(const struct bio_tracker *bt, const struct bio_io *io)
{
	const struct bio_io *rq = bio_request(bt, io);
	return rq->state == BS_DONE ? rq->t[BT_C] : 0;
}
