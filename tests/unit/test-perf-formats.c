/* test-perf-formats.c - unit tests of the sample layouts and file variants
 * this machine cannot record: branch stacks (LBR call stacks, -b), the
 * counter values of PERF_SAMPLE_READ, AUX samples, and files written by a
 * newer perf (larger attrs, feature sections and sample bits this reader
 * does not know).  Records are built field by field from perf_event.h's
 * ABI, so every decoded value is known by construction; perf reads the
 * hand-built files too when it is installed. */
#include <stdlib.h>
#include <unistd.h>

#include "common/common.h"
#include "format/format.h"
#include "tests/unit/test.h"

#define ID_A 701
#define ID_B 702
#define ID_C 703

static char tmpdir[64];

/* ---- building records ---------------------------------------------------- */

struct buf {
	u8 p[8192];
	size_t n;
};

static void put64(struct buf *b, u64 v)
{
	memcpy(b->p + b->n, &v, 8);
	b->n += 8;
}

static void put_bytes(struct buf *b, const void *src, size_t n)
{
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void put_header(struct buf *b, u32 type, u16 misc, size_t at)
{
	struct perf_event_header h = { type, misc, (u16)(b->n - at) };
	memcpy(b->p + at, &h, sizeof(h));
}

/* A branch entry's flags word as the kernel writes it: through the ABI's
 * own bit fields. */
static u64 entry_flags(int i)
{
	struct perf_branch_entry e;
	memset(&e, 0, sizeof(e));
	e.mispred = i % 2;
	e.predicted = !(i % 2);
	e.in_tx = i == 2;
	e.abort = i == 3;
	e.cycles = (u64)(0x100 + i);
	e.type = PERF_BR_CALL;
	u64 f;
	memcpy(&f, (const u8 *)&e + 16, 8);
	return f;
}

static u64 from_of(int i) { return 0x401000 + (u64)i * 0x10; }
static u64 to_of(int i) { return 0x402000 + (u64)i * 0x20; }

static const u64 chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000100ULL, PERF_CONTEXT_USER,
			     0x401234 };

#define NBR 5
#define HW_IDX 11
#define WEIGHT 0x7777
#define DATA_SRC 0x5555
#define PHYS 0xabc000
#define CGROUP 0x42
#define NREGS 2

static const u64 branch_sample_types[] = {
	PERF_SAMPLE_BRANCH_ANY,
	PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK | PERF_SAMPLE_BRANCH_HW_INDEX,
	PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX | PD_SAMPLE_BRANCH_COUNTERS,
};

#define BR_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | \
		 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | \
		 PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | \
		 PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_AUX | PERF_SAMPLE_CGROUP)

static struct perf_event_attr branch_attr(u64 bst)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES,
		.size = sizeof(a), .sample_period = 10000, .sample_type = BR_TYPE,
		.branch_sample_type = bst, .sample_regs_user = 0x3,
		.sample_stack_user = 32, .sample_id_all = 1,
	};
	return a;
}

/* IDENTIFIER, IP, TID, TIME, PERIOD, CALLCHAIN, BRANCH_STACK, REGS_USER,
 * STACK_USER, WEIGHT, DATA_SRC, PHYS_ADDR, AUX, CGROUP: the kernel's order
 * (perf_output_sample).  Returns where the branch stack starts. */
static size_t build_branch_sample(struct buf *b, u64 bst)
{
	b->n = 8;
	put64(b, ID_A);
	put64(b, 0x401234);
	put64(b, (u64)77 << 32 | 77);
	put64(b, 123456789);
	put64(b, 10000);
	put64(b, ARRAY_SIZE(chain));
	put_bytes(b, chain, sizeof(chain));
	size_t br = b->n;
	put64(b, NBR);
	if (bst & PERF_SAMPLE_BRANCH_HW_INDEX)
		put64(b, HW_IDX);
	for (int i = 0; i < NBR; i++) {
		put64(b, from_of(i));
		put64(b, to_of(i));
		put64(b, entry_flags(i));
	}
	if (bst & PD_SAMPLE_BRANCH_COUNTERS)
		for (int i = 0; i < NBR; i++)
			put64(b, 0xc0 + (u64)i);
	put64(b, PERF_SAMPLE_REGS_ABI_64);
	put64(b, 0x7ffd1000);
	put64(b, 0x7ffd2000);
	put64(b, 32);                     /* stack copy size */
	for (int i = 0; i < 32; i++)
		b->p[b->n++] = (u8)(0xe0 + i);
	put64(b, 24);                     /* dyn_size */
	put64(b, WEIGHT);
	put64(b, DATA_SRC);
	put64(b, PHYS);
	put64(b, 16);                     /* AUX: size, data */
	put64(b, 0x1111111111111111ULL);
	put64(b, 0x2222222222222222ULL);
	put64(b, CGROUP);
	put_header(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0);
	return br;
}

