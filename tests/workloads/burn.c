/* burn.c - CPU time known by construction: optionally sleeps DELAY_MS (so
 * a counter can attach with -p), then spins until the process has used
 * SECONDS of CPU, and prints the CPU time getrusage reports for it.
 *
 * usage: burn [SECONDS [DELAY_MS]]   defaults 0.5 s, no delay
 * prints: burn: CPU_NS ns cpu, WAIT_NS ns waiting
 *   CPU_NS: getrusage user+sys; WAIT_NS: time runnable but waiting for a
 *   CPU others held (schedstat run_delay, -1 when unavailable).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

volatile uint64_t sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin(double seconds)
{
	uint64_t x = 1;
	while (cpu_seconds() < seconds)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1;
	sink = x;
}

/* Nanoseconds spent runnable on a run queue, from /proc/self/schedstat. */
static long long run_delay_ns(void)
{
	long long run, delay = -1;
	FILE *f = fopen("/proc/self/schedstat", "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld %lld", &run, &delay) != 2)
		delay = -1;
	fclose(f);
	return delay;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	long delay = argc > 2 ? atol(argv[2]) : 0;
	if (seconds < 0 || delay < 0) {
		fprintf(stderr, "usage: burn [SECONDS [DELAY_MS]]\n");
		return 2;
	}
	if (delay) {
		struct timespec ts = { delay / 1000, (delay % 1000) * 1000000L };
		while (nanosleep(&ts, &ts))
			;
	}
	spin(seconds);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	long long ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	printf("burn: %lld ns cpu, %lld ns waiting\n", ns, run_delay_ns());
	return 0;
}
