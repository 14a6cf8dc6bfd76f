/* renames.c - one process whose threads rename themselves, for the
 * report's thread keys: work split by each thread's own CPU time, so the
 * shares hold on a busy machine.
 *
 *   main thread: UNIT s as "renames", then renames itself "split" and
 *                spins UNIT s more (after wB is done), then is renamed
 *                "done" and exits
 *   thread wA:   UNIT s, then renamed "idle", waiting off the CPU until
 *                main's work is done
 *   thread wB:   2 UNIT s
 *
 * Per thread: main 2/5, wA 1/5, wB 2/5 of the process's CPU; per comm:
 * renames 1/5, split 1/5, wA 1/5, wB 2/5.  wA's last name, idle, has no
 * work (main's, done, has only the exit's).
 *
 * usage: renames [UNIT-SECONDS]   (default 0.2)
 * prints: renames: pid PID tids MAIN WA WB
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static double unit = 0.2;
volatile uint64_t sink;
static pid_t tids[2];

static double thread_cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spins for this many seconds of the calling thread's CPU time. */
__attribute__((noinline)) void rename_spin(double seconds)
{
	uint64_t x = sink;
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t main_done = PTHREAD_COND_INITIALIZER;
static int finished;

static void *worker(void *arg)
{
	int i = (int)(intptr_t)arg;
	prctl(PR_SET_NAME, i ? "wB" : "wA");
	tids[i] = gettid();
	rename_spin(unit * (i + 1));
	if (i)
		return NULL;
	/* wA is renamed when its work is done and waits, off the CPU,
	 * until main's is: its last name has no samples. */
	prctl(PR_SET_NAME, "idle");
	pthread_mutex_lock(&lock);
	while (!finished)
		pthread_cond_wait(&main_done, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	unit = wl_arg_double(argc, argv, 1, 0.2);
	if (unit <= 0) {
		fprintf(stderr, "usage: renames [UNIT-SECONDS]\n");
		return 2;
	}
	prctl(PR_SET_NAME, "renames");
	rename_spin(unit);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	pthread_join(t[1], NULL);
	prctl(PR_SET_NAME, "split");
	rename_spin(unit);
	pthread_mutex_lock(&lock);
	finished = 1;
	pthread_cond_signal(&main_done);
	pthread_mutex_unlock(&lock);
	pthread_join(t[0], NULL);
	prctl(PR_SET_NAME, "done");
	printf("renames: pid %d tids %d %d %d\n", (int)getpid(), (int)getpid(), (int)tids[0],
	       (int)tids[1]);
	return 0;
}
