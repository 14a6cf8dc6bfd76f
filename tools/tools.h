/* tools.h - BCC's tools (execsnoop, opensnoop, syscount, ...) without BPF:
 * each tool is a sink over the replay of the tracepoints `ember record
 * --tool NAME` records, run offline on a file or live on a target. */
#ifndef EMBER_TOOLS_H
#define EMBER_TOOLS_H

#include <stdio.h>

#include "live/live.h"
#include "pmc/pmc.h"
#include "replay/replay.h"

/* What a tool sees of its input once it is open. */
struct tool_env {
	struct pd_reader *reader;
	struct pd_trace *trace;    /* the recorded tracing data; NULL when none */
	FILE *out;
	/* --pid, --tid, --comm, --cpu, --time: the replay applies it to the
	 * samples; a tool that counts other records (cpudist's switches)
	 * tests them with rp_filter_pass. */
	const struct rp_filter *filter;
	const struct tool *tool;   /* the tool: tool_note says through it */
	/* The path probes' hits, kept until their sys_enter (strings.c). */
	struct tool_strings *strings;
};

/* One tool: its sink (ctx shared with start), and the step that finds
 * its tracepoints once the input is open (0, or -1 with err_set(), e.g.
 * when the recording lacks them). */
struct tool {
	const char *name;
	void *ctx;
	int (*start)(void *ctx, const struct tool_env *env);
	struct rp_sink sink;
	/* The summary tools': what was gathered, printed at the end or at
	 * each --interval (then reset); NULL for the one-line-per-event ones. */
	void (*print)(void *ctx, FILE *out);
	void (*reset)(void *ctx);
	void (*free)(void *ctx);
	bool callchains;           /* resolve call chains (stackcount) */
	/* The filters (RP_FILTER_*) whose test its figures cannot take, and
	 * so refused (rp_filter_refuse): the task ones for work no task
	 * owns (interrupts, writeback). */
	unsigned refused;
	/* Counting mode (count.c), for a summary tool that needs only how
	 * often each event happened (NULL when it, with its options, needs
	 * each event): live and without -o, its events are opened as
	 * counters, none lost.  count_events appends them to the list (-1
	 * with err_set() when this kernel lacks them: then it samples);
	 * counted adds one interval's count of each, over CPUs and tasks. */
	int (*count_events)(void *ctx, struct pmc_list *events);
	void (*counted)(void *ctx, const struct pmc_list *events, const u64 *counts);
	/* Set by the command before the run: where the tool's lines and
	 * tables go, and who says its notes (tool_note) to the user. */
	FILE *out;
	void (*note)(const struct tool *t, const char *msg);
};

/* Where the events come from: a file (-i), or live from a target (-a,
 * the default, -p, -C, a command) for --duration, -o keeping the
 * recording; --interval/--count for the tools that print summaries. */
struct tool_target {
	const char *input;
	struct live_opts live;     /* live's (bound by cmd/'s table) */
	VEC(const char *) events;  /* -e for funccount and stackcount */
	/* --tid, --comm, --time, and with -i -p and -C (live they are
	 * targets: what is recorded) */
	struct rp_filter filter;
};

/* A summary tool's interval as every tool prints it to t->out: "[SECS s]",
 * what it gathered and a blank line; then it starts afresh. */
void tool_print_interval(const struct tool *t, double secs);
/* A note of the tool's for its user, not an error (the run goes on):
 * handed to the tool's note() as it comes, which says it as the
 * command's message (opensnoop's paths it could not read). */
void tool_note(const struct tool_env *env, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* Running a tool (run.c), in steps the command (cmd/cmd-tools.c) drives
 * and says the outcome of: tool_replay_open on o's input (a file, or
 * live's stream, given live), whose filter is tg's until the close;
 * tool_replay_run drives the tool's sink through the replay (its
 * --interval ticks and --count end); then the summary says what was
 * lost.  open: NULL with err_set(); run: 0, or -1 with err_set(). */
struct tool_replay;
struct tool_replay *tool_replay_open(struct tool *t, const struct tool_target *tg,
				     struct rp_opts *o, struct live *live);
