/* leaf.c - leaf-frame repair of frame-pointer chains: a leaf function
 * without a frame leaves its caller out of the kernel's walk; the leaf's
 * CFI (through libdw) and a small stack snapshot give it back. */
#include "unwind/unwind-internal.h"

#include <stdlib.h>
#include <string.h>

/* The return address of the leaf at pc, read from the snapshot; -1 when
 * its CFI does not put it there. */
static int leaf_return_address(struct unw_dwarf *u, const struct unw_user *in, u64 pc,
			       u64 *ra)
{
	struct unw_map m;
	if (!in->find_map || in->find_map(in->find_ctx, pc, &m) < 0)
		return -1;
	struct unw_file *f = unw_file_get(u, &m);
	Dwarf_CFI *cfi = f ? unw_file_cfi(f) : NULL;
	Dwarf_Frame *fr;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - unw_file_bias(f, &m), &fr) != 0)
		return -1;
	/* Only "CFA = sp + N" (a frameless function, or one not yet past
	 * its prologue): a rule on the frame pointer means the kernel's walk
	 * already found the caller. */
	s64 cfa, slot;
	int reg;
	int rc = unw_rule_cfa(fr, &reg, &cfa) == 0 && reg == 7 &&
			 unw_rule_reg(fr, 16, &slot) == UNW_RULE_AT_CFA ? 0 : -1;
	free(fr);
	if (rc < 0)
		return -1;
	s64 at = cfa + slot;   /* offset into the copy, which starts at sp */
	if (at < 0 || (u64)at + 8 > in->stack_size)
		return -1;
	memcpy(ra, in->stack + at, 8);
	return 0;
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
	u64 ra;
	struct unw_map m;
	if (leaf_return_address(u, in, frames[i].ip, &ra) < 0 || ra == 0 ||
	    in->find_map(in->find_ctx, ra, &m) < 0)
		return n;
	if (i + 1 < n && frames[i + 1].ip == ra)
		return n;          /* the walk found the caller itself */
	memmove(&frames[i + 2], &frames[i + 1], (size_t)(n - i - 1) * sizeof(*frames));
	frames[i + 1] = (struct unw_frame){ .ip = ra };
	u->stats.leaf_repaired++;
	return n + 1;
}
