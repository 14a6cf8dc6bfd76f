/* replay.h - replays a recording in time order:
 * keeps threads, their comms and memory maps, turns each sample into
 * resolved frames, and hands samples and events to a sink (one analysis).
 * A new analysis is a sink; it never parses records itself. */
#ifndef EMBER_REPLAY_H
#define EMBER_REPLAY_H

#include "common/common.h"
#include "format/format.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"

#define RP_MAX_FRAMES 512

struct rp_thread {
	u32 pid, tid;
	char comm[64];              /* /proc names kworkers past 16 bytes */
	u32 comm_changes;          /* changed on every COMM, and unique to the
				      thread: lets sinks cache by (thread, it) */
	struct sym_maps *maps;     /* the process's, shared by its threads */
	bool exited;
	u64 exit_round;            /* live: the round its exit came in */
	u64 missing_since;         /* live: found gone with no EXIT record, by
				      this recording time (0: not) */
};

/* One resolved frame. dso and sym may be NULL (unknown). */
struct rp_frame {
	u64 ip;
	u64 addr;                  /* file address within dso (ip if no dso) */
	u64 offset;                /* file offset: ip - map start + pgoff, as
				      perf shows unresolved user addresses
				      (ip when there is no map) */
	struct sym_dso *dso;
	const struct sym *sym;
	const char *file;          /* a kept frame's (rp_place_frame): its
				      file's path, dso being NULL then; NULL
				      otherwise */
	bool kernel;
	bool pending;              /* kernel frame left for rp_resolve() */
	bool inlined;              /* sym is a "NAME (inlined)" symbol (perf
				      names no file for those) */
	bool inline_scope;         /* ... and a function inlined at ip, not
				      the machine frame's own function (self
				      time goes to the latter, as in perf) */
	u8 inline_depth;           /* its place in the inline chain at ip,
				      0 the innermost (for its source line) */
};

struct rp_sample {
	const struct pd_event *ev;
	const struct pd_sample *s;
	const struct pd_attr *attr;
	struct rp_thread *thread;
	const struct rp_frame *frames;  /* leaf first */
	int nframes;
	bool chain_dropped;        /* a damaged callchain: only the ip is left */
	/* With rp_opts.branches: each branch entry's source and target
	 * resolved (from, to, from, to ...), newest first. */
	const struct rp_frame *branches;
	int nbranches;
};

/* The analysis: callbacks the replay drives.  Any may be NULL.  A negative
 * return stops the replay with that error (err_set by the sink). */
struct rp_sink {
	void *ctx;
	int (*sample)(void *ctx, const struct rp_sample *s);
	int (*event)(void *ctx, const struct pd_event *ev, const struct rp_thread *t);
	/* With rp_opts.interval_ns: the end of an interval, at recording time
	 * `end` (ns); a view prints what the interval gathered and resets.
	 * Called for every interval an event passes the end of (empty ones
	 * too), and once more with last set when the input ends, for what
	 * came after the last boundary. */
	int (*tick)(void *ctx, u64 end, bool last);
	int (*finish)(void *ctx);
	/* With rp_opts.live: called at each round of the stream (a live
	 * recording writes one every 100 ms, events or not), after any tick
	 * it brought: for keys, screens and stopping. */
	int (*round)(void *ctx);
	/* With rp_opts.release_files: the files no process maps are about to
	 * be released; the sink drops every dso and sym pointer it holds
	 * (keeping what it needs as its own: struct rp_places). */
	int (*forget_files)(void *ctx);
};

/* Which samples reach the sink. */
struct rp_filter {
	const char *comms;          /* comma list, or NULL */
	pid_t *pids; int npids;
	pid_t *tids; int ntids;
	int *cpus; int ncpus;
	u64 time_start, time_end;   /* ns; end 0 = open */
};

