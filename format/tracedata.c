/* tracedata.c - the tracing data a recording carries for its tracepoints
 * (the HEADER_TRACING_DATA layout: header_page, header_event, event format
 * files by system, kallsyms, printk formats, saved cmdlines), parsed here
 * and handed to libtraceevent, which decodes and prints the fields. */
#include "format/format.h"

#include <event-parse.h>
#include <stdlib.h>
#include <string.h>

static const u8 tracing_magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

struct pd_trace {
	struct tep_handle *tep;
	struct u64map names;         /* id -> index into name_list + 1 */
	VEC(char *) name_list;
	struct trace_seq seq;
};

/* A bounds-checked walk over the blob. */
struct walk {
	const u8 *base, *p, *end;
};

static int bad(const struct walk *w, const char *what)
{
	err_set("tracing data: offset %#lx: %s", (long)(w->p - w->base), what);
	return -1;
}

static int walk_take(struct walk *w, size_t n, const u8 **out)
{
	if ((size_t)(w->end - w->p) < n)
		return bad(w, "runs past its end");
	*out = w->p;
	w->p += n;
	return 0;
}

static int walk_u32(struct walk *w, u32 *v)
{
	const u8 *p;
	if (walk_take(w, 4, &p) < 0)
		return -1;
	memcpy(v, p, 4);
	return 0;
}

static int walk_u64(struct walk *w, u64 *v)
{
	const u8 *p;
	if (walk_take(w, 8, &p) < 0)
		return -1;
	memcpy(v, p, 8);
	return 0;
}

static int walk_string(struct walk *w, const char **s)
{
	const u8 *nul = memchr(w->p, 0, (size_t)(w->end - w->p));
	if (!nul)
		return bad(w, "string without an end");
	*s = (const char *)w->p;
	w->p = nul + 1;
	return 0;
}

/* A u64-sized block: returns a NUL-terminated copy the caller frees. */
static char *walk_block64(struct walk *w, u64 *len)
{
	const u8 *p;
	if (walk_u64(w, len) < 0 || *len > (u64)(w->end - w->p) || walk_take(w, *len, &p) < 0)
		return NULL;
	char *copy = xmalloc(*len + 1);
	memcpy(copy, p, *len);
	copy[*len] = '\0';
	return copy;
}

/* "header_page" or "header_event": a tag, then a u64-sized body. */
static int read_header_file(struct walk *w, const char *tag, char **body, u64 *len)
{
	const char *name;
	if (walk_string(w, &name) < 0)
		return -1;
	if (strcmp(name, tag)) {
		char what[64];
		snprintf(what, sizeof(what), "expected %s", tag);
		return bad(w, what);
	}
	*body = walk_block64(w, len);
	return *body ? 0 : -1;
}

/* Parses one event format file and remembers its "system:name". */
static void add_format(struct pd_trace *t, const char *text, u64 len, const char *system)
{
	struct tep_event *ev = NULL;
	if (tep_parse_format(t->tep, &ev, text, len, system) != 0 || !ev)
		return; /* an event libtraceevent cannot parse stays unnamed */
	char *name = xasprintf("%s:%s", system, ev->name);
	VEC_PUSH(&t->name_list, name);
	*u64map_slot(&t->names, (u64)ev->id, NULL) = t->name_list.n;
}

static int read_formats(struct pd_trace *t, struct walk *w, const char *system)
{
	u32 count;
	if (walk_u32(w, &count) < 0)
		return -1;
	for (u32 i = 0; i < count; i++) {
		u64 len;
		char *text = walk_block64(w, &len);
		if (!text)
			return -1;
		add_format(t, text, len, system);
		free(text);
	}
	return 0;
}

/* u32-sized text blocks (kallsyms, printk formats). */
static char *walk_block32(struct walk *w)
{
	u32 len;
	const u8 *p;
	if (walk_u32(w, &len) < 0 || walk_take(w, len, &p) < 0)
		return NULL;
	char *copy = xmalloc((size_t)len + 1);
	memcpy(copy, p, len);
	copy[len] = '\0';
	return copy;
}

