/* names.c - the symbolic event names perf users type: software events,
 * generic hardware events and hw-cache events, mapped to attr type/config. */
#include <stdlib.h>
#include <string.h>

#include "pmc/pmc-internal.h"

struct sym {
	const char *name, *alias;  /* alias: the other spelling, or NULL */
	u32 type;
	u64 config;
};

#define SW(n, a, c) { n, a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c }
#define HW(n, a, c) { n, a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c }

static const struct sym symbols[] = {
	SW("cpu-clock", NULL, CPU_CLOCK),
	SW("task-clock", NULL, TASK_CLOCK),
	SW("page-faults", "faults", PAGE_FAULTS),
	SW("minor-faults", NULL, PAGE_FAULTS_MIN),
	SW("major-faults", NULL, PAGE_FAULTS_MAJ),
	SW("context-switches", "cs", CONTEXT_SWITCHES),
	SW("cpu-migrations", "migrations", CPU_MIGRATIONS),
	SW("alignment-faults", NULL, ALIGNMENT_FAULTS),
	SW("emulation-faults", NULL, EMULATION_FAULTS),
	SW("dummy", NULL, DUMMY),
	SW("bpf-output", NULL, BPF_OUTPUT),
	/* Not in the uapi header of older systems; the ABI number is fixed. */
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, 11 },
	HW("cpu-cycles", "cycles", CPU_CYCLES),
	HW("instructions", NULL, INSTRUCTIONS),
	HW("cache-references", NULL, CACHE_REFERENCES),
	HW("cache-misses", NULL, CACHE_MISSES),
	HW("branch-instructions", "branches", BRANCH_INSTRUCTIONS),
	HW("branch-misses", NULL, BRANCH_MISSES),
	HW("bus-cycles", NULL, BUS_CYCLES),
	HW("stalled-cycles-frontend", "idle-cycles-frontend",
	   STALLED_CYCLES_FRONTEND),
	HW("stalled-cycles-backend", "idle-cycles-backend",
	   STALLED_CYCLES_BACKEND),
	HW("ref-cycles", NULL, REF_CPU_CYCLES),
};

/* hw-cache names: each row lists the spellings perf accepts, the first
 * being the one perf lists. */
static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX][5] = {
	[PERF_COUNT_HW_CACHE_L1D] = { "L1-dcache", "l1-d", "l1d", "L1-data" },
	[PERF_COUNT_HW_CACHE_L1I] = { "L1-icache", "l1-i", "l1i",
				      "L1-instruction" },
	[PERF_COUNT_HW_CACHE_LL] = { "LLC", "L2" },
	[PERF_COUNT_HW_CACHE_DTLB] = { "dTLB", "d-tlb", "Data-TLB" },
	[PERF_COUNT_HW_CACHE_ITLB] = { "iTLB", "i-tlb", "Instruction-TLB" },
	[PERF_COUNT_HW_CACHE_BPU] = { "branch", "branches", "bpu", "btb", "bpc" },
	[PERF_COUNT_HW_CACHE_NODE] = { "node" },
};

static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][5] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads", "read" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores", "write" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches",
					      "speculative-read",
					      "speculative-load" },
};

static const char *const cache_results[PERF_COUNT_HW_CACHE_RESULT_MAX][5] = {
	[PERF_COUNT_HW_CACHE_RESULT_ACCESS] = { "refs", "Reference", "ops",
						"access" },
	[PERF_COUNT_HW_CACHE_RESULT_MISS] = { "misses", "miss" },
};

/* Which operations each cache has, as perf lists them: an instruction
 * cache is never stored to, a TLB for instructions and the branch
 * predictor are only "read". */
