/* fuzz-perf-pipe.c - libFuzzer target for the perf.data stream reader (the
 * pipe variant, read(2)): header records (attrs, features, tracing data,
 * build-ids), then every record decoded.  Input: a stream minus its header. */
#include "tests/fuzz/fuzz-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* The header is put in front ("PERFILE2", size 16: what marks a
	 * stream), so every mutation reaches the records. */
	static const uint8_t head[16] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16 };
	uint8_t *buf = malloc(sizeof(head) + len);
	memcpy(buf, head, sizeof(head));
	if (len)
		memcpy(buf + sizeof(head), data, len);
	const char *path = fuzz_as_file(buf, sizeof(head) + len);
	free(buf);
	fuzz_read_all(path, false);
	fuzz_read_all(path, true);
	return 0;
}
