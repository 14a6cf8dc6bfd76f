/* branches.c - the report by branch (perf report's branch mode, its
 * default for a file with branch stacks): every branch entry counts once
 * (perf's pseudo period of 1), keyed by command, source file, source and
 * target symbols and cycles; then perf's branch statistics (how many
 * branches cross a 4K page or 2M area, each type's share). */
#include <stdlib.h>
#include <string.h>

#include "views/hist/hist.h"

struct br_key {
	const char *comm;                  /* interned */
	const struct sym_dso *from_dso;
	const struct sym *from_sym, *to_sym;
	u64 from_addr, to_addr;            /* file addresses, when no symbol */
	char from_level, to_level;         /* rp_branch_level */
	u32 cycles;
};

struct br_row {
	struct br_key k;
	u64 count;
};

/* One event's rows. */
struct br_event {
	VEC(struct br_row) rows;
	struct u64map index;               /* key hash -> row + 1 (probing) */
	u64 total;
};

/* Counted over every branch of a known type, as perf counts them. */
struct br_stats {
	u64 types[16], new_types[16];
	u64 cond_fwd, cond_bwd, cross_4k, cross_2m;
};

struct brtable {
	struct replay *rp;
	VEC(struct br_event) events;       /* by attr index */
	struct u64map comm_index;          /* comm hash -> comms + 1 (probing) */
	VEC(char *) comms;
	struct br_stats st;
};

static const char *intern_comm(struct brtable *b, const char *comm)
{
	u64 hash = 5381;
	for (const char *p = comm; *p; p++)
		hash = hash * 33 + (u8)*p;
	for (;; hash++) {
		bool created;
		u64 *slot = u64map_slot(&b->comm_index, hash, &created);
		if (created) {
			VEC_PUSH(&b->comms, xstrdup(comm));
			*slot = b->comms.n;
			return b->comms.v[b->comms.n - 1];
		}
		if (!strcmp(b->comms.v[*slot - 1], comm))
			return b->comms.v[*slot - 1];
	}
}

static u64 key_hash(const struct br_key *k)
{
	u64 h = hash_u64((u64)(uintptr_t)k->comm);
	h = hash_u64(h ^ (u64)(uintptr_t)k->from_dso);
	h = hash_u64(h ^ (u64)(uintptr_t)k->from_sym ^ k->from_addr);
	h = hash_u64(h ^ (u64)(uintptr_t)k->to_sym ^ k->to_addr);
	return hash_u64(h ^ k->cycles ^ ((u64)(u8)k->from_level << 40) ^ ((u64)(u8)k->to_level << 48));
}

static bool key_equal(const struct br_key *a, const struct br_key *b)
{
	return a->comm == b->comm && a->from_dso == b->from_dso && a->from_sym == b->from_sym &&
	       a->to_sym == b->to_sym && a->from_addr == b->from_addr &&
	       a->to_addr == b->to_addr && a->from_level == b->from_level &&
	       a->to_level == b->to_level && a->cycles == b->cycles;
}

static struct br_row *find_row(struct br_event *e, const struct br_key *k)
{
	for (u64 hash = key_hash(k);; hash++) {
		bool created;
		u64 *slot = u64map_slot(&e->index, hash, &created);
		if (created) {
			struct br_row r = { *k, 0 };
			VEC_PUSH(&e->rows, r);
			*slot = e->rows.n;
			return &e->rows.v[e->rows.n - 1];
		}
		if (key_equal(&e->rows.v[*slot - 1].k, k))
			return &e->rows.v[*slot - 1];
	}
}

static struct br_event *event_at(struct brtable *b, size_t i)
{
	while (b->events.n <= i) {
		struct br_event e = { .total = 0 };
		u64map_init(&e.index);
		VEC_PUSH(&b->events, e);
	}
	return &b->events.v[i];
}

static bool crosses(u64 a, u64 b, u64 size)
{
	return (a & ~(size - 1)) != (b & ~(size - 1));
}