int tool_replay_run(struct tool_replay *x);
const struct rp_summary *tool_replay_summary(const struct tool_replay *x);
/* Whether --count's last interval came (the replay then stops early:
 * its input's failure after that does not count). */
bool tool_replay_counted_out(const struct tool_replay *x);
void tool_replay_close(struct tool_replay *x);

/* Counting mode (count.c): whether t on tg can count its events with
 * counters instead of recording them (live, no -o, no filter). */
bool tool_counting_fits(const struct tool *t, const struct tool_target *tg);
/* What a counting run found, for the command to say. */
struct tool_counted {
	size_t unopened, nevents;  /* events the kernel would not count, of all */
	const char *first;         /* the first of those, */
	int first_err;             /* and why (an errno) */
	bool scaled;               /* a counter ran less than it was enabled:
				      its counts are estimates */
};
/* Its steps: new (NULL with err_set() when this kernel lacks the
 * counters' events: sample instead); run on tg's live target, the
 * intervals printed (NULL with err_set(), *usage set when the target is
 * the user's mistake); the total printed (without --interval: it may set
 * scaled); free, which puts back the stop signals. */
struct tool_counting;
struct tool_counting *tool_counting_new(struct tool *t, const struct tool_target *tg);
const struct tool_counted *tool_counting_run(struct tool_counting *k, bool *usage);
void tool_counting_total(struct tool_counting *k);
/* The exit status by the command's end and a stop request
 * (stop_exit_status: *die_sig set when a signal stopped the run). */
int tool_counting_status(const struct tool_counting *k, int *die_sig);
void tool_counting_free(struct tool_counting *k);

void tool_target_free(struct tool_target *tg);

/* ---- Helpers for the tools' sinks (util.c) ------------------------------ */

/* The id of tracepoint "sys:name" in the recording; false when absent. */
bool tool_tp_id(const struct tool_env *env, const char *name, u64 *id);
/* The ids of the recording's tracepoints whose "sys:name" matches glob
 * (the run's uprobe events: "ember_*:path_*"), up to max; how many. */
size_t tool_tp_ids(const struct tool_env *env, const char *glob, u64 *ids, size_t max);
/* Whether sample s is of tracepoint id. */
static inline bool tool_is_tp(const struct rp_sample *s, u64 id)
{
	return s->attr && s->attr->attr.type == PERF_TYPE_TRACEPOINT && s->attr->attr.config == id;
}
/* A numeric field of a tracepoint sample, 0 when absent. */
u64 tool_field(const struct tool_env *env, const struct rp_sample *s, const char *name);
/* The bytes a __data_loc field's value loc points at in s's record,
 * their length (the NUL counted; 0 for a uprobe's faulted fetch) in
 * *len; NULL when they lie outside it. */
const char *tool_data_loc(const struct rp_sample *s, u64 loc, size_t *len);
/* A string field (fixed array or __data_loc) into buf; "" when absent. */
const char *tool_field_str(const struct tool_env *env, const struct rp_sample *s,
			   const char *name, char *buf, size_t cap);
/* The string at user address addr into buf: from the sample's copy of
 * the user stack (record --tool takes one for the events that point at
 * strings), else from the file mapped there (literals); NULL when it is
 * in neither, or cut. */
const char *tool_user_str(const struct rp_sample *s, u64 addr, char *buf, size_t cap);
/* The path a syscall's sys_enter sample s points at (addr) into buf:
 * from the path probe's hit that announced this very call (strings.c),
 * else as tool_user_str; NULL when neither has it. */
const char *tool_syscall_str(const struct tool_env *env, const struct rp_sample *s, u64 addr,
			     char *buf, size_t cap);
/* A path syscall's path argument: its "filename" field, else its
 * "pathname" (statfs, creat, unlink). */
u64 tool_path_arg(const struct tool_env *env, const struct rp_sample *s);
/* The user pointer at addr (from the copy); false when not in it. */
bool tool_user_u64(const struct rp_sample *s, u64 addr, u64 *v);
/* "missing tracepoints: record with 'ember record --tool NAME'" */
int tool_missing(const char *tool, const char *what);

