/* unwind.h - a sample -> its frames (addresses, leaf first).  Kernel frames
 * come from the callchain the kernel unwound (ORC here), user frames from
 * the frame-pointer chain or, for --call-graph dwarf, from unwinding the
 * copied user stack with CFI (libunwind or libdw); names come later. */
#ifndef EMBER_UNWIND_H
#define EMBER_UNWIND_H

#include "common/common.h"
#include "format/format.h"

struct unw_frame {
	u64 ip;
	bool kernel;     /* kernel (or module) address */
	bool cut;        /* marker: the stack copy ended before the stack did */
};

/* Fills out[] with the frames of sample s (leaf first) and returns how
 * many; at most max.  misc is the record's misc (its cpumode tells where
 * the sampled ip is when there is no callchain).  PERF_CONTEXT_* markers
 * switch between kernel and user; a guest context ends the walk.  A chain
 * with a marker no context has is not trusted: as perf does, only the
 * sampled ip is kept, and *dropped (when not NULL) says so.  A
 * UNW_CUT_IP entry in user context (a chain ember unwound while
 * recording) becomes a frame marked cut. */
int unw_sample_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
		      bool *dropped);

/* The frames of a sample whose event keeps the user call stack in the
 * LBR (branch_sample_type CALL_STACK: perf record --call-graph lbr), as
 * perf builds them: the callchain's kernel part (its entries before
 * PERF_CONTEXT_USER), then the newest branch's target and each branch's
 * source, newest first (calls: the call sites); the recorded user frames
 * are not used.  A chain with no user part or an empty branch stack gives
 * unw_sample_frames' frames. */
int unw_lbr_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
		   bool *dropped);

/* The same for a chain ember unwound while recording (record -g, written
 * with return addresses as the kernel's frame-pointer walk gives them):
 * each user caller one before its return address, as unw_dwarf_user
 * gives them, so it names the call (its line, its inline frames) and a
 * sample left raw, unwound later, gives the same frames. */
int unw_recorded_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
			bool *dropped);

/* ---- DWARF unwinding of user stack copies -------------------------------- */

/* Where an address is mapped, as the unwinder needs it.  The caller (the
 * replay) answers from its per-process maps; key identifies the file
 * (same key, same file) so its unwind tables load once.  key NULL: code
 * is mapped here but there is no file to read (JIT, anonymous executable
 * memory), so no CFI either; the fast path goes on by frame pointer. */
struct unw_map {
	u64 start, end, pgoff;
	const char *path;
	const void *key;
};
/* Returns 0 and fills *m, or -1 when addr is in no mapping worth
 * unwinding through (no file, and not code that key NULL describes). */
typedef int (*unw_find_map_fn)(void *ctx, u64 addr, struct unw_map *m);

/* One sample's user state and its address space. */
struct unw_user {
	const u64 *regs;          /* the sample's user regs, in mask bit order */
	u64 regs_mask;            /* attr.sample_regs_user */
	const u8 *stack;          /* the copy, starting at the user sp */
	u64 stack_size;           /* valid bytes (stack_dyn_size) */
	u32 pid, tid;
	const void *space;        /* identity of the address space ... */
	u64 generation;           /* ... and of its current layout */
	unw_find_map_fn find_map;
	void *find_ctx;
};

enum unw_backend { UNW_BACKEND_LIBUNWIND, UNW_BACKEND_LIBDW };
#define UNW_BACKEND_DEFAULT UNW_BACKEND_LIBDW

/* "libunwind" or "libdw" -> *b; -1 with err_set() otherwise. */
int unw_parse_backend(const char *name, enum unw_backend *b);
const char *unw_backend_name(enum unw_backend b);

/* What an unwinder did, for reports, tests and benchmarks. */
struct unw_stats {
	u64 samples;              /* user stacks unwound */
	u64 frames;               /* user frames produced */
	u64 cut;                  /* stopped at the end of the copy */
	u64 files;                /* files whose tables were loaded */
	u64 leaf_checked;         /* -g chains examined for a lost caller */
	u64 leaf_repaired;        /* ... and given it back */
	u64 fast;                 /* user stacks the fast path unwound alone */
	u64 asked;                /* ... walks the other backend was asked to
				     retry (stopped where a stack cannot end) */
	u64 second;               /* ... and it took further */
	u64 fp_steps;             /* frames the fast path stepped out of by
				     frame pointer (no CFI there) */
	u64 forgotten;            /* files let go of (unw_dwarf_forget) */
};

struct unw_dwarf;
struct unw_dwarf *unw_dwarf_new(enum unw_backend b);
void unw_dwarf_free(struct unw_dwarf *u);
const struct unw_stats *unw_dwarf_stats(const struct unw_dwarf *u);

/* A long-running caller (the recorder's online unwinder) lets go of what
 * the unwinder keeps for a file (key, as find_map gave it: its tables,
 * its mapping, its fd) and for an address space (space, as unw_user gave
 * it: libdw's Dwfl and its modules), once no mapping will name them
 * again: the key or the space pointer may then be reused for another.
 * Unknown keys and spaces are ignored. */
void unw_dwarf_forget(struct unw_dwarf *u, const void *key);
void unw_dwarf_forget_space(struct unw_dwarf *u, const void *space);

/* The user frames of one sample, leaf first, into out (at most max);
 * callers' addresses are return addresses minus one, as perf gives them
 * (they name the call's line).  A walk stopped by the end of the copy
 * ends with a frame marked cut.  Reads never leave the copy or the
 * mapped files.  Returns the count (0 when nothing could be unwound). */
int unw_dwarf_user(struct unw_dwarf *u, const struct unw_user *in, struct unw_frame *out,
		   int max);

/* The marker a user callchain written by ember ends with when the stack
 * copy ended before the stack did (perf shows it as an unknown address;
 * ember's views as the cut marker).  Not a PERF_CONTEXT_* value, and no
 * user address. */
#define UNW_CUT_IP 0xffffffffffffe000ULL
/* The user part of a callchain as the kernel's frame-pointer walk writes
 * it: the sampled ip, then return addresses as found (not minus one),
 * ending with UNW_CUT_IP when the copy ended first.  The same walk as
 * unw_dwarf_user's, counted in the same stats.  Returns the count (at
 * least 1 when the sample has an ip register). */
int unw_dwarf_user_chain(struct unw_dwarf *u, const struct unw_user *in, u64 *out, int max);

/* A sample of --call-graph dwarf: the kernel frames of its callchain, then
 * its user frames unwound from in (when in->regs is not NULL). */
int unw_dwarf_sample_frames(struct unw_dwarf *u, const struct pd_sample *s, u16 misc,
			    const struct unw_user *in, struct unw_frame *out, int max,
			    bool *dropped);

/* Leaf-frame repair of a frame-pointer chain (frames from
 * unw_sample_frames): a frameless leaf leaves its caller out of the
 * chain.  in carries the small stack snapshot (regs may be NULL: the copy
 * starts at the user sp).  When the leaf's CFI finds its return address
 * in the copy and the chain lacks it, it is inserted after the leaf, and
 * so on through each frameless caller up to the first function with a
 * frame (nanosleep calling clock_nanosleep hides main too).
 * Returns the new count (n when nothing changed). */
int unw_leaf_fix(struct unw_dwarf *u, const struct unw_user *in, struct unw_frame *frames,
		 int n, int max);

#endif
