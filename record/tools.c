/* tools.c - the events each of ember's BCC-like tools (execsnoop, syscount,
 * ...) needs, added to a recording by `ember record --tool NAME`; the tools
 * in tools/ read exactly these. */
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "record/record-internal.h"

/* A tool's tracepoints: `snap` ones (contiguous, first in the list) take
 * a copy of the user stack and the user sp, from which the tool reads
 * strings the tracepoint only points at (exec's argv, open's path). */
struct tool_events {
	const char *name;
	const char *snap;          /* comma list, or NULL */
	const char *plain;         /* comma list, or NULL */
	bool need_event;           /* the user names the events (-e) */
	bool chains;               /* call chains (as -g, unless -g/--call-graph says) */
	bool switches;             /* context-switch records */
	u32 snap_bytes;            /* the copy's size; 0 for SNAP_BYTES */
	const int *path_nrs;       /* syscalls whose paths are probed where */
	size_t n_path_nrs;         /* they are made (strings.c), or none */
};

/* x86-64 syscall numbers whose paths the tools show. */
static const int open_nrs[] = { 2, 257, 437 };           /* open openat openat2 */
static const int stat_nrs[] = { 4, 6, 262, 332, 137 };   /* stat lstat newfstatat statx statfs */
static const int life_nrs[] = { 2, 85, 257, 437, 87, 263 };  /* + creat unlink unlinkat */
static const int exec_nrs[] = { 59, 322 };               /* execve execveat */
#define NRS(a) a, ARRAY_SIZE(a)

/* 8 KiB reaches the paths a program builds in its own locals. */
#define SNAP_BYTES 8192
/* With the path probes in place the copy is only the fallback for
 * programs they do not see, and 1 KiB keeps their callers' locals: 8 KiB
 * a call cost 100,000 opens of a heap path (one every 25 us) 12,914 to
 * 115,828 events lost at the ring, 774 MB of file and 2.35-2.57 s; 1 KiB
 * none lost, 130 MB, 2.35-2.44 s (the probes alone: 1.9-2.0 s). */
#define PROBED_SNAP_BYTES 1024
/* sched_process_exec fires with the new image's stack in place: from the
 * sp up, argc, argv[], envp[], auxv, then the kernel's random gap (up to
 * 8 KiB, arch_align_stack) below the argv strings.  16 KiB reaches them
 * past any gap with some 900 environment variables; 8 KiB missed them in
 * 3 of 24 execs of a small shell.  (perf's copy also stops at a page no
 * one touched, which a gap over 4 KiB can leave: no size helps then.) */
#define EXEC_SNAP_BYTES 16384

