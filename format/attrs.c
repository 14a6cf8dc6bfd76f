/* attrs.c - the recording's events (attrs) as the reader reads them from a
 * file's header or a stream's HEADER_ATTR records, named from type and
 * config until EVENT_DESC names them, and which attr each record belongs
 * to (its id, where the attrs' sample_type puts it). */
#include "format/format-internal.h"

#include <stdlib.h>

static const char *software_name(u64 config)
{
	static const char *const names[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output",
		"cgroup-switches",
	};
	return config < ARRAY_SIZE(names) ? names[config] : "software";
}

static const char *hardware_name(u64 config)
{
	static const char *const names[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
	};
	return config < ARRAY_SIZE(names) ? names[config] : "hardware";
}

/* A name from type and config, until EVENT_DESC gives the real one. */
static char *default_name(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_SOFTWARE)
		return xstrdup(software_name(a->config));
	if (a->type == PERF_TYPE_HARDWARE)
		return xstrdup(hardware_name(a->config));
	return xasprintf("%u:%#llx", a->type, (unsigned long long)a->config);
}

/* Counts what a newer perf wrote that this reader skips, for the views'
 * one-line note: an event whose samples cannot be decoded past their
 * counter values (read_format bits newer than this ABI). */
static void note_attr(struct pd_reader *r, const struct perf_event_attr *a)
{
	if ((a->sample_type & PERF_SAMPLE_READ) && a->read_format >= PERF_FORMAT_MAX)
		r->stats.unknown_read_formats++;
}

/* Copies an on-disk attr of `size` bytes into a zeroed struct, so fields
 * newer than the file read as 0 and fields newer than us are ignored. */
int pdr_add_attr(struct pd_reader *r, const u8 *p, size_t size, const u8 *ids, size_t nids,
		 u64 offset)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	if (size < PERF_ATTR_SIZE_VER0)
		return pdr_fail_at(r, offset, "event attribute too small");
	memcpy(&attr, p, MIN(size, sizeof(attr)));
	attr.size = sizeof(attr);
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	a.ids = xcalloc(nids ? nids : 1, sizeof(u64));
	for (size_t i = 0; i < nids; i++)
		a.ids[i] = get_u64(ids + 8 * i);
	a.nids = nids;
	a.index = (int)r->attrs.n;
	a.name = default_name(&a.attr);
	VEC_PUSH(&r->attrs, a);
	note_attr(r, &a.attr);
	for (size_t i = 0; i < nids; i++)
		*u64map_slot(&r->id_to_attr, a.ids[i], NULL) = r->attrs.n;
	r->last_attr = 0;      /* an id may have moved to the new attr */
	r->same_layout = true;
	for (size_t i = 1; i < r->attrs.n; i++)
		if (r->attrs.v[i].attr.sample_type != r->attrs.v[0].attr.sample_type)
			r->same_layout = false;
	return 0;
}

static const struct pd_attr *attr_by_id(struct pd_reader *r, u64 id)
{
	if (r->last_attr && r->last_id == id)
		return &r->attrs.v[r->last_attr - 1];
	const u64 *slot = u64map_get(&r->id_to_attr, id);
	if (!slot)
		return r->attrs.n ? &r->attrs.v[0] : NULL;
	r->last_id = id;
	r->last_attr = *slot;
	return &r->attrs.v[*slot - 1];
}

/* Which attr a record belongs to.  With PERF_SAMPLE_IDENTIFIER the id is at
 * a fixed place; otherwise only a common sample_type makes ID findable. */
const struct pd_attr *pdr_attr_of(struct pd_reader *r, const u8 *rec, size_t size, u32 type)
{
	if (r->attrs.n <= 1)
		return r->attrs.n ? &r->attrs.v[0] : NULL;
	const struct perf_event_attr *a0 = &r->attrs.v[0].attr;
	u64 t = a0->sample_type;
	if (type == PERF_RECORD_SAMPLE) {
		if (t & PERF_SAMPLE_IDENTIFIER)
			return size >= 16 ? attr_by_id(r, get_u64(rec + 8)) : NULL;
		if (!r->same_layout || !(t & PERF_SAMPLE_ID))
			return &r->attrs.v[0];
		size_t pos = 8;
		pos += (t & PERF_SAMPLE_IP) ? 8 : 0;
		pos += (t & PERF_SAMPLE_TID) ? 8 : 0;
		pos += (t & PERF_SAMPLE_TIME) ? 8 : 0;
		pos += (t & PERF_SAMPLE_ADDR) ? 8 : 0;
		return pos + 8 <= size ? attr_by_id(r, get_u64(rec + pos)) : NULL;
	}
	if (!a0->sample_id_all)
		return &r->attrs.v[0];
	if (t & PERF_SAMPLE_IDENTIFIER)
		return size >= 16 ? attr_by_id(r, get_u64(rec + size - 8)) : NULL;
	if (!r->same_layout || !(t & PERF_SAMPLE_ID))
		return &r->attrs.v[0];
	size_t from_end = 8;
	from_end += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	from_end += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	return size >= 8 + from_end ? attr_by_id(r, get_u64(rec + size - from_end)) : NULL;
}

void pdr_attrs_free(struct pd_reader *r)
{
	for (size_t i = 0; i < r->attrs.n; i++) {
		free(r->attrs.v[i].ids);
		free(r->attrs.v[i].name);
	}
	VEC_FREE(&r->attrs);
	u64map_free(&r->id_to_attr);
}

size_t pd_reader_nattrs(const struct pd_reader *r)
{
	return r->attrs.n;
}

const struct pd_attr *pd_reader_attr(const struct pd_reader *r, size_t i)
{
	return i < r->attrs.n ? &r->attrs.v[i] : NULL;
}

const struct pd_attr *pd_reader_attr_of_id(const struct pd_reader *r, u64 id)
{
	const u64 *slot = u64map_get(&r->id_to_attr, id);
	return slot ? &r->attrs.v[*slot - 1] : NULL;
}
