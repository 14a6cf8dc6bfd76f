/* fuzz-perf-zstd.c - libFuzzer target for compressed records (perf record
 * -z): the reader's inflating, its buffer of decompressed records held for
 * ordering, and the records in it; and the writer's compression.
 * Input: byte 0 picks the mode.
 *   even: the rest is a whole perf.data file (seeds: perf record -z and
 *         ember record -z files), read in time and in file order;
 *   odd:  the rest is record bytes, which ember's writer compresses into a
 *         file (one event; a batch ends every 64 * byte 1 bytes, or never
 *         when 0; byte 2 picks the level), then byte 3-4 (little-endian)
 *         name a byte of the data section to flip (0: none) before it is
 *         read in both orders: damaged zstd data, records cut across
 *         compressed records, held ones while the buffer slides. */
#include "tests/fuzz/fuzz-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

/* A second memfd for the file the writer makes (fuzz_as_file holds the
 * input of the other mode). */
static const char *out_path(void)
{
	static char path[64];
	if (!path[0]) {
		int fd = memfd_create("ember-fuzz-zstd", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	return path;
}

static bool write_compressed(const char *path, const uint8_t *recs, size_t n, size_t batch,
			     int level)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1, .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD };
	a.size = sizeof(a);
	u64 id = 1;
	struct pd_writer *w = pd_writer_open(path, false);
	if (!w)
		return false;
	bool ok = pd_writer_add_attr(w, &a, "cpu-clock", &id, 1) == 0 &&
		  pd_writer_set_compression(w, level, 1u << 16) == 0 &&
		  pd_writer_begin(w) == 0;
	for (size_t at = 0; ok && at < n;) {
		size_t take = batch ? MIN(batch, n - at) : n - at;
		ok = pd_writer_write(w, recs + at, take) == 0 &&
		     (!batch || pd_writer_finished_round(w) == 0);
		at += take;
	}
	return pd_writer_close(w) == 0 && ok;
}

/* Flips one byte of the data section (the header's data offset and size
 * say where it is). */
static void flip(const char *path, unsigned at)
{
	FILE *f = fopen(path, "r+b");
	if (!f)
		return;
	u64 head[7];
	if (fread(head, sizeof(head), 1, f) == 1 && head[6] && at < head[6] &&
	    fseek(f, (long)(head[5] + at), SEEK_SET) == 0) {
		int c = fgetc(f);
		if (c != EOF && fseek(f, (long)(head[5] + at), SEEK_SET) == 0)
			fputc(c ^ 0x5a, f);
	}
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 1)
		return 0;
	if (!(data[0] & 1)) {
		const char *path = fuzz_as_file(data + 1, len - 1);
		fuzz_read_all(path, false);
		fuzz_read_all(path, true);
		return 0;
	}
	if (len < 5)
		return 0;
	const char *path = out_path();
	int level = 1 + data[2] % 19;
	if (!write_compressed(path, data + 5, len - 5, 64u * data[1], level))
		return 0;
	unsigned at = data[3] | (unsigned)data[4] << 8;
	if (at)
		flip(path, at - 1);
	fuzz_read_all(path, false);
	fuzz_read_all(path, true);
	return 0;
}
