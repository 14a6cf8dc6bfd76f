/* events.c - turns parsed events into the attrs ember samples with, and
 * opens them per (CPU, thread), each CPU's descriptors feeding one ring. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <asm/perf_regs.h>

#include "record/record-internal.h"

int rec_add_default_event(struct pmc_list *l, bool *fell_back)
{
	*fell_back = !pmc_have_hw_pmu();
	return pmc_parse(l, *fell_back ? "cpu-clock" : "cycles");
}

/* --off-cpu: the scheduler's view (who switched out, with what stack and
 * state) plus switch records, which carry the switch-ins a per-task
 * recording cannot see through sched_switch (from idle or an untraced
 * task) and, system-wide, the switches whose sched_switch sample is lost.
 * Wakeups only when the level asks: each costs the waking task time in
 * the kernel, the most of it for its call chain.  CPU samples join only
 * when -F or -c asks for them (the default event comes first). */
int rec_add_off_cpu_events(struct rec_opts *o, bool *fell_back)
{
	if (o->events.n == 0 && (o->freq || o->period) &&
	    rec_add_default_event(&o->events, fell_back) < 0)
		return -1;
	/* format/'s sched set: the switch, then the wakeups */
	int ntps;
	const char *const *tps = pd_tracepoints(PD_TP_SCHED, &ntps);
	size_t wakeups = 0;
	int rc = pmc_parse(&o->events, tps[PD_TP_SCHED_SWITCH]);
	if (rc == 0 && o->off_cpu >= REC_OFFCPU_WAKEUPS) {
		wakeups = o->events.n;
		for (int i = PD_TP_SCHED_WAKEUP; rc == 0 && i < ntps; i++)
			rc = pmc_parse(&o->events, tps[i]);
	}
	if (rc < 0)
		return -1;
	if (o->off_cpu == REC_OFFCPU_WAKEUPS) {
		o->chainless_first = wakeups;
		o->chainless_n = o->events.n - wakeups;
	}
	o->switch_events = true;
	/* Whole stacks unless --call-graph fp says: user stacks unwound with
	 * the binaries' CFI while recording, as -g's, for Debian's programs
	 * have no frame pointers (python3 asleep: all its off-CPU time
	 * reaches main with CFI, none with frame pointers).  A storm of
	 * switches costs a 16 KB copy each: on one CPU at 71,600 switches/s
	 * a recording lost none, but live, where the view shares the CPUs,
	 * 27,292 of some 143,000 (the loss warning names --call-graph fp). */
	if (o->callgraph == REC_CG_NONE)
		o->callgraph = REC_CG_ONLINE;
	return 0;
}

/* "dev == A || dev == B" for events that carry a dev field; NULL when
 * the event has none (plug, unplug) and so cannot be filtered. */
static char *device_filter(const u32 *devs, int ndevs, const char *tp)
{
	char rel[128];
	size_t len;
	snprintf(rel, sizeof(rel), "events/block/%s/format", tp);
	char *fmt = pmc_tracefs_read(rel, &len);
	bool has_dev = fmt && strstr(fmt, "dev_t dev;");
	free(fmt);
	if (!has_dev || !ndevs)
		return NULL;
	struct strbuf sb = {0};
	for (int i = 0; i < ndevs; i++)
		sb_printf(&sb, "%sdev == %u", i ? " || " : "", devs[i]);
	return sb.s;
}

/* spec is "block:NAME", tp its NAME. */
static int add_block_event(struct rec_opts *o, const u32 *devs, int ndevs, const char *spec,
			   const char *tp)
{
	if (pmc_parse(&o->events, spec) < 0) {
		err_prefix("--block");
		return -1;
	}
	char *filter = device_filter(devs, ndevs, tp);
	int rc = filter ? pmc_set_filter(&o->events, filter) : 0;
	if (rc < 0)
		err_prefix("-d");
	free(filter);
	return rc;
}

int rec_add_block_events(struct rec_opts *o, const u32 *devs, int ndevs)
{
	if (!pmc_tracefs()) {
		err_prefix("--block");
		return -1;
	}
	int added = 0, ntps;
	const char *const *tps = pd_tracepoints(PD_TP_BLOCK, &ntps);
	for (int i = 0; i < ntps; i++) {
		const char *tp = strchr(tps[i], ':') + 1;
		if (pmc_tracepoint_id("block", tp) < 0)
			continue;
		if (ndevs && (i == PD_TP_PLUG || i == PD_TP_UNPLUG))
			continue;
		if (add_block_event(o, devs, ndevs, tps[i], tp) < 0)
			return -1;
		added++;
	}
	if (!added) {
		err_set("--block: this kernel has no block tracepoints: build it "
			"with CONFIG_BLK_DEV_IO_TRACE or CONFIG_TRACEPOINTS");
		return -1;
	}
	o->block = true;
	return 0;
}