struct rp_opts {
	const char *input;          /* path, "-" for stdin */
	/* Called now and then with the bytes read and the total (big files
	 * only); commands set it with rp_progress_if_tty (cmd/). */
	void (*progress)(u64 done, u64 total);
	bool callchains;            /* resolve whole chains, not only the ip */
	bool branches;              /* resolve the branch stacks' addresses */
	/* Leave kernel frames unresolved (pending) for the sink to resolve
	 * later with rp_resolve(), while kallsyms loads on another thread:
	 * for sinks that aggregate before they need names. */
	bool defer_kernel;
	/* The view decodes tracepoints: the reader parses the tracing data as
	 * rp_open opens it (pd_reader_opts.tracing), before rp_run starts the
	 * symbol threads; the view takes it from rp_reader (pd_reader_trace). */
	bool tracing;
	struct sym_opts sym;
	struct rp_filter filter;
	/* User stacks: the DWARF unwinder for --call-graph dwarf files, and
	 * whether ember's own -g chains are shown better than perf shows them:
	 * a frameless leaf's caller restored in frame-pointer chains, inline
	 * frames in chains unwound while recording (report does by default;
	 * views compared line by line with perf's do not). */
	enum unw_backend unwinder;   /* UNW_BACKEND_DEFAULT unless set */
	bool unwinder_set;
	bool leaf_fix;
	bool no_inline;              /* one frame per machine frame */
	/* Intervals (--interval): sink.tick at each multiple of this many ns
	 * of recording time after the first timed event; 0 = none. */
	u64 interval_ns;
	/* A live recording (record.h's rec_live_*): its stream read from
	 * input_fd (> 0; the replay closes it).  Intervals then also end by
	 * the clock at each round, when no event comes to end them, and the
	 * threads and maps of exited processes are released as the replay
	 * goes (sinks then must not keep rp_thread pointers past a round). */
	bool live;
	int input_fd;
	bool live_keep_threads;     /* live, but a sink keeps thread pointers
				      (exited threads stay; their maps go) */
	/* The sink keeps no frame's dso or sym (nor their names) past a
	 * tick it returned from, or past its forget_files callback: its
	 * tables begin anew each interval, or it copies what it keeps.
	 * After each tick but the last, and live without intervals at a
	 * round at most once a second, the replay then releases the files
	 * no process maps any more (symbols' sym_ctx_release), so a long
	 * live session stays bounded. */
	bool release_files;
};

/* What the replay saw, for headers and warnings. */
struct rp_summary {
	u64 samples, samples_shown, lost;
	bool truncated;
	bool input_error;           /* the input ended with an error */
	char error[512];
	u64 sym_mismatches;
	struct pd_reader_stats input;  /* the reader's counts (undecoded records) */
	/* Files frames fell in that were missing or not as recorded: how
	 * many, and the first few names, comma-separated. */
	u64 nmissing, nmismatched, ndeleted;
	char missing[512], mismatched[512], deleted[512];
	struct sym_kernel_info kernel;   /* whose kallsyms named the kernel */
	u64 released_threads, released_maps;  /* live: of exited processes */
	u64 vanished_threads;       /* live: threads found gone whose EXIT
				      record never came (a ring overflowed) */
	u64 released_files;         /* rp_opts.release_files: files' symbols */
	/* Intervals: runs of EMPTY_RUN_MIN or more empty intervals skipped
	 * (not handed to the sink), how many in all, and the longest run's
	 * first start and last end (ns, recording time). */
	struct empty_runs empty;
	u64 threads_now;            /* live: threads kept at the last round */
	bool live;                  /* rp_opts.live: a live view's recording */
	struct unw_stats unwind;    /* DWARF unwinding and leaf repair */
};

struct replay;

/* Opens the input; NULL with err_set(). */
struct replay *rp_open(const struct rp_opts *opts);
/* Whether any event of the recording has callchains. */
bool rp_has_callchains(struct replay *rp);
/* Whether to resolve the samples' branch entries (rp_sample.branches). */
void rp_set_branches(struct replay *rp, bool on);
/* Whether to resolve whole callchains (known only once the attrs are). */
void rp_set_callchains(struct replay *rp, bool on);
/* Whether the files no process maps are released at ticks
 * (rp_opts.release_files). */
