/* dso.c - the symbols context: the cache of loaded files (one dso per
 * path and build-id; those no one holds any more released on request),
 * JIT maps per process, the address translation of a mapping, lookups
 * and statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

/* u64map marks a process known to have no JIT map with this value. */
#define NO_JIT_MAP 1

struct sym_ctx *sym_ctx_new(const struct sym_opts *opts)
{
	struct sym_ctx *c = xcalloc(1, sizeof(*c));
	c->demangle = opts ? opts->demangle : true;
	c->kallsyms = xstrdup(opts && opts->kallsyms ? opts->kallsyms : "/proc/kallsyms");
	c->kallsyms_given = opts && opts->kallsyms;
	c->debug_dir = xstrdup(opts && opts->debug_dir ? opts->debug_dir : "/usr/lib/debug");
	c->cache_dir = inflate_cache_dir(opts ? opts->cache_dir : NULL);
	u64map_init(&c->files);
	u64map_init(&c->jits);
	return c;
}

void dso_free(struct sym_dso *d)
{
	symtab_free(&d->tab);
	sym_dwarf_free(d->dwarf);
	free(d->loads);
	free(d->sym_file);
	free(d->file);
	free(d->path);
	free(d);
}

void sym_ctx_free(struct sym_ctx *c)
{
	if (!c)
		return;
	prefetch_end(c);
	kernel_abandon(c);   /* a kallsyms read never asked for stops */
	for (size_t i = 0; i < c->all.n; i++)
		dso_free(c->all.v[i]);
	VEC_FREE(&c->all);
	VEC_FREE(&c->modules);
	VEC_FREE(&c->problems);
	kernel_choice_free(c);
	u64map_free(&c->files);
	u64map_free(&c->jits);
	free(c->kallsyms);
	free(c->debug_dir);
	free(c->cache_dir);
	free(c);
}

static const char *short_name_of(const char *path)
{
	if (path[0] == '[')
		return path;
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

struct sym_dso *dso_alloc(enum dso_kind kind, const char *path)
{
	struct sym_dso *d = xcalloc(1, sizeof(*d));
	d->kind = kind;
	d->path = xstrdup(path);
	d->short_name = short_name_of(d->path);
	d->trusted = true;
	return d;
}

struct sym_dso *dso_new(struct sym_ctx *c, enum dso_kind kind, const char *path)
{
	struct sym_dso *d = dso_alloc(kind, path);
	VEC_PUSH(&c->all, d);
	return d;
}

/* FNV-1a over the path and build-id: the cache key of a file. */
u64 dso_file_key(const char *path, const u8 *id, size_t n)
{
	u64 h = 0xcbf29ce484222325ULL;
	for (const char *p = path; *p; p++)
		h = (h ^ (u8)*p) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ id[i]) * 0x100000001b3ULL;
	return h;
}

static struct sym_dso *cache_find(struct sym_ctx *c, u64 key, const char *path,
				  const u8 *id, size_t n)
{
	u64 *slot = u64map_get(&c->files, key);
	for (struct sym_dso *d = slot ? (struct sym_dso *)(uintptr_t)*slot : NULL; d;
	     d = d->hnext)
		if (d->build_id_size == n && !strcmp(d->path, path) &&
		    (n == 0 || !memcmp(d->build_id, id, n)))
			return d;
	return NULL;
}

/* Indexes d under its key (hkey), first of its bucket. */
static void cache_add(struct sym_ctx *c, struct sym_dso *d)
{
	u64 *slot = u64map_slot(&c->files, d->hkey, NULL);
	d->hnext = (struct sym_dso *)(uintptr_t)*slot;
	d->cached = true;
	*slot = (u64)(uintptr_t)d;
}

static bool is_anon_memory(const char *path)
{
	return !strcmp(path, "//anon") || !strncmp(path, "/dev/zero", 9) ||
	       !strncmp(path, "/anon_hugepage", 14);
}

