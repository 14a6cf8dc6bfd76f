/* ui.c - ember top's full screen on screen/'s terminal view: the header
 * (what the live path lost, the sort keys, the keys), the table's rows
 * with the selected one in reverse and the expanded one's callers, and
 * top's keys (q z s / K U, the arrows and Enter; s and / ask on the
 * status line).  The command feeds the table and says when to draw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "screen/screen.h"
#include "views/top/top.h"

#define TOP_ROWS_MAX 512
#define TOP_CALLERS_SHOWN 10

/* The rows' key columns are screen/'s columns. */
_Static_assert(HK_MAX <= SCREEN_COLUMNS, "a column for each sort key");

struct top_ui {
	struct top_table *t;
	struct screen *scr;
	struct top_filter filter;
	bool zero, graph;
	regex_t re;
	char re_text[128];
	char sort_text[128];
	size_t sel;                /* selected line */
	char *expanded;            /* the text of the row whose callers show */
	char prompt;               /* 's' or '/' while asking, else 0 */
	char input[128];
	size_t ninput;
	char message[160];         /* the last key's complaint */
	u64 refreshes, last_samples;
	void (*live)(void *ctx, struct top_ui_live *out);
	void *ctx;
};

struct top_ui *top_ui_new(struct top_table *t, struct screen *scr, const struct top_ui_opts *o)
{
	struct top_ui *u = xcalloc(1, sizeof(*u));
	u->t = t;
	u->scr = scr;
	u->zero = o->zero;
	u->graph = o->graph;
	u->live = o->live;
	u->ctx = o->ctx;
	u->filter.hide_kernel = o->hide_kernel;
	u->filter.hide_user = o->hide_user;
	snprintf(u->sort_text, sizeof(u->sort_text), "%s", o->sort);
	snprintf(u->message, sizeof(u->message), "gathering the first %g s...", o->delay);
	return u;
}

void top_ui_free(struct top_ui *u)
{
	if (!u)
		return;
	if (u->filter.re)
		regfree(&u->re);
	free(u->expanded);
	free(u);
}

/* ---- drawing ------------------------------------------------------------------ */

static void draw_header(struct top_ui *u)
{
	char line[512];
	struct top_ui_live live;
	u->live(u->ctx, &live);
	snprintf(line, sizeof(line),
		 "ember top: %llu samples in the last refresh, %llu lost in all, %llu KB not "
		 "read yet%s%s%s", (unsigned long long)u->last_samples,
		 (unsigned long long)live.lost,
		 (unsigned long long)(live.backlog / 1024),
		 u->zero ? ", zeroing" : ", decaying",
		 u->filter.hide_kernel ? ", kernel hidden" : "",
		 u->filter.hide_user ? ", user hidden" : "");
	screen_row(u->scr, line, false);
	snprintf(line, sizeof(line), "sort %s%s%s%s  |  q quit  z zero  s sort  / filter  "
		 "arrows+Enter callers  K U", u->sort_text, u->re_text[0] ? "  filter /" : "",
		 u->re_text, u->re_text[0] ? "/" : "");
	screen_row(u->scr, line, false);
	screen_row(u->scr, u->message, false);
	screen_row(u->scr, u->graph ? "  Children      Self  Row" : "  Overhead  Row", false);
}

static double pct(double w, double all)
{
	return all > 0 ? 100.0 * w / all : 0;
}

static int draw_callers(struct top_ui *u, const struct top_line *l, int room)
{
	const char *text[TOP_CALLERS_SHOWN];
	double w[TOP_CALLERS_SHOWN];
	size_t n = top_callers(u->t, l->row, text, w, TOP_CALLERS_SHOWN);
	double base = u->graph ? l->total : l->self;
	int used = 0;
	if (!n && room > 0) {
		screen_row(u->scr, "              (no callers: record them with -g)", false);
		return 1;
	}
	struct strbuf cl = { 0 };
	for (size_t i = 0; i < n && used < room; i++, used++) {
		sb_reset(&cl);
		sb_printf(&cl, "              %6.2f%%  called from ", pct(w[i], base));
		screen_columns_put(&cl, NULL, text[i]);
		screen_row(u->scr, cl.s, false);
	}
	sb_free(&cl);
	return used;
}

static void draw_rows(struct top_ui *u, const struct top_line *lines, size_t n, double all,
		      int left)
{
	struct screen_columns c = { { 0 } };
	for (size_t i = 0; i < n; i++)
		screen_columns_measure(&c, lines[i].text);
	struct strbuf row = { 0 };
	for (size_t i = 0; i < n && left > 0; i++, left--) {
		const struct top_line *l = &lines[i];
		sb_reset(&row);
		if (u->graph)
			sb_printf(&row, "  %7.2f%%  %7.2f%%  ", pct(l->total, all), pct(l->self, all));
		else
			sb_printf(&row, "  %7.2f%%  ", pct(l->self, all));
		screen_columns_put(&row, &c, l->text);
		screen_row(u->scr, row.s, i == u->sel);
		if (u->expanded && !strcmp(u->expanded, l->text))
			left -= draw_callers(u, l, left - 1);
	}
	sb_free(&row);
}

