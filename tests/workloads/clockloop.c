/* clockloop.c - a loop of libc calls whose symbol is an alias of its
 * function: clock_gettime is libc's versioned alias of __clock_gettime
 * (DWARF names it so), with nothing inlined at its call into the vDSO.
 * Nearly every sample falls in clock_gettime or the vDSO under it, so a
 * report must show the one function, not an alias split in two.
 *
 *   main -> call_clock -> clock_gettime (libc) -> __vdso_clock_gettime
 *
 * usage: clockloop [CPU-SECONDS]   (default 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "workload.h"

volatile uint64_t sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1000 calls of the vDSO's clock through libc's wrapper. */
__attribute__((noinline)) void call_clock(void)
{
	struct timespec ts;
	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (uint64_t)ts.tv_nsec;
	}
}

int main(int argc, char **argv)
{
	double seconds = wl_arg_double(argc, argv, 1, 1.0);
	if (seconds <= 0) {
		fprintf(stderr, "usage: clockloop [CPU-SECONDS]\n");
		return 2;
	}
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		call_clock();
	printf("clockloop: %.2f s CPU\n", cpu_seconds());
	return 0;
}
