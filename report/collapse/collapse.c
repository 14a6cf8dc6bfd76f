/* collapse.c - the folding sink: names each sample's frames the way
 * stackcollapse-perf.pl names the same frames in `perf script` text (a
 * behaviour we match, not code we share) and adds the stack to a tree. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report/collapse/collapse.h"

struct frame_ref {
	size_t off, len;
	enum flame_kind kind;
	bool cached;                 /* in the cache's arena, not names */
	u32 name;                    /* cached: the tree's id of the name */
};

/* Where a frame's cached names are: refs [first, first + n). */
struct cached_frame {
	u32 first, n;
};

struct collapse {
	const struct collapse_opts *o;
	struct replay *rp;           /* for source lines */
	struct flame_tree *tree;
	enum flame_side side;
	char *event;                 /* the first event seen: the only one folded */
	u64 skipped, folded;
	struct strbuf names;         /* this sample's frame names */
	struct strbuf line;          /* one frame as perf script prints it */
	/* Names per symbol (or file) are worked out once: the same few
	 * hundred frames recur in every sample. */
	struct u64map cache;         /* frame key -> cached_frame index + 1 */
	VEC(struct cached_frame) cached;
	VEC(struct frame_ref) cached_refs;
	struct strbuf arena;
	VEC(struct frame_ref) refs;
	VEC(struct flame_frame) frames;
	VEC(struct flame_named) named;
};

/* ---- Naming ------------------------------------------------------------ */

/* Go method names like "net/http.(*Client).Do" keep their parentheses. */
static bool looks_like_go(const char *s, size_t len)
{
	const char *open = memmem(s, len, ".(", 2);
	return open && memmem(open + 2, len - (size_t)(open + 2 - s), ").", 2);
}

/* Where the argument list starts: the first '(' that does not open
 * "(anonymous namespace)". */
static size_t args_start(const char *s, size_t len)
{
	static const char anon[] = "anonymous namespace)";
	for (size_t i = 0; i < len; i++)
		if (s[i] == '(' && !(len - i - 1 >= sizeof(anon) - 1 &&
				     !memcmp(s + i + 1, anon, sizeof(anon) - 1)))
			return i;
	return len;
}

/* Appends the tidied name: arguments dropped, ';' made ':' (it separates
 * frames), quotes removed, and Java's leading 'L' of class paths gone. */
static void put_tidy(struct strbuf *sb, const char *s, size_t len, bool java)
{
	size_t keep = looks_like_go(s, len) ? len : args_start(s, len);
	size_t start = sb->len;
	for (size_t i = 0; i < keep; i++) {
		char ch = s[i] == ';' ? ':' : s[i];
		if (ch != '"' && ch != '\'')
			sb_add(sb, &ch, 1);
	}
	if (java && sb->len > start && sb->s[start] == 'L' &&
	    memchr(sb->s + start, '/', sb->len - start)) {
		memmove(sb->s + start, sb->s + start + 1, sb->len - start - 1);
		sb->s[--sb->len] = '\0';
	}
}

static bool is_jit_map(const char *mod, size_t len)
{
	static const char tmp[] = "/tmp/perf-";
	const size_t n = sizeof(tmp) - 1;
	for (const char *p = memmem(mod, len, tmp, n); p;
	     p = memmem(p + 1, len - (size_t)(p + 1 - mod), tmp, n)) {
		const char *end = mod + len, *e = p + n;
		while (e < end && isdigit((unsigned char)*e))
			e++;
		if (e > p + n && end - e >= 4 && !memcmp(e, ".map", 4))
			return true;
	}
	return false;
}

/* The kernel test of the folding rules ("[...]" or ".../vmlinux", not
 * unknown), less [vdso] and [vsyscall]: those run in user space. */
static bool is_kernel_mod(const char *mod, size_t len)
{
	bool bracket = len && mod[0] == '[';
	bool vmlinux = len >= 7 && !memcmp(mod + len - 7, "vmlinux", 7);
	if (!bracket && !vmlinux)
		return false;
	if (memmem(mod, len, "unknown", 7))
		return false;
	return !(len == 6 && !memcmp(mod, "[vdso]", 6)) &&
	       !(len == 10 && !memcmp(mod, "[vsyscall]", 10));
}

static enum flame_kind frame_kind(const struct collapse *c, const char *mod, size_t len)
{
	if (!c->o->annotate)
		return FLAME_USER;
	if (is_kernel_mod(mod, len))
		return FLAME_KERNEL;
	return is_jit_map(mod, len) ? FLAME_JIT : FLAME_USER;
}