static const struct tool_events tools[] = {
	{ "execsnoop", "sched:sched_process_exec,syscalls:sys_enter_execve,"
		       "syscalls:sys_enter_execveat",
	  "syscalls:sys_exit_execve,syscalls:sys_exit_execveat", false, false, false,
	  EXEC_SNAP_BYTES, NRS(exec_nrs) },
	{ "opensnoop", "syscalls:sys_enter_open,syscalls:sys_enter_openat,"
		       "syscalls:sys_enter_openat2",
	  "syscalls:sys_exit_open,syscalls:sys_exit_openat,syscalls:sys_exit_openat2",
	  false, false, false, 0, NRS(open_nrs) },
	{ "statsnoop", "syscalls:sys_enter_newstat,syscalls:sys_enter_newlstat,"
		       "syscalls:sys_enter_newfstatat,syscalls:sys_enter_statx,"
		       "syscalls:sys_enter_statfs",
	  "syscalls:sys_exit_newstat,syscalls:sys_exit_newlstat,syscalls:sys_exit_newfstatat,"
	  "syscalls:sys_exit_statx,syscalls:sys_exit_statfs", false, false, false, 0,
	  NRS(stat_nrs) },
	/* The opens that may create a file and the unlinks that end one. */
	{ "filelife", "syscalls:sys_enter_creat,syscalls:sys_enter_open,syscalls:sys_enter_openat,"
		      "syscalls:sys_enter_openat2,syscalls:sys_enter_unlink,"
		      "syscalls:sys_enter_unlinkat",
	  "syscalls:sys_exit_creat,syscalls:sys_exit_open,syscalls:sys_exit_openat,"
	  "syscalls:sys_exit_openat2,syscalls:sys_exit_unlink,syscalls:sys_exit_unlinkat",
	  false, false, false, 0, NRS(life_nrs) },
	{ "syscount", NULL, "raw_syscalls:sys_enter,raw_syscalls:sys_exit", false, false, false, 0, NULL, 0 },
	/* signal_generate: the parent's SIGCHLD, whose code says CLD_DUMPED. */
	{ "exitsnoop", NULL, "sched:sched_process_exit,syscalls:sys_enter_exit_group,"
			     "syscalls:sys_enter_exit,signal:signal_deliver,signal:signal_generate",
	  false, false, false, 0, NULL, 0 },
	/* Switch records, not sched_switch: a task's switch-in is another
	 * task's sched_switch, which a per-task recording cannot see. */
	{ "cpudist", NULL, "dummy", false, false, true, 0, NULL, 0 },
	{ "softirqs", NULL, "irq:softirq_entry,irq:softirq_exit", false, false, false, 0, NULL, 0 },
	{ "hardirqs", NULL, "irq:irq_handler_entry,irq:irq_handler_exit", false, false, false, 0, NULL, 0 },
	{ "oomkill", NULL, "oom:mark_victim", false, false, false, 0, NULL, 0 },
	{ "drsnoop", NULL, "vmscan:mm_vmscan_direct_reclaim_begin,"
			   "vmscan:mm_vmscan_direct_reclaim_end,vmscan:mm_vmscan_memcg_reclaim_begin,"
			   "vmscan:mm_vmscan_memcg_reclaim_end", false, false, false, 0, NULL, 0 },
	{ "writeback", NULL, "writeback:writeback_start,writeback:writeback_written", false, false, false, 0, NULL, 0 },
	{ "funccount", NULL, NULL, true, false, false, 0, NULL, 0 },
	{ "stackcount", NULL, NULL, true, true, false, 0, NULL, 0 },
};

