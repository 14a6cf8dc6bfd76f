/* replay.c - the replay, of a file or of a live stream: reads events in
 * time order, keeps threads and per-process maps up to date (COMM, FORK,
 * EXIT, MMAP, MMAP2), resolves each sample's frames to dsos and symbols,
 * and drives one sink.
 *
 * A PERF_SAMPLE_READ sample ({a,b}:S) is handed on once per counter value,
 * as that value's event, weighed by the counter's growth since its last
 * sample, as perf delivers them.  With rp_opts.interval_ns the sink's tick
 * ends each interval of recording time; each but the last spans exactly
 * [end - interval, end), so a view labels an interval by its end; a run
 * of 10 or more empty ones is skipped and counted (rp_summary.empty).
 * Live (rp_opts.live), each round of the stream is a clock: recording
 * time = CLOCK_MONOTONIC + the offset rounds measure (guessed 200 ms
 * behind until an event comes), and an interval ends on it only 250 ms
 * after its end (LIVE_LAG_NS), since a late drain would put earlier
 * events past the tick.  At rounds the replay frees exited threads and
 * the maps no thread uses (sweep_exited; threads whose EXIT was lost are
 * looked for with tgkill, look_for_gone), then malloc_trim at most once a
 * second; with rp_opts.release_files it lets symbols/ release the files no
 * map names, after each tick or at most once a second.  report -a beside
 * ~100 files of 4096 symbols and ~3000 short processes over 30 s: 23 MB at
 * 5 s and 72 MB at 30 s before, 18 and 20 MB with it. */
#include "replay/replay.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resolved frames are cached by (maps generation, ip): a profile hits the
 * same few thousand addresses millions of times. */
#define FRAME_CACHE_SIZE (1u << 16)

struct cached_frame {
	u64 ip;
	u64 generation;            /* 0 never matches: generations start at 1 */
	u64 addr, offset;
	struct sym_dso *dso;
	const struct sym *sym;
};

struct replay {
	struct rp_opts opts;
	struct pd_reader *reader;
	struct sym_ctx *syms;
	struct u64map threads;     /* tid -> struct rp_thread * */
	struct rp_thread *last_thread;
	VEC(struct rp_thread *) all_threads;
	VEC(struct sym_maps *) all_maps;
	u64 next_generation;
	struct cached_frame *cache;
	struct unw_dwarf *unw;     /* made when a sample carries a stack copy */
	struct unw_frame raw[RP_MAX_FRAMES];
	struct rp_frame frames[RP_MAX_FRAMES];
	struct rp_frame expanded[RP_MAX_FRAMES];   /* with inline frames */
	struct rp_frame branches[RP_MAX_FRAMES];   /* branch from/to pairs */
	struct rp_summary summary;
	struct u64map read_last;   /* PERF_SAMPLE_READ: kernel id -> last value */
	u64 next_tick;             /* end of the current interval; 0 = not begun */
	u64 ticks;                 /* intervals handed to the sink so far */
	bool event_ticks;          /* an event's time has been ticked to */
	u64 round_time;            /* live: the recording time the last round
				      vouched for (now + clock_offset); 0 for
				      files (the reader gives rounds only live) */
	u64 last_time;             /* the newest event time seen */
	/* Live: recording time = CLOCK_MONOTONIC + clock_offset (the largest
	 * last_time - now seen at a round: a lower bound that converges). */
	s64 clock_offset;
	bool clock_known;
	bool clock_guessed;        /* no event yet: offset 0 until one comes */
	u64 nexited;               /* threads marked exited since the last sweep */
	u32 comm_serial;           /* comm_changes values, never reused */
	u64 last_trim;             /* when sweep_exited last gave memory back */
	u64 rounds;                /* live: rounds read */
	u64 last_release;          /* when release_files last ran */
	u64 liveness_at;           /* when threads were last looked for */
	VEC(u32) missing;          /* tids found gone, not yet taken as exited */
	struct unw_stats unwind_before;   /* of unwinders freed by release_files */
};

/* ---- threads ------------------------------------------------------------- */

static struct rp_thread *thread_find(struct replay *rp, u32 tid)
{
	/* Samples come in runs of one thread: try the last one first. */
	if (rp->last_thread && rp->last_thread->tid == tid)
		return rp->last_thread;
	u64 *slot = u64map_get(&rp->threads, tid);
	if (!slot)
		return NULL;
	rp->last_thread = (struct rp_thread *)(uintptr_t)*slot;
	return rp->last_thread;
}