static void push_ref(struct collapse *c, size_t off, enum flame_kind kind)
{
	struct frame_ref r = { off, c->names.len - off, kind, false, FLAME_NO_NAME };
	VEC_PUSH(&c->refs, r);
}

/* The chain line perf script prints for a frame, less its address:
 * "sym+0xoff (dso)" or "[unknown] (dso)". */
static void frame_text(struct strbuf *sb, const struct rp_frame *f)
{
	sb_reset(sb);
	if (f->sym)
		sb_printf(sb, "%s+0x%llx", f->sym->name, (unsigned long long)(f->addr - f->sym->start));
	else
		sb_puts(sb, "[unknown]");
	sb_printf(sb, " (%s)", f->dso ? sym_dso_path(f->dso) : "[unknown]");
}

/* Drops a trailing "+0x<hex>" symbol offset. */
static size_t strip_offset(const char *s, size_t len)
{
	size_t i = len;
	while (i > 0 && isxdigit((unsigned char)s[i - 1]) && !isupper((unsigned char)s[i - 1]))
		i--;
	if (i < len && i >= 3 && !memcmp(s + i - 3, "+0x", 3))
		return i - 3;
	return len;
}

/* One part of a function name: a known name, or "[file]" for an unknown
 * one in a known file. */
static void put_part(struct collapse *c, const char *func, size_t len, const char *mod,
		     size_t mlen, bool java)
{
	if (len == 9 && !memcmp(func, "[unknown]", 9) && !(mlen == 9 && !memcmp(mod, "[unknown]", 9))) {
		const char *base = mod + mlen;
		while (base > mod && base[-1] != '/')
			base--;
		char *wrapped = xasprintf("[%.*s]", (int)(mod + mlen - base), base);
		put_tidy(&c->names, wrapped, strlen(wrapped), java);
		free(wrapped);
		return;
	}
	put_tidy(&c->names, func, len, java);
}

/* One frame, named from its perf script text as the folding rules read
 * it: the file is the last " (...)" group, so odd file names such as
 * "/memfd:x (deleted)" split where the rules split them; a name holding
 * "->" is an inline chain whose later parts are marked inlined. */
static void name_frame(struct collapse *c, const struct rp_frame *f, bool java)
{
	frame_text(&c->line, f);
	const char *text = c->line.s, *open = NULL;
	for (const char *p = strstr(text, " ("); p; p = strstr(p + 1, " ("))
		open = p;
	if (!open || open == text)
		return;
	size_t flen = strip_offset(text, (size_t)(open - text));
	const char *mod = open + 2;
	size_t mlen = c->line.len - (size_t)(mod - text) - 1;
	if (text[0] == '(')
		return;                   /* the rules skip these */
	enum flame_kind kind = frame_kind(c, mod, mlen);
	for (size_t part = 0, pos = 0;; part++) {
		const char *arrow = memmem(text + pos, flen - pos, "->", 2);
		size_t end = arrow ? (size_t)(arrow - text) : flen;
		size_t off = c->names.len;
		put_part(c, text + pos, end - pos, mod, mlen, java);
		push_ref(c, off, part ? FLAME_INLINED : kind);
		if (!arrow)
			return;
		pos = end + 2;
	}
}

/* A frame's name depends on its symbol (or, unresolved, its file) alone,
 * except when the symbol or file name holds " (" and the split falls
 * elsewhere: those are never cached.  Symbols and dsos live as long as the
 * replay; pointers are 8-aligned, so low bits tell the kinds of key apart. */
static u64 frame_key(const struct rp_frame *f, bool java)
{
	if (f->sym)
		return (u64)(uintptr_t)f->sym | java;
	if (f->dso)
		return (u64)(uintptr_t)f->dso | 2 | java;
	return 4 | java;
}

static bool cacheable(const struct rp_frame *f)
{
	return !(f->sym && strstr(f->sym->name, " (")) &&
	       !(f->dso && strstr(sym_dso_path(f->dso), " ("));
}

/* The text of a ref not yet cached (the buffer is empty, not there, when
 * nothing was added to it). */
static const char *name_at(const struct collapse *c, const struct frame_ref *r)
{
	return c->names.s ? c->names.s + r->off : "";
}

/* Moves the refs made since first into the cache under key, their names
 * interned in the tree once for all the samples that will show them. */
