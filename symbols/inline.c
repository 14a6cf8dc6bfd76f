/* inline.c - inline frames and source lines of a file address through
 * libdw: the functions inlined there (innermost first) and file:line.
 * The DWARF is the file's own or its separate debug file's, opened
 * without the sections these never read (libdw inflates every compressed
 * one it is given); results are cached per address, as a profile asks
 * for the same few thousand. */
#include "symbols/symbols-internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One opening of a DWARF file. */
struct dwarf_open {
	int fd;
	Elf *elf;
	Dwarf *dwarf;
};

/* A dso's DWARF and what was asked of it: one opening for inline scopes
 * (without line tables), another made for source lines when asked. */
struct sym_dwarf {
	char *path;                  /* the file the DWARF came from */
	struct dwarf_open scopes, lines;
	bool lines_tried;
	Dwarf *dwarf;                /* scopes.dwarf */
	struct u64map frames;        /* addr -> (first << 16 | count) + 1 */
	VEC(const struct sym *) flat;
	struct u64map names;         /* name hash -> index + 1 in owned */
	VEC(struct sym *) owned;     /* the "NAME (inlined)" symbols */
	struct u64map line_at;       /* addr -> index + 1 in srclines, or
					NO_LINE when the DWARF has none */
	VEC(char *) srclines;        /* "file:line", one per address */
	struct u64map call_at;       /* addr << 5 | depth -> as line_at: the
					call site of an inline chain's frame */
};

#define NO_LINE UINT64_MAX

/* Sections libdw would inflate (distributions compress debug files)
 * but neither scopes nor source lines read; the line tables too when
 * only scopes are wanted.  A fifth to a third of libc's DWARF. */
static bool unread_section(const char *name, bool lines)
{
	static const char *const never[] = {
		".debug_loclists", ".debug_loc", ".debug_macro", ".debug_macinfo",
		".debug_pubnames", ".debug_pubtypes", ".debug_frame",
	};
	for (size_t i = 0; i < ARRAY_SIZE(never); i++)
		if (!strcmp(name, never[i]))
			return true;
	return !lines && (!strcmp(name, ".debug_line") || !strcmp(name, ".debug_line_str"));
}

/* Marks those sections empty (NOBITS) in our private mapping, which
 * dwarf_begin_elf skips. */
static void hide_unread(Elf *e, bool lines)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) < 0)
		return;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		if (name && sh.sh_type != SHT_NOBITS && unread_section(name, lines)) {
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
		}
	}
}

static void dwarf_close(struct dwarf_open *o)
{
	if (o->dwarf)
		dwarf_end(o->dwarf);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	*o = (struct dwarf_open){ .fd = -1 };
}