bool sym_path_is_memory(const char *path)
{
	return is_anon_memory(path) || !strncmp(path, "[stack", 6) ||
	       !strcmp(path, "[heap]") || !strncmp(path, "/SYSV", 5);
}

struct sym_dso *sym_dso_get(struct sym_ctx *c, const char *path, const u8 *build_id,
			    size_t build_id_size, pid_t pid)
{
	if (!path || !*path)
		path = "[unknown]";
	/* perf names the kernel's own mapping "[kernel.kallsyms]_text". */
	if (!strncmp(path, "[kernel.kallsyms]", 17))
		return sym_kernel_dso(c, 0);
	/* Anonymous memory is where JIT compilers put code: like perf, read
	 * it through the process's perf map when it wrote one. */
	struct sym_dso *jit = is_anon_memory(path) && pid > 0 ? sym_jit_dso(c, pid) : NULL;
	if (jit)
		return jit;
	if (!build_id)
		build_id_size = 0;
	build_id_size = MIN(build_id_size, (size_t)SYM_BUILD_ID_MAX);
	u64 key = dso_file_key(path, build_id, build_id_size);
	struct sym_dso *d = cache_find(c, key, path, build_id, build_id_size);
	if (d) {
		d->epoch = c->release_epoch;
		return d;
	}
	d = prefetch_take(c, key, path, build_id, build_id_size);
	if (d) {
		VEC_PUSH(&c->all, d);
		c->stats.files_prefetched++;
	} else {
		d = dso_new(c, DSO_FILE, path);
		if (build_id_size)
			memcpy(d->build_id, build_id, build_id_size);
		d->build_id_size = build_id_size;
		file_load(c, d, pid);
		if (d->missing || !d->trusted)
			VEC_PUSH(&c->problems, d);
	}
	d->hkey = key;
	d->epoch = c->release_epoch;
	c->stats.files_loaded++;
	cache_add(c, d);
	return d;
}

/* ---- releasing files -------------------------------------------------- */

void sym_dso_hold(struct sym_dso *d)
{
	d->holds++;
}

int sym_dso_put(struct sym_dso *d)
{
	if (!d->holds) {
		err_set("%s: let go of more often than held", d->path);
		return -1;
	}
	d->holds--;
	return 0;
}

/* A file no one holds nor asked for since the last release; problem
 * files stay listed for the views' warnings. */
static bool releasable(const struct sym_ctx *c, const struct sym_dso *d)
{
	bool file = d->cached && d->kind == DSO_FILE && !d->missing && d->trusted;
	bool ended_jit = d->kind == DSO_JIT && d->forgotten;
	return (file || ended_jit) && !d->holds && d->epoch < c->release_epoch;
}

/* A file kept for a whole live session (libc: some process always maps
 * it) would index ever more of its DWARF as samples reach more of its
 * code, libdw's CU data and the inline caches growing with it (in a
 * two-hour --push run, libc's 416 CUs and 11313 addresses against 164
 * and 3256 in a fresh one beside it).  Its DWARF is opened anew after
 * this many releases (ten minutes of --push-every 10s): memory then holds
 * what that stretch of samples reached. */
#define DWARF_RENEW_RELEASES 60

static void renew_dwarf(struct sym_ctx *c, struct sym_dso *d)
{
	if (!d->dwarf_tried)
		return;
	if (c->release_epoch - d->dwarf_epoch < DWARF_RENEW_RELEASES) {
		c->stats.dwarf_lines_closed += sym_dwarf_drop_lines(d->dwarf);
		return;
	}
	sym_dwarf_free(d->dwarf);
	d->dwarf = NULL;
	d->dwarf_tried = false;
	c->stats.dwarf_renewed++;
}

