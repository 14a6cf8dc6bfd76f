/* list.c - the probes a pattern matches, for `ember trace -l` and `-lv`,
 * named as bpftrace names them: tracepoints from tracefs (their fields
 * from the format files, the common_ ones left out as args never has
 * them), the functions of an ELF file for uprobes (its symbol tables),
 * and the software and hardware events perf_event_open counts. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmc/pmc.h"
#include "symbols/symbols.h"
#include "trace/trace.h"

/* The probe types a program may name, with their short aliases. */
enum kind { K_TRACEPOINT, K_UPROBE, K_SOFTWARE, K_HARDWARE, K_N };
static const char *const kind_name[K_N] = { "tracepoint", "uprobe", "software", "hardware" };
static const char *const kind_alias[K_N] = { "t", "u", "s", "h" };

/* bpftrace's names of the events perf_event_open counts without a PMU's
 * raw codes (the kernel's generic software and hardware events). */
static const char *const software_events[] = {
	"alignment-faults", "bpf-output", "context-switches", "cpu-clock", "cpu-migrations",
	"dummy", "emulation-faults", "major-faults", "minor-faults", "page-faults",
	"task-clock",
};
static const char *const hardware_events[] = {
	"backend-stalls", "branch-instructions", "branch-misses", "bus-cycles", "cache-misses",
	"cache-references", "cpu-cycles", "frontend-stalls", "instructions", "ref-cycles",
};

/* Probe types that read the kernel's own functions or memory. */
static const char *const kernel_kinds[] = { "kprobe", "kretprobe", "kfunc", "kretfunc", "k",
					    "kr", "f", "fr" };

/* The fields of a probe that has none (or when they were not asked). */
static const char *const no_fields[] = { NULL };

struct lister {
	trace_probe_fn fn;
	void *ctx;
	bool fields;
	const char *glob;          /* over the whole name, or NULL */
	const char *sys, *name;    /* tracepoints: the globs of each part */
	VEC(char *) names;         /* the names found, to sort */
};

static bool whole_name_matches(const struct lister *l, const char *name)
{
	return !l->glob || fnmatch(l->glob, name, 0) == 0;
}

/* "\tfield:char prev_comm[16];\toffset:..." -> "char prev_comm[16]"; the
 * common_ fields left out. */
struct fields {
	VEC(char *) v;             /* the declarations, then NULL */
};

static void add_fields(const char *sys, const char *name, struct fields *out)
{
	char rel[512];
	size_t len;
	snprintf(rel, sizeof(rel), "events/%s/%s/format", sys, name);
	char *fmt = pmc_tracefs_read(rel, &len);
	char *save = NULL;
	for (char *line = fmt ? strtok_r(fmt, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *decl = strstr(line, "field:");
		if (!decl)
			continue;
		decl += 6;
		size_t n = strcspn(decl, ";");
		const char *last = decl + n;
		while (last > decl && last[-1] != ' ' && last[-1] != '*')
			last--;
		if (strncmp(last, "common_", 7) != 0)
			VEC_PUSH(&out->v, xstrndup(decl, n));
	}
	free(fmt);
	VEC_PUSH(&out->v, NULL);
}

/* The ftrace system's events are the function tracer's own records, not
 * tracepoints a probe can attach to (bpftrace leaves them out too). */
static void on_tracepoint(const char *sys, const char *name, int id, void *ctx)
{
	struct lister *l = ctx;
	char *full = xasprintf("tracepoint:%s:%s", sys, name);
	if (!strcmp(sys, "ftrace") || (l->sys && fnmatch(l->sys, sys, 0)) ||
	    (l->name && fnmatch(l->name, name, 0)) || !whole_name_matches(l, full))
		free(full);
	else
		VEC_PUSH(&l->names, full);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names gathered, sorted as whole strings (as bpftrace sorts them:
 * fib6 before fib), each with its fields when asked. */
static void print_tracepoints(struct lister *l)
{
	if (l->names.n)
		qsort(l->names.v, l->names.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < l->names.n; i++) {
		char *sys = l->names.v[i] + strlen("tracepoint:");
		char *colon = strchr(sys, ':');
		struct fields f = {0};
		if (l->fields) {
			*colon = '\0';
			add_fields(sys, colon + 1, &f);
			*colon = ':';
		}
		l->fn(l->names.v[i], f.v.n ? (const char *const *)f.v.v : no_fields, l->ctx);
		for (size_t j = 0; j < f.v.n; j++)
			free(f.v.v[j]);
		VEC_FREE(&f.v);
		free(l->names.v[i]);
	}
	VEC_FREE(&l->names);
}

static void events(struct lister *l, enum kind k, const char *glob)
{
	const char *const *v = k == K_SOFTWARE ? software_events : hardware_events;
	size_t n = k == K_SOFTWARE ? ARRAY_SIZE(software_events) : ARRAY_SIZE(hardware_events);
	for (size_t i = 0; i < n; i++) {
		char full[128];
		snprintf(full, sizeof(full), "%s:%s:", kind_name[k], v[i]);
		if ((!glob || fnmatch(glob, v[i], 0) == 0) && whole_name_matches(l, full))
			l->fn(full, no_fields, l->ctx);
	}
}

static void on_function(const char *name, void *ctx)
{
	struct lister *l = ctx;
	if (fnmatch(l->name, name, 0) == 0)
		VEC_PUSH(&l->names, xstrdup(name));
}

/* The functions of the file's debug file too, where symbols/ finds one
 * (by build-id or debuglink: Debian's libc6-dbg names libc's local
 * functions, which its stripped .dynsym leaves out). */
static void debug_functions(struct lister *l, const char *path)
{
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ 0 });
	struct sym_dso *d = c ? sym_dso_get(c, path, NULL, 0, 0) : NULL;
	if (d)
		(void)sym_lookup(d, 0);   /* loads its symbols, finding the file */
	const char *symfile = d ? sym_dso_symfile(d) : NULL;
	if (symfile && strcmp(symfile, path))
		(void)sym_each_function(symfile, on_function, l);
	if (c)
		sym_ctx_free(c);
}

