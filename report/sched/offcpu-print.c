/* offcpu-print.c - the off-CPU views: a table of stacks like offcputime's
 * (and offwaketime's with wakers), a per-thread account of wall time, and
 * folded stacks for flame graphs. */
#include <stdlib.h>
#include <string.h>

#include "report/sched/sched.h"

/* ---- names --------------------------------------------------------------- */

void offcpu_frame_name(const struct rp_frame *f, struct strbuf *sb)
{
	const char *name = rp_frame_sym(f);
	if (!name) {
		const char *dso = f->dso ? sym_dso_short(f->dso) : NULL;
		if (!dso)
			sb_puts(sb, "[unknown]");
		else if (dso[0] == '[')
			sb_puts(sb, dso);
		else
			sb_printf(sb, "[%s]", dso);
		return;
	}
	/* Arguments of demangled names go; ';' separates frames in folded text. */
	size_t len = strcspn(name, "(");
	if (len == 0)
		len = strlen(name);
	while (len > 1 && name[len - 1] == ' ')
		len--;
	for (size_t i = 0; i < len; i++)
		sb_add(sb, name[i] == ';' ? ":" : &name[i], 1);
}

void offcpu_thread_frame(struct strbuf *sb, const char *comm, u32 pid, u32 tid,
			 const char *thread_fmt)
{
	size_t off = sb->len;
	sb_puts(sb, comm);
	if (thread_fmt && !strcmp(thread_fmt, "tid"))
		sb_printf(sb, "-%u/%u", pid, tid);
	else if (thread_fmt && !strcmp(thread_fmt, "pid"))
		sb_printf(sb, "-%u", pid);
	for (size_t i = off; i < sb->len; i++)
		if (sb->s[i] == ' ' || sb->s[i] == ';')
			sb->s[i] = '_';
}

/* ---- table --------------------------------------------------------------- */

