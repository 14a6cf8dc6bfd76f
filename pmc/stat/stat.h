/* stat.h - pmc/stat/, the counting application on top of pmc/: the stat
 * and list commands, and for them and their unit tests: counters and their
 * reads, multiplex scaling, repeat statistics, derived metrics, the IPC/TLB
 * event tables, output lines. */
#ifndef EMBER_PMC_STAT_H
#define EMBER_PMC_STAT_H

#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/child.h"
#include "pmc/pmc.h"


/* ---- reads and scaling (count.c) -------------------------------------- */

/* Every counter is read with both times (for multiplex scaling) and its id
 * (to match members of a group read); leaders of real groups add GROUP. */
#define PMC_READ_FORMAT (PERF_FORMAT_TOTAL_TIME_ENABLED | \
			 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)
#define PMC_GROUP_MAX 64

/* One counter as the kernel reports it. */
struct pmc_reading {
	u64 value, enabled, running;
};

/* A decoded read(2) buffer: one value per counter, times shared. */
struct pmc_read_buf {
	u64 enabled, running;
	size_t n;
	u64 id[PMC_GROUP_MAX], value[PMC_GROUP_MAX];
};

/* Decodes what read(2) returned (words u64s) for read_format, group or
 * single.  -1 with err_set() when the buffer is short or inconsistent. */
int pmc_decode_read(const u64 *buf, size_t words, u64 read_format,
		    struct pmc_read_buf *out);

/* The count extrapolated to the whole enabled time (value when the counter
 * ran all along, 0 when it never ran). */
double pmc_scaled(const struct pmc_reading *r);
/* Percent of the enabled time the counter was on the PMU (100 when the
 * enabled time is 0, as perf shows it). */
double pmc_running_pct(const struct pmc_reading *r);
void pmc_reading_add(struct pmc_reading *sum, const struct pmc_reading *r);
struct pmc_reading pmc_reading_delta(const struct pmc_reading *now,
				     const struct pmc_reading *before);

/* ---- counters ---------------------------------------------------------- */

/* What to count: per task (cpus NULL: cpu -1), per CPU (tids NULL: pid -1),
 * or both. */
struct pmc_target {
	const int *cpus;
	int ncpus;
	const pid_t *tids;
	int ntids;
	bool inherit;         /* follow children created later */
	bool enable_on_exec;  /* start at the command's exec, not at enable */
};

struct pmc_counters {
	const struct pmc_list *events;
	int ncpus, ntids;     /* at least 1 each */
	int *fd;              /* [event][cpu][tid], -1 when not open */
	u64 *id;
	int *err;             /* per event: 0, or -errno of its first failure */
	bool *in_group;       /* per event: counted in its leader's group read */
};

/* Opens every event on every cpu x task of t (with its tracepoint filter;
 * the fd limit raised to the hard one).  An event the machine cannot
 * count (no PMU, unknown config) is left closed with err[] set; any other
 * failure (no such task, permissions, fd limits) returns -1 with a
 * pmc_explain_open_error() message. */
int pmc_counters_open(struct pmc_counters *c, const struct pmc_list *events,
		      const struct pmc_target *t);
int pmc_counters_enable(struct pmc_counters *c, bool on);
/* out has pmc_counters_slots() entries, [event][cpu][tid]; closed ones
 * read as zero. */
int pmc_counters_read(const struct pmc_counters *c, struct pmc_reading *out);
size_t pmc_counters_slots(const struct pmc_counters *c);
void pmc_counters_close(struct pmc_counters *c);
/* The same, without waiting for the kernel: a tracepoint's last counter
 * closed takes a grace period (20 to 30 ms here, 7 s for the 360 syscall
 * tracepoints), so the counters (disabled by the caller) are closed by a child
 * process of their own, which exits when done. */
void pmc_counters_close_later(struct pmc_counters *c);

/* Errors that mean "this machine cannot count the event": keep going. */
bool pmc_err_unsupported(int err);

/* ---- repeat statistics (metrics.c) ------------------------------------- */

/* Running mean and variance (Welford), as perf's -r reports them. */
struct pmc_stats {
	double n, mean, m2;
};
void pmc_stats_add(struct pmc_stats *s, double x);
/* Standard deviation of the mean: sqrt(variance / n), 0 for n < 2. */
double pmc_stats_stddev_mean(const struct pmc_stats *s);
/* That stddev in percent of the mean (0 when the mean is 0). */
double pmc_stats_rel_pct(const struct pmc_stats *s);

/* ---- derived metrics (metrics.c) -------------------------------------- */

