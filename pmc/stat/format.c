/* format.c - one output line of `ember stat` in perf stat's layouts: the
 * aligned text table, CSV with a chosen separator (-x), and JSON objects,
 * one per line (--json).  Writes to a string buffer; the command prints. */
#include <stdio.h>
#include <string.h>

#include "pmc/stat/stat.h"

static const char *state_text(enum pmc_state s)
{
	return s == PMC_NOT_SUPPORTED ? "<not supported>" : "<not counted>";
}

/* The count as perf shows it: clocks in msec with two decimals. */
static void count_text(char *buf, size_t n, const struct pmc_out_line *l)
{
	if (l->state != PMC_COUNTED)
		snprintf(buf, n, "%s", state_text(l->state));
	else if (l->clock)
		snprintf(buf, n, "%.2f", l->value / 1e6);
	else
		snprintf(buf, n, "%.0f", l->value);
}

static void text_prefix(struct strbuf *sb, const struct pmc_out_line *l)
{
	if (l->interval)
		sb_printf(sb, "%16.9f ", l->ts);
	if (!l->agg)
		return;
	if (l->agg_kind && !strcmp(l->agg_kind, "node"))
		sb_printf(sb, "%-6s%5d ", l->agg, l->agg_cpus);
	else if (l->agg_kind && !strcmp(l->agg_kind, "thread"))
		sb_printf(sb, "%20s ", l->agg);
	else
		sb_printf(sb, "%-10s ", l->agg);
}

static void text_metric(struct strbuf *sb, const struct pmc_metric *m)
{
	if (m->percent)
		sb_printf(sb, " # %7.2f%% %-22s", m->value, m->unit);
	else
		sb_printf(sb, " # %8.3f %-23s", m->value, m->unit);
}

static void format_text(struct strbuf *sb, const struct pmc_out_line *l)
{
	char count[64];
	count_text(count, sizeof(count), l);
	text_prefix(sb, l);
	sb_printf(sb, "%18s %-4s %-32s", count, l->clock ? "msec" : "",
		  l->event);
	bool tail = l->metric.ok || (l->repeat && l->noise_pct > 0) ||
		    (l->state == PMC_COUNTED && l->pcnt < 100.0);
	if (l->metric.ok)
		text_metric(sb, &l->metric);
	else if (tail)
		sb_printf(sb, "%35s", "");
	if (l->repeat && l->noise_pct > 0)
		sb_printf(sb, "  ( +- %5.2f%% )", l->noise_pct);
	if (l->state == PMC_COUNTED && l->pcnt < 100.0)
		sb_printf(sb, "  (%.2f%%)", l->pcnt);
	/* No trailing blanks on a line that ends at the event name. */
	while (sb->len && sb->s[sb->len - 1] == ' ')
		sb->s[--sb->len] = '\0';
	sb_puts(sb, "\n");
}

static void format_csv(struct strbuf *sb, const char *sep,
		       const struct pmc_out_line *l)
{
	char count[64];
	count_text(count, sizeof(count), l);
	if (l->interval)
		sb_printf(sb, "%.9f%s", l->ts, sep);
	if (l->agg) {
		sb_printf(sb, "%s%s", l->agg, sep);
		if (l->agg_kind && !strcmp(l->agg_kind, "node"))
			sb_printf(sb, "%d%s", l->agg_cpus, sep);
	}
	sb_printf(sb, "%s%s%s%s%s%s", count, sep, l->clock ? "msec" : "", sep,
		  l->event, sep);
	if (l->repeat)
		sb_printf(sb, "%.2f%%%s", l->noise_pct, sep);
	sb_printf(sb, "%llu%s%.2f%s", (unsigned long long)l->running, sep,
		  l->pcnt, sep);
	if (l->metric.ok)
		sb_printf(sb, l->metric.percent ? "%.2f%s%s" : "%.3f%s%s",
			  l->metric.value, sep, l->metric.unit);
	else
		sb_puts(sb, sep);
	sb_puts(sb, "\n");
}