/* ---- tests ----------------------------------------------------------------- */

static void check_branches(const struct pd_sample *s, u64 bst, const char *what)
{
	bool hw = bst & PERF_SAMPLE_BRANCH_HW_INDEX;
	CHECK(s->nr_branches == NBR && s->branches, "%s: %llu branches", what,
	      (unsigned long long)s->nr_branches);
	CHECK(s->has_hw_idx == hw && (!hw || s->branch_hw_idx == HW_IDX), "%s: hw_idx", what);
	for (int i = 0; s->branches && i < NBR; i++) {
		const u64 *e = s->branches + 3 * i;
		CHECK(e[0] == from_of(i) && e[1] == to_of(i), "%s: entry %d %#llx/%#llx", what, i,
		      (unsigned long long)e[0], (unsigned long long)e[1]);
		CHECK(PD_BRANCH_MISPRED(e[2]) == (u64)(i % 2) &&
		      PD_BRANCH_PREDICTED(e[2]) == (u64)!(i % 2) &&
		      PD_BRANCH_IN_TX(e[2]) == (i == 2) && PD_BRANCH_ABORT(e[2]) == (i == 3) &&
		      PD_BRANCH_CYCLES(e[2]) == (u64)(0x100 + i) &&
		      PD_BRANCH_TYPE(e[2]) == PERF_BR_CALL,
		      "%s: entry %d flags %#llx", what, i, (unsigned long long)e[2]);
	}
}

/* Every field after the branch stack is read where the ABI puts it, for
 * each branch_sample_type layout (hw_idx or not, newer kernels' counts). */
static void test_branch_stack_fields(void)
{
	for (size_t k = 0; k < ARRAY_SIZE(branch_sample_types); k++) {
		u64 bst = branch_sample_types[k];
		struct perf_event_attr attr = branch_attr(bst);
		struct pd_attr a;
		pd_attr_init(&a, &attr);
		static struct buf b;
		size_t br = build_branch_sample(&b, bst);
		struct pd_event ev;
		char what[32];
		snprintf(what, sizeof(what), "layout %zu", k);
		CHECK(pd_decode(&a, b.p, &ev) == 0, "%s does not decode", what);
		const struct pd_sample *s = &ev.s;
		CHECK(s->id == ID_A && s->ip == 0x401234 && s->pid == 77 && s->time == 123456789 &&
		      s->period == 10000, "%s: head fields", what);
		CHECK(s->nr_callchain == ARRAY_SIZE(chain) && s->callchain[3] == 0x401234,
		      "%s: chain", what);
		CHECK(s->chain_end == br, "%s: chain ends at %u, want %zu", what, s->chain_end, br);
		check_branches(s, bst, what);
		CHECK(s->user_abi == PERF_SAMPLE_REGS_ABI_64 && s->user_regs &&
		      s->user_regs[1] == 0x7ffd2000, "%s: user regs", what);
		CHECK(s->stack_size == 32 && s->stack_dyn_size == 24 && s->stack &&
		      s->stack[31] == 0xe0 + 31, "%s: stack copy", what);
		CHECK(s->weight == WEIGHT && s->data_src == DATA_SRC && s->phys_addr == PHYS,
		      "%s: weight %#llx data_src %#llx phys %#llx", what,
		      (unsigned long long)s->weight, (unsigned long long)s->data_src,
		      (unsigned long long)s->phys_addr);
		CHECK(s->aux_size == 16 && s->cgroup == CGROUP, "%s: aux %llu cgroup %#llx", what,
		      (unsigned long long)s->aux_size, (unsigned long long)s->cgroup);
		CHECK(s->user_end == b.n - 7 * 8, "%s: user state ends at %u", what, s->user_end);
		/* Cut anywhere inside, the record is malformed, never misread. */
		for (size_t cut = 8; cut < b.n; cut += 8) {
			struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
						       (u16)cut };
			memcpy(b.p, &h, sizeof(h));
			CHECK(pd_decode(&a, b.p, &ev) < 0, "%s: cut to %zu bytes decoded", what, cut);
		}
	}
}

/* PERF_SAMPLE_READ: a group's values (nr, times, value/id/lost each) and
 * one counter's (value, times, id, lost), then the callchain after them. */