static struct rp_thread *thread_new(struct replay *rp, u32 pid, u32 tid)
{
	struct rp_thread *t = xcalloc(1, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->comm_changes = ++rp->comm_serial;
	/* perf's names until a COMM says otherwise: the idle task is swapper. */
	if (tid == 0)
		snprintf(t->comm, sizeof(t->comm), "swapper");
	else
		snprintf(t->comm, sizeof(t->comm), ":%d", (int)tid);
	*u64map_slot(&rp->threads, tid, NULL) = (u64)(uintptr_t)t;
	VEC_PUSH(&rp->all_threads, t);
	return t;
}

/* Maps the replay owns, freed at the end (a reused pid leaves its old
 * process's maps referenced by no thread). */
static struct sym_maps *maps_keep(struct replay *rp, struct sym_maps *m)
{
	VEC_PUSH(&rp->all_maps, m);
	return m;
}

/* The process's maps: the group leader's, created on first need. */
static struct sym_maps *process_maps(struct replay *rp, u32 pid)
{
	struct rp_thread *leader = thread_find(rp, pid);
	if (!leader)
		leader = thread_new(rp, pid, pid);
	if (!leader->maps)
		leader->maps = maps_keep(rp, sym_maps_new(pid, &rp->next_generation));
	return leader->maps;
}

/* Finds the thread of a sample or side-band record, creating it (and
 * joining its process's maps) when it was never announced. */
static struct rp_thread *thread_get(struct replay *rp, u32 pid, u32 tid)
{
	struct rp_thread *t = thread_find(rp, tid);
	if (t && t->pid != pid && pid != (u32)-1) {
		/* A tid reused by another process: start afresh. */
		t->pid = pid;
		t->maps = NULL;
		t->missing_since = 0;
	}
	if (!t)
		t = thread_new(rp, pid, tid);
	if (!t->maps) {
		t->maps = process_maps(rp, pid);
	}
	return t;
}

static void on_comm(struct replay *rp, const struct pd_event *ev)
{
	struct rp_thread *t = thread_get(rp, ev->u.comm.pid, ev->u.comm.tid);
	snprintf(t->comm, sizeof(t->comm), "%s", ev->u.comm.comm);
	t->comm_changes = ++rp->comm_serial;
	/* An exec keeps the old maps, as perf does: samples later in the
	 * execve call still have the old image's user frames, and the new
	 * image's mmaps replace what they overlap. */
}

static void on_fork(struct replay *rp, const struct pd_event *ev)
{
	struct rp_thread *parent = thread_get(rp, ev->u.task.ppid, ev->u.task.ptid);
	struct rp_thread *child = thread_find(rp, ev->u.task.tid);
	if (!child)
		child = thread_new(rp, ev->u.task.pid, ev->u.task.tid);
	child->pid = ev->u.task.pid;
	child->exited = false;
	child->missing_since = 0;
	memcpy(child->comm, parent->comm, sizeof(child->comm));
	child->comm_changes = ++rp->comm_serial;
	if (child->pid == parent->pid) {
		child->maps = parent->maps;        /* a new thread shares them */
	} else {
		child->maps = maps_keep(rp, sym_maps_copy(parent->maps, child->pid));
	}
}

/* Kernel addresses resolve through kallsyms; the kernel's maps say where
 * the recording saw the kernel and its modules, to relocate from. */
static void on_kernel_mmap(struct replay *rp, const struct pd_event *ev)
{
	const char *name = ev->u.mmap.filename;
	if (!strncmp(name, "[kernel.kallsyms]", 17))
		sym_kernel_recorded_text(rp->syms, name + 17, ev->u.mmap.pgoff);
	else
		sym_kernel_recorded_module(rp->syms, name, ev->u.mmap.start, ev->u.mmap.len);
}

static void on_mmap(struct replay *rp, const struct pd_event *ev)
{
	u16 mode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (mode == PERF_RECORD_MISC_KERNEL) {
		on_kernel_mmap(rp, ev);
		return;
	}
	if (mode == PERF_RECORD_MISC_GUEST_KERNEL)
		return;
	if (ev->u.mmap.len == 0 || ev->u.mmap.start + ev->u.mmap.len < ev->u.mmap.start)
		return;
	struct sym_maps *maps = process_maps(rp, ev->u.mmap.pid);
	struct sym_map m = {
		.start = ev->u.mmap.start,
		.end = ev->u.mmap.start + ev->u.mmap.len,
		.pgoff = ev->u.mmap.pgoff,
		.path = xstrdup(ev->u.mmap.filename),
		.build_id_size = ev->u.mmap.build_id_size,
	};
	if (m.build_id_size)
		memcpy(m.build_id, ev->u.mmap.build_id, m.build_id_size);
	sym_maps_insert(maps, &m);
}

static void mark_exited(struct replay *rp, struct rp_thread *t)
{
	if (t && !t->exited) {
		t->exited = true;
		t->exit_round = rp->rounds;
		rp->nexited++;
	}
}

static void on_exit_event(struct replay *rp, const struct pd_event *ev)
{
	mark_exited(rp, thread_find(rp, ev->u.task.tid));
}

/* ---- frames -------------------------------------------------------------- */

/* The recorded build-id of a file, from its MMAP2 or the header. */
static const u8 *recorded_build_id(struct replay *rp, const struct sym_map *m, size_t *size)
{
	if (m->build_id_size) {
		*size = m->build_id_size;
		return m->build_id;
	}
	size_t n = pd_reader_nbuild_ids(rp->reader);
	for (size_t i = 0; i < n; i++) {
		const struct pd_reader_build_id *b = pd_reader_build_id(rp->reader, i);
		if (!strcmp(b->filename, m->path)) {
			*size = b->size;
			return b->id;
		}
	}
	*size = 0;
	return NULL;
}

static struct sym_dso *map_dso(struct replay *rp, struct sym_map *m, u32 pid)
{
	if (!m->file_known) {
		size_t bid_size;
		const u8 *bid = recorded_build_id(rp, m, &bid_size);
		m->file = sym_dso_get(rp->syms, m->path, bid, bid_size, (pid_t)pid);
		m->file_known = true;
	}
	return m->file;
}

static void resolve_user(struct replay *rp, struct rp_thread *t, struct rp_frame *f)
{
	struct sym_map *m = sym_maps_find(t->maps, f->ip);
	if (m) {
		f->offset = sym_path_is_memory(m->path) ? f->ip : f->ip - m->start + m->pgoff;
		f->dso = map_dso(rp, m, t->pid);
		if (f->dso)
			f->addr = sym_map_to_file(f->dso, f->ip, m->start, m->pgoff);
	} else {
		f->dso = sym_jit_dso(rp->syms, (pid_t)t->pid);
	}
	if (f->dso)
		f->sym = sym_lookup(f->dso, f->addr);
}

static void resolve_frame(struct replay *rp, struct rp_thread *t, struct rp_frame *f)
{
	u64 generation = f->kernel ? 1 : t->maps->generation + 1;  /* t unused for kernel */
	u64 key = hash_u64(f->ip ^ (generation << 48) ^ generation);
	struct cached_frame *c = &rp->cache[key & (FRAME_CACHE_SIZE - 1)];
	if (c->generation == generation && c->ip == f->ip) {
		f->addr = c->addr;
		f->offset = c->offset;
		f->dso = c->dso;
		f->sym = c->sym;
		return;
	}
	f->addr = f->offset = f->ip;
	f->dso = NULL;
	f->sym = NULL;
	if (f->kernel) {
		f->dso = sym_kernel_dso(rp->syms, f->ip);
		f->addr = sym_map_to_file(f->dso, f->ip, 0, 0);
		f->sym = sym_lookup(f->dso, f->addr);
	} else {
		resolve_user(rp, t, f);
	}
	c->ip = f->ip;
	c->generation = generation;
	c->addr = f->addr;
	c->offset = f->offset;
	c->dso = f->dso;
	c->sym = f->sym;
}

/* ---- the loop ------------------------------------------------------------ */

static bool sample_wanted(const struct rp_filter *f, const struct pd_sample *s,
			  const struct rp_thread *t)
{
	return rp_filter_pass(f, s->pid, s->tid, t->comm, (int)s->cpu, s->time);
}

/* ---- user stacks ---------------------------------------------------------- */

/* What the unwinder asks of a sample: the thread whose maps to search. */
struct unw_lookup {
	struct replay *rp;
	struct rp_thread *t;
};

static int unw_find_map(void *ctx, u64 addr, struct unw_map *out)
{
	struct unw_lookup *l = ctx;
	struct sym_map *m = sym_maps_find(l->t->maps, addr);
	/* Pseudo-files have no tables, except the vdso (unwind/ reads ours). */
	if (!m || !m->path[0] || (m->path[0] == '[' && strcmp(m->path, "[vdso]")))
		return -1;
	struct sym_dso *d = map_dso(l->rp, m, l->t->pid);
	if (!d || !sym_dso_trusted(d))
		return -1;   /* not the file recorded: its tables would lie */
	/* The file's bytes from where the symbols found it: a file deleted
	 * since, or only in a container, unwinds from the build-id cache. */
	const char *file = sym_dso_file(d);
	*out = (struct unw_map){ m->start, m->end, m->pgoff, file ? file : m->path, d };
	return 0;
}

static struct unw_dwarf *unwinder(struct replay *rp)
{
	if (!rp->unw)
		rp->unw = unw_dwarf_new(rp->opts.unwinder_set ? rp->opts.unwinder
							      : UNW_BACKEND_DEFAULT);
	return rp->unw;
}

/* Whether an event's user stacks are in the LBR (perf record --call-graph
 * lbr): perf then builds every chain from the branch stack. */
static bool lbr_call_stack(const struct pd_attr *a)
{
	return a && (a->attr.sample_type & PERF_SAMPLE_BRANCH_STACK) &&
	       (a->attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
}

/* The frames of a sample with callchains: kernel ones from the kernel,
 * user ones unwound from the stack copy (--call-graph dwarf), or walked
 * by frame pointers with the leaf's caller restored from the snapshot. */
static int chain_frames(struct replay *rp, const struct pd_event *ev, struct rp_thread *t,
			bool *dropped, bool *unwound)
{
	const struct pd_sample *s = &ev->s;
	u64 valid = MIN(s->stack_dyn_size, s->stack_size);
	bool has_stack = s->stack && valid >= 8;
	bool has_regs = s->user_abi && s->user_regs && ev->attr &&
			(ev->attr->attr.sample_type & PERF_SAMPLE_REGS_USER);
	/* A chain unwound with CFI while recording (record -g: an event with
	 * stack copies, this sample's emptied) is shown as an offline DWARF
	 * unwinding shows it, inline frames and all, by every view that
	 * repairs chains (perf shows no inline frames there). */
	u64 copies = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (lbr_call_stack(ev->attr))
		return unw_lbr_frames(s, ev->misc, rp->raw, RP_MAX_FRAMES, dropped);
	if (!has_stack && rp->opts.leaf_fix && ev->attr &&
	    (ev->attr->attr.sample_type & copies) == copies) {
		*unwound = true;
		return unw_recorded_frames(s, ev->misc, rp->raw, RP_MAX_FRAMES, dropped);
	}
	if (!has_stack || (!has_regs && !rp->opts.leaf_fix) || !unwinder(rp))
		return unw_sample_frames(s, ev->misc, rp->raw, RP_MAX_FRAMES, dropped);
	struct unw_lookup l = { rp, t };
	struct unw_user in = {
		.regs = has_regs ? s->user_regs : NULL,
		.regs_mask = has_regs ? ev->attr->attr.sample_regs_user : 0,
		.stack = s->stack, .stack_size = valid,
		.pid = t->pid, .tid = t->tid,
		.space = t->maps, .generation = t->maps->generation,
		.find_map = unw_find_map, .find_ctx = &l,
	};
	*unwound = has_regs;
	if (has_regs)
		return unw_dwarf_sample_frames(rp->unw, s, ev->misc, &in, rp->raw,
					       RP_MAX_FRAMES, dropped);
	int n = unw_sample_frames(s, ev->misc, rp->raw, RP_MAX_FRAMES, dropped);
	return *dropped ? n : unw_leaf_fix(rp->unw, &in, rp->raw, n, RP_MAX_FRAMES);
}

/* The marker ending a stack the copy could not hold. */
static const struct sym cut_sym = { .name = RP_CUT_NAME };

/* The frames with each user frame's inlined functions before it, as
 * perf shows them; returns the new count (frames in rp->expanded). */
static int expand_inlines(struct replay *rp, int n)
{
	const struct sym *syms[64];
	int out = 0;
	for (int i = 0; i < n && out < RP_MAX_FRAMES; i++) {
		const struct rp_frame *f = &rp->frames[i];
		int k = 0;
		if (!f->kernel && f->dso && f->sym)
			k = sym_inline_frames(rp->syms, f->dso, f->addr, f->sym, syms,
					      (int)MIN(ARRAY_SIZE(syms), (size_t)(RP_MAX_FRAMES - out)));
		if (k == 0) {
			rp->expanded[out++] = *f;
			continue;
		}
		for (int j = 0; j < k; j++) {
			rp->expanded[out] = *f;
			rp->expanded[out].sym = syms[j];
			/* The last is the machine frame's function: it
			 * keeps the self time. */
			rp->expanded[out].inlined = rp->expanded[out].inline_scope = j < k - 1;
			rp->expanded[out].inline_depth = (u8)j;
			out++;
		}
	}
	return out;
}

/* perf's way with PERF_SAMPLE_READ (perf record -e '{a,b}:S', or
 * --sample-read): each counter value the sample read is a sample of its
 * own event, with the same ip and stack, weighed by how much that counter
 * grew since its last sample (its whole value the first time); a counter
 * that did not grow gives none, nor one whose id no event lists. */
static int deliver_read_values(struct replay *rp, const struct rp_sample *s, struct rp_sink *sink)
{
	struct pd_sample one = *s->s;
	struct rp_sample each = *s;
	each.s = &one;
	u64 value, id;
	for (u64 i = 0; pd_read_value(s->s, i, &value, &id); i++) {
		const struct pd_attr *a = pd_reader_attr_of_id(rp->reader, id);
		if (!a)
			continue;
		u64 *last = u64map_slot(&rp->read_last, id, NULL);
		one.period = value - *last;
		one.id = id;
		*last = value;
		each.attr = a;
		if (one.period) {
			int rc = sink->sample(sink->ctx, &each);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* Each branch entry's source and target as frames (at most
 * RP_MAX_FRAMES / 2 entries: the LBR holds 32).  An address in the upper
 * half is the kernel's, whatever mode the sample was taken in. */
static int branch_frames(struct replay *rp, const struct pd_sample *s, struct rp_thread *t)
{
	int n = 0;
	for (u64 i = 0; i < s->nr_branches && n + 2 <= RP_MAX_FRAMES; i++) {
		for (int k = 0; k < 2; k++) {
			struct rp_frame *f = &rp->branches[n++];
			memset(f, 0, sizeof(*f));
			f->ip = s->branches[3 * i + (u64)k];
			f->kernel = (s64)f->ip < 0;
			resolve_frame(rp, t, f);
		}
	}
	return n / 2;
}

static int on_sample(struct replay *rp, const struct pd_event *ev, struct rp_sink *sink)
{
	struct rp_thread *t = thread_get(rp, ev->s.pid, ev->s.tid);
	rp->summary.samples++;
	if (!sample_wanted(&rp->opts.filter, &ev->s, t))
		return 0;
	rp->summary.samples_shown++;
	int n;
	bool dropped = false, unwound = false;
	if (rp->opts.callchains) {
		n = chain_frames(rp, ev, t, &dropped, &unwound);
	} else {
		struct pd_sample leaf = ev->s;
		leaf.nr_callchain = 0;
		n = unw_sample_frames(&leaf, ev->misc, rp->raw, 1, NULL);
	}
	for (int i = 0; i < n; i++) {
		struct rp_frame *f = &rp->frames[i];
		f->ip = rp->raw[i].ip;
		f->kernel = rp->raw[i].kernel;
		f->inlined = f->inline_scope = false;
		f->inline_depth = 0;
		f->pending = f->kernel && rp->opts.defer_kernel;
		if (rp->raw[i].cut) {
			f->addr = f->offset = f->ip;
			f->dso = NULL;
			f->sym = &cut_sym;
		} else if (f->pending) {
			f->addr = f->offset = f->ip;
			f->dso = NULL;
			f->sym = NULL;
		} else {
			resolve_frame(rp, t, f);
		}
	}
	const struct rp_frame *frames = rp->frames;
	/* Inline frames for unwound stacks, where perf shows them too (it
	 * shows none in frame-pointer chains). */
	if (!rp->opts.no_inline && unwound && !dropped) {
		n = expand_inlines(rp, n);
		frames = rp->expanded;
	}
	struct rp_sample s = {
		.ev = ev, .s = &ev->s, .attr = ev->attr, .thread = t,
		.frames = frames, .nframes = n, .chain_dropped = dropped,
		.branches = rp->branches,
		.nbranches = rp->opts.branches ? branch_frames(rp, &ev->s, t) : 0,
	};
	if (!sink->sample)
		return 0;
	if (ev->s.nr_read && ev->s.read_id_at)
		return deliver_read_values(rp, &s, sink);
	return sink->sample(sink->ctx, &s);
}

/* Updates threads and maps, then lets the sink see the event. */
static int on_event(struct replay *rp, const struct pd_event *ev, struct rp_sink *sink)
{
	struct rp_thread *t = NULL;
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(rp, ev, sink);
	case PERF_RECORD_COMM:
		on_comm(rp, ev);
		break;
	case PERF_RECORD_FORK:
		on_fork(rp, ev);
		break;
	case PERF_RECORD_EXIT:
		on_exit_event(rp, ev);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		on_mmap(rp, ev);
		break;
	case PERF_RECORD_LOST:
		rp->summary.lost += ev->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rp->summary.lost += ev->u.lost_samples.lost;
		break;
	}
	if (!sink->event)
		return 0;
	if (ev->attr && ev->attr->attr.sample_id_all &&
	    (ev->attr->attr.sample_type & PERF_SAMPLE_TID))
		t = thread_find(rp, ev->s.tid);
	return sink->event(sink->ctx, ev, t);
}

/* Inputs smaller than this finish before a progress line would help. */
#define PROGRESS_MIN_BYTES (50ull << 20)

static void report_progress(struct replay *rp, u64 count)
{
	if (!rp->opts.progress || (count & 0xffff))
		return;
	u64 total, done = pd_reader_position(rp->reader, &total);
	if (total >= PROGRESS_MIN_BYTES)
		rp->opts.progress(done, total);
}

/* Whether any event may have sampled kernel code. */
static bool records_kernel(struct pd_reader *r)
{
	for (size_t i = 0; i < pd_reader_nattrs(r); i++)
		if (!pd_reader_attr(r, i)->attr.exclude_kernel)
			return true;
	return false;
}

static bool is_kernel_entry(const struct pd_reader_build_id *b)
{
	return (b->cpumode & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

const struct pd_reader_build_id *rp_kernel_build_id(struct replay *rp)
{
	for (size_t i = 0; i < pd_reader_nbuild_ids(rp->reader); i++) {
		const struct pd_reader_build_id *b = pd_reader_build_id(rp->reader, i);
		if (is_kernel_entry(b) && !strcmp(b->filename, "[kernel.kallsyms]"))
			return b;
	}
	return NULL;
}

/* The header's build-ids for the kernel and its modules say which
 * kallsyms names them. */
static void expect_kernel(struct replay *rp)
{
	const struct pd_reader_build_id *k = rp_kernel_build_id(rp);
	if (k)
		sym_kernel_expect(rp->syms, k->id, k->size);
	for (size_t i = 0; i < pd_reader_nbuild_ids(rp->reader); i++) {
		const struct pd_reader_build_id *b = pd_reader_build_id(rp->reader, i);
		if (is_kernel_entry(b) && b != k)
			sym_kernel_expect_module(rp->syms, b->filename, b->id, b->size);
	}
}

/* The user-space files of the header's build-id list load on a thread
 * too (the list names the files samples hit, for perf's files). */
static void prefetch_user_files(struct replay *rp)
{
	size_t n = pd_reader_nbuild_ids(rp->reader), k = 0;
	struct sym_file_hint *hints = xcalloc(n ? n : 1, sizeof(*hints));
	for (size_t i = 0; i < n; i++) {
		const struct pd_reader_build_id *b = pd_reader_build_id(rp->reader, i);
		if ((b->cpumode & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)
			hints[k++] = (struct sym_file_hint){ b->filename, b->id, b->size };
	}
	sym_prefetch_files(rp->syms, hints, k);
	free(hints);
}

/* "a, b, c" into buf while it fits, then ", ..." for the rest. */
static void list_add(char *buf, size_t cap, const char *name)
{
	static const char more[] = ", ...";
	size_t n = strlen(buf), need = strlen(name) + (n ? 2 : 0);
	if (n >= sizeof(more) - 1 && !strcmp(buf + n - (sizeof(more) - 1), more))
		return;
	if (n + need + sizeof(more) <= cap)
		snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
	else
		snprintf(buf + n, cap - n, "%s", more);
}

static void summarize_symbols(struct replay *rp)
{
	struct rp_summary *sum = &rp->summary;
	sum->sym_mismatches = sym_ctx_stats(rp->syms)->build_id_mismatches;
	sum->nmissing = sum->nmismatched = sum->ndeleted = 0;
	sum->missing[0] = sum->mismatched[0] = sum->deleted[0] = '\0';
	const struct sym_dso *d;
	for (size_t i = 0; (d = sym_problem_file(rp->syms, i)); i++) {
		const char *path = sym_dso_path(d);
		size_t n = strlen(path);
		if (!sym_dso_trusted(d)) {
			sum->nmismatched++;
			list_add(sum->mismatched, sizeof(sum->mismatched), path);
		} else if (n > 10 && !strcmp(path + n - 10, " (deleted)")) {
			sum->ndeleted++;   /* gone before the recording could see it */
			list_add(sum->deleted, sizeof(sum->deleted), path);
		} else {
			sum->nmissing++;
			list_add(sum->missing, sizeof(sum->missing), path);
		}
	}
	sym_kernel_info(rp->syms, &sum->kernel);
}

/* The unwinder's counts so far into *to (every field a u64 count). */
static void add_unwind_stats(struct unw_stats *to, const struct unw_stats *from)
{
	u64 *t = (u64 *)to;
	const u64 *f = (const u64 *)from;
	for (size_t i = 0; i < sizeof(*to) / sizeof(u64); i++)
		t[i] += f[i];
}

/* The maps' files held (or let go of again) around a release: a file any
 * process still maps stays. */
static void hold_mapped_files(struct replay *rp, bool hold)
{
	for (size_t i = 0; i < rp->all_maps.n; i++) {
		struct sym_maps *m = rp->all_maps.v[i];
		for (size_t k = 0; k < m->v.n; k++) {
			struct sym_dso *d = m->v.v[k].file_known ? m->v.v[k].file : NULL;
			if (d && hold)
				sym_dso_hold(d);
			else if (d)
				(void)sym_dso_put(d);   /* held just before: cannot fail */
		}
	}
}

/* After a tick, or at a live round, the sink holding nothing of the files
 * (release_files; it drops its pointers in forget_files): those no
 * process maps any more are freed.  The frame cache keeps them only
 * under generations of freed maps, which never come back; the DWARF
 * unwinder knows files by their dso's address, so it starts anew. */
static int release_files(struct replay *rp, struct rp_sink *sink)
{
	if (sink->forget_files && sink->forget_files(sink->ctx) < 0)
		return -1;
	rp->last_release = now_ns();
	hold_mapped_files(rp, true);
	size_t n = sym_ctx_release(rp->syms);
	hold_mapped_files(rp, false);
	rp->summary.released_files += n;
	if (n && rp->unw) {
		add_unwind_stats(&rp->unwind_before, unw_dwarf_stats(rp->unw));
		unw_dwarf_free(rp->unw);
		rp->unw = NULL;
	}
	return 0;
}

/* After the tick at rp->next_tick: a long run of empty intervals up to
 * t's is skipped and counted (rp_summary.empty), never handed to the sink
 * one by one, so a gap or a damaged time far ahead gives one line, not
 * millions of empty tables. */
static void skip_empty_run(struct replay *rp, u64 t)
{
	u64 step = rp->opts.interval_ns;
	rp->next_tick += empty_runs_skip(&rp->summary.empty, rp->next_tick, t, step) * step;
}

/* Ends every interval that time t lies past (rp_opts.interval_ns): an
 * event's (from_event), or the clock's at a live round.  Every interval
 * but the last spans exactly [end - step, end), so a view labels it from
 * its end alone: the first begins at the first event, as in a file; on a
 * quiet live target, at the guessed clock's start (on_round), which the
 * first event replaces while no tick has been given. */
static int tick_until(struct replay *rp, struct rp_sink *sink, u64 t, bool from_event)
{
	u64 step = rp->opts.interval_ns;
	bool first_event = from_event && !rp->event_ticks && !rp->ticks;
	/* A guessed clock far behind the recording's: restart from here
	 * rather than print the intervals between. */
	if (!rp->next_tick || first_event || (rp->clock_guessed && t >= rp->next_tick + step))
		rp->next_tick = t + step;
	rp->event_ticks |= from_event;
	for (; t >= rp->next_tick; rp->next_tick += step) {
		rp->ticks++;
		if (sink->tick && sink->tick(sink->ctx, rp->next_tick, false) < 0)
			return -1;
		if (rp->opts.release_files && release_files(rp, sink) < 0)
			return -1;
		skip_empty_run(rp, t);
	}
	return 0;
}

/* ---- live ---------------------------------------------------------------- */

/* Frees the maps not in used.  A pid none of the maps left belongs to
 * has ended: its JIT map, if it had one, goes at the next release (not
 * while maps of the pid remain: the frame cache holds the JIT's symbols
 * under their generation). */
static void free_unused_maps(struct replay *rp, const struct u64map *used)
{
	struct u64map pids;
	u64map_init(&pids);
	for (size_t i = 0; i < rp->all_maps.n; i++)
		if (u64map_get(used, (u64)(uintptr_t)rp->all_maps.v[i]))
			*u64map_slot(&pids, rp->all_maps.v[i]->pid, NULL) = 1;
	size_t kept = 0;
	for (size_t i = 0; i < rp->all_maps.n; i++) {
		struct sym_maps *m = rp->all_maps.v[i];
		if (u64map_get(used, (u64)(uintptr_t)m)) {
			rp->all_maps.v[kept++] = m;
			continue;
		}
		if (!u64map_get(&pids, m->pid))
			sym_jit_forget(rp->syms, (pid_t)m->pid);
		sym_maps_free(m);
		rp->summary.released_maps++;
	}
	rp->all_maps.n = kept;
	u64map_free(&pids);
}

/* Threads marked exited are freed, then the maps no thread uses: a long
 * live session with many short-lived processes stays bounded.  A tid that
 * came back (on_fork reuses its struct) is no longer exited.  Only exits
 * of two rounds ago or earlier: a round delivers what is older than the
 * round before it, so a sample of another CPU's ring that came a round
 * late still finds its thread.  A sink that keeps thread pointers
 * (live_keep_threads) keeps the exited threads, but their maps go. */
static void sweep_exited(struct replay *rp)
{
	struct u64map used;
	u64map_init(&used);
	u64map_free(&rp->threads);
	u64map_init(&rp->threads);
	size_t kept = 0;
	u64 left = 0;
	for (size_t i = 0; i < rp->all_threads.n; i++) {
		struct rp_thread *t = rp->all_threads.v[i];
		bool gone = t->exited && t->exit_round + 2 <= rp->rounds;
		if (gone && !rp->opts.live_keep_threads) {
			free(t);
			rp->summary.released_threads++;
			continue;
		}
		if (gone)
			t->maps = NULL;
		left += t->exited && t->maps;
		rp->all_threads.v[kept++] = t;
		*u64map_slot(&rp->threads, t->tid, NULL) = (u64)(uintptr_t)t;
		if (t->maps)
			*u64map_slot(&used, (u64)(uintptr_t)t->maps, NULL) = 1;
	}
	rp->all_threads.n = kept;
	free_unused_maps(rp, &used);
	u64map_free(&used);
	rp->last_thread = NULL;
	rp->nexited = left;
	/* What was freed goes back to the system, at most once a second:
	 * without it the holes freed maps leave between live data make the
	 * resident size creep (heap flat at 23 MB under massif while RSS grew
	 * by a third in 20 s of 200 processes a second). */
	u64 now = now_ns();
	if (now - rp->last_trim >= 1000000000ull) {
		malloc_trim(0);
		rp->last_trim = now;
	}
}

/* ---- threads whose EXIT was lost ------------------------------------------
 * A ring that overflows loses the EXIT records among its samples, and a
 * live session would keep those threads, their maps and their files to
 * its end (a 95-minute --push run still held the files of a test run
 * killed 8 minutes before).  So every LIVENESS_EVERY_NS the threads kept
 * are looked for (task_missing: the thread standing for tid -1, samples
 * of exiting threads, holds its process's maps while the process lives).
 * One found gone died before the
 * look, whose time on the recording's clock is at most now plus the
 * offset the rounds measured, give or take the drain's lag: once the
 * stream is LIVENESS_MARGIN_NS past that, its samples have all come, and
 * it is taken as exited, as its EXIT would have. */
#define LIVENESS_EVERY_NS 5000000000ull
#define LIVENESS_MARGIN_NS 2000000000ull

/* The threads found gone that the stream is now past: exited. */
static void settle_missing(struct replay *rp)
{
	size_t kept = 0;
	for (size_t i = 0; i < rp->missing.n; i++) {
		struct rp_thread *t = thread_find(rp, rp->missing.v[i]);
		if (!t || t->exited || !t->missing_since)
			continue;                /* its EXIT came, or it came back */
		if (rp->last_time < t->missing_since + LIVENESS_MARGIN_NS) {
			rp->missing.v[kept++] = rp->missing.v[i];
			continue;
		}
		t->missing_since = 0;
		mark_exited(rp, t);
		rp->summary.vanished_threads++;
	}
	rp->missing.n = kept;
}

static void look_for_gone(struct replay *rp, u64 now)
{
	settle_missing(rp);
	if (rp->liveness_at && now - rp->liveness_at < LIVENESS_EVERY_NS)
		return;
	rp->liveness_at = now;
	u64 seen_by = (u64)((s64)now + rp->clock_offset);
	for (size_t i = 0; i < rp->all_threads.n; i++) {
		struct rp_thread *t = rp->all_threads.v[i];
		if (t->exited || t->missing_since || !task_missing(t->pid, t->tid))
			continue;
		t->missing_since = seen_by;
		VEC_PUSH(&rp->missing, t->tid);
	}
}

/* Live without intervals: files are released at most this often. */
#define RELEASE_EVERY_NS 1000000000ull

/* What a live stream may hold unread at a round: what was recorded since
 * the round before (rounds come every 100 ms), and the drain's pass. */
#define GUESS_LAG_NS 200000000ull

/* How late a live stream may be read, beyond the least lag seen: the
 * clock ends an interval only this long after its end. */
#define LIVE_LAG_NS 250000000ull

/* Sweeps once enough threads exited that the walk pays for itself. */
#define SWEEP_EXITED_MIN 64

/* A round of a live stream: everything recorded before the one before it
 * has been delivered, so the recording's clock has passed the interval
 * ends up to now (less the drain's lag), events or none. */
static int on_round(struct replay *rp, struct rp_sink *sink)
{
	u64 now = now_ns();
	s64 off = (s64)(rp->last_time - now);
	rp->rounds++;
	if (rp->last_time && (!rp->clock_known || rp->clock_guessed || off > rp->clock_offset)) {
		rp->clock_offset = off;
		rp->clock_known = true;
		rp->clock_guessed = false;
	}
	/* A quiet target: two rounds and no event has told the recording's
	 * clock.  The intervals begin now on CLOCK_MONOTONIC, which the perf
	 * clock is near (0.65 s behind on one VM, 0.09 s ahead on another),
	 * less what the pipe may still hold (GUESS_LAG_NS), so they are
	 * printed when nothing happens and a tick does not pass events
	 * recorded before it and not yet read; the first event's time
	 * corrects the offset. */
	if (rp->opts.interval_ns && !rp->clock_known && rp->rounds >= 2) {
		rp->clock_known = rp->clock_guessed = true;
		rp->clock_offset = -(s64)GUESS_LAG_NS;
		rp->next_tick = now - GUESS_LAG_NS + rp->opts.interval_ns;
	}
	if (rp->clock_known)
		rp->round_time = (u64)((s64)now + rp->clock_offset);
	/* The clock ends intervals only where the stream has surely been
	 * read: round_time assumes the smallest lag ever seen, and a drain
	 * running late (under ASan, 80 ms more) would put events recorded
	 * before the tick into the next interval.  Events end intervals
	 * themselves as they come; the clock serves a quiet target, whose
	 * intervals then print LIVE_LAG_NS late. */
	if (rp->opts.interval_ns && rp->next_tick && rp->clock_known &&
	    rp->round_time > LIVE_LAG_NS &&
	    tick_until(rp, sink, rp->round_time - LIVE_LAG_NS, false) < 0)
		return -1;
	if (rp->clock_known && !rp->clock_guessed)
		look_for_gone(rp, now);
	bool many = rp->nexited >= SWEEP_EXITED_MIN || (rp->nexited && rp->all_threads.n > 4096);
	if (many)
		sweep_exited(rp);
	/* One table for the whole session: its files go at rounds, at most
	 * once a second (with intervals, after each tick). */
	if (rp->opts.release_files && !rp->opts.interval_ns &&
	    now - rp->last_release >= RELEASE_EVERY_NS && release_files(rp, sink) < 0)
		return -1;
	rp->summary.threads_now = rp->all_threads.n;
	return sink->round ? sink->round(sink->ctx) : 0;
}

static u64 event_time(const struct pd_event *ev)
{
	return ev->has_time ? ev->s.time : 0;
}

int rp_run(struct replay *rp, struct rp_sink *sink)
{
	struct pd_event ev;
	int rc;
	u64 count = 0;
	/* kallsyms and the recording's files take tens of milliseconds to
	 * load: they start now, on threads, while the first events are read.
	 * The reader parsed the tracing data, which forks, in rp_open, before
	 * them (and refuses to once other threads run). */
	expect_kernel(rp);
	if (records_kernel(rp->reader))
		sym_prefetch_kernel(rp->syms);
	prefetch_user_files(rp);
	while ((rc = pd_reader_next(rp->reader, &ev)) == 1) {
		if (ev.type == PD_RECORD_FINISHED_ROUND) {
			if (on_round(rp, sink) < 0)
				return -1;
			continue;
		}
		u64 t = event_time(&ev);
		if (t > rp->last_time)
			rp->last_time = t;
		if (rp->opts.interval_ns && t && tick_until(rp, sink, t, true) < 0)
			return -1;
		if (on_event(rp, &ev, sink) < 0)
			return -1;
		report_progress(rp, ++count);
	}
	if (rp->opts.progress && count > 0xffff)
		rp->opts.progress(1, 0);  /* done: clear the line */
	if (rc < 0) {
		rp->summary.input_error = true;
		snprintf(rp->summary.error, sizeof(rp->summary.error), "%s", err_msg());
	}
	rp->summary.truncated = pd_reader_stats(rp->reader)->truncated;
	rp->summary.input = *pd_reader_stats(rp->reader);
	summarize_symbols(rp);
	rp->summary.unwind = rp->unwind_before;
	if (rp->unw)
		add_unwind_stats(&rp->summary.unwind, unw_dwarf_stats(rp->unw));
	/* The last interval: from the last tick to the last event, or live
	 * to the last round's time (a quiet end is part of it); never before
	 * the tick, so labels do not go back. */
	u64 end = MAX(rp->last_time, rp->round_time);
	if (rp->next_tick)
		end = MAX(end, rp->next_tick - rp->opts.interval_ns);
	if (rp->opts.interval_ns && sink->tick && sink->tick(sink->ctx, end, true) < 0)
		return -1;
	if (sink->finish && sink->finish(sink->ctx) < 0)
		return -1;
	return 0;
}

struct replay *rp_open(const struct rp_opts *opts)
{
	struct pd_reader_opts ro = { .fd = opts->live ? opts->input_fd : 0, .rounds = opts->live,
				     .tracing = opts->tracing, .own_recording = opts->live };
	struct pd_reader *reader = pd_reader_open(opts->input, &ro);
	if (!reader)
		return NULL;
	struct replay *rp = xcalloc(1, sizeof(*rp));
	rp->opts = *opts;
	rp->summary.live = opts->live;
	rp->reader = reader;
	rp->syms = sym_ctx_new(&opts->sym);
	/* Written now rather than calloc'd: a calloc'd table read before it
	 * is written faults twice per page (zero page, then a copy). */
	rp->cache = xmalloc(FRAME_CACHE_SIZE * sizeof(*rp->cache));
	memset(rp->cache, 0, FRAME_CACHE_SIZE * sizeof(*rp->cache));
	rp->next_generation = 1;
	u64map_init(&rp->threads);
	u64map_init(&rp->read_last);
	return rp;
}

void rp_resolve(struct replay *rp, struct rp_frame *f)
{
	if (!f->pending)
		return;
	f->pending = false;
	resolve_frame(rp, NULL, f);   /* kernel frames need no thread */
}

bool rp_has_callchains(struct replay *rp)
{
	for (size_t i = 0; i < pd_reader_nattrs(rp->reader); i++)
		if (pd_reader_attr(rp->reader, i)->attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			return true;
	return false;
}

void rp_set_branches(struct replay *rp, bool on)
{
	rp->opts.branches = on;
}

void rp_set_callchains(struct replay *rp, bool on)
{
	rp->opts.callchains = on;
}

void rp_set_release_files(struct replay *rp, bool on)
{
	rp->opts.release_files = on;
}

bool rp_interval(const struct replay *rp)
{
	return rp->opts.interval_ns != 0;
}

struct pd_reader *rp_reader(struct replay *rp)
{
	return rp->reader;
}

const struct rp_summary *rp_summary(struct replay *rp)
{
	summarize_symbols(rp);   /* kernel frames may be named after the run */
	return &rp->summary;
}

const char *rp_srcline(struct replay *rp, const struct rp_frame *f)
{
	return f->dso ? sym_inline_srcline(rp->syms, f->dso, f->addr, f->inline_depth) : NULL;
}

void rp_close(struct replay *rp)
{
	if (!rp)
		return;
	for (size_t i = 0; i < rp->all_maps.n; i++)
		sym_maps_free(rp->all_maps.v[i]);
	VEC_FREE(&rp->all_maps);
	for (size_t i = 0; i < rp->all_threads.n; i++)
		free(rp->all_threads.v[i]);
	VEC_FREE(&rp->all_threads);
	VEC_FREE(&rp->missing);
	u64map_free(&rp->threads);
	u64map_free(&rp->read_last);
	free(rp->cache);
	unw_dwarf_free(rp->unw);
	sym_ctx_free(rp->syms);
	pd_reader_close(rp->reader);
	free(rp);
}
