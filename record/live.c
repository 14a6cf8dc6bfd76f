/* live.c - a recording for a live view: the session of session.c run on a
 * thread of its own, its stream written into a pipe that the view's replay
 * reads in the same process (and kept in a file too with an output).
 *
 * Targets and events are opened in the caller's thread (errors come at
 * once); start, run and finish run on the thread, the stream variant
 * written into the pipe, or into the -o file with every byte teed to the
 * pipe (pd_writer_tee: the file is the stream the view read, so `report
 * -i FILE` prints the same).  With rec_opts.live the drain wakes every 100
 * ms and writes a FINISHED_ROUND after every pass, data or not: the
 * replay's clock.  A tool's recording sets its self-filter (common_pid !=
 * ember, rec_tool_exclude_self in record/tools.c) on the thread before it
 * starts, since the kernel takes one filter per event and the recorder's
 * own tid is known only then. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/record-internal.h"
#include "record/record.h"

struct rec_live {
	struct rec_opts o;
	struct rec_session *s;
	int fd;                    /* the pipe's write end, ours to close */
	pthread_t thread;
	bool thread_started;
	int result;                /* the thread's: 0 or -1 */
	bool usage;
	char err[512];             /* its message (err_msg is per thread) */
};

/* A tool's events, as record --tool NAME [-e ...] chooses them. */
static int live_tool_events(struct rec_opts *o, const struct rec_live_opts *lo)
{
	o->freq = 0;                  /* every hit, as record --tool */
	/* o->callgraph NONE: rec_tool_add says (stackcount: as -g) */
	o->tool = lo->tool;
	for (size_t i = 0; i < lo->nevents; i++)
		if (pmc_parse(&o->events, lo->events[i]) < 0)
			return -1;
	return rec_tool_add(o, lo->tool);
}

/* The events of the kind, and the ring size record would choose. */
static int live_events(struct rec_live *l, const struct rec_live_opts *lo)
{
	struct rec_opts *o = &l->o;
	bool fell_back;
	o->freq = lo->freq ? lo->freq : REC_DEFAULT_FREQ;
	o->callgraph = lo->callgraph;
	o->mmap_pages = REC_DEFAULT_PAGES;
	switch (lo->kind) {
	case REC_LIVE_SAMPLES:
		if (o->callgraph == REC_CG_ONLINE)
			o->mmap_pages = REC_STACK_PAGES / 4;   /* 1 MiB: stack copies */
		return rec_add_default_event(&o->events, &fell_back);
	case REC_LIVE_SCHED:
		o->freq = 0;          /* switches and wakeups, no CPU samples */
		o->off_cpu = REC_OFFCPU_WAKEUPS;
		o->mmap_pages = 512;  /* 2 MiB: switches come by the thousand */
		if (rec_add_off_cpu_events(o, &fell_back) < 0)
			return -1;
		o->callgraph = REC_CG_NONE;   /* latency needs no stacks */
		return 0;
	case REC_LIVE_OFFCPU:
	case REC_LIVE_OFFCPU_WAKERS:
		o->freq = lo->freq;   /* CPU samples only when asked, as record's */
		o->off_cpu = lo->kind == REC_LIVE_OFFCPU ? REC_OFFCPU_SWITCHES : REC_OFFCPU_WAKERS;
		if (rec_add_off_cpu_events(o, &fell_back) < 0)
			return -1;
		/* 2 MiB of frame-pointer chains; stack copies (16 KB a
		 * switch) get record's rings. */
		o->mmap_pages = o->callgraph == REC_CG_ONLINE
			? rec_stack_pages(REC_STACK_PAGES) : 512;
		return 0;
	case REC_LIVE_TOOL:
		return live_tool_events(o, lo);
	case REC_LIVE_BLOCK:
		o->freq = 0;          /* block events only, as record --block -F 0 */
		/* 2 MiB: a busy disk's events come in bursts; 4 MiB, as record
		 * --block -g, with the submitters' stacks. */
		o->mmap_pages = o->callgraph == REC_CG_ONLINE ? REC_STACK_PAGES : 512;
		/* Completions run in interrupts and other tasks' time. */
		if (lo->npids || lo->ntids) {
			err_set("block I/O completes outside the task: record system-wide "
				"(-a, or a command) or with -C");
			return -1;
		}
		if (!o->cpus)
			o->system_wide = true;   /* with a command too, as record --block */
		return rec_add_block_events(o, lo->devs, lo->ndevs);
	}
	return 0;
}

u32 rec_stack_pages(u32 want)
{
	if (geteuid() != 0)
		return REC_DEFAULT_PAGES;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	u64 fit = REC_STACK_RINGS_MAX / (u64)(ncpus > 0 ? ncpus : 1) / (u64)sysconf(_SC_PAGESIZE);
	u32 pages = want;
	while (pages > REC_DEFAULT_PAGES && pages > fit)
		pages /= 2;
	return pages;
}

