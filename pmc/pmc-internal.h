/* pmc-internal.h - shared inside pmc/ (and its unit test): the pieces of the
 * event-spec parser, with the sysfs and tracefs roots passed in so tests
 * can point them at a fake PMU or tracefs tree. */
#ifndef EMBER_PMC_INTERNAL_H
#define EMBER_PMC_INTERNAL_H

#include "pmc/pmc.h"

#define PMC_SYSFS_PMUS "/sys/bus/event_source/devices"

/* Where PMUs and tracepoints are looked up.  tracefs NULL means "ask
 * pmc_tracefs() when the first tracepoint is met", so a spec without
 * tracepoints never mounts anything. */
struct pmc_roots {
	const char *sysfs;    /* directory holding one folder per PMU */
	const char *tracefs;  /* tracefs mount point, or NULL */
};

/* pmc_parse() with explicit roots. */
int pmc_parse_at(struct pmc_list *list, const char *spec,
		 const struct pmc_roots *roots);

/* Software, generic hardware and hw-cache names ("cs", "cycles",
 * "dTLB-load-misses").  0 and attr->type/config filled, 1 when the name is
 * none of these, -1 with err_set() for a malformed cache name. */
int pmc_symbolic(const char *name, struct perf_event_attr *attr);

/* "pmu" and the text between the slashes of "pmu/terms/" -> attr->type,
 * config, config1, config2.  *name gets a name= term (caller frees) or
 * stays NULL.  -1 with err_set() naming the bad term. */
int pmc_pmu_terms(const char *sysfs, const char *pmu, const char *terms,
		  struct perf_event_attr *attr, char **name);

/* Packs value into attr as the format text says ("config:0-7,32-35").
 * term and pmu only name things in error messages. */
int pmc_format_pack(const char *format, u64 value, struct perf_event_attr *attr,
		    const char *pmu, const char *term);

/* One tracepoint found by a glob. */
struct pmc_tp {
	char *system, *name;
	int id;
};

/* Every tracepoint whose system and name match the fnmatch(3) globs,
 * sorted by system then name.  Returns the count (0 when nothing matched
 * or the system does not exist), or -1 with err_set(); free with
 * pmc_tp_free(). */
int pmc_tp_glob(const char *tracefs, const char *sys_glob,
		const char *name_glob, struct pmc_tp **out);
void pmc_tp_free(struct pmc_tp *v, int n);

/* True when tracefs has an events/ folder matching sys_glob. */
bool pmc_tp_system_exists(const char *tracefs, const char *sys_glob);

/* The tracepoint id under an explicit tracefs root, or -1 with err_set(). */
int pmc_tracepoint_id_at(const char *tracefs, const char *system,
			 const char *name);

/* uprobe.c: "u:PATH:SYMBOL" / "ur:PATH:SYMBOL" to the uprobe PMU's attr
 * (type, the retprobe bit, config2 the function's file offset); *path
 * gets the file resolved (a library by short name: "libc"), which
 * attr.config1 must point at while the event is opened.  -1 with
 * err_set() naming the file or symbol. */
int pmc_uprobe_attr(const char *text, struct perf_event_attr *attr, char **path);

#endif
