/* ratio.c - the known-ratio workload: CPU time split among three leaf
 * functions by iteration counts, so a profile's percentages are known.
 *
 * Call structure (built with frame pointers, no inlining):
 *   main -> work -> mid_ab -> leaf_a     50% of the work (self)
 *                          -> leaf_b     30%
 *                -> leaf_c               20%
 * so with children: work 100%, mid_ab 80%.  The leaves run the same
 * per-iteration body (one multiply-add step of a linear congruential
 * generator); only their iteration counts differ.  Work is done in short
 * rounds (tens of microseconds) so a sampling timer cannot alias with them.
 *
 * usage: ratio [CPU-SECONDS]   run for about that much CPU time (default 2)
 *        ratio --design        print the design percentages and exit
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The design, in one place: units of work per round for each leaf. */
#define UNITS_A 5
#define UNITS_B 3
#define UNITS_C 2
#define ITERS_PER_UNIT 1000
#define ROUNDS_PER_CLOCK_CHECK 64

volatile uint64_t sink;   /* keeps the work observable */
long leaf_calls;

/* Each leaf calls this once, which makes it a non-leaf function: gcc then
 * gives it a frame, so frame-pointer unwinding from a sample inside it
 * finds its caller (a frameless leaf would hide mid_ab from the chain). */
__attribute__((noinline)) void count_call(void) { leaf_calls++; }

/* One iteration = one LCG step.  The additive constants differ so the
 * compiler cannot fold the three leaves into one function. */
#define LEAF_BODY(n, add)                                                \
	do {                                                             \
		count_call();                                            \
		for (long i = 0; i < (n); i++)                           \
			x = x * 6364136223846793005ULL + (add);          \
	} while (0)

__attribute__((noinline)) uint64_t leaf_a(uint64_t x, long n) { LEAF_BODY(n, 1442695040888963407ULL); return x; }
__attribute__((noinline)) uint64_t leaf_b(uint64_t x, long n) { LEAF_BODY(n, 1442695040888963409ULL); return x; }
__attribute__((noinline)) uint64_t leaf_c(uint64_t x, long n) { LEAF_BODY(n, 1442695040888963411ULL); return x; }

__attribute__((noinline)) uint64_t mid_ab(uint64_t x)
{
	x = leaf_a(x, UNITS_A * ITERS_PER_UNIT);
	x = leaf_b(x, UNITS_B * ITERS_PER_UNIT);
	return x;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs whole rounds until `seconds` of CPU time are spent; returns rounds. */
__attribute__((noinline)) long work(double seconds)
{
	uint64_t x = 1;
	long rounds = 0;
	double end = cpu_seconds() + seconds;
	do {
		for (int r = 0; r < ROUNDS_PER_CLOCK_CHECK; r++) {
			x = mid_ab(x);
			x = leaf_c(x, UNITS_C * ITERS_PER_UNIT);
		}
		rounds += ROUNDS_PER_CLOCK_CHECK;
	} while (cpu_seconds() < end);
	sink = x;
	return rounds;
}

static void print_design(void)
{
	int total = UNITS_A + UNITS_B + UNITS_C;
	/* self percentages, then with-children percentages */
	printf("self leaf_a %d\n", 100 * UNITS_A / total);
	printf("self leaf_b %d\n", 100 * UNITS_B / total);
	printf("self leaf_c %d\n", 100 * UNITS_C / total);
	printf("children mid_ab %d\n", 100 * (UNITS_A + UNITS_B) / total);
	printf("children work 100\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--design")) {
		print_design();
		return 0;
	}
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: ratio [CPU-SECONDS] | ratio --design\n");
		return 2;
	}
	long rounds = work(seconds);
	printf("ratio: %ld rounds, %.2f s CPU\n", rounds, cpu_seconds());
	return 0;
}