/* One counter of a row of output (one CPU, node, thread or the total). */
struct pmc_row_event {
	u32 type;
	u64 config;
	bool counted;   /* ran and was read; false for not counted/supported */
	double value;   /* scaled */
};

struct pmc_metric {
	bool ok;
	double value;
	char unit[32];    /* "CPUs utilized", "K/sec", "insn per cycle" */
	bool percent;     /* printed with a '%' after the number */
};

/* The metric perf prints beside row[i] (wall_ns: the measured wall time;
 * row[i].value of clocks is in ns).  m->ok false when there is none. */
void pmc_metric_for(const struct pmc_row_event *row, size_t n, size_t i,
		    double wall_ns, struct pmc_metric *m);

/* ---- CPU tables for --ipc and --tlb (tables.c) ------------------------ */

enum pmc_vendor { PMC_VENDOR_OTHER, PMC_VENDOR_INTEL, PMC_VENDOR_AMD };

struct pmc_cpuid {
	enum pmc_vendor vendor;
	int family, model;
};

/* Parses /proc/cpuinfo text (its first processor).  -1 with err_set(). */
int pmc_cpuid_parse(const char *cpuinfo, struct pmc_cpuid *out);
int pmc_cpuid_read(struct pmc_cpuid *out);

/* The counters a TLB/IPC breakdown needs, by role. */
enum pmc_tslot {
	PMC_T_CYCLES, PMC_T_INSTR,
	PMC_T_DTLB_LOAD_WALKS, PMC_T_DTLB_STORE_WALKS, PMC_T_ITLB_WALKS,
	PMC_T_DTLB_LOAD_CYC, PMC_T_DTLB_STORE_CYC, PMC_T_ITLB_CYC,
	PMC_T_NSLOTS
};

/* A raw event of the core PMU: name NULL when the family has none. */
struct pmc_raw_event {
	const char *name;
	u64 config;
};

struct pmc_cpu_table {
	const char *name;             /* "Intel Skylake" */
	enum pmc_vendor vendor;
	int family;
	const int *models;            /* inclusive lo,hi pairs, -1 ends */
	struct pmc_raw_event ev[PMC_T_NSLOTS];
	const char *note;             /* why some columns are '-', or NULL */
};

/* Intel IA32_PERFEVTSELx and AMD PERF_CTLx layouts of a raw config. */
u64 pmc_intel_raw(unsigned event, unsigned umask, unsigned cmask);
u64 pmc_amd_raw(unsigned event, unsigned umask);

/* The table for id, or NULL with err_set() naming the CPU. */
const struct pmc_cpu_table *pmc_table_for(const struct pmc_cpuid *id);
/* All tables, for 'ember list' and the tests. */
const struct pmc_cpu_table *pmc_tables(size_t *n);

/* Appends a raw event of the CPU PMU to list (counted alone, exclude_guest
 * as perf's default). */
void pmc_list_add_raw(struct pmc_list *list, u64 config, const char *name);

/* The tlbstat columns of one interval or run. */
enum pmc_tcol {
	PMC_C_K_CYCLES, PMC_C_K_INSTR, PMC_C_IPC, PMC_C_DTLB_WALKS,
	PMC_C_ITLB_WALKS, PMC_C_K_DTLBCYC, PMC_C_K_ITLBCYC, PMC_C_DTLB_PCT,
	PMC_C_ITLB_PCT, PMC_C_NCOLS
};
struct pmc_tlb_row {
	double v[PMC_C_NCOLS];
	bool have[PMC_C_NCOLS];   /* false: the family cannot measure it */
};
/* v/have indexed by enum pmc_tslot (have false: event absent in table). */
void pmc_tlb_compute(const double *v, const bool *have, struct pmc_tlb_row *row);
const char *pmc_tcol_name(enum pmc_tcol c);

/* ---- output lines (format.c) ------------------------------------------- */

enum pmc_out_mode { PMC_OUT_TEXT, PMC_OUT_CSV, PMC_OUT_JSON };
enum pmc_state { PMC_COUNTED, PMC_NOT_COUNTED, PMC_NOT_SUPPORTED };

struct pmc_out_line {
	bool interval;       /* prefix with ts */
	double ts;           /* seconds since start */
	const char *agg;     /* "CPU0", "N0", "comm-tid" or NULL */
	int agg_cpus;        /* --per-node: CPUs in the node */
	const char *agg_kind;/* JSON key of agg: "cpu", "node", "thread" */
	const char *event;
	bool clock;          /* value is ns, shown as msec */
	enum pmc_state state;
	double value;        /* scaled */
	u64 running;
	double pcnt;         /* running share, percent */
	struct pmc_metric metric;
	bool repeat;         /* show the noise */
	double noise_pct;
};

