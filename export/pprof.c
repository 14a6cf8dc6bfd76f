/* pprof.c - the profile as pprof's profile.proto (export/profile.proto,
 * packed by protobuf-c's generated code) and gzipped with zlib, as
 * go tool pprof, Pyroscope and Parca take it. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/export-internal.h"
#include "export/profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

/* The messages of one encode, allocated in arrays and freed together. */
struct pb {
	const struct ex_profile *p;
	PbProfile prof;
	PbValueType types[2], period_type;
	PbValueType *type_ptrs[2];
	PbSample *samples;   PbSample **sample_ptrs;
	PbLabel *labels;     PbLabel **label_ptrs;
	u64 *loc_ids;        s64 *values;
	PbMapping *maps;     PbMapping **map_ptrs;
	u64 *map_id;               /* the profile's mapping i -> its pprof id */
	PbLocation *locs;    PbLocation **loc_ptrs;
	PbLine *lines;       PbLine **line_ptrs;
	PbFunction *funcs;   PbFunction **func_ptrs;
	VEC(char *) strings;       /* the profile's, then the writer's own */
};

/* A string of the writer's own (units, label keys), after the profile's. */
static s64 own_string(struct pb *b, const char *s)
{
	for (size_t i = b->p->strings.n; i < b->strings.n; i++)
		if (!strcmp(b->strings.v[i], s))
			return (s64)i;
	VEC_PUSH(&b->strings, (char *)s);
	return (s64)(b->strings.n - 1);
}

static void value_type(struct pb *b, PbValueType *vt, const char *type, const char *unit)
{
	perftools__profiles__value_type__init(vt);
	vt->type = own_string(b, type);
	vt->unit = own_string(b, unit);
}

/* Sample types: samples/count, then the value (cpu/nanoseconds, the
 * event's count, off-cpu/nanoseconds), the default. */
static void header(struct pb *b)
{
	const struct ex_profile *p = b->p;
	const char *unit, *type = ex_value_type(p, &unit);
	value_type(b, &b->types[0], p->o.kind == EX_OFFCPU ? "intervals" : "samples", "count");
	value_type(b, &b->types[1], type, unit);
	b->type_ptrs[0] = &b->types[0];
	b->type_ptrs[1] = &b->types[1];
	b->prof.n_sample_type = 2;
	b->prof.sample_type = b->type_ptrs;
	b->prof.default_sample_type = b->types[1].type;
	value_type(b, &b->period_type, type, unit);
	b->prof.period_type = &b->period_type;
	b->prof.period = (s64)p->period;
	u64 duration = p->time_set ? p->duration_nanos :
		       p->last_time > p->first_time ? p->last_time - p->first_time : 0;
	b->prof.time_nanos = (s64)p->time_nanos;
	b->prof.duration_nanos = (s64)duration;
}

static void samples(struct pb *b)
{
	const struct ex_profile *p = b->p;
	size_t n = p->samples_v.n, nlabels = p->o.labels ? 3 : 0;
	b->samples = xcalloc(n + 1, sizeof(*b->samples));
	b->sample_ptrs = xcalloc(n + 1, sizeof(*b->sample_ptrs));
	b->labels = xcalloc(n * nlabels + 1, sizeof(*b->labels));
	b->label_ptrs = xcalloc(n * nlabels + 1, sizeof(*b->label_ptrs));
	b->loc_ids = xcalloc(p->stack_locs.n + 1, sizeof(*b->loc_ids));
	b->values = xcalloc(2 * n + 1, sizeof(*b->values));
	s64 pid = own_string(b, "pid"), tid = own_string(b, "tid"), comm = own_string(b, "comm");
	for (size_t i = 0; i < p->stack_locs.n; i++)
		b->loc_ids[i] = p->stack_locs.v[i] + 1;
	for (size_t i = 0; i < n; i++) {
		const struct ex_sample *s = &p->samples_v.v[i];
		PbSample *m = &b->samples[i];
		perftools__profiles__sample__init(m);
		m->n_location_id = s->n;
		m->location_id = b->loc_ids + s->first;
		b->values[2 * i] = (s64)s->count;
		b->values[2 * i + 1] = (s64)s->value;
		m->n_value = 2;
		m->value = b->values + 2 * i;
		if (nlabels) {
			const struct ex_thread *t = &p->threads.v[s->thread];
			PbLabel *l = b->labels + i * nlabels;
			for (size_t k = 0; k < nlabels; k++) {
				perftools__profiles__label__init(&l[k]);
				b->label_ptrs[i * nlabels + k] = &l[k];
			}
			l[0].key = pid;
			l[0].num = t->pid;
			l[1].key = tid;
			l[1].num = t->tid;
			l[2].key = comm;
			l[2].str = t->comm;
			m->n_label = nlabels;
			m->label = b->label_ptrs + i * nlabels;
		}
		b->sample_ptrs[i] = m;
	}
	b->prof.n_sample = n;
	b->prof.sample = b->sample_ptrs;
}

