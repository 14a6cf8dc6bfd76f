/* find.c - finding the file behind a user mapping and the best symbols
 * for it: the file itself (seen through /proc/PID/root while the process
 * lives), checked against the recorded build-id, or its separate debug
 * file (build-id directory, .gnu_debuglink), or the vdso of this kernel. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

/* One candidate file, opened, with what we learnt about it. */
struct found {
	struct elf_file f;
	char *path;
	u8 id[SYM_BUILD_ID_MAX];
	int id_size;     /* -1: the file has no build-id */
};

static void found_close(struct found *x)
{
	if (x->path)
		elf_file_close(&x->f);
	free(x->path);
	x->path = NULL;
}

static bool found_open(struct found *x, const char *path)
{
	memset(x, 0, sizeof(*x));
	if (elf_file_open(&x->f, path) < 0)
		return false;
	x->path = xstrdup(path);
	x->id_size = elf_file_build_id(x->f.elf, x->id, sizeof(x->id));
	return true;
}

static bool ids_equal(const u8 *a, size_t na, const u8 *b, int nb)
{
	return nb > 0 && (size_t)nb == na && !memcmp(a, b, na);
}

/* Names the kernel gives mappings that are not files we could read. */
static bool is_pseudo_path(const char *p)
{
	return p[0] != '/' || !strncmp(p, "//anon", 6) || !strncmp(p, "/memfd:", 7) ||
	       !strncmp(p, "/dev/", 5) || !strncmp(p, "/SYSV", 5) ||
	       !strncmp(p, "/anon_hugepage", 14);
}

/* The path to open: through the process's root when it still runs (its
 * mount namespace may differ), without the " (deleted)" the kernel adds.
 * The plain path when both name the same file: it outlives the process,
 * and the unwinder opens the file later (live, a short process had gone
 * by then and its leaf-frame repairs failed: stackcount lost do_malloc). */
