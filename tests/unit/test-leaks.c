/* test-leaks.c - no file descriptor, mapping, thread or child process
 * outlives a command: `ember record` and `ember stat` are run in-process
 * through their entry points (as ember.c dispatches them), each several
 * times and on their error paths, and /proc/self is counted before and
 * after. */
#include <dirent.h>
#include <errno.h>
#include <libunwind.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/common.h"
#include "pmc/pmc.h"
#include "pmc/stat/stat.h"
#include "record/record.h"
#include "test.h"

/* What a command could leave behind. */
struct census {
	int fds, maps, threads;
	char fd_names[1024];   /* "N=target " for each open fd, to name a leak */
	int named_maps;  /* of files and perf rings (anon_inode:[perf_event]) */
	bool children;   /* any child, running or unreaped */
};

/* ASan's allocator maps more anonymous memory as its heap grows and keeps
 * it; only the named mappings must then come back to the same count. */
#if defined(__SANITIZE_ADDRESS__)
#define ANON_MAPS_GROW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ANON_MAPS_GROW 1
#endif
#endif
#ifndef ANON_MAPS_GROW
#define ANON_MAPS_GROW 0
#endif

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Lines of /proc/self/maps, and those naming a file or an anon inode
 * (not [heap], [stack] and the like, nor anonymous memory). */
static void count_maps(int *all, int *named)
{
	*all = *named = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f) {
		*all = *named = -1;
		return;
	}
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		char path[4096] = "";
		(*all)++;
		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) == 1 &&
		    path[0] && path[0] != '[')
			(*named)++;
	}
	fclose(f);
}

/* What each open fd is ("3=/tmp/x 4=anon_inode:[perf_event] ..."). */
static void name_fds(char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d)) && n + 1 < size;) {
		if (de->d_name[0] == '.')
			continue;
		char path[300], target[256];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		int w = snprintf(buf + n, size - n, "%s=%s ", de->d_name, target);
		n += w > 0 ? (size_t)w : 0;
	}
	closedir(d);
}

