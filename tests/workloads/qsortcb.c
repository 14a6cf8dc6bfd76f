/* qsortcb.c - a hot path through a shared library: libc's qsort calls a
 * comparator in this executable, so unwinding from the comparator must
 * cross libc's frames to reach sort_all and main.
 *
 *   main -> sort_all -> qsort (libc) -> ... -> compare_keys
 *
 * usage: qsortcb [CPU-SECONDS]   (default 2)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NKEYS 4096

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A deliberately slow comparison, so most samples land here. */
__attribute__((noinline)) int compare_keys(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	for (int i = 0; i < 40; i++) {
		a = a * 6364136223846793005ULL + 1;
		b = b * 6364136223846793005ULL + 1;
	}
	return (a >> 40) < (b >> 40) ? -1 : (a >> 40) > (b >> 40);
}

__attribute__((noinline)) long sort_all(uint64_t *keys, double seconds)
{
	long sorts = 0;
	uint64_t rng = 99;
	double end = cpu_seconds() + seconds;
	do {
		for (int i = 0; i < NKEYS; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			keys[i] = rng;
		}
		qsort(keys, NKEYS, sizeof(*keys), compare_keys);
		sorts++;
	} while (cpu_seconds() < end);
	return sorts;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	uint64_t *keys = malloc(NKEYS * sizeof(*keys));
	if (seconds <= 0 || !keys) {
		fprintf(stderr, "usage: qsortcb [CPU-SECONDS]\n");
		return 2;
	}
	long sorts = sort_all(keys, seconds);
	printf("qsortcb: %ld sorts, %.2f s CPU\n", sorts, cpu_seconds());
	free(keys);
	return 0;
}