static int by_total(const void *a, const void *b)
{
	const struct oc_agg *x = *(const struct oc_agg *const *)a;
	const struct oc_agg *y = *(const struct oc_agg *const *)b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The shown aggregates, smallest first (as offcputime prints: the
 * biggest land next to the prompt).  Caller frees. */
static const struct oc_agg **sorted_aggs(const struct offcpu *oc, size_t *n)
{
	size_t total = offcpu_naggs(oc);
	const struct oc_agg **v = xmalloc((total ? total : 1) * sizeof(*v));
	for (size_t i = 0; i < total; i++)
		v[i] = offcpu_agg(oc, i);
	qsort(v, total, sizeof(*v), by_total);
	*n = total;
	return v;
}

static void print_frames(const struct offcpu *oc, u32 stack, bool root_first,
			 struct strbuf *sb, FILE *out)
{
	u32 n;
	const struct rp_frame *f = offcpu_stack(oc, stack, &n);
	if (stack == OC_NONE) {
		fputs("    [no stack: the switch-out came without its sched_switch sample]\n", out);
		return;
	}
	for (u32 k = 0; k < n; k++) {
		const struct rp_frame *fr = &f[root_first ? n - 1 - k : k];
		sb_reset(sb);
		offcpu_frame_name(fr, sb);
		fprintf(out, "    %s\n", sb->s);
	}
}

static void print_marks(const struct oc_agg *a, FILE *out)
{
	fprintf(out, "        %llu us  (%u interval%s", (unsigned long long)((a->total_ns + 500) / 1000),
		a->count, a->count == 1 ? "" : "s");
	if (a->open)
		fprintf(out, ", %u open at the end", a->open);
	if (a->repaired)
		fprintf(out, ", %u repaired", a->repaired);
	fputs(")\n\n", out);
}

static void print_who(const char *label, const char *comm, u32 pid, u32 tid, FILE *out)
{
	if (pid && pid != tid)
		fprintf(out, "    %-16s %s (%u/%u)", label, comm, pid, tid);
	else
		fprintf(out, "    %-16s %s (%u)", label, comm, tid);
}

static void print_agg(const struct offcpu *oc, const struct oc_agg *a, struct strbuf *sb,
		      FILE *out)
{
	if (a->waker_stack != OC_NONE) {
		print_who("waker:", a->waker_comm, a->waker_pid, a->waker_tid, out);
		fputc('\n', out);
		print_frames(oc, a->waker_stack, true, sb, out);
		fprintf(out, "    %-16s %s\n", "--", "--");
		print_frames(oc, a->stack, false, sb, out);
		print_who("target:", a->comm, a->pid, a->tid, out);
	} else {
		print_frames(oc, a->stack, false, sb, out);
		print_who("-", a->comm, a->pid, a->tid, out);
	}
	fprintf(out, " %c\n", a->state);
	print_marks(a, out);
}

static void print_footer(const struct oc_stats *st, FILE *out)
{
	fprintf(out, "# %llu off-CPU intervals shown, %.6f s in total (of %llu of these threads)\n",
		(unsigned long long)st->shown, st->shown_ns / 1e9, (unsigned long long)st->intervals);
	fprintf(out, "# %llu open at the end (counted to the recording's last event, marked open)\n",
		(unsigned long long)st->open);
	fprintf(out, "# %llu begun before the recording (left out: their start and stack are unknown)\n",
		(unsigned long long)st->begun_before);
	fprintf(out, "# %llu repaired: switch-in missing, closed at the thread's next sign of running\n",
		(unsigned long long)st->repaired);
	if (st->no_stack)
		fprintf(out, "# %llu switch-outs had no sched_switch sample: shown without a stack\n",
			(unsigned long long)st->no_stack);
}

int offcpu_print_table(const struct offcpu *oc, FILE *out)
{
	size_t n;
	const struct oc_agg **v = sorted_aggs(oc, &n);
	struct strbuf sb = { 0 };
	for (size_t i = 0; i < n; i++)
		print_agg(oc, v[i], &sb, out);
	print_footer(offcpu_stats(oc), out);
	sb_free(&sb);
	free(v);
	if (ferror(out)) {
		err_set("writing the table failed");
		return -1;
	}
	return 0;
}

/* ---- threads ------------------------------------------------------------- */

int offcpu_print_threads(const struct offcpu *oc, FILE *out)
{
	fprintf(out, "%8s %8s %-16s %10s %10s %10s %10s %6s %5s %8s\n", "PID", "TID", "COMM",
		"WALL_MS", "ON_MS", "OFF_MS", "OTHER_MS", "INTVLS", "OPEN", "REPAIRED");
	for (size_t i = 0; i < offcpu_nthreads(oc); i++) {
		const struct oc_thread *t = offcpu_thread(oc, i);
		/* Threads only ever seen being switched in were not followed. */
		if (!t->rt && !t->forked)
			continue;
		if (!sched_filter_match(oc_filter(oc), t->pid, t->tid, offcpu_comm(t)))
			continue;
		u64 wall = t->end > t->start ? t->end - t->start : 0;
		s64 other = (s64)wall - (s64)t->on_ns - (s64)t->off_ns;
		fprintf(out, "%8u %8u %-16s %10.3f %10.3f %10.3f %10.3f %6u %5u %8u\n", t->pid,
			t->tid, offcpu_comm(t), wall / 1e6, t->on_ns / 1e6, t->off_ns / 1e6,
			other / 1e6, t->intervals, t->open, t->repaired);
	}
	if (ferror(out)) {
		err_set("writing the table failed");
		return -1;
	}
	return 0;
}

/* ---- folded -------------------------------------------------------------- */

struct fold_ctx {
	struct strbuf names;
	VEC(size_t) ends;              /* end offset of each frame's name */
	VEC(struct flame_frame) frames;
	VEC(enum flame_kind) kinds;
};

static void fold_push(struct fold_ctx *c, enum flame_kind kind)
{
	VEC_PUSH(&c->ends, c->names.len);
	VEC_PUSH(&c->kinds, kind);
}

static void fold_stack(struct fold_ctx *c, const struct offcpu *oc, u32 stack,
		       bool root_first, enum flame_kind kind)
{
	u32 n;
	const struct rp_frame *f = offcpu_stack(oc, stack, &n);
	if (stack == OC_NONE) {
		sb_puts(&c->names, "[no stack]");
		fold_push(c, kind);
		return;
	}
	for (u32 k = 0; k < n; k++) {
		offcpu_frame_name(&f[root_first ? n - 1 - k : k], &c->names);
		fold_push(c, kind);
	}
}

static int fold_one(struct fold_ctx *c, const struct offcpu *oc, const struct oc_agg *a,
		    struct flame_tree *tree, enum flame_kind kind, const char *thread_fmt)
{
	sb_reset(&c->names);
	c->ends.n = c->kinds.n = 0;
	offcpu_thread_frame(&c->names, a->comm, a->pid, a->tid, thread_fmt);
	fold_push(c, kind);
	fold_stack(c, oc, a->stack, true, kind);
	if (a->waker_stack != OC_NONE) {
		/* offwaketime's layout: the waker hangs below a "--" frame,
		 * leaf first, its comm last. */
		sb_puts(&c->names, "--");
		fold_push(c, kind);
		fold_stack(c, oc, a->waker_stack, false, kind);
		sb_puts(&c->names, a->waker_comm);
		fold_push(c, kind);
	}
	VEC_GROW(&c->frames, c->ends.n);
	size_t start = 0, n = MIN(c->ends.n, (size_t)FLAME_MAX_DEPTH);
	for (size_t i = 0; i < n; i++) {
		c->frames.v[i] = (struct flame_frame){ c->names.s + start, c->ends.v[i] - start,
						       c->kinds.v[i] };
		start = c->ends.v[i];
	}
	u64 us = (a->total_ns + 500) / 1000;
	return flame_tree_add(tree, c->frames.v, n, us, FLAME_AFTER);
}

int offcpu_fold(const struct offcpu *oc, struct flame_tree *tree, enum flame_kind kind,
		const char *thread_fmt)
{
	struct fold_ctx c = { 0 };
	int rc = 0;
	for (size_t i = 0; i < offcpu_naggs(oc) && rc == 0; i++)
		rc = fold_one(&c, oc, offcpu_agg(oc, i), tree, kind, thread_fmt);
	sb_free(&c.names);
	VEC_FREE(&c.ends);
	VEC_FREE(&c.frames);
	VEC_FREE(&c.kinds);
	return rc;
}
