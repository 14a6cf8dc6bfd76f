/* pingpong.c - a context-switch-heavy pair: two threads pass one byte back
 * and forth over two pipes for SECONDS; every pass is a wakeup and a switch.
 *
 * usage: pingpong [SECONDS]      default 2
 * prints: pingpong: N round trips, RATE switches/s
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;

struct pair {
	int in, out;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The echo side: returns each byte; a 0 byte ends it. */
static void *pong(void *arg)
{
	struct pair *p = arg;
	char b;
	while (read(p->in, &b, 1) == 1) {
		if (write(p->out, &b, 1) != 1 || b == 0)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	int a[2], b[2];
	if (seconds <= 0 || pipe(a) < 0 || pipe(b) < 0) {
		fprintf(stderr, "usage: pingpong [SECONDS]\n");
		return 2;
	}
	struct pair p = { a[0], b[1] };
	pthread_t t;
	pthread_create(&t, NULL, pong, &p);
	unsigned long trips = 0;
	char c = 1;
	double start = now_s(), end = start + seconds;
	while (!stop) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			break;
		if (++trips % 256 == 0 && now_s() >= end)
			stop = 1;
	}
	c = 0;
	if (write(a[1], &c, 1) == 1 && read(b[0], &c, 1) == 1)
		trips++;
	double took = now_s() - start;
	pthread_join(t, NULL);
	/* Each round trip is two switches into the other thread. */
	printf("pingpong: %lu round trips, %.0f switches/s\n", trips, 2.0 * trips / took);
	return 0;
}