static void json_string(struct strbuf *sb, const char *s)
{
	sb_puts(sb, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_printf(sb, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			sb_printf(sb, "\\u%04x", *s);
		else
			sb_add(sb, s, 1);
	}
	sb_puts(sb, "\"");
}

static void format_json(struct strbuf *sb, const struct pmc_out_line *l)
{
	sb_puts(sb, "{");
	if (l->interval)
		sb_printf(sb, "\"interval\" : %.9f, ", l->ts);
	if (l->agg) {
		sb_printf(sb, "\"%s\" : ", l->agg_kind ? l->agg_kind : "cpu");
		json_string(sb, l->agg);
		sb_puts(sb, ", ");
		if (l->agg_kind && !strcmp(l->agg_kind, "node"))
			sb_printf(sb, "\"cpus\" : %d, ", l->agg_cpus);
	}
	char count[64];
	if (l->state == PMC_COUNTED)
		snprintf(count, sizeof(count), "%f",
			 l->clock ? l->value / 1e6 : l->value);
	else
		snprintf(count, sizeof(count), "%s", state_text(l->state));
	sb_printf(sb, "\"counter-value\" : \"%s\", \"unit\" : \"%s\", "
		  "\"event\" : ", count, l->clock ? "msec" : "");
	json_string(sb, l->event);
	if (l->repeat)
		sb_printf(sb, ", \"variance\" : %.2f", l->noise_pct);
	sb_printf(sb, ", \"event-runtime\" : %llu, \"pcnt-running\" : %.2f",
		  (unsigned long long)l->running, l->pcnt);
	if (l->metric.ok) {
		sb_printf(sb, ", \"metric-value\" : %f, \"metric-unit\" : ",
			  l->metric.value);
		json_string(sb, l->metric.unit);
	}
	sb_puts(sb, "}\n");
}

void pmc_format_line(struct strbuf *sb, enum pmc_out_mode mode,
		     const char *sep, const struct pmc_out_line *l)
{
	if (mode == PMC_OUT_CSV)
		format_csv(sb, sep, l);
	else if (mode == PMC_OUT_JSON)
		format_json(sb, l);
	else
		format_text(sb, l);
}

void pmc_format_interval_header(struct strbuf *sb, const char *agg_title)
{
	if (agg_title)
		sb_printf(sb, "#           time %-10s %18s unit events\n",
			  agg_title, "counts");
	else
		sb_printf(sb, "#           time %18s unit events\n", "counts");
}

static int tlb_ncols(bool ipc_only)
{
	return ipc_only ? PMC_C_DTLB_WALKS : PMC_C_NCOLS;
}

/* Widths of the text columns; IPC and the shares are narrower. */
static int tlb_width(int c)
{
	return c == PMC_C_IPC || c == PMC_C_DTLB_PCT || c == PMC_C_ITLB_PCT ? 7
									    : 11;
}

void pmc_format_tlb_header(struct strbuf *sb, enum pmc_out_mode mode,
			   const char *sep, bool ipc_only, bool interval)
{
	if (mode == PMC_OUT_JSON)
		return;   /* each JSON object names its fields */
	bool text = mode == PMC_OUT_TEXT;
	if (interval)
		sb_printf(sb, text ? "%16s " : "%s%s", "TIME", text ? "" : sep);
	for (int c = 0; c < tlb_ncols(ipc_only); c++) {
		if (text)
			sb_printf(sb, "%*s", tlb_width(c), pmc_tcol_name(c));
		else
			sb_printf(sb, "%s%s", c ? sep : "", pmc_tcol_name(c));
	}
	sb_puts(sb, "\n");
}

static void tlb_value(struct strbuf *sb, const struct pmc_tlb_row *row, int c,
		      int width)
{
	bool decimals = c == PMC_C_IPC || c == PMC_C_DTLB_PCT ||
			c == PMC_C_ITLB_PCT;
	if (!row->have[c])
		sb_printf(sb, "%*s", width, "-");
	else
		sb_printf(sb, decimals ? "%*.2f" : "%*.0f", width, row->v[c]);
}

static void tlb_json(struct strbuf *sb, const struct pmc_tlb_row *row,
		     bool ipc_only, bool interval, double ts)
{
	sb_puts(sb, "{");
	if (interval)
		sb_printf(sb, "\"interval\" : %.9f, ", ts);
	for (int c = 0; c < tlb_ncols(ipc_only); c++) {
		sb_printf(sb, "%s\"%s\" : ", c ? ", " : "", pmc_tcol_name(c));
		if (row->have[c])
			sb_printf(sb, "%f", row->v[c]);
		else
			sb_puts(sb, "null");
	}
	sb_puts(sb, "}\n");
}

void pmc_format_tlb_row(struct strbuf *sb, enum pmc_out_mode mode,
			const char *sep, const struct pmc_tlb_row *row,
			bool ipc_only, bool interval, double ts)
{
	if (mode == PMC_OUT_JSON) {
		tlb_json(sb, row, ipc_only, interval, ts);
		return;
	}
	bool text = mode == PMC_OUT_TEXT;
	if (interval)
		sb_printf(sb, text ? "%16.9f " : "%.9f%s", ts, text ? "" : sep);
	for (int c = 0; c < tlb_ncols(ipc_only); c++) {
		if (!text && c)
			sb_puts(sb, sep);
		tlb_value(sb, row, c, text ? tlb_width(c) : 0);
	}
	sb_puts(sb, "\n");
}
