/* tracepoint.c - tracefs: finding (or mounting) it, reading its files,
 * expanding "subsys:name" globs into tracepoint ids, and listing them. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmc/pmc-internal.h"

static bool has_events_dir(const char *root)
{
	char *path = xasprintf("%s/events", root);
	struct stat st;
	bool ok = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	free(path);
	return ok;
}

const char *pmc_tracefs(void)
{
	/* The debugfs path serves kernels where tracefs is only reachable
	 * through debugfs's automount. */
	static const char *const where[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	for (size_t i = 0; i < ARRAY_SIZE(where); i++)
		if (has_events_dir(where[i]))
			return where[i];
	if (geteuid() != 0) {
		err_set("tracefs is not mounted at %s (mount it as root: "
			"mount -t tracefs nodev %s)", where[0], where[0]);
		return NULL;
	}
	if (mount("nodev", where[0], "tracefs", 0, NULL) < 0) {
		err_set_errno("cannot mount tracefs at %s", where[0]);
		return NULL;
	}
	if (!has_events_dir(where[0])) {
		err_set("tracefs mounted at %s has no events/ folder", where[0]);
		return NULL;
	}
	return where[0];
}

char *pmc_tracefs_read(const char *relpath, size_t *len)
{
	const char *root = pmc_tracefs();
	if (!root)
		return NULL;
	char *path = xasprintf("%s/%s", root, relpath);
	char *text = read_text_file(path, len);
	free(path);
	return text;
}

/* The id of one tracepoint; *missing tells "no such tracepoint" apart
 * from a file that exists but cannot be read. */
static int read_tp_id(const char *tracefs, const char *system,
		      const char *name, bool *missing)
{
	char *path = xasprintf("%s/events/%s/%s/id", tracefs, system, name);
	char *text = read_text_file(path, NULL);
	int id = -1;
	*missing = !text && errno == ENOENT;
	if (*missing) {
		err_set("unknown tracepoint '%s:%s' (no %s; see 'ember list')",
			system, name, path);
	} else if (text) {
		text[strcspn(text, "\n")] = '\0';
		if (parse_int(text, &id) < 0 || id < 0) {
			err_set("malformed tracepoint id in %s", path);
			id = -1;
		}
	}
	free(text);
	free(path);
	return id;
}

int pmc_tracepoint_id_at(const char *tracefs, const char *system,
			 const char *name)
{
	bool missing;
	return read_tp_id(tracefs, system, name, &missing);
}

int pmc_tracepoint_id(const char *system, const char *name)
{
	const char *root = pmc_tracefs();
	return root ? pmc_tracepoint_id_at(root, system, name) : -1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static bool is_dir(const char *parent, const struct dirent *de)
{
	if (de->d_name[0] == '.')
		return false;
	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	char *path = xasprintf("%s/%s", parent, de->d_name);
	struct stat st;
	bool ok = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	free(path);
	return ok;
}

/* Sorted names of the subfolders of dir that match glob; count or -1. */
static int matching_dirs(const char *dir, const char *glob, char ***out)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, by_name);
	if (n < 0)
		return -1;
	int k = 0;
	*out = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		if (is_dir(dir, ents[i]) && fnmatch(glob, ents[i]->d_name, 0) == 0)
			(*out)[k++] = xstrdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return k;
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

bool pmc_tp_system_exists(const char *tracefs, const char *sys_glob)
{
	char *dir = xasprintf("%s/events", tracefs);
	char **sys;
	int n = matching_dirs(dir, sys_glob, &sys);
	free(dir);
	if (n < 0)
		return false;
	free_names(sys, n);
	return n > 0;
}

typedef VEC(struct pmc_tp) tp_vec;

/* Appends the tracepoints of one system whose names match name_glob.
 * Folders without an id file (none are known, but tracefs grows) are not
 * tracepoints and are passed over. */
static void add_system(const char *tracefs, const char *system,
		       const char *name_glob, tp_vec *out)
{
	char *dir = xasprintf("%s/events/%s", tracefs, system);
	char **names;
	int n = matching_dirs(dir, name_glob, &names);
	free(dir);
	for (int i = 0; i < n; i++) {
		int id = pmc_tracepoint_id_at(tracefs, system, names[i]);
		if (id < 0)
			continue;
		struct pmc_tp tp = { xstrdup(system), xstrdup(names[i]), id };
		VEC_PUSH(out, tp);
	}
	if (n >= 0)
		free_names(names, n);
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int pmc_tp_glob(const char *tracefs, const char *sys_glob,
		const char *name_glob, struct pmc_tp **out)
{
	*out = NULL;
	if (!is_glob(sys_glob) && !is_glob(name_glob)) {
		/* An exact name gets the precise reason it cannot be had. */
		bool missing;
		int id = read_tp_id(tracefs, sys_glob, name_glob, &missing);
		if (id < 0)
			return missing ? 0 : -1;
		*out = xmalloc(sizeof(**out));
		**out = (struct pmc_tp){ xstrdup(sys_glob), xstrdup(name_glob), id };
		return 1;
	}
	char *events = xasprintf("%s/events", tracefs);
	char **sys;
	int ns = matching_dirs(events, sys_glob, &sys);
	if (ns < 0) {
		err_set_errno("cannot list %s", events);
		free(events);
		return -1;
	}
	free(events);
	tp_vec found = {0};
	for (int i = 0; i < ns; i++)
		add_system(tracefs, sys[i], name_glob, &found);
	free_names(sys, ns);
	*out = found.v;
	return (int)found.n;
}

void pmc_tp_free(struct pmc_tp *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].system);
		free(v[i].name);
	}
	free(v);
}

int pmc_each_tracepoint(pmc_tp_fn fn, void *ctx)
{
	const char *tracefs = pmc_tracefs();
	if (!tracefs)
		return -1;
	struct pmc_tp *tps;
	int n = pmc_tp_glob(tracefs, "*", "*", &tps);
	for (int i = 0; i < n; i++)
		fn(tps[i].system, tps[i].name, tps[i].id, ctx);
	if (n > 0)
		pmc_tp_free(tps, n);
	return n < 0 ? -1 : 0;
}
