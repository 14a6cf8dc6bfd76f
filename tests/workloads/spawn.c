/* spawn.c - short-lived processes for memory tests of long live sessions:
 * runs /bin/true again and again (each waited for) for SECONDS, at most
 * MAX of them, and prints how many ran.
 *
 * usage: spawn SECONDS [MAX]     (default MAX 100000) */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	long max = argc > 2 ? atol(argv[2]) : 100000;
	char *args[] = { "/bin/true", NULL };
	double end = now() + secs;
	long n = 0;
	while (n < max && now() < end) {
		pid_t pid;
		if (posix_spawn(&pid, args[0], NULL, NULL, args, environ) != 0)
			return 1;
		waitpid(pid, NULL, 0);
		n++;
	}
	printf("%ld\n", n);
	return 0;
}
