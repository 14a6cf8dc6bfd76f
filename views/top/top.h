/* top.h - ember top's table (top.c): rows by report's sort keys (srcline
 * aside), self and (children) inclusive weights in sample periods, the
 * callers of each; at each refresh weights decay by 7/8 (or are zeroed)
 * and rows that decayed away are dropped.  The live view (cmd-top.c)
 * feeds it samples; ui.c draws what top_view returns on screen/'s full
 * screen and handles top's keys. */
#ifndef EMBER_VIEWS_TOP_H
#define EMBER_VIEWS_TOP_H

#include <regex.h>

#include "replay/replay.h"
#include "views/hist/hist.h"

struct top_table;
struct top_table *top_new(const struct hist_opts *keys, bool children);
void top_free(struct top_table *t);
/* New keys empty the table; -1 with err_set() for srcline. */
int top_set_keys(struct top_table *t, const struct hist_opts *keys);
void top_clear(struct top_table *t);
void top_add(struct top_table *t, const struct rp_sample *s);
void top_decay(struct top_table *t, bool zero);
u64 top_refresh_samples(const struct top_table *t);   /* since the last decay */

/* Which rows a view shows. */
struct top_filter {
	bool hide_kernel, hide_user;
	const regex_t *re;         /* rows whose text matches, or NULL */
};
struct top_line {
	const char *text;          /* the keys' columns, tab-separated; valid
				      until the table changes */
	double self, total;
	bool kernel;
	size_t row;                /* for top_callers */
};
/* The hottest rows shown (by total with children, else self), at most
 * cap; *all is the sum of every row's self weight (100%). */
size_t top_view(const struct top_table *t, const struct top_filter *f, struct top_line *out,
		size_t cap, double *all);
/* A row's callers, heaviest first: their texts and weights, at most cap. */
size_t top_callers(struct top_table *t, size_t row, const char **text, double *w, size_t cap);


/* ---- top's full screen (ui.c) ---- */
struct screen;
struct top_ui;
/* What the header says of the live path, read when a frame is drawn. */
struct top_ui_live {
	u64 lost;                  /* samples lost in all */
	u64 backlog;               /* bytes recorded, not read yet */
};
struct top_ui_opts {
	const char *sort;          /* the sort keys' text, as the header shows it */
	double delay;              /* -d, for the first message */
	bool zero, graph, hide_kernel, hide_user;  /* -z, -g, -K, -U at the start */
	void (*live)(void *ctx, struct top_ui_live *out);   /* the counts now */
	void *ctx;
};
/* The screen of table t on scr (both the caller's, kept for the ui's life). */
struct top_ui *top_ui_new(struct top_table *t, struct screen *scr, const struct top_ui_opts *o);
void top_ui_free(struct top_ui *u);
void top_ui_draw(struct top_ui *u);
/* A refresh's end: drawn, then the table decayed (or zeroed, as z says);
 * the count of refreshes so far. */
u64 top_ui_refresh(struct top_ui *u);
/* The keys typed since, handled (drawn again when any came): false when
 * q asks to quit. */
bool top_ui_keys(struct top_ui *u);

#endif
