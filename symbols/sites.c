/* sites.c - the syscall instructions of an ELF file whose syscall number
 * is set just before them ("mov $257, %eax; ...; syscall"), found by
 * disassembling its code with capstone, and for each the cheapest place
 * a uprobe can read the call's path argument (record/strings.c): the
 * entry of the function holding it, when the argument register there
 * still holds what the function was called with, else the syscall
 * instruction itself.  No symbols needed: stripped files and the
 * loader's private wrappers included; the function's start comes from
 * its CFI (.eh_frame, through libdw).
 *
 * Why the entry: a uprobe on an instruction the kernel must single-step
 * out of line costs two traps; the first instruction of glibc's wrappers
 * (push) it emulates.  100,000 opens of a heap path took 1.8 s with a
 * probe on the mov before the syscall, 2.3 s on the syscall, 0.6 s on
 * open64's entry, against 0.33 s bare. */
#include <capstone/capstone.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

/* How far back from a syscall instruction the number is looked for:
 * glibc sets it within three instructions of the call. */
#define LOOK_BACK 8
/* How far into a function its entry is followed to a syscall. */
#define ENTRY_SPAN 4096

/* An executable section: its bytes, its address and its file offset. */
struct section {
	const u8 *code;
	size_t size;
	u64 addr, off;
};

/* What is kept of an instruction for the look back. */
struct seen {
	unsigned id;
	char ops[24];              /* its operands, as capstone prints them */
};

/* A file being scanned: two capstone handles (the sweep's without
 * details, the entry analysis's with them) and the file's CFI. */
struct scan {
	csh fast, detail;
	Dwarf_CFI *cfi;
	VEC(u64) funcs;            /* the symbol tables' functions, sorted */
	const struct sym_syscall_want *want;
	size_t nwant;
	struct sym_syscall_sites *out;
};

/* The number "mov eax, 0x101" sets; -1 when the instruction writes eax
 * otherwise (or breaks the flow: the number before it is not known);
 * -2 when it leaves eax alone. */
static long sets_number(const struct seen *in)
{
	static const char *const eax_dest[] = { "eax,", "rax,", "ax,", "al,", "ah," };
	switch (in->id) {
	case X86_INS_CALL: case X86_INS_RET: case X86_INS_JMP: case X86_INS_SYSCALL:
		return -1;
	}
	bool writes = false;
	for (size_t i = 0; i < ARRAY_SIZE(eax_dest); i++)
		writes |= !strncmp(in->ops, eax_dest[i], strlen(eax_dest[i]));
	if (!writes)
		return -2;
	char *end;
	long nr = in->id == X86_INS_MOV && !strncmp(in->ops, "eax, ", 5)
		  ? strtol(in->ops + 5, &end, 0) : -1;
	return nr >= 0 && *end == '\0' ? nr : -1;
}

/* The syscall number the instructions before ring[at] set; -1 unknown. */
static long number_before(const struct seen *ring, size_t at, size_t have)
{
	for (size_t back = 1; back <= LOOK_BACK && back <= have; back++) {
		long nr = sets_number(&ring[(at + LOOK_BACK + 1 - back) % (LOOK_BACK + 1)]);
		if (nr != -2)
			return nr;
	}
	return -1;
}

/* ---- The entry: does the path arrive there in an argument register? --- */

/* The C calling convention's argument registers, in order. */
static const x86_reg arg_regs[SYM_SITE_ARGS] = {
	X86_REG_RDI, X86_REG_RSI, X86_REG_RDX, X86_REG_RCX, X86_REG_R8, X86_REG_R9,
};

/* The 64-bit register reg is part of (EDI, DI and DIL are RDI), as an
 * index 0..15; -1 for any other register. */
static int gpr(x86_reg reg)
{
	static const x86_reg families[16][4] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};
	for (int g = 0; g < 16; g++)
		for (int i = 0; i < 4; i++)
			if (families[g][i] == reg)
				return g;
	return -1;
}

/* One instruction's effect on origin[] (which argument's entry value
 * each register holds, -1 none): a 64-bit register copy carries it, any
 * other write and a call's clobbers end it; after a ret or jmp the code
 * that follows is reached from elsewhere, and nothing is known. */
