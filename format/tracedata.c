/* tracedata.c - the tracing data a recording carries for its tracepoints
 * (the HEADER_TRACING_DATA layout: header_page, header_event, event format
 * files by system, kallsyms, printk formats, saved cmdlines), parsed here
 * and handed to libtraceevent, which decodes and prints the fields. */
#include "format/format-internal.h"

#include <dirent.h>
#include <event-parse.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const u8 tracing_magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

struct pd_trace {
	struct tep_handle *tep;
	struct u64map names;         /* id -> index into name_list + 1 */
	VEC(char *) name_list;
	struct trace_seq seq;
	u8 *padded;                  /* see padded_record() */
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
	if (walk_u64(w, len) < 0)
		return NULL;
	if (*len > (u64)(w->end - w->p)) {
		bad(w, "block runs past its end");
		return NULL;
	}
	if (walk_take(w, *len, &p) < 0)
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

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Whether the field named name[0..n) is declared in text ("field:TYPE NAME;"
 * or "field:TYPE NAME[N];"). */
static bool has_field(const char *text, const char *name, size_t n)
{
	for (const char *f = strstr(text, "field:"); f; f = strstr(f + 1, "field:")) {
		const char *semi = strchr(f, ';');
		if (!semi)
			return false;
		const char *e = semi;
		if (e > f && e[-1] == ']')      /* an array: NAME[N] */
			while (e > f && *e != '[')
				e--;
		const char *b = e;
		while (b > f && is_ident(b[-1]))
			b--;
		if ((size_t)(e - b) == n && !memcmp(b, name, n))
			return true;
	}
	return false;
}

/* libtraceevent 1.7 dereferences NULL when a print format names a field
 * (REC->x) the format does not declare; such a format is left out, and so
 * is one with a NUL inside (format files are text, and the checks here
 * would stop at it while libtraceevent reads on). */
static bool print_fields_declared(const char *text, size_t len)
{
	if (memchr(text, 0, len))
		return false;
	const char *fmt = strstr(text, "print fmt:");
	if (!fmt)
		return false;
	for (const char *p = fmt; (p = strstr(p, "REC->"));) {
		p += 5;
		size_t n = 0;
		while (is_ident(p[n]))
			n++;
		if (!n || !has_field(text, p, n))
			return false;
	}
	return true;
}

/* Parses one event format file and remembers its "system:name". */
static void add_format(struct pd_trace *t, const char *text, u64 len, const char *system)
{
	struct tep_event *ev = NULL;
	if (!t->tep || !print_fields_declared(text, len))
		return;
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

/* libtraceevent 1.7 trusts the shape of these text blocks: a printk line
 * without "ADDR : FMT", or whose format has under 3 bytes besides its
 * quotes, makes it read before or past its own copy.  Keep only the lines
 * it can take; what is dropped is a name that will print as an address. */
static bool printk_line_ok(const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	if (!colon || colon == line)
		return false;
	size_t chars = 0;
	for (const char *p = colon + 2; p < line + len; p++)
		chars += *p != '"';
	return chars >= 3;
}

/* A saved_cmdlines line is "PID COMM". */
static bool cmdline_line_ok(const char *line, size_t len)
{
	size_t i = 0;
	while (i < len && line[i] >= '0' && line[i] <= '9')
		i++;
	return i > 0 && i + 1 < len && line[i] == ' ' && line[i + 1] != '\n';
}

/* Copies the lines of text (NUL-terminated) that ok() accepts, in place. */
static void keep_lines(char *text, bool (*ok)(const char *, size_t))
{
	char *out = text;
	for (char *p = text; *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && ok(p, len)) {
			memmove(out, p, len);
			out += len;
			if (nl)
				*out++ = '\n';
		}
		p += len + (nl != NULL);
	}
	*out = '\0';
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
	keep_lines(printk, printk_line_ok);
	if (*printk && t->tep)
		tep_parse_printk_formats(t->tep, printk);
	free(printk);
	if (strcmp(version, "0.6") >= 0 && w->p < w->end) {
		u64 len;
		char *cmdlines = walk_block64(w, &len);
		if (!cmdlines)
			return -1;
		keep_lines(cmdlines, cmdline_line_ok);
		if (*cmdlines && t->tep)
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
	if (t->tep)
		tep_set_long_size(t->tep, p[1]);
	u32 page_size;
	if (walk_u32(w, &page_size) < 0)
		return -1;
	if (t->tep)
		tep_set_page_size(t->tep, (int)page_size);
	char *body;
	u64 len;
	if (read_header_file(w, "header_page", &body, &len) < 0)
		return -1;
	if (t->tep)
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

static struct pd_trace *parse_with_tep(const void *data, size_t len)
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

/* libtraceevent's format parser crashes on some malformed format files
 * (its expression parser trusts the kernel's text), and the tracing data
 * comes from files made elsewhere.  So it first runs in a child: a file
 * that kills it costs its tracepoint names, not the command.  The child
 * says it finished through a pipe, not its exit status, which sanitizers
 * and valgrind may change.  0 when it finished (or no child could be
 * made), -1 when it died or hung.  A child forked while other threads run
 * may inherit a lock one of them held, for ever (seen under ASan): the
 * reader parses before the views start any (pdr_read_trace). */
static int trial_parse(const void *data, size_t len)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		/* Its crash is told once, by the parent, as a warning. */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, 2);
		close(fds[0]);
		alarm(10);
		pd_trace_free(parse_with_tep(data, len));
		(void)!write(fds[1], "k", 1);
		_exit(0);
	}
	close(fds[1]);
	char done;
	ssize_t n;
	while ((n = read(fds[0], &done, 1)) < 0 && errno == EINTR)
		;
	close(fds[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return n == 1 ? 0 : -1;
}

struct pd_trace *pd_trace_parse(const void *data, size_t len)
{
	/* The layout walk alone first (no libtraceevent): layout errors are
	 * ours to report by offset, in this process. */
	struct pd_trace layout = { 0 };
	struct walk w = { data, data, (const u8 *)data + len };
	if (parse(&layout, &w) < 0)
		return NULL;
	if (trial_parse(data, len) < 0) {
		err_set("tracing data: its event formats crash libtraceevent");
		return NULL;
	}
	return parse_with_tep(data, len);
}

struct pd_trace *pd_trace_parse_trusted(const void *data, size_t len)
{
	return parse_with_tep(data, len);
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
	free(t->padded);
	tep_free(t->tep);
	free(t);
}

const char *pd_trace_name(struct pd_trace *t, u64 id)
{
	u64 *slot = u64map_get(&t->names, id);
	return slot ? t->name_list.v[*slot - 1] : NULL;
}

/* A record payload is at most 64 KiB (a u16 record size); a dynamic field
 * (__data_loc) holds a u16 offset and a u16 length. */
#define RAW_MAX (1u << 16)
#define PADDED_SIZE (3 * RAW_MAX)

static bool fields_fit(const struct tep_format_field *f)
{
	for (; f; f = f->next)
		if (f->offset < 0 || f->size < 0 || (size_t)f->offset + (size_t)f->size > RAW_MAX)
			return false;
	return true;
}

/* libtraceevent prints fields where the format puts them and dynamic
 * fields where the record says, checking neither against the record's
 * size: a short or lying record would be read past its end.  So it gets a
 * copy in a buffer long enough for any such place, zeros past the copy.
 * NULL when the format's fields lie outside any record. */
static const void *padded_record(struct pd_trace *t, const struct tep_event *ev,
				 const void *raw, size_t raw_size)
{
	if (raw_size > RAW_MAX || !fields_fit(ev->format.common_fields) ||
	    !fields_fit(ev->format.fields))
		return NULL;
	if (!t->padded)
		t->padded = xcalloc(1, PADDED_SIZE);
	memcpy(t->padded, raw, raw_size);
	return t->padded;
}

int pd_trace_format(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		    struct strbuf *out)
{
	struct tep_event *ev = tep_find_event(t->tep, (int)id);
	const void *data = ev ? padded_record(t, ev, raw, raw_size) : NULL;
	if (!data)
		return -1;
	struct tep_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.data = (void *)data;
	rec.size = (int)raw_size;
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	memset(t->padded, 0, raw_size);   /* zeros again for the next one */
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

int pd_trace_field_str(struct pd_trace *t, u64 id, const void *raw, size_t raw_size,
		       const char *field, char *buf, size_t bufsize)
{
	struct tep_event *ev = tep_find_event(t->tep, (int)id);
	struct tep_format_field *f = ev ? tep_find_field(ev, field) : NULL;
	if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC) || !(f->flags & TEP_FIELD_IS_ARRAY) ||
	    (size_t)f->offset + (size_t)f->size > raw_size || !bufsize) {
		err_set("tracepoint field '%s' is not a fixed-size string", field);
		return -1;
	}
	size_t n = (size_t)f->size < bufsize - 1 ? (size_t)f->size : bufsize - 1;
	const char *src = (const char *)raw + f->offset;
	size_t len = strnlen(src, n);
	memcpy(buf, src, len);
	buf[len] = '\0';
	return 0;
}

int pdt_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n ? n : 1;
}

int pd_trace_open_ids(struct pd_reader *r, struct pd_trace **t, const char *const *names,
		      int n, u64 *ids, bool *have)
{
	if (pd_reader_trace(r, t) < 0)
		return -1;
	if (!*t)
		return 0;
	for (size_t i = 0; i < pd_reader_nattrs(r); i++) {
		const struct pd_attr *a = pd_reader_attr(r, i);
		const char *name = a->attr.type == PERF_TYPE_TRACEPOINT
				   ? pd_trace_name(*t, a->attr.config) : NULL;
		for (int k = 0; name && k < n; k++)
			if (names[k] && !strcmp(name, names[k])) {
				ids[k] = a->attr.config;
				have[k] = true;
			}
	}
	return 0;
}
