/* speedscope.c - the profile in speedscope's file format (JSON, schema
 * https://www.speedscope.app/file-format-schema.json): the functions as
 * shared frames, one `sampled` profile per thread (or process), each
 * unique stack once, root first, weighed by its value. */
#include <stdlib.h>
#include <string.h>

#include "export/export-internal.h"

/* s as a JSON string. */
static void put_json_string(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	sb_add(sb, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			sb_add(sb, esc, 2);
		} else if (c < 0x20) {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			sb_add(sb, esc, 6);
		} else {
			sb_add(sb, (const char *)&c, 1);
		}
	}
	sb_add(sb, "\"", 1);
}

static void put_frames(struct strbuf *sb, const struct ex_profile *p)
{
	sb_puts(sb, "\"shared\":{\"frames\":[");
	for (size_t i = 0; i < p->funcs.n; i++) {
		const struct ex_func *f = &p->funcs.v[i];
		sb_puts(sb, i ? ",{\"name\":" : "{\"name\":");
		put_json_string(sb, ex_str(p, f->name));
		if (f->file) {
			sb_puts(sb, ",\"file\":");
			put_json_string(sb, ex_str(p, f->file));
			if (f->start_line)
				sb_printf(sb, ",\"line\":%lld", (long long)f->start_line);
		}
		sb_puts(sb, "}");
	}
	sb_puts(sb, "]}");
}

/* Each thread's group: itself, or the first thread of its pid. */
static u32 *groups(const struct ex_profile *p)
{
	u32 *g = xcalloc(p->threads.n + 1, sizeof(*g));
	for (size_t i = 0; i < p->threads.n; i++) {
		g[i] = (u32)i;
		if (!p->o.per_process)
			continue;
		for (size_t k = 0; k < i; k++)
			if (p->threads.v[k].pid == p->threads.v[i].pid) {
				g[i] = g[k];
				break;
			}
	}
	return g;
}

/* A stack root first: each location's lines from the last (the machine
 * frame's function) to the first (the innermost inlined one). */
static void put_stack(struct strbuf *sb, const struct ex_profile *p, const struct ex_sample *s)
{
	bool first = true;
	sb_puts(sb, "[");
	for (u32 k = s->n; k-- > 0;) {
		const struct ex_loc *l = &p->locs.v[p->stack_locs.v[s->first + k]];
		for (u32 j = l->nlines; j-- > 0;) {
			sb_printf(sb, first ? "%u" : ",%u", p->lines.v[l->first_line + j].func);
			first = false;
		}
	}
	sb_puts(sb, "]");
}

static void put_profile_name(struct strbuf *sb, const struct ex_profile *p, u32 thread)
{
	const struct ex_thread *t = &p->threads.v[thread];
	struct strbuf name = { 0 };
	if (p->o.per_process)
		sb_printf(&name, "%s (pid %u)", ex_str(p, t->comm), t->pid);
	else
		sb_printf(&name, "%s (pid %u, tid %u)", ex_str(p, t->comm), t->pid, t->tid);
	put_json_string(sb, name.s);
	sb_free(&name);
}

/* One group's profile: its samples are order[from, to). */
static void put_profile(struct strbuf *sb, const struct ex_profile *p, u32 group,
			const u32 *order, size_t from, size_t to, const char *unit)
{
	u64 total = 0;
	for (size_t i = from; i < to; i++)
		total += p->samples_v.v[order[i]].value;
	sb_puts(sb, "{\"type\":\"sampled\",\"name\":");
	put_profile_name(sb, p, group);
	sb_printf(sb, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
		  unit, (unsigned long long)total);
	for (size_t i = from; i < to; i++) {
		if (i > from)
			sb_puts(sb, ",");
		put_stack(sb, p, &p->samples_v.v[order[i]]);
	}
	sb_puts(sb, "],\"weights\":[");
	for (size_t i = from; i < to; i++)
		sb_printf(sb, i > from ? ",%llu" : "%llu",
			  (unsigned long long)p->samples_v.v[order[i]].value);
	sb_puts(sb, "]}");
}

/* The samples' indexes by group (a counting sort): group k's are
 * order[start[k], start[k + 1]). */
static u32 *order_by_group(const struct ex_profile *p, const u32 *g, size_t **start)
{
	size_t n = p->samples_v.n, nt = p->threads.n;
	size_t *at = xcalloc(nt + 2, sizeof(*at));
	for (size_t i = 0; i < n; i++)
		if (p->samples_v.v[i].value)
			at[g[p->samples_v.v[i].thread] + 1]++;
	for (size_t k = 1; k <= nt + 1; k++)
		at[k] += at[k - 1];
	u32 *order = xcalloc(n + 1, sizeof(*order));
	size_t *fill = xcalloc(nt + 1, sizeof(*fill));
	memcpy(fill, at, (nt + 1) * sizeof(*fill));
	for (size_t i = 0; i < n; i++)
		if (p->samples_v.v[i].value)   /* speedscope refuses weight 0 */
			order[fill[g[p->samples_v.v[i].thread]]++] = (u32)i;
	free(fill);
	*start = at;
	return order;
}

int ex_speedscope_write(const struct ex_profile *p, const char *name, FILE *out)
{
	const char *unit;
	ex_value_type(p, &unit);
	/* speedscope knows time and bytes; counts are "none". */
	if (strcmp(unit, "nanoseconds"))
		unit = "none";
	struct strbuf sb = { 0 };
	sb_puts(&sb, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",");
	put_frames(&sb, p);
	sb_puts(&sb, ",\"profiles\":[");
	u32 *g = groups(p);
	size_t *start;
	u32 *order = order_by_group(p, g, &start);
	bool first = true;
	for (size_t i = 0; i < p->threads.n; i++) {
		if (g[i] != i || start[i] == start[i + 1])
			continue;
		if (!first)
			sb_puts(&sb, ",");
		put_profile(&sb, p, (u32)i, order, start[i], start[i + 1], unit);
		first = false;
	}
	free(order);
	free(start);
	free(g);
	sb_puts(&sb, "],\"name\":");
	put_json_string(&sb, name ? name : "ember");
	sb_puts(&sb, ",\"activeProfileIndex\":0,\"exporter\":\"ember\"}\n");
	size_t put = fwrite(sb.s, 1, sb.len, out);
	bool ok = put == sb.len && fflush(out) == 0;
	sb_free(&sb);
	if (!ok) {
		err_set("writing the profile failed");
		return -1;
	}
	return 0;
}
