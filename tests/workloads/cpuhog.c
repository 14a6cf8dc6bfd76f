/* cpuhog.c - THREADS CPU-bound threads that each spin about 3 ms, then
 * sleep 1 ms, for SECONDS: more threads than CPUs makes every wakeup wait
 * its turn, so wakeup-to-run latency has a tail.
 *
 * usage: cpuhog [THREADS [SECONDS]]    defaults 4 threads, 1 second
 * prints: cpuhog: pid PID, THREADS threads, N sleeps
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_long sleeps;
volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hog_spin(double seconds)
{
	uint64_t x = 1;
	double end = now_s() + seconds;
	while (now_s() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1;
	sink = x;
}

static void *hog(void *arg)
{
	double end = now_s() + *(double *)arg;
	struct timespec ms = { 0, 1000000L };
	while (now_s() < end) {
		hog_spin(0.003);
		nanosleep(&ms, NULL);
		sleeps++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	double seconds = argc > 2 ? atof(argv[2]) : 1;
	if (n < 1 || n > 256 || seconds <= 0) {
		fprintf(stderr, "usage: cpuhog [THREADS [SECONDS]]\n");
		return 2;
	}
	pthread_t t[256];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, hog, &seconds);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("cpuhog: pid %d, %d threads, %ld sleeps\n", (int)getpid(), n, (long)sleeps);
	return 0;
}
