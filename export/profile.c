/* profile.c - the in-memory profile: resolved frames turned into pprof's
 * tables once per distinct thing (strings, mappings per file, functions,
 * locations with their inline lines), samples summed per (thread, stack),
 * and the replay sink that feeds it. */
#include <stdlib.h>
#include <string.h>

#include "export/export-internal.h"

/* ---- Indexes ------------------------------------------------------------ */

static u32 ix_first(const struct ex_index *ix, u64 hash)
{
	u64 *head = u64map_get(&ix->heads, hash);
	return head ? (u32)(*head - 1) : EX_NONE;
}

static u32 ix_next(const struct ex_index *ix, u32 id)
{
	return ix->next.v[id];
}

/* Records id (the newest, = ix->next.n) under hash. */
static void ix_add(struct ex_index *ix, u64 hash, u32 id)
{
	bool created;
	u64 *head = u64map_slot(&ix->heads, hash, &created);
	u32 prev = created ? EX_NONE : (u32)(*head - 1);
	*head = (u64)id + 1;
	VEC_PUSH(&ix->next, prev);
}

static void ix_init(struct ex_index *ix)
{
	u64map_init(&ix->heads);
	ix->next.n = 0;
}

static void ix_free(struct ex_index *ix)
{
	u64map_free(&ix->heads);
	VEC_FREE(&ix->next);
}

static u64 hash_bytes(const void *b, size_t n, u64 h)
{
	const u8 *s = b;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ULL;
	return h;
}

static u64 hash_mix(u64 h, u64 v)
{
	return hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL));
}

/* ---- Strings ------------------------------------------------------------ */

static u32 str_id_n(struct ex_profile *p, const char *s, size_t n)
{
	u64 h = hash_bytes(s, n, 1469598103934665603ULL);
	for (u32 id = ix_first(&p->string_ix, h); id != EX_NONE; id = ix_next(&p->string_ix, id))
		if (!strncmp(p->strings.v[id], s, n) && !p->strings.v[id][n])
			return id;
	char *copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	u32 id = (u32)p->strings.n;
	VEC_PUSH(&p->strings, copy);
	ix_add(&p->string_ix, h, id);
	return id;
}

static u32 str_id(struct ex_profile *p, const char *s)
{
	return str_id_n(p, s, strlen(s));
}

/* ---- Life --------------------------------------------------------------- */

static void tables_init(struct ex_profile *p)
{
	ix_init(&p->string_ix);
	ix_init(&p->func_ix);
	ix_init(&p->loc_ix);
	ix_init(&p->thread_ix);
	ix_init(&p->sample_ix);
	u64map_init(&p->map_ix);
	str_id(p, "");   /* pprof's string 0 */
}

struct ex_profile *ex_profile_new(const struct ex_profile_opts *o)
{
	struct ex_profile *p = xcalloc(1, sizeof(*p));
	p->o = *o;
	tables_init(p);
	return p;
}

static void tables_free(struct ex_profile *p)
{
	for (size_t i = 0; i < p->strings.n; i++)
		free(p->strings.v[i]);
	p->strings.n = 0;
	ix_free(&p->string_ix);
	ix_free(&p->func_ix);
	ix_free(&p->loc_ix);
	ix_free(&p->thread_ix);
	ix_free(&p->sample_ix);
	u64map_free(&p->map_ix);
	p->maps.n = p->funcs.n = p->locs.n = p->lines.n = 0;
	p->threads.n = p->samples_v.n = p->stack_locs.n = 0;
}

void ex_profile_reset(struct ex_profile *p)
{
	tables_free(p);
	p->samples = p->skipped = p->total = 0;
	p->first_time = p->last_time = 0;
	p->time_nanos = p->duration_nanos = 0;
	p->time_set = false;
	tables_init(p);
}

void ex_profile_free(struct ex_profile *p)
{
	if (!p)
		return;
	tables_free(p);
	VEC_FREE(&p->strings);
	VEC_FREE(&p->maps);
	VEC_FREE(&p->funcs);
	VEC_FREE(&p->locs);
	VEC_FREE(&p->lines);
	VEC_FREE(&p->threads);
	VEC_FREE(&p->samples_v);
	VEC_FREE(&p->stack_locs);
	VEC_FREE(&p->scratch);
	sb_free(&p->text);
	free(p->event);
	free(p);
}

/* ---- Mappings ----------------------------------------------------------- */

static void put_hex(struct strbuf *sb, const u8 *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		char two[2] = { digits[b[i] >> 4], digits[b[i] & 15] };
		sb_add(sb, two, 2);
	}
}

