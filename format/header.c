/* header.c - what a recording says about itself: a file's header, attrs
 * and feature sections (read through a mapping, where only the pages
 * touched fault in), a stream's header, and perf's own records that carry
 * the same in a stream (HEADER_ATTR, HEADER_FEATURE, HEADER_TRACING_DATA,
 * HEADER_BUILD_ID); the tracing data parsed when asked. */
#include "format/format-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16

/* Counts what a newer perf wrote that this reader skips, for the views'
 * one-line note: a feature section it has no id for. */
static void note_feature(struct pd_reader *r, int feat)
{
	if (feat <= PD_FEAT_LAST_KNOWN)
		return;
	if (!r->stats.unknown_features++)
		r->stats.first_unknown_feature = feat;
}

/* ---- records perf's tools add (types >= 64) ----------------------------- */

static void keep_feature(struct pd_reader *r, int feat, const u8 *p, u64 len)
{
	if (feat <= 0 || feat >= PD_FEAT_MAX)
		return;
	u8 *copy = xmalloc(len ? len : 1);
	memcpy(copy, p, len);
	VEC_PUSH(&r->owned, copy);
	r->feat[feat].data = copy;
	r->feat[feat].len = len;
}

/* The body of a HEADER_TRACING_DATA record follows it outside its size. */
static int read_tracing_data(struct pd_reader *r, const u8 *rec, u16 size, u64 offset)
{
	if (size < 12)
		return pdr_fail_at(r, offset, "tracing-data record too small");
	u32 len = get_u32(rec + 8);
	if (!r->pipe && r->data_end - r->pos < len)
		return pdr_fail_at(r, offset, "tracing data runs past the end");
	if (pdr_window_need(r, len) != 1)
		return pdr_fail_at(r, offset, r->pipe ? "tracing data runs past the end of the stream"
						  : "cannot read the file");
	keep_feature(r, PD_FEAT_TRACING_DATA, pdr_at(r, r->pos), len);
	r->pos += len;
	return 0;
}

static void add_build_id(struct pd_reader *r, const u8 *rec, size_t size)
{
	/* header, s32 pid, u8 build_id[24] (size at [20] when flagged), name */
	if (size < 8 + 4 + 24 + 1)
		return;
	const char *name = pdd_string_in(rec + 36, rec + size);
	if (!name)
		return;
	struct pd_reader_build_id b;
	u16 misc = (u16)(get_u32(rec + 4) & 0xffff);
	b.pid = (s32)get_u32(rec + 8);
	b.cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	memcpy(b.id, rec + 12, 20);
	b.size = (misc & (1 << 15)) ? MIN(rec[32], 20) : 20;
	b.filename = xstrdup(name);
	VEC_PUSH(&r->build_ids, b);
}

static void parse_feature(struct pd_reader *r, int feat);

