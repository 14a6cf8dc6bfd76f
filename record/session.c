/* session.c - a recording from start to end: targets, events and rings,
 * the output file, synthesis, the drain loop, and the closing features;
 * and on failure, leaving no file that looks complete when it is not. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/record-internal.h"


/* A recording written to a character device (-o /dev/null: a live view
 * or a push that keeps nothing) has no reader to find its binaries
 * later: its files are not copied into the build-id cache, as with -N,
 * nor held open until the end for it. */
static bool output_discarded(const char *path)
{
	struct stat st;
	return path && strcmp(path, "-") && stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}
struct rec_session *rec_session_new(const struct rec_opts *o,
				    volatile sig_atomic_t *stop,
				    const sigset_t *poll_mask)
{
	struct rec_session *s = xcalloc(1, sizeof(*s));
	s->o = o;
	s->stop = stop;
	s->poll_mask = *poll_mask;
	s->stop_efd = -1;
	s->child.go_fd = s->child.err_fd = s->child.pidfd = -1;
	s->fail = REC_FAIL_RUNTIME;
	pthread_mutex_init(&s->wlock, NULL);
	rec_bids_init(&s->bids);
	if (o->tool_note[0])
		rec_note(s, "%s", o->tool_note);
	s->no_cache = o->no_buildid_cache || output_discarded(o->output);
	s->bids.read_now = s->no_cache;
	s->bids.kernel_only = o->live && !o->output;
	return s;
}

void rec_note(struct rec_session *s, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = xstrdup(fmt);
	va_end(ap);
	VEC_PUSH(&s->notes, msg);
}

static int usage_fail(struct rec_session *s)
{
	s->fail = REC_FAIL_USAGE;
	return -1;
}

static void add_thread(struct rec_session *s, pid_t tid)
{
	s->threads = xrealloc(s->threads, (size_t)(s->nthreads + 1) * sizeof(pid_t));
	s->threads[s->nthreads++] = tid;
}

static void add_target_pidfd(struct rec_session *s, pid_t pid, bool thread)
{
	int fd = child_pidfd_open(pid, thread);
	if (fd < 0)
		return;                 /* then hang-ups tell us instead */
	s->target_pidfds = xrealloc(s->target_pidfds,
				    (size_t)(s->ntarget_pidfds + 1) * sizeof(int));
	s->target_pidfds[s->ntarget_pidfds++] = fd;
}

static int targets_pids(struct rec_session *s)
{
	for (int i = 0; i < s->o->npids; i++) {
		pid_t *tids;
		int n;
		if (rec_threads_of(s->o->pids[i], &tids, &n) < 0)
			return usage_fail(s);
		for (int j = 0; j < n; j++)
			add_thread(s, tids[j]);
		free(tids);
		add_target_pidfd(s, s->o->pids[i], false);
	}
	return 0;
}

static int targets_tids(struct rec_session *s)
{
	for (int i = 0; i < s->o->ntids; i++) {
		char path[64];
		pid_t tid = s->o->tids[i];
		snprintf(path, sizeof(path), "/proc/%d/status", tid);
		if (access(path, F_OK) < 0) {
			err_set("no such thread %d: check it with ps -eL", tid);
			return usage_fail(s);
		}
		add_thread(s, tid);
		add_target_pidfd(s, tid, true);
	}
	return 0;
}

/* A command alone is followed as a task tree; with -a or -C it only says
 * how long to record the whole system (or those CPUs). */
static int targets_command(struct rec_session *s)
{
	if (child_command_check(s->o->command[0]) < 0)
		return usage_fail(s);
	sigset_t child_mask = s->poll_mask;
	/* A live tool's lines are its standard output: the command's go to
	 * standard error, as under record -o -. */
	bool stdout_taken = (s->o->output && !strcmp(s->o->output, "-")) ||
			    (s->o->live && s->o->tool);
	if (child_fork(&s->child, s->o->command, &child_mask, stdout_taken) < 0)
		return -1;
	add_thread(s, s->o->system_wide || s->o->cpus ? -1 : s->child.pid);
	return 0;
}

