/* export-internal.h - the profile's tables as the writers (pprof.c,
 * speedscope.c) read them: strings, mappings, functions, locations with
 * their lines, threads and unique (thread, stack) samples. */
#ifndef EMBER_EXPORT_INTERNAL_H
#define EMBER_EXPORT_INTERNAL_H

#include "export/export.h"

#define EX_NONE UINT32_MAX

/* Ids found again by hash: heads by hash, then a chain through next. */
struct ex_index {
	struct u64map heads;        /* hash -> id + 1 of the newest with it */
	VEC(u32) next;              /* id -> the next id with the same hash */
};

struct ex_map {
	const struct sym_dso *dso;
	u64 start, limit, pgoff;
	u32 file, build_id;         /* string ids */
	bool kernel, lines, inlines;
};

struct ex_func {
	u32 name, file;             /* string ids */
	s64 start_line;
	u64 hash;
};

struct ex_line {
	u32 func;
	s64 line;
};

struct ex_loc {
	u32 map;                    /* EX_NONE: no file */
	u64 address;
	u32 first_line, nlines;     /* ex_profile.lines */
	/* The key: file, file address (ip without a file, with the pid) and
	 * the symbols of the inline chain. */
	const struct sym_dso *dso;
	u64 addr, syms;
	u32 pid;
};

struct ex_thread {
	u32 pid, tid, comm;         /* comm: string id */
};

struct ex_sample {
	u32 first, n;               /* ex_profile.stack_locs, leaf first */
	u32 thread;
	u64 count, value;
	u64 hash;
};

struct ex_profile {
	struct ex_profile_opts o;
	/* The event taken and what its values are. */
	char *event;
	bool time_based;            /* cpu-clock, task-clock: ns */
	u64 period;                 /* between samples, in the value's unit */
	u64 samples, skipped, total;
	u64 first_time, last_time;
	u64 time_nanos, duration_nanos;
	bool time_set;

	VEC(char *) strings;  struct ex_index string_ix;
	VEC(struct ex_map) maps;  struct u64map map_ix;   /* dso -> id + 1 */
	VEC(struct ex_func) funcs;  struct ex_index func_ix;
	VEC(struct ex_loc) locs;  struct ex_index loc_ix;
	VEC(struct ex_line) lines;
	VEC(struct ex_thread) threads;  struct ex_index thread_ix;
	VEC(struct ex_sample) samples_v;  struct ex_index sample_ix;
	VEC(u32) stack_locs;
	/* Scratch for one stack. */
	VEC(u32) scratch;
	struct strbuf text;
};

/* The writers' common facts: a sample type's name and unit. */
const char *ex_value_type(const struct ex_profile *p, const char **unit);
/* A function's name and file; "" when none. */
static inline const char *ex_str(const struct ex_profile *p, u32 id)
{
	return id < p->strings.n ? p->strings.v[id] : "";
}

#endif
