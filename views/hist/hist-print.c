/* hist-print.c - the report analysis's printing: the tables hist.c
 * summed, as perf report --stdio prints them: header lines, columns
 * sized to their widest value, rows sorted for output, call trees
 * perf-graph style, and an event group as one table with a column per
 * member. */
#include "views/hist/hist-internal.h"

#include <stdlib.h>
#include <string.h>

/* A count as perf prints it: "501 ", "1K", "2M" (the unit, or a space,
 * right after the number). */
static void sample_count(char *buf, size_t cap, u64 n)
{
	char unit = ' ';
	for (const char *u = "KMG"; *u && n > 1000; u++) {
		n /= 1000;
		unit = *u;
	}
	snprintf(buf, cap, "%llu%c", (unsigned long long)n, unit);
}

void hist_report_header(FILE *out, u64 samples, u64 total, const char *event, bool events,
			u64 lost)
{
	char count[32];
	sample_count(count, sizeof(count), samples);
	fprintf(out, "#\n# Total Lost Samples: %llu\n#\n", (unsigned long long)lost);
	fprintf(out, "# Samples: %s of event%s '%s'\n", count, events ? "s" : "", event);
	fprintf(out, "# Event count (approx.): %llu\n#\n", (unsigned long long)total);
}

/* Digits of v in decimal. */
static size_t dec_len(u64 v)
{
	size_t n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* The dso column: the file's short name, as rp_dso_name() gives it. */
static const char *dso_column(const struct entry *e)
{
	return e->k.dso_name ? e->k.dso_name : rp_dso_name(NULL);
}

static const char *line_name(const struct hist *h, const struct entry *e)
{
	return e->k.line ? h->line_names.v[e->k.line - 1] : "";
}

/* The pid key's name of an entry's thread: its latest. */
static const char *thread_name(const struct hist *h, const struct entry *e)
{
	const u64 *v = u64map_get(&h->thread_names, thread_name_key(e->k.pid, e->k.tid));
	return v ? (const char *)(uintptr_t)*v : "";
}

/* Appends one key's text: what perf shows in that column. */
static void put_key(const struct hist *h, struct strbuf *sb, const struct entry *e,
		    enum hist_key_kind k)
{
	const char *comm = e->k.comm ? e->k.comm : "";
	switch (k) {
	case HK_COMM:
		sb_puts(sb, comm);
		break;
	case HK_PID:   /* perf's "%7d:%s" */
		sb_add_dec(sb, e->k.tid, 7, ' ');
		sb_add(sb, ":", 1);
		sb_puts(sb, thread_name(h, e));
		break;
	case HK_CPU:
		sb_add_dec(sb, e->k.cpu, 3, '0');
		break;
	case HK_DSO:
		sb_puts(sb, dso_column(e));
		break;
	case HK_SRCLINE:
		sb_puts(sb, line_name(h, e));
		break;
	case HK_SYM: {
		struct sym sym = { .start = e->k.sym_start, .name = e->k.sym_name };
		rp_put_sym_column(sb, e->k.sym_name ? &sym : NULL, e->k.addr,
				  rp_level(e->k.kernel));
		break;
	}
	default:
		break;
	}
}

/* The width put_key() gives, without building the text. */
static size_t key_len(const struct hist *h, const struct entry *e, enum hist_key_kind k)
{
	size_t comm = e->k.comm ? strlen(e->k.comm) : 0;
	switch (k) {
	case HK_COMM:
		return comm;
	case HK_PID:
		return MAX(dec_len(e->k.tid), 7) + 1 + strlen(thread_name(h, e));
	case HK_CPU:
		return MAX(dec_len(e->k.cpu), 3);
	case HK_DSO:
		return strlen(dso_column(e));
	case HK_SYM:
		return 4 + (e->k.sym_name ? strlen(e->k.sym_name) : e->k.addr ? 18 : 16);
	case HK_SRCLINE:
		return strlen(line_name(h, e));
	default:
		return 0;
	}
}

static const char *const key_titles[HK_MAX] = {
	"Command", "Pid:Command", "Shared Object", "Symbol", "CPU", "Source:Line",
};


static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;    /* interned: one pointer per name */
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_u64(u64 a, u64 b)
{
	return (a > b) - (a < b);
}

/* A row to sort: its sort value and its compared keys beside it, so no
 * comparison looks at the entry (a cache miss each). */
struct row {
	u64 value;
	const u64 *more;           /* a group's other members' values, or NULL */
	int nmore;
	const char *comm, *dso_name, *sym_name;
	u32 pid, tid, cpu;
	bool kernel;
	u64 sym_start, addr;
	const struct entry *e;
};

/* Descending by period; ties by the keys so output is stable.  Lines
 * (names: line_names) are compared last, from the entries: rows tie on
 * every other key only when the srcline key is in use. */
static bool row_before(const struct row *x, const struct row *y, const char *const *names)
{
	if (x->value != y->value)
		return x->value > y->value;
	for (int i = 0; i < x->nmore; i++)
		if (x->more[i] != y->more[i])
			return x->more[i] > y->more[i];
	/* Equal children: the larger self first, as perf orders them. */
	if (x->e->self != y->e->self)
		return x->e->self > y->e->self;
	/* A total order on the keys, so equal periods print in a stable
	 * order. */
	int c = cmp_str(x->comm, y->comm);
	c = c ? c : cmp_u64(x->pid, y->pid);
	c = c ? c : cmp_u64(x->tid, y->tid);
	c = c ? c : cmp_u64(x->cpu, y->cpu);
	c = c ? c : cmp_str(x->dso_name, y->dso_name);
	c = c ? c : cmp_str(x->sym_name, y->sym_name);
	c = c ? c : cmp_u64(x->sym_start, y->sym_start);
	c = c ? c : cmp_u64(x->addr, y->addr);
	c = c ? c : cmp_u64(x->kernel, y->kernel);
	if (!c && x->e->k.line != y->e->k.line)
		c = strcmp(names[x->e->k.line - 1], names[y->e->k.line - 1]);
	return c < 0;
}

/* A merge sort with the comparison inlined: tens of thousands of rows,
 * where qsort's indirect calls were most of the printing time.  The keys
 * are a total order, so any correct sort gives the same rows. */
static void sort_rows(struct row *v, size_t n, const char *const *names)
{
	struct row *tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
	struct row *src = v, *dst = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = MIN(lo + width, n), hi = MIN(lo + 2 * width, n);
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = row_before(&src[j], &src[i], names) ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		struct row *swap = src;
		src = dst;
		dst = swap;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

static void frame_label(const struct call_node *n, char *buf, size_t cap)
{
	if (n->name)
		snprintf(buf, cap, "%s", n->name);
	else
		snprintf(buf, cap, "%#llx", (unsigned long long)n->addr);
}

/* The nodes of a sibling list that show (at least GRAPH_MIN_PERCENT of
 * total, as perf's graph,0.5), largest period first; equal periods keep
 * the list's order.  Filtered before sorting: a node can have thousands
 * of children, of which a handful show. */
static int shown_children(const struct hist *h, int first, u64 total, int **order)
{
	int n = 0;
	for (int i = first; i >= 0; i = h->nodes.v[i].next_sibling)
		if (pct(h->nodes.v[i].period, total) >= GRAPH_MIN_PERCENT)
			n++;
	*order = xmalloc((size_t)(n ? n : 1) * sizeof(int));
	n = 0;
	for (int i = first; i >= 0; i = h->nodes.v[i].next_sibling)
		if (pct(h->nodes.v[i].period, total) >= GRAPH_MIN_PERCENT)
			(*order)[n++] = i;
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && h->nodes.v[(*order)[b]].period >
					 h->nodes.v[(*order)[b - 1]].period; b--) {
			int t = (*order)[b];
			(*order)[b] = (*order)[b - 1];
			(*order)[b - 1] = t;
		}
	return n;
}

/* Prints frames while the chain does not branch; returns the first
 * sibling list that does (or -1). */
static int print_straight(const struct hist *h, FILE *out, const struct call_node *node,
			  const struct strbuf *indent)
{
	char label[512];
	int child = node->first_child;
	while (child >= 0 && h->nodes.v[child].next_sibling < 0 &&
	       h->nodes.v[child].period == node->period) {
		node = &h->nodes.v[child];
		frame_label(node, label, sizeof(label));
		fprintf(out, "%s%s\n", indent->s, label);
		child = node->first_child;
	}
	return child;
}

/* Prints the subtree under the sibling list `first`, perf-graph style:
 * each branch shows its share of the total; a lone full-width chain is
 * drawn with "---". */
static void print_tree(const struct hist *h, FILE *out, int first, u64 parent,
		       u64 total, struct strbuf *indent)
{
	int *order;
	int n = shown_children(h, first, total, &order);
	for (int c = 0; c < n; c++) {
		const struct call_node *node = &h->nodes.v[order[c]];
		bool last = c + 1 == n;
		char label[512], head[64];
		frame_label(node, label, sizeof(label));
		size_t keep = indent->len;
		fprintf(out, "%s|\n", indent->s);
		if (n == 1 && node->period == parent) {
			fprintf(out, "%s---%s\n", indent->s, label);
			sb_puts(indent, "   ");
		} else {
			snprintf(head, sizeof(head), "--%.2f%%--", pct(node->period, total));
			fprintf(out, "%s%c%s%s\n", indent->s, last ? ' ' : '|', head, label);
			sb_puts(indent, last ? " " : "|");
			for (size_t i = 0; i < strlen(head); i++)
				sb_puts(indent, " ");
		}
		int child = print_straight(h, out, node, indent);
		if (child >= 0)
			print_tree(h, out, child, node->period, total, indent);
		indent->len = keep;
		indent->s[keep] = '\0';
	}
	free(order);
	if (n)
		fprintf(out, "%s\n", indent->s);
}

/* The entries of rows worth a line, sorted: pct of the first value at
 * least --percent-limit, some value not zero.  vals holds nvals values
 * per entry (a group's members; one otherwise); returns the count. */
static size_t sort_entries(struct hist *h, const struct entry **rows, size_t n,
			   const u64 *vals, int nvals, u64 total)
{
	struct row *sorted = xmalloc((n ? n : 1) * sizeof(*sorted));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = rows[i];
		const u64 *v = vals + (size_t)nvals * i;
		bool some = false;
		for (int j = 0; j < nvals; j++)
			some |= v[j] != 0;
		if (!some || pct(v[0], total) < h->o.percent_limit)
			continue;
		sorted[m++] = (struct row){ v[0], nvals > 1 ? v + 1 : NULL, nvals - 1, e->k.comm,
					    e->k.dso_name, e->k.sym_name, e->k.pid, e->k.tid,
					    e->k.cpu, e->k.kernel, e->k.sym_start, e->k.addr, e };
	}
	sort_rows(sorted, m, h->line_names.v);
	for (size_t i = 0; i < m; i++)
		rows[i] = sorted[i].e;
	free(sorted);
	return m;
}