/* "FILE:GLOB": the file's functions, sorted, each once. */
static int uprobes(struct lister *l, const char *rest)
{
	const char *colon = strrchr(rest, ':');
	if (!colon || colon == rest) {
		err_set("'uprobe:%s': give the file and a function glob, as uprobe:PATH:GLOB", rest);
		return -1;
	}
	/* Named as given when it is a path (as bpftrace does), else as
	 * found (libc -> its path). */
	char *file = xstrndup(rest, (size_t)(colon - rest));
	char *path = pmc_probe_file(file);
	const char *shown = strchr(file, '/') ? file : path;
	l->name = colon[1] ? colon + 1 : "*";
	if (!path || sym_each_function(path, on_function, l) < 0) {
		free(path);
		free(file);
		return -1;
	}
	debug_functions(l, path);
	if (l->names.n)
		qsort(l->names.v, l->names.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < l->names.n; i++) {
		if (i && !strcmp(l->names.v[i], l->names.v[i - 1]))
			continue;
		char full[1024];
		snprintf(full, sizeof(full), "uprobe:%s:%s", shown, l->names.v[i]);
		l->fn(full, no_fields, l->ctx);
	}
	for (size_t i = 0; i < l->names.n; i++)
		free(l->names.v[i]);
	VEC_FREE(&l->names);
	free(path);
	free(file);
	return 0;
}

/* The kind a pattern's first part names; -1 when none. */
static int kind_of(const char *type, size_t n)
{
	for (int k = 0; k < K_N; k++)
		if ((strlen(kind_name[k]) == n && !strncmp(type, kind_name[k], n)) ||
		    (strlen(kind_alias[k]) == n && !strncmp(type, kind_alias[k], n)))
			return k;
	return -1;
}

static int refuse_kernel_kind(const char *type, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(kernel_kinds); i++)
		if (strlen(kernel_kinds[i]) == n && !strncmp(type, kernel_kinds[i], n)) {
			err_set("'%.*s' probes read the kernel's functions, which ember trace "
				"cannot: it runs on perf_event_open, without BPF; use the "
				"tracepoints (tracepoint:SYSTEM:NAME)", (int)n, type);
			return -1;
		}
	return 0;
}

/* "SYS:NAME" globs of a tracepoint pattern ("*" for a missing part). */
static int tracepoints(struct lister *l, const char *rest)
{
	char sys[256];
	const char *colon = strchr(rest, ':');
	snprintf(sys, sizeof(sys), "%.*s", colon ? (int)(colon - rest) : (int)strlen(rest), rest);
	l->sys = sys[0] ? sys : "*";
	l->name = colon && colon[1] ? colon + 1 : "*";
	if (pmc_each_tracepoint(on_tracepoint, l) < 0)
		return -1;
	print_tracepoints(l);
	return 0;
}

int trace_list(const char *pattern, bool fields, trace_probe_fn fn, void *ctx)
{
	struct lister l = { .fn = fn, .ctx = ctx, .fields = fields };
	const char *colon = pattern ? strchr(pattern, ':') : NULL;
	int k = colon ? kind_of(pattern, (size_t)(colon - pattern)) : -1;
	if (colon && k < 0 && refuse_kernel_kind(pattern, (size_t)(colon - pattern)) < 0)
		return -1;
	if (k == K_TRACEPOINT)
		return tracepoints(&l, colon + 1);
	if (k == K_UPROBE)
		return uprobes(&l, colon + 1);
	if (k == K_SOFTWARE || k == K_HARDWARE) {
		char glob[256];
		snprintf(glob, sizeof(glob), "%.*s", (int)strcspn(colon + 1, ":"), colon + 1);
		events(&l, (enum kind)k, glob[0] ? glob : "*");
		return 0;
	}
	/* One glob over whole names, or everything. */
	l.glob = pattern && *pattern ? pattern : NULL;
	events(&l, K_SOFTWARE, NULL);
	events(&l, K_HARDWARE, NULL);
	return tracepoints(&l, "*:*");
}