int pdr_user_record(struct pd_reader *r, const u8 *rec, u64 offset)
{
	u16 size = get_u32(rec + 4) >> 16;
	switch (get_u32(rec)) {
	case PD_RECORD_HEADER_ATTR: {
		if (size < 8 + PERF_ATTR_SIZE_VER0)
			return pdr_fail_at(r, offset, "attr record too small");
		u32 asize = get_u32(rec + 12);
		if (asize == 0)
			asize = PERF_ATTR_SIZE_VER0;
		if (asize > (u32)size - 8u)
			return pdr_fail_at(r, offset, "attr record's attr size runs past it");
		size_t nids = (size - 8 - asize) / 8;
		return pdr_add_attr(r, rec + 8, asize, rec + 8 + asize, nids, offset) < 0 ? -1 : 1;
	}
	case PD_RECORD_HEADER_TRACING_DATA:
		return read_tracing_data(r, rec, size, offset) < 0 ? -1 : 1;
	case PD_RECORD_HEADER_FEATURE:
		/* One with no body is perf's end-of-features mark (its id is
		 * the writer's feature count), not a feature. */
		if (size > 16 && get_u64(rec + 8) < PD_FEAT_MAX) {
			int feat = (int)get_u64(rec + 8);
			note_feature(r, feat);
			keep_feature(r, feat, rec + 16, size - 16u);
			parse_feature(r, feat);
		}
		return 1;
	case PD_RECORD_HEADER_BUILD_ID:
		add_build_id(r, rec, size);
		return 1;
	/* Read and dropped on purpose, as nothing a view shows is in them:
	 * markers (rounds are handled by the caller, FINISHED_INIT ends the
	 * synthesized part); the event-type names of old perf files, which
	 * EVENT_DESC gives again; the id -> cpu/tid index, while records carry
	 * their own; TSC conversion, for hardware traces only; the thread and
	 * CPU lists of the recording's targets; event updates (the CPUs of an
	 * event, its name again in a stream, stat's units and scales). */
	case PD_RECORD_FINISHED_ROUND:
	case PD_RECORD_HEADER_EVENT_TYPE:
	case PD_RECORD_ID_INDEX:
	case PD_RECORD_FINISHED_INIT:
	case PD_RECORD_TIME_CONV:
	case PD_RECORD_THREAD_MAP:
	case PD_RECORD_CPU_MAP:
	case PD_RECORD_EVENT_UPDATE:
		return 1;
	default:
		return 0;      /* delivered; counted when decode.c has no body */
	}
}

/* ---- features ----------------------------------------------------------- */

static void parse_string_feature(struct pd_reader *r, int feat)
{
	const struct pdr_feature *f = &r->feat[feat];
	if (!f->data || f->len < 4)
		return;
	u32 len = get_u32(f->data);
	if (len > f->len - 4)
		return;
	free(r->strings[feat]);
	r->strings[feat] = strndup((const char *)f->data + 4, len);
}

/* Names attrs from EVENT_DESC: u32 nr, u32 attr_size, then per event the
 * attr, u32 nr_ids, a string, and the ids. */
static void parse_event_desc(struct pd_reader *r)
{
	const struct pdr_feature *f = &r->feat[PD_FEAT_EVENT_DESC];
	if (!f->data || f->len < 8)
		return;
	struct cursor c = { f->data, f->data + f->len };
	u32 nr, asize, nids, slen;
	if (!take_pair32(&c, &nr, &asize))
		return;
	for (u32 i = 0; i < nr && i < r->attrs.n; i++) {
		const u8 *p;
		if (!take(&c, asize, NULL) || !take(&c, 8, &p))
			return;
		nids = get_u32(p);
		slen = get_u32(p + 4);
		const u8 *name;
		if (!take(&c, slen, &name) || !take_array(&c, nids, 8, NULL))
			return;
		if (slen && memchr(name, 0, slen)) {
			free(r->attrs.v[i].name);
			r->attrs.v[i].name = xstrdup((const char *)name);
		}
	}
}

static void free_groups(struct pd_reader *r)
{
	for (size_t i = 0; i < r->groups.n; i++)
		free(r->groups.v[i].name);
	r->groups.n = 0;
}

/* GROUP_DESC: u32 nr, then per group a string (u32 length, the padded
 * bytes), u32 leader index, u32 member count; "{anon_group}" is perf's
 * no name.  (A stream's may come before its attrs: users check the
 * indexes against pd_reader_nattrs.) */
static void parse_groups(struct pd_reader *r)
{
	const struct pdr_feature *f = &r->feat[PD_FEAT_GROUP_DESC];
	free_groups(r);
	if (!f->data || f->len < 4)
		return;
	struct cursor c = { f->data, f->data + f->len };
	const u8 *p;
	take(&c, 4, &p);
	u32 nr = get_u32(p);
	for (u32 i = 0; i < nr; i++) {
		u32 leader, members;
		const u8 *name;
		if (!take(&c, 4, &p))
			return;
		u32 len = get_u32(p);
		if (!take(&c, len, &name) || !take_pair32(&c, &leader, &members))
			return;
		if (!members)
			continue;
		const char *str = pdd_string_in(name, name + len);
		struct pd_group g = { NULL, leader, members };
		if (str && strcmp(str, "{anon_group}"))
			g.name = xstrdup(str);
		VEC_PUSH(&r->groups, g);
	}
}