/* pprof takes the first mapping for the program: the executable most of
 * the weight passes through, then the other executables, the shared
 * libraries and the rest ([vdso], the kernel), each in the order met.
 * The rank of mapping e. */
static int map_rank(const struct ex_profile *p, const struct ex_map *e)
{
	const char *path = ex_str(p, e->file);
	if (e->kernel || path[0] == '[')
		return 3;
	return strstr(path, ".so") ? 2 : 1;
}

/* The executable the most weight passes through (each sample counted
 * once per mapping), or EX_NONE. */
static u32 main_mapping(const struct ex_profile *p)
{
	size_t n = p->maps.n;
	u64 *w = xcalloc(n + 1, sizeof(*w));
	u32 *last = xcalloc(n + 1, sizeof(*last));   /* sample index + 1 */
	for (size_t i = 0; i < p->samples_v.n; i++) {
		const struct ex_sample *s = &p->samples_v.v[i];
		for (u32 k = 0; k < s->n; k++) {
			u32 m = p->locs.v[p->stack_locs.v[s->first + k]].map;
			if (m != EX_NONE && last[m] != i + 1) {
				last[m] = (u32)i + 1;
				w[m] += s->value;
			}
		}
	}
	u32 best = EX_NONE;
	for (size_t i = 0; i < n; i++)
		if (map_rank(p, &p->maps.v[i]) == 1 && (best == EX_NONE || w[i] > w[best]))
			best = (u32)i;
	free(w);
	free(last);
	return best;
}

static void mappings(struct pb *b)
{
	const struct ex_profile *p = b->p;
	size_t n = p->maps.n, k = 0;
	b->maps = xcalloc(n + 1, sizeof(*b->maps));
	b->map_ptrs = xcalloc(n + 1, sizeof(*b->map_ptrs));
	b->map_id = xcalloc(n + 1, sizeof(*b->map_id));
	u32 main = main_mapping(p);
	if (main != EX_NONE)
		b->map_id[main] = ++k;
	for (int rank = 1; rank <= 3; rank++)
		for (size_t i = 0; i < n; i++)
			if (i != main && map_rank(p, &p->maps.v[i]) == rank)
				b->map_id[i] = ++k;
	for (size_t i = 0; i < n; i++) {
		const struct ex_map *e = &p->maps.v[i];
		PbMapping *m = &b->maps[b->map_id[i] - 1];
		perftools__profiles__mapping__init(m);
		m->id = b->map_id[i];
		m->memory_start = e->start;
		m->memory_limit = e->limit;
		m->file_offset = e->pgoff;
		m->filename = e->file;
		m->build_id = e->build_id;
		/* Every location is named (an unknown symbol by its address),
		 * so pprof has nothing to symbolize. */
		m->has_functions = true;
		m->has_filenames = e->lines;
		m->has_line_numbers = e->lines;
		m->has_inline_frames = e->inlines;
		b->map_ptrs[m->id - 1] = m;
	}
	b->prof.n_mapping = n;
	b->prof.mapping = b->map_ptrs;
}

