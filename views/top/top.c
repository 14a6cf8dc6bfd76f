/* top.c - ember top's table: samples summed into rows by report's sort
 * keys (srcline aside), each with the callers it was called from, decayed
 * (or zeroed) at each refresh, and rows that decayed away dropped, so a
 * long session keeps only what is hot. */
#include <stdlib.h>
#include <string.h>

#include "views/top/top.h"

#define TOP_CALLERS_MAX 32         /* callers kept per row */
#define TOP_DECAY (7.0 / 8.0)      /* what a refresh leaves of a weight */

struct top_caller {
	char *text;
	double w;
};

struct top_row {
	char *text;
	u64 hash;
	double self, total;
	bool kernel;
	u64 seen;                  /* the last sample that counted it */
	VEC(struct top_caller) callers;
};

struct top_table {
	struct hist_opts keys;
	bool children;
	VEC(struct top_row) rows;
	struct u64map index;       /* text hash -> row index + 1 (probing) */
	struct strbuf sb;
	u64 serial;                /* samples added */
	u64 refresh_samples;       /* since the last refresh */
	double drop_below;         /* a weight this small is gone */
};

struct top_table *top_new(const struct hist_opts *keys, bool children)
{
	struct top_table *t = xcalloc(1, sizeof(*t));
	t->keys = *keys;
	t->children = children;
	u64map_init(&t->index);
	return t;
}

static void free_rows(struct top_table *t)
{
	for (size_t i = 0; i < t->rows.n; i++) {
		struct top_row *r = &t->rows.v[i];
		for (size_t j = 0; j < r->callers.n; j++)
			free(r->callers.v[j].text);
		VEC_FREE(&r->callers);
		free(r->text);
	}
	t->rows.n = 0;
}

void top_free(struct top_table *t)
{
	if (!t)
		return;
	free_rows(t);
	VEC_FREE(&t->rows);
	u64map_free(&t->index);
	sb_free(&t->sb);
	free(t);
}

int top_set_keys(struct top_table *t, const struct hist_opts *keys)
{
	for (int i = 0; i < keys->nkeys; i++)
		if (keys->keys[i] == HK_SRCLINE) {
			err_set("top sorts by comm, pid, dso, sym and cpu (not srcline)");
			return -1;
		}
	t->keys = *keys;
	top_clear(t);
	return 0;
}

void top_clear(struct top_table *t)
{
	free_rows(t);
	u64map_free(&t->index);
	u64map_init(&t->index);
}

/* A frame's row text: the sort keys' columns, as report shows them. */
static const char *row_text(struct top_table *t, const struct rp_sample *s,
			    const struct rp_frame *f)
{
	struct strbuf *sb = &t->sb;
	sb_reset(sb);
	const struct rp_thread *th = s->thread;
	for (int i = 0; i < t->keys.nkeys; i++) {
		if (i)
			sb_add(sb, "\t", 1);
		switch (t->keys.keys[i]) {
		case HK_COMM: sb_puts(sb, th ? th->comm : "[unknown]"); break;
		/* perf's pid key: the thread, "%7d:%s". */
		case HK_PID: sb_printf(sb, "%7u:%s", s->s->tid, th ? th->comm : ""); break;
		case HK_CPU: sb_printf(sb, "%03u", s->s->cpu); break;
		case HK_DSO: sb_puts(sb, rp_dso_name(f->dso)); break;
		case HK_SYM: rp_put_sym_column(sb, f->sym, f->addr, rp_level(f->kernel)); break;
		default: break;
		}
	}
	return sb->s ? sb->s : "";
}

static u64 text_hash(const char *s)
{
	u64 h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (u8)*s) * 1099511628211ull;
	return h;
}

static struct top_row *row_get(struct top_table *t, const char *text, bool kernel)
{
	u64 hash = text_hash(text);
	for (u64 probe = hash;; probe++) {
		bool created;
		u64 *slot = u64map_slot(&t->index, probe, &created);
		if (created) {
			struct top_row r = { .text = xstrdup(text), .hash = hash, .kernel = kernel };
			VEC_PUSH(&t->rows, r);
			*slot = t->rows.n;
			return &t->rows.v[t->rows.n - 1];
		}
		struct top_row *r = &t->rows.v[*slot - 1];
		if (r->hash == hash && !strcmp(r->text, text))
			return r;
	}
}

static void add_caller(struct top_row *r, const char *text, double w)
{
	for (size_t i = 0; i < r->callers.n; i++)
		if (!strcmp(r->callers.v[i].text, text)) {
			r->callers.v[i].w += w;
			return;
		}
	if (r->callers.n < TOP_CALLERS_MAX) {
		struct top_caller c = { xstrdup(text), w };
		VEC_PUSH(&r->callers, c);
	}
}