#define OPS_ALL 0x7u
static const unsigned cache_valid_ops[PERF_COUNT_HW_CACHE_MAX] = {
	[PERF_COUNT_HW_CACHE_L1D] = OPS_ALL,
	[PERF_COUNT_HW_CACHE_L1I] = 0x5u,
	[PERF_COUNT_HW_CACHE_LL] = OPS_ALL,
	[PERF_COUNT_HW_CACHE_DTLB] = OPS_ALL,
	[PERF_COUNT_HW_CACHE_ITLB] = 0x1u,
	[PERF_COUNT_HW_CACHE_BPU] = 0x1u,
	[PERF_COUNT_HW_CACHE_NODE] = OPS_ALL,
};

/* Matches one of the spellings in row at the start of *s, which must be
 * followed by '-' or the end; advances *s past it and the '-'.  Longest
 * spelling wins so "branches" is not read as "branch" + "es". */
static bool take_word(const char **s, const char *const row[5])
{
	size_t best = 0;
	for (int i = 0; i < 5 && row[i]; i++) {
		size_t n = strlen(row[i]);
		if (n > best && !strncmp(*s, row[i], n) &&
		    ((*s)[n] == '-' || (*s)[n] == '\0'))
			best = n;
	}
	if (!best)
		return false;
	*s += best + ((*s)[best] == '-');
	return true;
}

static int take_index(const char **s, const char *const rows[][5], int nrows)
{
	for (int i = 0; i < nrows; i++)
		if (take_word(s, rows[i]))
			return i;
	return -1;
}

/* "cache[-op][-result]", op defaulting to load and result to access. */
static int parse_cache(const char *name, struct perf_event_attr *attr)
{
	const char *s = name;
	int cache = take_index(&s, cache_names, PERF_COUNT_HW_CACHE_MAX);
	if (cache < 0)
		return 1;
	int op = take_index(&s, cache_ops, PERF_COUNT_HW_CACHE_OP_MAX);
	int res = take_index(&s, cache_results, PERF_COUNT_HW_CACHE_RESULT_MAX);
	if (*s)
		return 1;
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (res < 0)
		res = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!(cache_valid_ops[cache] & (1u << op))) {
		err_set("'%s' is not a valid cache event (%s has no %s "
			"operation; see 'ember list')",
			name, cache_names[cache][0], cache_ops[op][1]);
		return -1;
	}
	attr->type = PERF_TYPE_HW_CACHE;
	attr->config = (u64)cache | (u64)op << 8 | (u64)res << 16;
	return 0;
}

int pmc_symbolic(const char *name, struct perf_event_attr *attr)
{
	for (size_t i = 0; i < ARRAY_SIZE(symbols); i++) {
		const struct sym *y = &symbols[i];
		if (!strcmp(name, y->name) || (y->alias && !strcmp(name, y->alias))) {
			attr->type = symbols[i].type;
			attr->config = symbols[i].config;
			return 0;
		}
	}
	return parse_cache(name, attr);
}

/* The hw-cache events perf lists: every valid operation, as accesses
 * ("L1-dcache-loads") and as misses ("L1-dcache-load-misses"). */
static void each_cache_event(pmc_name_fn fn, void *ctx)
{
	for (int c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++) {
		for (int op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++) {
			if (!(cache_valid_ops[c] & (1u << op)))
				continue;
			char *access = xasprintf("%s-%s", cache_names[c][0],
						 cache_ops[op][1]);
			char *miss = xasprintf("%s-%s-misses", cache_names[c][0],
					       cache_ops[op][0]);
			u64 config = (u64)c | (u64)op << 8;
			fn(access, NULL, PERF_TYPE_HW_CACHE, config, ctx);
			fn(miss, NULL, PERF_TYPE_HW_CACHE,
			   config | (u64)PERF_COUNT_HW_CACHE_RESULT_MISS << 16, ctx);
			free(access);
			free(miss);
		}
	}
}

void pmc_each_symbolic(pmc_name_fn fn, void *ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(symbols); i++)
		fn(symbols[i].name, symbols[i].alias, symbols[i].type,
		   symbols[i].config, ctx);
	each_cache_event(fn, ctx);
}