u64 rec_max_sample_rate(void)
{
	char *t = read_text_file("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
	u64 v = 0;
	if (t) {
		t[strcspn(t, "\n")] = '\0';
		if (parse_u64(t, &v) < 0)
			v = 0;
	}
	free(t);
	return v;
}

int *rec_fd_slot(struct rec_session *s, int ci, int ti, int ei)
{
	return &s->fds[((size_t)ci * s->nthreads + ti) * s->nevsels + ei];
}

static bool is_tracepoint(const struct rec_evsel *e)
{
	return e->attr.type == PERF_TYPE_TRACEPOINT;
}

/* Tracepoints record every hit unless asked otherwise, as perf does; the
 * rest sample at -F (clamped to the kernel's limit) or every -c events. */
static void config_period(struct rec_session *s, struct rec_evsel *e)
{
	const struct rec_opts *o = s->o;
	/* --off-cpu needs every switch and wakeup, --block every I/O event,
	 * even beside -F or -c. */
	if (is_tracepoint(e) && (o->off_cpu || o->block)) {
		e->attr.sample_period = 1;
		e->attr.freq = 0;
		return;
	}
	if (o->period || ((is_tracepoint(e) || e->ev->every_hit) && !o->freq)) {
		e->attr.sample_period = o->period ? o->period : 1;
		e->attr.freq = 0;
		return;
	}
	u64 freq = o->freq ? o->freq : REC_DEFAULT_FREQ;
	u64 max = rec_max_sample_rate();
	if (max && freq > max) {
		rec_note(s, "-F %llu exceeds the kernel's limit; sampling at %llu Hz "
			 "(raise /proc/sys/kernel/perf_event_max_sample_rate)",
			 (unsigned long long)freq, (unsigned long long)max);
		freq = max;
	}
	e->attr.freq = 1;
	e->attr.sample_freq = freq;
}

/* --off-cpu's wakeups below the wakers level: a call chain is most of a
 * tracepoint sample's cost in the kernel, and only waker stacks use it. */
static bool chainless(const struct rec_session *s, int ei)
{
	size_t i = (size_t)ei;
	return i >= s->o->chainless_first && i - s->o->chainless_first < s->o->chainless_n;
}

/* --tool's events that read strings from the user stack. */
static bool snapshot(const struct rec_session *s, int ei)
{
	size_t i = (size_t)ei;
	return i >= s->o->snap_first && i - s->o->snap_first < s->o->snap_n;
}

/* -g's copy: deep where the ring holds REC_ONLINE_RING_MS of deep copies
 * at the event's frequency, else smaller (REC_ONLINE_FAST_STACK). */
static u32 online_stack_bytes(const struct rec_session *s, const struct rec_evsel *e)
{
	if (!e->attr.freq || !e->attr.sample_freq || is_tracepoint(e))
		return REC_ONLINE_FAST_STACK;
	u64 ring = (u64)s->o->mmap_pages * (u64)sysconf(_SC_PAGESIZE);
	u64 held_ms = ring * 1000 / ((u64)e->attr.sample_freq * REC_ONLINE_STACK);
	return held_ms >= REC_ONLINE_RING_MS ? REC_ONLINE_STACK : REC_ONLINE_FAST_STACK;
}

static void config_sample_type(struct rec_session *s, int ei)
{
	struct rec_evsel *e = &s->evsels[ei];
	struct perf_event_attr *a = &e->attr;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_IDENTIFIER;
	if (is_tracepoint(e))
		a->sample_type |= PERF_SAMPLE_RAW;
	if (chainless(s, ei))
		return;
	if (snapshot(s, ei) && s->o->callgraph == REC_CG_NONE) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = 1ULL << PERF_REG_X86_SP;
		a->sample_stack_user = s->o->snap_bytes;
		return;
	}
	if (s->o->callgraph != REC_CG_NONE)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->o->callgraph == REC_CG_DWARF || s->o->callgraph == REC_CG_ONLINE) {
		/* The kernel part of the chain still comes from the kernel;
		 * the user part is unwound from regs and stack, offline or
		 * (online) as the drain takes the sample. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = REC_X86_64_REGS_USER;
		a->sample_stack_user = s->o->stack_bytes ? s->o->stack_bytes
			: s->o->callgraph != REC_CG_ONLINE ? REC_DEFAULT_STACK
			: online_stack_bytes(s, e);
		a->exclude_callchain_user = 1;
	} else if (s->o->callgraph == REC_CG_FP && !s->o->no_leaf_fix &&
		   (!is_tracepoint(e) || s->o->off_cpu)) {
		/* Leaf-frame repair: a few hundred bytes from the user sp let
		 * the report find a frameless leaf's return address with its
		 * CFI.  No REGS_USER: with both, perf would unwind the copy
		 * as a dwarf stack and append its frames to the chain.  Of
		 * the tracepoints, only the scheduler's under --off-cpu: a
		 * task blocks inside a frameless libc wrapper (read, poll,
		 * futex), and without the snapshot the function that called
		 * it, the one that blocked, is missing from every stack. */
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		a->sample_stack_user = is_tracepoint(e) ? REC_OFFCPU_LEAF_STACK : REC_LEAF_STACK;
	}
}

