/* tools-internal.h - private to report/tools/: the recorder child a live tool reads
 * from (live.c), until the live engine is in place. */
#ifndef EMBER_REPORT_TOOLS_INTERNAL_H
#define EMBER_REPORT_TOOLS_INTERNAL_H

#include <sys/types.h>

#include "report/tools/tools.h"

struct tool_live {
	pid_t recorder, tee;
	int fd;                    /* the stream to replay */
};

/* Starts `ember record --tool NAME` on the target; 0, or -1 err_set(). */
int tool_live_start(struct tool_live *l, const char *tool, const struct tool_target *tg);
/* Waits for the recorder (early: asks it to stop first) and returns its
 * exit status as a command's (128 + signal when it was killed). */
int tool_live_stop(struct tool_live *l, bool early);

#endif