static size_t build_read_sample(struct buf *b, u64 fmt, int nr)
{
	b->n = 8;
	put64(b, 0x401234);                      /* IP */
	put64(b, 999);                           /* PERIOD */
	bool group = fmt & PERF_FORMAT_GROUP;
	u64 times = !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);
	if (group)
		put64(b, (u64)nr);
	for (int i = 0; i < nr; i++) {
		if (group && i == 0)
			for (u64 t = 0; t < times; t++)
				put64(b, 5000 + t);
		put64(b, 1000 * (u64)(i + 1));   /* value */
		if (!group)
			for (u64 t = 0; t < times; t++)
				put64(b, 5000 + t);
		if (fmt & PERF_FORMAT_ID)
			put64(b, ID_A + (u64)i);
		if (fmt & PERF_FORMAT_LOST)
			put64(b, 3);
	}
	put64(b, 2);                             /* CALLCHAIN */
	put64(b, PERF_CONTEXT_USER);
	put64(b, 0x401234);
	put_header(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0);
	return b->n;
}

static void test_read_values(void)
{
	const u64 fmts[] = {
		PERF_FORMAT_GROUP | PERF_FORMAT_ID,
		PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
			PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
		PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED,
		PERF_FORMAT_ID | PERF_FORMAT_LOST | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING,
		PERF_FORMAT_GROUP,
	};
	for (size_t k = 0; k < ARRAY_SIZE(fmts); k++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr), .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
							     PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN,
			.read_format = fmts[k],
		};
		struct pd_attr a;
		pd_attr_init(&a, &attr);
		int nr = (fmts[k] & PERF_FORMAT_GROUP) ? 3 : 1;
		static struct buf b;
		build_read_sample(&b, fmts[k], nr);
		struct pd_event ev;
		CHECK(pd_decode(&a, b.p, &ev) == 0, "format %#llx does not decode",
		      (unsigned long long)fmts[k]);
		const struct pd_sample *s = &ev.s;
		CHECK(s->nr_read == (u64)nr, "format %#llx: %llu values", (unsigned long long)fmts[k],
		      (unsigned long long)s->nr_read);
		u64 value = 0, id = 0;
		for (int i = 0; i < nr; i++) {
			bool got = pd_read_value(s, (u64)i, &value, &id);
			u64 want_id = (fmts[k] & PERF_FORMAT_ID) ? ID_A + (u64)i : 0;
			CHECK(got && value == 1000 * (u64)(i + 1) && id == want_id,
			      "format %#llx value %d: %llu id %llu", (unsigned long long)fmts[k], i,
			      (unsigned long long)value, (unsigned long long)id);
		}
		CHECK(!pd_read_value(s, (u64)nr, &value, &id), "a value past the last");
		CHECK(s->nr_callchain == 2 && s->callchain[1] == 0x401234,
		      "format %#llx: the chain after the values", (unsigned long long)fmts[k]);
	}
	/* A read_format bit newer than the ABI: the head still decodes, the
	 * fields after the values are left out, not misread. */
	struct perf_event_attr attr = {
		.size = sizeof(attr), .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
						     PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN,
		.read_format = PERF_FORMAT_ID | PERF_FORMAT_MAX,
	};
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	static struct buf b;
	build_read_sample(&b, PERF_FORMAT_ID | PERF_FORMAT_LOST, 1);
	struct pd_event ev;
	CHECK(pd_decode(&a, b.p, &ev) == 0 && ev.s.ip == 0x401234 && ev.s.period == 999 &&
	      ev.s.nr_read == 0 && ev.s.nr_callchain == 0, "newer read_format");
}

/* ---- files a newer perf writes ------------------------------------------- */

#define NEW_FEAT 40
#define BIG_ATTR (sizeof(struct perf_event_attr) + 32)
#define NEWER_SAMPLES 4
#define NEWER_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		    PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_MAX)

/* An attr of size bytes: ours, then (for BIG_ATTR) fields this reader
 * has never heard of (zero, as a newer perf writes for features not in
 * use). */
static void put_attr(struct buf *b, size_t size)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK,
		.size = (u32)size, .sample_period = 100000, .sample_type = NEWER_TYPE,
		.sample_id_all = 1, .comm = 1,
	};
	put_bytes(b, &a, sizeof(a));
	for (size_t i = sizeof(a); i < size; i += 8)
		put64(b, 0);
}

/* Samples with a sample_type bit past PERF_SAMPLE_MAX: its data comes
 * after every field this reader knows. */
