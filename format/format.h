/* format.h - the perf.data file format: the only module that knows the
 * byte layouts of the file header, attrs, records and feature sections.
 * Both directions: writing and reading files (PERFILE2) and streams (the
 * pipe variant), and blktrace captures.
 * Layout facts: tools/perf/Documentation/perf.data-file-format.txt. */
#ifndef EMBER_FORMAT_H
#define EMBER_FORMAT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/common.h"

/* The magic that opens a perf.data file or stream: "PERFILE2" read as a
 * little-endian u64. */
#define PD_MAGIC 0x32454c4946524550ULL

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
	PD_FEAT_LAST_KNOWN = PD_FEAT_PMU_CAPS,  /* later ones are skipped */
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
	PD_RECORD_COMPRESSED2 = 83,    /* u64 data_size, then the data, padded to 8 */
};

/* "MMAP2", "FINISHED_ROUND": a record type's name (PERF_RECORD_ and
 * PD_RECORD_ left off), or NULL for a type this ember does not know. */
const char *pd_record_name(u32 type);

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
/* The stream variant to fd (a pipe), which stays the caller's to close;
 * name is for messages. */
struct pd_writer *pd_writer_open_fd(int fd, const char *name);
/* A stream writer's bytes also go to fd, as they are written (a live
 * view reads the recording while it is kept in a file).  Call before
 * anything is written; fd stays the caller's. */
void pd_writer_tee(struct pd_writer *w, int fd);

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

/* perf record -z: from pd_writer_begin on, records go out zstd-compressed
 * (level 1 to 22) in COMPRESSED records, batch_bytes of them at most per
 * batch (a batch ends at each FINISHED_ROUND too), and the file carries
 * the COMPRESSED feature, whose mmap size (batch_bytes) tells readers the
 * most one compressed record inflates to.  Call before pd_writer_begin. */
int pd_writer_set_compression(struct pd_writer *w, int level, u32 batch_bytes);
/* Record bytes given to a compressing writer, and the bytes they took in
 * the file (0 and 0 without compression). */
void pd_writer_compressed(const struct pd_writer *w, u64 *in, u64 *out);

/* Writes the features and the final header (file mode), flushes and
 * closes.  Frees w in every case.  -1 with err_set() on error. */
int pd_writer_close(struct pd_writer *w);

/* Closes without finishing: for a failed recording.  In file mode the
 * header's data size is still written so what was captured can be read. */
void pd_writer_abort(struct pd_writer *w);

/* True when writing the pipe variant (path "-", pipe=true, or the path is
 * a FIFO or socket, where a header cannot be rewritten). */
bool pd_writer_is_pipe(const struct pd_writer *w);

/* ---- Features ----------------------------------------------------------
 * Each encodes one feature section; call before pd_writer_close (in pipe
 * mode they are emitted as HEADER_FEATURE records: before begin when
 * called before it, else at close).  Exceptions in pipe mode: tracing data
 * given after begin is streamed at once (later samples need it), and
 * build-ids go out as HEADER_BUILD_ID records.  Calling a feature again
 * replaces it, except build-ids, which accumulate. */
int pd_writer_feat_string(struct pd_writer *w, enum pd_feature f, const char *s);
/* A feature body already in perf's encoding (e.g. CLOCKID's u64). */
int pd_writer_feat_raw(struct pd_writer *w, enum pd_feature f,
		       const void *body, size_t len);
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
/* perf reads one per-CPU entry for each CPU NRCPUS counts as available:
 * set NRCPUS first and the entries are made to match (zeros past nr_cpus). */
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

/* ---- Reader --------------------------------------------------------------
 * Files (PERFILE2: header and features through a mapping, records by
 * pread) and streams (the pipe variant, by read), decoded into plain
 * structs and delivered in time order (FINISHED_ROUND, or a bounded
 * reorder window when a file has none).  Every size read from the input
 * is checked against what remains before it is used. */

/* One event (attr) of the file. */
struct pd_attr {
	struct perf_event_attr attr;   /* zero-extended to our struct size */
	char *name;                    /* from EVENT_DESC, else made up */
	u64 *ids;
	size_t nids;
	int index;                     /* position in the file */
	/* Decoding facts derived once from attr. */
	size_t id_trailer_size;        /* sample_id_all trailer bytes */
	int nr_user_regs, nr_intr_regs;
};

