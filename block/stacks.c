/* stacks.c - who caused the I/O: the user and kernel stacks of the
 * tasks that queued each I/O (recorded with 'ember record --block -g'),
 * interned once per process and stack, and the views that weigh them by
 * I/O count and bytes: a table of the top stacks and folded lines. */
#include <stdlib.h>
#include <string.h>

#include "block/block.h"
#include "flamegraph/flamegraph.h"
#include "replay/replay.h"

/* The stacks, and each stored frame's name (offsets into names, one per
 * frame of set.frames): the views print after the replay has closed, when
 * the frames' symbols are gone. */
struct bio_stacks {
	struct stackset set;
	VEC(u32) name_at;
	struct strbuf names;      /* NUL-separated frame names */
	struct rp_fold fold;      /* scratch for naming */
};

struct bio_stacks *bio_stacks_new(void)
{
	struct bio_stacks *st = xcalloc(1, sizeof(*st));
	stackset_init(&st->set);
	return st;
}

void bio_stacks_free(struct bio_stacks *st)
{
	if (!st)
		return;
	stackset_free(&st->set);
	VEC_FREE(&st->name_at);
	sb_free(&st->names);
	rp_fold_free(&st->fold);
	free(st);
}

/* Only a stack seen for the first time is named (and so allocates). */
u32 bio_stacks_intern(struct bio_stacks *st, const struct rp_sample *s)
{
	if (!s->frames || s->nframes <= 0)
		return 0;
	bool added;
	u32 id = stackset_intern(&st->set, s->frames, s->nframes, s->s->pid, NULL, NULL, &added);
	bool java = s->thread && rp_fold_java(s->thread->comm);
	for (size_t i = st->name_at.n; added && i < st->set.frames.n; i++) {
		VEC_PUSH(&st->name_at, (u32)st->names.len);
		rp_fold_name(&st->names, &st->fold, &st->set.frames.v[i], java);
		sb_add(&st->names, "", 1);   /* keeps the NUL: names are back to back */
	}
	return id + 1;
}

void bio_set_stacks(struct bio_tracker *bt, struct bio_stacks *st)
{
	bio_set_stack_fn(bt, st ? bio_stacks_intern : NULL, st);
}

u32 bio_stacks_depth(const struct bio_stacks *st, u32 id)
{
	return st && id && id <= st->set.stacks.n ? st->set.stacks.v[id - 1].n : 0;
}

const char *bio_stacks_frame(const struct bio_stacks *st, u32 id, u32 i, bool *kernel)
{
	u32 at = st->set.stacks.v[id - 1].first + i;
	*kernel = st->set.frames.v[at].kernel;
	return st->names.s + st->name_at.v[at];
}

/* ---- the views ------------------------------------------------------------ */

/* What one stack caused; index 0 holds the I/Os without a stack. */
struct st_total {
	u64 ios, bytes;
	u32 stack;
	u32 pid;
	const char *comm;         /* of the first I/O seen */
};

/* Whether an I/O counts as one its submitter queued: remapped I/Os are
 * counted again on the device they went to. */
static bool io_counted(const struct bio_io *io, const struct bio_view_opts *o)
{
	return io->state != BS_REMAPPED && bio_io_shown(io, o);
}

static struct st_total *totals(const struct bio_tracker *bt, const struct bio_view_opts *o,
			       size_t *n, struct st_total *all)
{
	const struct bio_stacks *st = bio_get_stacks(bt);
	*n = (st ? st->set.stacks.n : 0) + 1;
	struct st_total *t = xcalloc(*n, sizeof(*t));
	for (size_t i = 0; i < bio_nios(bt); i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (!io_counted(io, o))
			continue;
		struct st_total *x = &t[io->stack < *n ? io->stack : 0];
		if (!x->ios) {
			x->comm = io->comm[0] ? io->comm : "?";
			x->pid = io->pid;
		}
		x->stack = io->stack < *n ? io->stack : 0;
		x->ios += !(io->flags & BF_SPLIT);   /* a split's remainder is the same I/O */
		x->bytes += (u64)io->own_sector * 512;
		all->ios += !(io->flags & BF_SPLIT);
		all->bytes += (u64)io->own_sector * 512;
	}
	return t;
}

