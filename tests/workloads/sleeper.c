/* sleeper.c - sleeps and wakes: COUNT times, sleep MS milliseconds, then do
 * a short burst of CPU work in burst().  Each cycle is one switch-out (in
 * nanosleep) and one wake-up, so sched_switch events are known to happen.
 *
 * usage: sleeper [COUNT [MS]]   defaults 10 cycles of 10 ms
 * prints: sleeper: COUNT wakeups
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

__attribute__((noinline)) void burst(void)
{
	uint64_t x = 1;
	for (int i = 0; i < 100000; i++)   /* ~0.1 ms */
		x = x * 6364136223846793005ULL + 1;
	sink = x;
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 10;
	int ms = argc > 2 ? atoi(argv[2]) : 10;
	if (count < 0 || ms < 0) {
		fprintf(stderr, "usage: sleeper [COUNT [MS]]\n");
		return 2;
	}
	for (int i = 0; i < count; i++) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts))
			;
		burst();
	}
	printf("sleeper: %d wakeups\n", count);
	return 0;
}
