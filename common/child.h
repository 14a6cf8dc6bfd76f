/* child.h - a command started "held": forked before its events are
 * opened, it waits at a pipe and execs only when released, so what it
 * does from its first instruction is seen.  Used by record and stat.
 * Errors are returned with err_set(), never printed. */
#ifndef EMBER_CHILD_H
#define EMBER_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct held_child {
	pid_t pid;                 /* 0 when there is no command */
	const char *name;          /* argv[0], for messages */
	int go_fd;                 /* write end: one byte lets it exec */
	int err_fd;                /* read end: an errno if exec failed */
	int pidfd;                 /* readable when it exits, or -1 */
	bool exited;
	int status;                /* from wait4 */
};

/* Looks the command up as execvp will, so a typo is found before any
 * file is touched: 0, or -1 with a message naming the fix. */
int child_command_check(const char *name);

/* Forks the child, which waits to be released.  mask (or NULL) is the
 * signal mask it execs with; stdout_taken sends its stdout to stderr
 * (ours carries a data stream).  SIGINT, SIGTERM and SIGPIPE are set back
 * to their defaults in it, whatever the caller ignores. */
int child_fork(struct held_child *c, char **argv, const sigset_t *mask, bool stdout_taken);

/* Releases the child to exec and waits to learn whether exec worked; -1
 * with errno and a message when it did not. */
int child_exec(struct held_child *c);

/* Returns 1 when the child has exited (status kept, and its resource use
 * in ru when not NULL), 0 if it still runs. */
int child_reap(struct held_child *c, bool block, struct rusage *ru);

/* Closes the pipes and the pidfd; a child never released exits without
 * running the command and is reaped. */
void child_release(struct held_child *c);

/* A pidfd for a process, or with thread for one thread (Linux 6.9 and
 * later for a thread that is not its process's leader); -1 when the
 * kernel gives none. */
int child_pidfd_open(pid_t pid, bool thread);

#endif
