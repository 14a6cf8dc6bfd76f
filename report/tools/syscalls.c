/* syscalls.c - syscall numbers to names for syscount, from the table the
 * Makefile generates out of the kernel headers (asm/unistd_64.h). */
#include "report/tools/tools.h"

static const char *const names[] = {
#include "syscall-names.h"
};

const char *tool_syscall_name(u64 nr)
{
	return nr < ARRAY_SIZE(names) ? names[nr] : NULL;
}
