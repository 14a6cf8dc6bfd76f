/* test-pmc.c - unit tests of pmc/: event specs to perf_event_attr (every
 * event class, modifiers, groups, tracepoint globs, a fake sysfs PMU),
 * probing the kernel, and the error messages users see. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmc/pmc-internal.h"
#include "pmc/pmc.h"
#include "symbols/symbols.h"
#include "tests/unit/test.h"

/* Parses spec into a fresh list; the caller frees it. */
static int parse1(const char *spec, struct pmc_list *l)
{
	memset(l, 0, sizeof(*l));
	return pmc_parse(l, spec);
}

/* Checks that spec is one event of this type and config. */
static void expect_event(const char *spec, u32 type, u64 config)
{
	struct pmc_list l;
	int rc = parse1(spec, &l);
	CHECK(rc == 0, "%s: %s", spec, err_msg());
	if (rc == 0) {
		CHECK(l.n == 1, "%s: %zu events", spec, l.n);
		CHECK(l.v[0].attr.type == type, "%s: type %u", spec, l.v[0].attr.type);
		CHECK(l.v[0].attr.config == config, "%s: config 0x%llx", spec,
		      (unsigned long long)l.v[0].attr.config);
		CHECK(l.v[0].attr.size == sizeof(struct perf_event_attr), "%s: size",
		      spec);
		CHECK(!strcmp(l.v[0].name, spec), "%s: name '%s'", spec, l.v[0].name);
		CHECK(l.v[0].group == 0, "%s: group %d", spec, l.v[0].group);
	}
	pmc_list_free(&l);
}

/* Checks that spec is refused with a message containing want. */
static void expect_error(const char *spec, const char *want)
{
	struct pmc_list l = {0};
	int rc = pmc_parse(&l, spec);
	CHECK(rc < 0, "'%s' was accepted", spec);
	CHECK(rc < 0 && strstr(err_msg(), want), "'%s': message '%s' lacks '%s'",
	      spec, err_msg(), want);
	CHECK(l.n == 0, "'%s': %zu events left after failure", spec, l.n);
	pmc_list_free(&l);
}

