/* svg.c - the tree as one self-contained interactive SVG: frames laid out
 * from the merged counts, children sorted by name so the same input gives
 * the same bytes, streamed to the output with one reused scratch buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph-internal.h"

#define FONT_SIZE 12
#define FONT_WIDTH 0.59     /* average glyph width, in font sizes */
#define XPAD 10

struct todo {
	u32 node, depth;
	u64 pos;                  /* left edge, in counts */
};

struct svg {
	struct flame_tree *t;
	const struct flame_svg_opts *o;
	FILE *out;
	int side;                 /* which counts give widths */
	u64 total;
	double scale, min_px;     /* pixels per count; narrower frames dropped */
	int width, height, top, bottom, fh;
	u32 max_depth;
	double max_delta;         /* largest |share change| (diff) */
	struct strbuf esc;
	VEC(u32) kids;
	VEC(struct todo) todo;
};

/* ---- Text: untrusted names must not break the XML ---------------------- */

/* Length of the valid UTF-8 sequence at s (XML-legal code points only),
 * or 0 when the bytes are not one. */
static size_t utf8_len(const u8 *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t need = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (!need || s[0] > 0xf4 || n < need)
		return 0;
	for (size_t i = 1; i < need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;             /* overlong, surrogate, past U+10FFFF */
	if (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;             /* U+FFFE, U+FFFF are not XML characters */
	return need;
}

/* Appends s escaped for XML, at most max_chars characters; returns how
 * many characters the whole of s has (so callers know it was cut). */
static size_t xml_escape(struct strbuf *sb, const char *s, size_t len, size_t max_chars)
{
	size_t chars = 0;
	for (size_t i = 0; i < len; chars++) {
		const u8 *p = (const u8 *)s + i;
		size_t n = utf8_len(p, len - i);
		bool put = chars < max_chars;
		if (!n) {
			if (put)
				sb_puts(sb, "\xef\xbf\xbd");   /* U+FFFD */
			i++;
			continue;
		}
		if (put) {
			if (*p == '<')
				sb_puts(sb, "&lt;");
			else if (*p == '>')
				sb_puts(sb, "&gt;");
			else if (*p == '&')
				sb_puts(sb, "&amp;");
			else if (*p == '"')
				sb_puts(sb, "&quot;");
			else if (*p < 0x20 && *p != '\t')
				sb_puts(sb, "?");
			else
				sb_add(sb, (const char *)p, n);
		}
		i += n;
	}
	return chars;
}

static void put_escaped(struct svg *g, const char *s)
{
	sb_reset(&g->esc);
	xml_escape(&g->esc, s, strlen(s), SIZE_MAX);
	if (g->esc.len)
		fwrite(g->esc.s, 1, g->esc.len, g->out);
}

/* "1,234,567" */
static void format_count(u64 v, char out[32])
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = tmp[i];
	}
	out[o] = '\0';
}

/* ---- Layout ------------------------------------------------------------ */

static bool visible(const struct svg *g, u32 id)
{
	u64 v = g->t->nodes.v[id].value[g->side];
	return id == 0 || (v && (double)v * g->scale >= g->min_px);
}

/* Share change of a node, after minus before; exactly 0 when the shares
 * are equal (compared in integers, so a profile against itself is all
 * neutral). */
static double share_delta(const struct svg *g, u32 id)
{
	const struct flame_tree *t = g->t;
	if (!t->diff || !t->total[0] || !t->total[1])
		return 0;
	u64 a = t->nodes.v[id].value[0], b = t->nodes.v[id].value[1];
	if ((unsigned __int128)a * t->total[1] == (unsigned __int128)b * t->total[0])
		return 0;
	return (double)a / (double)t->total[0] - (double)b / (double)t->total[1];
}

