/* late-threads.c - a process whose busy threads start only after it has
 * been running a while, to test that attaching to a pid (-p) also follows
 * threads created later.  The main thread prints its pid, sleeps (no CPU),
 * then starts NTHREADS threads named "late-0", "late-1", ... that each
 * spin in late_spin() for SECONDS of their own CPU time (so a busy machine
 * stretches the run but not the work).  All of the process's CPU time is
 * therefore in the late threads.
 *
 * usage: late-threads [DELAY-MS [NTHREADS [SECONDS]]]   defaults 500 2 1
 *        With DELAY-MS = -1 the threads start on SIGUSR1 instead.
 * prints: late-threads: pid PID   (at once, flushed)
 *         late-threads: started N threads   (when they start)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1.0;
volatile uint64_t sink;

static double thread_cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t late_spin(uint64_t x)
{
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static void *late_thread(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "late-%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	sink = late_spin((uintptr_t)arg);
	return NULL;
}

static void on_usr1(int sig) { (void)sig; }

int main(int argc, char **argv)
{
	int delay_ms = argc > 1 ? atoi(argv[1]) : 500;
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	seconds = argc > 3 ? atof(argv[3]) : 1.0;
	if (nthreads < 1 || nthreads > 64 || seconds <= 0) {
		fprintf(stderr, "usage: late-threads [DELAY-MS [NTHREADS [SECONDS]]]\n");
		return 2;
	}
	printf("late-threads: pid %d\n", (int)getpid());
	fflush(stdout);
	if (delay_ms < 0) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		signal(SIGUSR1, on_usr1);
		int sig;
		sigwait(&set, &sig);
	} else {
		usleep(delay_ms * 1000);
	}
	pthread_t tids[64];
	for (int i = 0; i < nthreads; i++)
		pthread_create(&tids[i], NULL, late_thread, (void *)(intptr_t)i);
	printf("late-threads: started %d threads\n", nthreads);
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
