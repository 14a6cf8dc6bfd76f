/* verify.c - the checks behind `ember verify`: a perf.data file or a
 * blktrace capture read record by record, like blkrawverify (framing,
 * actions, versions, per-CPU times that never go back, sequence gaps, lost
 * events), each problem a line of the report. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"

#define MAX_SHOWN 50    /* problems printed; the rest only counted */

struct cpu_state {
	u64 last_time;
	u32 last_seq;
	bool seen;
};

struct verify {
	struct u64map cpu_index;     /* cpu -> index + 1 */
	VEC(struct cpu_state) cpus;
	u64 records, problems;
	FILE *out;
};

static struct cpu_state *cpu_get(struct verify *v, u32 cpu)
{
	bool created;
	u64 *slot = u64map_slot(&v->cpu_index, cpu, &created);
	if (created) {
		struct cpu_state z = { 0 };
		VEC_PUSH(&v->cpus, z);
		*slot = v->cpus.n;
	}
	return &v->cpus.v[*slot - 1];
}

static void problem(struct verify *v, const char *file, u64 offset, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static void problem(struct verify *v, const char *file, u64 offset, const char *fmt, ...)
{
	if (v->problems++ >= MAX_SHOWN)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(v->out, "%s: offset %llu: ", file, (unsigned long long)offset);
	vfprintf(v->out, fmt, ap);
	fputc('\n', v->out);
	va_end(ap);
}

static void check_time(struct verify *v, const char *file, u64 off, u32 cpu, u64 t)
{
	struct cpu_state *c = cpu_get(v, cpu);
	if (c->seen && t < c->last_time)
		problem(v, file, off, "time goes back on CPU %u: %llu ns after %llu ns", cpu,
			(unsigned long long)t, (unsigned long long)c->last_time);
	c->last_time = t;
	c->seen = true;
}

/* ---- blktrace ------------------------------------------------------------ */

static int blk_record(void *ctx, const struct pd_blk_rec *r, const char *file)
{
	struct verify *v = ctx;
	v->records++;
	if (r->version != 0x07)
		problem(v, file, r->offset, "version 0x%02x, expected 0x07", r->version);
	u32 act = PD_BLK_ACT(r->action) & ~(u32)PD_BLK_TA_CGROUP;
	bool notify = PD_BLK_CAT(r->action) & PD_BLK_TC_NOTIFY;
	if (notify ? act > PD_BLK_TN_MESSAGE : (act == 0 || act > PD_BLK_TA_DRV_DATA))
		problem(v, file, r->offset, "unknown action 0x%08x", r->action);
	check_time(v, file, r->offset, r->cpu, r->time);
	struct cpu_state *c = cpu_get(v, r->cpu);
	/* The blk tracer leaves sequence 0; blktrace counts per CPU from 1. */
	if (r->sequence && c->last_seq && r->sequence != c->last_seq + 1)
		problem(v, file, r->offset, "sequence on CPU %u jumps from %u to %u%s", r->cpu,
			c->last_seq, r->sequence,
			r->sequence > c->last_seq ? " (records missing)" : " (goes back)");
	if (r->sequence)
		c->last_seq = r->sequence;
	return 0;
}

static int verify_blktrace(struct verify *v, const char *path)
{
	if (pd_blk_walk(path, blk_record, v) < 0)
		problem(v, path, 0, "%s", err_msg());
	return 0;
}

/* ---- perf.data ----------------------------------------------------------- */

static bool has_cpu(const struct pd_event *ev)
{
	const struct pd_attr *a = ev->attr;
	if (!a || !ev->has_time || !(a->attr.sample_type & PERF_SAMPLE_CPU))
		return false;
	return ev->type == PERF_RECORD_SAMPLE || a->attr.sample_id_all;
}

static int verify_perf(struct verify *v, const char *path)
{
	struct pd_reader_opts o = { .unordered = true };
	struct pd_reader *r = pd_reader_open(path, &o);
	if (!r) {
		problem(v, path, 0, "%s", err_msg());
		return 0;
	}
	struct pd_event ev;
	int rc;
	while ((rc = pd_reader_next(r, &ev)) > 0) {
		v->records++;
		if (ev.type == PERF_RECORD_LOST)
			problem(v, path, ev.offset, "%llu events lost (a sequence gap)",
				(unsigned long long)ev.u.lost.lost);
		else if (has_cpu(&ev))
			check_time(v, path, ev.offset, ev.s.cpu, ev.s.time);
	}
	const struct pd_reader_stats *st = pd_reader_stats(r);
	if (st->damaged_features)
		problem(v, path, st->first_damaged_feature_offset,
			"%u feature section%s outside the file (the first: feature %d), skipped",
			st->damaged_features, st->damaged_features == 1 ? " lies" : "s lie",
			st->first_damaged_feature);
	if (rc < 0)
		problem(v, path, 0, "%s", err_msg());
	else if (st->truncated)
		problem(v, path, 0, "the header's data size disagrees with the file (not "
			"closed cleanly)");
	pd_reader_close(r);
	return 0;
}

int pd_verify(const char *path, FILE *out, u64 *problems)
{
	bool blk = pd_blk_probe(path);
	if (!blk && access(path, R_OK) != 0) {
		err_set("%s: %s: give a data file or blktrace capture", path, strerror(errno));
		return -1;
	}
	struct verify v = { .out = out };
	u64map_init(&v.cpu_index);
	if (blk)
		verify_blktrace(&v, path);
	else
		verify_perf(&v, path);
	if (v.problems > MAX_SHOWN)
		fprintf(out, "... and %llu more problems\n",
			(unsigned long long)(v.problems - MAX_SHOWN));
	fprintf(out, "%s: %s, %llu records, %llu problems\n", path, blk ? "blktrace" : "perf.data",
		(unsigned long long)v.records, (unsigned long long)v.problems);
	u64map_free(&v.cpu_index);
	VEC_FREE(&v.cpus);
	*problems = v.problems;
	return 0;
}
