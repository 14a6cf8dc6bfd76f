/* stop.c - how record and stat stop and end: SIGINT and SIGTERM caught as
 * stop requests, and the exit status from the command's end and the
 * request, as perf gives it (declared in child.h). */
#include <signal.h>
#include <sys/wait.h>

#include "common/child.h"
#include "common/common.h"

/* Set by the handler: a signal handler can reach nothing else. */
static volatile sig_atomic_t stop_requests, stop_sig;

static void on_stop_signal(int sig)
{
	stop_sig = sig;
	stop_requests++;
}

volatile sig_atomic_t *stop_install(struct stop_handlers *h, bool block)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	stop_requests = stop_sig = 0;
	sigaction(SIGINT, &sa, &h->old[0]);
	sigaction(SIGTERM, &sa, &h->old[1]);
	sigset_t stops;
	sigemptyset(&stops);
	if (block) {
		sigaddset(&stops, SIGINT);
		sigaddset(&stops, SIGTERM);
	}
	sigprocmask(SIG_BLOCK, &stops, &h->mask);
	return &stop_requests;
}

/* The mask first, so that a request still pending lands in our handler
 * and is counted, then the handlers. */
void stop_restore(const struct stop_handlers *h)
{
	sigprocmask(SIG_SETMASK, &h->mask, NULL);
	sigaction(SIGINT, &h->old[0], NULL);
	sigaction(SIGTERM, &h->old[1], NULL);
}

int stop_signal(void)
{
	return stop_sig;
}

struct child_end child_end_of(const struct held_child *c)
{
	return (struct child_end){ .ran = c->pid && c->exited, .status = c->status,
				   .sent = c->sent };
}

int stop_exit_status(const struct child_end *e, int *die_sig)
{
	*die_sig = 0;
	if (e->ran && WIFEXITED(e->status))
		return WEXITSTATUS(e->status);
	if (stop_sig) {
		*die_sig = stop_sig;
		return 128 + stop_sig;
	}
	/* A death by a signal we sent is our doing: the command may have
	 * died of another before ours came. */
	if (e->ran && WIFSIGNALED(e->status) && !(e->sent >> WTERMSIG(e->status) & 1))
		return 128 + WTERMSIG(e->status);
	return EXIT_OK;
}