/* The column titles over value columns of width (8 per group member)
 * and the key columns. */
static void print_titles(const struct hist *h, FILE *out, const size_t *width, int vwidth)
{
	if (h->o.children)
		fprintf(out, "# %*s  %*s", vwidth, "Children", vwidth, "Self");
	else
		fprintf(out, "# %*s", vwidth, "Overhead");
	for (int k = 0; k < h->o.nkeys; k++)
		fprintf(out, "  %-*s", (int)width[k], key_titles[h->o.keys[k]]);
	fprintf(out, "\n#");
	for (int c = 0; c < (h->o.children ? 2 : 1); c++) {
		fputs(c ? "  " : " ", out);
		for (int i = 0; i < vwidth; i++)
			fputc('.', out);
	}
	for (int k = 0; k < h->o.nkeys; k++) {
		fprintf(out, "  ");
		for (size_t i = 0; i < width[k]; i++)
			fputc('.', out);
	}
	fprintf(out, "\n#\n");
}

/* Column widths: the widest of title and values. */
static void key_widths(const struct hist *h, const struct entry *const *rows, size_t n,
		       size_t *width)
{
	for (int k = 0; k < h->o.nkeys; k++) {
		width[k] = strlen(key_titles[h->o.keys[k]]);
		for (size_t i = 0; i < n; i++)
			width[k] = MAX(width[k], key_len(h, rows[i], h->o.keys[k]));
	}
}

