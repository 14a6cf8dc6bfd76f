/* symtab.c - sorted symbol tables: building them from loaders' raw
 * symbols (aliases resolved and sizes fixed the way perf shows them) and
 * the binary search that every sample's address goes through. */
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

/* Symbols of unknown size that end a table reach the end of the next
 * page, which is as far as perf lets them reach too. */
#define LAST_SYMBOL_REACH 4096

void stb_init(struct symtab_builder *b, bool demangle)
{
	memset(b, 0, sizeof(*b));
	b->demangle = demangle;
}

void stb_free(struct symtab_builder *b)
{
	VEC_FREE(&b->ents);
	sb_free(&b->pool);
}

static u32 pool_add(struct strbuf *pool, const char *s)
{
	u32 off = (u32)pool->len;
	sb_add(pool, s, strlen(s) + 1);
	return off;
}

void stb_add(struct symtab_builder *b, u64 start, u64 size, const char *name,
	     u8 bind, bool secondary)
{
	if (!name || !*name)
		return;
	char *dem = b->demangle ? sym_demangle_name(name) : NULL;
	stb_add_plain(b, start, size, dem ? dem : name, bind, secondary);
	free(dem);
}

void stb_add_plain(struct symtab_builder *b, u64 start, u64 size, const char *name,
		   u8 bind, bool secondary)
{
	if (!name || !*name)
		return;
	/* A size that wraps the address space is garbage, not a symbol. */
	if (start + size < start)
		size = 0;
	struct symtab_entry e = {
		.start = start, .size = size, .bind = bind, .secondary = secondary,
		.seq = (u32)b->ents.n,
		.name = pool_add(&b->pool, name),
	};
	VEC_PUSH(&b->ents, e);
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct symtab_entry *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->secondary != b->secondary)
		return a->secondary ? 1 : -1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static int leading_underscores(const char *s)
{
	int n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* Between two symbols at one address, the one perf would show: a sized
 * one, then non-weak, then global, then fewer leading underscores, then
 * the longer name.  Returns true when b beats a. */
static bool better_alias(const struct symtab_entry *a, const struct symtab_entry *b,
			 const char *pool, bool last_unsized_wins)
{
	if (last_unsized_wins && a->size == 0 && b->size == 0)
		return b->seq > a->seq;
	if ((a->size == 0) != (b->size == 0))
		return a->size == 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return a->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return b->bind == STB_GLOBAL;
	const char *na = pool + a->name, *nb = pool + b->name;
	int ua = leading_underscores(na), ub = leading_underscores(nb);
	if (ua != ub)
		return ub < ua;
	return strlen(nb) > strlen(na);
}

/* Keeps one entry per start (secondary ones only where no primary is),
 * compacting in place; returns the new count. */
static size_t pick_aliases(struct symtab_entry *v, size_t n, const char *pool,
			   bool last_unsized_wins)
{
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		struct symtab_entry best = v[i];
		for (; j < n && v[j].start == v[i].start; j++) {
			if (v[j].secondary && !v[i].secondary)
				continue;
			if (better_alias(&best, &v[j], pool, last_unsized_wins))
				best = v[j];
		}
		v[out++] = best;
		i = j;
	}
	return out;
}

static u64 last_reach(u64 start)
{
	u64 page_up = (start + LAST_SYMBOL_REACH - 1) & ~(u64)(LAST_SYMBOL_REACH - 1);
	return page_up + LAST_SYMBOL_REACH - start;
}

void stb_finish(struct symtab_builder *b, struct symtab *t)
{
	memset(t, 0, sizeof(*t));
	struct symtab_entry *v = b->ents.v;
	size_t n = b->ents.n;
	if (n == 0) {
		stb_free(b);
		return;
	}
	/* kallsyms and many symbol tables arrive almost sorted: check first. */
	size_t k = 1;
	while (k < n && cmp_entry(&v[k - 1], &v[k]) <= 0)
		k++;
	if (k < n)
		qsort(v, n, sizeof(*v), cmp_entry);
	n = pick_aliases(v, n, b->pool.s, b->last_unsized_wins);

	t->pool = b->pool.s;           /* the pool moves into the table */
	b->pool.s = NULL;
	t->syms = xcalloc(n, sizeof(*t->syms));
	for (size_t i = 0; i < n; i++) {
		u64 size = v[i].size;
		if (size == 0)
			size = i + 1 < n ? v[i + 1].start - v[i].start
				: last_reach(v[i].start);
		t->syms[i] = (struct sym){ v[i].start, size, t->pool + v[i].name };
	}
	t->n = n;
	stb_free(b);
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->pool);
	memset(t, 0, sizeof(*t));
}

static inline bool sym_has(const struct sym *s, u64 addr)
{
	return addr - s->start < s->size;
}

/* How far back to look for a symbol that encloses a smaller one placed
 * inside it (a local label inside a function, say). */
#define ENCLOSING_LOOKBACK 4

const struct sym *symtab_find(struct symtab *t, u64 addr)
{
	if (t->n == 0)
		return NULL;
	if (sym_has(&t->syms[t->last], addr))
		return &t->syms[t->last];
	if (addr < t->syms[0].start)
		return NULL;
	/* The last symbol starting at or below addr. */
	size_t lo = 0, hi = t->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	for (size_t k = 0; k <= ENCLOSING_LOOKBACK && k <= lo; k++) {
		if (sym_has(&t->syms[lo - k], addr)) {
			t->last = lo - k;
			return &t->syms[lo - k];
		}
	}
	return NULL;
}
