/* inline.c - inline frames and source lines of a file address through
 * libdw: the functions inlined there (innermost first) and file:line.
 * The DWARF is the file's own or its separate debug file's, opened
 * without the sections these never read (libdw inflates every compressed
 * one it is given); results are cached per address, as a profile asks
 * for the same few thousand.
 *
 * Only inlined instances (DW_TAG_inlined_subroutine) make frames, shown
 * as perf does ("NAME (inlined)", one symbol per name and base function)
 * before the machine frame; the subprogram holding the address is the
 * machine frame's own function and keeps its symbol's name (perf's dwarf
 * mode shows libc's clock_gettime as "__GI___clock_gettime (inlined)" over
 * "clock_gettime@@GLIBC_2.17", one function in two rows; ember shows it
 * once).  Scopes are read once with libdw (through dwz partial units): a
 * CU's functions on its first address, the inlined instances inside a
 * function on its first, ranges sorted; a lookup is two binary searches
 * and a walk out through the parents.  libdw's dwarf_getscopes walked the
 * CU's DIE tree for every address: 0.62 s of CPU for a python3 report
 * that takes 0.13 s with --no-inline, and it gave up on some deep inline
 * chains.  A source line is the line table's for the innermost frame and,
 * for each outer frame, the call site of the function inlined into it
 * (DW_AT_call_file/line), as perf prints them. */
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

struct cu_index;

/* One function scope with addresses in a CU: a subprogram or an inlined
 * instance, and the scope it lies in. */
struct scope {
	Dwarf_Die die;
	const char *name;        /* scope_name(), once named */
	u32 parent;              /* index + 1 in the index's scopes; 0: none */
	u32 first, count;        /* its ranges in the index's own */
	bool subprogram, named;
	struct cu_index *inner;  /* a CU's own function: the scopes inside
				    it, indexed on its first lookup */
};

struct scope_range {
	u64 lo, hi;
	u32 scope, depth;        /* depth: how many scopes hold it */
};

/* Function scopes of a DIE tree, read from it once: each address lookup
 * is then a binary search among the ranges sorted by start (and depth),
 * which finds the innermost scope or one in its tree, and a walk out
 * through the parents.  A CU's index holds its functions alone, each
 * one's the scopes inside it: a profile looks into few of a CU's
 * functions. */
struct cu_index {
	VEC(struct scope) scopes;
	VEC(struct scope_range) own;     /* each scope's ranges, in scope order */
	VEC(struct scope_range) sorted;  /* all of them, by lo then depth */
};

static void cu_index_free(struct cu_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->scopes.n; i++)
		cu_index_free(ix->scopes.v[i].inner);
	VEC_FREE(&ix->scopes);
	VEC_FREE(&ix->own);
	VEC_FREE(&ix->sorted);
	free(ix);
}

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
	struct u64map cus;           /* CU DIE offset -> index + 1 in cu_index */
	VEC(struct cu_index *) cu_index;
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

