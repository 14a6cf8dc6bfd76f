/* spawn.c - short-lived processes for memory tests of long live sessions:
 * runs /bin/true again and again (each waited for) for SECONDS, at most
 * MAX of them, and prints how many ran.
 *
 * usage: spawn SECONDS [MAX]     (default MAX 100000) */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "workload.h"

extern char **environ;

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 1);
	long max = wl_arg_long(argc, argv, 2, 100000);
	char *args[] = { "/bin/true", NULL };
	double end = wl_now() + secs;
	long n = 0;
	while (n < max && wl_now() < end) {
		pid_t pid;
		if (posix_spawn(&pid, args[0], NULL, NULL, args, environ) != 0)
			return 1;
		waitpid(pid, NULL, 0);
		n++;
	}
	printf("%ld\n", n);
	return 0;
}