/* The path probes' hits (strings.c), which tool_replay keeps for the
 * tools: new finds their events in env's recording; take keeps sample s
 * when it is a hit (true: the tool does not see it); forget drops every
 * kept hit (after lost records); get hands the hit that announced the
 * sys_enter sample s, when its pointer is addr (NULL when none); done
 * forgets it once the tool has seen s. */
struct tool_strings;
struct tool_strings *tool_strings_new(const struct tool_env *env);
void tool_strings_free(struct tool_strings *x);
bool tool_strings_recorded(const struct tool_strings *x);
bool tool_strings_take(struct tool_strings *x, const struct tool_env *env,
		       const struct rp_sample *s);
void tool_strings_forget(struct tool_strings *x);
/* After the tool saw sample s: its thread's hit, if any, is forgotten
 * (the sample was the call the hit announced, or the call never came). */
void tool_strings_done(struct tool_strings *x, const struct rp_sample *s);
const char *tool_strings_get(const struct tool_strings *x, const struct rp_sample *s, u64 addr);

/* Fixed-size records by thread (a call under way, a kept hit), made
 * zeroed on first use and kept until the tool ends: threads come and go
 * by the thousand, calls by the million. */
struct tool_slots {
	struct u64map index;       /* tid -> index + 1 */
	VEC(void *) v;
	size_t size;
};
void tool_slots_init(struct tool_slots *t, size_t size);
void tool_slots_free(struct tool_slots *t);
/* tid's record, made on first use. */
void *tool_slots_get(struct tool_slots *t, u32 tid);
/* tid's record; NULL when it has none. */
void *tool_slots_find(const struct tool_slots *t, u32 tid);

/* A string per thread, kept from a syscall's entry to its exit. */
#define TOOL_STR_MAX 512
struct tool_pending {
	struct tool_slots slots;   /* TOOL_STR_MAX bytes each */
};
void tool_pending_init(struct tool_pending *p);
void tool_pending_free(struct tool_pending *p);
/* tid's buffer (TOOL_STR_MAX bytes), made on first use. */
char *tool_pending_slot(struct tool_pending *p, u32 tid);
/* tid's string and forgets it; NULL when none is kept. */
const char *tool_pending_take(struct tool_pending *p, u32 tid);
/* tid's string, still kept; NULL when none. */
const char *tool_pending_peek(const struct tool_pending *p, u32 tid);

/* Processes' parents and tasks' birth times, from the FORK records
 * (tasks that began before the recording have none). */
struct tool_forks {
	struct u64map ppid;        /* pid -> ppid + 1 */
	struct u64map born;        /* tid -> fork time (a process's: its pid) */
};
void tool_forks_init(struct tool_forks *f);
void tool_forks_free(struct tool_forks *f);
/* Takes note of a FORK record: every task's birth, a process's parent. */
void tool_forks_event(struct tool_forks *f, const struct pd_event *ev);
/* The parent's pid as text, "?" when unknown; buf of 16 bytes. */
const char *tool_forks_ppid(const struct tool_forks *f, u32 pid, char *buf);

/* A log2 histogram, printed as BCC prints them. */
struct tool_hist {
	u64 slot[64];
	u64 total, n;
};
void tool_hist_add(struct tool_hist *h, u64 v);
void tool_hist_print(const struct tool_hist *h, const char *unit, FILE *out);

/* Rows of counts and times by a u64 key (a syscall, a process, an IRQ),
 * each with its label and, when asked, a histogram. */
struct tool_row {
	u64 key;
	char label[64];
	u64 count, total_ns, timed;   /* timed: the count total_ns covers */
	u64 max_ns, value;            /* the longest; a tool's own sum (pages) */
	struct tool_hist *hist;       /* NULL until tool_counts_hist */
};
struct tool_counts {
	VEC(struct tool_row) rows;
	struct u64map index;          /* key -> index + 1 */
};
void tool_counts_init(struct tool_counts *c);
void tool_counts_free(struct tool_counts *c);
void tool_counts_reset(struct tool_counts *c);
/* key's row; label (may be NULL) names a new one. */
struct tool_row *tool_counts_row(struct tool_counts *c, u64 key, const char *label);
/* key's row's histogram, made on first use. */
struct tool_hist *tool_counts_hist(struct tool_counts *c, struct tool_row *r);
/* The rows sorted by total time (by_time) or count, largest first; the
 * caller frees the array. */
