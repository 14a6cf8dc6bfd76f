/* maps.c - a process's address space as mmap records describe it: file
 * mappings sorted by address, a new mapping replacing what it overlaps,
 * found by binary search.  The replay and the recorder's online unwinder
 * both keep one per process. */
#include "symbols/symbols.h"

#include <stdlib.h>
#include <string.h>

struct sym_maps *sym_maps_new(u32 pid, u64 *clock)
{
	struct sym_maps *m = xcalloc(1, sizeof(*m));
	m->pid = pid;
	m->clock = clock;
	m->generation = ++*clock;
	return m;
}

struct sym_maps *sym_maps_copy(const struct sym_maps *from, u32 pid)
{
	struct sym_maps *m = sym_maps_new(pid, from->clock);
	for (size_t i = 0; i < from->v.n; i++) {
		struct sym_map copy = from->v.v[i];
		copy.path = xstrdup(copy.path);
		VEC_PUSH(&m->v, copy);
	}
	return m;
}

void sym_maps_free(struct sym_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->v.n; i++)
		free(m->v.v[i].path);
	VEC_FREE(&m->v);
	free(m);
}

/* Index of the first map whose end is above addr. */
static size_t maps_search(const struct sym_maps *m, u64 addr)
{
	size_t lo = 0, hi = m->v.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->v.v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct sym_map *sym_maps_find(struct sym_maps *m, u64 addr)
{
	size_t i = maps_search(m, addr);
	if (i < m->v.n && m->v.v[i].start <= addr)
		return &m->v.v[i];
	return NULL;
}

/* The part of old that a new mapping leaves, [start, end), with its own
 * copy of the path; its file is looked up again. */
static struct sym_map map_part(const struct sym_map *old, u64 start, u64 end)
{
	struct sym_map part = *old;
	part.pgoff += start - old->start;
	part.start = start;
	part.end = end;
	part.path = xstrdup(old->path);
	part.file_known = false;
	part.file = NULL;
	return part;
}

void sym_maps_insert(struct sym_maps *m, struct sym_map *nm)
{
	VEC(struct sym_map) out = {0};
	bool placed = false;
	for (size_t i = 0; i < m->v.n; i++) {
		struct sym_map old = m->v.v[i];
		if (!placed && old.start >= nm->start) {
			VEC_PUSH(&out, *nm);
			placed = true;
		}
		if (old.end <= nm->start || old.start >= nm->end) {
			VEC_PUSH(&out, old);
			continue;
		}
		if (old.start < nm->start)         /* keep the part before */
			VEC_PUSH(&out, map_part(&old, old.start, nm->start));
		if (old.end > nm->end) {           /* keep the part after */
			if (!placed) {
				VEC_PUSH(&out, *nm);
				placed = true;
			}
			VEC_PUSH(&out, map_part(&old, nm->end, old.end));
		}
		free(old.path);
	}
	if (!placed)
		VEC_PUSH(&out, *nm);
	free(m->v.v);
	m->v.v = out.v;
	m->v.n = out.n;
	m->v.cap = out.cap;
	m->generation = ++*m->clock;
}