void rp_set_release_files(struct replay *rp, bool on);
/* Whether the sink gets ticks (rp_opts.interval_ns). */
bool rp_interval(const struct replay *rp);
/* The reader, for attrs and header facts. */
struct pd_reader *rp_reader(struct replay *rp);
/* Drives the sink over every event.  Returns 0, or -1 when the sink failed
 * (err_set).  An input error after some events is not fatal here: it is in
 * the summary (input_error), so callers can show the partial result. */
int rp_run(struct replay *rp, struct rp_sink *sink);
const struct rp_summary *rp_summary(struct replay *rp);
void rp_close(struct replay *rp);

/* ---- The filter layer (filter.c) ------------------------------------------
 * One test for every view: the replay applies it to samples; a view that
 * measures its own events (off-CPU spans, wakeups, I/Os, tool events)
 * applies it to what it counts, with the task, CPU and time that thing
 * belongs to.  A NULL filter passes everything. */

/* Id among the n ids of a list of rp_filter (CPUs, or pids and tids:
 * pid_t is int in Linux, and the compiler says so should it not be); comm
 * among the names of a comma list. */
bool rp_id_listed(const int *ids, int n, u32 id);
bool rp_comm_listed(const char *list, const char *comm);
/* --pid, --tid and --comm (comm NULL: ""). */
bool rp_filter_task(const struct rp_filter *f, u32 pid, u32 tid, const char *comm);
/* --cpu: a cpu < 0 (unknown) passes only when no CPU list is given. */
bool rp_filter_cpu(const struct rp_filter *f, int cpu);
/* --time: an instant inside the window (its ends included). */
bool rp_filter_time(const struct rp_filter *f, u64 time);
/* --time for spans: clips [*start, *end] to the window; false when
 * nothing of it is left. */
bool rp_filter_clip(const struct rp_filter *f, u64 *start, u64 *end);
/* All five at once, for one thing at one instant. */
bool rp_filter_pass(const struct rp_filter *f, u32 pid, u32 tid, const char *comm,
		    int cpu, u64 time);
/* Which filters are set, and a view's refusal of those it cannot honour:
 * -1 with err_set naming the option and the view ("--cpu: sched lat cannot
 * filter by CPU; leave --cpu out"), 0 when every set one is honoured. */
enum {
	RP_FILTER_PID = 1, RP_FILTER_TID = 2, RP_FILTER_COMM = 4,
	RP_FILTER_CPU = 8, RP_FILTER_TIME = 16,
	RP_FILTER_ALL = 31,
};
unsigned rp_filter_used(const struct rp_filter *f);
int rp_filter_refuse(const struct rp_filter *f, unsigned honoured, const char *view);

/* "file:line" of a frame's address from its file's DWARF (looked up once
 * per address), or NULL when unknown. */
const char *rp_srcline(struct replay *rp, const struct rp_frame *f);

/* The recording's build-id list entry for its kernel, or NULL. */
const struct pd_reader_build_id *rp_kernel_build_id(struct replay *rp);

/* ---- Places (places.c): a view's own records of files and symbols ---- */

/* Where frames fall, as a view keeps them past the release of files
 * (rp_opts.release_files): the file's names and a copy of the symbol,
 * strings interned, one record per (path, file, symbol name, start,
 * size), so two loadings of one file give one place.  Records never move
 * and live as long as the rp_places. */
struct rp_place {
	const char *path;          /* sym_dso_path; NULL: no file */
	const char *file;          /* sym_dso_short (the dso column); NULL: none */
	struct sym sym;            /* name NULL: no symbol */
	u32 id;                    /* 0, 1, ... in order of making */
};
struct rp_place_ptr {
	const struct sym_dso *dso;
	const struct sym *sym;
	u32 id;
};
struct rp_places {
	VEC(struct rp_place *) v;      /* by id */
	struct u64map by_name;         /* names' hash -> id + 1 (probing) */
	struct u64map by_pointer;      /* pointers' hash -> ptrs index + 1 */
	VEC(struct rp_place_ptr) ptrs; /* the pointers seen since the last forget */
	struct u64map strings;         /* text hash -> interned copy */
	VEC(char *) string_list;
};
void rp_places_init(struct rp_places *p);
void rp_places_free(struct rp_places *p);
/* One copy per text, for as long as p: equal texts, equal pointers. */
const char *rp_places_intern(struct rp_places *p, const char *text);
/* The place of a frame's dso and sym (either NULL): one hash probe when
 * these pointers were seen since the last rp_places_forget. */