/* A decoded PERF_RECORD_SAMPLE: pointers refer into the record itself. */
struct pd_sample {
	u64 ip;
	u32 pid, tid;
	u64 time;
	u64 addr;
	u64 id, stream_id;
	u32 cpu;
	u64 period;
	u64 nr_callchain;
	const u64 *callchain;          /* PERF_CONTEXT_* markers included */
	u32 raw_size;
	const u8 *raw;
	/* PERF_SAMPLE_READ: the counter values, as read_format lays them out
	 * (pd_read_value gives each one's value and id). */
	u64 nr_read;
	const u64 *read;               /* the first value */
	u8 read_stride, read_id_at;    /* u64s from one value to the next; where
					  its id is after it (0: none) */
	/* PERF_SAMPLE_BRANCH_STACK: nr_branches entries of three u64s (from,
	 * to, flags: PD_BRANCH_* below), newest first. */
	u64 nr_branches;
	const u64 *branches;
	bool has_hw_idx;               /* branch_sample_type asked for HW_INDEX */
	u64 branch_hw_idx;
	u64 user_abi;
	const u64 *user_regs;          /* popcount(sample_regs_user) entries */
	u64 stack_size;                /* bytes copied */
	const u8 *stack;
	u64 stack_dyn_size;            /* bytes that were valid */
	u64 weight;
	u64 data_src;
	u64 transaction;
	u64 phys_addr;
	u64 aux_size;                  /* PERF_SAMPLE_AUX's bytes, skipped */
	u64 cgroup;
	u64 data_page_size, code_page_size;
	/* Where the parts pd_sample_rewrite replaces lie, as offsets from the
	 * record's start: the callchain (its nr field to the end of its
	 * entries) and the user state (the REGS_USER abi, or STACK_USER's size
	 * without REGS_USER, to the end of STACK_USER).  A part the attr does
	 * not sample is empty, at the place it would have. */
	u16 chain_off, chain_end, user_off, user_end;
};

/* A branch entry's flags word (perf_event.h's struct perf_branch_entry
 * bit fields, which are laid out from the low bit on little-endian). */
#define PD_BRANCH_MISPRED(f)   ((f) & 1)
#define PD_BRANCH_PREDICTED(f) (((f) >> 1) & 1)
#define PD_BRANCH_IN_TX(f)     (((f) >> 2) & 1)
#define PD_BRANCH_ABORT(f)     (((f) >> 3) & 1)
#define PD_BRANCH_CYCLES(f)    (((f) >> 4) & 0xffff)
#define PD_BRANCH_TYPE(f)      (((f) >> 20) & 0xf)
#define PD_BRANCH_NEW_TYPE(f)  (((f) >> 26) & 0xf)   /* behind type EXTEND_ABI */

/* A branch's type as perf names it (perf_event.h's perf_branch_type, and
 * perf_branch_type_new behind EXTEND_ABI); "" when unknown, as perf 6.1
 * prints it. */
const char *pd_branch_type_name(u64 flags);

/* Newer kernels' branch_sample_type bit: a u64 of event counts follows
 * the entries, one per entry (not in this machine's perf_event.h). */
#define PD_SAMPLE_BRANCH_COUNTERS (1ULL << 19)

/* The i-th counter value of a PERF_SAMPLE_READ sample (a group's values
 * in the group's order); false past the last.  *id is 0 without
 * PERF_FORMAT_ID. */
static inline bool pd_read_value(const struct pd_sample *s, u64 i, u64 *value, u64 *id)
{
	if (i >= s->nr_read)
		return false;
	const u64 *v = s->read + i * s->read_stride;
	*value = v[0];
	*id = s->read_id_at ? v[s->read_id_at] : 0;
	return true;
}

/* One record, decoded by type.  `s` holds the sample for SAMPLE records and
 * the sample_id fields (pid, tid, time, id, cpu) for the others. */