struct tool_row **tool_counts_sorted(const struct tool_counts *c, bool by_time);

/* Begins paired with their ends by a u64 key (a thread, a CPU), for the
 * tools' durations (pair.c).  A begin keeps its time and a value (what
 * its end must match, as a syscall's number, or reads, as a page
 * budget); time 0 is no begin (a record without a time pairs nothing).
 * Begins stay under way across intervals: reset forgets them all. */
struct tool_begin {
	u64 time, value;
};
struct tool_pair {
	struct u64map index;          /* key -> index + 1 into begins */
	VEC(struct tool_begin) begins;
};
void tool_pair_init(struct tool_pair *p);
void tool_pair_reset(struct tool_pair *p);
void tool_pair_free(struct tool_pair *p);
/* key's begin at time, with value; true when it replaces one still under
 * way (whose end never came). */
bool tool_pair_begin(struct tool_pair *p, u64 key, u64 time, u64 value);
/* An end of key at time: true when a begin was under way at or before
 * time, with the duration in *ns and the begin's value in *value (when
 * not NULL); that begin is over.  False leaves any begin under way: an
 * end without its begin, or older than it. */
bool tool_pair_end(struct tool_pair *p, u64 key, u64 time, u64 *ns, u64 *value);
/* The same, ending only a begin of that value: an end of another (a
 * different syscall, vector) leaves the begin under way. */
bool tool_pair_end_of(struct tool_pair *p, u64 key, u64 time, u64 value, u64 *ns);
/* Forgets key's begin, if any. */
void tool_pair_drop(struct tool_pair *p, u64 key);

/* What the tools' own options ask for; each tool reads its part. */
struct tool_opts {
	bool failed;               /* execsnoop: failed execs too; opensnoop,
				      exitsnoop: only the failed ones */
	bool timestamps;           /* execsnoop, opensnoop */
	const char *name;          /* opensnoop: processes whose name has it */
	bool latency, per_process; /* syscount (per_process: cpudist, funccount) */
	u32 top;                   /* syscount: rows, 0 for its default */
	bool threads;              /* exitsnoop: every thread's exit */
	bool offcpu, millis;       /* cpudist */
	bool dist, counts;         /* softirqs, hardirqs */
	bool folded;               /* stackcount */
	int stack_part;            /* stackcount: TOOL_STACKS_* (-U, -K) */
	const char *flame;         /* stackcount: FILE.svg */
};

/* stackcount's -U and -K: which frames of each stack it keeps. */
enum { TOOL_STACKS_BOTH, TOOL_STACKS_USER, TOOL_STACKS_KERNEL };

/* Each tool's constructor. */
struct tool *execsnoop_new(const struct tool_opts *o);
struct tool *opensnoop_new(const struct tool_opts *o);
struct tool *statsnoop_new(const struct tool_opts *o);
struct tool *filelife_new(const struct tool_opts *o);
struct tool *syscount_new(const struct tool_opts *o);
struct tool *exitsnoop_new(const struct tool_opts *o);
struct tool *cpudist_new(const struct tool_opts *o);
struct tool *softirqs_new(const struct tool_opts *o);
struct tool *hardirqs_new(const struct tool_opts *o);
struct tool *funccount_new(const struct tool_opts *o);
struct tool *oomkill_new(const struct tool_opts *o);
struct tool *drsnoop_new(const struct tool_opts *o);
struct tool *writeback_new(const struct tool_opts *o);
struct tool *stackcount_new(const struct tool_opts *o);
void tool_free(struct tool *t);

/* The syscall's name on this machine's arch (generated from the kernel
 * headers at build time), or NULL. */
const char *tool_syscall_name(u64 nr);
/* The number of the syscall of that name in the same table, or -1; the
 * table's size (its highest number + 1). */
long tool_syscall_nr(const char *name);
size_t tool_syscall_slots(void);

#endif
