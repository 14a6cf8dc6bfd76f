/* util.c - what the tools' sinks share: tracepoint ids and fields, strings
 * read from the user-stack copy record --tool takes, log2 histograms. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/tools.h"

size_t tool_tp_ids(const struct tool_env *env, const char *glob, u64 *ids, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; env->trace && i < pd_reader_nattrs(env->reader) && n < max; i++) {
		const struct pd_attr *a = pd_reader_attr(env->reader, i);
		const char *name = a->attr.type == PERF_TYPE_TRACEPOINT
				   ? pd_trace_name(env->trace, a->attr.config) : NULL;
		if (name && fnmatch(glob, name, 0) == 0)
			ids[n++] = a->attr.config;
	}
	return n;
}

bool tool_tp_id(const struct tool_env *env, const char *name, u64 *id)
{
	return tool_tp_ids(env, name, id, 1) == 1;   /* names hold no glob characters */
}

u64 tool_field(const struct tool_env *env, const struct rp_sample *s, const char *name)
{
	u64 v = 0;
	if (pd_trace_field(env->trace, s->attr->attr.config, s->s->raw, s->s->raw_size,
			   name, &v) < 0)
		return 0;
	return v;
}

u64 tool_path_arg(const struct tool_env *env, const struct rp_sample *s)
{
	u64 addr = tool_field(env, s, "filename");
	return addr ? addr : tool_field(env, s, "pathname");
}

/* A __data_loc field holds its string's offset (low 16 bits) and length
 * (high 16) within the record. */
const char *tool_data_loc(const struct rp_sample *s, u64 loc, size_t *len)
{
	size_t off = loc & 0xffff;
	*len = (loc >> 16) & 0xffff;
	if (off >= s->s->raw_size || *len > s->s->raw_size - off)
		return NULL;
	return (const char *)s->s->raw + off;
}

static const char *dynamic_str(const struct rp_sample *s, u64 loc, char *buf, size_t cap)
{
	size_t len;
	const char *src = tool_data_loc(s, loc, &len);
	if (!src)
		return "";
	len = strnlen(src, len < cap - 1 ? len : cap - 1);
	memcpy(buf, src, len);
	buf[len] = '\0';
	return buf;
}

const char *tool_field_str(const struct tool_env *env, const struct rp_sample *s,
			   const char *name, char *buf, size_t cap)
{
	u64 id = s->attr->attr.config, loc;
	buf[0] = '\0';
	if (pd_trace_field_str(env->trace, id, s->s->raw, s->s->raw_size, name, buf, cap) == 0)
		return buf;
	if (pd_trace_field(env->trace, id, s->s->raw, s->s->raw_size, name, &loc) < 0)
		return buf;
	return dynamic_str(s, loc, buf, cap);
}

/* The copy begins at the user sp, the only user register sampled. */
static const u8 *user_at(const struct rp_sample *s, u64 addr, size_t *avail)
{
	const struct pd_sample *p = s->s;
	if (!p->stack || !p->user_regs || !p->user_abi)
		return NULL;
	u64 sp = p->user_regs[0], n = p->stack_dyn_size ? p->stack_dyn_size : p->stack_size;
	if (n > p->stack_size)
		n = p->stack_size;
	if (addr < sp || addr - sp >= n)
		return NULL;
	*avail = (size_t)(n - (addr - sp));
	return p->stack + (addr - sp);
}

/* A string in read-only data (a literal path or argument) reads from the
 * file mapped there, as the process saw it. */
static const char *file_string(const struct rp_sample *s, u64 addr, char *buf, size_t cap)
{
	struct sym_map *m = s->thread && s->thread->maps ? sym_maps_find(s->thread->maps, addr)
							  : NULL;
	if (!m || !m->path || m->path[0] != '/')
		return NULL;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = pread(fd, buf, cap - 1, (off_t)(m->pgoff + (addr - m->start)));
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strlen(buf) < (size_t)n ? buf : NULL;   /* whole strings only */
}

const char *tool_user_str(const struct rp_sample *s, u64 addr, char *buf, size_t cap)
{
	size_t avail;
	const char *p = (const char *)user_at(s, addr, &avail);
	if (!p)
		return file_string(s, addr, buf, cap);
	size_t len = strnlen(p, avail);
	if (len == avail)
		return NULL;       /* cut by the copy's end: not whole */
	if (len >= cap)
		len = cap - 1;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}

bool tool_user_u64(const struct rp_sample *s, u64 addr, u64 *v)
{
	size_t avail;
	const u8 *p = user_at(s, addr, &avail);
	if (!p || avail < 8)
		return false;
	memcpy(v, p, 8);
	return true;
}

int tool_missing(const char *tool, const char *what)
{
	err_set("the recording has no %s: record with 'ember record --tool %s'", what, tool);
	return -1;
}

void tool_slots_init(struct tool_slots *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	u64map_init(&t->index);
	t->size = size;
}

void tool_slots_free(struct tool_slots *t)
{
	for (size_t i = 0; i < t->v.n; i++)
		free(t->v.v[i]);
	VEC_FREE(&t->v);
	u64map_free(&t->index);
}

void *tool_slots_get(struct tool_slots *t, u32 tid)
{
	bool created;
	u64 *slot = u64map_slot(&t->index, tid, &created);
	if (created) {
		VEC_PUSH(&t->v, xcalloc(1, t->size));
		*slot = t->v.n;
	}
	return t->v.v[*slot - 1];
}

void *tool_slots_find(const struct tool_slots *t, u32 tid)
{
	u64 *slot = u64map_get(&t->index, tid);
	return slot ? t->v.v[*slot - 1] : NULL;
}

