/* leaf.c - leaf-frame repair of frame-pointer chains: a leaf function
 * without a frame leaves its caller out of the kernel's walk (and each
 * frameless function between it and the first with a frame, one more);
 * their CFI (through libdw) and a small stack snapshot give them back.
 *
 * The snapshot is what `record --call-graph fp` takes (no registers, so
 * perf still reads the file as a frame-pointer recording), or, on
 * sched_switch for `record --off-cpu`, 128 bytes, where the leaf is the
 * libc wrapper a thread blocked in (read, poll, futex) and the caller it
 * hides the function that blocked.  Every view repairs by default
 * (rp_opts_init) except script, which prints chains as recorded, as perf
 * script does.  The same switch (leaf_fix, --no-leaf-fix) shows chains
 * that `record -g` unwound while recording as an offline DWARF unwinding
 * shows them (each caller one byte before its return address, with its
 * inline frames), so a sample the drain left raw joins the same stack as
 * its unwound neighbours. */
#include "unwind/unwind-internal.h"

#include <stdlib.h>
#include <string.h>

/* Frameless functions in a row (a libc wrapper calling another, as
 * nanosleep calls clock_nanosleep) all leave their callers out: the walk
 * goes on through their CFI while each is frameless, this many at most. */
#define LEAF_MAX_LEVELS 8

/* The return address of a frameless function at pc whose stack pointer is
 * *sp (an offset into the snapshot, which starts at the sampled sp), read
 * from the snapshot; *sp becomes its caller's.  -1 when its CFI does not
 * put it there: "CFA = sp + N" only (a frameless function, or one not yet
 * past its prologue), since a rule on the frame pointer means the
 * kernel's walk already found the caller. */
static int frameless_return_address(struct unw_dwarf *u, const struct unw_user *in, u64 pc,
				    s64 *sp, u64 *ra)
{
	struct unw_map m;
	if (!in->find_map || in->find_map(in->find_ctx, pc, &m) < 0)
		return -1;
	struct unw_file *f = unw_file_get(u, &m);
	Dwarf_CFI *cfi = f ? unw_file_cfi(f) : NULL;
	Dwarf_Frame *fr;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - unw_file_bias(f, &m), &fr) != 0)
		return -1;
	s64 cfa, slot;
	int reg;
	int rc = unw_rule_cfa(fr, &reg, &cfa) == 0 && reg == 7 &&
			 unw_rule_reg(fr, 16, &slot) == UNW_RULE_AT_CFA ? 0 : -1;
	free(fr);
	if (rc < 0)
		return -1;
	s64 at = *sp + cfa + slot;
	if (at < 0 || (u64)at + 8 > in->stack_size)
		return -1;
	memcpy(ra, in->stack + at, 8);
	*sp += cfa;
	return 0;
}

/* The callers the frameless functions from the leaf at pc on hide, into
 * ras (at most max), the leaf's caller first; stops at the chain's next
 * frame (next; 0: none), at a function with a frame, or where the
 * snapshot ends.  A caller's CFI is looked up at its return address - 1,
 * inside the call. */
static int hidden_callers(struct unw_dwarf *u, const struct unw_user *in, u64 pc, u64 next,
			  u64 *ras, int max)
{
	struct unw_map m;
	s64 sp = 0;
	int n = 0;
	for (u64 at = pc; n < max; at = ras[n - 1] - 1) {
		u64 ra;
		if (frameless_return_address(u, in, at, &sp, &ra) < 0 || ra == 0 || ra == next ||
		    in->find_map(in->find_ctx, ra, &m) < 0)
			break;
		ras[n++] = ra;
	}
	return n;
}

int unw_leaf_fix(struct unw_dwarf *u, const struct unw_user *in, struct unw_frame *frames,
		 int n, int max)
{
	int i = 0;
	while (i < n && frames[i].kernel)
		i++;
	if (i >= n || n >= max || !in->stack || in->stack_size < 8)
		return n;
	u->stats.leaf_checked++;
	u64 ras[LEAF_MAX_LEVELS];
	int room = max - n < LEAF_MAX_LEVELS ? max - n : LEAF_MAX_LEVELS;
	int k = hidden_callers(u, in, frames[i].ip, i + 1 < n ? frames[i + 1].ip : 0, ras, room);
	if (k == 0)
		return n;          /* the walk found the caller itself */
	memmove(&frames[i + 1 + k], &frames[i + 1], (size_t)(n - i - 1) * sizeof(*frames));
	for (int j = 0; j < k; j++)
		frames[i + 1 + j] = (struct unw_frame){ .ip = ras[j] };
	u->stats.leaf_repaired++;
	return n + k;
}
