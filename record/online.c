/* online.c - unwinding user stacks while recording (-g).  Each sample's
 * user registers and stack copy are unwound as the drain takes it from
 * the ring, with the reporter's CFI machinery (unwind/), and written as an
 * ordinary callchain: the kernel part as the kernel gave it, then
 * PERF_CONTEXT_USER and the user frames; the registers and the copy are
 * dropped.  A drain that falls behind writes the raw sample instead,
 * trimmed to the bytes the kernel copied, for the reporter to unwind.
 *
 * The process maps come from the MMAP2, FORK and COMM (exec) records
 * drained and the ones synthesized at start.  Each mapped file is opened
 * when its mapping is first seen, through /proc/PID/map_files (the file
 * as mapped, even in another mount namespace or replaced on disk since),
 * and held open while any process's maps name it, so a process that
 * exits before its samples are unwound still gets them unwound (a
 * system-wide recording holds hundreds: rec_events_open has raised
 * RLIMIT_NOFILE to its hard limit).  The maps of an exited process, and
 * those an exec or a reused pid replaced, are let go of once the drain is
 * well past the exit (see "letting go" below), and with them the files
 * no maps name any more: a recording of hours beside processes that come
 * and go keeps what the live ones map.
 *
 * Why the letting go: beside copies of /bin/true started 230 times a
 * second, `record -a -g -F 99` held 19021 fds and 141 MB RSS at 120 s
 * before it, 277 fds and 35 MB after (flat from about 20 s on but for the
 * build-id list's names); `record -a -g --push URL --push-every 10s`
 * beside them, at 5/20/40/60 s: 77, 100, 125, 146 MB and 2802 to 20000
 * fds before, 56, 81, 82, 85 MB and 400 to 600 fds after.  Code in
 * anonymous memory (JIT) is unwound by frame pointer only.  Ring sizes and
 * the stack copy's size are chosen in cmd-record.c and record-internal.h
 * (REC_ONLINE_STACK: why 32 KB, and when 16 KB). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "record/record-internal.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"

#define ONLINE_MAX_FRAMES 256
#define ONLINE_OUT_BYTES 65536      /* a record's size is a u16 */
/* How far the drain must be past a process's exit before its maps go:
 * see "letting go". */
#define ONLINE_MARGIN_NS 1000000000ULL
/* How often the processes kept are looked for (see "processes whose EXIT
 * was lost"). */
#define ONLINE_LIVENESS_NS 5000000000ULL

/* One file some process maps, opened once. */
struct rec_file {
	char *path;                /* /proc/self/fd/N, for the unwinder */
	int fd;
	u32 maj, min;              /* its identity, as the mappings give it */
	u64 ino;
	u64 mark;                  /* the last sweep that found it mapped */
};

/* One process as the maps know it. */
struct rec_proc {
	struct sym_maps *maps;
	u64 born;                  /* when these maps were made */
	u64 edited;                /* the newest mmap record put in them */
	bool ended;                /* its EXIT came, or it was found gone */
	u64 missing;               /* the liveness look that last found it
				      gone (0: found, or not looked for) */
};

/* Maps to let go of once the drain is past time (see "letting go"):
 * replaced ones (maps set, pid's from born to time) or an exited
 * process's (maps NULL: pid's maps, if they are still those of a process
 * born by time). */
struct rec_retired {
	u64 time;
	u32 pid;
	struct sym_maps *maps;
	u64 born;
};

/* A side-band record waiting for the pass's others (see "the pass's
 * side-band records"): its time and where its copy is. */
struct rec_pending {
	u64 time;
	size_t off;
};