static void parse_build_ids(struct pd_reader *r)
{
	const struct pdr_feature *f = &r->feat[PD_FEAT_BUILD_ID];
	if (!f->data)
		return;   /* no section: NULL + 0 is still undefined in C */
	const u8 *p = f->data, *end = f->data + f->len;
	while (end - p >= 8) {
		u16 size = get_u32(p + 4) >> 16;
		if (size < 8 || size > end - p)
			break;
		add_build_id(r, p, size);
		p += size;
	}
}

/* The first and last sample times, where they make a span. */
static void parse_sample_time(struct pd_reader *r)
{
	const struct pdr_feature *f = &r->feat[PD_FEAT_SAMPLE_TIME];
	if (!f->data || f->len < 16)
		return;
	u64 first = get_u64(f->data), last = get_u64(f->data + 8);
	if (first && first <= last) {
		r->span_first = first;
		r->span_last = last;
	}
}

/* Makes the decoded form of one feature available. */
static void parse_feature(struct pd_reader *r, int feat)
{
	switch (feat) {
	case PD_FEAT_HOSTNAME:
	case PD_FEAT_OSRELEASE:
	case PD_FEAT_VERSION:
	case PD_FEAT_ARCH:
	case PD_FEAT_CPUDESC:
	case PD_FEAT_CPUID:
		parse_string_feature(r, feat);
		break;
	case PD_FEAT_EVENT_DESC:
		parse_event_desc(r);
		break;
	case PD_FEAT_BUILD_ID:
		parse_build_ids(r);
		break;
	case PD_FEAT_GROUP_DESC:
		parse_groups(r);
		break;
	case PD_FEAT_SAMPLE_TIME:
		parse_sample_time(r);
		break;
	}
}

static void note_damaged_feature(struct pd_reader *r, int feat, u64 entry)
{
	if (!r->stats.damaged_features++) {
		r->stats.first_damaged_feature = feat;
		r->stats.first_damaged_feature_offset = entry;
	}
}

/* The feature table follows the data: one (offset, size) per set bit. */
static void find_features(struct pd_reader *r, const u8 *bitmap, u64 table)
{
	for (int feat = 1; feat < PD_FEAT_MAX; feat++) {
		if (!(bitmap[feat / 8] & (1u << (feat % 8))))
			continue;
		note_feature(r, feat);
		u64 entry = table;
		table += 16;
		if (entry + 16 > r->map_len) {
			note_damaged_feature(r, feat, entry);
			continue;
		}
		u64 off = get_u64(r->map + entry), len = get_u64(r->map + entry + 8);
		if (off > r->map_len || len > r->map_len - off) {
			/* a damaged section is skipped, not fatal; verify says so */
			note_damaged_feature(r, feat, entry);
			continue;
		}
		r->feat[feat].data = r->map + off;
		r->feat[feat].len = len;
	}
}

/* ---- opening ------------------------------------------------------------ */

/* Maps the whole file: its header, attrs and features are read through
 * the mapping, where only the pages touched fault in; the records come
 * by pread. */