/* First pass: how deep the drawn frames go, and the largest change. */
static void measure(struct svg *g)
{
	const struct flame_tree *t = g->t;
	g->todo.n = 0;
	VEC_PUSH(&g->todo, ((struct todo){ 0, 0, 0 }));
	while (g->todo.n) {
		struct todo d = g->todo.v[--g->todo.n];
		g->max_depth = MAX(g->max_depth, d.depth);
		if (d.node)
			g->max_delta = MAX(g->max_delta, fabs(share_delta(g, d.node)));
		for (u32 c = t->nodes.v[d.node].first_child; c != FLAME_NONE;
		     c = t->nodes.v[c].next_sibling)
			if (visible(g, c))
				VEC_PUSH(&g->todo, ((struct todo){ c, d.depth + 1, 0 }));
	}
}

static int cmp_names(const void *a, const void *b, void *ctx)
{
	const struct flame_tree *t = ctx;
	const struct flame_name *x = &t->names.v[flame_node_name(&t->nodes.v[*(const u32 *)a])];
	const struct flame_name *y = &t->names.v[flame_node_name(&t->nodes.v[*(const u32 *)b])];
	int c = memcmp(t->text.v + x->off, t->text.v + y->off, MIN(x->len, y->len));
	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

/* Queues the drawn children of d, sorted by name, packed from its left
 * edge (dropped frames leave their share as a gap at the right). */
static void push_children(struct svg *g, const struct todo *d)
{
	const struct flame_tree *t = g->t;
	g->kids.n = 0;
	for (u32 c = t->nodes.v[d->node].first_child; c != FLAME_NONE; c = t->nodes.v[c].next_sibling)
		if (visible(g, c))
			VEC_PUSH(&g->kids, c);
	if (g->kids.n > 1)
		qsort_r(g->kids.v, g->kids.n, sizeof(u32), cmp_names, g->t);
	u64 pos = d->pos;
	size_t first = g->todo.n;
	VEC_GROW(&g->todo, first + g->kids.n);
	/* Reversed on the stack, so the smallest name is drawn first. */
	for (size_t i = 0; i < g->kids.n; i++) {
		g->todo.v[first + g->kids.n - 1 - i] = (struct todo){ g->kids.v[i], d->depth + 1, pos };
		pos += t->nodes.v[g->kids.v[i]].value[g->side];
	}
	g->todo.n = first + g->kids.n;
}

/* ---- Frames ------------------------------------------------------------ */

static int frame_y(const struct svg *g, u32 depth)
{
	if (g->o->inverted)
		return g->top + (int)depth * g->fh;
	return g->height - g->bottom - ((int)depth + 1) * g->fh;
}

static void put_tenths(FILE *out, long long tenths)
{
	fprintf(out, "%lld.%lld", tenths / 10, tenths % 10);
}

static void put_title(struct svg *g, u32 id, const char *name, size_t len)
{
	const struct flame_tree *t = g->t;
	const struct flame_node *n = &t->nodes.v[id];
	char a[32], b[32];
	sb_reset(&g->esc);
	xml_escape(&g->esc, name, len, SIZE_MAX);
	format_count(n->value[g->side], a);
	sb_printf(&g->esc, " (%s ", a);
	xml_escape(&g->esc, g->o->countname, strlen(g->o->countname), SIZE_MAX);
	sb_printf(&g->esc, ", %.2f%%", 100.0 * (double)n->value[g->side] / (double)g->total);
	if (t->diff) {
		int other = !g->side;
		double pct = t->total[other] ? 100.0 * (double)n->value[other] / (double)t->total[other] : 0;
		format_count(n->value[other], b);
		sb_printf(&g->esc, "; %s %s, %.2f%%; change %+.2f points",
			  other ? "before" : "after", b, pct, 100 * share_delta(g, id));
	}
	sb_puts(&g->esc, ")");
	fprintf(g->out, "<title>%s</title>", g->esc.s);
}

/* The label that fits w pixels: the name, cut with "..", or nothing. */
static void put_label(struct svg *g, const char *name, size_t len, double x, int y, double w)
{
	double fit = (w - 6) / (FONT_SIZE * FONT_WIDTH);
	if (fit < 3 || !len)
		return;
	size_t chars = (size_t)fit;
	sb_reset(&g->esc);
	if (xml_escape(&g->esc, name, len, chars) > chars) {
		sb_reset(&g->esc);
		xml_escape(&g->esc, name, len, chars - 2);
		sb_puts(&g->esc, "..");
	}
	fprintf(g->out, "<text x=\"%.1f\" y=\"%d\">%s</text>", x + 3, y + g->fh - 5, g->esc.s);
}

static void put_frame(struct svg *g, const struct todo *d)
{
	const struct flame_tree *t = g->t;
	const struct flame_node *n = &t->nodes.v[d->node];
	const struct flame_name *nm = &t->names.v[flame_node_name(n)];
	const char *name = t->text.v + nm->off;
	u64 v = n->value[g->side];
	long long x1 = llround((XPAD + (double)d->pos * g->scale) * 10);
	long long x2 = llround((XPAD + (double)(d->pos + v) * g->scale) * 10);
	int y = frame_y(g, d->depth);
	char fill[8];
	if (t->diff)
		flame_diff_color(g->max_delta > 0 ? share_delta(g, d->node) / g->max_delta : 0, fill);
	else
		flame_color(g->o->palette, g->o->hash, name, nm->len, flame_node_kind(n),
			    (int)d->depth, fill);
	fprintf(g->out, "<g n=\"%llu\">", (unsigned long long)v);
	put_title(g, d->node, name, nm->len);
	fputs("<rect x=\"", g->out);
	put_tenths(g->out, x1);
	fprintf(g->out, "\" y=\"%d\" width=\"", y);
	put_tenths(g->out, x2 - x1);
	fprintf(g->out, "\" height=\"%d\" fill=\"%s\"/>", g->fh - 1, fill);
	put_label(g, name, nm->len, (double)x1 / 10, y, (double)(x2 - x1) / 10);
	fputs("</g>\n", g->out);
}

static void put_frames(struct svg *g)
{
	g->todo.n = 0;
	VEC_PUSH(&g->todo, ((struct todo){ 0, 0, 0 }));
	while (g->todo.n) {
		struct todo d = g->todo.v[--g->todo.n];
		put_frame(g, &d);
		push_children(g, &d);
	}
}

/* ---- The document ------------------------------------------------------ */

static const char *default_title(const struct svg *g)
{
	if (g->t->diff)
		return g->o->inverted ? "Differential Icicle Graph" : "Differential Flame Graph";
	return g->o->inverted ? "Icicle Graph" : "Flame Graph";
}

static void put_head(struct svg *g)
{
	FILE *out = g->out;
	int w = g->width, h = g->height;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", w, h, w, h);
	fputs("<!-- Made by ember flame. Click a frame to zoom, Ctrl-F or Search to "
	      "find frames by regular expression. -->\n", out);
	fputs("<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop stop-color=\"#f2f2f2\" offset=\"5%\"/><stop stop-color=\"#f2f0c8\" "
	      "offset=\"95%\"/></linearGradient></defs>\n", out);
	fprintf(out, "<style type=\"text/css\">%s</style>\n", flame_svg_css);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[%s]]></script>\n", flame_svg_js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#bg)\"/>\n", w, h);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"%d\">", w / 2, FONT_SIZE * 2);
	put_escaped(g, g->o->title ? g->o->title : default_title(g));
	fputs("</text>\n", out);
	if (g->o->subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", w / 2, FONT_SIZE * 3 + 4);
		put_escaped(g, g->o->subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"unzoom\" class=\"ctl hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"%d\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
		XPAD, FONT_SIZE * 2, w - XPAD, FONT_SIZE * 2, XPAD, h - 10, w - XPAD, h - 10);
}

