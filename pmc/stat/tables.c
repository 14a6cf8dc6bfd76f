/* tables.c - the raw core-PMU events behind `stat --ipc` and `--tlb`, per
 * CPU vendor and model family, as the vendors document them (Intel's
 * event lists, AMD's Processor Programming Reference), and the CPU id.
 *
 * Each encoding is unit-tested (tests/unit/test-stat.c) against the
 * published event lists: Intel's perfmon files and AMD's, as Linux perf
 * carries them. */
#include <stdlib.h>
#include <string.h>

#include "pmc/stat/stat.h"

u64 pmc_intel_raw(unsigned event, unsigned umask, unsigned cmask)
{
	return (u64)(event & 0xff) | (u64)(umask & 0xff) << 8 |
	       (u64)(cmask & 0xff) << 24;
}

/* AMD splits the 12-bit event select: bits 7:0 low, bits 11:8 at 35:32. */
u64 pmc_amd_raw(unsigned event, unsigned umask)
{
	return (u64)(event & 0xff) | (u64)(umask & 0xff) << 8 |
	       (u64)((event >> 8) & 0xf) << 32;
}

/* Constant forms of pmc_intel_raw() and pmc_amd_raw() for the tables. */
#define I(e, u, c) ((u64)(e) | (u64)(u) << 8 | (u64)(c) << 24)
#define A(e, u) ((u64)((e) & 0xff) | (u64)(u) << 8 | (u64)(((e) >> 8) & 0xf) << 32)

/* Intel: walks that completed (umask 0x0e: any page size) and cycles with
 * a page-miss handler busy (umask 0x10 "walk pending" counted with
 * cmask 1, the documented WALK_ACTIVE).  Golden Cove moved the TLB events
 * from 0x08/0x49/0x85 to 0x12/0x13/0x11. */
#define INTEL_TLB(ld, st, it)                                                 \
	{                                                                     \
		{ "cpu_clk_unhalted.thread_p", I(0x3c, 0x00, 0) },            \
		{ "inst_retired.any_p", I(0xc0, 0x00, 0) },                   \
		{ "dtlb_load_misses.walk_completed", I(ld, 0x0e, 0) },        \
		{ "dtlb_store_misses.walk_completed", I(st, 0x0e, 0) },       \
		{ "itlb_misses.walk_completed", I(it, 0x0e, 0) },             \
		{ "dtlb_load_misses.walk_active", I(ld, 0x10, 1) },           \
		{ "dtlb_store_misses.walk_active", I(st, 0x10, 1) },          \
		{ "itlb_misses.walk_active", I(it, 0x10, 1) },                \
	}

/* AMD Zen: L1 DTLB misses that also missed the L2 DTLB start a table
 * walk, loads and stores together: umask 0xf0 is the four "L2 miss" page
 * sizes (4K, coalesced, 2M, 1G), named all_l2_miss only from Zen 4 on.
 * L1 ITLB misses that missed the L2 ITLB likewise: Zen 2 and Zen 3 publish
 * the whole event with umask 0xff, Zen 4 as ".all" with its four page-size
 * bits.  Zen has no walk-duration event. */
#define AMD_TLB(dtlb_name, itlb_name, itlb_umask)                             \
	{                                                                     \
		{ "ls_not_halted_cyc", A(0x076, 0x00) },                      \
		{ "ex_ret_instr", A(0x0c0, 0x00) },                           \
		{ dtlb_name, A(0x045, 0xf0) },                                \
		{ NULL, 0 },                                                  \
		{ itlb_name, A(0x085, itlb_umask) },                          \
		{ NULL, 0 }, { NULL, 0 }, { NULL, 0 },                        \
	}

/* Before Zen 4 the L2-miss half of ls_l1_d_tlb_miss has no single name. */
#define ZEN23_DTLB "ls_l1_d_tlb_miss.tlb_reload_*_l2_miss"

static const char amd_note[] =
	"AMD Zen has no page-walk cycle events: K_DTLBCYC, K_ITLBCYC, DTLB% "
	"and ITLB% cannot be measured; DTLB_WALKS counts loads and stores "
	"together";

/* Skylake client/server and its Kaby, Coffee, Comet and Cascade Lake kin. */
static const int skylake[] = { 0x4e, 0x4e, 0x5e, 0x5e, 0x55, 0x55, 0x8e, 0x8e,
			       0x9e, 0x9e, 0xa5, 0xa6, -1 };
static const int icelake[] = { 0x7d, 0x7e, 0x6a, 0x6a, 0x6c, 0x6c, 0x8c, 0x8d,
			       -1 };
