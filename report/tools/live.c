/* live.c - tracing live until the live engine takes over: `ember record
 * --tool NAME` runs as a child writing its stream into a pipe, which the
 * tool's replay reads as its standard input (with -o, a second child
 * copies the stream into the file on the way).  The only file that knows
 * how a live tool gets its records. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/tools/tools-internal.h"

/* The recorder's command line: the tool's events, the target, a stream. */
static char **recorder_argv(const char *tool, const struct tool_target *tg)
{
	VEC(char *) v = {0};
	VEC_PUSH(&v, (char *)"ember");
	VEC_PUSH(&v, (char *)"record");
	VEC_PUSH(&v, (char *)"--tool");
	VEC_PUSH(&v, (char *)tool);
	VEC_PUSH(&v, (char *)"-q");
	VEC_PUSH(&v, (char *)"-N");
	VEC_PUSH(&v, (char *)"-o");
	VEC_PUSH(&v, (char *)"-");
	for (size_t i = 0; i < tg->events.n; i++) {
		VEC_PUSH(&v, (char *)"-e");
		VEC_PUSH(&v, (char *)tg->events.v[i]);
	}
	if (tg->pids) {
		VEC_PUSH(&v, (char *)"-p");
		VEC_PUSH(&v, (char *)tg->pids);
	}
	if (tg->cpus) {
		VEC_PUSH(&v, (char *)"-C");
		VEC_PUSH(&v, (char *)tg->cpus);
	}
	if (tg->all || (!tg->pids && !tg->cpus && !tg->command))
		VEC_PUSH(&v, (char *)"-a");
	if (tg->duration) {
		VEC_PUSH(&v, (char *)"--duration");
		VEC_PUSH(&v, (char *)tg->duration);
	}
	if (tg->command) {
		VEC_PUSH(&v, (char *)"--");
		for (char **c = tg->command; *c; c++)
			VEC_PUSH(&v, *c);
	}
	VEC_PUSH(&v, NULL);
	return v.v;
}

/* Copies in to out and to the file until in ends (the -o child). */
static void tee_stream(int in, int out, int file)
{
	char buf[65536];
	ssize_t n;
	bool out_open = true;
	while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		if (write_all(file, buf, (size_t)n) < 0)
			_exit(1);
		/* The tool may stop reading first (--count): the file still
		 * gets the rest. */
		if (out_open && write_all(out, buf, (size_t)n) < 0)
			out_open = false;
	}
	_exit(n < 0);
}

static pid_t start_tee(int in, int *out_read, const char *path)
{
	int file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (file < 0) {
		err_set_errno("-o %s", path);
		return -1;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		err_set_errno("pipe");
		close(file);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGINT, SIG_IGN);   /* the recorder ends the stream */
		tee_stream(in, p[1], file);
	}
	close(file);
	close(p[1]);
	if (pid < 0) {
		err_set_errno("fork");
		close(p[0]);
		return -1;
	}
	*out_read = p[0];
	return pid;
}

int tool_live_start(struct tool_live *l, const char *tool, const struct tool_target *tg)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		err_set_errno("pipe");
		return -1;
	}
	char **argv = recorder_argv(tool, tg);
	l->recorder = fork();
	if (l->recorder == 0) {
		dup2(p[1], 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	free(argv);
	close(p[1]);
	if (l->recorder < 0) {
		err_set_errno("fork");
		close(p[0]);
		return -1;
	}
	l->fd = p[0];
	if (tg->output) {
		int out = -1;
		l->tee = start_tee(p[0], &out, tg->output);
		close(p[0]);
		l->fd = out;
		if (l->tee < 0) {
			l->fd = -1;
			tool_live_stop(l, true);
			return -1;
		}
	}
	return 0;
}

static int reap(pid_t pid)
{
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* What the recorder still writes once the tool has stopped reading
 * (--count): read and dropped, so it ends its stream cleanly instead of
 * meeting a broken pipe. */
static void drain(int fd)
{
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
}

int tool_live_stop(struct tool_live *l, bool early)
{
	if (early && l->recorder > 0)
		kill(l->recorder, SIGINT);
	if (early && l->fd >= 0)
		drain(l->fd);
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	int status = reap(l->recorder);
	reap(l->tee);
	l->recorder = l->tee = 0;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : EXIT_RUNTIME;
}
