/* stop.c - how record, stat and the live views stop and end: SIGINT,
 * SIGTERM and SIGHUP (a closed terminal or ssh session) caught as stop
 * requests, and the exit status from the command's end and the request,
 * as perf gives it (declared in child.h). */
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

/* The signals that ask to stop, in the order of stop_handlers.old. */
static const int stop_sigs[STOP_NSIGS] = { SIGINT, SIGTERM, SIGHUP };

volatile sig_atomic_t *stop_install(struct stop_handlers *h, bool block)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	stop_requests = stop_sig = 0;
	sigset_t stops;
	sigemptyset(&stops);
	for (int i = 0; i < STOP_NSIGS; i++) {
		sigaction(stop_sigs[i], NULL, &h->old[i]);
		/* nohup's SIGHUP stays ignored: the user asked to outlive
		 * the terminal. */
		h->caught[i] = !(stop_sigs[i] == SIGHUP && h->old[i].sa_handler == SIG_IGN);
		if (!h->caught[i])
			continue;
		sigaction(stop_sigs[i], &sa, NULL);
		if (block)
			sigaddset(&stops, stop_sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &stops, &h->mask);
	return &stop_requests;
}

/* The mask first, so that a request still pending lands in our handler
 * and is counted, then the handlers. */
void stop_restore(const struct stop_handlers *h)
{
	sigprocmask(SIG_SETMASK, &h->mask, NULL);
	for (int i = 0; i < STOP_NSIGS; i++)
		if (h->caught[i])
			sigaction(stop_sigs[i], &h->old[i], NULL);
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
	return 0;
}
