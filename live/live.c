/* live.c - a live view's recording: the checks of the shared target and
 * interval options (cmd/ parses them), the recording thread and the pipe its stream comes through,
 * the stop signals, and the counts that say what the live path lost. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/child.h"
#include "live/live.h"

int live_wanted(struct live_opts *o, int argc, char **argv, int first_operand)
{
	if (first_operand < argc)
		o->command = argv + first_operand;
	if (o->pids && o->tids) {
		err_set("-p and -t: give one of them");
		return -1;
	}
	if ((o->pids || o->tids) && o->command) {
		err_set("-p/-t with a command: watch either running tasks or a command");
		return -1;
	}
	bool target = o->all || o->cpus || o->pids || o->tids || o->command;
	if (!target && o->callgraph != REC_CG_NONE) {
		err_set("--call-graph is for a live view: give a target (-a, -C, -p, -t or "
			"-- command); a recording's stacks are the file's (record "
			"--call-graph fp)");
		return -1;
	}
	if (!target && (o->duration > 0 || o->output || o->freq || o->mmap_pages)) {
		err_set("--duration, -o, -F and --mmap-pages are for a live view: give a "
			"target (-a, -C, -p, -t or -- command)");
		return -1;
	}
	return target;
}

void live_opts_free(struct live_opts *o)
{
	free(o->cpus);
	free(o->pids);
	free(o->tids);
	memset(o, 0, sizeof(*o));
}

/* ---- the session ---------------------------------------------------------- */

struct live {
	struct rec_live *rec;
	int read_fd;               /* the replay's (it closes it); for FIONREAD */
	struct stop_handlers stop_h;   /* SIGINT, SIGTERM, SIGHUP; restored at the end */
	volatile sig_atomic_t *stop;   /* their count, or live_stop's 1 */
	size_t notes_shown;
	u64 lost_shown;            /* lost samples already told */
};

/* 1 MiB of pipe (the most an unprivileged user may ask by default): the
 * drain's bursts wait there while the view catches up. */
#define LIVE_PIPE_BYTES (1 << 20)

/* -o's folder is there and one we may write in.  The recording thread
 * opens the file only once the view reads its stream: a bad path would
 * first show as that stream ending before its header.  Nothing is created
 * here (the file may still be refused for another reason). */
static int check_output(const char *path)
{
	if (!path || !strcmp(path, "-"))
		return 0;
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = '\0';   /* "/x" is in "/" */
	struct stat st;
	int rc = 0;
	if (stat(dir, &st) < 0) {
		err_set_errno("%s", path);
		rc = -1;
	} else if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		err_set_errno("%s", path);
		rc = -1;
	} else if (access(dir, W_OK | X_OK) < 0) {
		err_set_errno("%s", path);
		rc = -1;
	}
	free(dir);
	return rc;
}

struct live *live_start(const struct live_opts *o, enum rec_live_kind kind,
			struct rp_opts *rp, bool *usage)
{
	int p[2];
	*usage = false;
	if (check_output(o->output) < 0)
		return NULL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		err_set_errno("pipe");
		return NULL;
	}
	(void)!fcntl(p[1], F_SETPIPE_SZ, LIVE_PIPE_BYTES);
	struct live *l = xcalloc(1, sizeof(*l));
	l->read_fd = p[0];
	/* The stop signals stay blocked here and in the recording thread,
	 * which takes them in its ppoll: it stops, finishes the stream, and
	 * the replay reads to its end. */
	l->stop = stop_install(&l->stop_h, true);
	signal(SIGPIPE, SIG_IGN);
	struct rec_live_opts ro = {
		.kind = kind, .system_wide = o->all,
		.cpus = o->cpus, .ncpus = o->ncpus, .pids = o->pids, .npids = o->npids,
		.tids = o->tids, .ntids = o->ntids, .command = o->command,
		.freq = o->freq, .callgraph = o->callgraph,
		.duration = o->duration,
		.devs = o->devs, .ndevs = o->ndevs, .output = o->output,
		.mmap_pages = o->mmap_pages,
		.tool = o->tool, .events = o->events,
		.nevents = o->nevents, .fd = p[1], .stop = l->stop,
		.poll_mask = &l->stop_h.mask,
	};
	l->rec = rec_live_start(&ro, usage);
	if (!l->rec) {
		close(p[0]);
		stop_restore(&l->stop_h);
		free(l);
		return NULL;
	}
	rp->live = true;
	rp->input_fd = p[0];
	rp->input = "the live recording";
	if (!rp->interval_ns && o->interval > 0)
		rp->interval_ns = (u64)(o->interval * 1e9 + 0.5);
	return l;
}

void live_stop(struct live *l)
{
	if (!*l->stop)
		*l->stop = 1;
}

bool live_stopping(const struct live *l)
{
	return *l->stop != 0;
}

u64 live_backlog(const struct live *l)
{
	int n = 0;
	return ioctl(l->read_fd, FIONREAD, &n) == 0 && n > 0 ? (u64)n : 0;
}

const char *live_next_note(struct live *l)
{
	const char *n = rec_live_note(l->rec, l->notes_shown);
	if (n)
		l->notes_shown++;
	return n;
}

int live_finish(struct live *l, bool *usage, int *command)
{
	int rc = rec_live_finish(l->rec, usage);
	*command = rec_live_command_status(l->rec);
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", rc < 0 ? err_msg() : "");
	rec_live_free(l->rec);
	stop_restore(&l->stop_h);
	free(l);
	if (rc < 0)
		err_set("%s", msg);
	return rc;
}

void live_print_counts(FILE *out, struct live *l, const struct rp_summary *sum)
{
	u64 lost = sum->lost - MIN(sum->lost, l->lost_shown);
	l->lost_shown = sum->lost;
	fprintf(out, "# live: %llu samples lost since the last table (%llu in all), "
		"%llu KB recorded and not read yet; %llu threads kept, %llu exited ones "
		"released (%llu found gone without an EXIT record), %llu files' symbols "
		"released\n", (unsigned long long)lost,
		(unsigned long long)sum->lost, (unsigned long long)(live_backlog(l) / 1024),
		(unsigned long long)sum->threads_now, (unsigned long long)sum->released_threads,
		(unsigned long long)sum->vanished_threads, (unsigned long long)sum->released_files);
}

int live_interval_end(FILE *out, struct live *l, struct replay *rp, bool last, u64 *n,
		      u64 count)
{
	if (l)
		live_print_counts(out, l, rp_summary(rp));
	if (!last)
		fputc('\n', out);
	fflush(out);
	if (!count || ++*n < count)
		return 0;
	if (l)
		live_stop(l);
	return 1;
}

int live_after_table(void *ctx, u64 end, bool last)
{
	struct live_tables *t = ctx;
	return live_interval_end(t->out, t->live, t->rp, last, &t->n, t->count);
}
