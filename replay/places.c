/* places.c - the places frames fall in (file and symbol) as a view's own
 * records, which outlive the files' release by the replay: found from a
 * frame's dso and sym pointers through a cache the view drops before
 * each release, and one record per name, so a file let go of and loaded
 * again lands on the place it had (see replay.h, struct rp_places). */
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

void rp_places_init(struct rp_places *p)
{
	memset(p, 0, sizeof(*p));
	u64map_init(&p->by_name);
	u64map_init(&p->by_pointer);
	u64map_init(&p->strings);
}

void rp_places_free(struct rp_places *p)
{
	for (size_t i = 0; i < p->v.n; i++)
		free(p->v.v[i]);
	VEC_FREE(&p->v);
	VEC_FREE(&p->ptrs);
	for (size_t i = 0; i < p->string_list.n; i++)
		free(p->string_list.v[i]);
	VEC_FREE(&p->string_list);
	u64map_free(&p->by_name);
	u64map_free(&p->by_pointer);
	u64map_free(&p->strings);
}

const char *rp_places_intern(struct rp_places *p, const char *str)
{
	u64 hash = 1469598103934665603ULL;
	for (const char *c = str; *c; c++)
		hash = (hash ^ (u8)*c) * 1099511628211ULL;
	for (;; hash++) {
		bool created;
		u64 *slot = u64map_slot(&p->strings, hash, &created);
		if (created) {
			char *copy = xstrdup(str);
			VEC_PUSH(&p->string_list, copy);
			*slot = (u64)(uintptr_t)copy;
			return copy;
		}
		const char *have = (const char *)(uintptr_t)*slot;
		if (!strcmp(have, str))
			return have;
	}
}

static u64 name_hash(const struct rp_place *k)
{
	u64 x = hash_u64((u64)(uintptr_t)k->path ^ ((u64)(uintptr_t)k->file << 7));
	return hash_u64(x ^ (u64)(uintptr_t)k->sym.name ^ k->sym.start * 0x9e3779b97f4a7c15ULL ^
			k->sym.size);
}

static bool same_names(const struct rp_place *a, const struct rp_place *b)
{
	return a->path == b->path && a->file == b->file && a->sym.name == b->sym.name &&
	       a->sym.start == b->sym.start && a->sym.size == b->sym.size;
}

/* The place of these names (interned), made when new. */
static const struct rp_place *place_by_name(struct rp_places *p, const struct rp_place *k)
{
	for (u64 hash = name_hash(k);; hash++) {
		bool created;
		u64 *slot = u64map_slot(&p->by_name, hash, &created);
		if (!created) {
			const struct rp_place *have = p->v.v[*slot - 1];
			if (same_names(have, k))
				return have;
			continue;
		}
		struct rp_place *pl = xmalloc(sizeof(*pl));
		*pl = *k;
		pl->id = (u32)p->v.n;
		VEC_PUSH(&p->v, pl);
		*slot = p->v.n;
		return pl;
	}
}

/* The names of a file and symbol, interned. */
static struct rp_place names_of(struct rp_places *p, const struct sym_dso *d,
				const struct sym *s)
{
	struct rp_place k = { 0 };
	if (d) {
		k.path = rp_places_intern(p, sym_dso_path(d));
		k.file = rp_places_intern(p, sym_dso_short(d));
	}
	if (s) {
		k.sym = *s;
		k.sym.name = rp_places_intern(p, s->name);
	}
	return k;
}

const struct rp_place *rp_place_of(struct rp_places *p, const struct sym_dso *d,
				   const struct sym *s)
{
	u64 hash = hash_u64((u64)(uintptr_t)d ^ (u64)(uintptr_t)s * 0x9e3779b97f4a7c15ULL);
	for (;; hash++) {
		bool created;
		u64 *slot = u64map_slot(&p->by_pointer, hash, &created);
		if (!created) {
			const struct rp_place_ptr *pp = &p->ptrs.v[*slot - 1];
			if (pp->dso == d && pp->sym == s)
				return p->v.v[pp->id];
			continue;
		}
		struct rp_place k = names_of(p, d, s);
		const struct rp_place *pl = place_by_name(p, &k);
		struct rp_place_ptr pp = { d, s, pl->id };
		VEC_PUSH(&p->ptrs, pp);
		*slot = p->ptrs.n;
		return pl;
	}
}

void rp_places_forget(struct rp_places *p)
{
	u64map_free(&p->by_pointer);
	u64map_init(&p->by_pointer);
	p->ptrs.n = 0;
}

void rp_place_frame(const struct rp_place *pl, struct rp_frame *f)
{
	f->dso = NULL;
	f->file = pl->path;
	f->sym = pl->sym.name ? &pl->sym : NULL;
}