static int choose_targets(struct rec_session *s)
{
	const struct rec_opts *o = s->o;
	if (o->cpus) {
		s->cpus = xmalloc((size_t)o->ncpus * sizeof(int));
		memcpy(s->cpus, o->cpus, (size_t)o->ncpus * sizeof(int));
		s->ncpus = o->ncpus;
	} else if ((s->ncpus = cpus_online(&s->cpus)) <= 0) {
		return -1;
	}
	if (o->pids)
		return targets_pids(s);
	if (o->tids)
		return targets_tids(s);
	if (o->command)
		return targets_command(s);
	add_thread(s, -1);
	return 0;
}

int rec_prepare(struct rec_session *s)
{
	if (choose_targets(s) < 0 || rec_events_setup(s) < 0 ||
	    rec_events_open(s) < 0 || rec_nodes_setup(s) < 0)
		return -1;
	if (rec_copies_stacks(s->o) &&
	    !(s->online = rec_online_new(s, s->o->callgraph == REC_CG_ONLINE)))
		return -1;
	return 0;
}

/* A live view's stream: to its pipe alone, or kept in the output file
 * (the stream variant) with every byte also going to the pipe. */
static int open_live_output(struct rec_session *s)
{
	if (!s->o->output) {
		s->w = pd_writer_open_fd(s->o->live_fd, "the live view's pipe");
		return 0;
	}
	s->w = pd_writer_open(s->o->output, true);
	if (!s->w)
		return -1;
	s->output_created = true;
	pd_writer_tee(s->w, s->o->live_fd);
	return 0;
}

/* perf's habit: the previous recording survives as FILE.old. */
static int open_output(struct rec_session *s)
{
	const char *path = s->o->output;
	struct stat st;
	if (s->o->live && !path)
		return open_live_output(s);
	if (s->o->to_fd) {
		s->w = pd_writer_open_fd(s->o->out_fd, path);
		return 0;
	}
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0) {
		char *old = xasprintf("%s.old", path);
		if (rename(path, old) < 0) {
			err_set_errno("renaming %s to %s", path, old);
			free(old);
			return -1;
		}
		s->old_renamed = old;
	}
	if (s->o->live)
		return open_live_output(s);
	s->w = pd_writer_open(path, false);
	if (!s->w)
		return -1;
	s->output_created = strcmp(path, "-") != 0;
	return 0;
}

/* -z: a batch is a ring's worth of records at most, as perf compresses
 * one ring's data at a time, so the file's mmap size is the ring's. */
static int set_compression(struct rec_session *s)
{
	u64 ring = (u64)s->o->mmap_pages * (u64)sysconf(_SC_PAGESIZE);
	return pd_writer_set_compression(s->w, s->o->zstd_level, (u32)MIN(ring, 1u << 30));
}

static int write_head(struct rec_session *s)
{
	if (s->o->zstd_level && set_compression(s) < 0)
		return -1;
	for (int i = 0; i < s->nevsels; i++) {
		struct rec_evsel *e = &s->evsels[i];
		if (pd_writer_add_attr(s->w, &e->attr, e->ev->name, e->ids.v, e->ids.n) < 0)
			return -1;
	}
	if (rec_write_machine_features(s) < 0 || rec_write_tracing_data(s) < 0)
		return -1;
	return pd_writer_begin(s->w);
}

static bool needs_proc_synthesis(const struct rec_session *s)
{
	return s->threads[0] == -1 || s->o->pids || s->o->tids;
}

static int start_command(struct rec_session *s)
{
	if (child_exec(&s->child) == 0)
		return 0;
	if (errno == ENOENT || errno == EACCES || errno == ENOEXEC)
		s->fail = REC_FAIL_USAGE;
	child_reap(&s->child, true, NULL);
	return -1;
}

int rec_start(struct rec_session *s)
{
	if (open_output(s) < 0 || write_head(s) < 0 || rec_synth_kernel(s) < 0)
		return -1;
	if (needs_proc_synthesis(s) && rec_synth_procs(s) < 0)
		return -1;
	if (pd_writer_finished_round(s->w) < 0 || rec_events_enable(s) < 0)
		return -1;
	if (s->child.pid && start_command(s) < 0)
		return -1;
	s->started = true;
	return 0;
}