static void remember(struct collapse *c, u64 key, size_t first)
{
	struct cached_frame cf = { (u32)c->cached_refs.n, (u32)(c->refs.n - first) };
	for (size_t i = first; i < c->refs.n; i++) {
		struct frame_ref *r = &c->refs.v[i];
		struct frame_ref moved = { c->arena.len, r->len, r->kind, true,
					   flame_tree_name(c->tree, name_at(c, r), r->len) };
		sb_add(&c->arena, c->names.s + r->off, r->len);
		VEC_PUSH(&c->cached_refs, moved);
		*r = moved;
	}
	VEC_PUSH(&c->cached, cf);
	*u64map_slot(&c->cache, key, NULL) = c->cached.n;
}

/* With --srcline: the frame's name and " file:line" when the DWARF knows
 * it.  Not cached: the name depends on the address, not the symbol. */
static void add_frame_srcline(struct collapse *c, const struct rp_frame *f, bool java)
{
	size_t first = c->refs.n;
	name_frame(c, f, java);
	const char *line = rp_srcline(c->rp, f);
	if (!line || c->refs.n == first)
		return;
	struct frame_ref *last = &c->refs.v[c->refs.n - 1];
	/* "NAME (inlined)" was tidied to "NAME ": one space before the line. */
	while (c->names.len > last->off && c->names.s[c->names.len - 1] == ' ')
		c->names.s[--c->names.len] = '\0';
	sb_printf(&c->names, " %s", line);
	last->len = c->names.len - last->off;
}

static void add_frame(struct collapse *c, const struct rp_frame *f, bool java)
{
	if (c->o->srcline) {
		add_frame_srcline(c, f, java);
		return;
	}
	u64 key = frame_key(f, java);
	u64 *hit = u64map_get(&c->cache, key);
	if (hit) {
		const struct cached_frame *cf = &c->cached.v[*hit - 1];
		for (u32 i = 0; i < cf->n; i++)
			VEC_PUSH(&c->refs, c->cached_refs.v[cf->first + i]);
		return;
	}
	size_t first = c->refs.n, names = c->names.len;
	name_frame(c, f, java);
	if (cacheable(f)) {
		remember(c, key, first);
		c->names.len = names;     /* what was added now lives in the arena */
		if (c->names.s)
			c->names.s[names] = '\0';
	}
}

/* The process frame: comm, with "-PID" or "-PID/TID", spaces made '_'. */
static void add_process(struct collapse *c, const struct rp_sample *s)
{
	size_t off = c->names.len;
	sb_puts(&c->names, s->thread->comm);
	if (c->o->tid)
		sb_printf(&c->names, "-%u/%u", s->s->pid, s->s->tid);
	else if (c->o->pid)
		sb_printf(&c->names, "-%u", s->s->pid);
	for (size_t i = off; i < c->names.len; i++)
		if (c->names.s[i] == ' ')
			c->names.s[i] = '_';
	push_ref(c, off, FLAME_USER);
}

/* ---- The sink ---------------------------------------------------------- */

/* Only the first event's samples are folded: adding up different events
 * (cycles and page faults) would mean nothing. */
static bool wanted_event(struct collapse *c, const struct pd_attr *a)
{
	const char *name = a->name ? a->name : "";
	if (!c->event)
		c->event = xstrdup(name);
	if (!strcmp(c->event, name))
		return true;
	c->skipped++;
	return false;
}

static u64 sample_count(const struct collapse *c, const struct rp_sample *s)
{
	if (!c->o->weight_period)
		return 1;
	return s->s->period ? s->s->period : 1;
}

/* The stack by its names' text: what fails as flame_tree_add() fails when
 * the tree is full. */
static int add_by_text(struct collapse *c, const struct rp_sample *s, size_t n)
{
	VEC_GROW(&c->frames, n);
	for (size_t i = 0; i < n; i++) {
		const struct frame_ref *r = &c->refs.v[i];
		const char *base = r->cached ? c->arena.s : c->names.s;
		c->frames.v[i] = (struct flame_frame){ base ? base + r->off : "", r->len, r->kind };
	}
	return flame_tree_add(c->tree, c->frames.v, n, sample_count(c, s), c->side);
}

