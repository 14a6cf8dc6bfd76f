/* test-export.c - the profile builder of export/: samples of one event
 * summed per stack, an inline chain as one location of several lines
 * (innermost first), pprof's gzipped encoding read back with protobuf-c,
 * speedscope's stacks root first, and reset for the next interval. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/export.h"
#include "export/profile.pb-c.h"
#include "test.h"

static const struct sym inner = { 0x1000, 0x100, "inner (inlined)" };
static const struct sym outer = { 0x1000, 0x100, "outer" };
static const struct sym mainf = { 0x2000, 0x100, "main" };

/* main -> outer, with inner inlined at outer's sampled address: leaf first. */
static const struct rp_frame frames[] = {
	{ .ip = 0x1010, .addr = 0x1010, .offset = 0x1010, .sym = &inner, .inlined = true,
	  .inline_scope = true },
	{ .ip = 0x1010, .addr = 0x1010, .offset = 0x1010, .sym = &outer, .inline_depth = 1 },
	{ .ip = 0x2020, .addr = 0x2020, .offset = 0x2020, .sym = &mainf },
};

static struct pd_attr attr_named(const char *name, u32 type, u64 config)
{
	struct pd_attr a = { 0 };
	a.attr.type = type;
	a.attr.config = config;
	a.attr.sample_period = 1000000;
	a.name = (char *)name;
	return a;
}

static int add(struct ex_profile *p, const struct pd_attr *a, u64 period, int nframes)
{
	static struct rp_thread t = { .pid = 7, .tid = 8, .comm = "work" };
	struct pd_sample s = { .pid = 7, .tid = 8, .period = period, .time = 5000 };
	struct rp_sample rs = { .s = &s, .attr = a, .thread = &t, .frames = frames,
				.nframes = nframes };
	return ex_profile_add(p, &rs);
}

/* The gzipped profile decoded. */
static Perftools__Profiles__Profile *decode(const struct ex_profile *p)
{
	void *gz;
	size_t len;
	if (ex_pprof_encode(p, &gz, &len) < 0)
		return NULL;
	size_t cap = 1 << 20;
	u8 *raw = malloc(cap);
	z_stream z = { 0 };
	inflateInit2(&z, 15 + 32);
	z.next_in = gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	int rc = inflate(&z, Z_FINISH);
	size_t n = z.total_out;
	inflateEnd(&z);
	free(gz);
	Perftools__Profiles__Profile *pb = rc == Z_STREAM_END ?
		perftools__profiles__profile__unpack(NULL, n, raw) : NULL;
	free(raw);
	return pb;
}

static const char *str(const Perftools__Profiles__Profile *pb, s64 i)
{
	return i >= 0 && (size_t)i < pb->n_string_table ? pb->string_table[i] : "?";
}

static const char *func_name(const Perftools__Profiles__Profile *pb, u64 id)
{
	for (size_t i = 0; i < pb->n_function; i++)
		if (pb->function[i]->id == id)
			return str(pb, pb->function[i]->name);
	return "?";
}