/* Side-band records go to one event per ring (per task for task events)
 * so that each appears once in the file. */
static void config_sideband(struct rec_session *s, struct perf_event_attr *a)
{
	a->mmap = 1;
	a->mmap2 = 1;
	/* No attr.build_id: the kernel (6.18 here) leaves the MMAP2 record's
	 * build-id flag set in the record it hands the next session's
	 * events, so a recording of ours would give a perf running beside
	 * it device numbers read as build-ids (perf 6.1 then aborts on its
	 * file).  The build-ids are read from the files at the end instead,
	 * as perf does (rec_bids_write). */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = s->o->switch_events;
	/* DWARF unwinding reads unwind tables through data mappings too:
	 * perf 6.1 unwinds a sample -g left raw no further than its first
	 * frame without them (0 of 1011 python3 samples reached main, 1018
	 * with them). */
	a->mmap_data = rec_copies_stacks(s->o) || s->o->snap_n;   /* --tool: literals */
}

static void config_one(struct rec_session *s, int ei)
{
	struct rec_evsel *e = &s->evsels[ei];
	struct perf_event_attr *a = &e->attr;
	bool leader = e->ev->group == ei;

	*a = e->ev->attr;
	a->size = sizeof(*a);
	config_period(s, e);
	config_sample_type(s, ei);
	a->sample_id_all = 1;
	a->read_format = PERF_FORMAT_ID;
	/* Wake the drain at a quarter full: room to spare while it runs. */
	a->watermark = 1;
	a->wakeup_watermark = (u32)((u64)s->o->mmap_pages * sysconf(_SC_PAGESIZE) / 4);
	if (s->threads[0] != -1)
		a->inherit = s->o->tids == NULL;
	if (s->child.pid && s->threads[0] == s->child.pid && leader) {
		a->disabled = 1;
		a->enable_on_exec = 1;
	} else if (leader && rec_copies_stacks(s->o)) {
		/* A sample with a stack copy is 8 to 16 KB: at -F 4999 the
		 * ring would fill in 50 ms, before synthesizing a busy
		 * machine's processes is done.  Enabled once it is, as perf
		 * does (rec_events_enable). */
		a->disabled = 1;
	}
	if (ei == 0)
		config_sideband(s, a);
}

static int fit_precise(struct rec_session *s, struct rec_evsel *e)
{
	if (!e->attr.precise_ip)
		return 0;
	int want = e->attr.precise_ip;
	int got = pmc_fit_precise(&e->attr);
	if (got < 0) {
		pmc_explain_open_error(e->ev, EOPNOTSUPP);
		return -1;
	}
	if (got < want && e->ev->user_precise && !e->ev->precise_max)
		rec_note(s, "%s: precise level %d refused, using %d", e->ev->name,
			 want, got);
	return 0;
}

int rec_events_setup(struct rec_session *s)
{
	const struct pmc_list *l = &s->o->events;
	s->nevsels = (int)l->n;
	s->evsels = xcalloc(l->n, sizeof(*s->evsels));
	for (int i = 0; i < s->nevsels; i++) {
		s->evsels[i].ev = &l->v[i];
		config_one(s, i);
		if ((s->evsels[i].ev->user_precise || s->evsels[i].ev->precise_max) &&
		    fit_precise(s, &s->evsels[i]) < 0)
			return -1;
	}
	return 0;
}

static int open_fd(struct rec_session *s, int ci, int ti, int ei)
{
	struct rec_evsel *e = &s->evsels[ei];
	int leader = e->ev->group;
	int group_fd = leader != ei ? *rec_fd_slot(s, ci, ti, leader) : -1;
	return (int)syscall(SYS_perf_event_open, &e->attr, s->threads[ti],
			    s->cpus[ci], group_fd, PERF_FLAG_FD_CLOEXEC);
}

