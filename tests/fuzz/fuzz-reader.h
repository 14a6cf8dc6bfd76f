/* fuzz-reader.h - the walk both perf.data targets (file and stream) share:
 * open, read the attrs and features, decode every record and touch all
 * that a decoded event points to. */
#ifndef EMBER_FUZZ_READER_H
#define EMBER_FUZZ_READER_H

#include "tests/fuzz/fuzz.h"
#include "format/format.h"

/* Every pointer of a decoded event must lie inside the event's own
 * record.  Files are read in place from an mmap, where ASan sees nothing
 * of a read past one record (the next record is there): this check does. */
static void inside(const struct pd_event *ev, const void *p, size_t n, const char *what)
{
	const uint8_t *b = (const uint8_t *)ev->raw, *e = b + ev->size, *q = p;
	if (!p || (q >= b && q <= e && n <= (size_t)(e - q)))
		return;
	fprintf(stderr, "decoded %s (%zu bytes) lies outside its record (type %u, offset %#llx)\n",
		what, n, ev->type, (unsigned long long)ev->offset);
	abort();
}

/* A string must end (NUL) inside the record. */
static void inside_str(const struct pd_event *ev, const char *s, const char *what)
{
	const uint8_t *b = (const uint8_t *)ev->raw, *e = b + ev->size, *q = (const uint8_t *)s;
	if (!s)
		return;
	inside(ev, s, 0, what);
	if (!memchr(q, 0, (size_t)(e - q))) {
		fprintf(stderr, "decoded %s runs past its record (type %u, offset %#llx)\n",
			what, ev->type, (unsigned long long)ev->offset);
		abort();
	}
	fuzz_touch_str(s);
}

static void touch_sample(const struct pd_event *ev)
{
	const struct pd_sample *s = &ev->s;
	inside(ev, s->callchain, s->nr_callchain * 8, "callchain");
	fuzz_touch(s->callchain, s->nr_callchain * 8);
	inside(ev, s->raw, s->raw_size, "raw data");
	fuzz_touch(s->raw, s->raw_size);
	inside(ev, s->stack, s->stack_size, "user stack");
	fuzz_touch(s->stack, s->stack_size);
	inside(ev, s->branches, s->nr_branches * 24, "branch stack");
	fuzz_touch(s->branches, s->nr_branches * 24);
	u64 value, id;
	for (u64 i = 0; pd_read_value(s, i, &value, &id); i++)
		fuzz_sink += value + id;
	if (s->nr_read) {
		size_t last = (size_t)((s->nr_read - 1) * s->read_stride + s->read_id_at + 1) * 8;
		inside(ev, s->read, last, "read values");
	}
	if (ev->attr && s->user_regs) {
		inside(ev, s->user_regs, (size_t)ev->attr->nr_user_regs * 8, "user regs");
		fuzz_touch(s->user_regs, (size_t)ev->attr->nr_user_regs * 8);
	}
}

static void touch_event(const struct pd_event *ev)
{
	fuzz_touch(ev->raw, ev->size);
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		touch_sample(ev);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		inside_str(ev, ev->u.mmap.filename, "mmap filename");
		inside(ev, ev->u.mmap.build_id, ev->u.mmap.build_id_size, "mmap build-id");
		fuzz_touch(ev->u.mmap.build_id, ev->u.mmap.build_id_size);
		break;
	case PERF_RECORD_COMM:
		inside_str(ev, ev->u.comm.comm, "comm");
		break;
	}
	if (ev->attr)
		fuzz_touch_str(ev->attr->name);
}

static void touch_header(const struct pd_reader *r)
{
	for (size_t i = 0; i < pd_reader_nattrs(r); i++) {
		const struct pd_attr *a = pd_reader_attr(r, i);
		fuzz_touch_str(a->name);
		fuzz_touch(a->ids, a->nids * 8);
	}
	for (int f = 0; f < PD_FEAT_MAX; f++) {
		size_t len = 0;
		const void *body = pd_reader_feature(r, f, &len);
		fuzz_touch(body, body ? len : 0);
		fuzz_touch_str(pd_reader_string(r, f));
	}
	for (size_t i = 0; i < pd_reader_nbuild_ids(r); i++)
		fuzz_touch_str(pd_reader_build_id(r, i)->filename);
	for (size_t i = 0; i < pd_reader_ngroups(r); i++) {
		fuzz_touch_str(pd_reader_group(r, i)->name);
		fuzz_sink += pd_reader_group(r, i)->nr_members;
	}
}

/* Reads the whole input once, in time order or in file order. */
static void fuzz_read_all(const char *path, bool unordered)
{
	struct pd_reader_opts o = { .unordered = unordered };
	struct pd_reader *r = pd_reader_open(path, &o);
	if (!r)
		return;
	touch_header(r);
	struct pd_event ev;
	while (pd_reader_next(r, &ev) == 1)
		touch_event(&ev);
	/* Features of a stream arrive with its records. */
	touch_header(r);
	u64 total;
	fuzz_sink += pd_reader_position(r, &total) + pd_reader_stats(r)->nr_samples;
	pd_reader_close(r);
}

#endif
