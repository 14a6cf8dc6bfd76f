/* leafy.c - known-ratio workload whose hot functions are true leaves: no
 * calls, so gcc gives them no frame even with -fno-omit-frame-pointer and
 * a frame-pointer walk from inside one skips its caller (leaf-fix tests).
 *
 *   main -> work -> mid_ab -> leaf_a     50% (self)
 *                          -> leaf_b     30%
 *                -> leaf_c               20%
 * so with children: work 100%, mid_ab 80%.  Units run in shuffled order
 * so a sampling timer cannot alias with them.
 *
 * usage: leafy [CPU-SECONDS]   (default 2)
 *        leafy --design        print the design percentages
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNITS_A 5
#define UNITS_B 3
#define UNITS_C 2
#define ITERS_PER_UNIT 1000

volatile uint64_t sink;

/* Distinct constants keep the three leaves from being merged.  Each starts
 * on its own 64-byte line so their loops sit at the same offset in their
 * fetch windows and run at the same speed on any CPU (see ratio.c). */
#define LEAF __attribute__((noinline, aligned(64)))
LEAF uint64_t leaf_a(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}
LEAF uint64_t leaf_b(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963409ULL;
	return x;
}
LEAF uint64_t leaf_c(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963411ULL;
	return x;
}

/* Work after the call keeps it from becoming a tail call, which would
 * take mid_ab off the stack for every unwinder. */
__attribute__((noinline)) uint64_t mid_ab(uint64_t x, int which_a)
{
	uint64_t r = which_a ? leaf_a(x, ITERS_PER_UNIT) : leaf_b(x, ITERS_PER_UNIT);
	return r ^ (uint64_t)which_a;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void shuffle_round(char *units, uint64_t *rng)
{
	int n = 0;
	for (int i = 0; i < UNITS_A; i++) units[n++] = 'a';
	for (int i = 0; i < UNITS_B; i++) units[n++] = 'b';
	for (int i = 0; i < UNITS_C; i++) units[n++] = 'c';
	for (int i = n - 1; i > 0; i--) {
		*rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
		int j = (int)((*rng >> 33) % (uint64_t)(i + 1));
		char t = units[i];
		units[i] = units[j];
		units[j] = t;
	}
}

__attribute__((noinline)) long work(double seconds)
{
	uint64_t x = 1, rng = 12345;
	long rounds = 0;
	char units[UNITS_A + UNITS_B + UNITS_C];
	double end = cpu_seconds() + seconds;
	do {
		for (int r = 0; r < 64; r++, rounds++) {
			shuffle_round(units, &rng);
			for (int u = 0; u < UNITS_A + UNITS_B + UNITS_C; u++)
				x = units[u] == 'c' ? leaf_c(x, ITERS_PER_UNIT) + 1
						    : mid_ab(x, units[u] == 'a');
		}
	} while (cpu_seconds() < end);
	sink = x;
	return rounds;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--design")) {
		int total = UNITS_A + UNITS_B + UNITS_C;
		printf("self leaf_a %d\n", 100 * UNITS_A / total);
		printf("self leaf_b %d\n", 100 * UNITS_B / total);
		printf("self leaf_c %d\n", 100 * UNITS_C / total);
		printf("children mid_ab %d\n", 100 * (UNITS_A + UNITS_B) / total);
		printf("children work 100\n");
		return 0;
	}
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: leafy [CPU-SECONDS] | leafy --design\n");
		return 2;
	}
	long rounds = work(seconds);
	printf("leafy: %ld rounds, %.2f s CPU\n", rounds, cpu_seconds());
	return 0;
}
