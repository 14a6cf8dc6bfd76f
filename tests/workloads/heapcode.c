/* heapcode.c - a program that runs code from its heap ([heap], the brk
 * area), as some JITs and interpreters do: a countdown loop copied into a
 * malloc'ed block made executable, called in a loop for SECONDS.  Samples
 * land at [heap] addresses, which perf prints as they are (its [heap] map
 * is address-for-address), not as offsets into the mapping.
 *
 * usage: heapcode [SECONDS]   default 0.5
 * prints: heapcode: runs code at 0xADDR ([heap])
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* x86-64: loop: dec %rdi; jnz loop; ret */
static const unsigned char countdown[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	long page = sysconf(_SC_PAGESIZE);
	/* A small block comes from brk: the [heap] mapping. */
	unsigned char *block = malloc((size_t)(2 * page));
	if (!block)
		return 1;
	unsigned char *code = (unsigned char *)(((uintptr_t)block + (uintptr_t)page - 1) &
						~(uintptr_t)(page - 1));
	memcpy(code, countdown, sizeof(countdown));
	if (mprotect(code, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC) < 0) {
		perror("mprotect");
		return 1;
	}
	void (*fn)(long) = (void (*)(long))(void *)code;
	/* Said first, so a test can attach to the running loop. */
	printf("heapcode: runs code at %p ([heap])\n", (void *)code);
	fflush(stdout);
	for (double end = now_s() + secs; now_s() < end;)
		fn(1000000);
	return 0;
}