static int set_filter(struct rec_session *s, int fd, int ei)
{
	const struct pmc_event *ev = s->evsels[ei].ev;
	if (!ev->filter || ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ev->filter) == 0)
		return 0;
	err_set("filter '%s' on %s: refused by the kernel; check the field names "
		"in events/%s/%s/format", ev->filter, ev->name,
		ev->tp_system ? ev->tp_system : "?", ev->tp_name ? ev->tp_name : "?");
	s->fail = REC_FAIL_USAGE;
	return -1;
}

/* Hooks a freshly opened fd to its CPU's ring, mapping the ring on the
 * first fd of that CPU. */
static int attach_to_ring(struct rec_session *s, int ci, int fd)
{
	struct rec_ring *r = &s->rings[ci];
	if (!r->base)
		return rec_ring_map(r, fd, s->cpus[ci], s->o->mmap_pages);
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
		err_set_errno("redirecting events of CPU %d into one ring", s->cpus[ci]);
		return -1;
	}
	return 0;
}

/* As perf does: where perf_event_paranoid forbids kernel samples of a
 * task, record its user space rather than nothing. */
static bool fall_back_to_user(struct rec_session *s, int ti, int ei)
{
	struct perf_event_attr *a = &s->evsels[ei].attr;
	if ((errno != EACCES && errno != EPERM) || a->exclude_kernel ||
	    s->threads[ti] == -1)
		return false;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	rec_note(s, "%s: kernel samples not permitted (perf_event_paranoid); "
		 "recording user space only", s->evsels[ei].ev->name);
	return true;
}

static int open_one(struct rec_session *s, int ci, int ti, int ei)
{
	int fd = open_fd(s, ci, ti, ei);
	if (fd < 0 && fall_back_to_user(s, ti, ei))
		fd = open_fd(s, ci, ti, ei);
	if (fd < 0) {
		/* A thread of -p may exit between listing and opening. */
		if (errno == ESRCH && s->o->pids && s->nthreads > 1)
			return 0;
		if (errno == ESRCH)
			s->fail = REC_FAIL_USAGE;
		pmc_explain_open_error(s->evsels[ei].ev, errno);
		return -1;
	}
	*rec_fd_slot(s, ci, ti, ei) = fd;
	u64 id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		err_set_errno("%s: reading the event id", s->evsels[ei].ev->name);
		return -1;
	}
	VEC_PUSH(&s->evsels[ei].ids, id);
	if (set_filter(s, fd, ei) < 0)
		return -1;
	return attach_to_ring(s, ci, fd);
}

int rec_events_open(struct rec_session *s)
{
	size_t n = (size_t)s->ncpus * s->nthreads * s->nevsels;
	fd_limit_raise();
	s->fds = xmalloc(n * sizeof(int));
	for (size_t i = 0; i < n; i++)
		s->fds[i] = -1;
	s->rings = xcalloc(s->ncpus, sizeof(*s->rings));
	for (int ci = 0; ci < s->ncpus; ci++)
		for (int ti = 0; ti < s->nthreads; ti++)
			for (int ei = 0; ei < s->nevsels; ei++)
				if (open_one(s, ci, ti, ei) < 0)
					return -1;
	for (int ci = 0; ci < s->ncpus; ci++)
		if (!s->rings[ci].base) {
			err_set("no event could be opened: every target thread has exited");
			s->fail = REC_FAIL_USAGE;
			return -1;
		}
	return 0;
}

int rec_events_enable(struct rec_session *s)
{
	for (int ci = 0; ci < s->ncpus; ci++)
		for (int ti = 0; ti < s->nthreads; ti++)
			for (int ei = 0; ei < s->nevsels; ei++) {
				int fd = *rec_fd_slot(s, ci, ti, ei);
				if (fd < 0 || !s->evsels[ei].attr.disabled ||
				    s->evsels[ei].attr.enable_on_exec)
					continue;
				if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
					err_set_errno("enabling %s on CPU %d",
						      s->evsels[ei].ev->name, s->cpus[ci]);
					return -1;
				}
			}
	return 0;
}

void rec_events_close(struct rec_session *s)
{
	if (s->rings)
		for (int ci = 0; ci < s->ncpus; ci++)
			rec_ring_unmap(&s->rings[ci]);
	size_t n = s->fds ? (size_t)s->ncpus * s->nthreads * s->nevsels : 0;
	for (size_t i = 0; i < n; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->fds);
	s->fds = NULL;
	free(s->rings);
	s->rings = NULL;
}