struct rec_online {
	struct unw_dwarf *unw;
	struct u64map procs;       /* pid -> struct rec_proc * */
	VEC(struct rec_retired) retired;
	u64 clock;                 /* maps generations */
	struct u64map files;       /* hash of (device, inode) -> the first
				      struct rec_file with it, 0 when it could
				      not be opened */
	VEC(struct rec_file *) all_files;
	VEC(struct rec_pending) pending;   /* side-band records of this pass ... */
	VEC(u8) pending_bytes;             /* ... and their copies */
	u64 seen;                  /* the newest record time met */
	u64 *passed;               /* per node: seen after its last pass */
	int nnodes;
	u64 swept;                 /* when files were last swept */
	u64 sweep_epoch;
	bool maps_freed;           /* since the last sweep */
	u64 liveness_epoch;        /* looks for gone processes made */
	u64 liveness_at;           /* when the last one was made (now_ns) */
	struct pd_attr *attrs;     /* one per evsel, for decoding */
	int nattrs;
	struct u64map ids;         /* kernel id -> attr index + 1 */
	u64 chain[ONLINE_MAX_FRAMES];
	u8 *out;
	bool defer_all;            /* every sample raw: --call-graph dwarf */
	struct rec_online_stats stats;
};

/* ---- processes and files -------------------------------------------------- */

static struct rec_proc *proc_get(struct rec_online *o, u32 pid)
{
	u64 *slot = u64map_get(&o->procs, pid);
	return slot ? (struct rec_proc *)(uintptr_t)*slot : NULL;
}

static struct sym_maps *proc_maps(struct rec_online *o, u32 pid)
{
	struct rec_proc *p = proc_get(o, pid);
	return p ? p->maps : NULL;
}

/* The maps a sample of pid taken at time saw: the pass read the side-band
 * records first, so execs (or a new process with the pid) may have
 * replaced them since, several times over (a shell script's pid goes
 * through env, bash and the program in a few milliseconds); the replaced
 * ones serve while they are kept. */
static struct sym_maps *maps_at(struct rec_online *o, u32 pid, u64 time)
{
	struct rec_proc *p = proc_get(o, pid);
	if (!p || time >= p->born)
		return p ? p->maps : NULL;
	for (size_t i = o->retired.n; i-- > 0;) {
		const struct rec_retired *r = &o->retired.v[i];
		if (r->pid == pid && r->maps && r->born <= time && time < r->time)
			return r->maps;
	}
	return p->maps;
}

/* Makes m pid's maps, from time on; the ones it replaces are retired. */
static struct sym_maps *proc_set(struct rec_online *o, u32 pid, struct sym_maps *m, u64 time)
{
	bool created;
	u64 *slot = u64map_slot(&o->procs, pid, &created);
	if (created)
		*slot = (u64)(uintptr_t)xcalloc(1, sizeof(struct rec_proc));
	struct rec_proc *p = (struct rec_proc *)(uintptr_t)*slot;
	if (p->maps) {
		struct rec_retired r = { time, pid, p->maps, p->born };
		VEC_PUSH(&o->retired, r);
	}
	*p = (struct rec_proc){ .maps = m, .born = time, .edited = time };
	return m;
}

static bool same_file(int fd, const struct sym_map *m)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_ino == m->ino &&
	       major(st.st_dev) == m->maj && minor(st.st_dev) == m->min;
}