struct pd_event {
	u32 type;                      /* PERF_RECORD_* or PD_RECORD_* */
	u16 misc;
	u16 size;
	u64 offset;                    /* byte offset in the file/stream */
	const struct perf_event_header *raw;  /* valid until the next call */
	const struct pd_attr *attr;    /* NULL when the record names none */
	bool has_time;
	struct pd_sample s;
	union {
		struct { u32 pid, tid; const char *comm; bool exec; } comm;
		struct {
			u32 pid, tid;
			u64 start, len, pgoff;
			u32 maj, min;
			u64 ino;
			u32 prot, flags;
			u8 build_id_size;      /* 0 when none */
			const u8 *build_id;
			const char *filename;
		} mmap;                        /* MMAP and MMAP2 */
		struct { u32 pid, ppid, tid, ptid; u64 time; } task; /* FORK, EXIT */
		struct { u64 id, lost; } lost;
		struct { u64 lost; } lost_samples;
		struct { u64 time, id, stream_id; } throttle;
		struct { u32 pid, tid; bool out, preempt; } cswitch;
	} u;
};

struct pd_reader;

struct pd_reader_opts {
	bool unordered;                /* deliver in file order, no sorting */
	int fd;                        /* > 0: read the stream from this fd
					  (the reader closes it), not path */
	/* Deliver each FINISHED_ROUND (ordered reading), once the events it
	 * released are out, as an event of that type without a time: a live
	 * reader's chance to act when nothing else comes. */
	bool rounds;
	/* Parse the recording's tracing data (HEADER_TRACING_DATA) as the
	 * reader opens, for pd_reader_trace.  The parse forks (tracedata.c),
	 * which is safe only while the process runs one thread: so it is
	 * done here, before a view starts any, and refused after. */
	bool tracing;
	/* The input is this process's own live recording (rec_live_start):
	 * its tracing data comes from this kernel's tracefs, so it is parsed
	 * without the trial child, while the recording thread runs. */
	bool own_recording;
};

/* path "-" reads the pipe variant from stdin.  NULL with err_set(). */
struct pd_reader *pd_reader_open(const char *path, const struct pd_reader_opts *opts);
void pd_reader_close(struct pd_reader *r);

/* 1 with *ev filled, 0 at the end, -1 with err_set() naming the byte
 * offset and what was wrong.  Events before an error were delivered. */
int pd_reader_next(struct pd_reader *r, struct pd_event *ev);

size_t pd_reader_nattrs(const struct pd_reader *r);
const struct pd_attr *pd_reader_attr(const struct pd_reader *r, size_t i);
/* The event a kernel id belongs to (a PERF_SAMPLE_READ value's id), or
 * NULL when no attr lists it. */
const struct pd_attr *pd_reader_attr_of_id(const struct pd_reader *r, u64 id);

/* Feature data as read, or NULL (features arrive late in pipe mode). */
const char *pd_reader_string(const struct pd_reader *r, int feat);
/* Raw body of a feature section; NULL when absent. */
const void *pd_reader_feature(const struct pd_reader *r, int feat, size_t *len);

/* An event group (GROUP_DESC): attrs leader .. leader + nr_members - 1
 * in the file's order (as read: check them against pd_reader_nattrs);
 * name NULL for perf's unnamed groups. */
struct pd_group {
	char *name;
	u32 leader, nr_members;
};
size_t pd_reader_ngroups(const struct pd_reader *r);
const struct pd_group *pd_reader_group(const struct pd_reader *r, size_t i);

struct pd_reader_build_id {
	s32 pid;
	u16 cpumode;
	u8 size;
	u8 id[20];
	const char *filename;
};
size_t pd_reader_nbuild_ids(const struct pd_reader *r);
const struct pd_reader_build_id *pd_reader_build_id(const struct pd_reader *r, size_t i);