static void test_pprof(void)
{
	struct ex_profile_opts o = { .kind = EX_SAMPLES, .labels = true };
	struct ex_profile *p = ex_profile_new(&o);
	struct pd_attr cpu = attr_named("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	struct pd_attr faults = attr_named("page-faults", PERF_TYPE_SOFTWARE,
					   PERF_COUNT_SW_PAGE_FAULTS);
	CHECK(add(p, &cpu, 1000, 3) == 0, "add");
	CHECK(add(p, &cpu, 3000, 3) == 0, "add");
	CHECK(add(p, &faults, 1, 3) == 0, "add");
	CHECK(add(p, &cpu, 500, 2) == 0, "add");
	CHECK(ex_profile_samples(p) == 3, "%llu samples", (unsigned long long)ex_profile_samples(p));
	CHECK(ex_profile_skipped(p) == 1, "skipped %llu", (unsigned long long)ex_profile_skipped(p));
	CHECK(ex_profile_total(p) == 4500, "total %llu", (unsigned long long)ex_profile_total(p));
	CHECK(!strcmp(ex_profile_event(p), "cpu-clock"), "event %s", ex_profile_event(p));
	Perftools__Profiles__Profile *pb = decode(p);
	CHECK(pb, "the profile does not decode");
	if (!pb) {
		ex_profile_free(p);
		return;
	}
	CHECK(pb->n_string_table > 0 && !strcmp(pb->string_table[0], ""), "string 0 not \"\"");
	CHECK(pb->n_sample_type == 2 && !strcmp(str(pb, pb->sample_type[0]->type), "samples") &&
	      !strcmp(str(pb, pb->sample_type[1]->type), "cpu") &&
	      !strcmp(str(pb, pb->sample_type[1]->unit), "nanoseconds"), "sample types");
	CHECK(pb->period == 1000000 && !strcmp(str(pb, pb->period_type->unit), "nanoseconds"),
	      "period %lld", (long long)pb->period);
	/* Two stacks: the whole one twice (summed), the inline chain alone. */
	CHECK(pb->n_sample == 2, "%zu samples", pb->n_sample);
	if (pb->n_sample == 2) {
		const Perftools__Profiles__Sample *s = pb->sample[0];
		CHECK(s->n_value == 2 && s->value[0] == 2 && s->value[1] == 4000, "values %lld %lld",
		      (long long)s->value[0], (long long)s->value[1]);
		CHECK(s->n_location_id == 2, "%zu locations", s->n_location_id);
		CHECK(s->n_label == 3 && !strcmp(str(pb, s->label[2]->key), "comm") &&
		      !strcmp(str(pb, s->label[2]->str), "work") && s->label[0]->num == 7 &&
		      s->label[1]->num == 8, "labels");
		CHECK(pb->sample[1]->n_location_id == 1 &&
		      pb->sample[1]->location_id[0] == s->location_id[0], "the leaf's location is shared");
	}
	/* The leaf location: inner then outer (innermost first). */
	CHECK(pb->n_location == 2 && pb->location[0]->n_line == 2 && pb->location[1]->n_line == 1,
	      "locations and their lines");
	if (pb->n_location == 2 && pb->location[0]->n_line == 2) {
		CHECK(!strcmp(func_name(pb, pb->location[0]->line[0]->function_id), "inner"), "line 0 %s",
		      func_name(pb, pb->location[0]->line[0]->function_id));
		CHECK(!strcmp(func_name(pb, pb->location[0]->line[1]->function_id), "outer"), "line 1 %s",
		      func_name(pb, pb->location[0]->line[1]->function_id));
		CHECK(pb->location[0]->address == 0x1010, "address %#llx",
		      (unsigned long long)pb->location[0]->address);
	}
	CHECK(pb->n_function == 3, "%zu functions", pb->n_function);
	perftools__profiles__profile__free_unpacked(pb, NULL);

	ex_profile_reset(p);
	CHECK(ex_profile_samples(p) == 0 && ex_profile_total(p) == 0, "reset keeps samples");
	add(p, &cpu, 700, 2);
	pb = decode(p);
	CHECK(pb && pb->n_sample == 1 && pb->n_location == 1 && pb->n_function == 2 &&
	      pb->sample[0]->value[1] == 700, "after reset: only the new sample");
	if (pb)
		perftools__profiles__profile__free_unpacked(pb, NULL);
	ex_profile_free(p);
}

static void test_speedscope(void)
{
	struct ex_profile_opts o = { .kind = EX_SAMPLES };
	struct ex_profile *p = ex_profile_new(&o);
	struct pd_attr faults = attr_named("page-faults", PERF_TYPE_SOFTWARE,
					   PERF_COUNT_SW_PAGE_FAULTS);
	add(p, &faults, 5, 3);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(ex_speedscope_write(p, "x\"y", f) == 0, "write");
	fclose(f);
	/* Functions: inner 0, outer 1, main 2; stacks root first. */
	CHECK(strstr(buf, "\"samples\":[[2,1,0]],\"weights\":[5]"), "%s", buf);
	CHECK(strstr(buf, "\"unit\":\"none\""), "a count's unit: %s", buf);
	CHECK(strstr(buf, "\"name\":\"x\\\"y\""), "the name quoted: %s", buf);
	CHECK(strstr(buf, "{\"name\":\"inner\"}"), "inner without (inlined): %s", buf);
	free(buf);
	ex_profile_free(p);
}

int main(void)
{
	RUN(test_pprof);
	RUN(test_speedscope);
	return test_summary();
}
