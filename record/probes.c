/* probes.c - the events ember adds to tracefs's uprobe_events for one run
 * (execsnoop's loader entry, the path probes at syscall sites): all in
 * one group, ember_PID, removed at the end; or, however ember ends, by a
 * watchdog process once ember's descriptors are closed.  Groups of
 * embers that are gone are swept away when the next one makes its own. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/record-internal.h"

#define GROUP_PREFIX "ember_"

/* One line appended to tracefs's uprobe_events: 0, or -1 with err_set()
 * and errno kept (EBUSY: an event still in use). */
static int write_uprobe_events(const char *tracefs, const char *line)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	ssize_t n = write(fd, line, strlen(line));
	int err = errno;
	close(fd);
	if (n != (ssize_t)strlen(line)) {
		errno = n < 0 ? err : EIO;
		err_set_errno("%s: '%.60s...'", path, line);
		return -1;
	}
	return 0;
}

/* The events of group (NULL: of every ember group whose ember is gone)
 * as "-:GROUP/EVENT\n" lines, each once. */
static void removal_lines(const char *tracefs, const char *group, struct strbuf *out)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		int pid;
		char ev[64], want[96], g[32];
		if (sscanf(line, "%*[pr]:" GROUP_PREFIX "%d/%63[^ ]", &pid, ev) != 2 || pid <= 0)
			continue;
		snprintf(g, sizeof(g), GROUP_PREFIX "%d", pid);
		if (group ? strcmp(g, group) != 0 : !(kill(pid, 0) < 0 && errno == ESRCH))
			continue;
		snprintf(want, sizeof(want), "-:" GROUP_PREFIX "%d/%s\n", pid, ev);
		if (!out->s || !strstr(out->s, want))   /* a multi-probe event: once */
			sb_puts(out, want);
	}
	if (f)
		fclose(f);
}

/* Writes each of lines; errno of the first failure, 0 when none. */
static int remove_lines(const char *tracefs, const char *lines)
{
	int first = 0;
	for (const char *l = lines; l && *l;) {
		const char *nl = strchr(l, '\n');
		char one[160];
		snprintf(one, sizeof(one), "%.*s", (int)(nl - l + 1), l);
		if (write_uprobe_events(tracefs, one) < 0 && !first)
			first = errno;
		l = nl + 1;
	}
	return first;
}

/* The watchdog's loop: busy while a perf event still uses an event (the
 * pipe can close before ember's perf descriptors, and a traced command
 * that outlives a SIGKILLed ember keeps its inherited events until it
 * exits); retried every 50 ms for 10 s, then every second. */
static void remove_when_free(const char *tracefs, const char *group)
{
	struct timespec fast = { 0, 50000000 }, slow = { 1, 0 };
	for (int i = 0;; i++) {
		struct strbuf sb = {0};
		removal_lines(tracefs, group, &sb);
		int err = remove_lines(tracefs, sb.s);
		sb_free(&sb);
		if (err != EBUSY)
			return;
		nanosleep(i < 200 ? &fast : &slow, NULL);
	}
}

/* A process that outlives ember only to remove the group: it waits for
 * the pipe's far end to close, which happens however ember ends, then
 * removes what is left.  It keeps no other descriptor, leaves ember's
 * session and is nobody's child. */
static void start_watchdog(struct rec_probes *p)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		int null = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3 && null >= 0; fd++)
			dup2(null, fd);
		if (fds[0] > 3)
			close_range(3, (unsigned)fds[0] - 1, 0);
		close_range((unsigned)fds[0] + 1, ~0u, 0);
		char c;
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		remove_when_free(p->tracefs, p->group);
		_exit(0);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return;
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	p->watch_fd = fds[1];
}

/* The group, on first use: tracefs found, stale groups swept, the
 * watchdog started. */
static int begin(struct rec_probes *p)
{
	if (p->begun)
		return 0;
	const char *tracefs = pmc_tracefs();
	if (!tracefs)
		return -1;
	snprintf(p->tracefs, sizeof(p->tracefs), "%s", tracefs);
	snprintf(p->group, sizeof(p->group), GROUP_PREFIX "%d", (int)getpid());
	struct strbuf stale = {0};
	removal_lines(tracefs, NULL, &stale);
	(void)remove_lines(tracefs, stale.s);
	sb_free(&stale);
	p->watch_fd = -1;
	start_watchdog(p);
	p->begun = true;
	return 0;
}

int rec_probes_add(struct rec_probes *p, const char *event, const char *path, u64 offset,
		   const char *fetch)
{
	if (begin(p) < 0)
		return -1;
	struct strbuf sb = {0};
	sb_printf(&sb, "p:%s/%s %s:0x%llx %s\n", p->group, event, path,
		  (unsigned long long)offset, fetch);
	int rc = write_uprobe_events(p->tracefs, sb.s);
	sb_free(&sb);
	if (rc == 0)
		p->made = true;
	return rc;
}

void rec_probes_event_name(const struct rec_probes *p, const char *event, char *out, size_t cap)
{
	snprintf(out, cap, "%s:%s", p->group, event);
}

void rec_probes_remove(struct rec_probes *p)
{
	if (!p->begun)
		return;
	if (p->made) {
		struct strbuf sb = {0};
		removal_lines(p->tracefs, p->group, &sb);
		int err = remove_lines(p->tracefs, sb.s);
		sb_free(&sb);
		/* Still busy (a descriptor open): the watchdog tries again
		 * once ember has exited and the kernel has closed them all. */
		if (err && err != ENOENT)
			return;
		p->made = false;
	}
	if (p->watch_fd >= 0)
		close(p->watch_fd);
	p->watch_fd = -1;
	p->begun = false;
}