size_t sym_ctx_release(struct sym_ctx *c)
{
	size_t kept = 0, freed = 0;
	for (size_t i = 0; i < c->all.n; i++) {
		struct sym_dso *d = c->all.v[i];
		if (releasable(c, d)) {
			dso_free(d);
			freed++;
		} else {
			renew_dwarf(c, d);
			c->all.v[kept++] = d;
		}
	}
	c->all.n = kept;
	c->release_epoch++;
	c->stats.files_released += freed;
	if (!freed)
		return 0;
	/* The index is built again from what is left: it holds no key of a
	 * freed file, so it stays as small as the files kept. */
	u64map_free(&c->files);
	u64map_init(&c->files);
	for (size_t i = 0; i < c->all.n; i++)
		if (c->all.v[i]->cached)
			cache_add(c, c->all.v[i]);
	return freed;
}

struct sym_dso *sym_jit_dso(struct sym_ctx *c, pid_t pid)
{
	u64 key = (u64)(u32)pid;
	u64 *slot = u64map_get(&c->jits, key);
	if (slot && *slot == NO_JIT_MAP)
		return NULL;
	if (slot) {
		struct sym_dso *known = (struct sym_dso *)(uintptr_t)*slot;
		known->epoch = c->release_epoch;
		return known;
	}
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	/* Remembered either way: a process without a map is asked about
	 * for each of its anonymous-memory samples. */
	struct sym_dso *d = jit_load(c, path);
	*u64map_slot(&c->jits, key, NULL) = d ? (u64)(uintptr_t)d : NO_JIT_MAP;
	if (d)
		d->epoch = c->release_epoch;
	return d;
}

void sym_jit_forget(struct sym_ctx *c, pid_t pid)
{
	u64 *slot = u64map_get(&c->jits, (u64)(u32)pid);
	if (!slot)
		return;
	if (*slot != NO_JIT_MAP)
		((struct sym_dso *)(uintptr_t)*slot)->forgotten = true;
	u64map_del(&c->jits, (u64)(u32)pid);
}

/* The segment holding file offset off: exactly, else within the pages
 * the kernel maps around it (a segment's first page starts below its
 * p_offset when that is not page-aligned). */
static const struct elf_load *segment_of(const struct sym_dso *d, u64 off)
{
	for (size_t i = 0; i < d->nloads; i++)
		if (off - d->loads[i].offset < d->loads[i].filesz)
			return &d->loads[i];
	for (size_t i = 0; i < d->nloads; i++) {
		const struct elf_load *l = &d->loads[i];
		u64 page_lo = l->offset & ~(u64)4095;
		if (off >= page_lo && off - page_lo < (l->offset - page_lo) + l->memsz)
			return l;
	}
	return NULL;
}

u64 sym_map_to_file(const struct sym_dso *d, u64 addr, u64 map_start, u64 pgoff)
{
	if (d->kind != DSO_FILE)
		return addr - (u64)d->reloc;
	u64 off = addr - map_start + pgoff;
	const struct elf_load *l = segment_of(d, off);
	return l ? off - l->offset + l->vaddr : off;
}

const struct sym *sym_lookup(struct sym_dso *d, u64 file_addr)
{
	return d->trusted ? symtab_find(&d->tab, file_addr) : NULL;
}

const char *sym_dso_path(const struct sym_dso *d)
{
	return d->path;
}

const char *sym_dso_short(const struct sym_dso *d)
{
	return d->short_name;
}

bool sym_dso_is_kernel(const struct sym_dso *d)
{
	return d->kind == DSO_KERNEL || d->kind == DSO_MODULE;
}

const struct sym_stats *sym_ctx_stats(const struct sym_ctx *c)
{
	return &c->stats;
}

const char *sym_dso_symfile(const struct sym_dso *d)
{
	return d->sym_file;
}

bool sym_dso_trusted(const struct sym_dso *d)
{
	return d->trusted;
}

const char *sym_dso_file(const struct sym_dso *d)
{
	return d->file;
}

const u8 *sym_dso_build_id(const struct sym_dso *d, size_t *n)
{
	*n = d->build_id_size;
	return d->build_id;
}

const struct sym_dso *sym_problem_file(const struct sym_ctx *c, size_t i)
{
	return i < c->problems.n ? c->problems.v[i] : NULL;
}

size_t sym_dso_count(const struct sym_dso *d)
{
	return d->tab.n;
}
