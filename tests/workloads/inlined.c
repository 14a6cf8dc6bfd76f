/* inlined.c - a hot function inlined into its caller: spin_inner is
 * always inlined into outer_loop, so a sample in its body has one
 * machine frame (outer_loop) but two source frames.
 *
 *   main -> outer_loop -> spin_inner (inlined)
 *
 * usage: inlined [CPU-SECONDS]   (default 2)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) uint64_t spin_inner(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t outer_loop(double seconds)
{
	uint64_t x = 1;
	double end = cpu_seconds() + seconds;
	do
		x = spin_inner(x);
	while (cpu_seconds() < end);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: inlined [CPU-SECONDS]\n");
		return 2;
	}
	sink = outer_loop(seconds);
	printf("inlined: %.2f s CPU\n", cpu_seconds());
	return 0;
}