static void locations(struct pb *b)
{
	const struct ex_profile *p = b->p;
	size_t n = p->locs.n, nl = p->lines.n;
	b->locs = xcalloc(n + 1, sizeof(*b->locs));
	b->loc_ptrs = xcalloc(n + 1, sizeof(*b->loc_ptrs));
	b->lines = xcalloc(nl + 1, sizeof(*b->lines));
	b->line_ptrs = xcalloc(nl + 1, sizeof(*b->line_ptrs));
	for (size_t i = 0; i < nl; i++) {
		perftools__profiles__line__init(&b->lines[i]);
		b->lines[i].function_id = p->lines.v[i].func + 1;
		b->lines[i].line = p->lines.v[i].line;
		b->line_ptrs[i] = &b->lines[i];
	}
	for (size_t i = 0; i < n; i++) {
		const struct ex_loc *e = &p->locs.v[i];
		PbLocation *m = &b->locs[i];
		perftools__profiles__location__init(m);
		m->id = i + 1;
		m->mapping_id = e->map == EX_NONE ? 0 : b->map_id[e->map];
		m->address = e->address;
		/* Lines innermost first, as the frames are: pprof's order. */
		m->n_line = e->nlines;
		m->line = b->line_ptrs + e->first_line;
		b->loc_ptrs[i] = m;
	}
	b->prof.n_location = n;
	b->prof.location = b->loc_ptrs;
}

static void functions(struct pb *b)
{
	const struct ex_profile *p = b->p;
	size_t n = p->funcs.n;
	b->funcs = xcalloc(n + 1, sizeof(*b->funcs));
	b->func_ptrs = xcalloc(n + 1, sizeof(*b->func_ptrs));
	for (size_t i = 0; i < n; i++) {
		const struct ex_func *e = &p->funcs.v[i];
		PbFunction *m = &b->funcs[i];
		perftools__profiles__function__init(m);
		m->id = i + 1;
		m->name = e->name;
		m->system_name = e->name;
		m->filename = e->file;
		m->start_line = e->start_line;
		b->func_ptrs[i] = m;
	}
	b->prof.n_function = n;
	b->prof.function = b->func_ptrs;
}

static void pb_free(struct pb *b)
{
	free(b->samples);  free(b->sample_ptrs);
	free(b->labels);   free(b->label_ptrs);
	free(b->loc_ids);  free(b->values);
	free(b->maps);     free(b->map_ptrs);  free(b->map_id);
	free(b->locs);     free(b->loc_ptrs);
	free(b->lines);    free(b->line_ptrs);
	free(b->funcs);    free(b->func_ptrs);
	VEC_FREE(&b->strings);
}

/* gzip of buf (a gzip header and trailer around deflate). */
static int gzip(const u8 *buf, size_t n, void **out, size_t *len)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		err_set("gzip: cannot start zlib's deflate");
		return -1;
	}
	size_t cap = deflateBound(&z, n) + 32;
	u8 *gz = xmalloc(cap);
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)n;
	z.next_out = gz;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(gz);
		err_set("gzip: deflate failed (%d)", rc);
		return -1;
	}
	*out = gz;
	*len = z.total_out;
	return 0;
}

int ex_pprof_encode(const struct ex_profile *p, void **gz, size_t *len)
{
	if (p->samples_v.n > UINT32_MAX || p->strings.n > (size_t)1 << 31) {
		err_set("the profile is too large for pprof");
		return -1;
	}
	struct pb b = { .p = p };
	perftools__profiles__profile__init(&b.prof);
	VEC_GROW(&b.strings, p->strings.n + 16);
	memcpy(b.strings.v, p->strings.v, p->strings.n * sizeof(char *));
	b.strings.n = p->strings.n;
	header(&b);
	samples(&b);
	mappings(&b);
	locations(&b);
	functions(&b);
	b.prof.n_string_table = b.strings.n;
	b.prof.string_table = b.strings.v;
	size_t n = perftools__profiles__profile__get_packed_size(&b.prof);
	u8 *buf = xmalloc(n + 1);
	perftools__profiles__profile__pack(&b.prof, buf);
	pb_free(&b);
	int rc = gzip(buf, n, gz, len);
	free(buf);
	return rc;
}

int ex_pprof_write(const struct ex_profile *p, FILE *out)
{
	void *gz;
	size_t len;
	if (ex_pprof_encode(p, &gz, &len) < 0)
		return -1;
	size_t put = fwrite(gz, 1, len, out);
	free(gz);
	if (put != len || fflush(out) != 0) {
		err_set("writing the profile failed");
		return -1;
	}
	return 0;
}
