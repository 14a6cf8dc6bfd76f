/* fuzz-blktrace.c - libFuzzer target for the blktrace readers: classic
 * per-CPU blktrace files and the kernel blk tracer's ftrace-framed output
 * (format/blktrace.c), and what consumes their records in report/: the
 * I/O tracker, blkparse lines, every `ember bio` view and `ember verify`.
 *
 * Input: byte 0 picks the layout (bit 0: two per-CPU files DEV.blktrace.0
 * and .1, split where bytes 1-2 say, so the merge by time runs; else one
 * file), the rest is the capture.  The report/ sources are compiled into
 * this target (make fuzz links common/, format/, symbols/ and flamegraph/
 * only), with the filter helpers of report/filter.c. */
#include "tests/fuzz/fuzz.h"

#include <sys/stat.h>

#include "report/bio-blktrace.c"
#include "report/bio-btt.c"
#include "report/bio-dist.c"
#include "report/bio-events.c"
#include "report/bio-heatmap.c"
#include "report/bio-track.c"
#include "report/bio-verify.c"
#include "report/bio-views.c"
#include "report/filter.c"

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
	bio_print_snoop(bt, &o, out);
	o.csv = true;
	bio_print_snoop(bt, &o, out);
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
	struct bio_blkparse bp = { .out = null_out() };
	bio_set_hook(bt, bio_blkparse_line, &bp);
	bio_feed_blktrace(bt, path);
	views(bt);
	bio_tracker_free(bt);

	/* ember verify: its problems go to stdout, kept out of the log. */
	fflush(stdout);
	int saved = dup(1);
	dup2(fileno(null_out()), 1);
	char *argv[] = { (char *)"verify", (char *)path, NULL };
	optind = 1;
	cmd_verify(2, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return 0;
}
