/* pair.c - begins paired with their ends by a key (a thread, a CPU): the
 * tools' durations (a syscall from its entry to its exit, a run from a
 * switch-in to the switch-out, an interrupt, a reclaim, a piece of
 * writeback) are each an end event's time less the begin's kept for its
 * key.  One place for the bookkeeping the tools kept each in a map of
 * their own, and where the tracing language's begin/end pairs will go. */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

void tool_pair_init(struct tool_pair *p)
{
	memset(p, 0, sizeof(*p));
	u64map_init(&p->index);
}

void tool_pair_reset(struct tool_pair *p)
{
	p->begins.n = 0;
	u64map_free(&p->index);
	u64map_init(&p->index);
}

void tool_pair_free(struct tool_pair *p)
{
	VEC_FREE(&p->begins);
	u64map_free(&p->index);
}

/* key's begin, made (none under way) on first use: one probe per event,
 * and no allocation once every key has one. */
static struct tool_begin *begin_of(struct tool_pair *p, u64 key)
{
	bool created;
	u64 *slot = u64map_slot(&p->index, key, &created);
	if (created) {
		struct tool_begin b = { 0, 0 };
		VEC_PUSH(&p->begins, b);
		*slot = p->begins.n;
	}
	return &p->begins.v[*slot - 1];
}

bool tool_pair_begin(struct tool_pair *p, u64 key, u64 time, u64 value)
{
	struct tool_begin *b = begin_of(p, key);
	bool under_way = b->time != 0;
	b->time = time;
	b->value = value;
	return under_way;
}

/* key's begin under way at or before time, or NULL. */
static struct tool_begin *ending(const struct tool_pair *p, u64 key, u64 time)
{
	const u64 *slot = u64map_get(&p->index, key);
	struct tool_begin *b = slot ? &p->begins.v[*slot - 1] : NULL;
	return b && b->time && time >= b->time ? b : NULL;
}

/* The pair b makes with an end at time, which ends it. */
static bool paired(struct tool_begin *b, u64 time, u64 *ns)
{
	*ns = time - b->time;
	b->time = 0;
	return true;
}

bool tool_pair_end(struct tool_pair *p, u64 key, u64 time, u64 *ns, u64 *value)
{
	struct tool_begin *b = ending(p, key, time);
	if (!b)
		return false;
	if (value)
		*value = b->value;
	return paired(b, time, ns);
}

bool tool_pair_end_of(struct tool_pair *p, u64 key, u64 time, u64 value, u64 *ns)
{
	struct tool_begin *b = ending(p, key, time);
	return b && b->value == value && paired(b, time, ns);
}

void tool_pair_drop(struct tool_pair *p, u64 key)
{
	u64 *slot = u64map_get(&p->index, key);
	if (slot)
		p->begins.v[*slot - 1].time = 0;
}
