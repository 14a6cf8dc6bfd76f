/* test-replay.c - unit tests of the replay's live bookkeeping: threads
 * whose EXIT record was lost are found gone and released (with their JIT
 * maps), without losing the samples of theirs still on the way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include "replay/replay.h"
#include "tests/unit/processes.h"
#include "tests/unit/test.h"

#define MS 1000000ULL
#define SAMPLE_ID 41
#define JIT_IP 0x7f0000001010ULL       /* in no mapping: the JIT map's */
#define NGONE 70                    /* past the replay's sweep threshold (64) */
#define SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		     PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

/* The function the samples are taken in. */
__attribute__((noinline)) void replay_marker(void);
__attribute__((noinline)) void replay_marker(void)
{
	__asm__ volatile("" ::: "memory");
}

/* This test's executable mapping, as an MMAP2 would give it. */
static bool own_text(struct pd_mmap2 *m, char *path, size_t cap)
{
	struct self_text t;
	if (!self_text_of((const void *)(uintptr_t)replay_marker, &t) || strlen(t.path) >= cap)
		return false;
	strcpy(path, t.path);
	*m = (struct pd_mmap2){ .pid = (u32)getpid(), .tid = (u32)getpid(), .start = t.start,
		.len = t.end - t.start, .pgoff = t.pgoff, .maj = t.maj, .min = t.min, .ino = t.ino,
		.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
		.cpumode = PERF_RECORD_MISC_USER, .filename = path };
	return true;
}

static int sample_of(struct pd_writer *w, u32 pid, u32 tid, u64 time, u64 ip)
{
	u64 rec[6];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec) };
	memcpy(rec, &h, sizeof(h));
	rec[1] = SAMPLE_ID;
	rec[2] = ip;
	rec[3] = (u64)tid << 32 | pid;
	rec[4] = time;
	rec[5] = 1;
	return pd_writer_write(w, rec, sizeof(rec));
}

static int sample_at(struct pd_writer *w, u32 pid, u64 time, u64 ip)
{
	return sample_of(w, pid, pid, time, ip);
}

static int sample(struct pd_writer *w, u32 pid, u64 time)
{
	return sample_at(w, pid, time, (u64)(uintptr_t)replay_marker);
}

/* A live stream: this process and NGONE children that ended with no EXIT
 * record (as when a ring overflows).  Each child has a sample at start
 * and one 1.5 s later (still on its way when the replay found it gone);
 * then this process's samples go on to 4 s, a round every 100 ms. */
static int write_stream(const char *path, const u32 *gone)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .size = sizeof(a),
		.sample_period = 1000000, .sample_type = SAMPLE_TYPE, .sample_id_all = 1,
	};
	char mpath[4096];
	struct pd_mmap2 text;
	if (!own_text(&text, mpath, sizeof(mpath)))
		return -1;
	u64 id = SAMPLE_ID, t0 = 1000 * 1000 * MS;
	u32 self = (u32)getpid();
	struct pd_writer *w = pd_writer_open(path, true);
	if (!w)
		return -1;
	int bad = pd_writer_add_attr(w, &a, "cpu-clock", &id, 1);
	bad |= pd_writer_begin(w);
	struct pd_sample_id sid = { self, self, t0, SAMPLE_ID, 0 };
	bad |= pd_write_comm(w, &a, self, self, "replaytest", false, &sid);
	bad |= pd_write_mmap2(w, &a, &text, &sid);
	for (int i = 0; i < NGONE; i++) {
		sid.time = t0 + 1;
		bad |= pd_write_fork(w, &a, gone[i], self, gone[i], self, t0 + 1, &sid);
		bad |= sample(w, gone[i], t0 + 2);
	}
	bad |= sample_at(w, gone[0], t0 + 3, JIT_IP);
	/* The kernel's tid for a thread sampled after its tid was released. */
	bad |= sample_of(w, gone[1], (u32)-1, t0 + 4, (u64)(uintptr_t)replay_marker);
	for (u64 t = 100 * MS; t <= 4000 * MS; t += 100 * MS) {
		bad |= sample(w, self, t0 + t);
		if (t == 1500 * MS)
			for (int i = 0; i < NGONE; i++)
				bad |= sample(w, gone[i], t0 + t);
		if (t == 1500 * MS)
			bad |= sample_at(w, gone[0], t0 + t, JIT_IP);
		bad |= pd_writer_finished_round(w);
	}
	return pd_writer_close(w) || bad ? -1 : 0;
}

