/* strings.c - the path a syscall points at, read where the syscall is
 * made.  Each syscall instruction of the C library and the loader that
 * makes one of a tool's path syscalls (open, openat, stat, unlink,
 * execve, ...; symbols/sites.c finds them) gets a tracefs uprobe that
 * fetches the path pointer and the string there: at the entry of the
 * function holding it when the path is in an argument register there
 * (cheaper: the kernel emulates the first instruction instead of
 * single-stepping it), else at the syscall instruction, from the very
 * register the kernel takes.  One event per register carries them
 * (ember_PID:path_di, path_si, ...: uprobe_events wants one fetch per
 * event); the tools pair each hit with the sys_enter that follows it on
 * the same thread when the pointers are equal (tools/strings.c).
 * A program that makes its syscalls elsewhere (static, Go) is not seen
 * here, and its tools fall back on the stack copies. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "record/record-internal.h"
#include "symbols/symbols.h"

/* x86-64 syscalls that take a path: their number and whether the path
 * is the second argument (%si) rather than the first (%di). */
static const struct {
	int nr;
	bool in_si;
} path_syscalls[] = {
	{ 2, false },   /* open */      { 85, false },  /* creat */
	{ 257, true },  /* openat */    { 437, true },  /* openat2 */
	{ 4, false },   /* stat */      { 6, false },   /* lstat */
	{ 262, true },  /* newfstatat */{ 332, true },  /* statx */
	{ 137, false }, /* statfs */    { 87, false },  /* unlink */
	{ 263, true },  /* unlinkat */  { 59, false },  /* execve */
	{ 322, true },  /* execveat */
};

/* The argument registers, as uprobe_events names them. */
static const char *const reg_name[SYM_SITE_ARGS] = { "di", "si", "dx", "cx", "r8", "r9" };

/* The event of the probes whose path is in register reg: path_di, ... */
static void event_of(int reg, char *out, size_t cap)
{
	snprintf(out, cap, "path_%s", reg_name[reg]);
}

/* The wanted sites' numbers with their path argument. */
static size_t wants_of(const int *nrs, size_t n, struct sym_syscall_want *want)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < ARRAY_SIZE(path_syscalls); j++)
			if (path_syscalls[j].nr == nrs[i])
				want[k++] = (struct sym_syscall_want){ nrs[i], path_syscalls[j].in_si };
	return k;
}

/* The files probed so far, by device and inode: a library seen through
 * several processes (or their /proc/PID/root) is probed once. */
struct probed {
	VEC(struct stat) files;
	bool made[SYM_SITE_ARGS];  /* which events have a probe point */
	size_t sites;
};

static bool seen_before(struct probed *pr, const struct stat *st)
{
	for (size_t i = 0; i < pr->files.n; i++)
		if (pr->files.v[i].st_dev == st->st_dev && pr->files.v[i].st_ino == st->st_ino)
			return true;
	VEC_PUSH(&pr->files, *st);
	return false;
}

/* The C library or a loader: where nearly every program's path
 * syscalls are made (glibc's libc.so.6 and ld-linux, musl's ld-musl). */
static bool is_libc_or_loader(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-musl", 7);
}

/* One probe: at the function's entry when the path is in an argument
 * register there (once per function), else at the syscall instruction. */
static int probe_site(struct rec_probes *p, struct probed *pr, const char *path,
		      const struct sym_syscall_sites *sites, size_t i)
{
	const struct sym_syscall_site *s = &sites->v.v[i];
	bool entry = s->entry_arg >= 0;
	for (size_t j = 0; entry && j < i; j++)
		if (sites->v.v[j].entry_arg >= 0 && sites->v.v[j].entry == s->entry)
			return 0;  /* that function's entry is probed already */
	int reg = entry ? s->entry_arg : s->arg;
	char event[16], fetch[64];
	event_of(reg, event, sizeof(event));
	snprintf(fetch, sizeof(fetch), "ptr=%%%s:u64 path=+0(%%%s):ustring", reg_name[reg],
		 reg_name[reg]);
	if (rec_probes_add(p, event, path, entry ? s->entry : s->offset, fetch) < 0)
		return -1;
	pr->made[reg] = true;
	pr->sites++;
	return 0;
}

/* Probes the file's sites of the syscalls nrs: 0, or -1 with err_set(). */
static int probe_file(struct rec_probes *p, struct probed *pr, const char *path,
		      const int *nrs, size_t n)
{
	struct stat st;
	if (stat(path, &st) < 0 || seen_before(pr, &st))
		return 0;
	struct sym_syscall_want want[ARRAY_SIZE(path_syscalls)];
	struct sym_syscall_sites sites;
	if (sym_syscall_sites(path, want, wants_of(nrs, n, want), &sites) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < sites.v.n && rc == 0; i++)
		rc = probe_site(p, pr, path, &sites, i);
	sym_syscall_sites_free(&sites);
	return rc;
}

/* The C libraries and loaders process pid maps ("self" for ember),
 * through its root so that a container's own are found. */
static int probe_process(struct rec_probes *p, struct probed *pr, const char *pid,
			 const int *nrs, size_t n)
{
	char maps[64], line[PATH_MAX + 128], path[PATH_MAX + 32];
	snprintf(maps, sizeof(maps), "/proc/%s/maps", pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return 0;          /* gone since: nothing to probe */
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		if (!file || !strstr(line, " r-xp "))
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (!is_libc_or_loader(file))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/root%s", pid, file);
		rc = probe_file(p, pr, path, nrs, n);
	}
	fclose(f);
	return rc;
}

/* Every process's, for a system-wide run. */
static int probe_all(struct rec_probes *p, struct probed *pr, const int *nrs, size_t n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && d && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			rc = probe_process(p, pr, de->d_name, nrs, n);
	if (d)
		closedir(d);
	return rc;
}

/* The processes whose libraries to probe: -p's and -t's (a thread's
 * maps are its process's), every process system-wide or on -C's CPUs;
 * a command's are ember's own, probed always. */
static int probe_targets(struct rec_probes *p, struct probed *pr, const struct rec_opts *o,
			 const int *nrs, size_t n)
{
	int rc = probe_process(p, pr, "self", nrs, n);
	for (int i = 0; rc == 0 && i < o->npids + o->ntids; i++) {
		char pid[16];
		snprintf(pid, sizeof(pid), "%d",
			 (int)(i < o->npids ? o->pids[i] : o->tids[i - o->npids]));
		rc = probe_process(p, pr, pid, nrs, n);
	}
	if (rc == 0 && (o->system_wide || o->cpus))
		rc = probe_all(p, pr, nrs, n);
	return rc;
}

int rec_strings_create(struct rec_probes *p, const struct rec_opts *o, const int *nrs,
		       size_t n, char *names, size_t cap)
{
	struct probed pr = {0};
	int rc = probe_targets(p, &pr, o, nrs, n);
	VEC_FREE(&pr.files);
	if (rc == 0 && !pr.sites) {
		err_set("no syscall instruction of these syscalls in the C library");
		rc = -1;
	}
	/* "ember_PID:path_di,ember_PID:path_si" */
	size_t len = 0;
	names[0] = '\0';
	for (int r = 0; rc == 0 && r < SYM_SITE_ARGS && len + 1 < cap; r++) {
		if (!pr.made[r])
			continue;
		char event[16];
		event_of(r, event, sizeof(event));
		if (len)
			names[len++] = ',';
		rec_probes_event_name(p, event, names + len, cap - len);
		len += strlen(names + len);
	}
	return rc;
}