const struct rp_place *rp_place_of(struct rp_places *p, const struct sym_dso *d,
				   const struct sym *s);
static inline const struct rp_place *rp_place_at(const struct rp_places *p, u32 id)
{
	return p->v.v[id];
}
/* Drops the pointer cache: before the files are released (pointers may
 * then be reused by other objects). */
void rp_places_forget(struct rp_places *p);
/* Makes f name its place's own records (dso NULL, file and sym from pl),
 * for frames kept past a release; frames.c's names read them alike. */
void rp_place_frame(const struct rp_place *pl, struct rp_frame *f);

/* Resolves a frame the replay left pending (see rp_opts.defer_kernel). */
void rp_resolve(struct replay *rp, struct rp_frame *f);

/* The name a frame marked cut (the stack copy ended) shows. */
#define RP_CUT_NAME "[stack copy ended]"

/* ---- Frame names (frames.c): how every view names a resolved frame ---- */

/* A file as the report's dso column names it: its short name, or
 * "[unknown]" for none. */
const char *rp_dso_name(const struct sym_dso *d);

/* perf script's text for one chain frame, after its address: what of
 * "NAME+0xOFF (FILE)" the fields ask for (an inline frame names no file
 * and ends in " (inlined)"), and with RP_TEXT_SRCLINE, line (rp_srcline's,
 * or NULL) on a line of its own, as perf prints them. */
enum { RP_TEXT_SYM = 1, RP_TEXT_SYMOFF = 2, RP_TEXT_DSO = 4, RP_TEXT_SRCLINE = 8 };
void rp_put_frame_text(struct strbuf *sb, const struct rp_frame *f, unsigned what,
		       const char *line);

/* A report's symbol column as perf prints it: "[.] name", "[k] name", or
 * the address (perf's %#.16llx) when no symbol is known; level is the
 * letter in brackets ('.', 'k', or rp_branch_level's 'H'). */
void rp_put_sym_column(struct strbuf *sb, const struct sym *sym, u64 addr, char level);
static inline char rp_level(bool kernel)
{
	return kernel ? 'k' : '.';
}
/* A branch end's level as perf shows it: 'k' or '.', and 'H' for a user
 * address in no map (perf tries every cpumode for a branch address and
 * is left at the last, the hypervisor's, when none maps it). */
char rp_branch_level(const struct rp_frame *f);
/* What perf's srcline column shows for an address whose line is unknown:
 * SYM+OFFSET (decimal, from the symbol's start), DSO[ADDR] (hex file
 * address) with no symbol, ??:0 with neither. */
void rp_put_line_stand_in(struct strbuf *sb, const struct sym *sym, const struct sym_dso *dso,
			  bool kernel, u64 addr);
/* The same from the file's short name (NULL: no file). */
void rp_put_line_stand_in_file(struct strbuf *sb, const struct sym *sym, const char *file,
			       bool kernel, u64 addr);

/* Folded stacks: the names stackcollapse-perf.pl gives the frames of
 * perf script's text (collapse, flame, offcpu, bio --folded): arguments
 * dropped, ';' made ':', quotes removed, "[file]" for an unknown symbol
 * in a known file, "a->b" two frames, the second inlined; kind as the
 * folding rules' --annotate tells it (kernel, JIT, user). */
enum rp_frame_kind { RP_FRAME_USER, RP_FRAME_KERNEL, RP_FRAME_JIT, RP_FRAME_INLINED };
struct rp_fold_part {
	size_t off, len;            /* in rp_fold.text */
	enum rp_frame_kind kind;
};
/* Names gathered for one stack (zeroed to start, rp_fold_free to end). */
struct rp_fold {
	struct strbuf text;
	VEC(struct rp_fold_part) parts;
	struct strbuf scratch, file;   /* rp_fold_frame's own */
};
void rp_fold_reset(struct rp_fold *fo);
void rp_fold_free(struct rp_fold *fo);
/* Adds the names of frame f (none for a frame the rules skip, a name in
 * parentheses; several for an inline chain); java: the process is a
 * Java one (comm "java..."), whose class paths lose their 'L'.  Returns
 * whether the names depend on f's symbol (or, unresolved, file) and java
 * alone, so callers may keep them per symbol. */
