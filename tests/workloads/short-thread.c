/* short-thread.c - a process with one worker thread that ends long before
 * the process does, to test that `stat -t TID` notices the thread's exit
 * on its own.  The worker prints its tid, spins in short_spin() for
 * THREAD-MS of wall time and returns; the main thread joins it and then
 * sleeps (no CPU) until PROCESS-MS after the start before exiting.
 *
 * usage: short-thread [THREAD-MS [PROCESS-MS]]   defaults 300 5000
 * prints: short-thread: tid TID   (when the worker starts, flushed)
 *         short-thread: worker done   (when it has returned, flushed)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double thread_ms = 300, process_ms = 5000;
volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void short_spin(double until_ms)
{
	uint64_t x = 1;
	while (now_ms() < until_ms)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

static void *worker(void *arg)
{
	(void)arg;
	printf("short-thread: tid %d\n", (int)gettid());
	fflush(stdout);
	short_spin(now_ms() + thread_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		thread_ms = atof(argv[1]);
	if (argc > 2)
		process_ms = atof(argv[2]);
	double end = now_ms() + process_ms;
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("short-thread: worker done\n");
	fflush(stdout);
	double left = end - now_ms();
	if (left > 0) {
		struct timespec ts = { (time_t)(left / 1e3),
				       (long)((left - (time_t)(left / 1e3) * 1e3) * 1e6) };
		nanosleep(&ts, NULL);
	}
	return 0;
}
