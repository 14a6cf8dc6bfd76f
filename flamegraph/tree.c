/* tree.c - the merged tree of stacks: names interned once, children found
 * through one hash map keyed by (parent, name), counts summed inclusively
 * on the way down so the writers never recount.
 *
 * Callers that meet the same names again (collapse) intern each name once
 * and add stacks by name id; the tree remembers the last stack's path
 * (the memo), so the part the next stack shares needs no child lookups. */
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph-internal.h"

#define MAX_NODES (UINT32_MAX - 1)
#define MAX_NAMES FLAME_NAME_MASK
#define MAX_TEXT  ((size_t)UINT32_MAX)

static u32 name_hash(const char *s, size_t len)
{
	u32 h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (u8)s[i]) * 16777619u;
	return h;
}

static u32 add_node(struct flame_tree *t, u32 name, enum flame_kind kind, u32 parent)
{
	struct flame_node n = { .name_kind = name | (u32)kind << FLAME_KIND_SHIFT, .parent = parent,
				.first_child = FLAME_NONE, .next_sibling = FLAME_NONE };
	if (parent != FLAME_NONE) {
		n.next_sibling = t->nodes.v[parent].first_child;
		t->nodes.v[parent].first_child = (u32)t->nodes.n;
	}
	VEC_PUSH(&t->nodes, n);
	return (u32)(t->nodes.n - 1);
}