static void put_frames_open(struct svg *g)
{
	fprintf(g->out, "<g id=\"frames\" data-total=\"%llu\" data-xpad=\"%d\" data-fullw=\"%d\" "
		"data-fs=\"%d\" data-fh=\"%d\" data-inverted=\"%d\" data-countname=\"",
		(unsigned long long)g->total, XPAD, g->width - 2 * XPAD, FONT_SIZE, g->fh,
		g->o->inverted ? 1 : 0);
	put_escaped(g, g->o->countname);
	fputs("\">\n", g->out);
}

static int check_opts(const struct flame_svg_opts *o)
{
	if (o->width < 2 * XPAD + 10 || o->width > 1000000) {
		err_set("width %d out of range (%d to 1000000)", o->width, 2 * XPAD + 10);
		return -1;
	}
	if (o->frame_height < 4 || o->frame_height > 1000) {
		err_set("frame height %d out of range (4 to 1000)", o->frame_height);
		return -1;
	}
	if (!(o->minwidth >= 0) || o->minwidth > 1e9) {
		err_set("bad minimum width %g", o->minwidth);
		return -1;
	}
	return 0;
}

static void setup(struct svg *g)
{
	const struct flame_svg_opts *o = g->o;
	g->side = g->t->diff && o->negate ? 1 : 0;
	g->total = g->t->nodes.v[0].value[g->side];
	g->width = o->width;
	g->fh = o->frame_height;
	double fullw = o->width - 2 * XPAD;
	g->scale = g->total ? fullw / (double)g->total : 0;
	g->min_px = o->minwidth_percent ? o->minwidth / 100 * fullw : o->minwidth;
	g->top = FONT_SIZE * 3 + (o->subtitle ? FONT_SIZE + 4 : 0);
	g->bottom = FONT_SIZE * 2 + 8;
	measure(g);
	g->height = g->top + g->bottom + ((int)g->max_depth + 1) * g->fh;
}

