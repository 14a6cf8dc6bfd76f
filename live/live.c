/* live.c - a live view's recording: the shared target and interval
 * options, the recording thread and the pipe its stream comes through,
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

const struct opt live_system_opts[] = {
	OPT(LV_OPT_ALL, 'a', "all-cpus", OPT_NO_ARG, NULL,
	  "live: record the whole system while the view runs\n"
	  "(as record -a); also -C, -- command"),
	OPT(LV_OPT_CPUS, 'C', NULL, OPT_ARG, "LIST", "live: record only these CPUs (0-3,6)"),
	OPT_END,
};

const struct opt live_keep_opts[] = {
	OPT(LV_OPT_DURATION, 0, "duration", OPT_ARG, "SECS", "live: stop after SECS seconds"),
	OPT(LV_OPT_OUTPUT, 'o', "output", OPT_ARG, "FILE",
	  "live: also keep the recording in FILE (a stream\n"
	  "that report -i and perf read)"),
	OPT(LV_OPT_PAGES, 0, "mmap-pages", OPT_ARG, "N",
	  "live: ring pages per CPU, a power of two (or 512K,\n"
	  "4M), as record -m: more when events are lost"),
	OPT_END,
};

const struct opt live_target_opts[] = {
	OPT_INCLUDE(live_system_opts),
	OPT(LV_OPT_TIDS, 't', NULL, OPT_ARG, "TIDS", "live: record only these threads"),
	OPT_INCLUDE(live_keep_opts),
	OPT(LV_OPT_FREQ, 'F', "freq", OPT_ARG, "HZ", "live: samples per second per CPU (default 4000)"),
	OPT_END,
};

const struct opt live_pid_opts[] = {
	OPT(LV_OPT_PIDS, 'p', NULL, OPT_ARG, "PIDS", "live: record these processes, all threads"),
	OPT_END,
};

const struct opt live_interval_opts[] = {
	OPT(LV_OPT_INTERVAL, 0, "interval", OPT_ARG, "SECS",
	  "print the view for each interval of SECS seconds\n"
	  "and start again (of recording time for a file)"),
	OPT(LV_OPT_COUNT, 0, "count", OPT_ARG, "N", "stop after N intervals"),
	OPT_END,
};

static int positive_seconds(const char *arg, double *out, const char *what)
{
	if (parse_double(arg, out) < 0 || !(*out > 0)) {
		err_set("bad %s '%s': give a positive number of seconds", what, arg);
		return -1;
	}
	return 0;
}

int live_parse_opt(struct live_opts *o, int opt, const char *arg)
{
	int rc = 0;
	switch (opt) {
	case LV_OPT_ALL: o->all = true; return 1;
	case LV_OPT_CPUS: rc = parse_cpu_list(arg, cpus_possible(), &o->cpus, &o->ncpus); break;
	case LV_OPT_PIDS: rc = parse_pid_list(arg, &o->pids, &o->npids); break;
	case LV_OPT_TIDS: rc = parse_pid_list(arg, &o->tids, &o->ntids); break;
	case LV_OPT_OUTPUT: o->output = arg; return 1;
	case LV_OPT_INTERVAL: rc = positive_seconds(arg, &o->interval, "--interval"); break;
	case LV_OPT_DURATION: rc = positive_seconds(arg, &o->duration, "--duration"); break;
	case LV_OPT_COUNT:
		if (parse_u64(arg, &o->count) < 0 || !o->count) {
			err_set("bad --count '%s': give a number of intervals, 1 or more", arg);
			return -1;
		}
		return 1;
	case LV_OPT_PAGES:
		if (rec_parse_pages(arg, &o->mmap_pages) < 0) {
			err_prefix("bad --mmap-pages '%s'", arg);
			return -1;
		}
		return 1;
	case LV_OPT_FREQ:
		if (parse_u64(arg, &o->freq) < 0 || !o->freq) {
			err_set("bad -F '%s': give a sampling rate in Hz, e.g. -F 999", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
	return rc < 0 ? -1 : 1;
}

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
		.freq = o->freq, .callchains = o->callchains, .duration = o->duration,
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
