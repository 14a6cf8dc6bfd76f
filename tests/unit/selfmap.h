/* selfmap.h - the mapping of this test's own code, as /proc/self/maps
 * gives it: what an MMAP2 record of it would carry. */
#ifndef EMBER_TEST_SELFMAP_H
#define EMBER_TEST_SELFMAP_H

#include <stdbool.h>
#include <stdio.h>

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

#endif