static int by_ios(const void *a, const void *b)
{
	const struct st_total *x = a, *y = b;
	if (x->ios != y->ios)
		return x->ios < y->ios ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static double share(u64 part, u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_one(const struct bio_stacks *st, const struct st_total *x,
		      const struct st_total *all, FILE *out)
{
	fprintf(out, "%10llu %6.1f%% %14llu %6.1f%%  ", (unsigned long long)x->ios,
		share(x->ios, all->ios), (unsigned long long)x->bytes, share(x->bytes, all->bytes));
	u32 n = bio_stacks_depth(st, x->stack);
	/* The stackless ones may be of many tasks: --folded names each. */
	if (!n)
		fprintf(out, "any task\n            [no stack]\n");
	else
		fprintf(out, "%s (%u)\n", x->comm, x->pid);
	for (u32 i = 0; i < n; i++) {
		bool kernel;
		const char *name = bio_stacks_frame(st, x->stack, i, &kernel);
		fprintf(out, "            %s%s\n", name, kernel ? " [k]" : "");
	}
	fputc('\n', out);
}

int bio_print_stacks(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	const struct bio_stacks *st = bio_get_stacks(bt);
	struct st_total all = { 0 };
	size_t n;
	struct st_total *t = totals(bt, o, &n, &all);
	qsort(t, n, sizeof(*t), by_ios);
	size_t top = o->rows > 0 ? (size_t)o->rows : 20, shown = 0;
	fprintf(out, "Who queued the I/O: %llu I/Os, %llu bytes, by the submitter's stack\n"
		"(at block_bio_queue; at request allocation or issue when no queue was seen)\n\n",
		(unsigned long long)all.ios, (unsigned long long)all.bytes);
	fprintf(out, "%10s %7s %14s %7s  %s\n", "I/Os", "%", "BYTES", "%", "COMM (PID), STACK leaf first");
	for (size_t i = 0; i < n && t[i].ios && shown < top; i++, shown++)
		print_one(st, &t[i], &all, out);
	u64 rest_ios = 0, rest_stacks = 0;
	for (size_t i = shown; i < n && t[i].ios; i++) {
		rest_ios += t[i].ios;
		rest_stacks++;
	}
	if (rest_stacks)
		fprintf(out, "%llu more stack%s with %llu I/Os: --rows N shows more, --folded all\n",
			(unsigned long long)rest_stacks, rest_stacks == 1 ? "" : "s",
			(unsigned long long)rest_ios);
	free(t);
	if (ferror(out)) {
		err_set("writing the stacks failed");
		return -1;
	}
	return 0;
}

/* One stack's folded frames, root first: the comm, then the frames. */
static int fold_one(struct flame_tree *tree, const struct bio_stacks *st, const struct st_total *x,
		    struct flame_frame *fr, u64 weight)
{
	u32 n = bio_stacks_depth(st, x->stack);
	size_t k = 0;
	fr[k++] = (struct flame_frame){ x->comm, strlen(x->comm), FLAME_USER };
	if (!n)
		fr[k++] = (struct flame_frame){ "[no stack]", 10, FLAME_USER };
	for (u32 i = n; i-- > 0 && k < FLAME_MAX_DEPTH;) {
		bool kernel;
		const char *s = bio_stacks_frame(st, x->stack, i, &kernel);
		fr[k++] = (struct flame_frame){ s, strlen(s), kernel ? FLAME_KERNEL : FLAME_USER };
	}
	return flame_tree_add(tree, fr, k, weight, FLAME_AFTER);
}

int bio_print_folded(const struct bio_tracker *bt, const struct bio_view_opts *o, FILE *out)
{
	const struct bio_stacks *st = bio_get_stacks(bt);
	struct st_total all = { 0 };
	size_t n;
	struct st_total *t = totals(bt, o, &n, &all);
	struct flame_frame *fr = xmalloc(FLAME_MAX_DEPTH * sizeof(*fr));
	struct flame_tree *tree = flame_tree_new(&(struct flame_tree_opts){ 0 });
	int rc = 0;
	/* Stack 0 gathers I/Os of many tasks: those are folded one by one
	 * under their own comm. */
	for (size_t i = 0; i < bio_nios(bt) && rc == 0 && t[0].ios; i++) {
		const struct bio_io *io = bio_get(bt, i);
		if (!io_counted(io, o) || (io->stack && io->stack < n) ||
		    (!o->bytes && (io->flags & BF_SPLIT)))
			continue;
		struct st_total one = { .comm = io->comm[0] ? io->comm : "?" };
		rc = fold_one(tree, st, &one, fr, o->bytes ? (u64)io->own_sector * 512 : 1);
	}
	for (size_t i = 1; i < n && rc == 0; i++)
		if (t[i].ios)
			rc = fold_one(tree, st, &t[i], fr, o->bytes ? t[i].bytes : t[i].ios);
	if (rc == 0)
		rc = flame_write_folded(tree, out);
	flame_tree_free(tree);
	free(fr);
	free(t);
	return rc;
}
