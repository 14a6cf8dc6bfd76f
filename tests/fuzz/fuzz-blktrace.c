/* fuzz-blktrace.c - libFuzzer target for the blktrace readers: classic
 * per-CPU blktrace files and the kernel blk tracer's ftrace-framed output
 * (format/blktrace.c), and what consumes their records in the bio library
 * (block/, linked as make fuzz builds it): the I/O tracker, blkparse
 * lines (with and without a filter), every `ember bio` view and the
 * checks of `ember verify`.
 *
 * Input: byte 0 picks the layout (bit 0: two per-CPU files DEV.blktrace.0
 * and .1, split where bytes 1-2 say, so the merge by time runs; else one
 * file) and the lines' filters (bits 1-3), the rest is the capture. */
#include "tests/fuzz/fuzz.h"

#include <errno.h>
#include <sys/stat.h>

#include "block/block.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static FILE *null_out(void)
{
	static FILE *f;
	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

/* Every record the walker frames must lie inside its file: its payload
 * is touched (ASan checks it against the exactly-sized file buffer). */
static int walk_one(void *ctx, const struct pd_blk_rec *r, const char *file)
{
	fuzz_touch(r->pdu, r->pdu_len);
	u32 a, b;
	u64 s;
	char comm[16];
	pd_blk_remap(r, &a, &b, &s);
	pd_blk_split(r, &s);
	pd_blk_comm(r, comm, sizeof(comm));
	fuzz_touch_str(comm);
	fuzz_touch_str(file);
	return 0;
}

static char dir[64], base[96];

static void remove_capture(void)
{
	char path[128];
	for (int cpu = 0; cpu < 2; cpu++) {
		snprintf(path, sizeof(path), "%s.blktrace.%d", base, cpu);
		unlink(path);
	}
	rmdir(dir);
}

/* The per-CPU layout: DIR/dev.blktrace.0 and .1 in a directory of this
 * process (kept for the whole run, removed at exit), or one file. */
static const char *as_capture(const uint8_t *data, size_t len, bool split, size_t at)
{
	if (!split)
		return fuzz_as_file(data, len);
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/dev/shm/ember-fuzz-blk.%d", (int)getpid());
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			snprintf(dir, sizeof(dir), "/tmp/ember-fuzz-blk.%d", (int)getpid());
			mkdir(dir, 0700);
		}
		snprintf(base, sizeof(base), "%s/dev", dir);
		atexit(remove_capture);
	}
	at = len ? at % (len + 1) : 0;
	for (int cpu = 0; cpu < 2; cpu++) {
		char path[128];
		snprintf(path, sizeof(path), "%s.blktrace.%d", base, cpu);
		FILE *f = fopen(path, "wb");
		if (!f)
			abort();
		const uint8_t *p = cpu ? data + at : data;
		size_t n = cpu ? len - at : at;
		if (n && fwrite(p, 1, n, f) != n)
			abort();
		fclose(f);
	}
	return base;
}

static void views(const struct bio_tracker *bt)
{
	FILE *out = null_out();
	struct bio_view_opts o = { 0 };
	bio_print_btt(bt, &o, out);
	bio_print_hist(bt, &o, out);
	o.queued = o.per_disk = o.per_flags = o.millis = true;
	bio_print_hist(bt, &o, out);
	bio_print_top(bt, &o, out);
	bio_print_monitor(bt, &o, out);
	bio_print_size(bt, &o, out);
	bio_print_seek(bt, &o, out);
	bio_print_errors(bt, &o, out);
	bio_write_heatmap(bt, &o, "/dev/null");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 3)
		return 0;
	bool split = data[0] & 1;
	size_t at = (size_t)data[1] | (size_t)data[2] << 8;
	const char *path = as_capture(data + 3, len - 3, split, at);

	fuzz_sink += pd_blk_probe(path);
	pd_blk_walk(path, walk_one, NULL);

	struct bio_tracker *bt = bio_tracker_new(NULL);
	/* Bits 1-3 of byte 0 filter the lines: by a pid (byte 1, & 7), CPU 0,
	 * and comm "dd" or "?". */
	pid_t pid = data[1] & 7;
	int cpu = 0;
	struct rp_filter f = { .pids = &pid, .npids = data[0] >> 1 & 1, .cpus = &cpu,
			       .ncpus = data[0] >> 2 & 1, .comms = data[0] & 8 ? "dd,?" : NULL };
	struct bio_blkparse bp = { .out = null_out(), .filter = data[0] & 0xe ? &f : NULL };
	bio_set_hook(bt, bio_blkparse_line, &bp);
	/* --snoop's lines come as requests complete, CSV or not by byte 0. */
	struct bio_view_opts so = { .csv = data[0] & 0x10 };
	struct bio_snoop sn = { .o = &so, .out = null_out() };
	bio_set_done(bt, bio_snoop_done, &sn);
	bio_feed_blktrace(bt, path);
	views(bt);
	bio_tracker_free(bt);
	bio_snoop_free(&sn);

	u64 problems;
	pd_verify(path, null_out(), &problems);
	return 0;
}
