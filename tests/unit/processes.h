/* processes.h - processes for the tests of live bookkeeping: the mapping
 * of this test's own code, as /proc/self/maps gives it (what an MMAP2
 * record of it would carry), and a pid whose process is gone. */
#ifndef EMBER_TEST_PROCESSES_H
#define EMBER_TEST_PROCESSES_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct self_text {
	unsigned long long start, end, pgoff, ino;
	unsigned maj, min;
	char path[4096];
};

/* The mapping holding addr; false when none (or its path is too long). */
static inline bool self_text_of(const void *addr, struct self_text *t)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4608];
	unsigned long long here = (unsigned long long)(uintptr_t)addr;
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &t->start, &t->end,
			   perms, &t->pgoff, &t->maj, &t->min, &t->ino, t->path) == 8 &&
		    t->start <= here && here < t->end)
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* A pid no process has now: a child's, reaped; 0 when fork failed. */
static inline unsigned dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid > 0 ? (unsigned)pid : 0;
}

#endif