static void count_type(struct br_stats *st, u64 from, u64 to, u64 flags)
{
	u64 type = PD_BRANCH_TYPE(flags);
	if (type == PERF_BR_UNKNOWN || !from)
		return;
	if (type == PERF_BR_EXTEND_ABI)
		st->new_types[PD_BRANCH_NEW_TYPE(flags)]++;
	else
		st->types[type]++;
	if (type == PERF_BR_COND) {
		if (to > from)
			st->cond_fwd++;
		else
			st->cond_bwd++;
	}
	if (crosses(from, to, 2u << 20))
		st->cross_2m++;
	else if (crosses(from, to, 4u << 10))
		st->cross_4k++;
}

static int br_sample(void *ctx, const struct rp_sample *s)
{
	struct brtable *b = ctx;
	if (!s->attr || !s->thread || !s->nbranches)
		return 0;
	struct br_event *e = event_at(b, (size_t)s->attr->index);
	const char *comm = intern_comm(b, s->thread->comm);
	for (int i = 0; i < s->nbranches; i++) {
		const struct rp_frame *from = &s->branches[2 * i], *to = from + 1;
		u64 flags = s->s->branches[3 * i + 2];
		struct br_key k = {
			.comm = comm, .from_dso = from->dso, .from_sym = from->sym,
			.to_sym = to->sym, .from_addr = from->sym ? 0 : from->addr,
			.to_addr = to->sym ? 0 : to->addr, .from_level = rp_branch_level(from),
			.to_level = rp_branch_level(to), .cycles = (u32)PD_BRANCH_CYCLES(flags),
		};
		find_row(e, &k)->count++;
		e->total++;
		count_type(&b->st, from->ip, to->ip, flags);
	}
	return 0;
}

struct brtable *br_new(struct replay *rp)
{
	struct brtable *b = xcalloc(1, sizeof(*b));
	b->rp = rp;
	u64map_init(&b->comm_index);
	return b;
}

void br_free(struct brtable *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->events.n; i++) {
		VEC_FREE(&b->events.v[i].rows);
		u64map_free(&b->events.v[i].index);
	}
	VEC_FREE(&b->events);
	for (size_t i = 0; i < b->comms.n; i++)
		free(b->comms.v[i]);
	VEC_FREE(&b->comms);
	u64map_free(&b->comm_index);
	free(b);
}

struct rp_sink br_sink(struct brtable *b)
{
	struct rp_sink sink = { .ctx = b, .sample = br_sample };
	return sink;
}

/* ---- printing ---------------------------------------------------------------- */

enum { COL_COMM, COL_DSO, COL_FROM, COL_TO, COL_CYCLES, NCOLS };

static const char *const titles[NCOLS] = {
	"Command", "Source Shared Object", "Source Symbol", "Target Symbol", "Basic Block Cycles",
};

