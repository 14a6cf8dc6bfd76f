/* offcpu-print.c - the off-CPU views: a table of stacks like offcputime's
 * (and offwaketime's with wakers), a per-thread account of wall time, and
 * folded stacks for flame graphs. */
#include <stdlib.h>
#include <string.h>

#include "views/sched/sched.h"

/* Frames are named by the folding rule of replay/frames.c, as collapse
 * names them: the table shows the names the folded stacks carry. */

enum rp_fold_thread offcpu_thread_show(const char *thread_fmt)
{
	if (thread_fmt && !strcmp(thread_fmt, "tid"))
		return RP_FOLD_TID;
	if (thread_fmt && !strcmp(thread_fmt, "pid"))
		return RP_FOLD_PID;
	return RP_FOLD_COMM;
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

static void print_frames(const struct offcpu *oc, u32 stack, bool root_first, bool java,
			 struct rp_fold *fo, struct strbuf *sb, FILE *out)
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
		rp_fold_name(sb, fo, fr, java);
		fprintf(out, "    %s\n", sb->s ? sb->s : "");
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

static void print_agg(const struct offcpu *oc, const struct oc_agg *a, struct rp_fold *fo,
		      struct strbuf *sb, FILE *out)
{
	bool java = rp_fold_java(a->comm);
	if (a->waker_stack != OC_NONE) {
		print_who("waker:", a->waker_comm, a->waker_pid, a->waker_tid, out);
		fputc('\n', out);
		print_frames(oc, a->waker_stack, true, rp_fold_java(a->waker_comm), fo, sb, out);
		fprintf(out, "    %-16s %s\n", "--", "--");
		print_frames(oc, a->stack, false, java, fo, sb, out);
		print_who("target:", a->comm, a->pid, a->tid, out);
	} else {
		print_frames(oc, a->stack, false, java, fo, sb, out);
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
	struct rp_fold fo = { 0 };
	for (size_t i = 0; i < n; i++)
		print_agg(oc, v[i], &fo, &sb, out);
	print_footer(offcpu_stats(oc), out);
	sb_free(&sb);
	rp_fold_free(&fo);
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
		if (!offcpu_thread_shown(oc, t))
			continue;
		u64 wall = offcpu_thread_wall(oc, t);
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

static void fold_stack(struct offcpu_folder *c, const struct offcpu *oc, u32 stack,
		       bool root_first, bool java)
{
	u32 n;
	const struct rp_frame *f = offcpu_stack(oc, stack, &n);
	if (stack == OC_NONE) {
		rp_fold_literal(&c->fold, "[no stack]", RP_FRAME_USER);
		return;
	}
	for (u32 k = 0; k < n; k++)
		rp_fold_frame(&c->fold, &f[root_first ? n - 1 - k : k], java);
}

int offcpu_folder_add(struct offcpu_folder *c, struct flame_tree *tree, enum flame_kind kind,
		      u64 count)
{
	const struct rp_fold *fo = &c->fold;
	size_t n = MIN(fo->parts.n, (size_t)FLAME_MAX_DEPTH);
	VEC_GROW(&c->frames, n);
	for (size_t i = 0; i < n; i++) {
		const struct rp_fold_part *p = &fo->parts.v[i];
		/* The view's kind, but for the later parts of an inline chain. */
		enum flame_kind k = p->kind == RP_FRAME_INLINED ? FLAME_INLINED : kind;
		c->frames.v[i] = (struct flame_frame){ rp_fold_at(fo, i), p->len, k };
	}
	return flame_tree_add(tree, c->frames.v, n, count, FLAME_AFTER);
}

void offcpu_folder_free(struct offcpu_folder *c)
{
	rp_fold_free(&c->fold);
	VEC_FREE(&c->frames);
}

static int fold_one(struct offcpu_folder *c, const struct offcpu *oc, const struct oc_agg *a,
		    struct flame_tree *tree, enum flame_kind kind, const char *thread_fmt)
{
	rp_fold_reset(&c->fold);
	rp_fold_process(&c->fold, a->comm, a->pid, a->tid, offcpu_thread_show(thread_fmt));
	fold_stack(c, oc, a->stack, true, rp_fold_java(a->comm));
	if (a->waker_stack != OC_NONE) {
		/* offwaketime's layout: the waker hangs below a "--" frame,
		 * leaf first, its comm last. */
		rp_fold_literal(&c->fold, "--", RP_FRAME_USER);
		fold_stack(c, oc, a->waker_stack, false, rp_fold_java(a->waker_comm));
		rp_fold_literal(&c->fold, a->waker_comm, RP_FRAME_USER);
	}
	return offcpu_folder_add(c, tree, kind, (a->total_ns + 500) / 1000);
}

int offcpu_fold(const struct offcpu *oc, struct flame_tree *tree, enum flame_kind kind,
		const char *thread_fmt)
{
	struct offcpu_folder c = { 0 };
	int rc = 0;
	for (size_t i = 0; i < offcpu_naggs(oc) && rc == 0; i++)
		rc = fold_one(&c, oc, offcpu_agg(oc, i), tree, kind, thread_fmt);
	offcpu_folder_free(&c);
	return rc;
}
