/* biowriters.c - direct writes of known counts from two distinct call
 * paths, so the stacks that queued block I/O are known by construction:
 * writer_a() writes A blocks, then writer_b() writes B blocks, each of
 * BYTES bytes with O_DIRECT (one bio each) at its own offset of DEV.
 * Both go through put_block(), which calls pwrite: with frame pointers the
 * callchain of each I/O names writer_a or writer_b.
 *
 * usage: biowriters DEV [A [B [BYTES]]]   defaults 100 50 65536
 * prints: biowriters: A+B writes of BYTES bytes
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *buf;
static size_t bytes = 65536;

__attribute__((noinline)) static int put_block(int fd, long slot)
{
	return pwrite(fd, buf, bytes, (off_t)slot * (off_t)bytes) == (ssize_t)bytes ? 0 : -1;
}

__attribute__((noinline)) int writer_a(int fd, long n, long first)
{
	for (long i = 0; i < n; i++)
		if (put_block(fd, first + i) < 0)
			return -1;
	return 0;
}

__attribute__((noinline)) int writer_b(int fd, long n, long first)
{
	for (long i = 0; i < n; i++)
		if (put_block(fd, first + i) < 0)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: biowriters DEV [A [B [BYTES]]]\n");
		return 2;
	}
	long a = argc > 2 ? atol(argv[2]) : 100, b = argc > 3 ? atol(argv[3]) : 50;
	if (argc > 4)
		bytes = (size_t)atol(argv[4]);
	int fd = open(argv[1], O_WRONLY | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, bytes)) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, bytes);
	/* b's blocks after a's: no two writes share a sector. */
	if (writer_a(fd, a, 0) < 0 || writer_b(fd, b, a) < 0) {
		perror("pwrite");
		return 1;
	}
	close(fd);
	printf("biowriters: %ld+%ld writes of %zu bytes\n", a, b, bytes);
	return 0;
}
