/* fuzz-perf-file.c - libFuzzer target for the perf.data file reader
 * (PERFILE2 through mmap): header, attrs, feature sections and every record
 * decoded, in time order and in file order. */
#include "tests/fuzz/fuzz-reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *path = fuzz_as_file(data, len);
	fuzz_read_all(path, false);
	fuzz_read_all(path, true);
	return 0;
}