int rec_run(struct rec_session *s)
{
	return rec_loop(s);
}

static void sum_tallies(struct rec_session *s)
{
	struct rec_tally *t = &s->total;
	for (int i = 0; i < s->nnodes; i++) {
		const struct rec_tally *n = &s->nodes[i].tally;
		t->samples += n->samples;
		t->lost += n->lost;
		t->throttles += n->throttles;
		if (n->first_time && (!t->first_time || n->first_time < t->first_time))
			t->first_time = n->first_time;
		t->last_time = MAX(t->last_time, n->last_time);
	}
}

int rec_finish(struct rec_session *s)
{
	if (rec_drain_all(s) < 0)
		return -1;
	sum_tallies(s);
	if (s->total.samples &&
	    pd_writer_feat_sample_time(s->w, s->total.first_time, s->total.last_time) < 0)
		return -1;
	if (rec_bids_write(&s->bids, s->w) < 0)
		return -1;
	s->total.bytes = pd_writer_data_size(s->w);
	pd_writer_compressed(s->w, &s->total.zstd_in, &s->total.zstd_out);
	struct pd_writer *w = s->w;
	s->w = NULL;
	if (pd_writer_close(w) < 0)
		return -1;
	s->output_created = false;
	rec_cache_fill(s);
	return 0;
}

/* Gives a still-running command a moment to take SIGINT, then kills it. */
static void end_child(struct held_child *c)
{
	if (!c->pid || c->exited)
		return;
	if (c->go_fd >= 0) {            /* never released: it exits itself */
		child_release(c);
		return;
	}
	child_kill(c, SIGINT);
	for (int i = 0; i < 100 && child_reap(c, false, NULL) == 0; i++)
		usleep(10000);
	if (!c->exited) {
		child_kill(c, SIGKILL);
		child_reap(c, true, NULL);
	}
}

void rec_cleanup_failed(struct rec_session *s)
{
	end_child(&s->child);
	if (s->w) {
		if (s->started) {
			sum_tallies(s);
			s->total.bytes = pd_writer_data_size(s->w);
		}
		pd_writer_abort(s->w);
		s->w = NULL;
	}
	if (s->started)
		return;         /* what was captured stays, readable */
	if (s->output_created)
		unlink(s->o->output);
	if (s->old_renamed && s->o->output)
		rename(s->old_renamed, s->o->output);
	s->output_created = false;
}

void rec_session_free(struct rec_session *s)
{
	if (!s)
		return;
	rec_nodes_free(s);
	rec_events_close(s);
	for (int i = 0; i < s->nevsels; i++)
		VEC_FREE(&s->evsels[i].ids);
	free(s->evsels);
	child_release(&s->child);
	for (int i = 0; i < s->ntarget_pidfds; i++)
		close(s->target_pidfds[i]);
	free(s->target_pidfds);
	free(s->cpus);
	free(s->threads);
	free(s->old_renamed);
	for (size_t i = 0; i < s->notes.n; i++)
		free(s->notes.v[i]);
	VEC_FREE(&s->notes);
	rec_bids_free(&s->bids);
	rec_online_free(s->online);
	pthread_mutex_destroy(&s->wlock);
	free(s);
}

/* ---- what the command reports (record.h) ---- */

const char *rec_session_note(const struct rec_session *s, size_t i)
{
	return i < s->notes.n ? s->notes.v[i] : NULL;
}

enum rec_fail rec_session_failure(const struct rec_session *s)
{
	return s->fail;
}

bool rec_session_started(const struct rec_session *s)
{
	return s->started;
}

const struct rec_tally *rec_session_total(const struct rec_session *s)
{
	return &s->total;
}

const struct rec_online_stats *rec_session_online_stats(const struct rec_session *s)
{
	return rec_online_stats(s->online);
}

int rec_session_rings(const struct rec_session *s)
{
	return s->ncpus;
}

u64 rec_session_ring_lost(const struct rec_session *s, int i, int *cpu)
{
	*cpu = s->rings[i].cpu;
	return s->rings[i].lost;
}

struct child_end rec_session_child_end(const struct rec_session *s)
{
	return child_end_of(&s->child);
}
