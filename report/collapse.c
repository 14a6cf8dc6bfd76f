/* collapse.c - the folding sink: names each sample's frames the way
 * stackcollapse-perf.pl names the same frames in `perf script` text (a
 * behaviour we match, not code we share) and adds the stack to a tree. */
#include <stdlib.h>
#include <string.h>

#include "report/collapse.h"

struct frame_ref {
	size_t off, len;
	enum flame_kind kind;
};

struct collapse {
	const struct collapse_opts *o;
	struct flame_tree *tree;
	enum flame_side side;
	char *event;                 /* the first event seen: the only one folded */
	u64 skipped, folded;
	struct strbuf names;         /* this sample's frame names */
	VEC(struct frame_ref) refs;
	VEC(struct flame_frame) frames;
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

static bool is_jit_map(const char *path)
{
	for (const char *p = strstr(path, "/tmp/perf-"); p; p = strstr(p + 1, "/tmp/perf-")) {
		const char *d = p + strlen("/tmp/perf-");
		size_t digits = strspn(d, "0123456789");
		if (digits && !strncmp(d + digits, ".map", 4))
			return true;
	}
	return false;
}

static enum flame_kind frame_kind(const struct collapse *c, const struct rp_frame *f)
{
	if (!c->o->annotate || !f->dso)
		return FLAME_USER;
	if (sym_dso_is_kernel(f->dso))
		return FLAME_KERNEL;
	return is_jit_map(sym_dso_path(f->dso)) ? FLAME_JIT : FLAME_USER;
}

static void push_ref(struct collapse *c, size_t off, enum flame_kind kind)
{
	struct frame_ref r = { off, c->names.len - off, kind };
	VEC_PUSH(&c->refs, r);
}

/* An unresolved frame is named after its file, "[libc.so.6]", when known. */
static void put_unknown(struct collapse *c, const struct rp_frame *f, bool java)
{
	const char *path = f->dso ? sym_dso_path(f->dso) : "[unknown]";
	if (!strcmp(path, "[unknown]")) {
		sb_puts(&c->names, "[unknown]");
		return;
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *wrapped = xasprintf("[%s]", base);
	put_tidy(&c->names, wrapped, strlen(wrapped), java);
	free(wrapped);
}

/* One frame; a name holding "->" reads as an inline chain to the folding
 * rules, each later part marked inlined. */
static void add_frame(struct collapse *c, const struct rp_frame *f, bool java)
{
	const char *name = rp_frame_sym(f);
	enum flame_kind kind = frame_kind(c, f);
	if (!name) {
		size_t off = c->names.len;
		put_unknown(c, f, java);
		push_ref(c, off, kind);
		return;
	}
	if (name[0] == '(')
		return;                   /* the folding rules skip these */
	for (size_t part = 0;; part++) {
		const char *arrow = strstr(name, "->");
		size_t len = arrow ? (size_t)(arrow - name) : strlen(name);
		size_t off = c->names.len;
		put_tidy(&c->names, name, len, java);
		push_ref(c, off, part ? FLAME_INLINED : kind);
		if (!arrow)
			return;
		name = arrow + 2;
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

static int collapse_sample(void *ctx, const struct rp_sample *s)
{
	struct collapse *c = ctx;
	if (!s->attr || !s->thread || !wanted_event(c, s->attr))
		return 0;
	sb_reset(&c->names);
	c->refs.n = 0;
	add_process(c, s);
	bool java = !strncmp(c->names.s, "java", 4);
	for (int i = s->nframes - 1; i >= 0; i--)
		add_frame(c, &s->frames[i], java);
	/* Names are referenced only now: the buffer may have moved. */
	VEC_GROW(&c->frames, c->refs.n);
	for (size_t i = 0; i < c->refs.n; i++)
		c->frames.v[i] = (struct flame_frame){ c->names.s + c->refs.v[i].off,
						       c->refs.v[i].len, c->refs.v[i].kind };
	size_t n = MIN(c->refs.n, (size_t)FLAME_MAX_DEPTH);
	c->folded++;
	return flame_tree_add(c->tree, c->frames.v, n, sample_count(c, s), c->side);
}

/* ---- Options and the run ----------------------------------------------- */

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
	case COLLAPSE_OPT_INLINE:
		c->inline_frames = true;
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

static bool has_callchains(struct pd_reader *r)
{
	for (size_t i = 0; i < pd_reader_nattrs(r); i++)
		if (pd_reader_attr(r, i)->attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			return true;
	return false;
}

static void warn_summary(const char *cmd, const struct collapse *c,
			 const struct rp_summary *sum, const char *input)
{
	if (sum->truncated)
		cmd_warn(cmd, "%s was not closed cleanly; folding what it holds", input);
	if (c->skipped)
		cmd_warn(cmd, "folded only %s samples; %llu samples of other events left out",
			 c->event, (unsigned long long)c->skipped);
	if (sum->sym_mismatches)
		cmd_warn(cmd, "%llu files' build-ids no longer match the recording; "
			 "their frames show as unknown", (unsigned long long)sum->sym_mismatches);
	if (sum->input_error)
		cmd_error(cmd, "%s: %s (the stacks cover what came before)", input, sum->error);
}

int collapse_replay(const char *cmd, struct rp_opts *rp, const struct collapse_opts *o,
		    struct flame_tree *tree, enum flame_side side)
{
	struct replay *r = rp_open(rp);
	if (!r) {
		cmd_error(cmd, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	if (!has_callchains(rp_reader(r)))
		cmd_warn(cmd, "%s has no callchains (record with -g); stacks are one frame deep",
			 rp->input);
	rp_set_callchains(r, true);
	struct collapse c = { .o = o, .tree = tree, .side = side };
	struct rp_sink sink = { .ctx = &c, .sample = collapse_sample };
	int rc = rp_run(r, &sink);
	if (rc < 0)
		cmd_error(cmd, "%s", err_msg());
	const struct rp_summary *sum = rp_summary(r);
	warn_summary(cmd, &c, sum, rp->input);
	int status = rc < 0 || sum->input_error ? EXIT_RUNTIME : EXIT_OK;
	free(c.event);
	sb_free(&c.names);
	VEC_FREE(&c.refs);
	VEC_FREE(&c.frames);
	rp_close(r);
	return status;
}
