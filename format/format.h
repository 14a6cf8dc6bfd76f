/* format.h - the perf.data file format: the only module that knows the
 * byte layouts of the file header, attrs, records and feature sections.
 * This part writes files (PERFILE2) and streams (the pipe variant).
 * Layout facts: tools/perf/Documentation/perf.data-file-format.txt. */
#ifndef EMBER_FORMAT_H
#define EMBER_FORMAT_H

#include <linux/perf_event.h>
#include <stdbool.h>

#include "common/common.h"

/* Feature section ids (bits of the header's feature bitmap). */
enum pd_feature {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CPU_TOPOLOGY = 13,
	PD_FEAT_NUMA_TOPOLOGY = 14,
	PD_FEAT_BRANCH_STACK = 15,
	PD_FEAT_PMU_MAPPINGS = 16,
	PD_FEAT_GROUP_DESC = 17,
	PD_FEAT_AUXTRACE = 18,
	PD_FEAT_STAT = 19,
	PD_FEAT_CACHE = 20,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_MEM_TOPOLOGY = 22,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_DIR_FORMAT = 24,
	PD_FEAT_BPF_PROG_INFO = 25,
	PD_FEAT_BPF_BTF = 26,
	PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CPU_PMU_CAPS = 28,
	PD_FEAT_CLOCK_DATA = 29,
	PD_FEAT_HYBRID_TOPOLOGY = 30,
	PD_FEAT_PMU_CAPS = 31,
	PD_FEAT_MAX = 256,
};

/* Record types perf's tools add beyond the kernel's (PERF_RECORD_*). */
enum pd_user_record {
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_EVENT_TYPE = 65,
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_HEADER_BUILD_ID = 67,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_ID_INDEX = 69,
	PD_RECORD_AUXTRACE_INFO = 70,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_AUXTRACE_ERROR = 72,
	PD_RECORD_THREAD_MAP = 73,
	PD_RECORD_CPU_MAP = 74,
	PD_RECORD_STAT_CONFIG = 75,
	PD_RECORD_STAT = 76,
	PD_RECORD_STAT_ROUND = 77,
	PD_RECORD_EVENT_UPDATE = 78,
	PD_RECORD_TIME_CONV = 79,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_COMPRESSED = 81,
	PD_RECORD_FINISHED_INIT = 82,
};

/* ---- Writer ------------------------------------------------------------
 * Order of calls:
 *   pd_writer_open -> pd_writer_add_attr (each event) -> pd_writer_feat_*
 *   (those known at start) -> pd_writer_begin -> pd_writer_write /
 *   pd_writer_finished_round / pd_write_* (the data) -> pd_writer_feat_*
 *   (those known at the end, e.g. build-ids) -> pd_writer_close.
 * In file mode the header is rewritten at close, so a file is only marked
 * complete once everything is on disk. In pipe mode attrs go out as
 * HEADER_ATTR records, tracing data as HEADER_TRACING_DATA and features as
 * HEADER_FEATURE records, as perf's stream does. */
struct pd_writer;

/* path "-" writes the pipe variant to stdout; pipe forces the pipe variant
 * to a file.  NULL with err_set() on failure. */
struct pd_writer *pd_writer_open(const char *path, bool pipe);

/* An event and the kernel ids of its file descriptors (PERF_EVENT_IOC_ID),
 * and its name for the event-description feature. */
int pd_writer_add_attr(struct pd_writer *w, const struct perf_event_attr *attr,
		       const char *name, const u64 *ids, size_t nids);

int pd_writer_begin(struct pd_writer *w);

/* Appends raw records (as the kernel wrote them in the ring).  Buffers
 * small pieces, writes large ones straight through.  -1 with err_set() on
 * a write error (e.g. "No space left on device"); the data already written
 * stays valid. */
int pd_writer_write(struct pd_writer *w, const void *buf, size_t len);

/* A FINISHED_ROUND record: everything before it may be sorted and
 * processed by a reader. Flushes the buffer. */
int pd_writer_finished_round(struct pd_writer *w);

/* Bytes of record data written so far (what the data section holds). */
u64 pd_writer_data_size(const struct pd_writer *w);

/* Writes the features and the final header (file mode), flushes and
 * closes.  Frees w in every case.  -1 with err_set() on error. */
int pd_writer_close(struct pd_writer *w);

/* Closes without finishing: for a failed recording.  In file mode the
 * header's data size is still written so what was captured can be read. */
void pd_writer_abort(struct pd_writer *w);