/* Facts about the input worth telling the user. */
struct pd_reader_stats {
	u64 data_size;
	u64 nr_samples, nr_lost_records, lost_samples;
	bool truncated;                /* header said less/more than was there */
	u64 reordered_late;            /* events that arrived after their slot */
	u64 nr_compressed;             /* COMPRESSED records inflated (perf record -z) */
	/* Records delivered whose type the reader does not decode (their
	 * bodies unread): how many, and the first types seen, each with its
	 * count (types past the last slot are in nr_undecoded only). */
	u64 nr_undecoded;
	struct { u32 type; u64 count; } undecoded[8];
	int nr_undecoded_types;
	/* What a newer perf wrote that this reader skips: feature sections
	 * past PD_FEAT_LAST_KNOWN (the first one's id), and events whose
	 * read_format has bits past this ABI's (their samples decode up to
	 * the counter values only: ip, pid, tid, time, period). */
	u32 unknown_features;
	int first_unknown_feature;
	u32 unknown_read_formats;
	/* Feature sections the header's table places outside the file (or
	 * whose table entry is cut off): skipped; the first one's id and the
	 * byte offset of its table entry. */
	u32 damaged_features;
	int first_damaged_feature;
	u64 first_damaged_feature_offset;
	/* Records left out for a time outside the recording's span (the
	 * header's first and last sample times; a side-band record more than
	 * an hour, and the span's length, past the last; in a stream, a time
	 * an hour past every earlier one): damage, as one changed byte makes.
	 * How many, and the first's byte offset. */
	u64 bad_times;
	u64 first_bad_time_offset;
};
const struct pd_reader_stats *pd_reader_stats(const struct pd_reader *r);
bool pd_reader_is_pipe(const struct pd_reader *r);
/* Bytes of record data consumed so far; *total gets the data size (0 for
 * a stream, whose size is unknown). */
u64 pd_reader_position(const struct pd_reader *r, u64 *total);

/* ---- One record outside a reader --------------------------------------
 * The recorder decodes what it drains with the reader's own code. */

/* Fills a's decoding facts from attr (name NULL, no ids, index 0). */
void pd_attr_init(struct pd_attr *a, const struct perf_event_attr *attr);

/* Decodes one whole record at rec (8-byte aligned, header's size bytes)
 * of attr a (NULL: a record that names no attr) into ev; 0, or -1 when
 * malformed.  ev->offset is 0; pointers refer into rec. */
int pd_decode(const struct pd_attr *a, const void *rec, struct pd_event *ev);

/* How pd_sample_rewrite changes a SAMPLE record. */
struct pd_rewrite {
	const u64 *user;      /* the user part of the callchain (the sampled ip,
	                         then return addresses), written after a
	                         PERF_CONTEXT_USER marker behind the recorded
	                         kernel part; NULL keeps the chain as recorded */
	size_t nuser;
	bool keep_user_state; /* keep the user regs and the stack copy, the
	                         copy trimmed to the bytes the kernel really
	                         copied (dyn_size, rounded up to 8); false
	                         empties both: regs abi 0 (no regs follow),
	                         stack size 0 (no data, no dyn_size) */
};

/* Writes into out (cap bytes) the record rec (decoded into s by pd_decode
 * with attr a) changed as rw says; every other field is copied as is.
 * The kernel part is every entry of the recorded chain before a
 * PERF_CONTEXT_USER marker (a user part recorded after one is replaced);
 * an attr without CALLCHAIN ignores rw->user.  out must not overlap rec.
 * Returns the new record's size, 0 when it would not fit cap or a
 * record's 65535-byte limit (or when s's offsets do not lie inside rec). */
size_t pd_sample_rewrite(const struct pd_attr *a, const void *rec, const struct pd_sample *s,
			 const struct pd_rewrite *rw, void *out, size_t cap);

/* ---- Tracepoint sets --------------------------------------------------------
 * The tracepoints the recorder records for a view and the view decodes,
 * listed once (tracepoints.c), each set in its enum's order. */
enum pd_tp_set { PD_TP_BLOCK, PD_TP_SCHED };

/* record --block (those the kernel has), ember bio and script --blkparse. */
enum pd_tp_block {
	PD_TP_BIO_QUEUE, PD_TP_GETRQ, PD_TP_RQ_INSERT, PD_TP_RQ_ISSUE, PD_TP_RQ_COMPLETE,
	PD_TP_RQ_REQUEUE, PD_TP_RQ_MERGE, PD_TP_BIO_BACKMERGE, PD_TP_BIO_FRONTMERGE,
	PD_TP_SPLIT, PD_TP_BIO_REMAP, PD_TP_RQ_REMAP, PD_TP_PLUG, PD_TP_UNPLUG,
	PD_TP_RQ_ERROR, PD_TP_BLOCK_NR
};