static char *runtime_path(const char *path, pid_t pid)
{
	char *clean = xstrdup(path);
	size_t n = strlen(clean);
	static const char deleted[] = " (deleted)";
	if (n > sizeof(deleted) - 1 && !strcmp(clean + n - (sizeof(deleted) - 1), deleted))
		clean[n - (sizeof(deleted) - 1)] = '\0';
	if (pid > 0) {
		char *via = xasprintf("/proc/%d/root%s", (int)pid, clean);
		struct stat a, b;
		if (access(via, R_OK) == 0 && stat(via, &a) == 0 &&
		    !(stat(clean, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
			free(clean);
			return via;
		}
		free(via);
	}
	return clean;
}

static char *build_id_debug_path(const char *debug_dir, const u8 *id, size_t n)
{
	struct strbuf sb = {0};
	sb_printf(&sb, "%s/.build-id/%02x/", debug_dir, id[0]);
	for (size_t i = 1; i < n; i++)
		sb_printf(&sb, "%02x", id[i]);
	sb_puts(&sb, ".debug");
	return sb.s;
}

/* A debug file is usable when it has a symbol table and, where both
 * sides have a build-id, the same one. */
static bool try_debug_file(struct found *dbg, const char *path, const u8 *id, int id_size)
{
	if (!found_open(dbg, path))
		return false;
	bool id_ok = id_size <= 0 || dbg->id_size <= 0 ||
		     ids_equal(id, (size_t)id_size, dbg->id, dbg->id_size);
	if (id_ok && elf_file_has_section(dbg->f.elf, SHT_SYMTAB))
		return true;
	found_close(dbg);
	return false;
}

/* The debuglink candidates: beside the file, in its .debug/ folder, and
 * under the debug directory mirroring the file's folder. */
static bool find_by_debuglink(struct sym_ctx *c, struct found *rt, const char *orig,
			      struct found *dbg)
{
	char *link = elf_file_debuglink(rt->f.elf);
	if (!link)
		return false;
	char *rt_copy = xstrdup(rt->path), *orig_copy = xstrdup(orig);
	const char *dir = dirname(rt_copy), *orig_dir = dirname(orig_copy);
	char *cand[3] = {
		xasprintf("%s/%s", dir, link),
		xasprintf("%s/.debug/%s", dir, link),
		xasprintf("%s%s/%s", c->debug_dir, orig_dir, link),
	};
	bool ok = false;
	for (size_t i = 0; i < ARRAY_SIZE(cand) && !ok; i++)
		ok = strcmp(cand[i], rt->path) &&
		     try_debug_file(dbg, cand[i], rt->id, rt->id_size);
	for (size_t i = 0; i < ARRAY_SIZE(cand); i++)
		free(cand[i]);
	free(rt_copy);
	free(orig_copy);
	free(link);
	return ok;
}

static bool find_debug_file(struct sym_ctx *c, struct sym_dso *d, struct found *rt,
			    struct found *dbg)
{
	const u8 *id = d->build_id;
	int n = (int)d->build_id_size;
	if (n == 0 && rt && rt->id_size > 0) {
		id = rt->id;
		n = rt->id_size;
	}
	if (n > 0) {
		char *p = build_id_debug_path(c->debug_dir, id, (size_t)n);
		bool ok = try_debug_file(dbg, p, id, n);
		free(p);
		if (ok)
			return true;
	}
	return rt && find_by_debuglink(c, rt, d->path, dbg);
}

static void take_loads(struct sym_dso *d, Elf *e)
{
	int n = elf_file_loads(e, &d->loads);
	d->nloads = n > 0 ? (size_t)n : 0;
}

/* Fills d's table from the runtime file rt (may be NULL) and debug file
 * dbg (may be NULL): the fullest .symtab first, .dynsym and PLT stubs of
 * the runtime file filling what it lacks. */
static void load_symbols(struct sym_ctx *c, struct sym_dso *d, struct found *rt,
			 struct found *dbg)
{
	struct symtab_builder b;
	stb_init(&b, c->demangle);
	struct found *main_src = dbg ? dbg : rt;
	bool has_symtab = elf_file_add_symbols(main_src->f.elf, SHT_SYMTAB, false, &b) > 0;
	if (rt) {
		elf_file_add_symbols(rt->f.elf, SHT_DYNSYM, has_symtab, &b);
		elf_file_add_plt(rt->f.elf, &b);
	}
	stb_finish(&b, &d->tab);
	d->sym_file = xstrdup(main_src->path);
	take_loads(d, (rt ? rt : dbg)->f.elf);
}

static void load_from_runtime(struct sym_ctx *c, struct sym_dso *d, struct found *rt,
			      bool rt_ok)
{
	struct found dbg;
	bool need_debug = !rt_ok || !elf_file_has_section(rt->f.elf, SHT_SYMTAB);
	bool have_debug = need_debug && find_debug_file(c, d, rt_ok ? rt : NULL, &dbg);
	if (rt_ok || have_debug) {
		load_symbols(c, d, rt_ok ? rt : NULL, have_debug ? &dbg : NULL);
	} else if (rt->path) {
		d->trusted = false;
		c->stats.build_id_mismatches++;
	} else if (!is_pseudo_path(d->path)) {
		c->stats.missing_files++;
		d->missing = true;
	}
	if (have_debug)
		found_close(&dbg);
}

/* The vdso is the same for every process of a kernel: ours stands in for
 * the recorded one (its build-id, when recorded, must agree). */
static bool open_own_vdso(struct found *x)
{
	memset(x, 0, sizeof(*x));
	unsigned long base = getauxval(AT_SYSINFO_EHDR), lo = 0, hi = 0;
	char *maps = base ? read_text_file("/proc/self/maps", NULL) : NULL;
	/* Its size is that of its mapping, which /proc/self/maps tells. */
	for (char *line = maps; line && *line;) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base && hi > lo)
			break;
		lo = hi = 0;
		char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	free(maps);
	if (!lo || elf_file_open_memory(&x->f, (const void *)lo, hi - lo) < 0)
		return false;
	x->path = xstrdup("[vdso]");
	x->id_size = elf_file_build_id(x->f.elf, x->id, sizeof(x->id));
	return true;
}

/* perf's build-id cache (~/.debug/PATH/BUILDID/elf, or the link
 * ~/.debug/.build-id/xx/rest/elf) keeps copies of the files a recording
 * used, so a file rebuilt or deleted since, or one from another machine
 * (ember archive), still resolves. */
static bool open_from_build_id_cache(struct found *x, const char *path, const u8 *id,
				     size_t n)
{
	char *p = sym_cache_find(path, id, n, "elf");
	bool ok = p && found_open(x, p);
	free(p);
	return ok;
}

void file_load(struct sym_ctx *c, struct sym_dso *d, pid_t pid)
{
	struct found rt = {0};
	bool opened;
	if (!strcmp(d->path, "[vdso]")) {
		opened = open_own_vdso(&rt);
	} else if (is_pseudo_path(d->path)) {
		opened = false;
	} else {
		char *p = runtime_path(d->path, pid);
		opened = found_open(&rt, p);
		free(p);
	}
	bool rt_ok = opened && (d->build_id_size == 0 ||
				ids_equal(d->build_id, d->build_id_size, rt.id, rt.id_size));
	struct found cached = {0};
	if (!rt_ok && d->build_id_size &&
	    open_from_build_id_cache(&cached, d->path, d->build_id, d->build_id_size)) {
		if (ids_equal(d->build_id, d->build_id_size, cached.id, cached.id_size)) {
			if (opened)
				found_close(&rt);
			rt = cached;
			opened = rt_ok = true;
		} else {
			found_close(&cached);
		}
	}
	load_from_runtime(c, d, &rt, rt_ok);
	if (rt_ok && rt.path && rt.path[0] == '/')
		d->file = xstrdup(rt.path);
	if (opened)
		found_close(&rt);
}