static bool dwarf_open_file(struct dwarf_open *o, const char *path, bool lines)
{
	*o = (struct dwarf_open){ .fd = -1 };
	if (!path || (o->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	elf_version(EV_CURRENT);
	/* Private and writable: hiding sections changes only our copy. */
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (o->elf && elf_kind(o->elf) == ELF_K_ELF) {
		hide_unread(o->elf, lines);
		o->dwarf = dwarf_begin_elf(o->elf, DWARF_C_READ, NULL);
	}
	if (!o->dwarf)
		dwarf_close(o);
	return o->dwarf != NULL;
}

static bool open_dwarf(struct sym_dwarf *dw, const char *path)
{
	if (!dwarf_open_file(&dw->scopes, path, false))
		return false;
	dw->dwarf = dw->scopes.dwarf;
	dw->path = xstrdup(path);
	return true;
}

/* The DWARF with line tables, opened on the first source line asked. */
static Dwarf *lines_dwarf(struct sym_dwarf *dw)
{
	if (!dw->lines_tried) {
		dw->lines_tried = true;
		dwarf_open_file(&dw->lines, dw->path, true);
	}
	return dw->lines.dwarf;
}

/* The file's DWARF: where its symbols came from, the file, then the
 * build-id debug directory.  Looked for once. */
static struct sym_dwarf *dso_dwarf(struct sym_ctx *c, struct sym_dso *d)
{
	if (d->dwarf_tried)
		return d->dwarf;
	d->dwarf_tried = true;
	struct sym_dwarf *dw = xcalloc(1, sizeof(*dw));
	dw->scopes.fd = dw->lines.fd = -1;
	bool ok = open_dwarf(dw, d->sym_file) || open_dwarf(dw, d->path);
	if (!ok && d->build_id_size) {
		char hex[2 * SYM_BUILD_ID_MAX + 1];
		sym_build_id_hex(d->build_id, d->build_id_size, hex);
		char *p = xasprintf("%s/.build-id/%.2s/%s.debug", c->debug_dir, hex, hex + 2);
		ok = open_dwarf(dw, p);
		free(p);
	}
	u64map_init(&dw->frames);
	u64map_init(&dw->names);
	u64map_init(&dw->line_at);
	u64map_init(&dw->call_at);
	d->dwarf = dw;
	if (!ok) {
		sym_dwarf_free(dw);
		d->dwarf = NULL;
	}
	return d->dwarf;
}

void sym_dwarf_free(struct sym_dwarf *dw)
{
	if (!dw)
		return;
	for (size_t i = 0; i < dw->owned.n; i++) {
		free((char *)dw->owned.v[i]->name);
		free(dw->owned.v[i]);
	}
	VEC_FREE(&dw->owned);
	VEC_FREE(&dw->flat);
	for (size_t i = 0; i < dw->srclines.n; i++)
		free(dw->srclines.v[i]);
	VEC_FREE(&dw->srclines);
	u64map_free(&dw->line_at);
	u64map_free(&dw->call_at);
	u64map_free(&dw->frames);
	u64map_free(&dw->names);
	dwarf_close(&dw->scopes);
	dwarf_close(&dw->lines);
	free(dw->path);
	free(dw);
}

static u64 hash_str(const char *s)
{
	u64 h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (u8)*s) * 1099511628211ULL;
	return h;
}

/* The symbol "NAME (inlined)", made once per name and dso; it spans its
 * base symbol so that offsets within it still make sense. */
static const struct sym *inline_sym(struct sym_dwarf *dw, const char *name,
				    const struct sym *base)
{
	char *full = xasprintf("%s (inlined)", name);
	bool created;
	u64 *slot = u64map_slot(&dw->names, hash_str(full), &created);
	if (!created && !strcmp(dw->owned.v[*slot - 1]->name, full)) {
		free(full);
		return dw->owned.v[*slot - 1];
	}
	struct sym *s = xcalloc(1, sizeof(*s));
	s->name = full;
	if (base) {
		s->start = base->start;
		s->size = base->size;
	}
	VEC_PUSH(&dw->owned, s);
	if (created)
		*slot = dw->owned.n;
	return s;
}

/* A C name can be compared with DWARF's; C++ and Rust ones are demangled
 * with their scopes and arguments, which DWARF names lack. */
static bool plain_name(const char *s)
{
	return !strchr(s, '(') && !strchr(s, ':') && !strchr(s, '<');
}

/* A function's name as the symbol table has it: the linkage name when the
 * source gave it another (glibc's hidden aliases), else DW_AT_name.
 * Mangled linkage names are left for the source name. */
static const char *scope_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *link = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		link = dwarf_formstring(&attr);
	if (link && strncmp(link, "_Z", 2) && strncmp(link, "_R", 2))
		return link;
	return dwarf_diename(die);
}

#define MAX_SCOPES 32

/* The function scopes at an address, innermost first: each one's name
 * and DIE (whose call site is where the next one calls it). */
struct scopes {
	const char *names[MAX_SCOPES];
	Dwarf_Die dies[MAX_SCOPES];
	int k;
};