static void put_newer_samples(struct buf *b)
{
	for (int i = 0; i < NEWER_SAMPLES; i++) {
		size_t at = b->n;
		b->n += 8;
		put64(b, 0x400100 + (u64)i);
		put64(b, (u64)(900 + i) << 32 | (u64)(900 + i));
		put64(b, 1000000000ULL + (u64)i);
		put64(b, ID_A);
		put64(b, 100000);
		put64(b, 0xdeadbeefULL);          /* the newer field */
		put_header(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, at);
	}
}

static void put_feature_record(struct buf *b, u64 feat, const void *body, size_t len)
{
	size_t at = b->n;
	b->n += 8;
	put64(b, feat);
	if (len)
		put_bytes(b, body, len);
	while (b->n % 8)
		b->p[b->n++] = 0;
	put_header(b, PD_RECORD_HEADER_FEATURE, 0, at);
}

/* perf's string feature body: u32 length (with padding), the string. */
static const u8 hostname_body[] = { 8, 0, 0, 0, 'n', 'e', 'w', 'e', 'r', 0, 0, 0 };

static void write_buf(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "w");
	CHECK(f && fwrite(b->p, 1, b->n, f) == b->n, "cannot write %s", path);
	if (f)
		fclose(f);
}

/* A HEADER_BUILD_ID record of a 16-byte id (its size at byte 20 of the
 * id field, flagged by misc bit 15), as a stream ends with. */
static void put_build_id_record(struct buf *b)
{
	size_t at = b->n;
	b->n += 8;
	u8 id[24] = { 0 };
	for (int i = 0; i < 16; i++)
		id[i] = (u8)(0xa0 + i);
	id[20] = 16;
	u32 pid = 900;
	put_bytes(b, &pid, 4);
	put_bytes(b, id, sizeof(id));
	put_bytes(b, "/usr/bin/newer", 15);
	while (b->n % 8)
		b->p[b->n++] = 0;
	put_header(b, PD_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER | (1 << 15), at);
}

/* The stream: pipe header, HEADER_FEATURE (HOSTNAME, then one past what
 * we know, then the end mark), HEADER_ATTR with a larger attr,
 * HEADER_EVENT_TYPE, samples, HEADER_BUILD_ID. */
static void write_newer_stream(const char *path)
{
	static struct buf b;
	b.n = 0;
	put_bytes(&b, "PERFILE2", 8);
	put64(&b, 16);
	put_feature_record(&b, PD_FEAT_HOSTNAME, hostname_body, sizeof(hostname_body));
	const u8 newer[24] = { 1, 2, 3 };
	put_feature_record(&b, NEW_FEAT, newer, sizeof(newer));
	/* perf's end-of-features mark: no body, the writer's feature count
	 * as its id (32 from perf 6.1): not a feature. */
	put_feature_record(&b, NEW_FEAT + 1, NULL, 0);
	size_t at = b.n;
	b.n += 8;
	put_attr(&b, BIG_ATTR);
	put64(&b, ID_A);
	put_header(&b, PD_RECORD_HEADER_ATTR, 0, at);
	at = b.n;
	b.n += 8;
	put64(&b, 1);                        /* event id */
	for (int i = 0; i < 8; i++)
		put64(&b, 0x6576656e74000000ULL);   /* a name, perf's 64 bytes */
	put_header(&b, PD_RECORD_HEADER_EVENT_TYPE, 0, at);
	put_newer_samples(&b);
	put_build_id_record(&b);
	write_buf(path, &b);
}

/* The file: header (attr_size attr_bytes + 16), ids, attrs, data, then
 * the feature table with HOSTNAME and NEW_FEAT set: one entry per set
 * bit, the unknown one after the known.  (perf 6.1 refuses files whose
 * attrs are larger than its own; streams it takes.) */
static void write_newer_file(const char *path, size_t attr_bytes)
{
	static struct buf b;
	memset(&b, 0, sizeof(b));
	b.n = 104;
	size_t ids_at = b.n;
	put64(&b, ID_A);
	size_t attrs_at = b.n;
	put_attr(&b, attr_bytes);
	put64(&b, ids_at);
	put64(&b, 8);
	size_t data_at = b.n;
	put_newer_samples(&b);
	size_t data_end = b.n;
	size_t table = b.n;
	b.n += 2 * 16;
	size_t host_at = b.n;
	put_bytes(&b, hostname_body, sizeof(hostname_body));
	size_t new_at = b.n;
	put64(&b, 0x0102030405060708ULL);
	memcpy(b.p + table, &(u64[4]){ host_at, sizeof(hostname_body), new_at, 8 }, 32);
	u64 head[9] = { 0, 104, attr_bytes + 16, attrs_at, attr_bytes + 16, data_at,
			data_end - data_at, 0, 0 };
	memcpy(head, "PERFILE2", 8);
	memcpy(b.p, head, sizeof(head));
	b.p[72 + PD_FEAT_HOSTNAME / 8] |= 1u << (PD_FEAT_HOSTNAME % 8);
	b.p[72 + NEW_FEAT / 8] |= 1u << (NEW_FEAT % 8);
	write_buf(path, &b);
}

