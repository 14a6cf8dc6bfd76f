/* sites.c - the syscall instructions of an ELF file whose syscall number
 * is set just before them ("mov $257, %eax; ...; syscall"), found by
 * disassembling its code with capstone.  A uprobe there sees the very
 * registers the kernel takes as the syscall's arguments, so it can fetch
 * the string a path argument points at before the kernel reads it
 * (record/strings.c): no symbols needed, stripped files and the loader's
 * private wrappers included. */
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

/* How far back from a syscall instruction the number is looked for:
 * glibc sets it within three instructions of the call. */
#define LOOK_BACK 8

/* What is kept of an instruction for the look back. */
struct seen {
	unsigned id;
	char ops[24];              /* its operands, as capstone prints them */
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

static bool wanted(long nr, const int *nrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (nrs[i] == nr)
			return true;
	return false;
}

/* The sites of one executable section, appended to out. */
static void scan_code(csh cs, const u8 *code, size_t size, u64 addr, u64 off,
		      const int *nrs, size_t n, struct sym_syscall_sites *out)
{
	const u64 base = addr;     /* off is the file offset of base */
	cs_insn *insn = cs_malloc(cs);
	struct seen ring[LOOK_BACK + 1];
	size_t at = 0, have = 0;
	while (size) {
		const u8 *p = code;
		u64 a = addr;
		if (!cs_disasm_iter(cs, &p, &size, &a, insn)) {
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
			if (nr >= 0 && wanted(nr, nrs, n))
				VEC_PUSH(&out->v, ((struct sym_syscall_site){ off + (addr - base), (int)nr }));
			else
				out->unknown += nr < 0;
		}
		code = p, addr = a;
		at = (at + 1) % (LOOK_BACK + 1);
		have++;
	}
	cs_free(insn, 1);
}

int sym_syscall_sites(const char *path, const int *nrs, size_t n, struct sym_syscall_sites *out)
{
	int fd;
	memset(out, 0, sizeof(*out));
	Elf *elf = sym_elf_open(path, &fd);
	if (!elf)
		return -1;
	GElf_Ehdr eh;
	csh cs;
	int rc = -1;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		err_set("%s: not an x86-64 ELF file", path);
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		err_set("capstone cannot disassemble x86-64");
		goto out;
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		scan_code(cs, d->d_buf, d->d_size, sh.sh_addr, sh.sh_offset, nrs, n, out);
	}
	cs_close(&cs);
	rc = 0;
out:
	elf_end(elf);
	close(fd);
	return rc;
}

void sym_syscall_sites_free(struct sym_syscall_sites *s)
{
	VEC_FREE(&s->v);
}
