/* fast.c - the fast path in front of both backends.  Each (file, address)
 * a walk meets gets its frame rule from libdw's CFI once (.eh_frame, or
 * the file's own .debug_frame when .eh_frame has no entry), reduced to
 * the simple shape compilers emit: CFA = rsp or rbp + N, the return
 * address saved at CFA + N (undefined: the end of the stack), rbp saved
 * at CFA + N or unchanged, rsp = CFA.  A frame is then one hash lookup
 * and two loads from the copy.  CFI of any other shape (expressions,
 * signal frames) and code in a file that cannot be read hand the whole
 * sample to the chosen backend, so where there is CFI the chains stay
 * exactly the backend's: every stop below is one both backends make at
 * the same place.  EMBER_UNWIND_FAST=0 turns the fast path off (tests
 * compare the two).
 *
 * Where there is no CFI at all (no FDE in .eh_frame nor in .debug_frame:
 * hand-written asm; or code mapped with no file, find_map's key NULL:
 * JIT), the walk steps by frame pointer from that frame, as the kernel's
 * -g walk does, and goes on with CFI for the caller.  Those frames are
 * the fast path's own, taken where a pure CFI walk stops: the backends
 * stop there or guess on by their own frame-pointer fallbacks (libdw's
 * and libunwind's for x86_64, with other checks, and libdw gives only
 * the ip for a sampled ip in no file), so for such samples
 * EMBER_UNWIND_FAST=0 may give a shorter chain, or where the guesses
 * differ another.  That is intended: the frame pointer is the one way out
 * of such code (tests/workloads/nocfi.c; unwind-nocfi.sh checks that the
 * backend alone gives the same chains or first parts of them). */
#include "unwind/unwind-internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* ---- rules from libdw ------------------------------------------------------ */

/* A constant operand of libdw's decoded ops. */
static bool op_constant(const Dwarf_Op *op, s64 *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_consts: case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
	case DW_OP_const8s: case DW_OP_constu: case DW_OP_const1u: case DW_OP_const2u:
	case DW_OP_const4u: case DW_OP_const8u:
		*v = (s64)op->number;
		return true;
	}
	return false;
}

int unw_rule_cfa(Dwarf_Frame *fr, int *reg, s64 *off)
{
	Dwarf_Op *ops;
	size_t nops;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (int)ops[0].number;
		*off = (s64)ops[0].number2;
		return 0;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (s64)ops[0].number;
		return 0;
	}
	return -1;
}

/* libdw spells "CFA + N" as call_frame_cfa, then nothing (N = 0),
 * plus_uconst N (N may wrap: a negative offset), or const N, plus/minus;
 * a trailing stack_value makes it the value instead of the location. */
static enum unw_rule_kind cfa_relative(const Dwarf_Op *ops, size_t nops, s64 *off)
{
	bool value = nops > 1 && ops[nops - 1].atom == DW_OP_stack_value;
	size_t n = value ? nops - 1 : nops;
	s64 c;
	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return UNW_RULE_OTHER;
	if (n == 1)
		*off = 0;
	else if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
		*off = (s64)ops[1].number;
	else if (n == 3 && op_constant(&ops[1], &c) &&
		 (ops[2].atom == DW_OP_plus || ops[2].atom == DW_OP_minus))
		*off = ops[2].atom == DW_OP_plus ? c : -c;
	else
		return UNW_RULE_OTHER;
	return value ? UNW_RULE_VAL_CFA : UNW_RULE_AT_CFA;
}

enum unw_rule_kind unw_rule_reg(Dwarf_Frame *fr, int regno, s64 *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	if (dwarf_frame_register(fr, regno, mem, &ops, &nops) != 0)
		return UNW_RULE_OTHER;
	if (nops == 0)
		return ops == NULL ? UNW_RULE_SAME : ops == mem ? UNW_RULE_UNDEFINED
								: UNW_RULE_OTHER;
	return cfa_relative(ops, nops, off);
}

/* ---- the packed rule ------------------------------------------------------- */

/* A rule in one u64 (the cache's value): kind, CFA base, rbp saved or
 * not, and three offsets.  FR_NONE: CFI the fast path does not run;
 * FR_NOCFI: no CFI at all, a frame-pointer step. */
enum { FR_NONE, FR_STEP, FR_END, FR_NOCFI };
#define FR_CFA_RBP   (1u << 2)
#define FR_RBP_SAVED (1u << 3)

struct fr_rule {
	unsigned kind, flags;
	s64 cfa_off, ra_off, rbp_off;
};

static u64 fr_pack(const struct fr_rule *r)
{
	return (u64)(r->kind | r->flags) | (u64)(uint16_t)r->ra_off << 8 | (u64)(uint16_t)r->rbp_off << 24 |
	       (u64)r->cfa_off << 40;
}