/* One row's keys after its values, then its call tree. */
static void print_row(const struct hist *h, FILE *out, struct strbuf *line, const struct entry *e,
		      const size_t *width, const struct entry *tree_of, u64 tree_total,
		      struct strbuf *indent)
{
	for (int k = 0; k < h->o.nkeys; k++) {
		size_t at = line->len;
		sb_add(line, "  ", 2);
		put_key(h, line, e, h->o.keys[k]);
		if (k + 1 < h->o.nkeys)  /* the last column is not padded */
			for (size_t w = line->len - at - 2; w < width[k]; w++)
				sb_add(line, " ", 1);
	}
	sb_add(line, "\n", 1);
	fwrite(line->s, 1, line->len, out);
	if (h->o.graph != HG_NONE && tree_of && tree_of->tree >= 0) {
		sb_reset(indent);
		sb_puts(indent, "            ");
		print_tree(h, out, tree_of->tree,
			   h->o.children ? tree_of->children : tree_of->self, tree_total, indent);
	}
}

static void put_pct(struct strbuf *line, u64 part, u64 total)
{
	char num[32];
	snprintf(num, sizeof(num), "%7.2f%%", pct(part, total));
	sb_puts(line, num);
}

static void print_table(struct hist *h, FILE *out, struct table *t, const char *event,
			bool events, const struct rp_summary *sum)
{
	hist_report_header(out, t->samples, t->total, event, events, sum->lost);
	size_t n = t->entries.n;
	const struct entry **rows = xmalloc((n ? n : 1) * sizeof(*rows));
	u64 *vals = xmalloc((n ? n : 1) * sizeof(*vals));
	for (size_t i = 0; i < n; i++) {
		rows[i] = &t->entries.v[i];
		vals[i] = sort_value(h, rows[i]);
	}
	n = sort_entries(h, rows, n, vals, 1, t->total);
	free(vals);
	size_t width[HK_MAX];
	key_widths(h, rows, n, width);
	print_titles(h, out, width, 8);
	struct strbuf indent = {0}, line = {0};
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = rows[i];
		/* Rows are in no order in memory: fetch a few ahead. */
		if (i + 8 < n) {
			__builtin_prefetch(rows[i + 8]);
			__builtin_prefetch((const char *)rows[i + 8] + 64);
		}
		sb_reset(&line);
		if (h->o.children) {
			sb_puts(&line, "  ");
			put_pct(&line, e->children, t->total);
		}
		sb_puts(&line, "  ");
		put_pct(&line, e->self, t->total);
		print_row(h, out, &line, e, width, e, t->total, &indent);
	}
	sb_free(&line);
	sb_free(&indent);
	free(rows);
	fprintf(out, "\n");
}

