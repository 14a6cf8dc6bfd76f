/* spawn.c - short-lived processes for memory tests of long live sessions:
 * runs /bin/true again and again (each waited for) for SECONDS, at most
 * MAX of them, and prints how many ran.  With DIR, each run is of a fresh
 * copy of /bin/true in DIR (another inode: to a profiler, another file to
 * open and read); the newest KEEP copies stay, older ones are removed.
 *
 * usage: spawn SECONDS [MAX [DIR]]     (default MAX 100000) */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

#define KEEP 1000

extern char **environ;

/* /bin/true copied to path, executable; 0 or -1. */
static int copy_true(const char *path)
{
	int in = open("/bin/true", O_RDONLY | O_CLOEXEC);
	int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	struct stat st;
	int rc = in >= 0 && out >= 0 && fstat(in, &st) == 0 &&
		 sendfile(out, in, NULL, (size_t)st.st_size) == st.st_size ? 0 : -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, 1);
	long max = wl_arg_long(argc, argv, 2, 100000);
	const char *dir = argc > 3 ? argv[3] : NULL;
	char path[4096];
	char *args[] = { "/bin/true", NULL };
	double end = wl_now() + secs;
	long n = 0;
	while (n < max && wl_now() < end) {
		if (dir) {
			snprintf(path, sizeof(path), "%s/t%ld", dir, n);
			if (copy_true(path) < 0)
				return 1;
			args[0] = path;
		}
		pid_t pid;
		if (posix_spawn(&pid, args[0], NULL, NULL, args, environ) != 0)
			return 1;
		waitpid(pid, NULL, 0);
		if (dir && n >= KEEP) {
			snprintf(path, sizeof(path), "%s/t%ld", dir, n - KEEP);
			unlink(path);
		}
		n++;
	}
	printf("%ld\n", n);
	return 0;
}
