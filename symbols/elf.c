/* elf.c - what symbols/ needs from an ELF file, read through libelf:
 * build-id notes, symbol tables, PLT stubs, load segments, debuglink.
 * libelf parses; the checks here keep a corrupt file's bogus counts,
 * links and offsets from turning into crashes or huge loops. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

static void elf_init_once(void)
{
	/* elf_version() is idempotent and cheap; every entry point calls it. */
	elf_version(EV_CURRENT);
}

int elf_file_open(struct elf_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	elf_init_once();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set_errno("cannot open %s", path);
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err_set("%s: not an ELF file%s%s", path, e ? "" : ": ",
			e ? "" : elf_errmsg(-1));
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	f->fd = fd;
	f->elf = e;
	return 0;
}

int elf_file_open_memory(struct elf_file *f, const void *image, size_t size)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	elf_init_once();
	/* libelf wants a writable buffer it may keep; give it our own copy. */
	f->image = xmalloc(size);
	memcpy(f->image, image, size);
	f->elf = elf_memory(f->image, size);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		err_set("in-memory image is not ELF");
		elf_file_close(f);
		return -1;
	}
	return 0;
}

void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->image);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

/* Looks through one block of notes for NT_GNU_BUILD_ID. */
static int build_id_in_notes(Elf_Data *data, u8 *id, size_t cap)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while (data && off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(base + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    desc_off + nh.n_descsz <= data->d_size) {
			size_t n = MIN((size_t)nh.n_descsz, cap);
			memcpy(id, base + desc_off, n);
			return (int)n;
		}
		off = next;
	}
	return -1;
}

int elf_file_build_id(Elf *e, u8 *id, size_t cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		int n = build_id_in_notes(elf_getdata(scn, NULL), id, cap);
		if (n > 0)
			return n;
	}
	/* Files without section headers still have their PT_NOTE segments. */
	size_t nph = 0;
	if (elf_getphdrnum(e, &nph) < 0)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
						   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		int n = build_id_in_notes(d, id, cap);
		if (n > 0)
			return n;
	}
	return -1;
}

static Elf_Scn *find_section_by_type(Elf *e, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

static Elf_Scn *find_section_by_name(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

bool elf_file_has_section(Elf *e, Elf64_Word type)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section_by_type(e, type, &sh);
	/* A debug file's stripped twin keeps the header with no contents. */
	return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

/* Whether section ndx is a text section: labels count only there. */
static bool is_text_section(Elf *e, size_t shstrndx, size_t ndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(e, ndx);
	if (!scn || !gelf_getshdr(scn, &sh))
		return false;
	const char *n = elf_strptr(e, shstrndx, sh.sh_name);
	return n && strstr(n, ".text");
}

/* The symbols perf lists: functions (and GNU ifuncs), objects, and
 * untyped labels in text sections; never undefined ones. */
static bool wanted_symbol(Elf *e, size_t shstrndx, const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);
	/* Absolute symbols (version names like GCC_12.0.0) are not code. */
	if (s->st_name == 0 || s->st_shndx == SHN_UNDEF || s->st_shndx == SHN_ABS)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT)
		return true;
	return type == STT_NOTYPE && s->st_shndx < SHN_LORESERVE && is_text_section(e, shstrndx, s->st_shndx);
}

size_t elf_file_add_symbols(Elf *e, Elf64_Word type, bool secondary,
			    struct symtab_builder *b)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section_by_type(e, type, &sh);
	size_t shstrndx;
	if (!scn || sh.sh_type == SHT_NOBITS || elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || entsize == 0)
		return 0;
	/* Count from the bytes actually there, never from sh_size alone. */
	size_t count = data->d_size / entsize, added = 0;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s) || !wanted_symbol(e, shstrndx, &s))
			continue;
		const char *name = elf_strptr(e, sh.sh_link, s.st_name);
		if (!name)
			continue;
		stb_add(b, s.st_value, s.st_size, name, GELF_ST_BIND(s.st_info), secondary);
		added++;
	}
	return added;
}

/* The name of dynamic symbol ndx of the table at section dynsym_ndx. */
static const char *dynsym_name(Elf *e, size_t dynsym_ndx, size_t ndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(e, dynsym_ndx);
	if (ndx == 0 || !scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
		return NULL;
	GElf_Sym s;
	if (!gelf_getsym(elf_getdata(scn, NULL), (int)ndx, &s))
		return NULL;
	return elf_strptr(e, sh.sh_link, s.st_name);
}

#define PLT_ENTRY_SIZE 16   /* x86-64 lazy and IBT PLT stubs */

/* Stub i of the PLT jumps through the GOT slot of relocation i of
 * .rela.plt; .plt.sec (IBT) holds the stubs without .plt's header. */
size_t elf_file_add_plt(Elf *e, struct symtab_builder *b)
{
	GElf_Shdr rel_sh, plt_sh;
	Elf_Scn *rel = find_section_by_name(e, ".rela.plt", &rel_sh);
	Elf_Scn *plt = find_section_by_name(e, ".plt.sec", &plt_sh);
	u64 first = 0;
	if (!plt) {
		plt = find_section_by_name(e, ".plt", &plt_sh);
		first = PLT_ENTRY_SIZE;
	}
	if (!rel || !plt || rel_sh.sh_type != SHT_RELA || plt_sh.sh_type != SHT_PROGBITS)
		return 0;
	Elf_Data *d = elf_getdata(rel, NULL);
	size_t entsize = gelf_fsize(e, ELF_T_RELA, 1, EV_CURRENT);
	if (!d || entsize == 0)
		return 0;
	size_t count = d->d_size / entsize, added = 0;
	for (size_t i = 0; i < count; i++) {
		u64 at = first + i * PLT_ENTRY_SIZE;
		GElf_Rela r;
		if (at + PLT_ENTRY_SIZE > plt_sh.sh_size)
			break;
		if (!gelf_getrela(d, (int)i, &r))
			continue;
		/* Stubs of IRELATIVE relocations name no symbol: perf 6.1 shows
		 * them as a bare "@plt", and so do we. */
		const char *name = dynsym_name(e, rel_sh.sh_link, GELF_R_SYM(r.r_info));
		if (!name)
			name = "";
		/* Demangled before the suffix, as perf shows "ns::f@plt". */
		char *dem = b->demangle ? sym_demangle_name(name) : NULL;
		char *label = xasprintf("%s@plt", dem ? dem : name);
		stb_add_plain(b, plt_sh.sh_addr + at, PLT_ENTRY_SIZE, label, STB_GLOBAL, true);
		free(label);
		free(dem);
		added++;
	}
	return added;
}

int elf_file_loads(Elf *e, struct elf_load **loads)
{
	*loads = NULL;
	size_t nph = 0;
	if (elf_getphdrnum(e, &nph) < 0)
		return -1;
	VEC(struct elf_load) v = {0};
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		struct elf_load l = { ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz,
				      ph.p_align };
		VEC_PUSH(&v, l);
	}
	*loads = v.v;
	return (int)v.n;
}

char *elf_file_debuglink(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section_by_name(e, ".gnu_debuglink", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_buf || d->d_size == 0)
		return NULL;
	size_t len = strnlen(d->d_buf, d->d_size);
	if (len == 0 || len == d->d_size || memchr(d->d_buf, '/', len))
		return NULL;
	char *name = xmalloc(len + 1);
	memcpy(name, d->d_buf, len);
	name[len] = '\0';
	return name;
}