void tool_pending_init(struct tool_pending *p)
{
	tool_slots_init(&p->slots, TOOL_STR_MAX);
}

void tool_pending_free(struct tool_pending *p)
{
	tool_slots_free(&p->slots);
}

char *tool_pending_slot(struct tool_pending *p, u32 tid)
{
	return tool_slots_get(&p->slots, tid);
}

const char *tool_pending_peek(const struct tool_pending *p, u32 tid)
{
	const char *s = tool_slots_find(&p->slots, tid);
	return s && s[0] ? s : NULL;
}

/* The string stays readable until tid's next entry. */
const char *tool_pending_take(struct tool_pending *p, u32 tid)
{
	char *s = tool_slots_find(&p->slots, tid);
	if (!s || !s[0])
		return NULL;
	/* Marked taken by a NUL in front, the text kept behind it. */
	memmove(s + 1, s, strnlen(s, TOOL_STR_MAX - 2) + 1);
	s[TOOL_STR_MAX - 1] = '\0';
	s[0] = '\0';
	return s + 1;
}

static int log2_slot(u64 v)
{
	int i = 0;
	while (v > 1 && i < 63) {
		v >>= 1;
		i++;
	}
	return v ? i + 1 : 0;
}

void tool_hist_add(struct tool_hist *h, u64 v)
{
	int i = log2_slot(v);
	h->slot[i < 63 ? i : 63]++;
	h->total += v;
	h->n++;
}

/* BCC's layout: slot 0 holds 0, slot i (i >= 1) holds 2^(i-1) .. 2^i - 1. */
void tool_hist_print(const struct tool_hist *h, const char *unit, FILE *out)
{
	int last = -1;
	u64 most = 0;
	for (int i = 0; i < 64; i++)
		if (h->slot[i]) {
			last = i;
			if (h->slot[i] > most)
				most = h->slot[i];
		}
	fprintf(out, "%20s : count     distribution\n", unit);
	for (int i = 0; i <= last; i++) {
		u64 lo = i ? 1ULL << (i - 1) : 0, hi = i ? (1ULL << i) - 1 : 0;
		char bar[41];
		int stars = most ? (int)(h->slot[i] * 40 / most) : 0;
		memset(bar, '*', (size_t)stars);
		memset(bar + stars, ' ', (size_t)(40 - stars));
		bar[40] = '\0';
		fprintf(out, "%10llu -> %-10llu : %-8llu |%s|\n", (unsigned long long)lo,
			(unsigned long long)hi, (unsigned long long)h->slot[i], bar);
	}
}

void tool_counts_init(struct tool_counts *c)
{
	memset(c, 0, sizeof(*c));
	u64map_init(&c->index);
}

void tool_counts_reset(struct tool_counts *c)
{
	for (size_t i = 0; i < c->rows.n; i++)
		free(c->rows.v[i].hist);
	c->rows.n = 0;
	u64map_free(&c->index);
	u64map_init(&c->index);
}

void tool_counts_free(struct tool_counts *c)
{
	tool_counts_reset(c);
	VEC_FREE(&c->rows);
	u64map_free(&c->index);
}

struct tool_row *tool_counts_row(struct tool_counts *c, u64 key, const char *label)
{
	bool created;
	u64 *slot = u64map_slot(&c->index, key, &created);
	if (created) {
		struct tool_row r = { .key = key };
		snprintf(r.label, sizeof(r.label), "%s", label ? label : "");
		VEC_PUSH(&c->rows, r);
		*slot = c->rows.n;
	}
	return &c->rows.v[*slot - 1];
}

struct tool_hist *tool_counts_hist(struct tool_counts *c, struct tool_row *r)
{
	(void)c;
	if (!r->hist)
		r->hist = xcalloc(1, sizeof(*r->hist));
	return r->hist;
}

static int by_count(const void *a, const void *b)
{
	const struct tool_row *x = *(struct tool_row *const *)a, *y = *(struct tool_row *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int by_time(const void *a, const void *b)
{
	const struct tool_row *x = *(struct tool_row *const *)a, *y = *(struct tool_row *const *)b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return by_count(a, b);
}

struct tool_row **tool_counts_sorted(const struct tool_counts *c, bool time)
{
	struct tool_row **v = xcalloc(c->rows.n + 1, sizeof(*v));
	for (size_t i = 0; i < c->rows.n; i++)
		v[i] = &c->rows.v[i];
	qsort(v, c->rows.n, sizeof(*v), time ? by_time : by_count);
	return v;
}

void tool_forks_init(struct tool_forks *f)
{
	u64map_init(&f->ppid);
	u64map_init(&f->born);
}

void tool_forks_free(struct tool_forks *f)
{
	u64map_free(&f->ppid);
	u64map_free(&f->born);
}

void tool_forks_event(struct tool_forks *f, const struct pd_event *ev)
{
	if (ev->type != PERF_RECORD_FORK)
		return;
	bool created;
	*u64map_slot(&f->born, ev->u.task.tid, &created) = ev->u.task.time;
	/* A thread's FORK names its creator, its own process, as ppid. */
	if (ev->u.task.pid == ev->u.task.tid)
		*u64map_slot(&f->ppid, ev->u.task.pid, &created) = (u64)ev->u.task.ppid + 1;
}

const char *tool_forks_ppid(const struct tool_forks *f, u32 pid, char *buf)
{
	u64 *pp = u64map_get(&f->ppid, pid);
	if (!pp)
		return "?";
	snprintf(buf, 16, "%llu", (unsigned long long)(*pp - 1));
	return buf;
}
