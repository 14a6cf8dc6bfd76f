/* cmd-btrace.c - `ember btrace DEV` (blktrace's btrace script): blkparse
 * lines for one device as its block events happen, until Ctrl-C.  Until the
 * live engine feeds views in-process, the recorder runs in a forked child
 * writing a stream into a pipe, which the bio library reads as '-i -'. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/record.h"
#include "report/bio/bio.h"
#include "report/report.h"

#define CMD "btrace"

static const char synopsis[] =
	"usage: ember btrace [-w SECS] DEV\n"
	"\n"
	"Prints a blkparse line for each block event of device DEV (NAME, /dev/NAME\n"
	"or MAJ,MIN) as it happens, until Ctrl-C (or -w): the block tracepoints of\n"
	"every CPU are recorded ('ember record --block -a -d DEV', in a child\n"
	"process) and read as a stream.  The lines are those of 'ember bio\n"
	"--blkparse'; times count from the first event.\n"
	"\n";

enum { OPT_DURATION = 0x4000 };

static const struct opt options[] = {
	OPT(OPT_DURATION, 'w', "duration", OPT_ARG, "SECS", "stop after SECS seconds"),
	OPT_END,
};

struct args {
	const char *duration;
	u32 dev;
};

static int parse_one(void *ctx, int opt, const char *arg)
{
	struct args *a = ctx;
	double secs;
	if (opt != OPT_DURATION)
		return 0;
	if (parse_double(arg, &secs) < 0 || !(secs > 0)) {
		err_set("-w '%s': give a positive number of seconds", arg);
		return -1;
	}
	a->duration = arg;
	return 1;
}

const struct opt_cmd btrace_cmd = {
	.name = CMD,
	.summary = "live blkparse lines for one block device, like btrace",
	.synopsis = synopsis,
	.opts = options,
	.one = parse_one,
};

/* The recorder's pid, for the stop signals to reach it: a signal handler
 * has nothing but a static to go by. */
static volatile sig_atomic_t recorder_pid;

/* Ctrl-C reaches the recorder from the terminal too; kill(1) may not. */
static void forward_stop(int sig)
{
	(void)sig;
	if (recorder_pid > 0)
		kill((pid_t)recorder_pid, SIGINT);
}

/* The child: the recorder writing a stream to the pipe. */
static void run_recorder(const struct args *a, int out)
{
	char dev[32];
	snprintf(dev, sizeof(dev), "%u:%u", BIO_MAJOR(a->dev), BIO_MINOR(a->dev));
	char *argv[] = { "record", "--block", "-a", "-d", dev, "-q", "-o", "-",
			 a->duration ? "--duration" : NULL, (char *)a->duration, NULL };
	int argc = a->duration ? 10 : 8;
	if (dup2(out, STDOUT_FILENO) < 0)
		_exit(EXIT_RUNTIME);
	close(out);
	fflush(stderr);
	_exit(cmd_record(argc, argv));
}

/* Starts the recorder with its stream on our standard input. */
static pid_t start_recorder(const struct args *a)
{
	int p[2];
	if (pipe(p) < 0) {
		cmd_error(CMD, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cmd_error(CMD, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		run_recorder(a, p[1]);
	}
	close(p[1]);
	if (dup2(p[0], STDIN_FILENO) < 0) {
		cmd_error(CMD, "dup2: %s", strerror(errno));
		return -1;
	}
	close(p[0]);
	recorder_pid = pid;
	struct sigaction sa = { .sa_handler = forward_stop, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return pid;
}

/* The recorder's end: stopped by a signal (Ctrl-C) is the normal one. */
static int recorder_status(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return EXIT_RUNTIME;
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM ? EXIT_OK
										 : EXIT_RUNTIME;
	return WEXITSTATUS(status);
}

static int parse_args(struct args *a, int argc, char **argv)
{
	int rc = opt_parse(&btrace_cmd, argc, argv, a);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		cmd_error(CMD, "no device: give one, e.g. 'ember btrace sda'");
		return EXIT_USAGE;
	}
	if (optind + 1 < argc)
		return cmd_extra_argument(CMD, CMD, argv[optind + 1]);
	a->dev = bio_dev_parse(argv[optind]);
	if (!a->dev) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_btrace(int argc, char **argv)
{
	struct args a = { 0 };
	int rc = parse_args(&a, argc, argv);
	if (rc >= 0)
		return rc;
	pid_t pid = start_recorder(&a);
	if (pid < 0)
		return EXIT_RUNTIME;
	struct rp_opts rp;
	rp_opts_init(&rp);
	rp.input = "-";
	struct bio_blkparse bp = { .out = stdout, .dev = a.dev, .flush = true };
	struct bio_load_opts lo = { .rp = &rp, .blkparse = &bp, .forget = true };
	struct bio_data d = { 0 };
	int lrc = bio_load(&d, &lo);
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", lrc < 0 ? err_msg() : d.summary.error);
	bool input_error = lrc < 0 || d.summary.input_error;
	close(STDIN_FILENO);   /* a recorder still writing stops on EPIPE */
	rc = recorder_status(pid);
	/* The recorder said why it failed; the reader's error would only echo it. */
	if (rc == EXIT_OK && input_error) {
		cmd_error(CMD, "%s", msg);
		rc = EXIT_RUNTIME;
	}
	if (rc == EXIT_OK && d.replayed && d.summary.lost)
		cmd_warn(CMD, "%llu events lost: some lines are missing",
			 (unsigned long long)d.summary.lost);
	fflush(stdout);
	bio_data_free(&d);
	rp_opts_free(&rp);
	return rc;
}