static void fr_unpack(u64 v, struct fr_rule *r)
{
	r->kind = v & 3;
	r->flags = v & (FR_CFA_RBP | FR_RBP_SAVED);
	r->ra_off = (int16_t)(v >> 8);
	r->rbp_off = (int16_t)(v >> 24);
	r->cfa_off = (s64)v >> 40;
}

static bool fits(s64 v, int bits)
{
	return v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1));
}

/* Registers other than rsp, rbp and the return address feed nothing the
 * fast path computes, but a backend reads their saved slots: a slot
 * above the return address's could be cut off by the copy while the
 * return address is not, so such (never seen) frames go to the backend;
 * and so do register copies and expressions. */
static bool others_simple(Dwarf_Frame *fr, s64 ra_off)
{
	for (int r = 0; r < UNW_DWARF_NREGS - 1; r++) {
		if (r == 6 || r == 7)
			continue;
		s64 off;
		enum unw_rule_kind k = unw_rule_reg(fr, r, &off);
		if (k == UNW_RULE_OTHER || (k == UNW_RULE_AT_CFA && off >= ra_off))
			return false;
	}
	return true;
}

/* The rule of one frame, or FR_NONE when it is not simple. */
static void fr_from_frame(Dwarf_Frame *fr, struct fr_rule *r)
{
	Dwarf_Addr start, end;
	bool signal;
	int cfa_reg;
	s64 off, sp_off;
	r->kind = FR_NONE;
	if (dwarf_frame_info(fr, &start, &end, &signal) != 16 || signal ||
	    unw_rule_cfa(fr, &cfa_reg, &r->cfa_off) < 0 || (cfa_reg != 6 && cfa_reg != 7) ||
	    !fits(r->cfa_off, 24))
		return;
	r->flags = cfa_reg == 6 ? FR_CFA_RBP : 0;
	enum unw_rule_kind ra = unw_rule_reg(fr, 16, &r->ra_off);
	if (ra == UNW_RULE_UNDEFINED) {
		r->kind = FR_END;
		return;
	}
	if (ra != UNW_RULE_AT_CFA || !fits(r->ra_off, 16) ||
	    unw_rule_reg(fr, 7, &sp_off) != UNW_RULE_VAL_CFA || sp_off != 0)
		return;
	enum unw_rule_kind bp = unw_rule_reg(fr, 6, &off);
	if (bp == UNW_RULE_AT_CFA && off < r->ra_off && fits(off, 16)) {
		r->flags |= FR_RBP_SAVED;
		r->rbp_off = off;
	} else if (bp != UNW_RULE_SAME) {
		return;
	}
	if (others_simple(fr, r->ra_off))
		r->kind = FR_STEP;
}

/* The rule at ELF address vaddr of f: .eh_frame first, then the file's
 * own .debug_frame, as libdw's frame unwinder looks; FR_NOCFI when
 * neither has an entry for it (or one libdw cannot read: its own
 * unwinder falls back to the frame pointer then too). */
static u64 fr_lookup_cfi(struct unw_file *f, u64 vaddr)
{
	struct fr_rule r = { .kind = FR_NOCFI };
	Dwarf_Frame *fr = NULL;
	Dwarf_CFI *cfi = unw_file_cfi(f);
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &fr) != 0) {
		fr = NULL;
		cfi = unw_file_debug_cfi(f);
		if (cfi && dwarf_cfi_addrframe(cfi, vaddr, &fr) != 0)
			fr = NULL;
	}
	if (fr)
		fr_from_frame(fr, &r);
	free(fr);
	return fr_pack(&r);
}

/* The cached rule of (f, vaddr). */
static u64 fr_get(struct unw_dwarf *u, struct unw_file *f, u64 vaddr)
{
	if (vaddr >> 48 || f->index >> 16)
		return fr_lookup_cfi(f, vaddr);   /* no room in the key: not cached */
	u64 key = (u64)f->index << 48 | vaddr;
	u64 *v = u64map_get(&u->rules, key);
	if (v)
		return *v;
	u64 rule = fr_lookup_cfi(f, vaddr);
	*u64map_slot(&u->rules, key, NULL) = rule;
	return rule;
}

/* ---- mappings -------------------------------------------------------------- */

/* The file mapped at addr, from the last few the walks met in this
 * address space and layout (a stack touches a handful of files), else
 * asked of the caller.  NULL when there is none, or a file that cannot
 * be read; f NULL for code with no file at all. */
