/* offcpu.c - off-CPU time known by construction: sleep_steps() sleeps
 * 8 x 100 ms, pipe_wait() blocks about 300 ms on a pipe read until a
 * helper thread ("pipewriter") writes, and burn() spins about 200 ms.
 *
 * The blocking calls are raw system calls made inside those functions: a
 * libc wrapper keeps no frame pointer, so a frame-pointer unwind from
 * within it would skip its caller; inline, the user stack is exact.
 *
 * usage: offcpu            prints: offcpu: pid PID done
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A system call with up to three arguments, inline in the caller. */
static inline __attribute__((always_inline)) long raw3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

volatile uint64_t sink;

__attribute__((noinline)) void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (raw3(SYS_nanosleep, (long)&ts, (long)&ts, 0) != 0)
		;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn(double seconds)
{
	uint64_t x = 1;
	double end = now_s() + seconds;
	while (now_s() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1;
	sink = x;
}

__attribute__((noinline)) void sleep_steps(void)
{
	for (int i = 0; i < 8; i++)
		sleep_ms(100);
}

static void *writer(void *arg)
{
	int fd = *(int *)arg;
	pthread_setname_np(pthread_self(), "pipewriter");
	sleep_ms(300);
	char byte = 1;
	if (raw3(SYS_write, fd, (long)&byte, 1) != 1)
		perror("write");
	return NULL;
}

__attribute__((noinline)) void pipe_wait(void)
{
	int fds[2];
	if (pipe(fds) < 0) {
		perror("pipe");
		return;
	}
	pthread_t t;
	pthread_create(&t, NULL, writer, &fds[1]);
	char byte;
	if (raw3(SYS_read, fds[0], (long)&byte, 1) != 1)
		perror("read");
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	burn(0.2);
	sleep_steps();
	pipe_wait();
	printf("offcpu: pid %d done\n", (int)getpid());
	return 0;
}