static int collapse_sample(void *ctx, const struct rp_sample *s)
{
	struct collapse *c = ctx;
	if (!s->attr || !s->thread || !wanted_event(c, s->attr))
		return 0;
	sb_reset(&c->names);
	c->refs.n = 0;
	add_process(c, s);
	bool java = !strncmp(c->names.s, "java", 4);
	/* A chain perf could not trust prints no frames in perf script, so
	 * the folded line has the process frame alone. */
	int nframes = s->chain_dropped ? 0 : s->nframes;
	for (int i = nframes - 1; i >= 0; i--)
		add_frame(c, &s->frames[i], java);
	size_t n = MIN(c->refs.n, (size_t)FLAME_MAX_DEPTH);
	c->folded++;
	/* Cached frames come with their names' ids; the rest (the process,
	 * names never cached) are interned now. */
	VEC_GROW(&c->named, n);
	for (size_t i = 0; i < n; i++) {
		const struct frame_ref *r = &c->refs.v[i];
		u32 id = r->cached ? r->name : flame_tree_name(c->tree, name_at(c, r), r->len);
		if (id == FLAME_NO_NAME)
			return add_by_text(c, s, n);
		c->named.v[i] = (struct flame_named){ id, r->kind };
	}
	return flame_tree_add_named(c->tree, c->named.v, n, sample_count(c, s), c->side);
}

/* ---- Options and the run ----------------------------------------------- */

const struct opt collapse_options[] = {
	OPT(COLLAPSE_OPT_WEIGHT, 0, "weight", OPT_ARG, "WHAT",
	  "samples (default) or period: sum each sample's period\n"
	  "(what stackcollapse-perf.pl does since 2022 when\n"
	  "perf script shows the period)"),
	OPT(COLLAPSE_OPT_ANNOTATE, 0, "annotate", OPT_NO_ARG, NULL,
	  "mark kernel frames _[k] and JIT frames _[j]"),
	OPT(COLLAPSE_OPT_PID, 0, "pid", OPT_OPT_ARG, "LIST",
	  "name the process frame comm-PID; --pid=LIST: only\n"
	  "these processes (note the '=')"),
	OPT(COLLAPSE_OPT_TID, 0, "tid", OPT_OPT_ARG, "LIST",
	  "name the process frame comm-PID/TID; --tid=LIST:\n"
	  "only these threads"),
	OPT(COLLAPSE_OPT_SRCLINE, 0, "srcline", OPT_NO_ARG, NULL,
	  "add \" file:line\" to each frame the DWARF has a line\n"
	  "for (an inline chain's outer frames: the call site)"),
	OPT_INCLUDE(rp_sample_opts),
	OPT_INCLUDE(rp_symbol_opts),
	OPT_INCLUDE(rp_unwind_opts),
	OPT_END,
};

int collapse_parse_opt(struct collapse_opts *c, struct rp_opts *rp, int opt, const char *arg)
{
	switch (opt) {
	case COLLAPSE_OPT_PID:
		if (arg)
			return rp_parse_filter_opt(rp, RP_OPT_PID, arg);
		c->pid = true;
		return 1;
	case COLLAPSE_OPT_TID:
		if (arg)
			return rp_parse_filter_opt(rp, RP_OPT_TID, arg);
		c->tid = true;
		return 1;
	case COLLAPSE_OPT_ANNOTATE:
		c->annotate = true;
		return 1;
	case COLLAPSE_OPT_SRCLINE:
		c->srcline = true;
		return 1;
	case COLLAPSE_OPT_WEIGHT:
		if (!strcmp(arg, "period") || !strcmp(arg, "samples")) {
			c->weight_period = !strcmp(arg, "period");
			return 1;
		}
		err_set("bad --weight '%s' (expected samples or period)", arg);
		return -1;
	default:
		return rp_parse_filter_opt(rp, opt, arg);
	}
}

int collapse_replay(struct rp_opts *rp, const struct collapse_opts *o, struct flame_tree *tree,
		    enum flame_side side, struct collapse_notes *n)
{
	struct replay *r = rp_open(rp);
	if (!r)
		return -1;
	n->no_callchains = !rp_has_callchains(r);
	rp_set_callchains(r, true);
	struct collapse c = { .o = o, .rp = r, .tree = tree, .side = side };
	u64map_init(&c.cache);
	struct rp_sink sink = { .ctx = &c, .sample = collapse_sample };
	int rc = rp_run(r, &sink);
	n->replayed = true;
	n->summary = *rp_summary(r);
	n->skipped = c.skipped;
	snprintf(n->event, sizeof(n->event), "%s", c.event ? c.event : "");
	free(c.event);
	sb_free(&c.names);
	sb_free(&c.line);
	sb_free(&c.arena);
	u64map_free(&c.cache);
	VEC_FREE(&c.cached);
	VEC_FREE(&c.cached_refs);
	VEC_FREE(&c.refs);
	VEC_FREE(&c.frames);
	VEC_FREE(&c.named);
	rp_close(r);   /* sets no error: the message stays */
	return rc < 0 ? -1 : 0;
}
