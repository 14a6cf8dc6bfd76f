/* child.h - a command run under record or stat: started "held" (forked
 * before its events are opened, it waits at a pipe and execs only when
 * released, so what it does from its first instruction is seen), stopped
 * by SIGINT/SIGTERM (stop.c), and the exit status its end and the stop
 * give.  Errors are returned with err_set(), never printed. */
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
	unsigned long long sent;   /* bit s: we sent it signal s (child_kill) */
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

/* Sends sig to the command, noting that its death by that signal is our
 * doing (--duration, a stop request), not its own failure. */
void child_kill(struct held_child *c, int sig);

/* A pidfd for a process, or with thread for one thread (Linux 6.9 and
 * later for a thread that is not its process's leader); -1 when the
 * kernel gives none. */
int child_pidfd_open(pid_t pid, bool thread);

/* ---- Stopping and the exit status (stop.c) ------------------------------
 * SIGINT, SIGTERM and SIGHUP ask record, stat and the live views to stop:
 * the command is stopped, the output finished, and then we end by that
 * signal, as perf does for the first two, so a shell sees 130/143/129 and
 * a script running us stops too.  SIGHUP is a terminal or ssh session
 * gone: it must not cut a recording short of its end (ignored, as under
 * nohup, it stays ignored).  One set of handlers for the process (a
 * handler can reach only static state). */
#define STOP_NSIGS 3
struct stop_handlers {
	struct sigaction old[STOP_NSIGS];   /* SIGINT's, SIGTERM's, SIGHUP's before */
	bool caught[STOP_NSIGS];            /* ours now (not an ignored SIGHUP) */
	sigset_t mask;             /* the signal mask before */
};

/* Catches SIGINT, SIGTERM and SIGHUP; the returned counter counts the
 * requests (a second one may be firmer).  With block they stay blocked, to be taken
 * only where the caller waits with h->mask (ppoll), so that a request
 * cannot slip in between a check and a wait. */
volatile sig_atomic_t *stop_install(struct stop_handlers *h, bool block);
/* Puts the mask and handlers back; a request still pending is counted
 * first. */
void stop_restore(const struct stop_handlers *h);
/* The signal that asked to stop (the last one), or 0. */
int stop_signal(void);

/* How the command ended, for the exit status. */
struct child_end {
	bool ran;                  /* there was a command, and it was reaped */
	int status;                /* its wait status */
	unsigned long long sent;   /* bit s: we sent it signal s */
};
struct child_end child_end_of(const struct held_child *c);

/* The exit status once the output is complete: a command that exited on
 * its own gives its status, stop request or not; else a stop request
 * gives 128 + its signal with *die_sig set to it (the caller ends by it
 * with cmd_die_of once it has cleaned up); a command killed by a signal
 * not ours gives 128 + that signal; else 0 (one we ended at --duration
 * included, as perf stat --timeout). */
int stop_exit_status(const struct child_end *e, int *die_sig);

#endif