static void put_col(struct strbuf *sb, const struct br_row *r, int col)
{
	switch (col) {
	case COL_COMM:
		sb_puts(sb, r->k.comm);
		break;
	case COL_DSO:
		sb_puts(sb, rp_dso_name(r->k.from_dso));
		break;
	case COL_FROM:
		rp_put_sym_column(sb, r->k.from_sym, r->k.from_addr, r->k.from_level);
		break;
	case COL_TO:
		rp_put_sym_column(sb, r->k.to_sym, r->k.to_addr, r->k.to_level);
		break;
	default:
		if (r->k.cycles)
			sb_add_dec(sb, r->k.cycles, 0, ' ');
		else
			sb_puts(sb, "-");    /* as perf: none recorded */
		break;
	}
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static u64 sym_order(const struct sym *s, u64 addr)
{
	return s ? s->start : addr;
}

/* Most branches first; ties in a fixed order of the keys. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct br_row *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	int c = cmp_str(a->k.comm, b->k.comm);
	c = c ? c : cmp_str(a->k.from_dso ? sym_dso_short(a->k.from_dso) : NULL,
			    b->k.from_dso ? sym_dso_short(b->k.from_dso) : NULL);
	u64 x[3] = { sym_order(a->k.from_sym, a->k.from_addr), sym_order(a->k.to_sym, a->k.to_addr),
		     a->k.cycles };
	u64 y[3] = { sym_order(b->k.from_sym, b->k.from_addr), sym_order(b->k.to_sym, b->k.to_addr),
		     b->k.cycles };
	for (int i = 0; !c && i < 3; i++)
		c = (x[i] > y[i]) - (x[i] < y[i]);
	return c;
}

static void print_event(FILE *out, struct br_event *e, const char *name, u64 lost)
{
	hist_report_header(out, e->total, e->total, name, false, lost);
	qsort(e->rows.v, e->rows.n, sizeof(*e->rows.v), row_cmp);
	size_t width[NCOLS];
	struct strbuf cell = {0}, line = {0};
	for (int c = 0; c < NCOLS; c++) {
		width[c] = strlen(titles[c]);
		for (size_t i = 0; i < e->rows.n; i++) {
			sb_reset(&cell);
			put_col(&cell, &e->rows.v[i], c);
			width[c] = MAX(width[c], cell.len);
		}
	}
	fprintf(out, "# Overhead");
	for (int c = 0; c < NCOLS; c++)
		fprintf(out, "  %-*s", (int)width[c], titles[c]);
	fprintf(out, "\n# ........");
	for (int c = 0; c < NCOLS; c++) {
		fputs("  ", out);
		for (size_t i = 0; i < width[c]; i++)
			fputc('.', out);
	}
	fprintf(out, "\n#\n");
	for (size_t i = 0; i < e->rows.n; i++) {
		char num[32];
		snprintf(num, sizeof(num), "  %7.2f%%",
			 100.0 * (double)e->rows.v[i].count / (double)e->total);
		sb_reset(&line);
		sb_puts(&line, num);
		for (int c = 0; c < NCOLS; c++) {
			size_t at = line.len;
			sb_add(&line, "  ", 2);
			put_col(&line, &e->rows.v[i], c);
			if (c + 1 < NCOLS)
				for (size_t w = line.len - at - 2; w < width[c]; w++)
					sb_add(&line, " ", 1);
		}
		sb_add(&line, "\n", 1);
		fwrite(line.s, 1, line.len, out);
	}
	fprintf(out, "\n");
	sb_free(&cell);
	sb_free(&line);
}

static void print_stat(FILE *out, const char *name, u64 n, u64 total)
{
	if (n)
		fprintf(out, "%8s: %5.1f%%\n", name, 100.0 * (double)n / (double)total);
}

/* perf's "Branch Statistics" block, when any branch has a known type. */
static void print_stats(FILE *out, const struct br_stats *st)
{
	static const char *const new_names[] = {
		"FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1", "ARCH_2", "ARCH_3",
		"ARCH_4", "ARCH_5",
	};
	u64 total = 0;
	for (int i = 0; i < 16; i++)
		total += st->types[i] + st->new_types[i];
	if (!total)
		return;
	fprintf(out, "\n#\n# Branch Statistics:\n#\n");
	print_stat(out, "COND_FWD", st->cond_fwd, total);
	print_stat(out, "COND_BWD", st->cond_bwd, total);
	print_stat(out, "CROSS_4K", st->cross_4k, total);
	print_stat(out, "CROSS_2M", st->cross_2m, total);
	for (int i = 1; i < 16; i++)
		print_stat(out, pd_branch_type_name((u64)i << 20), st->types[i], total);
	for (size_t i = 0; i < ARRAY_SIZE(new_names); i++)
		print_stat(out, new_names[i], st->new_types[i], total);
}

void br_print(struct brtable *b, FILE *out, const struct rp_summary *sum)
{
	struct pd_reader *r = rp_reader(b->rp);
	bool any = false;
	for (size_t i = 0; i < b->events.n; i++) {
		struct br_event *e = &b->events.v[i];
		if (!e->total)
			continue;
		const struct pd_attr *a = pd_reader_attr(r, i);
		print_event(out, e, a && a->name ? a->name : "unknown", sum->lost);
		any = true;
	}
	if (!any)
		fprintf(out, "#\n# Total Lost Samples: %llu\n#\n# No samples.\n",
			(unsigned long long)sum->lost);
	print_stats(out, &b->st);
}