void top_ui_draw(struct top_ui *u)
{
	int rows, cols;
	screen_begin(u->scr);
	screen_size(u->scr, &rows, &cols);
	struct top_line lines[TOP_ROWS_MAX];
	double all;
	size_t n = top_view(u->t, &u->filter, lines, MIN((size_t)rows, TOP_ROWS_MAX), &all);
	if (n && u->sel >= n)
		u->sel = n - 1;
	draw_header(u);
	draw_rows(u, lines, n, all, rows - 5);
	char status[256];
	if (u->prompt)
		snprintf(status, sizeof(status), "%s %.*s",
			 u->prompt == 's' ? "sort keys:" : "filter (regex):", (int)u->ninput, u->input);
	screen_end(u->scr, u->prompt ? status : NULL);
}

u64 top_ui_refresh(struct top_ui *u)
{
	u->last_samples = top_refresh_samples(u->t);
	if (!u->refreshes)
		u->message[0] = '\0';   /* no longer gathering the first */
	top_ui_draw(u);
	top_decay(u->t, u->zero);
	return ++u->refreshes;
}

/* ---- keys -------------------------------------------------------------------- */

static void apply_sort(struct top_ui *u, const char *text)
{
	struct hist_opts keys = { 0 };
	if (hist_parse_sort(&keys, text) < 0 || top_set_keys(u->t, &keys) < 0) {
		snprintf(u->message, sizeof(u->message), "%s", err_msg());
		return;
	}
	snprintf(u->sort_text, sizeof(u->sort_text), "%s", text);
	u->message[0] = '\0';
}

static void apply_filter(struct top_ui *u, const char *text)
{
	if (u->filter.re) {
		regfree(&u->re);
		u->filter.re = NULL;
	}
	u->re_text[0] = '\0';
	u->message[0] = '\0';
	if (!*text)
		return;
	if (regcomp(&u->re, text, REG_EXTENDED | REG_NOSUB) != 0) {
		snprintf(u->message, sizeof(u->message), "not a regular expression: %s", text);
		return;
	}
	u->filter.re = &u->re;
	snprintf(u->re_text, sizeof(u->re_text), "%s", text);
	u->sel = 0;
}

/* A key while s or / asks: Enter applies, Esc (or an arrow, which begins
 * with one) gives up, Backspace takes back. */
static void prompt_key(struct top_ui *u, int c)
{
	if (c == '\r' || c == '\n') {
		u->input[u->ninput] = '\0';
		if (u->prompt == 's')
			apply_sort(u, u->input);
		else
			apply_filter(u, u->input);
		u->prompt = 0;
	} else if (c == SCREEN_KEY_ESC || c >= SCREEN_KEY_UP) {
		u->prompt = 0;
	} else if ((c == 127 || c == 8) && u->ninput) {
		u->ninput--;
	} else if (c >= 32 && c < 127 && u->ninput < sizeof(u->input) - 1) {
		u->input[u->ninput++] = (char)c;
	}
}

/* Enter: the selected row's callers shown, or hidden again. */
static void toggle_expand(struct top_ui *u)
{
	struct top_line lines[TOP_ROWS_MAX];
	double all;
	size_t n = top_view(u->t, &u->filter, lines, TOP_ROWS_MAX, &all);
	if (u->sel >= n)
		return;
	bool same = u->expanded && !strcmp(u->expanded, lines[u->sel].text);
	free(u->expanded);
	u->expanded = same ? NULL : xstrdup(lines[u->sel].text);
}

static void start_prompt(struct top_ui *u, char kind)
{
	u->prompt = kind;
	u->ninput = 0;
}

/* One key; false for q. */
static bool key(struct top_ui *u, int k)
{
	if (u->prompt) {
		prompt_key(u, k);
		return true;
	}
	switch (k) {
	case SCREEN_KEY_UP: if (u->sel) u->sel--; break;
	case SCREEN_KEY_DOWN: u->sel++; break;
	case 'q': return false;
	case 'z': u->zero = !u->zero; break;
	case 's': start_prompt(u, 's'); break;
	case '/': start_prompt(u, '/'); break;
	case 'K': u->filter.hide_kernel = !u->filter.hide_kernel; break;
	case 'U': u->filter.hide_user = !u->filter.hide_user; break;
	case '\r': case '\n': toggle_expand(u); break;
	default: break;
	}
	return true;
}

bool top_ui_keys(struct top_ui *u)
{
	int keys[64];
	bool changed = false;
	int n;
	while ((n = screen_keys(u->scr, 0, keys, ARRAY_SIZE(keys))) > 0) {
		for (int i = 0; i < n; i++) {
			if (!key(u, keys[i]))
				return false;
		}
		changed = true;
	}
	if (changed)
		top_ui_draw(u);
	return true;
}