static struct census take_census(void)
{
	struct census c;
	c.fds = count_dir("/proc/self/fd");   /* opendir's own fd included */
	name_fds(c.fd_names, sizeof(c.fd_names));
	count_maps(&c.maps, &c.named_maps);
	c.threads = count_dir("/proc/self/task");
	c.children = !(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	return c;
}

static char tmpdir[] = "/tmp/ember-test-leaks-XXXXXX";

/* Runs cmd(argc, argv) with the words given (NULL-terminated); the status. */
static int run(int (*cmd)(int, char **), const char *first, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = xstrdup(a);
	va_end(ap);
	argv[argc] = NULL;
	int rc = cmd(argc, argv);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return rc;
}

static char *tmp(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

/* One round of each command, the ordinary runs and the failing ones. */
static void stat_round(void)
{
	char *out = tmp("stat.txt");
	CHECK(run(cmd_stat, "stat", "-o", out, "-e", "task-clock,page-faults",
		  "--", "true", NULL) == 0, "stat -- true");
	CHECK(run(cmd_stat, "stat", "-o", out, "-I", "20", "-x", ",", "-e",
		  "task-clock", "--", "sleep", "0.05", NULL) == 0, "stat -I");
	CHECK(run(cmd_stat, "stat", "-o", out, "-r", "2", "--", "true", NULL) == 0,
	      "stat -r 2");
	CHECK(run(cmd_stat, "stat", "-o", out, "-a", "-e", "cpu-clock",
		  "--duration", "0.05", NULL) == 0, "stat -a --duration");
	CHECK(run(cmd_stat, "stat", "-o", out, "--", "/nonexistent/ember-leak",
		  NULL) == 2, "stat of a missing command is a usage error");
	/* Found, but exec fails: its interpreter is missing. */
	char *script = tmp("bad-interpreter");
	FILE *f = fopen(script, "w");
	if (f) {
		fputs("#!/nonexistent/interpreter\n", f);
		fclose(f);
		chmod(script, 0755);
	}
	CHECK(run(cmd_stat, "stat", "-o", out, "--", script, NULL) == 1,
	      "stat of a command exec refuses fails");
	free(script);
	CHECK(run(cmd_stat, "stat", "-e", "no_such_event_xyz", "--", "true",
		  NULL) == 2, "stat -e bad is a usage error");
	free(out);
}

static void record_round(void)
{
	char *data = tmp("rec.data");
	CHECK(run(cmd_record, "record", "-q", "-o", data, "--", "true", NULL) == 0,
	      "record -- true");
	CHECK(run(cmd_record, "record", "-q", "-g", "-o", data, "--", "sh", "-c",
		  "exit 3", NULL) == 3, "record passes the command's status");
	CHECK(run(cmd_record, "record", "-q", "-a", "-o", data, "--duration",
		  "0.1", NULL) == 0, "record -a --duration");
	CHECK(run(cmd_record, "record", "-q", "-o", data, "--",
		  "/nonexistent/ember-leak", NULL) != 0, "record of a missing command fails");
	CHECK(run(cmd_record, "record", "-q", "-o", data, "-e", "no_such_event_xyz",
		  "--", "true", NULL) == 2, "record -e bad is a usage error");
	free(data);
}

static void expect_same(const struct census *a, const struct census *b)
{
	CHECK(a->fds == b->fds, "open fds %d before, %d after (before: %s; after: %s)", a->fds,
	      b->fds, a->fd_names, b->fd_names);
	CHECK(a->named_maps == b->named_maps, "file/perf mappings %d before, %d after",
	      a->named_maps, b->named_maps);
	CHECK(ANON_MAPS_GROW || a->maps == b->maps, "mappings %d before, %d after",
	      a->maps, b->maps);
	CHECK(a->threads == b->threads, "threads %d before, %d after",
	      a->threads, b->threads);
	CHECK(!b->children, "a child process is left (running or unreaped)");
}

/* The first round loads what stays loaded on purpose (shared libraries,
 * glibc's arenas and cached thread stacks); the next three must leave
 * the process exactly as they found it. */
static void check_rounds(void (*round)(void))
{
	round();
	struct census before = take_census();
	CHECK(!before.children, "children before the rounds");
	for (int i = 0; i < 3; i++)
		round();
	struct census after = take_census();
	expect_same(&before, &after);
}

static void test_stat_leaves_nothing(void)
{
	check_rounds(stat_round);
}

/* libunwind opens a pipe the first time it is set up (to check addresses
 * before it reads them) and keeps it for the life of the process.  record
 * -g sets it up only when its DWARF unwinder first asks libunwind for a
 * second opinion, in whichever round a sample needs one, or in none: set
 * up here, the pipe is there before the census, as the libraries are. */
static void load_libunwind(void)
{
	unw_accessors_t none = { 0 };
	unw_addr_space_t as = unw_create_addr_space(&none, 0);
	if (as) {
		unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
		unw_destroy_addr_space(as);
	}
}

static void test_record_leaves_nothing(void)
{
	load_libunwind();
	check_rounds(record_round);
}

/* The census itself notices what it is meant to notice. */
static void test_census_sees_leaks(void)
{
	struct census a = take_census();
	int fd = dup(0);
	FILE *f = fopen("/proc/self/maps", "r");   /* an fd, not a mapping */
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	struct census b = take_census();
	CHECK(b.fds == a.fds + 2, "fds %d -> %d", a.fds, b.fds);
	CHECK(b.children, "the child is not seen");
	fclose(f);
	close(fd);
	waitpid(pid, NULL, 0);
	struct census c = take_census();
	CHECK(c.fds == a.fds && !c.children, "fds %d -> %d, children %d",
	      a.fds, c.fds, c.children);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_census_sees_leaks);
	RUN(test_stat_leaves_nothing);
	if (geteuid() == 0)
		RUN(test_record_leaves_nothing);
	else
		SKIP(test_record_leaves_nothing, "recording needs root here");
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("note: could not remove %s\n", tmpdir);
	free(cmd);
	return test_summary();
}