/* The file's build-id in hex: the recorded one, or for the kernel the
 * recording's build-id list entry; "" when neither says. */
static u32 build_id_string(struct ex_profile *p, const struct sym_dso *d, bool kernel)
{
	size_t n = 0;
	const u8 *id = sym_dso_build_id(d, &n);
	if (!n && kernel && p->o.rp) {
		const struct pd_reader_build_id *k = rp_kernel_build_id(p->o.rp);
		if (k && sym_dso_is_kernel(d) && !strcmp(sym_dso_path(d), "[kernel.kallsyms]")) {
			id = k->id;
			n = k->size;
		}
	}
	sb_reset(&p->text);
	put_hex(&p->text, id, n);
	return str_id_n(p, p->text.s ? p->text.s : "", p->text.len);
}

/* The mapping of frame f's file, made when first seen: the process's map
 * holding it when maps are known, else the address alone (widened as
 * more come). */
static u32 map_of(struct ex_profile *p, const struct rp_frame *f, struct sym_maps *maps)
{
	bool created;
	u64 *slot = u64map_slot(&p->map_ix, (u64)(uintptr_t)f->dso, &created);
	if (!created)
		return (u32)(*slot - 1);
	*slot = p->maps.n + 1;
	struct ex_map m = { .dso = f->dso, .kernel = f->kernel };
	const struct sym_map *sm = !f->kernel && maps ? sym_maps_find(maps, f->ip) : NULL;
	if (sm) {
		m.start = sm->start;
		m.limit = sm->end;
		m.pgoff = sm->pgoff;
	} else {
		m.start = f->ip;
		m.limit = f->ip + 1;
		m.pgoff = f->kernel ? 0 : f->offset;
	}
	m.file = str_id(p, sym_dso_path(f->dso));
	m.build_id = build_id_string(p, f->dso, f->kernel);
	VEC_PUSH(&p->maps, m);
	return (u32)(p->maps.n - 1);
}

/* The address of f within mapping m: the same file offset lands at the
 * same address whichever process it came from (the first seen is the
 * mapping's), and the mapping widens to hold it. */
static u64 map_address(struct ex_map *m, const struct rp_frame *f)
{
	u64 a = m->kernel ? f->ip : m->start - m->pgoff + f->offset;
	if (a < m->start) {
		if (!m->kernel)
			m->pgoff -= m->start - a;
		m->start = a;
	}
	if (a >= m->limit)
		m->limit = a + 1;
	return a;
}

/* ---- Functions and lines ------------------------------------------------ */

/* "file:line" split; false when there is no usable line. */
static bool split_srcline(const char *s, size_t *file_len, s64 *line)
{
	const char *colon = s ? strrchr(s, ':') : NULL;
	if (!colon || colon == s || !colon[1])
		return false;
	char *end;
	long long v = strtoll(colon + 1, &end, 10);
	if (*end || v <= 0)
		return false;
	*file_len = (size_t)(colon - s);
	*line = v;
	return true;
}

/* A frame's function name: its symbol's without perf's " (inlined)", or
 * the report's stand-in for an unknown symbol (its address). */
static u32 func_name(struct ex_profile *p, const struct rp_frame *f)
{
	static const char tag[] = " (inlined)";
	if (f->sym) {
		size_t n = strlen(f->sym->name);
		if (f->inlined && n > sizeof(tag) - 1 &&
		    !strcmp(f->sym->name + n - (sizeof(tag) - 1), tag))
			n -= sizeof(tag) - 1;
		return str_id_n(p, f->sym->name, n);
	}
	sb_reset(&p->text);
	rp_put_sym_column(&p->text, NULL, f->addr, rp_level(f->kernel));
	/* "[.] 0x..." : the address alone. */
	const char *s = p->text.s ? p->text.s : "";
	return str_id(p, strlen(s) > 4 ? s + 4 : s);
}

/* The line where the function f belongs to starts, from its symbol's first
 * address; 0 when unknown or f is inlined (its symbol spans the caller). */
static s64 func_start_line(struct ex_profile *p, const struct rp_frame *f)
{
	if (!p->o.rp || !f->sym || !f->dso || f->inline_scope || f->kernel)
		return 0;
	struct rp_frame start = *f;
	start.addr = f->sym->start;
	start.inline_depth = 0;
	size_t len;
	s64 line;
	return split_srcline(rp_srcline(p->o.rp, &start), &len, &line) ? line : 0;
}

