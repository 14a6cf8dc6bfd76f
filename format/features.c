/* features.c - encodes the header feature sections (strings, CPU and NUMA
 * topology, event descriptions, build-ids, tracing data...) byte for byte
 * as perf lays them out.  The writer decides when they go out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/writer-internal.h"

/* ---- Byte builder ------------------------------------------------------ */

static void bytes_reserve(struct pdw_bytes *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

void pdw_bytes_add(struct pdw_bytes *b, const void *p, size_t n)
{
	if (!n)
		return;
	bytes_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void pdw_bytes_zeros(struct pdw_bytes *b, size_t n)
{
	if (!n)
		return;
	bytes_reserve(b, n);
	memset(b->p + b->len, 0, n);
	b->len += n;
}

void pdw_bytes_u32(struct pdw_bytes *b, u32 v)
{
	pdw_bytes_add(b, &v, sizeof(v));
}

void pdw_bytes_u64(struct pdw_bytes *b, u64 v)
{
	pdw_bytes_add(b, &v, sizeof(v));
}

void pdw_bytes_string(struct pdw_bytes *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = PDW_ALIGN(n, PDW_NAME_ALIGN);
	pdw_bytes_u32(b, (u32)padded);
	pdw_bytes_add(b, s, n);
	pdw_bytes_zeros(b, padded - n);
}

void pdw_bytes_free(struct pdw_bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* Starts f's body afresh; -1 when f cannot be set now. */
static struct pdw_bytes *start(struct pd_writer *w, int f)
{
	if (pdw_feature_check(w, f))
		return NULL;
	w->feat[f].len = 0;
	return &w->feat[f];
}

static int missing(struct pd_writer *w, const char *what)
{
	err_set("%s: %s", w->path, what);
	return -1;
}

/* ---- Simple features ------------------------------------------------------ */

int pd_writer_feat_string(struct pd_writer *w, enum pd_feature f, const char *s)
{
	if (!s)
		return missing(w, "feature string is NULL");
	struct pdw_bytes *b = start(w, f);
	if (!b)
		return -1;
	pdw_bytes_string(b, s);
	return pdw_feature_ready(w, f);
}

int pd_writer_feat_raw(struct pd_writer *w, enum pd_feature f,
		       const void *body, size_t len)
{
	struct pdw_bytes *b = start(w, f);
	if (!b)
		return -1;
	pdw_bytes_add(b, body, len);
	return pdw_feature_ready(w, f);
}

int pd_writer_feat_nrcpus(struct pd_writer *w, u32 nr_available, u32 nr_online)
{
	struct pdw_bytes *b = start(w, PD_FEAT_NRCPUS);
	if (!b)
		return -1;
	pdw_bytes_u32(b, nr_available);
	pdw_bytes_u32(b, nr_online);
	return pdw_feature_ready(w, PD_FEAT_NRCPUS);
}

int pd_writer_feat_total_mem(struct pd_writer *w, u64 kib)
{
	struct pdw_bytes *b = start(w, PD_FEAT_TOTAL_MEM);
	if (!b)
		return -1;
	pdw_bytes_u64(b, kib);
	return pdw_feature_ready(w, PD_FEAT_TOTAL_MEM);
}

int pd_writer_feat_cmdline(struct pd_writer *w, int argc, char *const argv[])
{
	if (argc < 0)
		return missing(w, "negative argc");
	for (int i = 0; i < argc; i++)
		if (!argv[i])
			return missing(w, "NULL in the command line");
	struct pdw_bytes *b = start(w, PD_FEAT_CMDLINE);
	if (!b)
		return -1;
	pdw_bytes_u32(b, (u32)argc);
	for (int i = 0; i < argc; i++)
		pdw_bytes_string(b, argv[i]);
	return pdw_feature_ready(w, PD_FEAT_CMDLINE);
}

/* u32 events, u32 attr size, then per event: attr, u32 nr ids, name, ids. */
int pd_writer_feat_event_desc(struct pd_writer *w)
{
	if (!w->attrs.n)
		return missing(w, "no events to describe");
	struct pdw_bytes *b = start(w, PD_FEAT_EVENT_DESC);
	if (!b)
		return -1;
	pdw_bytes_u32(b, (u32)w->attrs.n);
	pdw_bytes_u32(b, (u32)sizeof(struct perf_event_attr));
	for (size_t i = 0; i < w->attrs.n; i++) {
		const struct pdw_attr *a = &w->attrs.v[i];
		pdw_bytes_add(b, &a->attr, sizeof(a->attr));
		pdw_bytes_u32(b, (u32)a->nids);
		pdw_bytes_string(b, a->name ? a->name : "");
		pdw_bytes_add(b, a->ids, a->nids * sizeof(u64));
	}
	return pdw_feature_ready(w, PD_FEAT_EVENT_DESC);
}

int pd_writer_feat_sample_time(struct pd_writer *w, u64 first_ns, u64 last_ns)
{
	struct pdw_bytes *b = start(w, PD_FEAT_SAMPLE_TIME);
	if (!b)
		return -1;
	pdw_bytes_u64(b, first_ns);
	pdw_bytes_u64(b, last_ns);
	return pdw_feature_ready(w, PD_FEAT_SAMPLE_TIME);
}

/* ---- Topology ---------------------------------------------------------------- */

static bool strings_ok(char **s, int n)
{
	if (n < 0 || (n > 0 && !s))
		return false;
	for (int i = 0; i < n; i++)
		if (!s[i])
			return false;
	return true;
}

static void add_strings(struct pdw_bytes *b, char **s, int n)
{
	pdw_bytes_u32(b, (u32)n);
	for (int i = 0; i < n; i++)
		pdw_bytes_string(b, s[i]);
}

/* perf reads as many per-CPU entries as NRCPUS' first count says; when
 * NRCPUS is already set we write exactly that many (zeros for CPUs the
 * caller did not describe), else t->nr_cpus. */
static int per_cpu_count(const struct pd_writer *w, const struct pd_cpu_topology *t)
{
	const struct pdw_bytes *nr = &w->feat[PD_FEAT_NRCPUS];
	u32 avail;
	if (!pdw_bit(w->feat_set, PD_FEAT_NRCPUS) || nr->len < sizeof(avail))
		return t->nr_cpus;
	memcpy(&avail, nr->p, sizeof(avail));
	return (int)MIN(avail, (u32)INT32_MAX);
}

static void add_per_cpu(struct pdw_bytes *b, const u32 *v, int have, int c)
{
	pdw_bytes_u32(b, c < have ? v[c] : 0);
}

/* The per-CPU arrays and the die part are optional (older perf left them
 * out); perf tells by the section's size. */
int pd_writer_feat_cpu_topology(struct pd_writer *w, const struct pd_cpu_topology *t)
{
	if (!strings_ok(t->core_siblings, t->nr_cores) ||
	    !strings_ok(t->thread_siblings, t->nr_threads) ||
	    !strings_ok(t->die_siblings, t->nr_dies))
		return missing(w, "CPU topology with missing sibling lists");
	bool per_cpu = t->nr_cpus > 0 && t->core_id && t->socket_id;
	bool dies = per_cpu && t->nr_dies > 0 && t->die_id;
	if (t->nr_dies > 0 && !dies)
		return missing(w, "CPU topology has dies but no per-CPU ids");
	struct pdw_bytes *b = start(w, PD_FEAT_CPU_TOPOLOGY);
	if (!b)
		return -1;
	int ncpu = per_cpu_count(w, t);
	add_strings(b, t->core_siblings, t->nr_cores);
	add_strings(b, t->thread_siblings, t->nr_threads);
	for (int c = 0; per_cpu && c < ncpu; c++) {
		add_per_cpu(b, t->core_id, t->nr_cpus, c);
		add_per_cpu(b, t->socket_id, t->nr_cpus, c);
	}
	if (dies) {
		add_strings(b, t->die_siblings, t->nr_dies);
		for (int c = 0; c < ncpu; c++)
			add_per_cpu(b, t->die_id, t->nr_cpus, c);
	}
	return pdw_feature_ready(w, PD_FEAT_CPU_TOPOLOGY);
}

int pd_writer_feat_numa(struct pd_writer *w, const struct pd_numa_node *nodes, int n)
{
	if (n < 0 || (n > 0 && !nodes))
		return missing(w, "bad NUMA node list");
	for (int i = 0; i < n; i++)
		if (!nodes[i].cpus)
			return missing(w, "NUMA node without a CPU list");
	struct pdw_bytes *b = start(w, PD_FEAT_NUMA_TOPOLOGY);
	if (!b)
		return -1;
	pdw_bytes_u32(b, (u32)n);
	for (int i = 0; i < n; i++) {
		pdw_bytes_u32(b, nodes[i].node);
		pdw_bytes_u64(b, nodes[i].mem_total_kib);
		pdw_bytes_u64(b, nodes[i].mem_free_kib);
		pdw_bytes_string(b, nodes[i].cpus);
	}
	return pdw_feature_ready(w, PD_FEAT_NUMA_TOPOLOGY);
}

/* ---- Build-ids ---------------------------------------------------------------- */

/* perf's build_id_event: header, pid, 24 bytes of id (20 used, then the
 * size byte when MISC_BUILD_ID_SIZE is set), NUL-padded file name. */
struct build_id_event {
	struct perf_event_header header;
	s32 pid;
	u8 id[PDW_BUILD_ID_SIZE];
	u8 size;
	u8 reserved[3];
} __attribute__((packed));
_Static_assert(sizeof(struct build_id_event) == 36, "build_id_event head is 36 bytes");

#ifndef PERF_RECORD_MISC_BUILD_ID_SIZE
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)
#endif

static void add_build_id(struct pdw_bytes *b, const struct pd_build_id *id)
{
	size_t name = strlen(id->filename) + 1;
	/* perf pads names to 64; 4 more keeps every record 8-byte aligned. */
	size_t padded = PDW_ALIGN(name, PDW_NAME_ALIGN) + 4;
	struct build_id_event e = {
		.header = { 0, id->cpumode, (u16)(sizeof(e) + padded) },
		.pid = id->pid,
		.size = id->size,
	};
	if (id->size)
		e.header.misc |= PERF_RECORD_MISC_BUILD_ID_SIZE;
	memcpy(e.id, id->id, id->size ? id->size : PDW_BUILD_ID_SIZE);
	pdw_bytes_add(b, &e, sizeof(e));
	pdw_bytes_add(b, id->filename, name);
	pdw_bytes_zeros(b, padded - name);
}

/* Appends: the recorder may learn build-ids in batches. */
int pd_writer_feat_build_ids(struct pd_writer *w, const struct pd_build_id *ids, int n)
{
	if (pdw_feature_check(w, PD_FEAT_BUILD_ID))
		return -1;
	for (int i = 0; i < n; i++) {
		if (!ids[i].filename || ids[i].size > PDW_BUILD_ID_SIZE)
			return missing(w, "build-id without a file name or longer than 20 bytes");
		if (strlen(ids[i].filename) >= 4096)
			return missing(w, "build-id file name too long");
	}
	for (int i = 0; i < n; i++)
		add_build_id(&w->feat[PD_FEAT_BUILD_ID], &ids[i]);
	return pdw_feature_ready(w, PD_FEAT_BUILD_ID);
}

/* ---- Tracing data (trace-event-info, version 0.6) ---------------------------- */

static void add_sized8(struct pdw_bytes *b, const char *p, size_t n)
{
	pdw_bytes_u64(b, n);
	pdw_bytes_add(b, p, n);
}

static void add_sized4(struct pdw_bytes *b, const char *p, size_t n)
{
	pdw_bytes_u32(b, (u32)n);
	pdw_bytes_add(b, p, n);
}

static void add_cstr(struct pdw_bytes *b, const char *s)
{
	pdw_bytes_add(b, s, strlen(s) + 1);
}

static bool host_big_endian(void)
{
	const u16 one = 1;
	return *(const u8 *)&one == 0;
}

static void add_tracing_preamble(struct pdw_bytes *b, const struct pd_tracing *t)
{
	static const u8 magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	pdw_bytes_add(b, magic, sizeof(magic));
	add_cstr(b, "0.6");
	u8 endian_long[2] = { host_big_endian(), (u8)sizeof(long) };
	pdw_bytes_add(b, endian_long, sizeof(endian_long));
	pdw_bytes_u32(b, (u32)sysconf(_SC_PAGESIZE));
	add_cstr(b, "header_page");
	add_sized8(b, t->header_page, t->header_page_len);
	add_cstr(b, "header_event");
	add_sized8(b, t->header_event, t->header_event_len);
}

static bool is_ftrace(const struct pd_tracing_event *e)
{
	return !strcmp(e->system, "ftrace");
}

/* Formats of the "ftrace" system go in their own list. */
static void add_ftrace_formats(struct pdw_bytes *b, const struct pd_tracing *t)
{
	u32 n = 0;
	for (int i = 0; i < t->nr_events; i++)
		n += is_ftrace(&t->events[i]);
	pdw_bytes_u32(b, n);
	for (int i = 0; i < t->nr_events; i++)
		if (is_ftrace(&t->events[i]))
			add_sized8(b, t->events[i].format, t->events[i].format_len);
}

static bool seen_system_before(const struct pd_tracing *t, int i)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(t->events[j].system, t->events[i].system))
			return true;
	return false;
}

