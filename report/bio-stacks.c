/* bio-stacks.c - who caused the I/O: the user and kernel stacks of the
 * tasks that queued each I/O (recorded with 'ember record --block -g'),
 * interned once per process and stack, and the views that weigh them by
 * I/O count and bytes: a table of the top stacks and folded lines. */
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph.h"
#include "report/bio.h"
#include "report/offcpu.h"

/* A frame as interned: what makes it the same frame (ip, kind, symbol,
 * for inlined frames that share an ip) and where its name is. */
struct st_frame {
	u64 ip;
	const void *sym;
	u32 name;                 /* offset in names */
	bool kernel;
};

struct st_stack {
	u64 hash;
	u32 pid;
	u32 first, n;             /* frames[first .. first + n), leaf first */
	u32 next;                 /* index + 1 of the next stack with the hash */
};

struct bio_stacks {
	VEC(struct st_stack) stacks;
	VEC(struct st_frame) frames;
	struct strbuf names;      /* NUL-separated frame names */
	struct u64map index;      /* hash -> index + 1 of the first stack */
};

struct bio_stacks *bio_stacks_new(void)
{
	struct bio_stacks *st = xcalloc(1, sizeof(*st));
	u64map_init(&st->index);
	return st;
}

void bio_stacks_free(struct bio_stacks *st)
{
	if (!st)
		return;
	VEC_FREE(&st->stacks);
	VEC_FREE(&st->frames);
	sb_free(&st->names);
	u64map_free(&st->index);
	free(st);
}

/* Addresses mean the same code only within one address space: the pid
 * is part of the key. */
static u64 stack_hash(const struct rp_frame *f, int n, u32 pid)
{
	u64 h = hash_u64(pid + 1);
	for (int i = 0; i < n; i++)
		h = hash_u64(h ^ f[i].ip ^ (u64)f[i].kernel << 63 ^ (u64)(uintptr_t)f[i].sym);
	return h;
}

static bool stack_equal(const struct bio_stacks *st, const struct st_stack *k,
			const struct rp_frame *f, int n, u32 pid)
{
	if (k->pid != pid || k->n != (u32)n)
		return false;
	for (int i = 0; i < n; i++) {
		const struct st_frame *g = &st->frames.v[k->first + i];
		if (g->ip != f[i].ip || g->kernel != f[i].kernel || g->sym != (const void *)f[i].sym)
			return false;
	}
	return true;
}

/* Only a stack seen for the first time is named (and so allocates). */
static u32 stack_add(struct bio_stacks *st, const struct rp_frame *f, int n, u32 pid, u64 h,
		     u64 *head)
{
	struct st_stack k = { .hash = h, .pid = pid, .first = (u32)st->frames.n, .n = (u32)n,
			      .next = head ? (u32)*head : 0 };
	for (int i = 0; i < n; i++) {
		struct st_frame g = { .ip = f[i].ip, .sym = f[i].sym, .kernel = f[i].kernel,
				      .name = (u32)st->names.len };
		offcpu_frame_name(&f[i], &st->names);
		sb_add(&st->names, "", 1);   /* keeps the NUL: names are back to back */
		VEC_PUSH(&st->frames, g);
	}
	VEC_PUSH(&st->stacks, k);
	*u64map_slot(&st->index, h, NULL) = st->stacks.n;
	return (u32)st->stacks.n;
}

u32 bio_stacks_intern(struct bio_stacks *st, const struct rp_sample *s)
{
	if (!s->frames || s->nframes <= 0)
		return 0;
	u32 pid = s->s->pid;
	u64 h = stack_hash(s->frames, s->nframes, pid);
	u64 *head = u64map_get(&st->index, h);
	for (u32 i = head ? (u32)*head : 0; i; i = st->stacks.v[i - 1].next)
		if (stack_equal(st, &st->stacks.v[i - 1], s->frames, s->nframes, pid))
			return i;
	return stack_add(st, s->frames, s->nframes, pid, h, head);
}

void bio_set_stacks(struct bio_tracker *bt, struct bio_stacks *st)
{
	bio_set_stack_fn(bt, st ? bio_stacks_intern : NULL, st);
}

u32 bio_stacks_depth(const struct bio_stacks *st, u32 id)
{
	return st && id && id <= st->stacks.n ? st->stacks.v[id - 1].n : 0;
}

const char *bio_stacks_frame(const struct bio_stacks *st, u32 id, u32 i, bool *kernel)
{
	const struct st_frame *g = &st->frames.v[st->stacks.v[id - 1].first + i];
	*kernel = g->kernel;
	return st->names.s + g->name;
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
	return io->state != BS_REMAPPED && bio_io_shown(io, o->filter);
}

static struct st_total *totals(const struct bio_tracker *bt, const struct bio_view_opts *o,
			       size_t *n, struct st_total *all)
{
	const struct bio_stacks *st = bio_get_stacks(bt);
	*n = (st ? st->stacks.n : 0) + 1;
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
		x->ios++;
		x->bytes += (u64)io->own_sector * 512;
		all->ios++;
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
	size_t top = o->top > 0 ? (size_t)o->top : 20, shown = 0;
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
		fprintf(out, "%llu more stack%s with %llu I/Os: --top N shows more, --folded all\n",
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
		if (!io_counted(io, o) || (io->stack && io->stack < n))
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