static const struct unw_fast_map *fm_find(struct unw_dwarf *u, const struct unw_user *in,
					  u64 addr)
{
	if (u->fm_space != in->space || u->fm_generation != in->generation) {
		u->fm_space = in->space;
		u->fm_generation = in->generation;
		u->fm_n = 0;
	}
	for (int i = 0; i < u->fm_n; i++)
		if (addr >= u->fm[i].start && addr < u->fm[i].end)
			return &u->fm[i];
	struct unw_map m;
	if (!in->find_map || in->find_map(in->find_ctx, addr, &m) < 0)
		return NULL;
	struct unw_file *f = unw_file_get(u, &m);
	if (!f && m.key)
		return NULL;
	int slot = u->fm_n < UNW_FAST_MAPS ? u->fm_n++ : (int)(u->fm_next++ % UNW_FAST_MAPS);
	u->fm[slot] = (struct unw_fast_map){ m.start, m.end, f ? unw_file_bias(f, &m) : 0, f };
	return &u->fm[slot];
}

/* ---- the walk -------------------------------------------------------------- */

#define FAST_PREFETCH 512u

/* 8 bytes at addr: from the copy, else as the backends read. */
static inline int fast_read(struct unw_walk *w, u64 addr, u64 *val)
{
	u64 off = addr - w->sp;
	if (addr >= w->sp && off < w->in->stack_size && w->in->stack_size - off >= 8) {
		memcpy(val, w->in->stack + off, 8);
		return 0;
	}
	return unw_read_word(w, addr, val);
}

/* The registers a walk carries from frame to frame. */
struct fast_regs {
	u64 pc, sp, rbp;
	bool rbp_ok;
};

/* A step out of a frame with no CFI, by its frame pointer as the kernel's
 * -g walk takes it: [rbp] the caller's rbp, [rbp + 8] the return address,
 * rbp + 16 the caller's sp.  Only an rbp that points into the copy (both
 * words there), at or above sp and aligned: anything else is no frame
 * pointer here.  False when the walk stops; an rbp beyond the copy's end
 * but within the stack's reach means the copy was too small. */
static bool fp_step(struct unw_walk *w, struct fast_regs *r)
{
	const struct unw_user *in = w->in;
	u64 fp = r->rbp, off = fp - w->sp;
	if (!r->rbp_ok || fp < r->sp || (fp & 7))
		return false;
	if (off > in->stack_size || in->stack_size - off < 16) {
		if (off < UNW_STACK_REACH)
			w->hit_end = true;
		return false;
	}
	u64 ra;
	memcpy(&ra, in->stack + off + 8, 8);
	if (ra == 0)
		return false;      /* the end of the stack */
	memcpy(&r->rbp, in->stack + off, 8);
	r->pc = ra;
	r->sp = fp + 16;
	w->u->stats.fp_steps++;
	return true;
}

/* A step by the frame's CFI rule.  1 stepped, 0 the walk stops there
 * (as both backends would), -1 the sample needs the backend. */
static int cfi_step(struct unw_walk *w, const struct fr_rule *rule, struct fast_regs *r)
{
	if ((rule->flags & FR_CFA_RBP) && !r->rbp_ok)
		return 0;          /* the CFA cannot be known: both stop */
	u64 cfa = ((rule->flags & FR_CFA_RBP) ? r->rbp : r->sp) + (u64)rule->cfa_off;
	if (cfa <= r->sp)
		return -1;         /* not a stack that unwinds upwards */
	u64 ra;
	if (rule->flags & FR_RBP_SAVED)
		r->rbp_ok = fast_read(w, cfa + (u64)rule->rbp_off, &r->rbp) == 0;
	if (fast_read(w, cfa + (u64)rule->ra_off, &ra) < 0 || ra == 0)
		return 0;          /* cut copy or end of stack */
	r->sp = cfa;
	r->pc = ra;
	return 1;
}

int unw_fast_walk(struct unw_dwarf *u, struct unw_walk *w, u64 *pcs, int max)
{
	const struct unw_user *in = w->in;
	struct fast_regs r = { .sp = w->sp };
	r.rbp_ok = unw_reg(in, 6, &r.rbp) == 0;
	if (unw_reg(in, 16, &r.pc) < 0)
		return -1;
	/* The copy comes cold from the data file and each frame's load waits
	 * for the one before (its address needs the last return address's
	 * rule): ask for the copy's first lines at once. */
	for (u64 off = 0; off < in->stack_size && off < FAST_PREFETCH; off += 64)
		__builtin_prefetch(in->stack + off);
	int n = 0;
	for (;;) {
		pcs[n++] = r.pc;
		if (n >= max)
			return n;
		/* A caller's rule is the call's: one before its return address. */
		u64 at = n == 1 ? r.pc : r.pc - 1;
		const struct unw_fast_map *m = fm_find(u, in, at);
		if (!m)
			return -1;
		struct fr_rule rule = { .kind = FR_NOCFI };
		if (m->f)
			fr_unpack(fr_get(u, m->f, at - m->bias), &rule);
		if (rule.kind == FR_END)
			return n;
		if (rule.kind == FR_NONE)
			return -1;
		int step = rule.kind == FR_NOCFI ? fp_step(w, &r) : cfi_step(w, &rule, &r);
		if (step <= 0)
			return step < 0 ? -1 : n;
	}
}
