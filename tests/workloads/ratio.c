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
 * rounds of one-unit calls in a shuffled order, so a sampling timer cannot
 * alias with them (see shuffle_round).
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

/* Each leaf starts on its own 64-byte line, so the three loops, whose
 * machine code differs only in one immediate, sit at the same offset in
 * their cache lines and fetch windows: a CPU whose loop speed depends on
 * code placement then runs all three at the same speed per iteration. */
#define LEAF __attribute__((noinline, aligned(64)))

LEAF uint64_t leaf_a(uint64_t x, long n) { LEAF_BODY(n, 1442695040888963407ULL); return x; }
LEAF uint64_t leaf_b(uint64_t x, long n) { LEAF_BODY(n, 1442695040888963409ULL); return x; }
LEAF uint64_t leaf_c(uint64_t x, long n) { LEAF_BODY(n, 1442695040888963411ULL); return x; }

/* One unit of leaf_a's or leaf_b's work, reached through mid_ab. */
__attribute__((noinline)) uint64_t mid_ab(uint64_t x, int which_a)
{
	if (which_a)
		return leaf_a(x, ITERS_PER_UNIT);
	return leaf_b(x, ITERS_PER_UNIT);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A round is UNITS_A + UNITS_B + UNITS_C one-unit calls in a random
 * order.  A periodic sampling timer lands at some phase of the round; with
 * the order shuffled, the unit at any phase is a fair draw from the round's
 * units, so the expected shares are exactly the design's even when the
 * timer's period is close to a multiple of the round's length. */
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

/* Runs whole rounds until `seconds` of CPU time are spent; returns rounds. */
__attribute__((noinline)) long work(double seconds)
{
	uint64_t x = 1, rng = 12345;
	long rounds = 0;
	char units[UNITS_A + UNITS_B + UNITS_C];
	double end = cpu_seconds() + seconds;
	do {
		for (int r = 0; r < ROUNDS_PER_CLOCK_CHECK; r++) {
			shuffle_round(units, &rng);
			for (int u = 0; u < UNITS_A + UNITS_B + UNITS_C; u++) {
				if (units[u] == 'c')
					x = leaf_c(x, ITERS_PER_UNIT);
				else
					x = mid_ab(x, units[u] == 'a');
			}
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
