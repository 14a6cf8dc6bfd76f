/* stackcount.c - the stacks that led to each hit of the events given
 * (BCC's stackcount): tracepoints or uprobes recorded with call chains,
 * each unique stack of a process counted; printed BCC's way (frames leaf
 * first, then the process and the count), as folded lines, or as a flame
 * graph. */
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph.h"
#include "tools/tools.h"

struct stackcount {
	struct tool_opts o;
	const struct tool_env *env;
	struct stackset stacks;
	struct tool_counts rows;   /* key: attr index << 32 | stack id */
	VEC(char *) comms;         /* by stack id: the process's name */
	struct strbuf sb;
	struct rp_fold fold;       /* rp_fold_name's scratch */
	VEC(struct rp_frame) part; /* -U, -K: the frames kept of a sample's */
};

/* The frames of s that -U or -K keeps (all without them), in x->part
 * when some are left out; their count in *n. */
static const struct rp_frame *kept_frames(struct stackcount *x, const struct rp_sample *s,
					  u32 *n)
{
	*n = s->nframes;
	if (x->o.stack_part == TOOL_STACKS_BOTH)
		return s->frames;
	x->part.n = 0;
	for (int i = 0; i < s->nframes; i++)
		if (s->frames[i].kernel == (x->o.stack_part == (int)TOOL_STACKS_KERNEL))
			VEC_PUSH(&x->part, s->frames[i]);
	*n = (u32)x->part.n;
	return x->part.v;
}

static int start(void *ctx, const struct tool_env *env)
{
	struct stackcount *x = ctx;
	x->env = env;
	for (size_t i = 0; i < pd_reader_nattrs(env->reader); i++)
		if (pd_reader_attr(env->reader, i)->attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			return 0;
	return tool_missing("stackcount", "call chains (-g)");
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct stackcount *x = ctx;
	if (!s->attr)
		return 0;
	bool added;
	u32 n;
	const struct rp_frame *frames = kept_frames(x, s, &n);
	u32 id = stackset_intern(&x->stacks, frames, n, s->s->pid, NULL, NULL, &added);
	if (added) {
		char buf[96];
		snprintf(buf, sizeof(buf), "%s [%u]", s->thread ? s->thread->comm : "?", s->s->pid);
		VEC_PUSH(&x->comms, xstrdup(buf));
	}
	u64 key = (u64)(u32)s->attr->index << 32 | id;
	const char *name = s->attr->name ? s->attr->name : "?";
	tool_counts_row(&x->rows, key, name)->count++;
	return 0;
}

static const char *frame_name(struct stackcount *x, const struct rp_frame *f)
{
	sb_reset(&x->sb);
	rp_fold_name(&x->sb, &x->fold, f, false);
	return x->sb.s ? x->sb.s : "[unknown]";
}

/* BCC's layout: the frames leaf first, the process, the count. */
static void print_stack(struct stackcount *x, const struct tool_row *r, FILE *out)
{
	u32 id = (u32)r->key, n;
	const struct rp_frame *f = stackset_frames(&x->stacks, id, &n);
	for (u32 i = 0; i < n; i++)
		fprintf(out, "  %s\n", frame_name(x, &f[i]));
	fprintf(out, "    %s\n    %llu\n\n", x->comms.v[id], (unsigned long long)r->count);
}

/* "process;root;...;leaf count", stackcollapse's form. */
static void print_folded(struct stackcount *x, const struct tool_row *r, FILE *out)
{
	u32 id = (u32)r->key, n;
	const struct rp_frame *f = stackset_frames(&x->stacks, id, &n);
	fprintf(out, "%s", x->comms.v[id]);
	for (u32 i = n; i-- > 0;)
		fprintf(out, ";%s%s", frame_name(x, &f[i]), f[i].kernel ? "_[k]" : "");
	fprintf(out, " %llu\n", (unsigned long long)r->count);
}

static int write_flame(struct stackcount *x, struct tool_row **v)
{
	struct flame_tree *t = flame_tree_new(&(struct flame_tree_opts){ 0 });
	struct flame_named names[RP_MAX_FRAMES + 1];
	for (size_t k = 0; k < x->rows.rows.n; k++) {
		u32 id = (u32)v[k]->key, n;
		const struct rp_frame *f = stackset_frames(&x->stacks, id, &n);
		names[0] = (struct flame_named){ flame_tree_name(t, x->comms.v[id],
								 strlen(x->comms.v[id])), FLAME_USER };
		for (u32 i = 0; i < n && i < RP_MAX_FRAMES; i++) {
			const char *nm = frame_name(x, &f[n - 1 - i]);
			names[i + 1] = (struct flame_named){ flame_tree_name(t, nm, strlen(nm)),
				f[n - 1 - i].kernel ? FLAME_KERNEL : FLAME_USER };
		}
		flame_tree_add_named(t, names, (n < RP_MAX_FRAMES ? n : RP_MAX_FRAMES) + 1,
				     v[k]->count, FLAME_AFTER);
	}
	FILE *out = fopen(x->o.flame, "we");
	int rc = -1;
	if (!out) {
		err_set_errno("%s", x->o.flame);
	} else {
		struct flame_svg_opts so;
		flame_svg_opts_default(&so);
		so.title = "Stack Count";
		so.countname = "hits";
		so.palette = FLAME_PAL_ANNOTATE;
		rc = flame_write_svg(t, &so, out);
		if (fclose(out) != 0 && rc == 0) {
			err_set_errno("%s", x->o.flame);
			rc = -1;
		}
	}
	flame_tree_free(t);
	return rc;
}

static void print_rows(void *ctx, FILE *out)
{
	struct stackcount *x = ctx;
	struct tool_row **v = tool_counts_sorted(&x->rows, false);
	if (x->o.flame) {
		if (write_flame(x, v) < 0)
			tool_note(x->env, "%s", err_msg());
	} else {
		for (size_t i = 0; i < x->rows.rows.n; i++)
			(x->o.folded ? print_folded : print_stack)(x, v[i], out);
	}
	free(v);
}

static void reset(void *ctx)
{
	struct stackcount *x = ctx;
	tool_counts_reset(&x->rows);
}

static void stackcount_free(void *ctx)
{
	struct stackcount *x = ctx;
	stackset_free(&x->stacks);
	tool_counts_free(&x->rows);
	for (size_t i = 0; i < x->comms.n; i++)
		free(x->comms.v[i]);
	VEC_FREE(&x->comms);
	sb_free(&x->sb);
	rp_fold_free(&x->fold);
	VEC_FREE(&x->part);
	free(x);
}

struct tool *stackcount_new(const struct tool_opts *o)
{
	struct stackcount *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	stackset_init(&x->stacks);
	tool_counts_init(&x->rows);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "stackcount", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample }, .callchains = true,
			    .print = print_rows, .reset = reset, .free = stackcount_free };
	return t;
}