static int read_trailer(struct pd_trace *t, struct walk *w, const char *version)
{
	char *kallsyms = walk_block32(w);
	if (!kallsyms)
		return -1;
	free(kallsyms); /* symbols come from symbols/, not from here */
	char *printk = walk_block32(w);
	if (!printk)
		return -1;
	if (*printk)
		tep_parse_printk_formats(t->tep, printk);
	free(printk);
	if (strcmp(version, "0.6") >= 0 && w->p < w->end) {
		u64 len;
		char *cmdlines = walk_block64(w, &len);
		if (!cmdlines)
			return -1;
		if (*cmdlines)
			tep_parse_saved_cmdlines(t->tep, cmdlines);
		free(cmdlines);
	}
	return 0;
}

static int parse(struct pd_trace *t, struct walk *w)
{
	const u8 *magic, *p;
	const char *version;
	if (walk_take(w, sizeof(tracing_magic), &magic) < 0 ||
	    memcmp(magic, tracing_magic, sizeof(tracing_magic)))
		return bad(w, "bad magic");
	if (walk_string(w, &version) < 0 || walk_take(w, 2, &p) < 0)
		return -1;
	if (p[0])
		return bad(w, "big-endian tracing data is not supported");
	tep_set_long_size(t->tep, p[1]);
	u32 page_size;
	if (walk_u32(w, &page_size) < 0)
		return -1;
	tep_set_page_size(t->tep, (int)page_size);
	char *body;
	u64 len;
	if (read_header_file(w, "header_page", &body, &len) < 0)
		return -1;
	tep_parse_header_page(t->tep, body, len, p[1]);
	free(body);
	if (read_header_file(w, "header_event", &body, &len) < 0)
		return -1;
	free(body);
	if (read_formats(t, w, "ftrace") < 0)
		return -1;
	u32 systems;
	if (walk_u32(w, &systems) < 0)
		return -1;
	for (u32 i = 0; i < systems; i++) {
		const char *system;
		if (walk_string(w, &system) < 0 || read_formats(t, w, system) < 0)
			return -1;
	}
	return read_trailer(t, w, version);
}

struct pd_trace *pd_trace_parse(const void *data, size_t len)
{
	struct pd_trace *t = xcalloc(1, sizeof(*t));
	t->tep = tep_alloc();
	if (!t->tep) {
		free(t);
		err_set("tracing data: cannot allocate a parser");
		return NULL;
	}
	u64map_init(&t->names);
	trace_seq_init(&t->seq);
	struct walk w = { data, data, (const u8 *)data + len };
	if (parse(t, &w) < 0) {
		pd_trace_free(t);
		return NULL;
	}
	return t;
}

void pd_trace_free(struct pd_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->name_list.n; i++)
		free(t->name_list.v[i]);
	VEC_FREE(&t->name_list);
	u64map_free(&t->names);
	trace_seq_destroy(&t->seq);
	tep_free(t->tep);
	free(t);
}

const char *pd_trace_name(struct pd_trace *t, u64 id)
{
	u64 *slot = u64map_get(&t->names, id);
	return slot ? t->name_list.v[*slot - 1] : NULL;
}

int pd_trace_format(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		    struct strbuf *out)
{
	struct tep_event *ev = tep_find_event(t->tep, (int)id);
	if (!ev)
		return -1;
	struct tep_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.data = (void *)raw;
	rec.size = (int)raw_size;
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	sb_add(out, t->seq.buffer, t->seq.len);
	return 0;
}

int pd_trace_field(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		   const char *field, u64 *value)
{
	struct tep_event *ev = tep_find_event(t->tep, (int)id);
	struct tep_format_field *f = ev ? tep_find_field(ev, field) : NULL;
	if (!f || (size_t)f->offset + (size_t)f->size > raw_size) {
		err_set("tracepoint field '%s' not found", field);
		return -1;
	}
	unsigned long long v;
	if (tep_read_number_field(f, raw, &v) != 0) {
		err_set("tracepoint field '%s' is not a number", field);
		return -1;
	}
	*value = v;
	return 0;
}
