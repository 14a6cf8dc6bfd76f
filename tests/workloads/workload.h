/* workload.h - what several workloads share: the monotonic clock in
 * seconds and their optional numeric arguments. */
#ifndef EMBER_WORKLOAD_H
#define EMBER_WORKLOAD_H

#include <stdlib.h>
#include <time.h>

static inline double wl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* argv[i] as a number, or def when there are fewer arguments. */
static inline double wl_arg_double(int argc, char **argv, int i, double def)
{
	return argc > i ? atof(argv[i]) : def;
}

static inline long wl_arg_long(int argc, char **argv, int i, long def)
{
	return argc > i ? atol(argv[i]) : def;
}

#endif
