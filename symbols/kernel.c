/* kernel.c - the kernel's symbols from kallsyms: [kernel.kallsyms] and
 * one dso per module ([ext4]), placed by /proc/modules (or, for a
 * kallsyms file from elsewhere, by a "modules" file beside it).
 *
 * kallsyms is parsed on a thread of its own while samples stream in, read
 * in 256 KB pieces; a replay that never needed a kernel address stops the
 * read instead of waiting for the rest (the kernel spends ~40 ms writing
 * it): a 200-sample user-space profile reports in 7 ms instead of 53. */
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

struct module_build {
	char *name;
	u64 base, size;           /* size 0: take the range from the symbols */
	struct symtab_builder b;
	bool listed;              /* named by the modules file */
};

typedef VEC(struct module_build) module_vec;

static char *modules_path_for(const char *kallsyms)
{
	if (!strcmp(kallsyms, "/proc/kallsyms"))
		return xstrdup("/proc/modules");
	const char *slash = strrchr(kallsyms, '/');
	if (!slash)
		return xstrdup("modules");
	return xasprintf("%.*s/modules", (int)(slash - kallsyms), kallsyms);
}

static struct module_build *module_add(module_vec *mods, const char *name, bool demangle)
{
	struct module_build m = { .name = xstrdup(name) };
	stb_init(&m.b, demangle);
	m.b.last_unsized_wins = true;
	VEC_PUSH(mods, m);
	return &mods->v[mods->n - 1];
}

/* Lines "name size refs deps state 0xbase": where each module sits. */
static void read_modules_file(const char *path, module_vec *mods, bool demangle)
{
	char *text = read_text_file(path, NULL);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		char name[128];
		unsigned long long size, base;
		if (sscanf(line, "%127s %llu %*s %*s %*s %llx", name, &size, &base) == 3 &&
		    base && size) {
			struct module_build *m = module_add(mods, name, demangle);
			m->base = base;
			m->size = size;
			m->listed = true;
		}
	}
	free(text);
}

static struct module_build *module_find(module_vec *mods, const char *name, size_t len,
					size_t *hint)
{
	if (*hint < mods->n && strlen(mods->v[*hint].name) == len &&
	    !strncmp(mods->v[*hint].name, name, len))
		return &mods->v[*hint];
	for (size_t i = 0; i < mods->n; i++)
		if (strlen(mods->v[i].name) == len && !strncmp(mods->v[i].name, name, len)) {
			*hint = i;
			return &mods->v[i];
		}
	return NULL;
}

/* Code the kernel generates (ftrace trampolines, BPF programs) carries
 * a tag that names no module; perf drops those symbols and so do we. */
static bool is_pseudo_module(const char *name, size_t len)
{
	return (len >= 11 && !strncmp(name, "__builtin__", 11)) ||
	       (len == 3 && !strncmp(name, "bpf", 3));
}

/* The builder a symbol with this module tag goes to, or NULL to drop it. */
static struct symtab_builder *builder_for(module_vec *mods, bool have_list,
					  const char *tag, size_t len, size_t *hint,
					  bool demangle)
{
	if (is_pseudo_module(tag, len))
		return NULL;
	struct module_build *m = module_find(mods, tag, len, hint);
	if (!m && !have_list) {
		char *name = xasprintf("%.*s", (int)len, tag);
		m = module_add(mods, name, demangle);
		free(name);
		*hint = mods->n - 1;
	}
	return m ? &m->b : NULL;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* One line "ffffffff81000000 T name[\t[module]]". */
static void parse_kallsyms_line(char *line, struct symtab_builder *kern, module_vec *mods,
				bool have_list, size_t *hint, bool demangle,
				struct kernel_refs *refs)
{
	char *end;
	u64 addr = strtoull(line, &end, 16);
	/* Address 0 is what an unprivileged reader sees: useless, skipped. */
	if (end == line || addr == 0 || *end != ' ' || !is_text_type(end[1]) || end[2] != ' ')
		return;
	char *name = end + 3;
	char *tab = strchr(name, '\t');
	struct symtab_builder *b = kern;
	if (tab) {
		*tab = '\0';
		char *tag = tab + 1;
		char *close = strchr(tag, ']');
		if (*tag != '[' || !close)
			return;
		b = builder_for(mods, have_list, tag + 1, (size_t)(close - tag - 1), hint,
				demangle);
	}
	/* kallsyms says nothing of binding; upper case means global. */
	u8 bind = (end[1] == 'T') ? STB_GLOBAL : (end[1] == 't') ? STB_LOCAL : STB_WEAK;
	if (b == kern && name[0] == '_')
		kernel_note_ref(refs, name, addr);
	if (b)
		stb_add(b, addr, 0, name, bind, false);
}

static void parse_kallsyms(char *text, struct symtab_builder *kern, module_vec *mods,
			   bool have_list, bool demangle, struct kernel_refs *refs)
{
	size_t hint = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		parse_kallsyms_line(line, kern, mods, have_list, &hint, demangle, refs);
	}
}