static u32 func_of(struct ex_profile *p, const struct rp_frame *f, u32 file)
{
	u32 name = func_name(p, f);
	u64 h = hash_mix(hash_mix(0, name), file);
	for (u32 id = ix_first(&p->func_ix, h); id != EX_NONE; id = ix_next(&p->func_ix, id))
		if (p->funcs.v[id].name == name && p->funcs.v[id].file == file)
			return id;
	struct ex_func fn = { name, file, func_start_line(p, f), h };
	u32 id = (u32)p->funcs.n;
	VEC_PUSH(&p->funcs, fn);
	ix_add(&p->func_ix, h, id);
	return id;
}

/* One source frame as a Line: its function (with the file the line is
 * in) and line number. */
static struct ex_line line_of(struct ex_profile *p, const struct rp_frame *f, struct ex_map *m)
{
	const char *src = p->o.rp ? rp_srcline(p->o.rp, f) : NULL;
	size_t file_len = 0;
	s64 line = 0;
	u32 file = 0;
	if (split_srcline(src, &file_len, &line)) {
		file = str_id_n(p, src, file_len);
		if (m)
			m->lines = true;
	}
	return (struct ex_line){ func_of(p, f, file), line };
}

/* ---- Locations ---------------------------------------------------------- */

/* How many frames from f[0] make one machine frame: the functions inlined
 * at its address, then its own. */
static int group_len(const struct rp_frame *f, int n)
{
	int k = 0;
	while (k < n - 1 && f[k].inline_scope && f[k + 1].ip == f[0].ip)
		k++;
	return k + 1;
}

static u64 group_syms(const struct rp_frame *f, int n)
{
	u64 h = (u64)n;
	for (int i = 0; i < n; i++)
		h = hash_mix(h, (u64)(uintptr_t)f[i].sym);
	return h;
}

static u32 loc_of(struct ex_profile *p, const struct rp_frame *f, int n, u32 pid,
		  struct sym_maps *maps)
{
	u64 addr = f->dso ? f->addr : f->ip;
	u32 kpid = f->dso ? 0 : pid;
	u64 syms = group_syms(f, n);
	u64 h = hash_mix(hash_mix(hash_mix((u64)(uintptr_t)f->dso, addr), syms), kpid);
	for (u32 id = ix_first(&p->loc_ix, h); id != EX_NONE; id = ix_next(&p->loc_ix, id)) {
		const struct ex_loc *l = &p->locs.v[id];
		if (l->dso == f->dso && l->addr == addr && l->syms == syms && l->pid == kpid)
			return id;
	}
	struct ex_loc l = { .map = EX_NONE, .address = f->ip, .dso = f->dso, .addr = addr,
			    .syms = syms, .pid = kpid };
	struct ex_map *m = NULL;
	if (f->dso) {
		l.map = map_of(p, f, maps);
		m = &p->maps.v[l.map];
		l.address = map_address(m, f);
		if (n > 1)
			m->inlines = true;
	}
	l.first_line = (u32)p->lines.n;
	l.nlines = (u32)n;
	for (int i = 0; i < n; i++) {
		struct ex_line line = line_of(p, &f[i], m);
		VEC_PUSH(&p->lines, line);
	}
	u32 id = (u32)p->locs.n;
	VEC_PUSH(&p->locs, l);
	ix_add(&p->loc_ix, h, id);
	return id;
}

/* ---- Samples ------------------------------------------------------------ */

static u32 thread_of(struct ex_profile *p, u32 pid, u32 tid, const char *comm)
{
	u32 c = str_id(p, comm ? comm : "");
	u64 h = hash_mix(hash_mix(hash_mix(0, pid), tid), c);
	for (u32 id = ix_first(&p->thread_ix, h); id != EX_NONE; id = ix_next(&p->thread_ix, id)) {
		const struct ex_thread *t = &p->threads.v[id];
		if (t->pid == pid && t->tid == tid && t->comm == c)
			return id;
	}
	struct ex_thread t = { pid, tid, c };
	u32 id = (u32)p->threads.n;
	VEC_PUSH(&p->threads, t);
	ix_add(&p->thread_ix, h, id);
	return id;
}

static bool same_stack(const struct ex_profile *p, const struct ex_sample *s, u32 thread)
{
	return s->thread == thread && s->n == p->scratch.n &&
	       !memcmp(p->stack_locs.v + s->first, p->scratch.v, s->n * sizeof(u32));
}