/* ---- event groups, perf's default view of them ------------------------------ */

/* A group's table: its members' tables (NULL for one without samples). */
struct group_view {
	const struct pd_group *g;
	struct table **t;
	VEC(const struct entry *) cells;  /* nr_members per row; NULL: none */
	struct u64map index;              /* key hash -> row + 1 (probing) */
	size_t nrows;
};

static struct table *used_table(struct hist *h, size_t i)
{
	return i < h->tables.n && h->tables.v[i].used ? &h->tables.v[i] : NULL;
}

/* The row of entry e's keys, made when no member had them yet. */
static size_t group_row(struct group_view *v, const struct entry *e)
{
	int nm = (int)v->g->nr_members;
	for (u64 hash = key_hash(&e->k);; hash++) {
		bool created;
		u64 *slot = u64map_slot(&v->index, hash, &created);
		if (created) {
			*slot = ++v->nrows;
			VEC_GROW(&v->cells, v->nrows * (size_t)nm);
			for (int m = 0; m < nm; m++)
				v->cells.v[(v->nrows - 1) * (size_t)nm + (size_t)m] = NULL;
			v->cells.n = v->nrows * (size_t)nm;
			return v->nrows - 1;
		}
		/* A row's keys are those of any of its cells. */
		const struct entry *const *cells = v->cells.v + (*slot - 1) * (size_t)nm;
		int m = 0;
		while (!cells[m])
			m++;
		if (key_equal(&cells[m]->k, &e->k))
			return *slot - 1;
	}
}

/* "anon group { a, b }" or "NAME { a, b }", as perf names a group. */
static void group_name(const struct hist *h, const struct pd_group *g, struct strbuf *sb)
{
	sb_puts(sb, g->name ? g->name : "anon group");
	sb_puts(sb, " { ");
	for (u32 m = 0; m < g->nr_members; m++) {
		const struct pd_attr *a = pd_reader_attr(h->reader, g->leader + m);
		if (m)
			sb_puts(sb, ", ");
		sb_puts(sb, a && a->name ? a->name : "unknown");
	}
	sb_puts(sb, " }");
}