/* record --off-cpu (the wakeups from its level "wakeups" on), ember
 * offcpu and sched lat. */
enum pd_tp_sched {
	PD_TP_SCHED_SWITCH, PD_TP_SCHED_WAKEUP, PD_TP_SCHED_WAKEUP_NEW, PD_TP_SCHED_NR
};

/* A set's names ("block:block_bio_queue"), indexed by its enum; *n gets
 * how many. */
const char *const *pd_tracepoints(enum pd_tp_set set, int *n);

/* ---- Tracepoints -----------------------------------------------------------
 * The recorded tracing data (HEADER_TRACING_DATA) parsed, so tracepoint
 * samples can be named and their raw fields decoded offline.  A reader
 * opened with pd_reader_opts.tracing parses it as it opens. */
struct pd_trace;

/* The reader's parsed tracing data: 0 with *t, which the reader owns
 * (NULL when the recording has none, a stream's came after its first
 * round, or opts.tracing was not set); -1 with err_set() when it is
 * malformed or was not parsed because the process ran other threads when
 * the reader opened. */
int pd_reader_trace(const struct pd_reader *r, struct pd_trace **t);

/* The reader's tracing data (as pd_reader_trace) and the attrs of the
 * named tracepoints found: for each names[k] (NULL ones skipped), ids[k]
 * is its id and have[k] says it was recorded.  0, or -1 with err_set()
 * as pd_reader_trace. */
int pd_trace_open_ids(struct pd_reader *r, struct pd_trace **t, const char *const *names,
		      int n, u64 *ids, bool *have);

/* "sched:sched_switch" for a tracepoint id (attr.config), or NULL. */
const char *pd_trace_name(struct pd_trace *t, u64 id);

/* Appends the event's fields as perf script prints them
 * ("prev_comm=a prev_pid=1 ... ==> next_comm=b ...").  -1 when unknown. */
int pd_trace_format(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		    struct strbuf *out);

/* The value of a numeric field by name; -1 with err_set() when absent. */
int pd_trace_field(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		   const char *field, u64 *value);

/* A fixed-size char array field ("rwbs", "comm") copied into buf and
 * NUL-terminated (cut to bufsize - 1); -1 with err_set() when absent. */
int pd_trace_field_str(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		       const char *field, char *buf, size_t bufsize);

/* ---- blktrace ---------------------------------------------------------------
 * blk_io_trace records from classic blktrace per-CPU files (DEV.blktrace.N)
 * or from the kernel's `blk` tracer with options/bin=1 (ftrace-framed). */

/* Action bits (low 16: what happened; high 16: categories). */
enum {
	PD_BLK_TA_QUEUE = 1, PD_BLK_TA_BACKMERGE, PD_BLK_TA_FRONTMERGE, PD_BLK_TA_GETRQ,
	PD_BLK_TA_SLEEPRQ, PD_BLK_TA_REQUEUE, PD_BLK_TA_ISSUE, PD_BLK_TA_COMPLETE,
	PD_BLK_TA_PLUG, PD_BLK_TA_UNPLUG_IO, PD_BLK_TA_UNPLUG_TIMER, PD_BLK_TA_INSERT,
	PD_BLK_TA_SPLIT, PD_BLK_TA_BOUNCE, PD_BLK_TA_REMAP, PD_BLK_TA_ABORT,
	PD_BLK_TA_DRV_DATA,
	PD_BLK_TA_CGROUP = 1 << 8,
};
enum {
	PD_BLK_TC_READ = 1 << 0, PD_BLK_TC_WRITE = 1 << 1, PD_BLK_TC_FLUSH = 1 << 2,
	PD_BLK_TC_SYNC = 1 << 3, PD_BLK_TC_QUEUE = 1 << 4, PD_BLK_TC_REQUEUE = 1 << 5,
	PD_BLK_TC_ISSUE = 1 << 6, PD_BLK_TC_COMPLETE = 1 << 7, PD_BLK_TC_FS = 1 << 8,
	PD_BLK_TC_PC = 1 << 9, PD_BLK_TC_NOTIFY = 1 << 10, PD_BLK_TC_AHEAD = 1 << 11,
	PD_BLK_TC_META = 1 << 12, PD_BLK_TC_DISCARD = 1 << 13, PD_BLK_TC_DRV_DATA = 1 << 14,
	PD_BLK_TC_FUA = 1 << 15,
};
#define PD_BLK_ACT(action) ((action) & 0xffu)
#define PD_BLK_CAT(action) ((action) >> 16)
/* Notify actions (category NOTIFY): the payload is a comm, a clock, text. */
enum { PD_BLK_TN_PROCESS = 0, PD_BLK_TN_TIMESTAMP = 1, PD_BLK_TN_MESSAGE = 2 };