/* The caller's text of frame i, into buf (the row text buffer is reused). */
static void caller_text(struct top_table *t, const struct rp_sample *s, int i, char *buf,
			size_t cap)
{
	snprintf(buf, cap, "%s", row_text(t, s, &s->frames[i + 1]));
}

void top_add(struct top_table *t, const struct rp_sample *s)
{
	if (!s->nframes)
		return;
	double w = (double)(s->s->period ? s->s->period : 1);
	if (t->drop_below == 0 || w / 64 < t->drop_below)
		t->drop_below = w / 64;
	t->serial++;
	t->refresh_samples++;
	int n = t->children ? s->nframes : 1;
	char caller[512];
	for (int i = 0; i < n; i++) {
		const struct rp_frame *f = &s->frames[i];
		struct top_row *r = row_get(t, row_text(t, s, f), f->kernel);
		if (r->seen == t->serial)
			continue;          /* recursion: a row counts once a sample */
		r->seen = t->serial;
		r->total += w;
		if (i == 0)
			r->self += w;
		if (i + 1 < s->nframes) {
			caller_text(t, s, i, caller, sizeof(caller));
			add_caller(r, caller, w);
		}
	}
}

/* Rows left after a refresh are indexed anew. */
static void reindex(struct top_table *t)
{
	u64map_free(&t->index);
	u64map_init(&t->index);
	for (size_t i = 0; i < t->rows.n; i++) {
		for (u64 probe = t->rows.v[i].hash;; probe++) {
			bool created;
			u64 *slot = u64map_slot(&t->index, probe, &created);
			if (created) {
				*slot = i + 1;
				break;
			}
		}
	}
}

void top_decay(struct top_table *t, bool zero)
{
	t->refresh_samples = 0;
	if (zero) {
		top_clear(t);
		return;
	}
	size_t kept = 0;
	for (size_t i = 0; i < t->rows.n; i++) {
		struct top_row *r = &t->rows.v[i];
		r->self *= TOP_DECAY;
		r->total *= TOP_DECAY;
		for (size_t j = 0; j < r->callers.n; j++)
			r->callers.v[j].w *= TOP_DECAY;
		if (r->total < t->drop_below) {
			for (size_t j = 0; j < r->callers.n; j++)
				free(r->callers.v[j].text);
			VEC_FREE(&r->callers);
			free(r->text);
			continue;
		}
		t->rows.v[kept++] = *r;
	}
	t->rows.n = kept;
	reindex(t);
}

u64 top_refresh_samples(const struct top_table *t)
{
	return t->refresh_samples;
}

/* ---- reading the table ---------------------------------------------------- */

static int by_weight_desc(const void *a, const void *b, void *ctx)
{
	const struct top_table *t = ctx;
	const struct top_row *x = &t->rows.v[*(const size_t *)a];
	const struct top_row *y = &t->rows.v[*(const size_t *)b];
	double wx = t->children ? x->total : x->self, wy = t->children ? y->total : y->self;
	if (wx != wy)
		return wx < wy ? 1 : -1;
	return strcmp(x->text, y->text);
}

size_t top_view(const struct top_table *t, const struct top_filter *f, struct top_line *out,
		size_t cap, double *all)
{
	size_t *order = xmalloc((t->rows.n + 1) * sizeof(*order));
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < t->rows.n; i++) {
		const struct top_row *r = &t->rows.v[i];
		sum += r->self;
		if ((f->hide_kernel && r->kernel) || (f->hide_user && !r->kernel))
			continue;
		if (f->re && regexec(f->re, r->text, 0, NULL, 0) != 0)
			continue;
		order[n++] = i;
	}
	qsort_r(order, n, sizeof(*order), by_weight_desc, (void *)t);
	size_t k = 0;
	for (; k < n && k < cap; k++) {
		const struct top_row *r = &t->rows.v[order[k]];
		out[k] = (struct top_line){ r->text, r->self, r->total, r->kernel, order[k] };
	}
	free(order);
	*all = sum;
	return k;
}

static int caller_desc(const void *a, const void *b)
{
	const struct top_caller *x = a, *y = b;
	return x->w < y->w ? 1 : x->w > y->w ? -1 : strcmp(x->text, y->text);
}

size_t top_callers(struct top_table *t, size_t row, const char **text, double *w, size_t cap)
{
	if (row >= t->rows.n)
		return 0;
	struct top_row *r = &t->rows.v[row];
	qsort(r->callers.v, r->callers.n, sizeof(*r->callers.v), caller_desc);
	size_t k = 0;
	for (; k < r->callers.n && k < cap; k++) {
		text[k] = r->callers.v[k].text;
		w[k] = r->callers.v[k].w;
	}
	return k;
}
