/* trace.h - bpftrace's language over perf_event_open (`ember trace`):
 * the probes of a program become perf events, and its filters, maps and
 * aggregations run in ember over the drained records.  Built so far: the
 * listing of the probes a pattern matches (`ember trace -l`, list.c). */
#ifndef EMBER_TRACE_H
#define EMBER_TRACE_H

#include "common/common.h"

/* One probe a pattern matches: its name as a program writes it
 * ("tracepoint:sched:sched_switch", "uprobe:/usr/bin/bash:readline",
 * "software:page-faults:") and, when fields were asked, the declarations
 * of the fields a program reads through args ("char prev_comm[16]"),
 * NULL-terminated (empty for probes without fields). */
typedef void (*trace_probe_fn)(const char *name, const char *const *fields, void *ctx);

/* Calls fn for each probe pattern matches, in order: a probe type or its
 * alias (tracepoint or t, uprobe or u, software or s, hardware or h) and
 * globs ("t:syscalls:sys_enter_open*", "u:libc:mall*"), or one glob over
 * whole names ("*sched_switch*"); NULL or "" lists every tracepoint,
 * software and hardware probe.  0, or -1 with err_set() naming what was
 * wrong with the pattern (a probe type ember trace cannot have, a file
 * that is not ELF, no tracefs). */
int trace_list(const char *pattern, bool fields, trace_probe_fn fn, void *ctx);

#endif