int rec_parse_pages(const char *arg, u32 *out)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	unsigned long long page = 4096, mult = 0;
	switch (*end) {
	case '\0': mult = page; break;
	case 'k': case 'K': mult = 1ULL << 10; break;
	case 'm': case 'M': mult = 1ULL << 20; break;
	case 'g': case 'G': mult = 1ULL << 30; break;
	}
	if (end == arg || !mult || (*end && end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB"))) {
		err_set("give pages (a power of two) or a size like 512K");
		return -1;
	}
	unsigned long long pages = v * mult / page;
	if (pages == 0 || (pages & (pages - 1)) || pages > (1ULL << 20)) {
		err_set("the ring must be a power of two pages (1, 2, 4, ... 1048576)");
		return -1;
	}
	*out = (u32)pages;
	return 0;
}

static void copy_targets(struct rec_opts *o, const struct rec_live_opts *lo)
{
	o->system_wide = lo->system_wide;
	if (lo->ncpus) {
		o->cpus = xmalloc((size_t)lo->ncpus * sizeof(int));
		memcpy(o->cpus, lo->cpus, (size_t)lo->ncpus * sizeof(int));
		o->ncpus = lo->ncpus;
	}
	if (lo->npids) {
		o->pids = xmalloc((size_t)lo->npids * sizeof(pid_t));
		memcpy(o->pids, lo->pids, (size_t)lo->npids * sizeof(pid_t));
		o->npids = lo->npids;
	}
	if (lo->ntids) {
		o->tids = xmalloc((size_t)lo->ntids * sizeof(pid_t));
		memcpy(o->tids, lo->tids, (size_t)lo->ntids * sizeof(pid_t));
		o->ntids = lo->ntids;
	}
	o->command = lo->command;
	if (!o->pids && !o->tids && !o->command && !o->cpus)
		o->system_wide = true;
}

static void *live_thread(void *arg)
{
	struct rec_live *l = arg;
	struct rec_session *s = l->s;
	/* A tool's tracepoints leave out this process's hits: the view's
	 * thread's and, now that it runs, this one's. */
	if ((l->o.tool && rec_tool_exclude_self(s) < 0) || rec_start(s) < 0 ||
	    rec_run(s) < 0 || rec_finish(s) < 0) {
		snprintf(l->err, sizeof(l->err), "%s", err_msg());
		l->usage = s->fail == REC_FAIL_USAGE;
		l->result = -1;
		rec_cleanup_failed(s);
	}
	close(l->fd);              /* the view reads to the end */
	l->fd = -1;
	return NULL;
}

static void live_free_opts(struct rec_live *l)
{
	rec_probes_remove(&l->o.probes);   /* after the session's descriptors */
	pmc_list_free(&l->o.events);
	free(l->o.cpus);
	free(l->o.pids);
	free(l->o.tids);
}

struct rec_live *rec_live_start(const struct rec_live_opts *lo, bool *usage)
{
	struct rec_live *l = xcalloc(1, sizeof(*l));
	l->fd = lo->fd;
	*usage = false;
	copy_targets(&l->o, lo);
	l->o.live = true;
	l->o.live_fd = lo->fd;
	l->o.output = lo->output;
	l->o.duration = lo->duration;
	/* Without a file there is nothing for the build-id cache to serve. */
	l->o.no_buildid_cache = !lo->output;
	if (live_events(l, lo) < 0) {
		*usage = true;
		goto fail;
	}
	if (lo->mmap_pages)
		l->o.mmap_pages = lo->mmap_pages;   /* --mmap-pages over the kind's */
	l->s = rec_session_new(&l->o, lo->stop, lo->poll_mask);
	if (rec_prepare(l->s) < 0) {
		*usage = l->s->fail == REC_FAIL_USAGE;
		rec_cleanup_failed(l->s);
		goto fail;
	}
	if (pthread_create(&l->thread, NULL, live_thread, l) != 0) {
		err_set("cannot start the recording thread");
		rec_cleanup_failed(l->s);
		goto fail;
	}
	l->thread_started = true;
	return l;
fail:
	rec_live_free(l);
	return NULL;
}

int rec_live_finish(struct rec_live *l, bool *usage)
{
	if (l->thread_started) {
		pthread_join(l->thread, NULL);
		l->thread_started = false;
	}
	*usage = l->usage;
	if (l->result < 0) {
		err_set("%s", l->err);
		return -1;
	}
	return 0;
}

const char *rec_live_note(struct rec_live *l, size_t i)
{
	return l->s && i < l->s->notes.n ? l->s->notes.v[i] : NULL;
}

int rec_live_command_status(const struct rec_live *l)
{
	if (!l->s)
		return 0;
	struct child_end e = child_end_of(&l->s->child);
	if (!e.ran)
		return 0;
	if (WIFEXITED(e.status))
		return WEXITSTATUS(e.status);
	bool ours = WIFSIGNALED(e.status) && (e.sent >> WTERMSIG(e.status) & 1);
	if (!WIFSIGNALED(e.status) || ours || stop_signal())
		return 0;
	return 128 + WTERMSIG(e.status);
}

void rec_live_free(struct rec_live *l)
{
	if (!l)
		return;
	if (l->thread_started)
		pthread_join(l->thread, NULL);
	if (l->fd >= 0)
		close(l->fd);
	rec_session_free(l->s);
	live_free_opts(l);
	free(l);
}