struct pd_blk_rec {
	u64 time;           /* ns (trace clock; ftrace header's for blk tracer) */
	u64 sector;
	u32 sequence, bytes, action, pid, device, cpu;
	u16 error, pdu_len;
	u8 version;
	const u8 *pdu;      /* valid until pd_blk_close() */
	int file;           /* which input file */
	u64 offset;         /* byte offset of the record in that file */
};

struct pd_blk_reader;
/* PATH, or PATH.blktrace.0, .1, ...: the files are merged by time as
 * they are read (each is in time order, as blktrace writes them).  NULL
 * with err_set() naming file and offset. */
struct pd_blk_reader *pd_blk_open(const char *path);
/* 1 with the next record, 0 at the end, -1 with err_set() naming the file
 * and offset of a damaged record (the records before it were delivered). */
int pd_blk_next(struct pd_blk_reader *r, struct pd_blk_rec *out);
void pd_blk_close(struct pd_blk_reader *r);
/* Every record in file order (per-CPU files one after another), for
 * checking: fn returns 0 to go on.  -1 with err_set() naming the file and
 * offset at the first record that cannot be framed (after the ones before
 * it were delivered), or when fn returned -1. */
typedef int (*pd_blk_walk_fn)(void *ctx, const struct pd_blk_rec *r, const char *file);
int pd_blk_walk(const char *path, pd_blk_walk_fn fn, void *ctx);
/* Whether PATH is (or names per-CPU files of) blktrace data. */
bool pd_blk_probe(const char *path);
/* Payload decoders; -1 when the payload is too short. */
int pd_blk_remap(const struct pd_blk_rec *r, u32 *dev_from, u32 *dev_to, u64 *sector_from);
int pd_blk_split(const struct pd_blk_rec *r, u64 *new_sector);
int pd_blk_comm(const struct pd_blk_rec *r, char *buf, size_t size);

/* --- Cutting a stream that arrives in pieces (streamcut.c) --------------
 * Follows the records of a pipe-variant stream as its bytes go by, keeping
 * none of them, to say where a copy cut short stays readable: after the
 * last whole record, or better after the last FINISHED_ROUND (the reader
 * then has every event up to that round).  For ember serve's files. */
struct pd_cut {
	u64 off;               /* stream bytes seen */
	u64 record_end;        /* after the last whole record (0: no header yet) */
	u64 round_end;         /* after the last FINISHED_ROUND, or 0 */
	u64 skip;              /* bytes of the current record still to pass */
	u8 head[16];           /* the current record's first bytes */
	u32 head_len;
	u32 type;
	u16 size;
	int state;
};
void pd_cut_init(struct pd_cut *c);
/* 0, or -1 with err_set() naming the stream offset where it stopped being
 * a perf stream (then record_end and round_end still say where to cut). */
int pd_cut_feed(struct pd_cut *c, const void *buf, size_t n);
/* Whether the bytes so far end on a record boundary. */
bool pd_cut_at_boundary(const struct pd_cut *c);
/* Where to cut: the last round's end, else the last whole record's. */
u64 pd_cut_safe_end(const struct pd_cut *c);

/* ---- ember verify (verify.c) ------------------------------------------- */

/* Writes the problems of a perf.data file or blktrace capture to out, a
 * line each with its byte offset (the first 50, then how many more), and
 * a last line with the record and problem counts; *problems says how
 * many.  -1 with err_set() when path is neither. */
int pd_verify(const char *path, FILE *out, u64 *problems);

#endif