static const int sapphire[] = { 0x8f, 0x8f, 0xcf, 0xcf, -1 };
static const int zen2[] = { 0x30, 0xff, -1 };
static const int zen3[] = { 0x00, 0x0f, 0x20, 0x5f, -1 };
static const int zen4[] = { 0x10, 0x1f, 0x60, 0x7f, 0xa0, 0xaf, -1 };

static const struct pmc_cpu_table tables[] = {
	{ "Intel Skylake", PMC_VENDOR_INTEL, 6, skylake,
	  INTEL_TLB(0x08, 0x49, 0x85), NULL },
	{ "Intel Ice Lake", PMC_VENDOR_INTEL, 6, icelake,
	  INTEL_TLB(0x08, 0x49, 0x85), NULL },
	{ "Intel Sapphire Rapids", PMC_VENDOR_INTEL, 6, sapphire,
	  INTEL_TLB(0x12, 0x13, 0x11), NULL },
	{ "AMD Zen 2", PMC_VENDOR_AMD, 0x17, zen2,
	  AMD_TLB(ZEN23_DTLB, "bp_l1_tlb_miss_l2_tlb_miss", 0xff), amd_note },
	{ "AMD Zen 3", PMC_VENDOR_AMD, 0x19, zen3,
	  AMD_TLB(ZEN23_DTLB, "bp_l1_tlb_miss_l2_tlb_miss", 0xff), amd_note },
	{ "AMD Zen 4", PMC_VENDOR_AMD, 0x19, zen4,
	  AMD_TLB("ls_l1_d_tlb_miss.all_l2_miss",
		  "bp_l1_tlb_miss_l2_tlb_miss.all", 0x0f), amd_note },
};

const struct pmc_cpu_table *pmc_tables(size_t *n)
{
	*n = ARRAY_SIZE(tables);
	return tables;
}

static bool model_in(const int *ranges, int model)
{
	for (const int *r = ranges; r[0] >= 0 && r[1] >= 0; r += 2)
		if (model >= r[0] && model <= r[1])
			return true;
	return false;
}

static const char *vendor_name(enum pmc_vendor v)
{
	return v == PMC_VENDOR_INTEL ? "Intel" : v == PMC_VENDOR_AMD ? "AMD"
								 : "unknown";
}

const struct pmc_cpu_table *pmc_table_for(const struct pmc_cpuid *id)
{
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++)
		if (tables[i].vendor == id->vendor &&
		    tables[i].family == id->family &&
		    model_in(tables[i].models, id->model))
			return &tables[i];
	err_set("no TLB/IPC event table for this CPU (%s family 0x%x model "
		"0x%x); known: Intel Skylake, Ice Lake, Sapphire Rapids, AMD "
		"Zen 2-4 (use -e with raw events instead)",
		vendor_name(id->vendor), (unsigned)id->family,
		(unsigned)id->model);
	return NULL;
}

/* The value after "key\t: " on the first line starting with key. */
static const char *field(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		if (strncmp(l, key, n))
			continue;
		/* "model" must not match "model name". */
		const char *colon = l + n + strspn(l + n, " \t");
		if (*colon == ':')
			return colon + 1 + strspn(colon + 1, " \t");
	}
	return NULL;
}

int pmc_cpuid_parse(const char *cpuinfo, struct pmc_cpuid *out)
{
	const char *vendor = field(cpuinfo, "vendor_id");
	const char *family = field(cpuinfo, "cpu family");
	const char *model = field(cpuinfo, "model");
	if (!vendor || !family || !model) {
		err_set("/proc/cpuinfo has no vendor_id, cpu family or model "
			"line (not an x86 CPU?)");
		return -1;
	}
	out->vendor = !strncmp(vendor, "GenuineIntel", 12) ? PMC_VENDOR_INTEL
		      : !strncmp(vendor, "AuthenticAMD", 12) ? PMC_VENDOR_AMD
							      : PMC_VENDOR_OTHER;
	out->family = atoi(family);
	out->model = atoi(model);
	return 0;
}

int pmc_cpuid_read(struct pmc_cpuid *out)
{
	char *text = read_text_file("/proc/cpuinfo", NULL);
	if (!text)
		return -1;
	int rc = pmc_cpuid_parse(text, out);
	free(text);
	return rc;
}

void pmc_list_add_raw(struct pmc_list *list, u64 config, const char *name)
{
	VEC_GROW(list, list->n + 1);
	struct pmc_event *ev = &list->v[list->n];
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = PERF_TYPE_RAW;
	ev->attr.config = config;
	ev->attr.exclude_guest = 1;
	ev->name = xstrdup(name);
	ev->group = (int)list->n;
	list->n++;
}