bool dwarf_section_unread(const char *name)
{
	return unread_section(name, true);
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

/* Opens the DWARF at path, or its inflated copy when path has compressed
 * sections (made on first use, in c's cache). */
static bool open_dwarf(struct sym_ctx *c, struct sym_dwarf *dw, const char *path)
{
	char *copy = inflated_copy(c->cache_dir, path);
	const char *use = copy && dwarf_open_file(&dw->scopes, copy, false) ? copy : path;
	if (use == path && !dwarf_open_file(&dw->scopes, path, false)) {
		free(copy);
		return false;
	}
	dw->dwarf = dw->scopes.dwarf;
	dw->path = xstrdup(use);
	free(copy);
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
	d->dwarf_epoch = c->release_epoch;
	struct sym_dwarf *dw = xcalloc(1, sizeof(*dw));
	dw->scopes.fd = dw->lines.fd = -1;
	bool ok = open_dwarf(c, dw, d->sym_file) || open_dwarf(c, dw, d->path);
	if (!ok && d->build_id_size) {
		char hex[2 * SYM_BUILD_ID_MAX + 1];
		sym_build_id_hex(d->build_id, d->build_id_size, hex);
		char *p = xasprintf("%s/.build-id/%.2s/%s.debug", c->debug_dir, hex, hex + 2);
		ok = open_dwarf(c, dw, p);
		free(p);
	}
	u64map_init(&dw->frames);
	u64map_init(&dw->names);
	u64map_init(&dw->line_at);
	u64map_init(&dw->call_at);
	u64map_init(&dw->cus);
	d->dwarf = dw;
	if (!ok) {
		sym_dwarf_free(dw);
		d->dwarf = NULL;
	}
	return d->dwarf;
}

const char *sym_dso_dwarf_file(struct sym_ctx *c, struct sym_dso *d)
{
	struct sym_dwarf *dw = d && d->kind == DSO_FILE ? dso_dwarf(c, d) : NULL;
	return dw ? dw->path : NULL;
}

/* libdw keeps every line table it parsed until its handle ends, and the
 * pprof export asks the line of every location: in a push run they were
 * the most of the live memory (21.8 MB of dwarf_getsrclines' after a
 * test suite ran beside it).  So the handle with the line tables is
 * closed at each release and opened again on the next line asked; the
 * lines already found are kept as text. */
bool sym_dwarf_drop_lines(struct sym_dwarf *dw)
{
	if (!dw || !dw->lines_tried)
		return false;
	bool open = dw->lines.dwarf != NULL;
	dwarf_close(&dw->lines);
	dw->lines_tried = false;
	return open;
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
	for (size_t i = 0; i < dw->cu_index.n; i++)
		cu_index_free(dw->cu_index.v[i]);
	VEC_FREE(&dw->cu_index);
	u64map_free(&dw->cus);
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

/* The symbol "NAME (inlined)", made once per name and base symbol (perf
 * too tells apart a function inlined into different ones); it spans its
 * base symbol so that offsets within it still make sense. */
static const struct sym *inline_sym(struct sym_dwarf *dw, const char *name,
				    const struct sym *base)
{
	char *full = xasprintf("%s (inlined)", name);
	u64 start = base ? base->start : 0;
	bool created;
	u64 *slot = u64map_slot(&dw->names, hash_str(full) ^ start * 0x9e3779b97f4a7c15ULL,
				&created);
	if (!created && dw->owned.v[*slot - 1]->start == start &&
	    !strcmp(dw->owned.v[*slot - 1]->name, full)) {
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

/* A function's name as DWARF gives it: the linkage name when the source
 * gave it another (glibc's hidden aliases), else DW_AT_name.  Mangled
 * linkage names are left for the source name. */
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
/* Deeper DIE nesting than this is not indexed (a cycle of imported
 * units, or a broken file). */
#define MAX_NEST 64

/* DIEs whose children may hold function scopes with addresses (as libdw's
 * own scope search descends). */
static bool may_hold_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_partial_unit: case DW_TAG_module:
	case DW_TAG_lexical_block: case DW_TAG_with_stmt: case DW_TAG_catch_block:
	case DW_TAG_try_block: case DW_TAG_entry_point: case DW_TAG_namespace:
	case DW_TAG_class_type: case DW_TAG_structure_type:
		return true;
	}
	return false;
}

/* Adds die as a scope inside parent (index + 1, 0: none) when it has
 * addresses; its index + 1, or 0 (a declaration, an abstract instance). */
static u32 add_scope(struct cu_index *ix, Dwarf_Die *die, int tag, u32 parent, u32 depth)
{
	size_t first = ix->own.n;
	u32 self = (u32)ix->scopes.n;
	Dwarf_Addr base, lo, hi;
	for (ptrdiff_t off = 0; (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0;)
		if (lo < hi)
			VEC_PUSH(&ix->own, ((struct scope_range){ lo, hi, self, depth }));
	if (ix->own.n == first)
		return 0;
	VEC_PUSH(&ix->scopes, ((struct scope){
		.die = *die, .parent = parent, .first = (u32)first,
		.count = (u32)(ix->own.n - first), .subprogram = tag == DW_TAG_subprogram }));
	return self + 1;
}

/* Indexes the scopes among the children of die, which lie in scope
 * parent at depth; and, when deep, the scopes inside those. */
static void index_children(struct cu_index *ix, Dwarf_Die *die, u32 parent, u32 depth, int nest,
			   bool deep)
{
	Dwarf_Die child;
	if (nest > MAX_NEST || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			/* One without addresses holds none either. */
			u32 self = add_scope(ix, &child, tag, parent, depth);
			if (self && deep)
				index_children(ix, &child, self, depth + 1, nest + 1, deep);
		} else if (tag == DW_TAG_imported_unit) {
			/* A partial unit (dwz), maybe in the alt file: its DIEs
			 * are this CU's. */
			Dwarf_Attribute attr;
			Dwarf_Die unit;
			if (dwarf_attr(&child, DW_AT_import, &attr) && dwarf_formref_die(&attr, &unit))
				index_children(ix, &unit, parent, depth, nest + 1, deep);
		} else if (may_hold_scopes(tag)) {
			index_children(ix, &child, parent, depth, nest + 1, deep);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int by_start(const void *a, const void *b)
{
	const struct scope_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* The index of the scopes under die: all of them when deep, else the
 * outermost ones. */
static struct cu_index *cu_index_build(Dwarf_Die *die, bool deep)
{
	struct cu_index *ix = xcalloc(1, sizeof(*ix));
	index_children(ix, die, 0, 0, 0, deep);
	if (!ix->own.n)
		return ix;   /* a function with nothing inlined */
	VEC_GROW(&ix->sorted, ix->own.n);
	memcpy(ix->sorted.v, ix->own.v, ix->own.n * sizeof(*ix->own.v));
	ix->sorted.n = ix->own.n;
	qsort(ix->sorted.v, ix->sorted.n, sizeof(*ix->sorted.v), by_start);
	return ix;
}

/* The index of the CU holding addr, built on its first use; NULL when no
 * CU says it holds addr. */
static struct cu_index *cu_index_at(struct sym_dwarf *dw, Dwarf *dwarf, u64 addr)
{
	Dwarf_Die cu;
	if (!dwarf || !dwarf_addrdie(dwarf, addr, &cu))
		return NULL;
	bool created;
	u64 *slot = u64map_slot(&dw->cus, dwarf_dieoffset(&cu), &created);
	if (created) {
		VEC_PUSH(&dw->cu_index, cu_index_build(&cu, false));
		*slot = dw->cu_index.n;
	}
	return dw->cu_index.v[*slot - 1];
}

static bool scope_holds(const struct cu_index *ix, const struct scope *s, u64 addr)
{
	for (u32 i = s->first; i < s->first + s->count; i++)
		if (ix->own.v[i].lo <= addr && addr < ix->own.v[i].hi)
			return true;
	return false;
}

/* The innermost scope holding addr, or NULL.  The last range starting at
 * or before addr is the innermost's own, or lies inside it (scopes nest),
 * so the innermost is that range's scope or one it lies in. */
static struct scope *innermost_scope(struct cu_index *ix, u64 addr)
{
	size_t lo = 0, hi = ix->sorted.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->sorted.v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct scope_range *r = &ix->sorted.v[lo - 1];
	for (u32 i = r->scope + 1; i; i = ix->scopes.v[i - 1].parent)
		if (scope_holds(ix, &ix->scopes.v[i - 1], addr))
			return &ix->scopes.v[i - 1];
	return NULL;
}

/* The scope s lies in: its parent in ix (the scopes inside outer), else
 * outer; NULL after outer. */
static struct scope *scope_outside(struct cu_index *ix, struct scope *s, struct scope *outer)
{
	if (s == outer)
		return NULL;
	return s->parent ? &ix->scopes.v[s->parent - 1] : outer;
}

static const char *scope_name_of(struct scope *s)
{
	if (!s->named) {
		s->named = true;
		s->name = scope_name(&s->die);
	}
	return s->name;
}

/* The function scopes at an address, innermost first: each one's name
 * and scope (whose call site is where the next one calls it). */
struct scopes {
	const char *names[MAX_SCOPES];
	const struct scope *of[MAX_SCOPES];
	int k;
};

/* The named function scopes at addr, innermost first, up to and with the
 * subprogram; *subprogram says whether one was found (the last). */
static int function_scopes(struct sym_dwarf *dw, u64 addr, struct scopes *sc, bool *subprogram)
{
	sc->k = 0;
	*subprogram = false;
	struct cu_index *cu = cu_index_at(dw, dw->dwarf, addr);
	struct scope *outer = cu ? innermost_scope(cu, addr) : NULL;
	if (!outer)
		return 0;
	if (!outer->inner)
		outer->inner = cu_index_build(&outer->die, true);
	struct cu_index *ix = outer->inner;
	struct scope *s = innermost_scope(ix, addr);
	for (s = s ? s : outer; s && sc->k < MAX_SCOPES; s = scope_outside(ix, s, outer)) {
		const char *name = scope_name_of(s);
		/* A scope inlined into a function of the same name adds no
		 * frame a reader could tell apart (perf shows one); the
		 * outer one's call site is the one that counts. */
		if (name && sc->k > 0 && !strcmp(sc->names[sc->k - 1], name))
			sc->k--;
		if (name) {
			sc->names[sc->k] = name;
			sc->of[sc->k++] = s;
		}
		if (s->subprogram) {
			*subprogram = true;
			break;
		}
	}
	return sc->k;
}

/* Appends the frames of addr to flat; returns how many (0: nothing to
 * change, the base frame stands as it is).  Only inlined instances make
 * frames: the subprogram holding addr is the machine frame's function,
 * shown under its symbol even when DWARF names it otherwise (libc's
 * clock_gettime is __GI___clock_gettime there), so one function is one
 * frame, as with --no-inline. */
static int compute_frames(struct sym_dwarf *dw, u64 addr, const struct sym *base)
{
	struct scopes sc;
	bool subprogram;
	int k = function_scopes(dw, addr, &sc, &subprogram);
	int inlined = subprogram ? k - 1 : k;
	if (inlined <= 0)
		return 0;
	size_t first = dw->flat.n;
	for (int i = 0; i < inlined; i++)
		VEC_PUSH(&dw->flat, inline_sym(dw, sc.names[i], base));
	VEC_PUSH(&dw->flat, base);
	return (int)(dw->flat.n - first);
}

int sym_inline_frames(struct sym_ctx *c, struct sym_dso *d, u64 file_addr,
		      const struct sym *base, const struct sym **out, int max)
{
	if (!d || d->kind != DSO_FILE || !d->trusted || !base)
		return 0;
	struct sym_dwarf *dw = dso_dwarf(c, d);
	if (!dw)
		return 0;
	bool created;
	u64 *slot = u64map_slot(&dw->frames, file_addr, &created);
	if (created) {
		size_t first = dw->flat.n;
		int count = compute_frames(dw, file_addr, base);
		slot = u64map_get(&dw->frames, file_addr);   /* may have moved */
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

/* "file:line" where the inlined scope is called from, by its
 * DW_AT_call_file and DW_AT_call_line (the file an index into its unit's
 * file table); NULL when the DWARF does not say. */
static char *call_site(struct sym_dwarf *dw, const struct scope *s)
{
	Dwarf_Die die = s->die, unit, lunit;
	Dwarf_Attribute attr;
	Dwarf_Word file_index, line;
	Dwarf_Files *files;
	size_t nfiles;
	if (s->subprogram ||
	    !dwarf_attr(&die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &file_index) ||
	    !dwarf_attr(&die, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &line) ||
	    !dwarf_diecu(&die, &unit, NULL, NULL))
		return NULL;
	/* The file table is in the line tables, which the scopes' opening
	 * lacks: the same unit in the opening with them (or in its alt
	 * file, for a dwz partial unit there). */
	Dwarf *lines = lines_dwarf(dw);
	if (lines && dwarf_cu_getdwarf(die.cu) != dw->dwarf)
		lines = dwarf_getalt(lines);
	if (!lines || !dwarf_offdie(lines, dwarf_dieoffset(&unit), &lunit) ||
	    dwarf_getsrcfiles(&lunit, &files, &nfiles) || file_index >= nfiles)
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
	int k = function_scopes(dw, file_addr, &sc, &subprogram);
	for (int depth = 1; depth <= k; depth++)
		keep_line(dw, u64map_slot(&dw->call_at, file_addr << 5 | (u64)depth, NULL),
			  call_site(dw, sc.of[depth - 1]));
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