static const struct tool_events *find_tool(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

/* "execsnoop, opensnoop, ..." for the error naming the choices. */
static void tool_names(char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(tools) && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", tools[i].name);
}

int rec_tool_check(const char *name)
{
	char names[256];
	if (find_tool(name))
		return 0;
	tool_names(names, sizeof(names));
	err_set("--tool %s: no such tool; the tools are %s", name, names);
	return -1;
}

/* A tool's tracepoints, without the recorder's own hits: system-wide, a
 * recorder draining syscall events makes syscalls that make more of them
 * (syscount -a counted 8745 of its own in a second).  Live, the recorder
 * is a thread of the view's process, not there yet: its thread sets the
 * filter (rec_tool_exclude_self; the kernel takes one filter per event). */
static int add_tracepoints(struct rec_opts *o, const char *spec)
{
	char filter[64];
	if (pmc_parse(&o->events, spec) < 0)
		return -1;
	if (o->live)
		return 0;
	snprintf(filter, sizeof(filter), "common_pid != %d", (int)getpid());
	return o->events.v[o->events.last].attr.type == PERF_TYPE_TRACEPOINT
	       ? pmc_set_filter(&o->events, filter) : 0;
}

int rec_tool_exclude_self(struct rec_session *s)
{
	const struct tool_events *t = find_tool(s->o->tool);
	char filter[96];
	if (!t || t->need_event)
		return 0;   /* the user's events, unfiltered as record's */
	snprintf(filter, sizeof(filter), "common_pid != %d && common_pid != %d", (int)getpid(),
		 (int)gettid());
	for (int ei = 0; ei < s->nevsels; ei++) {
		if (s->evsels[ei].attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		for (int ci = 0; ci < s->ncpus; ci++)
			for (int ti = 0; ti < s->nthreads; ti++) {
				int fd = *rec_fd_slot(s, ci, ti, ei);
				if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
					err_set_errno("filter '%s' on %s", filter,
						      s->evsels[ei].ev->name);
					return -1;
				}
			}
	}
	return 0;
}

/* execsnoop: the uprobe at the loader's entry carries each dynamic
 * program's arguments whatever the stack gap (execargs.c); without it
 * (no tracefs or permission, no interpreter) the stack copies alone
 * serve, and a note says why. */
static void add_exec_args(struct rec_opts *o)
{
	char name[64];
	if (rec_execargs_create(&o->probes, name, sizeof(name)) == 0 &&
	    add_tracepoints(o, name) == 0)
		return;
	snprintf(o->tool_note, sizeof(o->tool_note), "exec arguments from the stack "
		 "copy only (an exec may show its path and \"...\"): %s", err_msg());
}

/* The paths the tool's syscalls point at, fetched where they are made
 * (strings.c); without the probes, from the stack copies alone, and a
 * note says why. */
static void add_path_probes(struct rec_opts *o, const struct tool_events *t)
{
	char names[256];
	if (rec_strings_create(&o->probes, o, t->path_nrs, t->n_path_nrs, names,
			       sizeof(names)) == 0 &&
	    add_tracepoints(o, names) == 0) {
		if (o->snap_bytes == SNAP_BYTES)
			o->snap_bytes = PROBED_SNAP_BYTES;
		return;
	}
	if (!o->tool_note[0])      /* execsnoop's says why already */
		snprintf(o->tool_note, sizeof(o->tool_note), "paths from the stack copy "
			 "only (a path on the heap shows as its address): %s", err_msg());
}

int rec_tool_add(struct rec_opts *o, const char *name)
{
	const struct tool_events *t = find_tool(name);
	if (!t)
		return rec_tool_check(name);
	if (t->need_event && o->events.n == 0) {
		err_set("--tool %s: give the events to count with -e (tracepoints with "
			"globs, u:PATH:SYMBOL)", name);
		return -1;
	}
	if (!t->need_event && o->events.n) {
		err_set("--tool %s records its own events: leave out -e", name);
		return -1;
	}
	size_t first = o->events.n;
	if (t->snap && add_tracepoints(o, t->snap) < 0)
		return -1;
	o->snap_first = first;
	o->snap_n = o->events.n - first;
	o->snap_bytes = t->snap_bytes ? t->snap_bytes : SNAP_BYTES;
	if (t->plain && add_tracepoints(o, t->plain) < 0)
		return -1;
	if (!strcmp(name, "execsnoop"))
		add_exec_args(o);
	if (t->n_path_nrs)
		add_path_probes(o, t);
	o->switch_events |= t->switches;
	/* Stacks as record -g's: user stacks unwound with the binaries' CFI
	 * while recording, for Debian's programs have no frame pointers
	 * (stackcount of brk in python3: no hit's stack reached main with
	 * frame pointers, 458 of 459 with CFI); --call-graph fp keeps the walk. */
	if (t->chains && o->callgraph == REC_CG_NONE)
		o->callgraph = REC_CG_ONLINE;
	/* The tools count every event: perf's 512 KiB ring holds 64 stack
	 * copies, or 5000 syscall events (a program calling getppid in a
	 * loop lost 9154 of 24690 with it); unless -m says otherwise.
	 * stackcount's 16 KB stack copies (each hit, at the kernel's rate)
	 * get 16 MiB: with 4 MiB the live drain lost 1623 of 2000 getppid
	 * hits of a tight loop, with 16 MiB none (and 662 of 50,000;
	 * --call-graph fp loses none). */
	if (!o->mmap_pages || o->mmap_pages == REC_DEFAULT_PAGES)
		o->mmap_pages = o->callgraph == REC_CG_ONLINE
			? rec_stack_pages(4 * REC_STACK_PAGES) : REC_STACK_PAGES;
	return 0;
}
