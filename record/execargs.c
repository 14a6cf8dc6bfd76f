/* execargs.c - execsnoop's exec arguments from a tracefs uprobe at the
 * dynamic loader's entry point, where the new image's initial stack is
 * untouched (sp -> argc, argv[], NULL, envp[]): the event fetches argc and
 * the argv strings, which exec wrote, so no random stack gap stops it. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/record-internal.h"
#include "symbols/symbols.h"

#define EXECARGS_EVENT "exec_args"
#define EXECARGS_PREFIX "ember_"

/* The program interpreter (PT_INTERP) the ELF file at path names, into
 * out; "" for a static binary.  -1 with err_set() when it is not ELF. */
static int read_interp(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	if (fd < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	out[0] = '\0';
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	if (!e || elf_getphdrnum(e, &n) < 0) {
		err_set("%s: not an ELF file", path);
		goto out;
	}
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP && ph.p_filesz &&
		    ph.p_filesz < cap &&
		    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
			out[ph.p_filesz] = '\0';
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* The loader the system's dynamic executables name: ember's own (it is
 * one), else /bin/sh's; the symlink resolved, as the kernel maps it; and
 * its entry point's file offset (symbols/), where uprobe_events wants it. */
static int find_loader(char *out, size_t cap, u64 *entry_off)
{
	static const char *const progs[] = { "/proc/self/exe", "/bin/sh" };
	char interp[PATH_MAX] = "";
	for (size_t i = 0; !interp[0] && i < ARRAY_SIZE(progs); i++)
		(void)read_interp(progs[i], interp, sizeof(interp));
	if (!interp[0]) {
		err_set("neither ember nor /bin/sh names a program interpreter (static "
			"binaries)");
		return -1;
	}
	char *real = realpath(interp, NULL);
	if (!real) {
		err_set_errno("the program interpreter %s", interp);
		return -1;
	}
	snprintf(out, cap, "%s", real);
	free(real);
	return sym_entry_offset(out, entry_off);
}

/* One line appended to tracefs's uprobe_events. */
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

/* Groups ember_PID whose ember is gone (SIGKILLed, or its watchdog too)
 * are removed; live ones, other embers', stay. */
static void sweep_stale(const char *tracefs)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	VEC(int) stale = {0};
	while (fgets(line, sizeof(line), f)) {
		int pid;
		char ev[64];
		if (sscanf(line, "%*[pr]:" EXECARGS_PREFIX "%d/%63s", &pid, ev) == 2 &&
		    !strcmp(ev, EXECARGS_EVENT) && pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
			VEC_PUSH(&stale, pid);
	}
	fclose(f);
	for (size_t i = 0; i < stale.n; i++) {
		snprintf(line, sizeof(line), "-:" EXECARGS_PREFIX "%d/" EXECARGS_EVENT "\n",
			 stale.v[i]);
		(void)write_uprobe_events(tracefs, line);
	}
	VEC_FREE(&stale);
}

/* A process that outlives ember only to remove the event: it waits for
 * the pipe's far end to close, which happens however ember ends (SIGKILL
 * and crashes too, once the kernel has closed ember's perf descriptors),
 * then removes it (an error when ember already did, ignored).  It keeps
 * no other descriptor, leaves ember's session and is nobody's child. */
static void start_watchdog(struct rec_execargs *ea)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	char path[PATH_MAX], line[96];
	snprintf(path, sizeof(path), "%s/uprobe_events", ea->tracefs);
	snprintf(line, sizeof(line), "-:%s/" EXECARGS_EVENT "\n", ea->group);
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
		if (p[0] > 3)
			close_range(3, (unsigned)p[0] - 1, 0);
		close_range((unsigned)p[0] + 1, ~0u, 0);
		char c;
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		/* Busy while a perf event still uses it: the pipe can close
		 * before ember's perf descriptors, and a traced command that
		 * outlives a SIGKILLed ember keeps its inherited events until
		 * it exits.  Retried every 50 ms for 10 s, then every second
		 * for as long as that lasts. */
		struct timespec fast = { 0, 50000000 }, slow = { 1, 0 };
		for (int i = 0;; i++) {
			int fd = open(path, O_WRONLY | O_APPEND);
			if (fd < 0)
				break;
			ssize_t n = write(fd, line, strlen(line));
			int err = errno;
			close(fd);
			if (n >= 0 || err != EBUSY)
				break;
			nanosleep(i < 200 ? &fast : &slow, NULL);
		}
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	ea->watch_fd = p[1];
}

int rec_execargs_create(struct rec_execargs *ea)
{
	char loader[PATH_MAX];
	u64 off;
	const char *tracefs = pmc_tracefs();
	if (!tracefs)
		return -1;
	if (find_loader(loader, sizeof(loader), &off) < 0)
		return -1;
	snprintf(ea->tracefs, sizeof(ea->tracefs), "%s", tracefs);
	snprintf(ea->group, sizeof(ea->group), EXECARGS_PREFIX "%d", (int)getpid());
	sweep_stale(tracefs);
	/* The loader starts with sp at argc: argv[i] is at sp + 8 + 8 i. */
	struct strbuf sb = {0};
	sb_printf(&sb, "p:%s/" EXECARGS_EVENT " %s:0x%llx argc=+0($stack):u64", ea->group, loader,
		  (unsigned long long)off);
	for (int i = 0; i < REC_EXECARGS_MAX; i++)
		sb_printf(&sb, " a%d=+0(+%d($stack)):ustring", i, 8 + 8 * i);
	sb_puts(&sb, "\n");
	int rc = write_uprobe_events(tracefs, sb.s);
	sb_free(&sb);
	if (rc < 0)
		return -1;
	ea->made = true;
	ea->watch_fd = -1;
	start_watchdog(ea);
	snprintf(ea->name, sizeof(ea->name), "%s:" EXECARGS_EVENT, ea->group);
	return 0;
}

void rec_execargs_remove(struct rec_execargs *ea)
{
	char line[96];
	if (!ea->made)
		return;
	snprintf(line, sizeof(line), "-:%s/" EXECARGS_EVENT "\n", ea->group);
	ea->made = false;
	/* Still busy (a descriptor open): the watchdog tries again once
	 * ember has exited and the kernel has closed them all. */
	if (write_uprobe_events(ea->tracefs, line) < 0 && errno != ENOENT)
		return;
	if (ea->watch_fd >= 0)
		close(ea->watch_fd);
	ea->watch_fd = -1;
}