/* Appends one line in the chosen layout (text as perf stat, CSV with sep,
 * or one JSON object), newline included. */
void pmc_format_line(struct strbuf *sb, enum pmc_out_mode mode,
		     const char *sep, const struct pmc_out_line *l);
/* The "# time ..." header text mode prints before interval lines. */
void pmc_format_interval_header(struct strbuf *sb, const char *agg_title);


/* The tlbstat table (format.c): a header naming the columns (TIME first
 * with -I; only the first three for --ipc), then one row per interval. */
void pmc_format_tlb_header(struct strbuf *sb, enum pmc_out_mode mode,
			   const char *sep, bool ipc_only, bool interval);
void pmc_format_tlb_row(struct strbuf *sb, enum pmc_out_mode mode,
			const char *sep, const struct pmc_tlb_row *row,
			bool ipc_only, bool interval, double ts);

/* ---- one measurement (run.c) ------------------------------------------ */

/* Called at each -I tick with the counts since the previous tick, which
 * was span_ns ago (less than the interval for the last, partial one). */
typedef void (*pmc_tick_fn)(void *ctx, double ts, double span_ns,
			    const struct pmc_reading *delta,
			    const struct pmc_counters *c);

struct pmc_run_opts {
	const struct pmc_list *events;
	struct pmc_target target;  /* for a command, tids is set by pmc_run */
	char **command;            /* run and count this, or NULL */
	bool stdout_taken;         /* the command's stdout goes to stderr */
	const pid_t *watch;        /* -p/-t: stop once all of these are gone */
	int nwatch;
	bool watch_threads;        /* watch holds threads (-t), not processes */
	double interval_ms;        /* 0: no ticks */
	double duration_s;         /* 0: until the command ends or *stop */
	volatile sig_atomic_t *stop;
	pmc_tick_fn tick;
	void *ctx;
	bool close_later;          /* pmc_counters_close_later at the end */
};

struct pmc_run_result {
	struct pmc_reading *total;  /* pmc_counters_slots() entries */
	int *err;                   /* per event: 0 or -errno (not supported) */
	bool *grouped;              /* per event: read with its leader */
	int ncpus, ntids;
	double wall_ns;
	struct child_end end;       /* how the command ended (ran: there was one) */
	struct rusage ru;           /* the command's user and system time */
};

/* Opens the counters, starts the command (or enables them), waits,
 * ticks, reads the totals and closes.  -1 with err_set(). */
int pmc_run(const struct pmc_run_opts *o, struct pmc_run_result *r);
void pmc_run_result_free(struct pmc_run_result *r);
/* Appends the threads of process pid (from /proc) to *tids, for a
 * per-task count of a running process.  -1 with err_set() when there is
 * no such process. */
int pmc_tasks_of(pid_t pid, pid_t **tids, int *n);

/* ---- rows of output (rows.c) ------------------------------------------ */

enum pmc_agg { PMC_AGG_GLOBAL, PMC_AGG_CPU, PMC_AGG_NODE, PMC_AGG_THREAD };

/* How the counts of a run are grouped and shown. */
struct pmc_view {
	const struct pmc_list *events;
	enum pmc_agg agg;
	int ncpus, ntids;           /* the counters' axes (1 when absent) */
	const int *cpus;            /* CPU numbers of the axis, or NULL */
	const int *node_of;         /* per CPU index: its NUMA node */
	char *const *thread_names;  /* per tid index: "comm-tid" */
	enum pmc_out_mode mode;
	const char *sep;            /* CSV separator */
};

/* Counts summed per row (the total, a CPU, a node or a thread). */
struct pmc_rows {
	size_t nrows, nev;
	struct pmc_reading *r;      /* [row][event] */
	char **label;               /* per row, NULL for the total */
	int *ncpus;                 /* per row: CPUs summed in it */
	const int *err;             /* per event: non-zero = not supported */
};

void pmc_rows_build(const struct pmc_view *v, const struct pmc_reading *slots,
		    const int *err, struct pmc_rows *out);
void pmc_rows_free(struct pmc_rows *rows);

/* Appends every line of rows.  stats ([row][event], or NULL) replaces the
 * values by the mean of repeated runs and adds their noise. */
void pmc_rows_format(struct strbuf *sb, const struct pmc_view *v,
		     const struct pmc_rows *rows, const struct pmc_stats *stats,
		     bool interval, double ts, double wall_ns);
/* The scaled values of rows, for pmc_stats_add() after each run. */
void pmc_rows_add_stats(const struct pmc_rows *rows, struct pmc_stats *stats);

#endif