int flame_write_svg(struct flame_tree *t, const struct flame_svg_opts *o, FILE *out)
{
	if (check_opts(o) < 0)
		return -1;
	struct svg g = { .t = t, .o = o, .out = out };
	setup(&g);
	put_head(&g);
	put_frames_open(&g);
	if (g.total)
		put_frames(&g);
	else
		fprintf(out, "<text x=\"%d\" y=\"%d\">No stacks in the input</text>\n", XPAD,
			g.top + FONT_SIZE);
	fputs("</g>\n</svg>\n", out);
	sb_free(&g.esc);
	VEC_FREE(&g.kids);
	VEC_FREE(&g.todo);
	if (fflush(out) != 0 || ferror(out)) {
		err_set_errno("writing the SVG");
		return -1;
	}
	return 0;
}

/* ---- Options ----------------------------------------------------------- */

void flame_svg_opts_default(struct flame_svg_opts *o)
{
	*o = (struct flame_svg_opts){ .countname = "samples", .width = 1200,
				      .frame_height = 16, .minwidth = 0.1,
				      .palette = FLAME_PAL_HOT };
}

int flame_palette_parse(const char *s, enum flame_palette *p)
{
	static const struct { const char *name; enum flame_palette pal; } names[] = {
		{ "hot", FLAME_PAL_HOT }, { "io", FLAME_PAL_IO }, { "blue", FLAME_PAL_IO },
		{ "mem", FLAME_PAL_MEM }, { "green", FLAME_PAL_MEM },
		{ "annotate", FLAME_PAL_ANNOTATE }, { "kernel", FLAME_PAL_ANNOTATE },
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i].name)) {
			*p = names[i].pal;
			return 0;
		}
	err_set("unknown palette '%s' (known: hot, io, blue, mem, green, annotate)", s);
	return -1;
}

int flame_minwidth_parse(const char *s, double *v, bool *percent)
{
	size_t n = strlen(s);
	*percent = n && s[n - 1] == '%';
	char *num = strndup(s, *percent ? n - 1 : n);
	int rc = parse_double(num, v);
	free(num);
	if (rc < 0 || !(*v >= 0) || *v > (*percent ? 100 : 1e9)) {
		err_set("bad minimum width '%s' (pixels like 0.1, or a percent like 0.5%%)", s);
		return -1;
	}
	return 0;
}