/* Other systems: u32 systems, then per system its name, u32 count and the
 * formats, grouped in the order systems first appear. */
static void add_event_formats(struct pdw_bytes *b, const struct pd_tracing *t)
{
	u32 systems = 0;
	for (int i = 0; i < t->nr_events; i++)
		systems += !is_ftrace(&t->events[i]) && !seen_system_before(t, i);
	pdw_bytes_u32(b, systems);
	for (int i = 0; i < t->nr_events; i++) {
		const char *sys = t->events[i].system;
		if (is_ftrace(&t->events[i]) || seen_system_before(t, i))
			continue;
		u32 count = 0;
		for (int j = i; j < t->nr_events; j++)
			count += !strcmp(t->events[j].system, sys);
		add_cstr(b, sys);
		pdw_bytes_u32(b, count);
		for (int j = i; j < t->nr_events; j++)
			if (!strcmp(t->events[j].system, sys))
				add_sized8(b, t->events[j].format, t->events[j].format_len);
	}
}

static bool tracing_ok(const struct pd_tracing *t)
{
	if (t->nr_events < 0 || (t->nr_events > 0 && !t->events))
		return false;
	if ((t->header_page_len && !t->header_page) ||
	    (t->header_event_len && !t->header_event) ||
	    (t->kallsyms_len && !t->kallsyms) || (t->printk_len && !t->printk) ||
	    (t->cmdlines_len && !t->cmdlines))
		return false;
	if (t->kallsyms_len > UINT32_MAX || t->printk_len > UINT32_MAX)
		return false;
	for (int i = 0; i < t->nr_events; i++)
		if (!t->events[i].system || (t->events[i].format_len && !t->events[i].format))
			return false;
	return true;
}

int pd_writer_feat_tracing_data(struct pd_writer *w, const struct pd_tracing *t)
{
	if (!tracing_ok(t))
		return missing(w, "incomplete tracing data");
	struct pdw_bytes *b = start(w, PD_FEAT_TRACING_DATA);
	if (!b)
		return -1;
	add_tracing_preamble(b, t);
	add_ftrace_formats(b, t);
	add_event_formats(b, t);
	add_sized4(b, t->kallsyms, t->kallsyms_len);
	add_sized4(b, t->printk, t->printk_len);
	add_sized8(b, t->cmdlines, t->cmdlines_len);
	return pdw_feature_ready(w, PD_FEAT_TRACING_DATA);
}
