/* kchoice.c - which kallsyms names a recording's kernel, and where: the
 * running kernel's when the build-ids agree, the build-id cache's copy
 * when they do not, none at all when neither fits (a wrong name is worse
 * than [unknown]); and the relocation from the addresses the recording
 * saw (its kernel map's _text, its module maps) to those of the kallsyms
 * read, which differ on another boot (KASLR) or for a module loaded
 * elsewhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

void kernel_note_ref(struct kernel_refs *r, const char *name, u64 addr)
{
	if (!strcmp(name, "_text"))
		r->text = addr;
	else if (!strcmp(name, "_stext"))
		r->stext = addr;
}

static bool tracked_ref(const char *name)
{
	return !strcmp(name, "_text") || !strcmp(name, "_stext");
}

static u64 ref_addr(const struct kernel_refs *r, const char *name)
{
	return !strcmp(name, "_text") ? r->text : !strcmp(name, "_stext") ? r->stext : 0;
}

void kernel_relocate(struct sym_ctx *c)
{
	if (!c->kernel || !c->kernel_ref_addr)
		return;
	u64 src = ref_addr(&c->kernel_src_refs, c->kernel_ref_name);
	if (src)
		c->kernel->reloc = (s64)(c->kernel_ref_addr - src);
}

static bool ids_differ(const u8 *a, size_t na, const u8 *b, size_t nb)
{
	return na != nb || memcmp(a, b, na) != 0;
}

void sym_kernel_expect(struct sym_ctx *c, const u8 *id, size_t n)
{
	if (c->kallsyms_given || !n || n > SYM_BUILD_ID_MAX || c->kernel || c->kernel_parse)
		return;
	memcpy(c->kernel_rec_id, id, n);
	c->kernel_rec_id_size = n;
	int got = sym_kernel_build_id(c->kernel_run_id, sizeof(c->kernel_run_id));
	if (got <= 0)
		return;        /* nothing to compare with: as before, the running one */
	c->kernel_run_id_size = (size_t)got;
	if (!ids_differ(id, n, c->kernel_run_id, (size_t)got))
		return;
	char *cached = sym_cache_find("[kernel.kallsyms]", id, n, "kallsyms");
	if (cached) {
		free(c->kallsyms);
		c->kallsyms = cached;
		c->kernel_cached = true;
	} else {
		c->kernel_unknown = true;
	}
}

void sym_kernel_recorded_text(struct sym_ctx *c, const char *ref, u64 addr)
{
	if (!ref || !*ref)
		ref = "_text";     /* a bare "[kernel.kallsyms]": perf's default */
	if (!tracked_ref(ref) || !addr)
		return;            /* a symbol we do not track */
	snprintf(c->kernel_ref_name, sizeof(c->kernel_ref_name), "%s", ref);
	c->kernel_ref_addr = addr;
	kernel_relocate(c);
}

/* "ext4" from "[ext4]" or "/lib/modules/.../ext4.ko.xz"; kallsyms tags
 * modules with '_' where their file names may have '-'. */
static char *module_tag(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (*base == '[')
		base++;
	size_t n = strcspn(base, "].");
	char *tag = xasprintf("%.*s", (int)n, base);
	for (char *p = tag; *p; p++)
		if (*p == '-')
			*p = '_';
	return tag;
}

void sym_kernel_recorded_module(struct sym_ctx *c, const char *name, u64 start, u64 len)
{
	if (!len || start + len < start)
		return;
	struct kernel_rec_module m = { .name = module_tag(name), .start = start,
				       .end = start + len };
	VEC_PUSH(&c->rec_modules, m);
}

static struct sym_dso *module_named(struct sym_ctx *c, const char *tag)
{
	for (size_t i = 0; i < c->modules.n; i++) {
		const char *p = c->modules.v[i]->path;   /* "[tag]" */
		size_t n = strlen(tag);
		if (!strncmp(p + 1, tag, n) && p[n + 1] == ']' && !p[n + 2])
			return c->modules.v[i];
	}
	return NULL;
}

struct sym_dso *kernel_recorded_module(struct sym_ctx *c, u64 addr)
{
	for (size_t i = 0; i < c->rec_modules.n; i++) {
		struct kernel_rec_module *m = &c->rec_modules.v[i];
		if (addr < m->start || addr >= m->end)
			continue;
		if (!m->looked) {
			m->looked = true;
			m->d = module_named(c, m->name);
			if (m->d)
				m->d->reloc = (s64)(m->start - m->d->start);
		}
		return m->d;
	}
	return NULL;
}

void sym_kernel_expect_module(struct sym_ctx *c, const char *name, const u8 *id, size_t n)
{
	if (!n || n > SYM_BUILD_ID_MAX)
		return;
	struct kernel_mod_id m = { .name = module_tag(name), .n = n };
	memcpy(m.id, id, n);
	VEC_PUSH(&c->mod_ids, m);
}

/* Only the running kernel's modules can be asked for their build-ids; a
 * cached or given kallsyms answers for its modules with the kernel's. */
void kernel_check_modules(struct sym_ctx *c)
{
	if (c->kernel_cached || c->kallsyms_given)
		return;
	for (size_t i = 0; i < c->mod_ids.n; i++) {
		const struct kernel_mod_id *m = &c->mod_ids.v[i];
		struct sym_dso *d = module_named(c, m->name);
		u8 run[SYM_BUILD_ID_MAX];
		int got = d ? sym_module_build_id(m->name, run, sizeof(run)) : -1;
		if (got > 0 && ids_differ(m->id, m->n, run, (size_t)got) && d->trusted) {
			d->trusted = false;
			VEC_PUSH(&c->problems, d);
		}
	}
}

void kernel_choice_free(struct sym_ctx *c)
{
	for (size_t i = 0; i < c->mod_ids.n; i++)
		free(c->mod_ids.v[i].name);
	VEC_FREE(&c->mod_ids);
	for (size_t i = 0; i < c->rec_modules.n; i++)
		free(c->rec_modules.v[i].name);
	VEC_FREE(&c->rec_modules);
}

void sym_kernel_info(const struct sym_ctx *c, struct sym_kernel_info *out)
{
	memset(out, 0, sizeof(*out));
	out->used = c->kernel != NULL;
	out->unknown = c->kernel_unknown;
	out->cached = c->kernel_cached;
	if (c->kernel_rec_id_size)
		sym_build_id_hex(c->kernel_rec_id, c->kernel_rec_id_size, out->recorded);
	if (c->kernel_run_id_size)
		sym_build_id_hex(c->kernel_run_id, c->kernel_run_id_size, out->running);
}
