/* syscalls.c - syscall numbers to names for syscount, from the table the
 * Makefile generates out of the kernel headers (asm/unistd_64.h). */
#include <string.h>

#include "tools/tools.h"

static const char *const names[] = {
#include "syscall-names.h"
};

const char *tool_syscall_name(u64 nr)
{
	return nr < ARRAY_SIZE(names) ? names[nr] : NULL;
}

long tool_syscall_nr(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i] && !strcmp(names[i], name))
			return (long)i;
	return -1;
}

size_t tool_syscall_slots(void)
{
	return ARRAY_SIZE(names);
}
