/* inflate.c - copies of compressed debug files with their DWARF sections
 * inflated, kept across runs in a cache folder by build-id.  libdw
 * inflates every compressed section it is given when it opens a file
 * (distributions compress debug files: libc's, python3's), which was
 * most of the cost of inline frames on a -g dwarf report; an inflated
 * copy is mapped as it is.  The copy is written once, to a temporary
 * file renamed into place, so a reader sees it whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

char *inflate_cache_dir(const char *asked)
{
	if (!asked)
		asked = getenv("EMBER_CACHE_DIR");
	if (asked)
		return *asked ? xasprintf("%s/debug", asked) : NULL;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && *xdg == '/')
		return xasprintf("%s/ember/debug", xdg);
	return home && *home ? xasprintf("%s/.cache/ember/debug", home) : NULL;
}

/* Whether a copy would be worth it and still be read right: a DWARF
 * section is compressed, and an alt file (dwz), if any, is named by an
 * absolute path (a relative one is looked up beside the file read). */
static bool worth_a_copy(Elf *e)
{
	size_t shstrndx;
	bool compressed = false;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		if (!name)
			return false;
		if (!strncmp(name, ".debug_", 7) && sh.sh_type != SHT_NOBITS &&
		    (sh.sh_flags & SHF_COMPRESSED) && !dwarf_section_unread(name))
			compressed = true;
		if (!strcmp(name, ".gnu_debugaltlink")) {
			Elf_Data *d = elf_getdata(scn, NULL);
			if (!d || !d->d_buf || !d->d_size || *(const char *)d->d_buf != '/')
				return false;
		}
	}
	return compressed;
}

/* One section of src into out: inflated when compressed, and empty
 * (NOBITS) when no reader here looks at it. */
static bool copy_section(Elf *src, size_t shstrndx, Elf_Scn *scn, Elf *out)
{
	GElf_Shdr sh;
	const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(src, shstrndx, sh.sh_name) : NULL;
	if (!name)
		return false;
	if (sh.sh_type != SHT_NOBITS && dwarf_section_unread(name)) {
		sh.sh_type = SHT_NOBITS;
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		gelf_update_shdr(scn, &sh);
	} else if (sh.sh_type != SHT_NOBITS && (sh.sh_flags & SHF_COMPRESSED)) {
		if (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh))
			return false;
	}
	Elf_Scn *o = elf_newscn(out);
	if (!o)
		return false;
	if (sh.sh_type != SHT_NOBITS) {
		Elf_Data *d = elf_getdata(scn, NULL), *od = d ? elf_newdata(o) : NULL;
		if (d && !od)
			return false;
		if (od) {
			od->d_buf = d->d_buf;
			od->d_type = d->d_type;
			od->d_size = d->d_size;
			od->d_off = 0;
			od->d_align = d->d_align;
			od->d_version = d->d_version;
		}
	}
	return gelf_update_shdr(o, &sh) != 0;
}

/* Writes src, its sections inflated, as an ELF file on fd; libelf lays
 * it out.  Segments are left out: DWARF readers do not look at them. */
static bool write_inflated(Elf *src, int fd)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf *out = elf_begin(fd, ELF_C_WRITE, NULL);
	bool ok = out && gelf_getehdr(src, &eh) && gelf_newehdr(out, gelf_getclass(src)) &&
		  elf_getshdrstrndx(src, &shstrndx) == 0 && shstrndx < SHN_LORESERVE;
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(src, scn));)
		ok = copy_section(src, shstrndx, scn, out);
	if (ok) {
		eh.e_phoff = 0;
		eh.e_phnum = 0;
		eh.e_shstrndx = (GElf_Half)shstrndx;
		ok = gelf_update_ehdr(out, &eh) && elf_update(out, ELF_C_WRITE) >= 0;
	}
	if (out)
		elf_end(out);
	return ok;
}

/* mkdir -p of an absolute path; true when it is there. */
static bool make_dirs(const char *dir)
{
	char *p = xstrdup(dir);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	bool ok = mkdir(p, 0755) == 0 || errno == EEXIST;
	free(p);
	return ok;
}

/* Writes the inflated copy of the file open as e to want. */
static bool make_copy(Elf *e, const char *dir, const char *want)
{
	if (*dir != '/' || !make_dirs(dir))
		return false;
	char *tmp = xasprintf("%s.XXXXXX", want);
	int fd = mkstemp(tmp);
	bool ok = fd >= 0 && write_inflated(e, fd) && fchmod(fd, 0644) == 0;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (fd >= 0 && (!ok || rename(tmp, want) < 0)) {
		unlink(tmp);
		ok = false;
	}
	free(tmp);
	return ok;
}

char *inflated_copy(const char *dir, const char *path)
{
	if (!dir || !path)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	/* Private: inflating and emptying sections change only our copy. */
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	u8 id[SYM_BUILD_ID_MAX];
	int n = e && elf_kind(e) == ELF_K_ELF ? elf_file_build_id(e, id, sizeof(id)) : -1;
	char *want = NULL;
	if (n > 0 && worth_a_copy(e)) {
		char hex[2 * SYM_BUILD_ID_MAX + 1];
		sym_build_id_hex(id, (size_t)n, hex);
		want = xasprintf("%s/%s.debug", dir, hex);
		/* One that is there is whole (renamed into place), and a
		 * build-id names one file's contents. */
		u8 got[SYM_BUILD_ID_MAX];
		int m = sym_read_build_id(want, got, sizeof(got));
		bool have = m == n && !memcmp(got, id, (size_t)n);
		if (!have && !make_copy(e, dir, want)) {
			free(want);
			want = NULL;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return want;
}
