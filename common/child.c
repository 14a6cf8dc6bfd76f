/* child.c - the held command of record and stat: forked early, released
 * to exec once its events are open; an exec failure comes back as an
 * errno over a close-on-exec pipe. */
#include "common/child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int child_command_check(const char *name)
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

void child_kill(struct held_child *c, int sig)
{
	if (kill(c->pid, sig) == 0 && sig < 64)
		c->sent |= 1ULL << sig;
}

int child_pidfd_open(pid_t pid, bool thread)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD : 0);
#else
	(void)pid, (void)thread;
	errno = ENOSYS;
	return -1;
#endif
}

/* In the child: wait for the go byte, then exec. */
static void child_main(int go_fd, int err_fd, char **argv, const sigset_t *mask,
		       bool stdout_taken)
{
	if (mask)
		sigprocmask(SIG_SETMASK, mask, NULL);
	/* Our stdout carries the data stream; the command's output must not
	 * land in the middle of it. */
	if (stdout_taken)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	/* The parent's dispositions are not the command's: an ignored
	 * SIGPIPE would stay ignored through exec, and `yes | head` under
	 * ember would write into a closed pipe instead of dying of it. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	char go;
	ssize_t r;
	do
		r = read(go_fd, &go, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(127);     /* the parent gave up before starting it */
	execvp(argv[0], argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int child_fork(struct held_child *c, char **argv, const sigset_t *mask, bool stdout_taken)
{
	*c = (struct held_child){ .name = argv[0], .go_fd = -1, .err_fd = -1, .pidfd = -1 };
	int go[2] = { -1, -1 }, er[2] = { -1, -1 };
	pid_t pid = -1;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		err_set_errno("cannot make a pipe for '%s'", argv[0]);
	else if ((pid = fork()) < 0)
		err_set_errno("cannot fork for '%s'", argv[0]);
	if (pid < 0) {
		for (int i = 0; i < 2; i++) {
			if (go[i] >= 0)
				close(go[i]);
			if (er[i] >= 0)
				close(er[i]);
		}
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
	c->pidfd = child_pidfd_open(pid, false);
	return 0;
}

int child_exec(struct held_child *c)
{
	char go = 1;
	if (write(c->go_fd, &go, 1) != 1) {
		err_set_errno("cannot start '%s'", c->name);
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
		err_set_errno("cannot run '%s'", c->name);
		return -1;
	}
	return 0;
}

int child_reap(struct held_child *c, bool block, struct rusage *ru)
{
	if (c->exited || !c->pid)
		return 1;
	int st;
	pid_t r;
	do
		r = wait4(c->pid, &st, block ? 0 : WNOHANG, ru);
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

void child_release(struct held_child *c)
{
	if (!c->pid)
		return;
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
	if (!c->exited)
		child_reap(c, true, NULL);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}
