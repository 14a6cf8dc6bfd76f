/* fuzz.h - helpers the libFuzzer targets share: handing an input to code
 * that wants a path, and touching decoded data so ASan checks every
 * pointer a parser hands back, not only the bytes it read itself. */
#ifndef EMBER_FUZZ_H
#define EMBER_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data into one memfd kept for the whole run and returns a path
 * that reopens it (/proc/self/fd/N), so parsers that take a path see the
 * input as a regular file of exactly len bytes. */
static inline const char *fuzz_as_file(const uint8_t *data, size_t len)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("ember-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (len && pwrite(fd, data, len, 0) != (ssize_t)len)) {
		perror("writing the fuzz input");
		abort();
	}
	return path;
}

/* Reads n bytes at p into a sum the compiler cannot drop: an out-of-bounds
 * pointer from a parser becomes an ASan report here. */
static volatile uint64_t fuzz_sink;
static inline void fuzz_touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s = 0;
	for (size_t i = 0; p && i < n; i++)
		s += b[i];
	fuzz_sink += s;
}

static inline void fuzz_touch_str(const char *s)
{
	if (s)
		fuzz_touch(s, strlen(s) + 1);
}

#endif
