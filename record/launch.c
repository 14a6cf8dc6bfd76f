/* launch.c - starts the recorded command: forked early and held until its
 * events are open, then released to exec so counting starts at exec. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/record-internal.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Looks the command up as execvp will, so a typo is a usage error before
 * any file is touched. */
int rec_command_check(const char *name)
{
	if (strchr(name, '/')) {
		if (is_executable_file(name))
			return 0;
		err_set("%s: command not found or not executable: check the path", name);
		return -1;
	}
	const char *path = getenv("PATH");
	char *dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	bool found = false;
	for (char *save, *d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char *full = xasprintf("%s/%s", *d ? d : ".", name);
		found = is_executable_file(full);
		free(full);
	}
	free(dirs);
	if (found)
		return 0;
	err_set("%s: command not found: check the name or PATH", name);
	return -1;
}

int rec_pidfd_open(pid_t pid, bool thread)
{
	return (int)syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD : 0);
}

/* In the child: wait for the go byte, then exec; an exec failure goes back
 * as an errno over the close-on-exec pipe. */
static void child_main(int go_fd, int err_fd, char **argv, const sigset_t *mask,
		       bool stdout_taken)
{
	char go;
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* Our stdout carries the data stream; the command's output must not
	 * land in the middle of it. */
	if (stdout_taken)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	/* The recorder's own dispositions, not the command's: an ignored
	 * SIGPIPE would stay ignored through exec, and `yes | head` under
	 * ember would write into a closed pipe instead of dying of it. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	ssize_t r;
	do
		r = read(go_fd, &go, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(127);     /* the recorder gave up before starting */
	execvp(argv[0], argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int rec_child_fork(struct rec_child *c, char **argv, const sigset_t *mask,
		   bool stdout_taken)
{
	int go[2], er[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		err_set_errno("creating pipes for the command");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err_set_errno("fork");
		return -1;
	}
	if (pid == 0) {
		close(go[1]);
		close(er[0]);
		child_main(go[0], er[1], argv, mask, stdout_taken);
	}
	close(go[0]);
	close(er[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = er[0];
	c->pidfd = rec_pidfd_open(pid, false);
	return 0;
}

/* Lets the child exec and waits to learn whether exec worked: the error
 * pipe closes on a successful exec, or carries the errno. */
int rec_child_exec(struct rec_child *c)
{
	char go = 1;
	if (write(c->go_fd, &go, 1) != 1) {
		err_set_errno("starting the command");
		return -1;
	}
	close(c->go_fd);
	c->go_fd = -1;
	int e = 0;
	ssize_t r;
	do
		r = read(c->err_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (r == sizeof(e)) {
		errno = e;
		err_set_errno("cannot run the command");
		return -1;
	}
	return 0;
}

/* For a recorder failing before the start: the child exits unexecuted. */
void rec_child_release(struct rec_child *c)
{
	if (!c->pid)
		return;
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	if (!c->exited)
		rec_child_reap(c, true);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}

/* Returns 1 when the child has exited (status kept), 0 if it still runs. */
int rec_child_reap(struct rec_child *c, bool block)
{
	if (c->exited)
		return 1;
	int st;
	pid_t r;
	do
		r = waitpid(c->pid, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->exited = true;
		c->status = st;
		return 1;
	}
	if (r < 0) {            /* reaped elsewhere: treat as gone */
		c->exited = true;
		return 1;
	}
	return 0;
}
