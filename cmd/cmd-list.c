/* cmd-list.c - the `ember list` command: the software, hardware, hw-cache,
 * sysfs PMU and tracepoint events this machine offers with their
 * encodings, the --ipc/--tlb metric sets, and the precise sampling level. */
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "pmc/stat/stat.h"

#define CMD "list"

static const struct opt options[] = { OPT_END };

const struct opt_cmd list_cmd = {
	.name = CMD,
	.summary = "list the events and metric sets this machine offers",
	.synopsis =
	"usage: ember list [CLASS | GLOB]\n"
	"\n"
	"Lists the events -e accepts on this machine, with their encodings, the\n"
	"metric sets of 'ember stat --ipc/--tlb' and the precise sampling level.\n"
	"CLASS is one of sw, hw, cache, pmu, tracepoint, metric; a GLOB (e.g.\n"
	"'sched:*' or '*tlb*') shows only matching events.\n"
	"\n",
	.opts = options,
};

struct lister {
	const char *filter;   /* a class or a glob, or NULL */
	FILE *out;
};

static bool class_on(const struct lister *l, const char *cls)
{
	static const char *const classes[] = { "sw", "hw", "cache", "pmu",
					       "tracepoint", "metric" };
	if (!l->filter)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(classes); i++)
		if (!strcmp(l->filter, classes[i]))
			return !strcmp(l->filter, cls);
	return strcmp(cls, "metric") != 0;   /* a glob: events only */
}

static bool name_on(const struct lister *l, const char *name)
{
	if (!l->filter || !strcmp(l->filter, "sw") || !strcmp(l->filter, "hw") ||
	    !strcmp(l->filter, "cache") || !strcmp(l->filter, "pmu") ||
	    !strcmp(l->filter, "tracepoint"))
		return true;
	return fnmatch(l->filter, name, FNM_CASEFOLD) == 0;
}

static void row(struct lister *l, const char *name, const char *kind,
		const char *enc)
{
	if (name_on(l, name))
		fprintf(l->out, "  %-48s [%s%s%s]\n", name, kind, enc ? ": " : "",
			enc ? enc : "");
}

static void on_symbolic(const char *name, const char *alias, u32 type,
			u64 config, void *ctx)
{
	struct lister *l = ctx;
	const char *kind = type == PERF_TYPE_SOFTWARE ? "Software event"
			   : type == PERF_TYPE_HARDWARE ? "Hardware event"
							: "Hardware cache event";
	const char *cls = type == PERF_TYPE_SOFTWARE ? "sw"
			  : type == PERF_TYPE_HARDWARE ? "hw" : "cache";
	if (!class_on(l, cls))
		return;
	char *full = alias ? xasprintf("%s OR %s", name, alias) : xstrdup(name);
	char enc[64];
	snprintf(enc, sizeof(enc), "type=%u,config=0x%llx", type,
		 (unsigned long long)config);
	row(l, full, kind, enc);
	free(full);
}

static void on_pmu_event(const char *pmu, const char *name, const char *enc,
			 void *ctx)
{
	char *full = xasprintf("%s/%s/", pmu, name);
	row(ctx, full, "Kernel PMU event", enc);
	free(full);
}

static void on_tracepoint(const char *system, const char *name, int id, void *ctx)
{
	char *full = xasprintf("%s:%s", system, name);
	char enc[32];
	snprintf(enc, sizeof(enc), "id=%d", id);
	row(ctx, full, "Tracepoint event", enc);
	free(full);
}

static void list_tracepoints(struct lister *l)
{
	if (pmc_each_tracepoint(on_tracepoint, l) < 0)
		fprintf(l->out, "  (no tracepoints: %s)\n", err_msg());
}

static void list_table(struct lister *l, const struct pmc_cpu_table *t,
		       int last_slot)
{
	for (int s = 0; s <= last_slot; s++) {
		if (t->ev[s].name)
			fprintf(l->out, "      %-40s raw 0x%llx\n", t->ev[s].name,
				(unsigned long long)t->ev[s].config);
		else
			fprintf(l->out, "      %-40s -\n", "(not measurable)");
	}
}

static void list_metrics(struct lister *l)
{
	fprintf(l->out, "\nMetric sets (ember stat --ipc, --tlb):\n");
	struct pmc_cpuid id;
	const struct pmc_cpu_table *t = NULL;
	if (pmc_cpuid_read(&id) == 0)
		t = pmc_table_for(&id);
	if (!t) {
		fprintf(l->out, "  --ipc, --tlb: not available: %s\n", err_msg());
		return;
	}
	bool pmu = pmc_have_hw_pmu();
	fprintf(l->out, "  on this CPU (%s)%s:\n", t->name,
		pmu ? "" : " - but no hardware PMU is usable here");
	fprintf(l->out, "  --ipc  K_CYCLES K_INSTR IPC\n");
	list_table(l, t, PMC_T_INSTR);
	fprintf(l->out, "  --tlb  K_CYCLES K_INSTR IPC DTLB_WALKS ITLB_WALKS "
		"K_DTLBCYC K_ITLBCYC DTLB%% ITLB%%\n");
	list_table(l, t, PMC_T_NSLOTS - 1);
}

static void list_precise(struct lister *l)
{
	int level = pmc_max_precise();
	fprintf(l->out, "\nPrecise sampling (:p, :pp, :ppp on hardware events): ");
	if (!pmc_have_hw_pmu())
		fprintf(l->out, "none (no hardware PMU)\n");
	else if (level == 0)
		fprintf(l->out, "none (precise_ip 0 only)\n");
	else
		fprintf(l->out, "up to :%.*s (precise_ip %d)\n", level, "ppp", level);
}

int cmd_list(int argc, char **argv)
{
	struct lister l = { .out = stdout };
	int rc = opt_parse(&list_cmd, argc, argv, NULL);
	if (rc >= 0)
		return rc;
	if (argc - optind > 1) {
		cmd_error(CMD, "unexpected '%s': see 'ember list --help'",
			  argv[argc - 1]);
		return EXIT_USAGE;
	}
	l.filter = optind < argc ? argv[optind] : NULL;
	fprintf(l.out, "List of events (use with -e):\n\n");
	pmc_each_symbolic(on_symbolic, &l);
	if (class_on(&l, "pmu"))
		pmc_each_pmu_event(on_pmu_event, &l);
	if (class_on(&l, "tracepoint"))
		list_tracepoints(&l);
	if (class_on(&l, "metric")) {
		list_metrics(&l);
		list_precise(&l);
	}
	return EXIT_OK;
}