/* ---- Features ----------------------------------------------------------
 * Each encodes one feature section; call before pd_writer_close (in pipe
 * mode they are emitted as HEADER_FEATURE records: before begin when
 * called before it, else at close). */
int pd_writer_feat_string(struct pd_writer *w, enum pd_feature f, const char *s);
int pd_writer_feat_nrcpus(struct pd_writer *w, u32 nr_available, u32 nr_online);
int pd_writer_feat_total_mem(struct pd_writer *w, u64 kib);
int pd_writer_feat_cmdline(struct pd_writer *w, int argc, char *const argv[]);
/* From the attrs and names given to pd_writer_add_attr. */
int pd_writer_feat_event_desc(struct pd_writer *w);
int pd_writer_feat_sample_time(struct pd_writer *w, u64 first_ns, u64 last_ns);

struct pd_cpu_topology {
	int nr_cores;          /* distinct core sibling lists */
	char **core_siblings;  /* "0-1" strings, one per socket */
	int nr_threads;
	char **thread_siblings;/* "0", "1", ... one per core */
	int nr_cpus;           /* entries below, indexed by CPU number */
	u32 *core_id, *socket_id, *die_id;
	int nr_dies;
	char **die_siblings;
};
int pd_writer_feat_cpu_topology(struct pd_writer *w, const struct pd_cpu_topology *t);

struct pd_numa_node {
	u32 node;
	u64 mem_total_kib, mem_free_kib;
	const char *cpus;      /* "0-1" */
};
int pd_writer_feat_numa(struct pd_writer *w, const struct pd_numa_node *nodes, int n);

struct pd_build_id {
	s32 pid;               /* -1 for the kernel, as perf writes it */
	u16 cpumode;           /* PERF_RECORD_MISC_KERNEL / _USER */
	u8 id[20];
	u8 size;               /* bytes of id in use (20 for SHA1) */
	const char *filename;  /* "[kernel.kallsyms]" for the kernel */
};
int pd_writer_feat_build_ids(struct pd_writer *w, const struct pd_build_id *ids, int n);

/* Tracepoint format data (HEADER_TRACING_DATA, version 0.6), so readers
 * can decode tracepoint fields offline. */
struct pd_tracing_event {
	const char *system;    /* "sched"; "ftrace" events go in ftrace list */
	const char *format;    /* contents of events/SYS/NAME/format */
	size_t format_len;
};
struct pd_tracing {
	const char *header_page; size_t header_page_len;
	const char *header_event; size_t header_event_len;
	const struct pd_tracing_event *events; int nr_events;
	const char *kallsyms; size_t kallsyms_len;   /* may be empty */
	const char *printk; size_t printk_len;       /* may be empty */
	const char *cmdlines; size_t cmdlines_len;   /* saved_cmdlines, may be empty */
};
int pd_writer_feat_tracing_data(struct pd_writer *w, const struct pd_tracing *t);

/* ---- Synthesized side-band records ---------------------------------------
 * For processes that already run, the recorder writes what the kernel
 * would have: COMM, FORK, MMAP2.  Each record ends with the sample_id
 * trailer that attr's sample_type asks for when attr.sample_id_all is set. */
struct pd_sample_id {
	u32 pid, tid;
	u64 time;
	u64 id;                /* kernel id of the event these belong to */
	u32 cpu;
};

int pd_write_comm(struct pd_writer *w, const struct perf_event_attr *attr,
		  u32 pid, u32 tid, const char *comm, bool exec,
		  const struct pd_sample_id *sid);
int pd_write_fork(struct pd_writer *w, const struct perf_event_attr *attr,
		  u32 pid, u32 ppid, u32 tid, u32 ptid, u64 time,
		  const struct pd_sample_id *sid);

struct pd_mmap2 {
	u32 pid, tid;
	u64 start, len, pgoff;
	u32 maj, min;
	u64 ino, ino_generation;
	u32 prot, flags;
	u16 cpumode;           /* PERF_RECORD_MISC_USER or _KERNEL */
	const u8 *build_id;    /* when set, written instead of maj/min/ino */
	u8 build_id_size;
	const char *filename;
};
int pd_write_mmap2(struct pd_writer *w, const struct perf_event_attr *attr,
		   const struct pd_mmap2 *m, const struct pd_sample_id *sid);

/* Bytes of the sample_id trailer for attr (0 unless sample_id_all). */
size_t pd_sample_id_size(const struct perf_event_attr *attr);

#endif
