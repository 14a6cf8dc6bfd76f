/* buildid.c - GNU build-ids of ELF files (through libelf) and of the
 * running kernel, which names the exact binary a profile came from. */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbols.h"

static int copy_id(const void *desc, size_t n, u8 *id, size_t cap)
{
	if (n == 0 || n > cap) {
		err_set("build-id of %zu bytes does not fit in %zu", n, cap);
		return -1;
	}
	memcpy(id, desc, n);
	return (int)n;
}

int sym_notes_build_id(const void *notes, size_t len, u8 *id, size_t cap)
{
	const u8 *p = notes, *end = p + len;
	while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;          /* same 3 x u32 layout in both classes */
		memcpy(&nh, p, sizeof(nh));
		size_t name_sz = (nh.n_namesz + 3) & ~3u, desc_sz = (nh.n_descsz + 3) & ~3u;
		const u8 *name = p + sizeof(nh), *desc = name + name_sz;
		if (name_sz > (size_t)(end - name) || desc_sz > (size_t)(end - desc))
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4))
			return copy_id(desc, nh.n_descsz, id, cap);
		p = desc + desc_sz;
	}
	err_set("no GNU build-id note");
	return -1;
}

int sym_kernel_build_id(u8 *id, size_t cap)
{
	size_t len;
	char *notes = read_text_file("/sys/kernel/notes", &len);
	if (!notes)
		return -1;
	int n = sym_notes_build_id(notes, len, id, cap);
	free(notes);
	if (n < 0)
		err_prefix("/sys/kernel/notes");
	return n;
}

int sym_module_build_id(const char *name, u8 *id, size_t cap)
{
	char *path = xasprintf("/sys/module/%s/notes/.note.gnu.build-id", name);
	size_t len;
	char *notes = read_text_file(path, &len);
	int n = notes ? sym_notes_build_id(notes, len, id, cap) : -1;
	if (notes && n < 0)
		err_prefix("%s", path);
	free(notes);
	free(path);
	return n;
}

/* Walks the notes of one Elf_Data, as libelf decoded them. */
static int data_build_id(Elf_Data *d, u8 *id, size_t cap)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)d->d_buf + name_off;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4))
			return copy_id((const u8 *)d->d_buf + desc_off, nh.n_descsz,
				       id, cap);
		off = next;
	}
	return -1;
}

/* Program headers are present in every loadable file and cheap to read;
 * sections are the fallback for files without them (relocatables). */
static int elf_phdr_build_id(Elf *elf, u8 *id, size_t cap)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
						   ph.p_filesz, ELF_T_NHDR);
		int got = d ? data_build_id(d, id, cap) : -1;
		if (got > 0)
			return got;
	}
	return -1;
}

static int elf_shdr_build_id(Elf *elf, u8 *id, size_t cap)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		int got = d ? data_build_id(d, id, cap) : -1;
		if (got > 0)
			return got;
	}
	return -1;
}

int sym_read_build_id(const char *path, u8 *id, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int got = -1;
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		got = elf_phdr_build_id(elf, id, cap);
		if (got < 0)
			got = elf_shdr_build_id(elf, id, cap);
	}
	if (got < 0)
		err_set("%s: %s", path, elf && elf_kind(elf) == ELF_K_ELF
			? "no GNU build-id note" : "not an ELF file");
	if (elf)
		elf_end(elf);
	close(fd);
	return got;
}

void sym_build_id_hex(const u8 *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = '\0';
}
