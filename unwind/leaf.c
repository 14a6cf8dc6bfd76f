/* leaf.c - leaf-frame repair of frame-pointer chains: a leaf function
 * without a frame leaves its caller out of the kernel's walk; the leaf's
 * CFI (through libdw) and a small stack snapshot give it back. */
#include "unwind/unwind-internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* Where the CFA is, as an offset from the sp, when the rule is "sp + N"
 * (a frameless function, or one not yet past its prologue).  A rule based
 * on the frame pointer means the kernel's walk already found the caller. */
static int cfa_sp_offset(Dwarf_Frame *fr, s64 *off)
{
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx && ops[0].number == 7) {
		*off = (s64)ops[0].number2;
		return 0;
	}
	if (ops[0].atom == DW_OP_breg7) {
		*off = (s64)ops[0].number;
		return 0;
	}
	return -1;
}

/* A constant operand of libdw's decoded ops, for the "CFA + constant"
 * register rules it gives. */
static bool op_constant(const Dwarf_Op *op, s64 *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	if (op->atom == DW_OP_consts || op->atom == DW_OP_const1s ||
	    op->atom == DW_OP_const2s || op->atom == DW_OP_const4s ||
	    op->atom == DW_OP_const8s) {
		*v = (s64)op->number;
		return true;
	}
	if (op->atom == DW_OP_constu || op->atom == DW_OP_const1u ||
	    op->atom == DW_OP_const2u || op->atom == DW_OP_const4u) {
		*v = (s64)op->number;
		return true;
	}
	return false;
}

/* Where the return address is saved, as an offset from the CFA; -1 when
 * the rule is anything but "saved at CFA + N". */
static int ra_cfa_offset(Dwarf_Frame *fr, s64 *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	if (dwarf_frame_register(fr, 16, mem, &ops, &nops) != 0 || !ops || nops == 0 ||
	    ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	s64 c;
	if (nops == 1) {
		*off = 0;
		return 0;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (s64)ops[1].number;
		return 0;
	}
	if (nops == 3 && op_constant(&ops[1], &c) &&
	    (ops[2].atom == DW_OP_plus || ops[2].atom == DW_OP_minus)) {
		*off = ops[2].atom == DW_OP_plus ? c : -c;
		return 0;
	}
	return -1;
}

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
	s64 cfa, slot;
	int rc = cfa_sp_offset(fr, &cfa) == 0 && ra_cfa_offset(fr, &slot) == 0 ? 0 : -1;
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
