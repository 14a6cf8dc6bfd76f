/* symtab.c - sorted symbol tables: building them from loaders' raw
 * symbols (aliases resolved and sizes fixed the way perf shows them) and
 * the binary search that every sample's address goes through.
 *
 * Names are demangled lazily, when a lookup first finds a symbol or two
 * aliases must be compared by their shown names, so a C++ library of 100k
 * symbols costs only the names a profile shows; tables of 1024 symbols or
 * more remember recent answers by address. */
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

/* Only names that begin with '_' can be mangled (C++ "_Z", Rust "_R"):
 * the rest never wait for demangling. */
static bool may_be_mangled(const char *name)
{
	return name[0] == '_';
}

void stb_add(struct symtab_builder *b, u64 start, u64 size, const char *name,
	     u8 bind, bool secondary)
{
	if (!name || !*name)
		return;
	stb_add_plain(b, start, size, name, bind, secondary);
	/* Demangled later: by pick_aliases when it must compare names, by
	 * symtab_find when the symbol is first found. */
	b->ents.v[b->ents.n - 1].mangled = b->demangle && may_be_mangled(name);
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

/* Sorts by cmp_entry: a stable radix sort on start (8 bits a pass, the
 * passes whose digit never changes skipped: a library's addresses differ
 * in their low three bytes), which keeps arrival (seq) order among equal
 * starts; then primaries go before secondaries at each start.  Loading a
 * big library's table spent most of its time in qsort. */
static void sort_entries(struct symtab_entry *v, size_t n)
{
	struct symtab_entry *tmp = xmalloc(n * sizeof(*tmp));
	struct symtab_entry *src = v, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[(src[i].start >> shift) & 255]++;
		if (count[(src[0].start >> shift) & 255] == n)
			continue;
		for (size_t d = 0, pos = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].start >> shift) & 255]++] = src[i];
		struct symtab_entry *swap = src;
		src = dst;
		dst = swap;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && v[j].start == v[i].start)
			j++;
		for (size_t a = i + 1; a < j; a++)       /* a handful at most */
			for (size_t b = a; b > i && cmp_entry(&v[b], &v[b - 1]) < 0; b--) {
				struct symtab_entry t = v[b];
				v[b] = v[b - 1];
				v[b - 1] = t;
			}
		i = j;
	}
}

static int leading_underscores(const char *s)
{
	int n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* The shown name of an entry: demangled now if it still waits. */
static const char *entry_name(struct symtab_builder *b, struct symtab_entry *e)
{
	if (e->mangled) {
		char *dem = sym_demangle_name(b->pool.s + e->name);
		if (dem)
			e->name = pool_add(&b->pool, dem);
		free(dem);
		e->mangled = false;
	}
	return b->pool.s + e->name;
}

/* Between two symbols at one address, the one perf would show: a sized
 * one, then non-weak, then global, then fewer leading underscores, then
 * the longer name (as shown, so demangled).  Returns true when b beats a. */
static bool better_alias(struct symtab_builder *bld, struct symtab_entry *a,
			 struct symtab_entry *b)
{
	if (bld->last_unsized_wins && a->size == 0 && b->size == 0)
		return b->seq > a->seq;
	if ((a->size == 0) != (b->size == 0))
		return a->size == 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return a->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return b->bind == STB_GLOBAL;
	entry_name(bld, a);
	const char *nb = entry_name(bld, b), *na = bld->pool.s + a->name;
	int ua = leading_underscores(na), ub = leading_underscores(nb);
	if (ua != ub)
		return ub < ua;
	return strlen(nb) > strlen(na);
}

/* Keeps one entry per start (secondary ones only where no primary is),
 * compacting the builder's entries in place; returns the new count. */
static size_t pick_aliases(struct symtab_builder *b)
{
	struct symtab_entry *v = b->ents.v;
	size_t n = b->ents.n, out = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		struct symtab_entry best = v[i];
		for (; j < n && v[j].start == v[i].start; j++) {
			if (v[j].secondary && !v[i].secondary)
				continue;
			if (better_alias(b, &best, &v[j]))
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
		sort_entries(v, n);
	n = pick_aliases(b);

	t->pool = b->pool.s;           /* the pool moves into the table */
	b->pool.s = NULL;
	t->syms = xcalloc(n, sizeof(*t->syms));
	t->mangled = xcalloc((n + 63) / 64, sizeof(u64));
	for (size_t i = 0; i < n; i++) {
		u64 size = v[i].size;
		if (size == 0)
			size = i + 1 < n ? v[i + 1].start - v[i].start
				: last_reach(v[i].start);
		t->syms[i] = (struct sym){ v[i].start, size, t->pool + v[i].name };
		if (v[i].mangled)
			t->mangled[i / 64] |= 1ull << (i % 64);
	}
	t->n = n;
	stb_free(b);
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->pool);
	free(t->mangled);
	free(t->hits);
	for (size_t i = 0; i < t->demangled.n; i++)
		free(t->demangled.v[i]);
	VEC_FREE(&t->demangled);
	memset(t, 0, sizeof(*t));
}

/* Symbol i, its name demangled first if it still waits. */
static const struct sym *found(struct symtab *t, size_t i)
{
	t->last = i;
	if (t->mangled[i / 64] & (1ull << (i % 64))) {
		t->mangled[i / 64] &= ~(1ull << (i % 64));
		char *dem = sym_demangle_name(t->syms[i].name);
		if (dem) {
			VEC_PUSH(&t->demangled, dem);
			t->syms[i].name = dem;
		}
	}
	return &t->syms[i];
}

static inline bool sym_has(const struct sym *s, u64 addr)
{
	return addr - s->start < s->size;
}

/* How far back to look for a symbol that encloses a smaller one placed
 * inside it (a local label inside a function, say). */
#define ENCLOSING_LOOKBACK 4

/* Tables this big remember their answers: a binary search over them is a
 * cache miss per step. */
#define HITS_MIN_SYMS 1024
#define HITS_MAX 8192

/* The slot remembering addr's answer (NULL when the table keeps none). */
static struct symtab_hit *hit_slot(struct symtab *t, u64 addr)
{
	if (t->n < HITS_MIN_SYMS || t->n >= SYMTAB_NO_SYM)
		return NULL;
	if (!t->nhits) {
		t->nhits = HITS_MAX;
		while (t->nhits / 2 >= t->n)
			t->nhits /= 2;
		t->hits = xcalloc(t->nhits, sizeof(*t->hits));
	}
	return &t->hits[hash_u64(addr) & (t->nhits - 1)];
}

static const struct sym *search(struct symtab *t, u64 addr);

const struct sym *symtab_find(struct symtab *t, u64 addr)
{
	if (t->n == 0)
		return NULL;
	if (sym_has(&t->syms[t->last], addr))
		return found(t, t->last);
	struct symtab_hit *h = hit_slot(t, addr);
	if (h && h->used && h->addr == addr)
		return h->sym == SYMTAB_NO_SYM ? NULL : found(t, h->sym);
	const struct sym *s = search(t, addr);
	if (h)
		*h = (struct symtab_hit){ addr, s ? (u32)(s - t->syms) : SYMTAB_NO_SYM, true };
	return s;
}

/* The binary search behind symtab_find. */
static const struct sym *search(struct symtab *t, u64 addr)
{
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
		if (sym_has(&t->syms[lo - k], addr))
			return found(t, lo - k);
	}
	return NULL;
}