/* Adds the function scopes of dies[from..n) to sc (innermost first), up
 * to the subprogram; true when it was reached. */
static bool add_scopes(Dwarf_Die *dies, int from, int n, struct scopes *sc)
{
	for (int i = from; i < n && sc->k < MAX_SCOPES; i++) {
		int tag = dwarf_tag(&dies[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		const char *name = scope_name(&dies[i]);
		/* A scope inlined into a function of the same name adds no
		 * frame a reader could tell apart (perf shows one); the
		 * outer one's call site is the one that counts. */
		if (name && sc->k > 0 && !strcmp(sc->names[sc->k - 1], name))
			sc->k--;
		if (name) {
			sc->names[sc->k] = name;
			sc->dies[sc->k++] = dies[i];
		}
		if (tag == DW_TAG_subprogram)
			return true;
	}
	return false;
}

/* The named function scopes at addr, innermost first, up to and with the
 * subprogram; *subprogram says whether one was found (the last).  At an
 * inlined instance, dwarf_getscopes goes on with the inlined function's
 * own definition: the functions it was inlined into are the instance's
 * parents in the tree, which dwarf_getscopes_die gives. */
static int function_scopes(Dwarf *dwarf, u64 addr, struct scopes *sc, bool *subprogram)
{
	Dwarf_Die cu, *scopes = NULL, *outer = NULL;
	sc->k = 0;
	*subprogram = false;
	if (!dwarf || !dwarf_addrdie(dwarf, addr, &cu))
		return 0;
	int n = dwarf_getscopes(&cu, addr, &scopes);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			*subprogram = add_scopes(scopes, i, i + 1, sc);
			break;
		}
		if (tag == DW_TAG_inlined_subroutine) {
			int m = dwarf_getscopes_die(&scopes[i], &outer);
			*subprogram = add_scopes(outer, 0, m, sc);
			break;
		}
	}
	free(outer);
	free(scopes);
	return sc->k;
}

/* Appends the frames of addr to flat; returns how many (0: nothing to
 * change, the base frame stands as it is). */
static int compute_frames(struct sym_dwarf *dw, u64 addr, const struct sym *base, bool rename)
{
	struct scopes sc;
	bool subprogram;
	int k = function_scopes(dw->dwarf, addr, &sc, &subprogram);
	const char *const *names = sc.names;
	if (k == 0 || (k == 1 && subprogram && (!rename || !strcmp(names[0], base->name))))
		return 0;
	size_t first = dw->flat.n;
	int inlined = subprogram ? k - 1 : k;
	for (int i = 0; i < inlined; i++)
		VEC_PUSH(&dw->flat, inline_sym(dw, names[i], base));
	/* The function itself: an alias (the symbol is not the function's
	 * name) shows under the function's name, as perf shows it. */
	bool renamed = rename && plain_name(base->name) && strcmp(names[k - 1], base->name);
	VEC_PUSH(&dw->flat, renamed ? inline_sym(dw, names[k - 1], base) : base);
	return (int)(dw->flat.n - first);
}

int sym_inline_frames(struct sym_ctx *c, struct sym_dso *d, u64 file_addr,
		      const struct sym *base, bool rename, const struct sym **out, int max)
{
	if (!d || d->kind != DSO_FILE || !d->trusted || !base)
		return 0;
	struct sym_dwarf *dw = dso_dwarf(c, d);
	if (!dw)
		return 0;
	bool created;
	/* Cached apart with and without renaming (the low bit is free:
	 * no two instructions start one byte from a key's partner). */
	u64 key = file_addr << 1 | rename;
	u64 *slot = u64map_slot(&dw->frames, key, &created);
	if (created) {
		size_t first = dw->flat.n;
		int count = compute_frames(dw, file_addr, base, rename);
		slot = u64map_get(&dw->frames, key);   /* may have moved */
		*slot = ((u64)first << 16 | (u64)count) + 1;
	}
	u64 v = *slot - 1;
	int count = (int)(v & 0xffff);
	size_t first = (size_t)(v >> 16);
	if (count > max)
		count = max;
	for (int i = 0; i < count; i++)
		out[i] = dw->flat.v[first + i];
	return count;
}

