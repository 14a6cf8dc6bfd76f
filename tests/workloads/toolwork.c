/* toolwork.c - behaviour known by construction for the BCC-like tools:
 *   toolwork getppid N        calls getppid exactly N times (syscount), and
 *                             says how long the loop took (bench/syscount.sh)
 *   toolwork open N M         opens an existing file N times and a missing
 *                             one M times, paths built on its stack (opensnoop)
 *   toolwork heapopen N       N times: opens, then stats, a missing path
 *                             "/nonexistent-ember-heap/I" built in one heap
 *                             buffer (opensnoop, statsnoop: paths no stack
 *                             copy holds, and each call's own)
 *   toolwork filelife N MS DIR N times: creates DIR/ember-life-I (a heap
 *                             path), and deletes it MS ms later (filelife)
 *   toolwork openloop N       opens and closes /etc/hostname N times (the
 *                             path in a heap buffer), and says how long the
 *                             loop took and its CPU time (bench/opensnoop.sh)
 *   toolwork heapexec N       N execs of missing programs
 *                             "/nonexistent-ember-heap/exec-I", path and
 *                             argv on the heap (execsnoop -x)
 *   toolwork execfail         one exec of a missing program, argv on its
 *                             stack, literal strings (execsnoop -x)
 *   toolwork runsleep N MS    N times: runs MS ms on the CPU, sleeps MS ms (cpudist)
 *   toolwork malloc N         N mallocs after start-up, through the PLT (funccount)
 *   toolwork alloc MB         allocates and touches MB megabytes (oomkill)
 *   toolwork paced RATE SECS  calls getppid RATE times a second for SECS
 *                             seconds, RATE/100 calls every 10 ms on an
 *                             absolute clock_nanosleep schedule: a constant
 *                             rate (the tools' --interval figures)
 * Each mode prints one line saying what it did. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int do_getppid(long n)
{
	double start = wl_now();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);   /* no caching wrapper in the way */
	printf("toolwork: getppid %ld times in %.6f s\n", n, wl_now() - start);
	return 0;
}

static int do_open(long n, long m)
{
	char have[64], missing[64];
	snprintf(have, sizeof(have), "/proc/self/%s", "stat");
	snprintf(missing, sizeof(missing), "/nonexistent-ember-%s", "toolwork");
	long ok = 0, failed = 0;
	for (long i = 0; i < n; i++) {
		int fd = open(have, O_RDONLY);
		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	for (long i = 0; i < m; i++)
		failed += open(missing, O_RDONLY) < 0 && errno == ENOENT;
	printf("toolwork: %ld opens, %ld failed with ENOENT\n", ok, failed);
	return 0;
}

static int do_heapopen(long n)
{
	char *path = malloc(64);
	long failed = 0;
	struct stat st;
	for (long i = 0; i < n; i++) {
		snprintf(path, 64, "/nonexistent-ember-heap/%ld", i);
		failed += open(path, O_RDONLY) < 0 && errno == ENOENT;
		failed += stat(path, &st) < 0 && errno == ENOENT;
	}
	free(path);
	printf("toolwork: %ld of %ld calls failed with ENOENT\n", failed, 2 * n);
	return 0;
}

static int do_filelife(long n, long ms, const char *dir)
{
	char *path = malloc(4096);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	long done = 0;
	for (long i = 0; i < n; i++) {
		snprintf(path, 4096, "%s/ember-life-%ld", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			continue;
		close(fd);
		nanosleep(&ts, NULL);
		done += unlink(path) == 0;
	}
	free(path);
	printf("toolwork: %ld files created and deleted\n", done);
	return 0;
}

static int do_openloop(long n)
{
	char *path = strdup("/etc/hostname");
	double start = wl_now(), cpu = now_ms();
	long ok = 0;
	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			ok++;
			close(fd);
		}
	}
	printf("toolwork: %ld opens in %.6f s, cpu %.6f s\n", ok, wl_now() - start,
	       (now_ms() - cpu) / 1e3);
	free(path);
	return 0;
}

static int do_heapexec(long n)
{
	char **argv = calloc(2, sizeof(char *));
	argv[0] = malloc(64);
	long failed = 0;
	for (long i = 0; i < n; i++) {
		snprintf(argv[0], 64, "/nonexistent-ember-heap/exec-%ld", i);
		execv(argv[0], argv);
		failed += errno == ENOENT;
	}
	free(argv[0]);
	free(argv);
	printf("toolwork: %ld of %ld execs failed with ENOENT\n", failed, n);
	return 0;
}

static int do_execfail(void)
{
	char *argv[] = { "/nonexistent-ember/prog", "ARG1", "ARG2", NULL };
	execv(argv[0], argv);
	printf("toolwork: exec failed: %d\n", -errno);
	return 0;
}

static int do_runsleep(long n, long ms)
{
	for (long i = 0; i < n; i++) {
		double end = now_ms() + (double)ms;
		while (now_ms() < end)
			;
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts))
			;
	}
	printf("toolwork: %ld runs of %ld ms\n", n, ms);
	return 0;
}

static int do_malloc(long n)
{
	void *volatile keep;
	usleep(100000);   /* start-up done: a tracer's probe is in place */
	for (long i = 0; i < n; i++) {
		keep = malloc(64);
		free(keep);
	}
	printf("toolwork: %ld mallocs\n", n);
	return 0;
}

/* Batches of RATE/100 calls at each 10 ms step from the start: the
 * schedule is absolute, so a late wake-up does not shift the rest. */
static int do_paced(long rate, long secs)
{
	long per_step = rate / 100, steps = secs * 100, calls = 0;
	struct timespec at;
	clock_gettime(CLOCK_MONOTONIC, &at);
	for (long i = 0; i < steps; i++) {
		for (long j = 0; j < per_step; j++, calls++)
			syscall(SYS_getppid);
		at.tv_nsec += 10000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_nsec -= 1000000000L;
			at.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
			;
	}
	printf("toolwork: getppid %ld times in %ld s, %ld a second\n", calls, secs, per_step * 100);
	return 0;
}

static int do_alloc(long mb)
{
	for (long i = 0; i < mb; i++) {
		char *p = malloc(1 << 20);
		if (!p)
			return 1;
		memset(p, 1, 1 << 20);
	}
	printf("toolwork: %ld MB touched\n", mb);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;
	if (!strcmp(mode, "getppid") && a > 0)
		return do_getppid(a);
	if (!strcmp(mode, "open") && a >= 0 && b >= 0)
		return do_open(a, b);
	if (!strcmp(mode, "heapopen") && a > 0)
		return do_heapopen(a);
	if (!strcmp(mode, "filelife") && a > 0 && b >= 0 && argc > 4)
		return do_filelife(a, b, argv[4]);
	if (!strcmp(mode, "openloop") && a > 0)
		return do_openloop(a);
	if (!strcmp(mode, "heapexec") && a > 0)
		return do_heapexec(a);
	if (!strcmp(mode, "execfail"))
		return do_execfail();
	if (!strcmp(mode, "runsleep") && a > 0 && b > 0)
		return do_runsleep(a, b);
	if (!strcmp(mode, "malloc") && a > 0)
		return do_malloc(a);
	if (!strcmp(mode, "alloc") && a > 0)
		return do_alloc(a);
	if (!strcmp(mode, "paced") && a >= 100 && b > 0)
		return do_paced(a, b);
	fprintf(stderr, "usage: toolwork getppid N | open N M | heapopen N | filelife N MS DIR | heapexec N | openloop N | execfail | runsleep N MS | "
		"malloc N | alloc MB | paced RATE SECS\n");
	return 2;
}