static int map_file(struct pd_reader *r, const char *path)
{
	struct stat st;
	if (fstat(r->fd, &st) < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	if (st.st_size < FILE_HEADER_SIZE) {
		err_set("%s: offset 0: file is too short for a perf.data header (%lld bytes)",
			path, (long long)st.st_size);
		return -1;
	}
	r->map_len = (size_t)st.st_size;
	void *m = mmap(NULL, r->map_len, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (m == MAP_FAILED) {
		err_set_errno("%s: cannot map", path);
		return -1;
	}
	r->map = m;
	return 0;
}

/* The attrs section the header points to: each attr with its event ids,
 * all inside the file, and at least one. */
static int read_attrs(struct pd_reader *r, const char *path)
{
	const u8 *h = r->map;
	u64 attr_size = get_u64(h + 16), attrs_off = get_u64(h + 24),
	    attrs_len = get_u64(h + 32);
	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096) {
		err_set("%s: offset 16: attr size %llu is not plausible", path,
			(unsigned long long)attr_size);
		return -1;
	}
	if (attrs_off > r->map_len || attrs_len > r->map_len - attrs_off) {
		err_set("%s: offset 24: attrs section lies outside the file", path);
		return -1;
	}
	for (u64 at = attrs_off; at + attr_size <= attrs_off + attrs_len; at += attr_size) {
		const u8 *fa = r->map + at;
		u64 ids_off = get_u64(fa + attr_size - 16), ids_len = get_u64(fa + attr_size - 8);
		if (ids_off > r->map_len || ids_len > r->map_len - ids_off) {
			err_set("%s: offset %#llx: event ids lie outside the file", path,
				(unsigned long long)at);
			return -1;
		}
		if (pdr_add_attr(r, fa, attr_size - 16, r->map + ids_off, ids_len / 8, at) < 0) {
			err_set("%s: %s", path, r->error);
			return -1;
		}
	}
	if (r->attrs.n == 0) {
		err_set("%s: offset 24: the file describes no events", path);
		return -1;
	}
	return 0;
}

/* The data section the header points to, where reading begins, and the
 * feature sections after it when the writer closed the file. */
static int find_data(struct pd_reader *r, const char *path)
{
	const u8 *h = r->map;
	u64 data_off = get_u64(h + 40), data_len = get_u64(h + 48);
	if (data_off < FILE_HEADER_SIZE || data_off > r->map_len) {
		err_set("%s: offset 40: data section starts outside the file", path);
		return -1;
	}
	r->data_begin = data_off;
	r->pos = data_off;
	r->win_off = data_off;
	r->hold_from = r->ordered ? data_off : UINT64_MAX;
	r->zhold_from = r->ordered ? 0 : UINT64_MAX;
	/* Writers add the features when they close the file: none means the
	 * recorder was killed or failed, and its header's data size is only
	 * its last checkpoint. */
	bool closed = false;
	for (int i = 0; i < PD_FEAT_MAX / 8; i++)
		closed |= h[72 + i] != 0;
	if (!closed || data_len == 0 || data_len > r->map_len - data_off) {
		/* A recorder that did not finish: read what is there. */
		r->stats.truncated = true;
		data_len = r->map_len - data_off;
	} else {
		find_features(r, h + 72, data_off + data_len);
	}
	r->data_end = data_off + data_len;
	r->stats.data_size = data_len;
	return 0;
}

/* A perf.data file (not a stream): its header, attrs and data section,
 * checked in that order, each error naming the offset it is about. */
static int open_file(struct pd_reader *r, const char *path)
{
	if (map_file(r, path) < 0)
		return -1;
	if (get_u64(r->map + 8) < FILE_HEADER_SIZE) {
		err_set("%s: offset 8: header size %llu is too small", path,
			(unsigned long long)get_u64(r->map + 8));
		return -1;
	}
	if (read_attrs(r, path) < 0)
		return -1;
	return find_data(r, path);
}

static int open_stream(struct pd_reader *r, const char *path)
{
	if (pdr_window_need(r, PIPE_HEADER_SIZE) != 1) {
		err_set("%s: offset 0: stream ends before its header", path);
		return -1;
	}
	if (get_u64(pdr_at(r, 0)) != PD_MAGIC) {
		err_set("%s: offset 0: not a perf.data stream (bad magic)", path);
		return -1;
	}
	if (get_u64(pdr_at(r, 8)) != PIPE_HEADER_SIZE) {
		err_set("%s: offset 8: not a perf.data stream header", path);
		return -1;
	}
	r->pos = PIPE_HEADER_SIZE;
	return 0;
}

int pdr_read_header(struct pd_reader *r, const char *path, bool use_stdin)
{
	u8 magic[16];
	if (!use_stdin) {
		ssize_t n = pread(r->fd, magic, sizeof(magic), 0);
		if (n < 8) {
			err_set("%s: offset 0: file is too short for a perf.data header", path);
			return -1;
		}
		if (get_u64(magic) != PD_MAGIC) {
			err_set("%s: offset 0: not a perf.data file (bad magic)", path);
			return -1;
		}
		r->pipe = n >= 16 && get_u64(magic + 8) == PIPE_HEADER_SIZE;
	} else {
		r->pipe = true;
	}
	if (r->pipe) {
		r->hold_from = r->ordered ? 0 : UINT64_MAX;
		r->zhold_from = r->hold_from;
		return open_stream(r, path);
	}
	if (open_file(r, path) < 0)
		return -1;
	for (int feat = 1; feat < PD_FEAT_MAX; feat++)
		parse_feature(r, feat);
	return 0;
}

void pdr_read_trace(struct pd_reader *r, bool trusted)
{
	size_t len;
	const void *data = pd_reader_feature(r, PD_FEAT_TRACING_DATA, &len);
	if (!data)
		return;
	if (trusted) {
		r->trace = pd_trace_parse_trusted(data, len);
		if (!r->trace)
			r->trace_error = xstrdup(err_msg());
		return;
	}
	int threads = pdt_threads();
	if (threads > 1) {
		r->trace_error = xasprintf("tracing data: not parsed: this process ran %d threads "
					   "when the recording was opened, and the parse forks "
					   "(open it before starting any)", threads);
		return;
	}
	r->trace = pd_trace_parse(data, len);
	if (!r->trace)
		r->trace_error = xstrdup(err_msg());
}

int pd_reader_trace(const struct pd_reader *r, struct pd_trace **t)
{
	*t = r->trace;
	if (r->trace_error) {
		err_set("%s", r->trace_error);
		return -1;
	}
	return 0;
}

void pdr_header_free(struct pd_reader *r)
{
	pd_trace_free(r->trace);
	free(r->trace_error);
	for (size_t i = 0; i < r->owned.n; i++)
		free(r->owned.v[i]);
	VEC_FREE(&r->owned);
	for (int i = 0; i < PD_FEAT_MAX; i++)
		free(r->strings[i]);
	for (size_t i = 0; i < r->build_ids.n; i++)
		free((char *)r->build_ids.v[i].filename);
	VEC_FREE(&r->build_ids);
	free_groups(r);
	VEC_FREE(&r->groups);
}

/* ---- accessors ------------------------------------------------------------ */

const char *pd_reader_string(const struct pd_reader *r, int feat)
{
	return feat > 0 && feat < PD_FEAT_MAX ? r->strings[feat] : NULL;
}

const void *pd_reader_feature(const struct pd_reader *r, int feat, size_t *len)
{
	if (feat <= 0 || feat >= PD_FEAT_MAX || !r->feat[feat].data)
		return NULL;
	if (len)
		*len = r->feat[feat].len;
	return r->feat[feat].data;
}

size_t pd_reader_nbuild_ids(const struct pd_reader *r)
{
	return r->build_ids.n;
}

const struct pd_reader_build_id *pd_reader_build_id(const struct pd_reader *r, size_t i)
{
	return i < r->build_ids.n ? &r->build_ids.v[i] : NULL;
}

size_t pd_reader_ngroups(const struct pd_reader *r)
{
	return r->groups.n;
}

const struct pd_group *pd_reader_group(const struct pd_reader *r, size_t i)
{
	return i < r->groups.n ? &r->groups.v[i] : NULL;
}