static void test_software(void)
{
	static const struct { const char *name; u64 config; } sw[] = {
		{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
		{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
		{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS },
		{ "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS },
		{ "dummy", PERF_COUNT_SW_DUMMY },
		{ "bpf-output", PERF_COUNT_SW_BPF_OUTPUT },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sw); i++)
		expect_event(sw[i].name, PERF_TYPE_SOFTWARE, sw[i].config);
}

static void test_hardware(void)
{
	static const struct { const char *name; u64 config; } hw[] = {
		{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
		{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
		{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
		{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
		{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
		{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
		{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
	};
	for (size_t i = 0; i < ARRAY_SIZE(hw); i++)
		expect_event(hw[i].name, PERF_TYPE_HARDWARE, hw[i].config);
}

/* config = cache | op << 8 | result << 16 (perf_event_open(2)); the
 * numbers are written out so a wrong enum in the code cannot hide. */
static void test_hw_cache(void)
{
	static const struct { const char *name; u64 config; } hc[] = {
		{ "L1-dcache-loads", 0x00000 },
		{ "L1-dcache-load-misses", 0x10000 },
		{ "L1-dcache-stores", 0x00100 },
		{ "L1-dcache-store-misses", 0x10100 },
		{ "L1-dcache-prefetches", 0x00200 },
		{ "L1-dcache-prefetch-misses", 0x10200 },
		{ "L1-icache-loads", 0x00001 },
		{ "L1-icache-load-misses", 0x10001 },
		{ "L1-icache-prefetches", 0x00201 },
		{ "LLC-loads", 0x00002 },
		{ "LLC-load-misses", 0x10002 },
		{ "LLC-stores", 0x00102 },
		{ "LLC-store-misses", 0x10102 },
		{ "LLC-prefetch-misses", 0x10202 },
		{ "dTLB-loads", 0x00003 },
		{ "dTLB-load-misses", 0x10003 },
		{ "dTLB-store-misses", 0x10103 },
		{ "dTLB-prefetches", 0x00203 },
		{ "iTLB-loads", 0x00004 },
		{ "iTLB-load-misses", 0x10004 },
		{ "branch-loads", 0x00005 },
		{ "branch-load-misses", 0x10005 },
		{ "node-loads", 0x00006 },
		{ "node-store-misses", 0x10106 },
		{ "node-prefetches", 0x00206 },
		/* perf's other spellings and defaults (op load, result access) */
		{ "L1-dcache", 0x00000 },
		{ "LLC-misses", 0x10002 },
		{ "L1-dcache-miss", 0x10000 },
		{ "l1d-loads", 0x00000 },
		{ "dTLB-speculative-read-misses", 0x10203 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(hc); i++)
		expect_event(hc[i].name, PERF_TYPE_HW_CACHE, hc[i].config);
	expect_error("L1-icache-stores",
		     "'L1-icache-stores' is not a valid cache event");
	expect_error("iTLB-store-misses", "iTLB has no stores");
	expect_error("branch-prefetches", "not a valid cache event");
	expect_error("L1-dcache-loads-misses-x", "unknown event");
}

struct walk { int n, bad, cache; };

static void check_listed(const char *name, const char *alias, u32 type,
			 u64 config, void *ctx)
{
	struct walk *w = ctx;
	const char *spell[2] = { name, alias };
	w->n++;
	w->cache += type == PERF_TYPE_HW_CACHE;
	for (int i = 0; i < 2 && spell[i]; i++) {
		struct pmc_list l;
		bool ok = parse1(spell[i], &l) == 0 && l.n == 1 &&
			  l.v[0].attr.type == type && l.v[0].attr.config == config;
		CHECK(ok, "listed '%s' does not parse back to %u/0x%llx", spell[i],
		      type, (unsigned long long)config);
		w->bad += !ok;
		pmc_list_free(&l);
	}
}

/* What "ember list" will show must be exactly what the parser takes. */
static void test_each_symbolic(void)
{
	struct walk w = {0};
	pmc_each_symbolic(check_listed, &w);
	/* 7 caches with 3+2+3+3+1+1+3 valid ops, each as access and miss. */
	CHECK(w.cache == 32, "%d cache events listed", w.cache);
	CHECK(w.n >= 12 + 10 + 32 && w.bad == 0, "%d listed, %d bad", w.n, w.bad);
}

static void test_raw(void)
{
	expect_event("r1a8", PERF_TYPE_RAW, 0x1a8);
	expect_event("rC0", PERF_TYPE_RAW, 0xc0);
	expect_event("r530110", PERF_TYPE_RAW, 0x530110);
	expect_error("rxyz", "unknown event 'rxyz' (see 'ember list')");
	expect_error("r", "unknown event 'r'");
	expect_error("r12345678123456789", "unknown event");
}

/* Expected bits, taken from what perf 6.1 puts in the attr for the same
 * spec (perf stat -vv): the first of u/k/h excludes the other levels, u and
 * p also exclude guests unless G/H were given, G/H exclude each other. */
struct mod_case {
	const char *spec;
	int eu, ek, eh, eg, ehost, precise;
};

static const struct mod_case mod_cases[] = {
	{ "cpu-clock",        0, 0, 0, 1, 0, 0 },
	{ "cpu-clock:u",      0, 1, 1, 1, 0, 0 },
	{ "cpu-clock:k",      1, 0, 1, 0, 0, 0 },
	{ "cpu-clock:h",      1, 1, 0, 0, 0, 0 },
	{ "cpu-clock:uk",     0, 0, 1, 1, 0, 0 },
	{ "cpu-clock:ku",     0, 0, 1, 1, 0, 0 },
	{ "cpu-clock:upp",    0, 1, 1, 1, 0, 2 },
	{ "cpu-clock:p",      0, 0, 0, 1, 0, 1 },
	{ "cpu-clock:ppp",    0, 0, 0, 1, 0, 3 },
	{ "cpu-clock:G",      0, 0, 0, 0, 1, 0 },
	{ "cpu-clock:H",      0, 0, 0, 1, 0, 0 },
	{ "cpu-clock:GH",     0, 0, 0, 0, 0, 0 },
	{ "cpu-clock:uG",     0, 1, 1, 0, 1, 0 },
	{ "cpu-clock:Gu",     0, 1, 1, 0, 1, 0 },
	{ "cpu-clock:pG",     0, 0, 0, 0, 1, 1 },
	{ "cpu-clock:kH",     1, 0, 1, 1, 0, 0 },
	{ "{cpu-clock}:k",    1, 0, 1, 1, 0, 0 },
	{ "{cpu-clock:u}:k",  0, 0, 1, 1, 0, 0 },
	{ "{cpu-clock:k}:u",  0, 0, 1, 1, 0, 0 },
	{ "{cpu-clock:p}:p",  0, 0, 0, 1, 0, 2 },
	{ "sched:sched_switch:k", 1, 0, 1, 0, 0, 0 },
	{ "r1a8:u",           0, 1, 1, 1, 0, 0 },
};

static void check_mod_case(const struct mod_case *c)
{
	struct pmc_list l;
	if (parse1(c->spec, &l) < 0) {
		CHECK(0, "%s: %s", c->spec, err_msg());
		return;
	}
	const struct perf_event_attr *a = &l.v[0].attr;
	CHECK(a->exclude_user == c->eu && a->exclude_kernel == c->ek &&
	      a->exclude_hv == c->eh && a->exclude_guest == c->eg &&
	      a->exclude_host == c->ehost && a->precise_ip == (unsigned)c->precise,
	      "%s: user %d kernel %d hv %d guest %d host %d precise %d", c->spec,
	      a->exclude_user, a->exclude_kernel, a->exclude_hv,
	      a->exclude_guest, a->exclude_host, a->precise_ip);
	CHECK(l.v[0].user_precise == (c->precise > 0), "%s: user_precise", c->spec);
	pmc_list_free(&l);
}

static void test_modifiers(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(mod_cases); i++) {
		if (!strncmp(mod_cases[i].spec, "sched:", 6))
			continue;  /* needs tracefs: test_tracepoints runs it */
		check_mod_case(&mod_cases[i]);
	}
	struct pmc_list l;
	CHECK(parse1("cpu-clock:IDe", &l) == 0, "%s", err_msg());
	CHECK(l.n == 1 && l.v[0].attr.exclude_idle && l.v[0].attr.pinned &&
	      l.v[0].attr.exclusive, "I/D/e bits not set");
	pmc_list_free(&l);
	CHECK(parse1("cycles:P", &l) == 0, "%s", err_msg());
	CHECK(l.n == 1 && l.v[0].precise_max && !l.v[0].user_precise &&
	      l.v[0].attr.precise_ip == 0, ":P is not precise_max");
	CHECK(l.n == 1 && !strcmp(l.v[0].name, "cycles:P"), "name %s", l.v[0].name);
	pmc_list_free(&l);
	expect_error("cpu-clock:pppp", "too many 'p' modifiers in 'cpu-clock:pppp'");
	expect_error("{cpu-clock:pp}:pp", "too many 'p' modifiers");
	expect_error("cpu-clock:x", "unknown modifier 'x' in 'cpu-clock:x'");
	expect_error("cpu-clock:uz", "unknown modifier 'z'");
	expect_error("cpu-clock:", "empty modifier after ':' in 'cpu-clock:'");
	expect_error("{cpu-clock}:q", "unknown modifier 'q' in '{cpu-clock}:q'");
}

static void test_groups(void)
{
	struct pmc_list l;
	int rc = parse1("cpu-clock,{task-clock,cs:k}:u,faults,{dummy,minor-faults}", &l);
	CHECK(rc == 0, "%s", err_msg());
	if (rc < 0)
		return;
	static const int leader[] = { 0, 1, 1, 3, 4, 4 };
	static const char *const names[] = { "cpu-clock", "task-clock", "cs:k",
					     "faults", "dummy", "minor-faults" };
	CHECK(l.n == 6, "%zu events", l.n);
	for (size_t i = 0; i < l.n && i < 6; i++) {
		CHECK(l.v[i].group == leader[i], "event %zu leader %d", i, l.v[i].group);
		CHECK(!strcmp(l.v[i].name, names[i]), "event %zu name %s", i,
		      l.v[i].name);
	}
	/* The group's :u applies on top of each member's own modifier. */
	CHECK(l.v[1].attr.exclude_kernel && !l.v[1].attr.exclude_user,
	      "task-clock in {..}:u not user-only");
	CHECK(!l.v[2].attr.exclude_kernel && !l.v[2].attr.exclude_user &&
	      l.v[2].attr.exclude_hv, "cs:k in {..}:u");
	CHECK(!l.v[3].attr.exclude_kernel && !l.v[0].attr.exclude_kernel,
	      "group modifier leaked outside the group");
	CHECK(l.last == 0, "last %zu", l.last);
	/* A later -e appends, and its groups index the whole list. */
	CHECK(pmc_parse(&l, "{cs,cpu-migrations}") == 0, "%s", err_msg());
	CHECK(l.n == 8 && l.last == 6 && l.v[6].group == 6 && l.v[7].group == 6,
	      "second parse: n %zu last %zu", l.n, l.last);
	/* A failing parse leaves the list as it was. */
	CHECK(pmc_parse(&l, "cs,bogus") < 0, "accepted bogus");
	CHECK(l.n == 8 && l.last == 6, "failed parse changed the list: %zu", l.n);
	pmc_list_free(&l);

	expect_error("{cpu-clock,cs", "missing '}' in '{cpu-clock,cs'");
	expect_error("{cpu-clock}x", "unexpected 'x' after group '{cpu-clock}'");
	expect_error("{}", "empty group");
	expect_error("{cpu-clock,{cs}}", "nested groups are not supported");
	expect_error("{cpu-clock,cs}}", "unexpected '}' after group");
	expect_error("cpu-clock}", "unbalanced '}'");
	expect_error("cpu-clock,,cs", "empty event");
	expect_error("cpu-clock,", "trailing comma");
	expect_error("", "empty event spec");
}

static void test_unknown(void)
{
	expect_error("foo", "unknown event 'foo' (see 'ember list')");
	expect_error("cpu-clock,foo", "unknown event 'foo' (see 'ember list')");
	expect_error("CPU-CLOCK", "unknown event 'CPU-CLOCK'");
	expect_error("foo:u", "unknown event 'foo' (see 'ember list')");
	expect_error("nosuchsys:bar", "no tracepoint system 'nosuchsys'");
}

/* Sorted tracepoint folders of tracefs/events/sys matching glob, read
 * here independently of pmc/.  Returns the count; free with free_names. */
static int list_tp_dirs(const char *root, const char *sys, const char *glob,
			char ***names)
{
	char *path = xasprintf("%s/events/%s", root, sys);
	struct dirent **ents;
	int n = scandir(path, &ents, NULL, alphasort), k = 0;
	*names = xcalloc(n > 0 ? (size_t)n : 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		char *id = xasprintf("%s/%s/id", path, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && access(id, R_OK) == 0 &&
		    fnmatch(glob, ents[i]->d_name, 0) == 0)
			(*names)[k++] = xstrdup(ents[i]->d_name);
		free(id);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	free(path);
	return k;
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int read_id(const char *root, const char *sys, const char *name)
{
	char *path = xasprintf("%s/events/%s/%s/id", root, sys, name);
	char *t = read_text_file(path, NULL);
	int id = t ? atoi(t) : -1;
	free(t);
	free(path);
	return id;
}

/* The parsed glob must be exactly the matching folders, with their ids. */
static void check_glob(const char *root, const char *sys, const char *glob)
{
	char **names;
	int n = list_tp_dirs(root, sys, glob, &names);
	char *spec = xasprintf("%s:%s", sys, glob);
	struct pmc_list l;
	int rc = parse1(spec, &l);
	CHECK(n > 0, "no folder matches %s in %s", spec, root);
	CHECK(rc == 0, "%s: %s", spec, err_msg());
	CHECK(rc < 0 || (int)l.n == n, "%s: %zu events, %d folders", spec, l.n, n);
	for (int i = 0; rc == 0 && i < n && i < (int)l.n; i++) {
		const struct pmc_event *ev = &l.v[i];
		char *want = xasprintf("%s:%s", sys, names[i]);
		CHECK(!strcmp(ev->name, want), "%s: event %d is %s, want %s", spec,
		      i, ev->name, want);
		CHECK(ev->tp_system && !strcmp(ev->tp_system, sys) && ev->tp_name &&
		      !strcmp(ev->tp_name, names[i]), "%s: tp fields", want);
		CHECK(ev->attr.type == PERF_TYPE_TRACEPOINT, "%s: type", want);
		CHECK(ev->attr.config == (u64)read_id(root, sys, names[i]),
		      "%s: config %llu", want, (unsigned long long)ev->attr.config);
		CHECK(ev->group == i, "%s: group %d", want, ev->group);
		free(want);
	}
	pmc_list_free(&l);
	free_names(names, n);
	free(spec);
}

static void test_tracepoints(void)
{
	const char *root = pmc_tracefs();
	if (!root) {
		SKIP(test_tracepoints, "no tracefs here and it cannot be mounted");
		return;
	}
	check_glob(root, "block", "*");
	check_glob(root, "sched", "sched_wake*");
	check_glob(root, "sched", "sched_switch");
	check_glob(root, "sched", "sched_[sw]*");

	struct pmc_list l;
	CHECK(parse1("sched:sched_wak*:k", &l) == 0, "%s", err_msg());
	for (size_t i = 0; i < l.n; i++)
		CHECK(l.v[i].attr.exclude_user && !l.v[i].attr.exclude_kernel &&
		      !strchr(l.v[i].name + 6, ':'), "%s: :k not applied", l.v[i].name);
	pmc_list_free(&l);
	/* A glob in the system part. */
	CHECK(parse1("sch*:sched_switch", &l) == 0, "%s", err_msg());
	CHECK(l.n == 1 && !strcmp(l.v[0].name, "sched:sched_switch"), "sch*: %zu", l.n);
	int id = pmc_tracepoint_id("sched", "sched_switch");
	CHECK(id >= 0 && l.n == 1 && l.v[0].attr.config == (u64)id,
	      "pmc_tracepoint_id %d", id);
	pmc_list_free(&l);
	CHECK(pmc_tracepoint_id("sched", "nope") < 0 &&
	      strstr(err_msg(), "unknown tracepoint 'sched:nope'"), "%s", err_msg());

	size_t len = 0;
	char *fmt = pmc_tracefs_read("events/sched/sched_switch/format", &len);
	CHECK(fmt && len > 0 && strstr(fmt, "name: sched_switch"), "format file");
	free(fmt);
	CHECK(!pmc_tracefs_read("events/sched/nope/format", NULL), "read a missing file");

	expect_error("sched:nope_*", "no tracepoint matches 'sched:nope_*'");
	expect_error("sched:nope", "no tracepoint matches 'sched:nope'");
	expect_error("sched:", "tracepoints are written subsystem:name");
	expect_error("nosuch*:x*", "no tracepoint system 'nosuch*'");
	check_mod_case(&mod_cases[20]);
}

static void test_filter(void)
{
	if (!pmc_tracefs()) {
		SKIP(test_filter, "no tracefs");
		return;
	}
	struct pmc_list l;
	CHECK(parse1("cpu-clock", &l) == 0, "%s", err_msg());
	CHECK(pmc_set_filter(&l, "prev_pid > 0") < 0 &&
	      strstr(err_msg(), "follows no tracepoint"), "%s", err_msg());
	CHECK(pmc_parse(&l, "sched:sched_switch,dummy") == 0, "%s", err_msg());
	CHECK(pmc_set_filter(&l, "prev_pid > 0") == 0, "%s", err_msg());
	CHECK(l.v[1].filter && !strcmp(l.v[1].filter, "prev_pid > 0"), "no filter");
	CHECK(!l.v[0].filter && !l.v[2].filter, "filter on a non-tracepoint");
	/* --filter follows its own -e: the next one leaves sched_switch alone. */
	CHECK(pmc_parse(&l, "sched:sched_wakeup*") == 0, "%s", err_msg());
	CHECK(pmc_set_filter(&l, "pid == 1") == 0, "%s", err_msg());
	CHECK(!strcmp(l.v[1].filter, "prev_pid > 0"), "older filter replaced");
	for (size_t i = 3; i < l.n; i++)
		CHECK(l.v[i].filter && !strcmp(l.v[i].filter, "pid == 1"),
		      "%s has no filter", l.v[i].name);
	CHECK(l.n >= 4, "sched_wakeup* matched %zu", l.n - 3);
	pmc_list_free(&l);
}

/* ---- a fake sysfs PMU tree ---------------------------------------------- */

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL, "cannot create %s", path);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void make_fake_pmu(const char *root)
{
	char d[600];
	snprintf(d, sizeof(d), "%s/fakepmu", root);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/fakepmu/format", root);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/fakepmu/events", root);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/fakepmu", root);
	put_file(d, "type", "42\n");
	put_file(d, "format/event", "config:0-7\n");
	put_file(d, "format/umask", "config:8-15\n");
	put_file(d, "format/split", "config:16-19,32-35\n");
	put_file(d, "format/inv", "config:23\n");
	put_file(d, "format/ldlat", "config1:0-15\n");
	put_file(d, "format/ext", "config2:60-63\n");
	put_file(d, "format/bad", "config:7-0\n");
	put_file(d, "format/weird", "cfg:0-3\n");
	put_file(d, "events/ev1", "event=0x3c,umask=0x01\n");
	put_file(d, "events/needs", "event=0x5,ldlat=?\n");
}

struct fake {
	struct pmc_roots roots;
	struct pmc_list l;
};

static int fake_parse(struct fake *f, const char *spec)
{
	pmc_list_free(&f->l);
	return pmc_parse_at(&f->l, spec, &f->roots);
}

static void fake_expect(struct fake *f, const char *spec, u64 config,
			u64 config1, u64 config2)
{
	int rc = fake_parse(f, spec);
	CHECK(rc == 0, "%s: %s", spec, err_msg());
	if (rc < 0)
		return;
	const struct perf_event_attr *a = &f->l.v[0].attr;
	CHECK(f->l.n == 1 && a->type == 42, "%s: type %u", spec, a->type);
	CHECK(a->config == config && a->config1 == config1 && a->config2 == config2,
	      "%s: config 0x%llx config1 0x%llx config2 0x%llx", spec,
	      (unsigned long long)a->config, (unsigned long long)a->config1,
	      (unsigned long long)a->config2);
}

static void fake_error(struct fake *f, const char *spec, const char *want)
{
	int rc = fake_parse(f, spec);
	CHECK(rc < 0, "'%s' was accepted", spec);
	CHECK(rc < 0 && strstr(err_msg(), want), "'%s': message '%s' lacks '%s'",
	      spec, err_msg(), want);
}

static void fake_pmu_cases(struct fake *f)
{
	fake_expect(f, "fakepmu/event=0x12,umask=0x34/", 0x3412, 0, 0);
	CHECK(!strcmp(f->l.v[0].name, "fakepmu/event=0x12,umask=0x34/"), "name %s",
	      f->l.v[0].name);
	/* Split ranges: low 4 bits of the value in 16-19, the next 4 in 32-35. */
	fake_expect(f, "fakepmu/split=0xab/", 0xbULL << 16 | 0xaULL << 32, 0, 0);
	fake_expect(f, "fakepmu/event=1,inv/", 1 | 1ULL << 23, 0, 0);
	fake_expect(f, "fakepmu/ev1/", 0x13c, 0, 0);
	fake_expect(f, "fakepmu/ev1,umask=2/", 0x23c, 0, 0);
	fake_expect(f, "fakepmu/ldlat=3,ext=0xf,event=1/", 1, 3, 0xfULL << 60);
	fake_expect(f, "fakepmu/config=0x1234,config1=5/", 0x1234, 5, 0);
	fake_expect(f, "fakepmu/needs,ldlat=7/", 5, 7, 0);
	fake_expect(f, "fakepmu/ev1,name=hello/", 0x13c, 0, 0);
	CHECK(f->l.n == 1 && !strcmp(f->l.v[0].name, "hello"), "name= ignored");
	fake_expect(f, "fakepmu/event=1/u", 1, 0, 0);
	CHECK(f->l.v[0].attr.exclude_kernel && !f->l.v[0].attr.exclude_user, ":u");
	fake_expect(f, "fakepmu/event=1/:k", 1, 0, 0);
	CHECK(f->l.v[0].attr.exclude_user && !f->l.v[0].attr.exclude_kernel, ":k");
	/* Commas between the slashes do not split the list. */
	CHECK(fake_parse(f, "{fakepmu/event=1,umask=2/,cpu-clock},fakepmu/ev1/") == 0,
	      "%s", err_msg());
	CHECK(f->l.n == 3 && f->l.v[1].group == 0 && f->l.v[2].group == 2 &&
	      f->l.v[0].attr.config == 0x201, "group with PMU terms: %zu", f->l.n);

	fake_error(f, "fakepmu/split=0x100/",
		   "value 0x100 too big for term 'split' of PMU 'fakepmu' (it has 8 bits)");
	fake_error(f, "fakepmu/nope=1/", "unknown term 'nope' for PMU 'fakepmu'");
	fake_error(f, "fakepmu/nope/", "unknown event or term 'nope' for PMU 'fakepmu'");
	fake_error(f, "fakepmu/event=zz/", "bad value 'zz' for term 'event'");
	fake_error(f, "fakepmu/event=/", "malformed term 'event='");
	fake_error(f, "fakepmu/event=1", "missing closing '/' in 'fakepmu/event=1'");
	fake_error(f, "fakepmu//", "no terms between the slashes");
	fake_error(f, "nopmu/event=1/", "unknown PMU 'nopmu'");
	fake_error(f, "fakepmu/bad=1/", "malformed format 'config:7-0' for term 'bad'");
	fake_error(f, "fakepmu/weird=1/", "malformed format 'cfg:0-3'");
	fake_error(f, "fakepmu/needs/", "needs a value for 'ldlat'");
	fake_error(f, "fakepmu/event=1/x", "unknown modifier 'x'");
}

static void test_fake_pmu(void)
{
	char root[] = "/tmp/ember-pmc-XXXXXX";
	if (!mkdtemp(root)) {
		SKIP(test_fake_pmu, "cannot make a directory in /tmp");
		return;
	}
	make_fake_pmu(root);
	struct fake f = { .roots = { root, NULL } };
	fake_pmu_cases(&f);
	pmc_list_free(&f.l);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0, "cannot remove %s", root);
}

static void test_format_pack(void)
{
	struct perf_event_attr a = { .config = ~0ULL };
	CHECK(pmc_format_pack("config:0-7,32-35", 0xfff, &a, "p", "t") == 0, "%s",
	      err_msg());
	/* Bits of the term's ranges are replaced, others kept. */
	CHECK(a.config == ~0ULL, "config 0x%llx", (unsigned long long)a.config);
	CHECK(pmc_format_pack("config:0-7,32-35", 0x5a3, &a, "p", "t") == 0, "%s",
	      err_msg());
	CHECK(a.config == ((~0ULL & ~0xf000000ffULL) | 0x5ULL << 32 | 0xa3),
	      "config 0x%llx", (unsigned long long)a.config);
	CHECK(pmc_format_pack("config1:0-63", ~0ULL, &a, "p", "t") == 0 &&
	      a.config1 == ~0ULL, "full 64-bit field");
	CHECK(pmc_format_pack("config2:5", 1, &a, "p", "t") == 0 && a.config2 == 32,
	      "single bit");
	CHECK(pmc_format_pack("config:0-64", 1, &a, "p", "t") < 0, "bit 64 accepted");
	CHECK(pmc_format_pack("config:", 1, &a, "p", "t") < 0, "empty ranges");
	CHECK(pmc_format_pack("config:1,", 1, &a, "p", "t") < 0, "trailing comma");
}

/* The real msr PMU, when the kernel has one: type and config from sysfs. */
static void test_real_sysfs(void)
{
	char *type = read_text_file(PMC_SYSFS_PMUS "/msr/type", NULL);
	char *ev = read_text_file(PMC_SYSFS_PMUS "/msr/events/tsc", NULL);
	if (!type || !ev) {
		SKIP(test_real_sysfs, "no msr PMU with a tsc event in sysfs");
	} else {
		struct pmc_list l;
		CHECK(parse1("msr/tsc/", &l) == 0, "%s", err_msg());
		u64 want;
		CHECK(sscanf(ev, "event=%lx", &want) == 1, "msr tsc file: %s", ev);
		CHECK(l.n == 1 && l.v[0].attr.type == (u32)atoi(type) &&
		      l.v[0].attr.config == want, "msr/tsc/ type %u config %llu",
		      l.v[0].attr.type, (unsigned long long)l.v[0].attr.config);
		pmc_list_free(&l);
	}
	free(type);
	free(ev);
}

static int watched;  /* a breakpoint target */

static void test_breakpoint(void)
{
	struct pmc_list l;
	CHECK(parse1("mem:0x1000", &l) == 0, "%s", err_msg());
	CHECK(l.n == 1 && l.v[0].attr.type == PERF_TYPE_BREAKPOINT &&
	      l.v[0].attr.bp_addr == 0x1000 &&
	      l.v[0].attr.bp_type == (HW_BREAKPOINT_R | HW_BREAKPOINT_W) &&
	      l.v[0].attr.bp_len == HW_BREAKPOINT_LEN_4, "mem:0x1000");
	pmc_list_free(&l);
	CHECK(parse1("mem:0x2000/8:w,cs", &l) == 0, "%s", err_msg());
	CHECK(l.n == 2 && l.v[0].attr.bp_type == HW_BREAKPOINT_W &&
	      l.v[0].attr.bp_len == 8 && !strcmp(l.v[0].name, "mem:0x2000/8:w"),
	      "mem:0x2000/8:w");
	pmc_list_free(&l);
	CHECK(parse1("mem:0x3000:x:u", &l) == 0, "%s", err_msg());
	CHECK(l.n == 1 && l.v[0].attr.bp_type == HW_BREAKPOINT_X &&
	      l.v[0].attr.bp_len == sizeof(long) && l.v[0].attr.exclude_kernel,
	      "mem:0x3000:x:u");
	pmc_list_free(&l);
	expect_error("mem:zz", "bad address or length in breakpoint 'mem:zz'");
	expect_error("mem:0x10:", "bad access");
	expect_error("mem:0x10:rq", "unknown modifier 'r'");

	char spec[64];
	snprintf(spec, sizeof(spec), "mem:%p:w", (void *)&watched);
	CHECK(parse1(spec, &l) == 0, "%s", err_msg());
	int rc = l.n == 1 ? pmc_probe(&l.v[0].attr) : -1;
	CHECK(rc == 0, "a write breakpoint on a variable: %s", strerror(-rc));
	pmc_list_free(&l);
}

/* Uprobes on this very test program's own function: the offset is the
 * symbol's, the path resolved, the retprobe bit set for ur:. */
int pmc_test_uprobe_target(void);
int pmc_test_uprobe_target(void)
{
	return 42;
}

static void test_uprobe(void)
{
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0) {
		SKIP(test_uprobe, "no uprobe PMU");
		return;
	}
	char self[4096], spec[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0, "readlink /proc/self/exe");
	if (n <= 0)
		return;
	self[n] = '\0';
	struct pmc_list l;
	snprintf(spec, sizeof(spec), "u:%s:pmc_test_uprobe_target", self);
	CHECK(parse1(spec, &l) == 0, "%s", err_msg());
	u64 off = 0;
	CHECK(sym_func_offset(self, "pmc_test_uprobe_target", &off) == 0 && off, "%s", err_msg());
	CHECK(l.n == 1 && l.v[0].attr.config2 == off && !(l.v[0].attr.config & 1) &&
	      l.v[0].every_hit && l.v[0].probe_path && !strcmp(l.v[0].probe_path, self) &&
	      l.v[0].attr.config1 == (u64)(uintptr_t)l.v[0].probe_path, "u: attr");
	CHECK(l.n == 1 && pmc_probe(&l.v[0].attr) == 0, "the uprobe opens");
	pmc_list_free(&l);
	snprintf(spec, sizeof(spec), "ur:%s:pmc_test_uprobe_target", self);
	CHECK(parse1(spec, &l) == 0 && l.n == 1 && (l.v[0].attr.config & 1), "ur: sets retprobe");
	pmc_list_free(&l);
	CHECK(parse1("u:libc:malloc", &l) == 0 && l.n == 1 && strstr(l.v[0].probe_path, "libc"),
	      "libc by short name: %s", err_msg());
	pmc_list_free(&l);
	snprintf(spec, sizeof(spec), "u:%s:no_such_fn_xyz", self);
	expect_error(spec, "no function 'no_such_fn_xyz' in /");
	expect_error("u:libc", "write a uprobe as u:PATH:SYMBOL");
	expect_error("u:/nonexistent/x:main", "/nonexistent/x");
}

static void test_probe(void)
{
	struct perf_event_attr clock = { .type = PERF_TYPE_SOFTWARE,
					 .config = PERF_COUNT_SW_CPU_CLOCK,
					 .sample_period = 100000 };
	CHECK(pmc_probe(&clock) == 0, "cpu-clock refused: %s",
	      strerror(-pmc_probe(&clock)));

	struct pmc_list l;
	CHECK(parse1("cycles", &l) == 0, "%s", err_msg());
	int rc = pmc_probe(&l.v[0].attr);
	if (pmc_have_hw_pmu()) {
		CHECK(rc == 0, "cycles refused with a PMU: %s", strerror(-rc));
		SKIP(test_probe_no_pmu, "this machine has a hardware PMU");
	} else {
		CHECK(rc == -ENOENT || rc == -EOPNOTSUPP || rc == -ENODEV,
		      "cycles without a PMU: rc %d", rc);
		pmc_explain_open_error(&l.v[0], -rc);
		CHECK(!strcmp(err_msg(), "event 'cycles' is not supported on this "
			      "machine (no hardware PMU; try -e cpu-clock)"),
		      "%s", err_msg());
		CHECK(pmc_max_precise() == 0, "max precise %d", pmc_max_precise());
		struct perf_event_attr a = l.v[0].attr;
		a.precise_ip = 2;
		CHECK(pmc_fit_precise(&a) == -1 && a.precise_ip == 2,
		      "fit on cycles without PMU");
		SKIP(test_probe_hw_pmu, "no hardware PMU on this machine");
	}
	pmc_list_free(&l);

	int max = pmc_max_precise();
	CHECK(max >= 0 && max <= 3, "max precise %d", max);
	struct perf_event_attr a = clock;
	a.precise_ip = 3;
	int level = pmc_fit_precise(&a);
	CHECK(level >= 0 && level <= 3 && (int)a.precise_ip == level &&
	      pmc_probe(&a) == 0, "fit cpu-clock: %d", level);

	if (pmc_tracefs() && parse1("sched:sched_switch", &l) == 0) {
		l.v[0].attr.sample_period = 1;
		CHECK(pmc_probe(&l.v[0].attr) == 0, "tracepoint refused");
		pmc_list_free(&l);
	}
}

static char *paranoid_value(void)
{
	char *p = read_text_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	if (p)
		p[strcspn(p, "\n")] = '\0';
	return p;
}

static void expect_explain(const struct pmc_event *ev, int err, const char *want)
{
	pmc_explain_open_error(ev, err);
	CHECK(strstr(err_msg(), want) && strstr(err_msg(), ev->name),
	      "errno %d: '%s' lacks '%s'", err, err_msg(), want);
}

static void test_explain(void)
{
	struct pmc_event ev = { .name = "cpu-clock",
				.attr = { .type = PERF_TYPE_SOFTWARE } };
	char *par = paranoid_value();
	char want[128];
	snprintf(want, sizeof(want), "perf_event_paranoid is %s; run as root",
		 par ? par : "unknown");
	expect_explain(&ev, EACCES, want);
	expect_explain(&ev, EPERM, want);
	expect_explain(&ev, -EACCES, want);
	free(par);
	expect_explain(&ev, ESRCH, "no such process");
	expect_explain(&ev, EMFILE,
		       "too many open files (raise the limit, e.g. ulimit -n");
	expect_explain(&ev, EINVAL,
		       "the kernel refused the attributes of event 'cpu-clock'");
	expect_explain(&ev, EBUSY, "busy");
	expect_explain(&ev, ENOSPC, "no free counter or breakpoint");
	expect_explain(&ev, ENOENT, "is not supported by this kernel or CPU");
	expect_explain(&ev, EXDEV, strerror(EXDEV));
	struct pmc_event msr = { .name = "msr/tsc/", .attr = { .type = 9 } };
	expect_explain(&msr, EINVAL, "counts only system-wide: try -a");
	ev.attr.freq = 1;
	ev.attr.sample_freq = 1000000000;
	expect_explain(&ev, EINVAL, "is above kernel.perf_event_max_sample_rate");

	struct pmc_event cyc = { .name = "cycles:ppp",
				 .attr = { .type = PERF_TYPE_HARDWARE,
					   .precise_ip = 3 } };
	if (pmc_have_hw_pmu())
		expect_explain(&cyc, EOPNOTSUPP, "precise level 3");
	else
		expect_explain(&cyc, EOPNOTSUPP, "no hardware PMU; try -e cpu-clock");
	struct pmc_event raw = { .name = "r1a8", .attr = { .type = PERF_TYPE_RAW } };
	if (!pmc_have_hw_pmu())
		expect_explain(&raw, ENOENT, "'r1a8' is not supported on this machine");
}

int main(void)
{
	RUN(test_software);
	RUN(test_hardware);
	RUN(test_hw_cache);
	RUN(test_each_symbolic);
	RUN(test_raw);
	RUN(test_modifiers);
	RUN(test_groups);
	RUN(test_unknown);
	RUN(test_tracepoints);
	RUN(test_filter);
	RUN(test_fake_pmu);
	RUN(test_format_pack);
	RUN(test_real_sysfs);
	RUN(test_breakpoint);
	RUN(test_probe);
	RUN(test_uprobe);
	RUN(test_explain);
	return test_summary();
}