static void print_group_rows(struct hist *h, FILE *out, struct group_view *v,
			     const struct entry **rows, size_t n, const u64 *totals)
{
	int nm = (int)v->g->nr_members;
	size_t width[HK_MAX];
	key_widths(h, rows, n, width);
	print_titles(h, out, width, 8 * nm);
	struct strbuf indent = {0}, line = {0};
	for (size_t i = 0; i < n; i++) {
		/* rows[] holds each row's first entry: find its cells. */
		const struct entry *const *cells = v->cells.v + group_row(v, rows[i]) * (size_t)nm;
		sb_reset(&line);
		for (int c = 0; c < (h->o.children ? 2 : 1); c++) {
			sb_puts(&line, "  ");
			for (int m = 0; m < nm; m++) {
				const struct entry *e = cells[m];
				bool kids = h->o.children && c == 0;
				put_pct(&line, !e ? 0 : kids ? e->children : e->self, totals[m]);
			}
		}
		/* The leader's call tree, as perf shows it. */
		print_row(h, out, &line, rows[i], width, cells[0], totals[0], &indent);
	}
	sb_free(&line);
	sb_free(&indent);
	fprintf(out, "\n");
}

/* One table for the group's events: a value column per member, rows
 * matched by their keys, sorted by the leader's values then the others'. */
static void print_group(struct hist *h, FILE *out, const struct pd_group *g,
			const struct rp_summary *sum)
{
	int nm = (int)g->nr_members;
	struct group_view v = { .g = g };
	v.t = xcalloc((size_t)nm, sizeof(*v.t));
	u64map_init(&v.index);
	u64 samples = 0, *totals = xcalloc((size_t)nm, sizeof(u64)), total = 0;
	for (int m = 0; m < nm; m++) {
		v.t[m] = used_table(h, g->leader + (size_t)m);
		if (!v.t[m])
			continue;
		samples += v.t[m]->samples;
		totals[m] = v.t[m]->total;
		total += totals[m];
		for (size_t i = 0; i < v.t[m]->entries.n; i++) {
			const struct entry *e = &v.t[m]->entries.v[i];
			size_t row = group_row(&v, e);
			v.cells.v[row * (size_t)nm + (size_t)m] = e;
		}
	}
	struct strbuf name = {0};
	group_name(h, g, &name);
	hist_report_header(out, samples, total, name.s, true, sum->lost);
	sb_free(&name);
	const struct entry **rows = xmalloc((v.nrows ? v.nrows : 1) * sizeof(*rows));
	u64 *vals = xcalloc((v.nrows ? v.nrows : 1) * (size_t)nm, sizeof(u64));
	for (size_t r = 0; r < v.nrows; r++) {
		const struct entry *const *cells = v.cells.v + r * (size_t)nm;
		rows[r] = NULL;
		for (int m = 0; m < nm; m++) {
			if (!cells[m])
				continue;
			if (!rows[r])
				rows[r] = cells[m];
			vals[r * (size_t)nm + (size_t)m] = sort_value(h, cells[m]);
		}
	}
	size_t n = sort_entries(h, rows, v.nrows, vals, nm, totals[0]);
	free(vals);
	print_group_rows(h, out, &v, rows, n, totals);
	free(rows);
	free(totals);
	free(v.t);
	VEC_FREE(&v.cells);
	u64map_free(&v.index);
}

/* The group attr i leads, when groups show together and it has members
 * the file holds. */
static const struct pd_group *group_led_by(const struct hist *h, size_t i)
{
	size_t nattrs = pd_reader_nattrs(h->reader);
	for (size_t k = 0; k < pd_reader_ngroups(h->reader); k++) {
		const struct pd_group *g = pd_reader_group(h->reader, k);
		if (g->leader == i && g->nr_members > 1 && g->nr_members <= nattrs - i)
			return g;
	}
	return NULL;
}

void hist_print(struct hist *h, FILE *out, const struct rp_summary *sum)
{
	bool any = false;
	for (size_t i = 0; i < h->tables.n; i++) {
		const struct pd_group *g = group_led_by(h, i);
		if (g && !h->o.no_group) {
			bool used = false;
			for (u32 m = 0; m < g->nr_members; m++)
				used |= used_table(h, i + m) != NULL;
			if (used)
				print_group(h, out, g, sum);
			any |= used;
			i += g->nr_members - 1;
			continue;
		}
		if (!h->tables.v[i].used)
			continue;
		const struct pd_attr *a = pd_reader_attr(h->reader, i);
		print_table(h, out, &h->tables.v[i], a ? a->name : "?", g != NULL, sum);
		any = true;
	}
	if (!any)
		fprintf(out, "#\n# Total Lost Samples: %llu\n#\n# No samples.\n",
			(unsigned long long)sum->lost);
}
