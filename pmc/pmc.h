/* pmc.h - event specifications ("-e" strings) turned into perf_event_attr,
 * and what this machine's PMUs and tracefs offer.  Used by record and stat.
 * Nothing here opens ring buffers or knows the command line. */
#ifndef EMBER_PMC_H
#define EMBER_PMC_H

#include <linux/perf_event.h>
#include <stdbool.h>

#include "common/common.h"

/* One parsed event.  attr carries type, config*, exclude_* and precise_ip;
 * the sampling fields (period/freq, sample_type, ...) are the caller's. */
struct pmc_event {
	struct perf_event_attr attr;
	char *name;         /* canonical, as perf prints it: "cycles:u",
			       "sched:sched_switch", "cpu-clock" */
	char *filter;       /* tracepoint filter (--filter), or NULL */
	char *tp_system;    /* tracepoints only: "sched" */
	char *tp_name;      /*                   "sched_switch" */
	int group;          /* index of the group leader in the list; its
			       own index when it leads or stands alone */
	bool user_precise;  /* the spec asked for :p/:pp/:ppp */
	bool precise_max;   /* the spec asked for :P, the best level there is:
			       set attr.precise_ip = 3, then pmc_fit_precise() */
	char *probe_path;   /* uprobes: the file, attr.config1 points at it */
	bool every_hit;     /* record each hit, as a tracepoint (uprobes) */
};

struct pmc_list {
	struct pmc_event *v;
	size_t n, cap;
	size_t last;        /* index of the first event the most recent
			       successful pmc_parse() added */
};

/* Parses one "-e" argument and appends its events: comma lists, groups
 * "{a,b}", globs in tracepoints ("block:*", "sched:sched_*"), modifiers
 * ":u :k :h :p :pp :ppp" (combinable, e.g. ":upp").  Accepted forms:
 * software and generic hardware names, hw-cache names
 * (L1-dcache-load-misses, dTLB-load-misses, ...), raw "rNNNN", sysfs PMU
 * "pmu/event=0x..,umask=0x..,name=x/" (terms from
 * /sys/bus/event_source/devices/PMU/format), sysfs named events
 * "pmu/name/" and tracepoints "subsys:name".
 * Returns 0, or -1 with err_set() naming the bad part and the fix. */
int pmc_parse(struct pmc_list *list, const char *spec);

/* Calls fn for every symbolic event name pmc_parse() accepts, for
 * "ember list": software, generic hardware (name, and its other spelling
 * or NULL) and the hw-cache events perf lists (L1-dcache-load-misses, ...).
 * The name strings live only for the duration of the call. */
typedef void (*pmc_name_fn)(const char *name, const char *alias, u32 type,
			    u64 config, void *ctx);
void pmc_each_symbolic(pmc_name_fn fn, void *ctx);

/* Calls fn for every named event of every PMU in sysfs (the files of
 * /sys/bus/event_source/devices/PMU/events, not their .scale, .unit,
 * .per-pkg and .snapshot companions), PMUs and names in order, with the
 * file's text, its encoding ("event=0x3c"; NULL when unreadable), for
 * "ember list".  The strings live only for the duration of the call. */
typedef void (*pmc_pmu_event_fn)(const char *pmu, const char *name,
				 const char *enc, void *ctx);
void pmc_each_pmu_event(pmc_pmu_event_fn fn, void *ctx);

/* Applies a tracepoint filter to the tracepoints added by the most recent
 * pmc_parse() call (as perf's --filter follows the -e it belongs to).
 * -1 with err_set() when those events include no tracepoint. */
int pmc_set_filter(struct pmc_list *list, const char *filter);

void pmc_list_free(struct pmc_list *list);

/* Probes whether the kernel accepts attr for the calling process
 * (perf_event_open with pid 0, cpu -1, then close).  Returns 0 when it
 * does, otherwise -errno (e.g. -ENOENT, -EOPNOTSUPP for no PMU). */
int pmc_probe(const struct perf_event_attr *attr);

/* Lowers attr->precise_ip step by step until the kernel accepts it.
 * Returns the level reached (0-3), or -1 when even 0 is refused (attr's
 * precise_ip is then left as asked, for pmc_explain_open_error()). */
int pmc_fit_precise(struct perf_event_attr *attr);

/* The highest precise_ip level (0-3) the CPU's default cycles event accepts;
 * 0 when there is no hardware PMU. */
int pmc_max_precise(void);

/* True when the generic hardware "cycles" event can be opened here. */
bool pmc_have_hw_pmu(void);

/* Turns a perf_event_open errno for ev into one line naming the event and
 * the fix (not supported here, paranoid too strict, no such pid, ...).
 * Writes it with err_set(). */
void pmc_explain_open_error(const struct pmc_event *ev, int err);

/* The file a uprobe's PATH names (uprobe.c): a path as it resolves, a
 * library's short name ("libc", "c") the one ember maps or the first in
 * the library folders, else a program on $PATH; malloc'ed, or NULL with
 * err_set() saying what was tried. */
char *pmc_probe_file(const char *file);

/* ---- tracefs ---------------------------------------------------------- */

/* The tracefs mount point, mounting it at /sys/kernel/tracing when absent
 * and we are root.  NULL with err_set() when it cannot be had. */
const char *pmc_tracefs(void);

/* Contents of tracefs files needed to decode tracepoints offline
 * (caller frees): "events/SYS/NAME/format", "events/header_page", ... */
char *pmc_tracefs_read(const char *relpath, size_t *len);

/* The numeric id of a tracepoint, or -1 with err_set(). */
int pmc_tracepoint_id(const char *system, const char *name);

/* Calls fn for every tracepoint of tracefs, sorted by system then name,
 * for "ember list".  0, or -1 with err_set() when tracefs cannot be had
 * or read. */
typedef void (*pmc_tp_fn)(const char *system, const char *name, int id, void *ctx);
int pmc_each_tracepoint(pmc_tp_fn fn, void *ctx);

#endif