static void track(csh cs, const cs_insn *insn, signed char origin[16])
{
	const cs_x86 *x = &insn->detail->x86;
	if (insn->id == X86_INS_RET || insn->id == X86_INS_JMP) {
		memset(origin, -1, 16);
		return;
	}
	if (insn->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG && x->operands[0].size == 8) {
		int d = gpr(x->operands[0].reg), s = gpr(x->operands[1].reg);
		if (d >= 0)
			origin[d] = s >= 0 ? origin[s] : -1;
		return;
	}
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) == CS_ERR_OK)
		for (int i = 0; i < nwr; i++)
			if (gpr(wr[i]) >= 0)
				origin[gpr(wr[i])] = -1;
	if (insn->id == X86_INS_CALL) {
		static const x86_reg clobbered[] = { X86_REG_RAX, X86_REG_RCX, X86_REG_RDX,
			X86_REG_RSI, X86_REG_RDI, X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11 };
		for (size_t i = 0; i < ARRAY_SIZE(clobbered); i++)
			origin[gpr(clobbered[i])] = -1;
	}
}

/* Which argument register holds, on entry of the function at start, what
 * register reg holds at the syscall at site (the instructions between
 * followed in address order); -1 when none does. */
static int entry_argument(struct scan *sc, const struct section *sec, u64 start, u64 site,
			  x86_reg reg)
{
	signed char origin[16];
	memset(origin, -1, sizeof(origin));
	for (int i = 0; i < SYM_SITE_ARGS; i++)
		origin[gpr(arg_regs[i])] = (signed char)i;
	const u8 *p = sec->code + (start - sec->addr);
	size_t size = site - start;
	u64 a = start;
	cs_insn *insn = cs_malloc(sc->detail);
	while (size && cs_disasm_iter(sc->detail, &p, &size, &a, insn))
		track(sc->detail, insn, origin);
	cs_free(insn, 1);
	return size ? -1 : origin[gpr(reg)];
}

