/* record-internal.h - what the files of record/ share: the options, the
 * session (events, rings, child, writer) and the pieces each file provides;
 * what the command sees of them is in record.h.  Only record/ and its unit
 * tests include this. */
#ifndef EMBER_RECORD_INTERNAL_H
#define EMBER_RECORD_INTERNAL_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>

#include "common/child.h"
#include "common/common.h"
#include "format/format.h"
#include "pmc/pmc.h"
#include "record/record.h"
#include "symbols/symbols.h"

#define REC_DEFAULT_FREQ 4000
#define REC_DEFAULT_STACK 8192     /* --call-graph dwarf: perf's */
/* -g unwinds while recording, so the copy never reaches the file: it is
 * bigger, for deep interpreter stacks (each Python call made through C
 * takes 500 to 700 bytes of the C stack: a chain 30 deep needs 32 KB,
 * 10 deep 8 KB; python3's start-up imports go deeper than 16 KB, and 0.7%
 * of a 2 s script's samples ended in a 16 KB copy, none in 32 KB).  The
 * kernel copies only up to the end of the stack's mapping, so a shallow
 * stack costs no more; each doubling from 8 KB cost a thread spinning
 * under -F 4999 about one point of throughput more (59.5k, 58.7k, 57.3k
 * units/s at 8, 16 and 32 KB against 69k unrecorded), a fifth of that at
 * -F 999. */
#define REC_ONLINE_STACK 32768
/* ... but each copy reserves its full size in the ring, and a 4 MiB ring
 * of 32 KB copies at -F 4999 is full in 25 ms: a drain held up that long
 * on a busy machine lost 1728 of 18022 samples, and at -F 4999 with -m
 * 4096 (16 MiB, 102 ms) the sanitized drain fell behind.  So the copy is
 * 32 KB only where the ring holds REC_ONLINE_RING_MS of them at the asked
 * frequency (-F 1024 and below with record's 4 MiB rings, -F 256 with a
 * live view's 1 MiB), and 16 KB otherwise, for -c periods (no rate known)
 * and for tracepoints (the kernel's rate: context switches by the hundred
 * thousand a second). */
#define REC_ONLINE_FAST_STACK 16384
#define REC_ONLINE_RING_MS 125
/* Registers perf samples for DWARF unwinding on x86_64: all of the user
 * register set except the segment registers DS, ES, FS and GS. */
#define REC_X86_64_REGS_USER 0xff0fffULL

/* The user-stack snapshot -g takes for leaf-frame repair: enough for a
 * leaf's saved registers and small locals above its return address. */
#define REC_LEAF_STACK 512
/* ... and for the scheduler's tracepoints under --off-cpu, where the leaf
 * is a libc syscall wrapper: the largest of those (the cancellable path
 * of read, write, poll...) keeps its return address 48 bytes above sp.
 * Switches come by the hundred thousand a second: the less the better. */
#define REC_OFFCPU_LEAF_STACK 128






/* probes.c: adds a uprobe at offset of the file at path to the run's
 * group as event (a second call with the same event and fetch adds a
 * probe point to it), the group begun on first use: 0, or -1 with
 * err_set() (no tracefs, no permission, a refused probe).  Its name as
 * -e takes it ("ember_PID:EVENT") into out. */
int rec_probes_add(struct rec_probes *p, const char *event, const char *path, u64 offset,
		   const char *fetch);
void rec_probes_event_name(const struct rec_probes *p, const char *event, char *out, size_t cap);

/* execargs.c: adds --tool execsnoop's event, its name into name: 0, or
 * -1 with err_set() saying why not (no tracefs or permission, no
 * interpreter). */
int rec_execargs_create(struct rec_probes *p, char *name, size_t cap);

/* strings.c: makes the path probes at the sites of the syscalls nrs (n
 * of them) in the C libraries and loaders o's target maps (ember's own
 * always, which a command gets), and puts their events' names, comma-
 * separated, into names: 0, or -1 with err_set() saying why none could
 * be made (the tool then reads stack copies alone). */
int rec_strings_create(struct rec_probes *p, const struct rec_opts *o, const int *nrs,
		       size_t n, char *names, size_t cap);

/* One mmap'd ring buffer: the metadata page then 2^n data pages. */
struct rec_ring {
	int cpu;
	int fd;                    /* the event that owns the mapping */
	void *base;
	size_t map_len;
	u8 *data;
	u64 mask;                  /* data size - 1 */
	u64 lost;                  /* samples this CPU's ring dropped */
	u64 head;                  /* where this pass drains to */
};