static int cmp_module(const void *pa, const void *pb)
{
	const struct sym_dso *a = *(struct sym_dso *const *)pa, *b = *(struct sym_dso *const *)pb;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Turns a built module into its dso; a module without a listed range
 * spans its symbols, the last reaching as far as the table lets it. */
static void module_finish(struct sym_ctx *c, struct module_build *m)
{
	char *path = xasprintf("[%s]", m->name);
	struct sym_dso *d = dso_new(c, DSO_MODULE, path);
	free(path);
	stb_finish(&m->b, &d->tab);
	if (m->size) {
		d->start = m->base;
		d->end = m->base + m->size;
	} else if (d->tab.n) {
		const struct sym *last = &d->tab.syms[d->tab.n - 1];
		d->start = d->tab.syms[0].start;
		d->end = last->start + last->size;
	}
	if (d->end > d->start)
		VEC_PUSH(&c->modules, d);
	free(m->name);
}

/* What reading kallsyms produces before anything enters the context:
 * parsing can run on a thread of its own while the report reads events.
 * A report that never meets a kernel address abandons it (stop). */
struct kernel_parse {
	const char *kallsyms;
	bool demangle;
	bool stop;                /* atomic: the result is no longer wanted */
	module_vec mods;
	struct symtab kernel;
	struct kernel_refs refs;
};

static bool parse_stopped(struct kernel_parse *kp)
{
	return __atomic_load_n(&kp->stop, __ATOMIC_RELAXED);
}

static void *kernel_parse_run(void *arg)
{
	struct kernel_parse *kp = arg;
	char *mpath = modules_path_for(kp->kallsyms);
	read_modules_file(mpath, &kp->mods, kp->demangle);
	free(mpath);
	bool have_list = kp->mods.n > 0;
	struct symtab_builder kern;
	stb_init(&kern, kp->demangle);
	kern.last_unsized_wins = true;
	/* The kernel writes kallsyms out as text as it is read (~40 ms for
	 * all of it here): a read no longer wanted stops between pieces. */
	char *text = read_text_file_unless(kp->kallsyms, NULL, &kp->stop);
	if (text && !parse_stopped(kp))
		parse_kallsyms(text, &kern, &kp->mods, have_list, kp->demangle, &kp->refs);
	free(text);
	stb_finish(&kern, &kp->kernel);
	return NULL;
}

/* Moves a finished parse into the context: the kernel and module dsos. */
static void kernel_install(struct sym_ctx *c, struct kernel_parse *kp)
{
	c->kernel = dso_new(c, DSO_KERNEL, "[kernel.kallsyms]");
	c->kernel->tab = kp->kernel;
	c->kernel_src_refs = kp->refs;
	if (c->kernel->tab.n) {
		const struct sym *last = &c->kernel->tab.syms[c->kernel->tab.n - 1];
		c->kernel->start = c->kernel->tab.syms[0].start;
		c->kernel->end = last->start + last->size;
	}
	for (size_t i = 0; i < kp->mods.n; i++)
		module_finish(c, &kp->mods.v[i]);
	VEC_FREE(&kp->mods);
	if (c->modules.n > 1)
		qsort(c->modules.v, c->modules.n, sizeof(*c->modules.v), cmp_module);
	kernel_relocate(c);
	kernel_check_modules(c);
}

static struct kernel_parse *parse_new(const struct sym_ctx *c)
{
	struct kernel_parse *kp = xcalloc(1, sizeof(*kp));
	kp->kallsyms = c->kallsyms;
	kp->demangle = c->demangle;
	return kp;
}

/* The read-ahead's parse once its thread has ended, or NULL when none ran. */
static struct kernel_parse *parse_join(struct sym_ctx *c)
{
	struct kernel_parse *kp = c->kernel_parse;
	if (kp) {
		pthread_join(c->kernel_thread, NULL);
		c->kernel_parse = NULL;
	}
	return kp;
}

void sym_prefetch_kernel(struct sym_ctx *c)
{
	if (c->kernel || c->kernel_parse || c->kernel_unknown)
		return;
	struct kernel_parse *kp = parse_new(c);
	if (pthread_create(&c->kernel_thread, NULL, kernel_parse_run, kp) != 0) {
		free(kp);
		return;   /* it will load when first needed */
	}
	c->kernel_parse = kp;
}

void kernel_abandon(struct sym_ctx *c)
{
	if (!c->kernel_parse)
		return;
	__atomic_store_n(&c->kernel_parse->stop, true, __ATOMIC_RELAXED);
	struct kernel_parse *kp = parse_join(c);
	for (size_t i = 0; i < kp->mods.n; i++) {
		stb_free(&kp->mods.v[i].b);
		free(kp->mods.v[i].name);
	}
	VEC_FREE(&kp->mods);
	symtab_free(&kp->kernel);
	free(kp);
}

void kernel_load(struct sym_ctx *c)
{
	if (c->kernel_unknown) {
		/* Not the kernel recorded: no names rather than wrong ones. */
		c->kernel = dso_new(c, DSO_KERNEL, "[kernel.kallsyms]");
		c->kernel->trusted = false;
		return;
	}
	struct kernel_parse *kp = parse_join(c);
	if (!kp) {
		kp = parse_new(c);
		kernel_parse_run(kp);
	}
	kernel_install(c, kp);
	free(kp);
}

struct sym_dso *sym_kernel_dso(struct sym_ctx *c, u64 addr)
{
	if (!c->kernel)
		kernel_load(c);
	struct sym_dso *k = c->kernel;
	u64 src = addr - (u64)k->reloc;
	if (c->modules.n == 0 || (src >= k->start && src < k->end))
		return k;
	/* Where the recording placed its modules, when it said so. */
	struct sym_dso *m = kernel_recorded_module(c, addr);
	if (m)
		return m;
	/* The last module starting at or below addr, if addr is inside it. */
	size_t lo = 0, hi = c->modules.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->modules.v[mid]->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr < c->modules.v[lo - 1]->end)
		return c->modules.v[lo - 1];
	return k;
}