bool rp_fold_frame(struct rp_fold *fo, const struct rp_frame *f, bool java);
bool rp_fold_java(const char *comm);
/* The process frame: comm, "comm-PID" or "comm-PID/TID", spaces made '_'. */
enum rp_fold_thread { RP_FOLD_COMM, RP_FOLD_PID, RP_FOLD_TID };
void rp_fold_process(struct rp_fold *fo, const char *comm, u32 pid, u32 tid,
		     enum rp_fold_thread show);
/* A frame of the view's own ("--", "[no stack]"). */
void rp_fold_literal(struct rp_fold *fo, const char *name, enum rp_frame_kind kind);
/* The text of part i. */
static inline const char *rp_fold_at(const struct rp_fold *fo, size_t i)
{
	return fo->text.s ? fo->text.s + fo->parts.v[i].off : "";
}
/* Frame f's names as one string, ';' between the parts of an inline
 * chain (fo is scratch space), for views that show a frame per line. */
void rp_fold_name(struct strbuf *sb, struct rp_fold *fo, const struct rp_frame *f, bool java);

/* Stacksets (stackset.c): unique stacks of resolved frames,
 * each stored once per process and found again by hash: the off-CPU and
 * block I/O views key their totals by these ids. */

struct ss_stack {
	u32 first, n;              /* frames[first .. first + n), leaf first */
	u32 pid;
	u32 next;                  /* id + 1 of the next stack with the hash */
	u64 hash;
};

struct stackset {
	VEC(struct rp_frame) frames;
	VEC(struct ss_stack) stacks;
	struct u64map index;       /* hash -> id + 1 of the first stack */
	/* With stackset_keep_places: frames are kept as their places
	 * (rp_place_frame), which outlive the files' release. */
	struct rp_places *places;
	VEC(struct rp_frame) scratch;  /* a stack's frames as places */
};

/* Which frames of a stack count (NULL: all). */
typedef bool (*stackset_keep_fn)(const void *ctx, const struct rp_frame *f);

void stackset_init(struct stackset *s);
void stackset_free(struct stackset *s);
/* Frames are kept as places (no dso, the symbol a copy), so the stacks
 * outlive the files (rp_opts.release_files); stackset_forget before each
 * release.  A frame then is the same when its address, side, symbol's
 * place and file are. */
void stackset_keep_places(struct stackset *s);
void stackset_forget(struct stackset *s);
/* Drops the stacks whose used[id] is false (a long live view's, which
 * nothing counts any more); the others keep their order.  Returns each
 * old id's new one (STACKSET_NONE: dropped), for the caller to free. */
#define STACKSET_NONE UINT32_MAX
u32 *stackset_compact(struct stackset *s, const bool *used);

/* The id (0, 1, ...) of the stack made of the frames of f[0..n) that keep
 * accepts, in process pid (an address means the same code only within one
 * address space); a stack not seen before is stored, and *added says so. */
u32 stackset_intern(struct stackset *s, const struct rp_frame *f, int n, u32 pid,
		    stackset_keep_fn keep, const void *ctx, bool *added);

/* The frames of stack id, leaf first. */
static inline const struct rp_frame *stackset_frames(const struct stackset *s, u32 id, u32 *n)
{
	*n = s->stacks.v[id].n;
	return s->frames.v + s->stacks.v[id].first;
}

/* ---- The replay's options (options.c) --------------------------------- */

/* The views' defaults: input ember.data, names demangled, -g chains with
 * a frameless leaf's caller restored (from the snapshot record -g takes;
 * `script` turns it off to print chains as perf does). */
void rp_opts_init(struct rp_opts *o);
void rp_opts_free(struct rp_opts *o);

#endif