/* Files seen in MMAP2 records (kernel-supplied or synthesized), for the
 * build-id feature.  Keyed by a hash of the name. */
struct rec_bid {
	char *filename;
	u8 id[20];
	u8 size;                   /* 0: not known yet, read from the file */
	int fd;                    /* the file as mapped, or -1: its path */
	bool tried;                /* fd was looked for */
};
/* Where a file was seen mapped, to open it as that process sees it. */
struct rec_bid_where {
	u32 pid;
	u64 start, end;
	u32 maj, min;
	u64 ino;
};
struct rec_bids {
	VEC(struct rec_bid) v;
	int nfds, max_fds;         /* files held open, and the bound */
	bool read_now;             /* no build-id cache to fill: a file's id is
				      read when it is opened, and it is closed */
	bool kernel_only;          /* a live view with no output file: the
				      list goes only to the stream's end,
				      where no view reads it, and a long
				      session would grow it by one entry per
				      new binary; user files are not listed */
	struct u64map index;       /* name hash -> index + 1 */
	pthread_mutex_t lock;      /* node threads insert concurrently */
};

/* A NUMA node's share of the rings and the thread that drains them.  With
 * one node the main thread does this itself. */
struct rec_node {
	struct rec_session *s;
	int node;
	struct rec_ring **rings;
	int nrings;
	struct pollfd *pfd;        /* every event fd of these rings, then */
	int npfd;                  /* the control fds */
	int nevent_pfd;
	u8 *scratch;               /* one record copied whole when wrapped */
	struct rec_tally tally;
	pthread_t thread;
	bool thread_started;
	bool passed;               /* drained since the last FINISHED_ROUND */
	int result;                /* -1 when this node's draining failed */
	char err[512];             /* its message, as err_msg is per thread */
};

/* One parsed event and the descriptors opened for it. */
struct rec_evsel {
	struct pmc_event *ev;
	struct perf_event_attr attr;
	VEC(u64) ids;
};

struct rec_session {
	const struct rec_opts *o;
	bool no_cache;             /* -N, or an output thrown away (/dev/null) */
	struct rec_evsel *evsels;
	int nevsels;
	int *cpus, ncpus;          /* where events open and rings live */
	pid_t *threads;            /* one -1 entry for system-wide */
	int nthreads;
	int *fds;                  /* [cpu][thread][evsel], -1 when closed */
	struct rec_ring *rings;    /* one per entry of cpus */
	struct rec_node *nodes;
	int nnodes;
	int *target_pidfds;        /* -p/-t: stop when all have exited */
	int ntarget_pidfds;
	struct held_child child;
	struct pd_writer *w;
	pthread_mutex_t wlock;     /* taken only when several nodes write */
	int round_passes;          /* nodes that drained since the last round */
	bool round_had_data;
	struct rec_bids bids;
	bool kernel_mapped;        /* kallsyms showed addresses: worth caching */
	struct rec_online *online; /* -g: unwinds user stacks in the drain;
				      dwarf: trims the stack copies */
	char *old_renamed;         /* ember.data.old, restored on early error */
	bool output_created;
	VEC(char *) notes;         /* warnings for the command to print */
	enum rec_fail fail;
	bool started;              /* the loop began: keep what was written */
	struct rec_tally total;
	volatile sig_atomic_t *stop;
	sigset_t poll_mask;        /* signal mask while waiting in ppoll */
	int stop_efd;              /* eventfd telling node threads to stop */
};

/* 0 when NAME is a tool, -1 with err_set() listing the tools. */
int rec_tool_check(const char *name);
/* A live tool (live.c), on its recording thread: the tool's tracepoints
 * leave out this thread's hits as well as the process's main thread's.
 * 0, or -1 with err_set(). */
