/* byname.c - a function's file offset by its name, for placing uprobes
 * (record -e u:PATH:SYMBOL): the symbol tables read with libelf, the
 * address turned into an offset through the loadable segments. */
#include <fcntl.h>
#include <stdio.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

/* "malloc" matches "malloc" and the versioned "malloc@@GLIBC_2.2.5". */
static bool name_matches(const char *sym, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(sym, name, n) && (sym[n] == '\0' || sym[n] == '@');
}

/* Calls fn with each defined function of table scn (its name as the
 * table has it, versioned or not, and its value) until fn says stop;
 * true when it did. */
static bool each_in_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, sym_func_fn fn,
			  void *ctx)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		const char *s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if ((type == STT_FUNC || type == STT_GNU_IFUNC) && s && *s && fn(s, sym.st_value, ctx))
			return true;
	}
	return false;
}

void sym_elf_each_function(Elf *elf, sym_func_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    each_in_table(elf, scn, &sh, fn, ctx))
			return;
	}
}

struct wanted {
	const char *name;
	u64 value;
};

static bool is_wanted(const char *name, u64 value, void *ctx)
{
	struct wanted *w = ctx;
	if (name_matches(name, w->name))
		w->value = value;
	return w->value != 0;
}

/* The value of the first defined function called name in scn, or 0. */
static u64 find_in_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	struct wanted w = { name, 0 };
	each_in_table(elf, scn, sh, is_wanted, &w);
	return w.value;
}

static u64 find_symbol(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	u64 v = 0;
	/* .symtab first: it names the local functions .dynsym leaves out. */
	for (int pass = 0; pass < 2 && !v; pass++)
		while (!v && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				v = find_in_table(elf, scn, &sh, name);
		}
	return v;
}

/* The file offset of address addr, through the PT_LOAD holding it. */
int sym_elf_offset(Elf *elf, u64 addr, u64 *off)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* The ELF file at path, opened for reading; NULL with err_set() (*fd
 * closed) when it is none. */
Elf *sym_elf_open(const char *path, int *fd)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		err_set_errno("%s", path);
		return NULL;
	}
	Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err_set("%s: not an ELF file", path);
		if (elf)
			elf_end(elf);
		close(*fd);
		return NULL;
	}
	return elf;
}

int sym_func_offset(const char *path, const char *name, u64 *off)
{
	int fd, rc = -1;
	Elf *elf = sym_elf_open(path, &fd);
	if (!elf)
		return -1;
	u64 addr = find_symbol(elf, name);
	if (!addr)
		err_set("no function '%s' in %s (see nm -D %s)", name, path, path);
	else if (sym_elf_offset(elf, addr, off) < 0)
		err_set("%s: function '%s' at %#llx lies in no loadable segment", path, name,
			(unsigned long long)addr);
	else
		rc = 0;
	elf_end(elf);
	close(fd);
	return rc;
}

int sym_entry_offset(const char *path, u64 *off)
{
	int fd, rc = -1;
	Elf *elf = sym_elf_open(path, &fd);
	if (!elf)
		return -1;
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		err_set("%s: not an ELF file", path);
	else if (sym_elf_offset(elf, eh.e_entry, off) < 0)
		err_set("%s: its entry point is in no loadable segment", path);
	else
		rc = 0;
	elf_end(elf);
	close(fd);
	return rc;
}

/* sym_each_function's callers' fn, with the version cut off. */
struct named {
	sym_name_fn fn;
	void *ctx;
};

static bool hand_name(const char *s, u64 value, void *ctx)
{
	struct named *n = ctx;
	char name[512];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(s, "@"), s);
	n->fn(name, n->ctx);
	return false;
}

int sym_each_function(const char *path, sym_name_fn fn, void *ctx)
{
	int fd;
	Elf *elf = sym_elf_open(path, &fd);
	if (!elf)
		return -1;
	sym_elf_each_function(elf, hand_name, &(struct named){ fn, ctx });
	elf_end(elf);
	close(fd);
	return 0;
}