struct counts {
	u32 self;
	u64 self_resolved, gone_resolved, gone_samples, jit_resolved;
};

static int count_sample(void *ctx, const struct rp_sample *s)
{
	struct counts *c = ctx;
	if (s->s->ip == JIT_IP) {
		c->jit_resolved += s->nframes > 0 && s->frames[0].sym &&
				   !strcmp(s->frames[0].sym->name, "jit_fn");
		return 0;
	}
	bool resolved = s->nframes > 0 && s->frames[0].sym &&
			!strcmp(s->frames[0].sym->name, "replay_marker");
	if (s->thread->pid == c->self) {
		c->self_resolved += resolved;
	} else {
		c->gone_samples++;
		c->gone_resolved += resolved;
	}
	return 0;
}

/* Threads found gone with no EXIT record are taken as exited once the
 * stream is past the look, and then released; their samples in between
 * still resolve; the live process is kept. */
static int no_op(void *ctx)
{
	return 0;
}

static int no_tick(void *ctx, u64 end, bool last)
{
	return 0;
}

static void test_lost_exit(void)
{
	char dir[] = "/tmp/ember-replay-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "no temporary directory");
	char path[64];
	snprintf(path, sizeof(path), "%s/stream", dir);
	u32 gone[NGONE];
	for (int i = 0; i < NGONE; i++)
		gone[i] = dead_pid();
	CHECK(write_stream(path, gone) == 0, "stream not written: %s", err_msg());
	char *jit = xasprintf("/tmp/perf-%u.map", gone[0]);
	FILE *f = fopen(jit, "w");
	CHECK(f && fputs("7f0000001000 80 jit_fn\n", f) >= 0, "%s not written", jit);
	if (f)
		fclose(f);
	struct rp_opts o = { .input = path, .live = true, .input_fd = open(path, O_RDONLY),
			     .sym = { .demangle = true, .cache_dir = "" },
			     .interval_ns = 500 * MS, .release_files = true };
	struct replay *rp = rp_open(&o);
	CHECK(rp != NULL, "replay: %s", err_msg());
	if (!rp)
		return;
	struct counts c = { .self = (u32)getpid() };
	struct rp_sink sink = { .ctx = &c, .sample = count_sample, .tick = no_tick,
				.forget_files = no_op };
	CHECK(rp_run(rp, &sink) == 0, "replay: %s", err_msg());
	const struct rp_summary *sum = rp_summary(rp);
	/* And the thread standing for tid -1 samples, with its process. */
	CHECK(sum->vanished_threads == NGONE + 1, "%llu of %d threads found gone",
	      (unsigned long long)sum->vanished_threads, NGONE + 1);
	CHECK(sum->released_threads >= NGONE + 1, "%llu threads released",
	      (unsigned long long)sum->released_threads);
	CHECK(c.gone_samples == 2 * NGONE + 1 && c.gone_resolved == 2 * NGONE + 1,
	      "%llu of %llu samples of the gone threads resolved (of %d)",
	      (unsigned long long)c.gone_resolved, (unsigned long long)c.gone_samples,
	      2 * NGONE + 1);
	CHECK(c.self_resolved == 40, "%llu of 40 samples of the live process resolved",
	      (unsigned long long)c.self_resolved);
	/* The JIT map of a gone process goes too (its samples resolved). */
	CHECK(c.jit_resolved == 2, "%llu of 2 JIT samples resolved",
	      (unsigned long long)c.jit_resolved);
	CHECK(sum->released_files == 1, "%llu files released, want the gone process's JIT map",
	      (unsigned long long)sum->released_files);
	rp_close(rp);
	unlink(jit);
	free(jit);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(test_lost_exit);
	return test_summary();
}