int rec_tool_exclude_self(struct rec_session *s);
void rec_note(struct rec_session *s, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* events.c */
int rec_events_setup(struct rec_session *s);
int rec_events_open(struct rec_session *s);
/* Enables the events opened disabled to wait for the synthesis. */
int rec_events_enable(struct rec_session *s);
void rec_events_close(struct rec_session *s);
int *rec_fd_slot(struct rec_session *s, int ci, int ti, int ei);

/* ring.c */
int rec_ring_map(struct rec_ring *r, int fd, int cpu, u32 pages);
void rec_ring_unmap(struct rec_ring *r);
/* Called for each MMAP2 and FORK record, at its ring position. */
typedef void (*rec_walk_fn)(void *ctx, u64 pos, u16 size, u32 type);
void rec_tally_walk(const u8 *data, u64 mask, u64 tail, u64 head,
		    struct rec_tally *t, rec_walk_fn on_sideband, void *ctx);
/* A pass over a node's rings is two steps: each ring's side-band first
 * (up to a head taken now), so the maps hold every mmap before samples
 * of any CPU are unwound; then each ring's records into the file. */
void rec_ring_sideband(struct rec_ring *r, struct rec_node *n);
int rec_ring_drain(struct rec_ring *r, struct rec_node *n, bool *had_data);

/* loop.c */
int rec_nodes_setup(struct rec_session *s);
void rec_nodes_free(struct rec_session *s);
int rec_loop(struct rec_session *s);
int rec_drain_all(struct rec_session *s);

/* synth.c */
int rec_synth_kernel(struct rec_session *s);
int rec_synth_procs(struct rec_session *s);
struct rec_maps_line {
	u64 start, end, pgoff, ino;
	u32 maj, min, prot, flags;
	const char *name;          /* points into the parsed line */
};
int rec_parse_maps_line(char *line, struct rec_maps_line *m);
int rec_kernel_text(const char *kallsyms_head, const char *iomem,
		    u64 *start, u64 *len);
int rec_threads_of(pid_t pid, pid_t **tids, int *n);

/* buildids.c */
void rec_bids_init(struct rec_bids *b);
void rec_bids_free(struct rec_bids *b);
void rec_bids_add(struct rec_bids *b, const char *name, size_t namelen,
		  const u8 *id, u8 size, const struct rec_bid_where *where);
void rec_bids_note_mmap2(struct rec_bids *b, const u8 *rec, size_t len);
int rec_bids_write(struct rec_bids *b, struct pd_writer *w);
/* cache.c: the recorded kernel's kallsyms and the listed files into the
 * build-id cache (~/.debug), as perf record does; problems become notes. */
void rec_cache_fill(struct rec_session *s);

/* online.c: a mapped file opened as its process sees it (through
 * /proc/PID/map_files, else /proc/PID/root/PATH, else PATH), and only
 * when it is the inode mapped; -1 otherwise. */
int rec_open_mapped(const struct sym_map *m, u32 pid);

/* online.c: unwinding user stacks in the drain (-g). */
struct rec_online;
/* A mapping, from an MMAP2 record or /proc/PID/maps. */
struct rec_online_map {
	u32 pid;
	u64 start, len, pgoff;
	u32 maj, min, prot;
	u64 ino;
	const char *path;
	u64 time;                  /* of the record; 0 for /proc at start */
};
/* With unwind false (--call-graph dwarf) samples are only trimmed.  NULL
 * with err_set() when the unwinder cannot start. */
struct rec_online *rec_online_new(const struct rec_session *s, bool unwind);
void rec_online_free(struct rec_online *o);
void rec_online_add_map(struct rec_online *o, const struct rec_online_map *m);
/* A side-band record drained (whole, contiguous): MMAP2, FORK, COMM
 * (exec) and EXIT update the maps, others are ignored.  They are kept
 * until rec_online_sideband_flush, at the end of the pass's side-band
 * reading, and applied in time order across the rings (the first sample
 * or the pass's end applies them too). */
void rec_online_sideband(struct rec_online *o, const void *rec);
void rec_online_sideband_flush(struct rec_online *o);
/* The end of a drain pass of node (of nnodes): lets go of the maps of
 * processes gone long enough before it, and of the files no maps name. */
void rec_online_pass_end(struct rec_online *o, int node, int nnodes);
/* The sample record rec (whole, contiguous) as it is to be written: its
 * user stack unwound into the callchain, or with defer the raw copy
 * trimmed.  Returns the new record's size with *out pointing at it (valid
 * until the next call), or 0 when rec is to be written as it is. */
size_t rec_online_sample(struct rec_online *o, const void *rec, bool defer, const void **out);
const struct rec_online_stats *rec_online_stats(const struct rec_online *o);
/* Looks for the processes kept; ones found gone at two looks running are
 * let go of as if their EXIT had come.  rec_online_pass_end calls it
 * every few seconds; tests call it directly. */
void rec_online_check_alive(struct rec_online *o);
/* The maps a sample of pid taken at time would be unwound with (NULL:
 * none), for tests. */
const struct sym_maps *rec_online_maps_at(struct rec_online *o, u32 pid, u64 time);

/* machine.c */
int rec_write_machine_features(struct rec_session *s);
int rec_write_tracing_data(struct rec_session *s);
int rec_cpuid_from_cpuinfo(const char *cpuinfo, char *out, size_t cap);
int rec_cpudesc_from_cpuinfo(const char *cpuinfo, char *out, size_t cap);

#endif