static void check_newer(const char *path, const char *what)
{
	struct pd_reader *r = pd_reader_open(path, NULL);
	CHECK(r, "%s: %s", what, err_msg());
	if (!r)
		return;
	struct pd_event ev;
	int n = 0, rc;
	while ((rc = pd_reader_next(r, &ev)) == 1) {
		if (ev.type != PERF_RECORD_SAMPLE)
			continue;
		CHECK(ev.attr && ev.s.ip == 0x400100 + (u64)n && ev.s.pid == 900 + (u32)n &&
		      ev.s.id == ID_A && ev.s.period == 100000,
		      "%s: sample %d ip %#llx", what, n, (unsigned long long)ev.s.ip);
		n++;
	}
	CHECK(rc == 0, "%s: %s", what, err_msg());
	CHECK(n == NEWER_SAMPLES, "%s: %d samples", what, n);
	CHECK(pd_reader_nattrs(r) == 1 &&
	      pd_reader_attr(r, 0)->attr.config == PERF_COUNT_SW_TASK_CLOCK &&
	      pd_reader_attr(r, 0)->attr.sample_type == NEWER_TYPE &&
	      pd_reader_attr(r, 0)->attr.sample_period == 100000, "%s: attr", what);
	const char *host = pd_reader_string(r, PD_FEAT_HOSTNAME);
	CHECK(host && !strcmp(host, "newer"), "%s: hostname '%s'", what, host ? host : "(none)");
	if (pd_reader_is_pipe(r)) {
		const struct pd_reader_build_id *bid = pd_reader_build_id(r, 0);
		CHECK(pd_reader_nbuild_ids(r) == 1 && bid && bid->pid == 900 && bid->size == 16 &&
		      bid->id[15] == 0xaf && bid->cpumode == PERF_RECORD_MISC_USER &&
		      !strcmp(bid->filename, "/usr/bin/newer"), "%s: the build-id record", what);
	}
	const struct pd_reader_stats *st = pd_reader_stats(r);
	CHECK(st->unknown_features == 1 && st->first_unknown_feature == NEW_FEAT,
	      "%s: %u unknown features, first %d", what, st->unknown_features,
	      st->first_unknown_feature);
	pd_reader_close(r);
}

static bool have_perf(void)
{
	return system("perf --version >/dev/null 2>&1") == 0;
}

/* perf reads the same files: as many sample lines as we wrote. */
static void check_perf_reads(const char *path, bool pipe)
{
	char *full = pipe ? xasprintf("cat '%s' | perf script -i - -F ip 2>/dev/null | grep -c 40010",
				      path)
			  : xasprintf("perf script -i '%s' -F ip 2>/dev/null | grep -c 40010", path);
	FILE *p = popen(full, "r");
	int lines = -1;
	if (p) {
		if (fscanf(p, "%d", &lines) != 1)
			lines = -1;
		pclose(p);
	}
	CHECK(lines == NEWER_SAMPLES, "perf script printed %d samples of %s", lines, path);
	free(full);
}

static void test_newer_perf_files(void)
{
	char *stream = xasprintf("%s/newer.pipe", tmpdir), *file = xasprintf("%s/newer.data", tmpdir);
	char *file2 = xasprintf("%s/newer-attr.data", tmpdir);
	write_newer_stream(stream);
	write_newer_file(file, BIG_ATTR);
	write_newer_file(file2, sizeof(struct perf_event_attr));
	check_newer(stream, "stream");
	check_newer(file, "file");
	check_newer(file2, "file with our attr size");
	if (have_perf()) {
		check_perf_reads(stream, true);
		check_perf_reads(file2, false);
	} else {
		printf("SKIP: test_newer_perf_files_by_perf: perf is not installed\n");
	}
	free(stream);
	free(file);
	free(file2);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ember-fmt2.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: setup: no temporary directory\n");
		return 1;
	}
	RUN(test_branch_stack_fields);
	RUN(test_read_values);
	RUN(test_newer_perf_files);
	if (getenv("KEEP"))
		return test_summary();
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("FAIL: cleanup: %s\n", cmd);
	free(cmd);
	return test_summary();
}
