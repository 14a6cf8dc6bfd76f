/* spin.c - CPU-bound workload with a measurable throughput: N threads each
 * repeat a fixed unit of work for D seconds (wall clock); the total number
 * of units done per second is the throughput a recorder's overhead lowers.
 *
 * usage: spin [THREADS [SECONDS]]   defaults 1 thread, 2 seconds;
 *        SECONDS may be fractional.
 * prints: spin: THREADS threads, SECONDS s, UNITS units, RATE units/s
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload.h"

#define ITERS_PER_UNIT 10000   /* ~10 us of work on this machine */

static atomic_int stop;
volatile uint64_t sink;

/* One unit: a fixed number of dependent multiply-add steps. */
__attribute__((noinline)) uint64_t spin_unit(uint64_t x)
{
	for (int i = 0; i < ITERS_PER_UNIT; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static void *spin_thread(void *arg)
{
	uint64_t x = (uintptr_t)arg + 1, units = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		x = spin_unit(x);
		units++;
	}
	sink = x;
	return (void *)(uintptr_t)units;
}

int main(int argc, char **argv)
{
	int nthreads = (int)wl_arg_long(argc, argv, 1, 1);
	double seconds = wl_arg_double(argc, argv, 2, 2.0);
	if (nthreads < 1 || nthreads > 1024 || seconds <= 0) {
		fprintf(stderr, "usage: spin [THREADS [SECONDS]]\n");
		return 2;
	}
	pthread_t *tids = calloc(nthreads, sizeof(*tids));
	double start = wl_now();
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, spin_thread, (void *)(uintptr_t)i)) {
			perror("spin: pthread_create");
			return 1;
		}
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts))
		;
	atomic_store(&stop, 1);
	uint64_t total = 0;
	for (int i = 0; i < nthreads; i++) {
		void *units;
		pthread_join(tids[i], &units);
		total += (uintptr_t)units;
	}
	double elapsed = wl_now() - start;
	printf("spin: %d threads, %.2f s, %llu units, %.0f units/s\n", nthreads,
	       elapsed, (unsigned long long)total, total / elapsed);
	free(tids);
	return 0;
}