static void grow_slots(struct flame_tree *t)
{
	size_t cap = t->nslots ? t->nslots * 2 : 1024;
	u32 *slots = xcalloc(cap, sizeof(*slots));
	for (size_t id = 0; id < t->names.n; id++) {
		size_t i = t->names.v[id].hash & (cap - 1);
		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = (u32)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = cap;
}

/* The id of the bytes, added when new; FLAME_NONE when full. */
static u32 intern(struct flame_tree *t, const char *s, size_t len)
{
	if ((t->names.n + 1) * 2 > t->nslots)
		grow_slots(t);
	u32 h = name_hash(s, len);
	size_t i = h & (t->nslots - 1);
	for (; t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		const struct flame_name *n = &t->names.v[t->slots[i] - 1];
		if (n->hash == h && n->len == len && !memcmp(t->text.v + n->off, s, len))
			return t->slots[i] - 1;
	}
	if (len > MAX_TEXT - t->text.n - 1 || t->names.n >= MAX_NAMES)
		return FLAME_NONE;
	struct flame_name n = { .off = (u32)t->text.n, .len = (u32)len, .hash = h };
	VEC_GROW(&t->text, t->text.n + len + 1);
	memcpy(t->text.v + t->text.n, s, len);
	t->text.n += len;
	t->text.v[t->text.n++] = '\0';
	VEC_PUSH(&t->names, n);
	t->slots[i] = (u32)t->names.n;
	return (u32)(t->names.n - 1);
}

struct flame_tree *flame_tree_new(const struct flame_tree_opts *o)
{
	struct flame_tree *t = xcalloc(1, sizeof(*t));
	if (o)
		t->opts = *o;
	add_node(t, intern(t, "all", 3), FLAME_USER, FLAME_NONE);
	return t;
}

void flame_tree_free(struct flame_tree *t)
{
	if (!t)
		return;
	VEC_FREE(&t->text);
	VEC_FREE(&t->names);
	free(t->slots);
	VEC_FREE(&t->nodes);
	free(t->kids);
	VEC_FREE(&t->scratch);
	for (int i = 0; i < FLAME_MEMOS; i++) {
		VEC_FREE(&t->memos[i].names);
		VEC_FREE(&t->memos[i].nodes);
	}
	free(t);
}

static size_t child_slot(u32 parent, u32 name, size_t cap)
{
	return hash_u64((u64)parent << 32 | name) & (cap - 1);
}

/* The child table holds only node ids (4 bytes a slot): the key is read
 * back from the node, which keeps big profiles small in memory. */
static void grow_kids(struct flame_tree *t)
{
	size_t cap = t->nkids ? t->nkids * 2 : 1024;
	u32 *kids = xcalloc(cap, sizeof(*kids));
	for (size_t id = 1; id < t->nodes.n; id++) {
		const struct flame_node *n = &t->nodes.v[id];
		size_t i = child_slot(n->parent, flame_node_name(n), cap);
		while (kids[i])
			i = (i + 1) & (cap - 1);
		kids[i] = (u32)id + 1;
	}
	free(t->kids);
	t->kids = kids;
	t->nkids = cap;
}

/* The child called name, made with this kind when new. */
static u32 child_of(struct flame_tree *t, u32 parent, u32 name, enum flame_kind kind)
{
	if ((t->nodes.n + 1) * 4 > t->nkids * 3)
		grow_kids(t);
	size_t i = child_slot(parent, name, t->nkids);
	for (; t->kids[i]; i = (i + 1) & (t->nkids - 1)) {
		const struct flame_node *n = &t->nodes.v[t->kids[i] - 1];
		if (n->parent == parent && flame_node_name(n) == name)
			return t->kids[i] - 1;
	}
	if (t->nodes.n >= MAX_NODES)
		return FLAME_NONE;
	u32 id = add_node(t, name, kind, parent);
	t->kids[i] = id + 1;
	return id;
}

u32 flame_tree_name(struct flame_tree *t, const char *name, size_t len)
{
	return intern(t, name, len);
}

/* Adds count along one stack: frame i's name and kind come from frames
 * (interned here) or named; with --reverse the leaf goes first. */
static int add_stack(struct flame_tree *t, const struct flame_frame *frames,
		     const struct flame_named *named, size_t n, u64 count, enum flame_side side)
{
	if (n > FLAME_MAX_DEPTH) {
		err_set("stack of %zu frames (at most %d)", n, FLAME_MAX_DEPTH);
		return -1;
	}
	if (!count)
		return 0;
	int s = side == FLAME_BEFORE;
	u32 cur = 0;
	t->nodes.v[0].value[s] = flame_sat_add(t->nodes.v[0].value[s], count, NULL);
	struct flame_memo *m = NULL;
	bool same = true;      /* so far the path of the memo's last stack */
	for (size_t k = 0; k < n; k++) {
		size_t i = t->opts.reverse ? n - 1 - k : k;
		u32 name = frames ? intern(t, frames[i].name, frames[i].len) : named[i].name;
		enum flame_kind kind = frames ? frames[i].kind : named[i].kind;
		kind = kind <= FLAME_INLINED ? kind : FLAME_USER;
		if (!m) {
			m = &t->memos[hash_u64(name) % FLAME_MEMOS];
			VEC_GROW(&m->names, n);
			VEC_GROW(&m->nodes, n);
		}
		u32 next;
		if (same && k < m->names.n && m->names.v[k] == name) {
			next = m->nodes.v[k];
		} else {
			same = false;
			next = name == FLAME_NONE ? FLAME_NONE : child_of(t, cur, name, kind);
			m->names.v[k] = name;
			m->nodes.v[k] = next;
		}
		if (next == FLAME_NONE) {
			m->names.n = 0;
			err_set("flame graph too large (%zu frames, %zu names)",
				t->nodes.n, t->names.n);
			return -1;
		}
		cur = next;
		t->nodes.v[cur].value[s] = flame_sat_add(t->nodes.v[cur].value[s], count, NULL);
	}
	if (m)
		m->names.n = m->nodes.n = n;
	t->total[s] = flame_sat_add(t->total[s], count, NULL);
	if (s)
		t->diff = true;
	return 0;
}

int flame_tree_add(struct flame_tree *t, const struct flame_frame *frames, size_t n,
		   u64 count, enum flame_side side)
{
	return add_stack(t, frames, NULL, n, count, side);
}

int flame_tree_add_named(struct flame_tree *t, const struct flame_named *frames, size_t n,
			 u64 count, enum flame_side side)
{
	return add_stack(t, NULL, frames, n, count, side);
}

u64 flame_tree_total(const struct flame_tree *t, enum flame_side side)
{
	return t->total[side == FLAME_BEFORE];
}

bool flame_tree_is_diff(const struct flame_tree *t)
{
	return t->diff;
}

size_t flame_tree_nodes(const struct flame_tree *t)
{
	return t->nodes.n;
}