int rec_open_mapped(const struct sym_map *m, u32 pid)
{
	char path[4096 + 64];
	const char *tries[3] = { path, NULL, m->path };
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	char *root = xasprintf("/proc/%u/root%s", pid, m->path);
	tries[1] = root;
	int fd = -1;
	for (int i = 0; i < 3 && fd < 0; i++) {
		fd = open(tries[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !same_file(fd, m)) {
			close(fd);
			fd = -1;
		}
	}
	free(root);
	return fd;
}

static u64 file_key(u32 maj, u32 min, u64 ino)
{
	return hash_u64(((u64)maj << 44) ^ ((u64)min << 24) ^ hash_u64(ino));
}

/* The opened file behind a mapping, or NULL when it cannot be had. */
static struct rec_file *file_of(struct rec_online *o, struct sym_map *m, u32 pid)
{
	if (m->file_known)
		return m->file;
	m->file_known = true;
	m->file = NULL;
	if (m->path[0] != '/' || !m->ino)
		return NULL;
	bool created;
	u64 *slot = u64map_slot(&o->files, file_key(m->maj, m->min, m->ino), &created);
	struct rec_file *seen = (struct rec_file *)(uintptr_t)*slot;
	if (!created && (!seen || (seen->ino == m->ino && seen->maj == m->maj &&
				   seen->min == m->min)))
		return m->file = seen;
	/* New, or another file whose identity hashes alike: that one is
	 * opened too, and only the first stays in the table. */
	int fd = rec_open_mapped(m, pid);
	if (fd < 0) {
		o->stats.files_missing++;
		return NULL;
	}
	struct rec_file *f = xmalloc(sizeof(*f));
	*f = (struct rec_file){ xasprintf("/proc/self/fd/%d", fd), fd, m->maj, m->min, m->ino,
				o->sweep_epoch };
	VEC_PUSH(&o->all_files, f);
	if (created)
		*slot = (u64)(uintptr_t)f;
	o->stats.files++;
	return m->file = f;
}

/* Whether maps already name the file (device, inode). */
static bool maps_name_file(const struct sym_maps *maps, const struct rec_online_map *in)
{
	for (size_t i = 0; maps && i < maps->v.n; i++) {
		const struct sym_map *m = &maps->v.v[i];
		if (m->ino == in->ino && m->maj == in->maj && m->min == in->min)
			return true;
	}
	return false;
}

/* The maps the unwinder needs: code, and the other segments of a file
 * mapped as code (its .eh_frame and .eh_frame_hdr sit in a read-only one
 * after the text, and libunwind reads them through the process's memory,
 * as the report's maps give it every segment).  A segment mapped before
 * the file's code (ld.so's first, covering its header) is left out, and
 * so are data files, however many a process maps.  Only the code's file
 * is opened here; the others' lookups find it by device and inode. */
void rec_online_add_map(struct rec_online *o, const struct rec_online_map *in)
{
	if (!o->unw || !in->len || in->start + in->len < in->start)
		return;
	bool code = in->prot & PROT_EXEC;
	struct sym_maps *maps = proc_maps(o, in->pid);
	if (!code && (in->path[0] != '/' || !in->ino || !maps_name_file(maps, in)))
		return;
	struct sym_map m = {
		.start = in->start, .end = in->start + in->len, .pgoff = in->pgoff,
		.path = xstrdup(in->path), .maj = in->maj, .min = in->min, .ino = in->ino,
	};
	if (code)
		file_of(o, &m, in->pid);
	if (!maps)
		maps = proc_set(o, in->pid, sym_maps_new(in->pid, &o->clock), in->time);
	sym_maps_insert(maps, &m);
	struct rec_proc *p = proc_get(o, in->pid);
	p->edited = MAX(p->edited, in->time);
}

/* A new process starts with a copy of its parent's maps.  Its FORK can
 * reach us after its first mmaps (the exec ran on a CPU whose ring this
 * pass read further): maps made after the fork are already the child's. */
static void on_fork(struct rec_online *o, u32 pid, u32 ppid, u64 time)
{
	if (!o->unw || pid == ppid)
		return;                  /* a thread shares its process's maps */
	struct rec_proc *p = proc_get(o, pid);
	if (p && p->maps && p->born >= time)
		return;
	struct sym_maps *parent = proc_maps(o, ppid);
	proc_set(o, pid, parent ? sym_maps_copy(parent, pid) : sym_maps_new(pid, &o->clock), time);
}

/* An exec starts the process's maps afresh: its new image's mmaps come
 * after.  When one of them reached us first (the exec moved to a CPU
 * whose ring this pass read earlier), the maps are kept, old and new
 * together, as they were before execs were followed. */
static void on_exec(struct rec_online *o, u32 pid, u64 time)
{
	struct rec_proc *p = o->unw ? proc_get(o, pid) : NULL;
	if (p && p->maps && p->edited <= time && p->born <= time)
		proc_set(o, pid, sym_maps_new(pid, &o->clock), time);
}

/* A process (its last thread: pid == tid) ended: its maps are let go of
 * later, when no sample of it can still come (see "letting go"). */
static void on_task_exit(struct rec_online *o, u32 pid, u32 tid, u64 time)
{
	if (!o->unw || pid != tid)
		return;
	struct rec_proc *p = proc_get(o, pid);
	if (p)
		p->ended = true;
	struct rec_retired r = { time, pid, NULL, 0 };
	VEC_PUSH(&o->retired, r);
}

/* ---- the pass's side-band records ----------------------------------------
 * Each ring holds its records in time order, but a pass reads the rings
 * one after another: a child's FORK in one CPU's ring comes before its
 * parent's exec and mmaps in another's, read after it, and the child
 * would start with no maps at all (a shell's subshells did, one in forty
 * of their samples then keeping only the sampled ip).  So a pass's
 * side-band records are copied as they come and applied together, in
 * time order, before its samples. */

/* The sample_id trailers of all the recorder's events are alike. */
static bool decode_sideband(const struct rec_online *o, const void *rec, struct pd_event *ev)
{
	return o->nattrs >= 1 && pd_decode(&o->attrs[0], rec, ev) == 0;
}

static void apply_sideband(struct rec_online *o, const void *rec)
{
	struct pd_event ev;
	if (!decode_sideband(o, rec, &ev))
		return;
	if (ev.has_time)
		o->seen = MAX(o->seen, ev.s.time);
	if (ev.type == PERF_RECORD_FORK) {
		on_fork(o, ev.u.task.pid, ev.u.task.ppid, ev.u.task.time);
	} else if (ev.type == PERF_RECORD_EXIT) {
		on_task_exit(o, ev.u.task.pid, ev.u.task.tid, ev.u.task.time);
	} else if (ev.type == PERF_RECORD_COMM && ev.u.comm.exec && ev.has_time) {
		on_exec(o, ev.u.comm.pid, ev.s.time);
	} else if (ev.type == PERF_RECORD_MMAP2 && !ev.u.mmap.build_id_size &&
		   (ev.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
		struct rec_online_map m = {
			ev.u.mmap.pid, ev.u.mmap.start, ev.u.mmap.len, ev.u.mmap.pgoff,
			ev.u.mmap.maj, ev.u.mmap.min, ev.u.mmap.prot, ev.u.mmap.ino,
			ev.u.mmap.filename, ev.s.time,
		};
		rec_online_add_map(o, &m);
	}
}

void rec_online_sideband(struct rec_online *o, const void *rec)
{
	struct pd_event ev;
	if (!o->unw || !decode_sideband(o, rec, &ev))
		return;
	u16 size = ((const struct perf_event_header *)rec)->size;
	/* A record without a time keeps its place after the one before. */
	u64 time = ev.has_time ? ev.s.time : o->pending.n ? o->pending.v[o->pending.n - 1].time : 0;
	struct rec_pending p = { time, o->pending_bytes.n };
	VEC_PUSH(&o->pending, p);
	VEC_GROW(&o->pending_bytes, o->pending_bytes.n + size);
	memcpy(o->pending_bytes.v + p.off, rec, size);
	o->pending_bytes.n += size;
}

/* By time, and those of one time in the order they came. */
static int pending_cmp(const void *a, const void *b)
{
	const struct rec_pending *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

void rec_online_sideband_flush(struct rec_online *o)
{
	if (!o->pending.n)
		return;
	qsort(o->pending.v, o->pending.n, sizeof(*o->pending.v), pending_cmp);
	for (size_t i = 0; i < o->pending.n; i++)
		apply_sideband(o, o->pending_bytes.v + o->pending.v[i].off);
	o->pending.n = 0;
	o->pending_bytes.n = 0;
}

/* ---- letting go ----------------------------------------------------------- */

/* A process's samples can reach us after its EXIT record: they wait in
 * other CPUs' rings, read later in the pass or in the next one.  A ring
 * holds every record the kernel wrote before the pass read its head, and
 * a record seen was written by then, so once every node has made a pass
 * that ended after a record of time t was seen, every sample taken
 * before t has been drained.  That time, the oldest of the nodes'
 * newest-seen at their last pass, is the drain's watermark; maps retired
 * at time T go once it passes T + ONLINE_MARGIN_NS (the margin covers
 * samples the kernel wrote a little after their timestamp, and ring
 * heads read one after another).  A sample of a process whose maps went
 * (a thread that outlived its leader, a sample from before a ring was
 * lost) finds none: it keeps its sampled ip only, counted in no_maps.
 * The files are swept at most once a second of records: one look over
 * every live mapping marks the files still named, and the others are
 * closed and forgotten by the unwinder. */

static void maps_free(struct rec_online *o, struct sym_maps *m)
{
	unw_dwarf_forget_space(o->unw, m);
	sym_maps_free(m);
	o->stats.maps_released++;
	o->maps_freed = true;
}

/* An exited process's maps, unless pid is another process's now. */
static void release_exited(struct rec_online *o, const struct rec_retired *r)
{
	struct rec_proc *p = proc_get(o, r->pid);
	if (!p || p->born > r->time)
		return;
	u64map_del(&o->procs, r->pid);
	maps_free(o, p->maps);
	free(p);
}

static void mark_files(struct sym_maps *m, u64 epoch)
{
	for (size_t i = 0; i < m->v.n; i++)
		if (m->v.v[i].file_known && m->v.v[i].file)
			((struct rec_file *)m->v.v[i].file)->mark = epoch;
}

static void file_free(struct rec_online *o, struct rec_file *f)
{
	if (o->unw)
		unw_dwarf_forget(o->unw, f);
	close(f->fd);
	free(f->path);
	free(f);
}

/* Closes the files no maps name; the (device, inode) table is made again
 * from the ones left (files that could not be opened are tried again). */
static void sweep_files(struct rec_online *o)
{
	u64 epoch = ++o->sweep_epoch;
	size_t pos = 0;
	u64 pid, val;
	while (u64map_next(&o->procs, &pos, &pid, &val))
		mark_files(((struct rec_proc *)(uintptr_t)val)->maps, epoch);
	for (size_t i = 0; i < o->retired.n; i++)
		if (o->retired.v[i].maps)
			mark_files(o->retired.v[i].maps, epoch);
	size_t kept = 0;
	for (size_t i = 0; i < o->all_files.n; i++) {
		struct rec_file *f = o->all_files.v[i];
		if (f->mark == epoch) {
			o->all_files.v[kept++] = f;
		} else {
			file_free(o, f);
			o->stats.files_closed++;
		}
	}
	o->all_files.n = kept;
	u64map_free(&o->files);
	u64map_init(&o->files);
	for (size_t i = 0; i < kept; i++) {
		struct rec_file *f = o->all_files.v[i];
		bool created;
		u64 *slot = u64map_slot(&o->files, file_key(f->maj, f->min, f->ino), &created);
		if (created)
			*slot = (u64)(uintptr_t)f;
	}
	o->maps_freed = false;
}

/* Lets go of the retired maps the watermark is past, in place. */
static void release_retired(struct rec_online *o, u64 watermark)
{
	size_t kept = 0;
	for (size_t i = 0; i < o->retired.n; i++) {
		struct rec_retired r = o->retired.v[i];
		if (r.time + ONLINE_MARGIN_NS > watermark)
			o->retired.v[kept++] = r;
		else if (r.maps)
			maps_free(o, r.maps);         /* replaced by an exec or a reused pid */
		else
			release_exited(o, &r);
	}
	o->retired.n = kept;
}

/* ---- processes whose EXIT was lost ----------------------------------------
 * An EXIT record is lost with the samples around it when a ring
 * overflows, and the process's maps and files would then be kept for the
 * rest of the recording (a 95-minute --push run beside test suites still
 * held the files of a run killed 8 minutes before).  So every
 * ONLINE_LIVENESS_NS the processes kept are looked for (task_missing).
 * One found gone twice running ended before the first look, and every
 * pass since has drained what its rings held then, its samples with it:
 * it is retired as its EXIT would retire it, at the newest time seen.
 * A pid the recorder cannot signal (EPERM) is alive; a pid taken by a new
 * process whose FORK was lost too stays, as before. */

void rec_online_check_alive(struct rec_online *o)
{
	if (!o->unw)
		return;
	u64 epoch = ++o->liveness_epoch;
	size_t pos = 0;
	u64 pid, val;
	while (u64map_next(&o->procs, &pos, &pid, &val)) {
		struct rec_proc *p = (struct rec_proc *)(uintptr_t)val;
		/* The group leader, not kill(pid): that would also find a
		 * thread of another process that took the number as its tid. */
		if (p->ended || !task_missing((u32)pid, (u32)pid)) {
			p->missing = 0;
			continue;
		}
		if (p->missing && p->missing + 1 == epoch) {
			p->ended = true;
			struct rec_retired r = { o->seen, (u32)pid, NULL, 0 };
			VEC_PUSH(&o->retired, r);
			o->stats.vanished++;
		} else {
			p->missing = epoch;
		}
	}
}

void rec_online_pass_end(struct rec_online *o, int node, int nnodes)
{
	if (!o->unw || node < 0 || node >= nnodes)
		return;
	rec_online_sideband_flush(o);
	u64 now = now_ns();
	if (now - o->liveness_at >= ONLINE_LIVENESS_NS) {
		o->liveness_at = now;
		rec_online_check_alive(o);
	}
	if (o->nnodes != nnodes) {
		o->passed = xrealloc(o->passed, (size_t)nnodes * sizeof(*o->passed));
		memset(o->passed, 0, (size_t)nnodes * sizeof(*o->passed));
		o->nnodes = nnodes;
	}
	o->passed[node] = o->seen;
	u64 watermark = o->seen;
	for (int i = 0; i < nnodes; i++)
		watermark = MIN(watermark, o->passed[i]);
	if (o->retired.n && watermark > ONLINE_MARGIN_NS)
		release_retired(o, watermark);
	if (o->maps_freed && watermark >= o->swept + ONLINE_MARGIN_NS) {
		sweep_files(o);
		o->swept = watermark;
	}
}

/* ---- unwinding ------------------------------------------------------------ */

/* Any stable address: the unwinder's key for the vdso, which it reads
 * from ember's own (the same kernel's). */
static const char vdso_key;

struct lookup {
	struct rec_online *o;
	struct sym_maps *maps;
};

/* Pseudo-files hold no code but the vdso's and anonymous memory's (JIT). */
static bool anonymous_code(const char *path)
{
	return !path[0] || !strcmp(path, "//anon") || !strncmp(path, "[anon:", 6) ||
	       !strncmp(path, "/memfd:", 7);
}

static int find_map(void *ctx, u64 addr, struct unw_map *out)
{
	struct lookup *l = ctx;
	struct sym_map *m = l->maps ? sym_maps_find(l->maps, addr) : NULL;
	if (!m)
		return -1;
	*out = (struct unw_map){ m->start, m->end, m->pgoff, m->path, NULL };
	if (!strcmp(m->path, "[vdso]")) {
		out->key = &vdso_key;
		return 0;
	}
	if (anonymous_code(m->path))
		return 0;                /* code, but no file: frame pointers only */
	struct rec_file *f = file_of(l->o, m, l->maps->pid);
	if (!f)
		return -1;
	out->path = f->path;
	out->key = f;
	return 0;
}

static const struct pd_attr *attr_of_sample(struct rec_online *o, const u8 *rec)
{
	u64 id;
	/* Every event the recorder opens has PERF_SAMPLE_IDENTIFIER, which
	 * the kernel puts first: the record names its event there. */
	memcpy(&id, rec + sizeof(struct perf_event_header), sizeof(id));
	const u64 *slot = u64map_get(&o->ids, id);
	return slot ? &o->attrs[*slot - 1] : NULL;
}

/* The sample's user stack unwound into o->chain; the count (0: none). */
static int unwind_user(struct rec_online *o, const struct pd_attr *a, const struct pd_sample *s)
{
	struct lookup l = { o, maps_at(o, s->pid, s->time) };
	if (!l.maps)
		o->stats.no_maps++;      /* gone (see "letting go"), or never seen */
	struct unw_user in = {
		.regs = s->user_regs, .regs_mask = a->attr.sample_regs_user,
		.stack = s->stack, .stack_size = MIN(s->stack_dyn_size, s->stack_size),
		.pid = s->pid, .tid = s->tid,
		.space = l.maps, .generation = l.maps ? l.maps->generation : 0,
		.find_map = find_map, .find_ctx = &l,
	};
	return unw_dwarf_user_chain(o->unw, &in, o->chain, ONLINE_MAX_FRAMES);
}

size_t rec_online_sample(struct rec_online *o, const void *rec, bool defer, const void **out)
{
	const struct pd_attr *a = attr_of_sample(o, rec);
	if (!a || !(a->attr.sample_type & PERF_SAMPLE_STACK_USER))
		return 0;
	rec_online_sideband_flush(o);    /* the maps as of this pass */
	struct pd_event ev;
	if (pd_decode(a, rec, &ev) < 0) {
		o->stats.malformed++;
		return 0;
	}
	o->seen = MAX(o->seen, ev.s.time);
	defer |= o->defer_all;
	struct pd_rewrite rw = { .keep_user_state = defer };
	bool has_user = ev.s.user_abi && ev.s.user_regs && ev.s.stack_dyn_size >= 8;
	if (has_user && !defer) {
		rw.nuser = (size_t)unwind_user(o, a, &ev.s);
		rw.user = rw.nuser ? o->chain : NULL;
	}
	size_t n = pd_sample_rewrite(a, rec, &ev.s, &rw, o->out, ONLINE_OUT_BYTES);
	if (!n)
		return 0;                /* cannot happen: the record only shrinks */
	if (defer && has_user)
		o->stats.deferred++;
	else if (rw.user)
		o->stats.unwound++;
	else
		o->stats.no_user++;
	*out = o->out;
	return n;
}

/* ---- life ----------------------------------------------------------------- */

struct rec_online *rec_online_new(const struct rec_session *s, bool unwind)
{
	struct unw_dwarf *unw = unwind ? unw_dwarf_new(UNW_BACKEND_DEFAULT) : NULL;
	if (unwind && !unw)
		return NULL;
	struct rec_online *o = xcalloc(1, sizeof(*o));
	o->liveness_at = now_ns();   /* the first look a few seconds in */
	o->unw = unw;
	/* For tests of the reporter's side of a drain that fell behind. */
	const char *all = getenv("EMBER_RECORD_DEFER");
	o->defer_all = !unwind || (all && !strcmp(all, "1"));
	u64map_init(&o->procs);
	u64map_init(&o->files);
	u64map_init(&o->ids);
	o->attrs = xcalloc((size_t)s->nevsels, sizeof(*o->attrs));
	o->nattrs = s->nevsels;
	for (int i = 0; i < s->nevsels; i++) {
		const struct rec_evsel *e = &s->evsels[i];
		pd_attr_init(&o->attrs[i], &e->attr);
		for (size_t j = 0; j < e->ids.n; j++)
			*u64map_slot(&o->ids, e->ids.v[j], NULL) = (u64)i + 1;
	}
	o->out = xmalloc(ONLINE_OUT_BYTES);
	return o;
}

const struct sym_maps *rec_online_maps_at(struct rec_online *o, u32 pid, u64 time)
{
	return maps_at(o, pid, time);
}

const struct rec_online_stats *rec_online_stats(const struct rec_online *o)
{
	return &o->stats;
}

void rec_online_free(struct rec_online *o)
{
	if (!o)
		return;
	unw_dwarf_free(o->unw);
	o->unw = NULL;
	size_t pos = 0;
	u64 pid, val;
	while (u64map_next(&o->procs, &pos, &pid, &val)) {
		struct rec_proc *p = (struct rec_proc *)(uintptr_t)val;
		sym_maps_free(p->maps);
		free(p);
	}
	for (size_t i = 0; i < o->retired.n; i++)
		sym_maps_free(o->retired.v[i].maps);
	VEC_FREE(&o->retired);
	VEC_FREE(&o->pending);
	VEC_FREE(&o->pending_bytes);
	for (size_t i = 0; i < o->all_files.n; i++)
		file_free(o, o->all_files.v[i]);
	VEC_FREE(&o->all_files);
	free(o->passed);
	u64map_free(&o->procs);
	u64map_free(&o->files);
	u64map_free(&o->ids);
	free(o->attrs);
	free(o->out);
	free(o);
}