/* Sums count and value into the (thread, stack in p->scratch) sample. */
static void add_sample(struct ex_profile *p, u32 thread, u64 count, u64 value)
{
	u64 h = hash_mix(0, thread);
	for (size_t i = 0; i < p->scratch.n; i++)
		h = hash_mix(h, p->scratch.v[i]);
	for (u32 id = ix_first(&p->sample_ix, h); id != EX_NONE; id = ix_next(&p->sample_ix, id)) {
		struct ex_sample *s = &p->samples_v.v[id];
		if (same_stack(p, s, thread)) {
			s->count += count;
			s->value += value;
			return;
		}
	}
	struct ex_sample s = { (u32)p->stack_locs.n, (u32)p->scratch.n, thread, count, value, h };
	VEC_GROW(&p->stack_locs, p->stack_locs.n + p->scratch.n);
	memcpy(p->stack_locs.v + p->stack_locs.n, p->scratch.v, p->scratch.n * sizeof(u32));
	p->stack_locs.n += p->scratch.n;
	u32 id = (u32)p->samples_v.n;
	VEC_PUSH(&p->samples_v, s);
	ix_add(&p->sample_ix, h, id);
}

static void note_time(struct ex_profile *p, u64 t)
{
	if (!t)
		return;
	if (!p->first_time || t < p->first_time)
		p->first_time = t;
	if (t > p->last_time)
		p->last_time = t;
}

int ex_profile_add_stack(struct ex_profile *p, const struct ex_stack *st)
{
	p->scratch.n = 0;
	for (int i = 0; i < st->nframes;) {
		int n = group_len(st->frames + i, st->nframes - i);
		u32 loc = loc_of(p, st->frames + i, n, st->pid, st->maps);
		VEC_PUSH(&p->scratch, loc);
		i += n;
	}
	add_sample(p, thread_of(p, st->pid, st->tid, st->comm), st->count, st->value);
	p->samples += st->count;
	p->total += st->value;
	note_time(p, st->time);
	return 0;
}

/* ---- The event ---------------------------------------------------------- */

static bool is_time_event(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Takes the event of attr when none is yet; whether attr is the one. */
static bool take_event(struct ex_profile *p, const struct pd_attr *attr)
{
	const char *name = attr->name ? attr->name : "";
	if (!p->event) {
		if (p->o.event && strcmp(p->o.event, name))
			return false;
		p->event = xstrdup(name);
		p->time_based = is_time_event(&attr->attr);
		if (!attr->attr.freq)
			p->period = attr->attr.sample_period;
		else if (p->time_based && attr->attr.sample_freq)
			p->period = 1000000000ULL / attr->attr.sample_freq;
	}
	return !strcmp(p->event, name);
}

int ex_profile_add(struct ex_profile *p, const struct rp_sample *s)
{
	if (!s->attr || !s->thread)
		return 0;
	if (!take_event(p, s->attr)) {
		p->skipped++;
		return 0;
	}
	struct ex_stack st = {
		.frames = s->frames, .nframes = s->nframes,
		.pid = s->s->pid, .tid = s->s->tid, .comm = s->thread->comm,
		.maps = s->thread->maps, .count = 1,
		.value = s->s->period ? s->s->period : 1, .time = s->s->time,
	};
	return ex_profile_add_stack(p, &st);
}

const char *ex_value_type(const struct ex_profile *p, const char **unit)
{
	if (p->o.kind == EX_OFFCPU) {
		*unit = "nanoseconds";
		return "off-cpu";
	}
	if (p->time_based) {
		*unit = "nanoseconds";
		return "cpu";
	}
	*unit = "count";
	return p->event && *p->event ? p->event : "events";
}

const char *ex_profile_event(const struct ex_profile *p)
{
	return p->o.kind == EX_OFFCPU ? "off-cpu" : p->event;
}

u64 ex_profile_samples(const struct ex_profile *p)
{
	return p->samples;
}

u64 ex_profile_skipped(const struct ex_profile *p)
{
	return p->skipped;
}

u64 ex_profile_total(const struct ex_profile *p)
{
	return p->total;
}

void ex_profile_set_time(struct ex_profile *p, u64 time_nanos, u64 duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
	p->time_set = true;
}

void ex_profile_span(const struct ex_profile *p, u64 *first, u64 *last)
{
	*first = p->first_time;
	*last = p->last_time;
}

/* ---- The sink ----------------------------------------------------------- */

int ex_sink_sample(void *ctx, const struct rp_sample *s)
{
	return ex_profile_add(ctx, s);
}

struct rp_sink ex_sink(struct ex_profile *p)
{
	return (struct rp_sink){ .ctx = p, .sample = ex_sink_sample };
}