/* "file:line" from the line table, the file without its directory as
 * perf shows it by default; NULL when the DWARF does not say. */
static char *lookup_srcline(struct sym_dwarf *dw, u64 file_addr)
{
	Dwarf *lines = lines_dwarf(dw);
	Dwarf_Die cu;
	if (!lines || !dwarf_addrdie(lines, file_addr, &cu))
		return NULL;
	Dwarf_Line *line = dwarf_getsrc_die(&cu, file_addr);
	int lineno;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(line, &lineno) != 0)
		return NULL;
	const char *slash = strrchr(file, '/');
	return xasprintf("%s:%d", slash ? slash + 1 : file, lineno);
}

/* "file:line" where the inlined scope die is called from, by its
 * DW_AT_call_file and DW_AT_call_line (the file an index into its CU's
 * file table); NULL when the DWARF does not say. */
static char *call_site(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_index, line;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_tag(die) != DW_TAG_inlined_subroutine ||
	    !dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &file_index) ||
	    !dwarf_attr(die, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &line) ||
	    !dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) ||
	    file_index >= nfiles)
		return NULL;
	const char *file = dwarf_filesrc(files, file_index, NULL, NULL);
	if (!file)
		return NULL;
	const char *slash = strrchr(file, '/');
	return xasprintf("%s:%llu", slash ? slash + 1 : file, (unsigned long long)line);
}

/* Remembers line (NULL: none) in a map slot; returns it. */
static const char *keep_line(struct sym_dwarf *dw, u64 *slot, char *line)
{
	if (!line) {
		*slot = NO_LINE;
		return NULL;
	}
	VEC_PUSH(&dw->srclines, line);
	*slot = dw->srclines.n;
	return line;
}

/* The outer frames' lines of the inline chain at file_addr (as
 * sym_inline_frames() numbers its frames, 0 the innermost): each is the
 * call site of the scope inside it, where perf shows it too.  One scope
 * walk gives them all, so all are cached at once. */
static void lookup_call_sites(struct sym_dwarf *dw, u64 file_addr, int asked)
{
	struct scopes sc;
	bool subprogram;
	int k = function_scopes(lines_dwarf(dw), file_addr, &sc, &subprogram);
	for (int depth = 1; depth <= k; depth++)
		keep_line(dw, u64map_slot(&dw->call_at, file_addr << 5 | (u64)depth, NULL),
			  call_site(&sc.dies[depth - 1]));
	if (asked > k)
		keep_line(dw, u64map_slot(&dw->call_at, file_addr << 5 | (u64)asked, NULL), NULL);
}

const char *sym_srcline(struct sym_ctx *c, struct sym_dso *d, u64 file_addr)
{
	return sym_inline_srcline(c, d, file_addr, 0);
}

const char *sym_inline_srcline(struct sym_ctx *c, struct sym_dso *d, u64 file_addr, int depth)
{
	if (!d || d->kind != DSO_FILE || !d->trusted || depth < 0 || depth >= MAX_SCOPES)
		return NULL;
	struct sym_dwarf *dw = dso_dwarf(c, d);
	if (!dw)
		return NULL;
	u64 *slot;
	if (depth == 0) {
		bool created;
		slot = u64map_slot(&dw->line_at, file_addr, &created);
		if (created)
			return keep_line(dw, slot, lookup_srcline(dw, file_addr));
	} else {
		u64 key = file_addr << 5 | (u64)depth;
		if (!u64map_get(&dw->call_at, key))
			lookup_call_sites(dw, file_addr, depth);
		slot = u64map_get(&dw->call_at, key);
	}
	return *slot == NO_LINE ? NULL : dw->srclines.v[*slot - 1];
}
