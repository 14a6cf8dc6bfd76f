/* uprobe.c - user-space probes as events: "u:PATH:SYMBOL" (entry) and
 * "ur:PATH:SYMBOL" (return) opened through the uprobe PMU, so nothing is
 * left behind in tracefs: the probe lives as long as its descriptor.
 *
 * The attr: the uprobe PMU's type and retprobe bit from sysfs, config1
 * pointing at the resolved path (pmc_event.probe_path), config2 the
 * function's file offset (symbols' sym_func_offset: .symtab then .dynsym,
 * through the PT_LOAD segments).  A short library name ("libc", "c") is
 * the library ember itself maps, else the first in the library folders.
 * A uprobe records every hit (pmc_event.every_hit), as a tracepoint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmc/pmc-internal.h"
#include "symbols/symbols.h"

#define UPROBE_PMU PMC_SYSFS_PMUS "/uprobe"

/* Library folders searched for a short name, Debian's multiarch first. */
static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
	"/usr/lib", "/usr/local/lib",
};

/* "libc" or "c": the library of that name this process maps (the one
 * a program started from here maps too), else the first in the library
 * folders. */
static char *find_library(const char *name)
{
	char want[256], line[4096];
	snprintf(want, sizeof(want), "%s%s.so", strncmp(name, "lib", 3) ? "lib" : "", name);
	size_t wn = strlen(want);
	FILE *f = fopen("/proc/self/maps", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), *base;
		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		if (!strncmp(base, want, wn) && (base[wn] == '\0' || base[wn] == '.')) {
			fclose(f);
			return xstrdup(path);
		}
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < ARRAY_SIZE(lib_dirs); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s.6", lib_dirs[i], want);
		for (int v = 0; v < 2; v++) {
			if (v)
				snprintf(path, sizeof(path), "%s/%s", lib_dirs[i], want);
			if (access(path, R_OK) == 0)
				return xstrdup(path);
		}
	}
	return NULL;
}

/* A program found along $PATH, as a shell would. */
static char *find_program(const char *name)
{
	const char *dirs = getenv("PATH");
	char path[4096];
	while (dirs && *dirs) {
		size_t n = strcspn(dirs, ":");
		snprintf(path, sizeof(path), "%.*s/%s", (int)n, dirs, name);
		if (n && access(path, X_OK) == 0)
			return xstrdup(path);
		dirs += n + (dirs[n] == ':');
	}
	return NULL;
}

char *pmc_probe_file(const char *file)
{
	if (strchr(file, '/')) {
		char *real = realpath(file, NULL);
		if (!real)
			err_set_errno("%s", file);
		return real;
	}
	char *p = find_library(file);
	if (!p)
		p = find_program(file);
	if (!p)
		err_set("'%s' is neither a library this system has (libNAME.so in its "
			"library folders) nor a program on $PATH: give its path", file);
	return p;
}

/* The PMU's type and the retprobe bit, as sysfs describes them. */
static int uprobe_pmu(struct perf_event_attr *attr, bool ret)
{
	size_t len;
	char *type = read_text_file(UPROBE_PMU "/type", &len);
	int t;
	if (type)
		type[strcspn(type, "\n")] = '\0';
	if (!type || parse_int(type, &t) < 0) {
		free(type);
		err_set("this kernel has no uprobe PMU (%s): it needs CONFIG_UPROBE_EVENTS",
			UPROBE_PMU);
		return -1;
	}
	free(type);
	attr->type = (u32)t;
	if (!ret)
		return 0;
	char *fmt = read_text_file(UPROBE_PMU "/format/retprobe", &len);
	if (fmt)
		fmt[strcspn(fmt, "\n")] = '\0';
	int rc = fmt ? pmc_format_pack(fmt, 1, attr, "uprobe", "retprobe") : -1;
	if (!fmt)
		err_set("the uprobe PMU has no retprobe format (%s/format)", UPROBE_PMU);
	free(fmt);
	return rc;
}

int pmc_uprobe_attr(const char *text, struct perf_event_attr *attr, char **path)
{
	bool ret = text[1] == 'r';
	const char *spec = text + (ret ? 3 : 2), *colon = strrchr(spec, ':');
	if (!colon || colon == spec || !colon[1]) {
		err_set("'%s': write a uprobe as u:PATH:SYMBOL or ur:PATH:SYMBOL "
			"(u:libc:malloc, u:/bin/bash:readline)", text);
		return -1;
	}
	char *file = xstrdup(spec);
	file[colon - spec] = '\0';
	*path = pmc_probe_file(file);
	free(file);
	u64 off;
	if (!*path || sym_func_offset(*path, colon + 1, &off) < 0 || uprobe_pmu(attr, ret) < 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	attr->size = sizeof(*attr);
	attr->config2 = off;
	return 0;
}