/* The CFI row (its range [*start, *end)) covering addr; false when none. */
static bool cfi_row(Dwarf_CFI *cfi, u64 addr, Dwarf_Addr *start, Dwarf_Addr *end)
{
	Dwarf_Frame *frame;
	bool signal;
	if (dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return false;
	int rc = dwarf_frame_info(frame, start, end, &signal);
	free(frame);
	return rc >= 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;
	return x < y ? -1 : x > y;
}

static bool add_function(const char *name, u64 value, void *ctx)
{
	struct scan *sc = ctx;
	VEC_PUSH(&sc->funcs, value);
	return false;
}

/* The functions the file's symbol tables name (.dynsym names libc's
 * wrappers, private ones too), sorted for function_start. */
static void load_functions(struct scan *sc, Elf *elf)
{
	sym_elf_each_function(elf, add_function, sc);
	if (sc->funcs.n)
		qsort(sc->funcs.v, sc->funcs.n, sizeof(u64), cmp_u64);
}

static bool names_function(const struct scan *sc, u64 addr)
{
	return sc->funcs.n && bsearch(&addr, sc->funcs.v, sc->funcs.n, sizeof(u64), cmp_u64);
}

/* The start of the function holding addr: libdw hands out the rows of a
 * function's CFI, not where its FDE begins, so the rows are walked back
 * to a symbol's address or the first row no row precedes (the alignment
 * padding between functions has none).  Where two nameless functions'
 * rows touch, the walk goes on into the one before; the entry analysis
 * stops at its ret or jmp and finds nothing, and the syscall instruction
 * is probed instead.  0 when addr has no CFI. */
static u64 function_start(const struct scan *sc, u64 addr)
{
	Dwarf_Addr start, end;
	if (!sc->cfi || !cfi_row(sc->cfi, addr, &start, &end))
		return 0;
	while (start && addr - start < ENTRY_SPAN && !names_function(sc, start)) {
		Dwarf_Addr s2, e2;
		if (!cfi_row(sc->cfi, start - 1, &s2, &e2) || e2 != start)
			break;
		start = s2;
	}
	return start;
}

/* The site of syscall w->nr at addr in sec, with its entry when the path
 * is there. */
static void add_site(struct scan *sc, const struct sym_syscall_want *w,
		     const struct section *sec, u64 addr)
{
	struct sym_syscall_site s = { .offset = sec->off + (addr - sec->addr), .nr = w->nr,
				      .arg = w->arg, .entry_arg = -1 };
	u64 start = function_start(sc, addr);
	if (start >= sec->addr && start < addr && addr - start <= ENTRY_SPAN &&
	    addr < sec->addr + sec->size) {
		s.entry_arg = entry_argument(sc, sec, start, addr,
					     w->arg ? X86_REG_RSI : X86_REG_RDI);
		s.entry = sec->off + (start - sec->addr);
	}
	VEC_PUSH(&sc->out->v, s);
}

static const struct sym_syscall_want *wanted(const struct scan *sc, long nr)
{
	for (size_t i = 0; i < sc->nwant; i++)
		if (sc->want[i].nr == nr)
			return &sc->want[i];
	return NULL;
}

/* The sites of one executable section, appended to sc->out. */
static void scan_code(struct scan *sc, const struct section *sec)
{
	const u8 *code = sec->code;
	size_t size = sec->size;
	u64 addr = sec->addr;
	cs_insn *insn = cs_malloc(sc->fast);
	struct seen ring[LOOK_BACK + 1];
	size_t at = 0, have = 0;
	while (size) {
		const u8 *p = code;
		u64 a = addr;
		if (!cs_disasm_iter(sc->fast, &p, &size, &a, insn)) {
			/* Not code (padding, a jump table): step over a byte. */
			code++, size--, addr++, have = 0;
			continue;
		}
		struct seen *s = &ring[at];
		s->id = insn->id;
		size_t len = strnlen(insn->op_str, sizeof(s->ops) - 1);
		memcpy(s->ops, insn->op_str, len);   /* "eax, 0x101" fits */
		s->ops[len] = '\0';
		if (insn->id == X86_INS_SYSCALL) {
			long nr = number_before(ring, at, have);
			const struct sym_syscall_want *w = nr >= 0 ? wanted(sc, nr) : NULL;
			if (w)
				add_site(sc, w, sec, addr);
			sc->out->unknown += nr < 0;
		}
		code = p, addr = a;
		at = (at + 1) % (LOOK_BACK + 1);
		have++;
	}
	cs_free(insn, 1);
}

static void scan_sections(struct scan *sc, Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		scan_code(sc, &(struct section){ d->d_buf, d->d_size, sh.sh_addr, sh.sh_offset });
	}
}

int sym_syscall_sites(const char *path, const struct sym_syscall_want *want, size_t n,
		      struct sym_syscall_sites *out)
{
	int fd, rc = -1;
	memset(out, 0, sizeof(*out));
	Elf *elf = sym_elf_open(path, &fd);
	if (!elf)
		return -1;
	GElf_Ehdr eh;
	struct scan sc = { .want = want, .nwant = n, .out = out };
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		err_set("%s: not an x86-64 ELF file", path);
	} else if (cs_open(CS_ARCH_X86, CS_MODE_64, &sc.fast) != CS_ERR_OK ||
		   cs_open(CS_ARCH_X86, CS_MODE_64, &sc.detail) != CS_ERR_OK) {
		err_set("capstone cannot disassemble x86-64");
	} else {
		cs_option(sc.detail, CS_OPT_DETAIL, CS_OPT_ON);
		sc.cfi = dwarf_getcfi_elf(elf);
		load_functions(&sc, elf);
		scan_sections(&sc, elf);
		VEC_FREE(&sc.funcs);
		if (sc.cfi)
			dwarf_cfi_end(sc.cfi);
		rc = 0;
	}
	if (sc.fast)
		cs_close(&sc.fast);
	if (sc.detail)
		cs_close(&sc.detail);
	elf_end(elf);
	close(fd);
	return rc;
}

void sym_syscall_sites_free(struct sym_syscall_sites *s)
{
	VEC_FREE(&s->v);
}
