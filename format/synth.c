/* synth.c - side-band records the recorder synthesizes for processes that
 * already run (COMM, FORK, MMAP2), laid out as the kernel writes them,
 * sample_id trailer included.  Built on the stack: no allocation. */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "format/writer-internal.h"

/* Longest file name we accept; the kernel's own limit (PATH_MAX). */
#define SYNTH_NAME_MAX 4096
/* Largest fixed part (MMAP2) + name + the longest sample_id trailer. */
#define SYNTH_REC_MAX (64 + SYNTH_NAME_MAX + 48)

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* A record under construction: u64-aligned storage and a write cursor. */
struct rec {
	u64 store[SYNTH_REC_MAX / 8];
	size_t len;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy((u8 *)r->store + r->len, p, n);
	r->len += n;
}

static void put_u32(struct rec *r, u32 v)
{
	put(r, &v, sizeof(v));
}

static void put_u64(struct rec *r, u64 v)
{
	put(r, &v, sizeof(v));
}

/* A NUL-terminated string padded with zeros to 8 bytes, as the kernel does. */
static void put_name(struct rec *r, const char *s, size_t n)
{
	size_t padded = PDW_ALIGN(n + 1, sizeof(u64));
	memset((u8 *)r->store + r->len, 0, padded);
	memcpy((u8 *)r->store + r->len, s, n);
	r->len += padded;
}

size_t pd_sample_id_size(const struct perf_event_attr *attr)
{
	if (!attr->sample_id_all)
		return 0;
	static const u64 bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
				    PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
				    PERF_SAMPLE_IDENTIFIER };
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(bits); i++)
		if (attr->sample_type & bits[i])
			n += sizeof(u64);
	return n;
}

/* The kernel's order: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER (last, so
 * a reader finds it from the record's end).  Without sid the trailer is
 * zero but for pid/tid, which is how perf marks synthesized records. */
static void put_sample_id(struct rec *r, const struct perf_event_attr *attr,
			  const struct pd_sample_id *sid, u32 pid, u32 tid)
{
	if (!attr->sample_id_all)
		return;
	struct pd_sample_id none = { .pid = pid, .tid = tid };
	const struct pd_sample_id *s = sid ? sid : &none;
	u64 t = attr->sample_type;
	if (t & PERF_SAMPLE_TID) {
		put_u32(r, s->pid);
		put_u32(r, s->tid);
	}
	if (t & PERF_SAMPLE_TIME)
		put_u64(r, s->time);
	if (t & PERF_SAMPLE_ID)
		put_u64(r, s->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		put_u64(r, s->id);
	if (t & PERF_SAMPLE_CPU) {
		put_u32(r, s->cpu);
		put_u32(r, 0);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		put_u64(r, s->id);
}

static void put_header(struct rec *r, u32 type, u16 misc)
{
	struct perf_event_header h = { type, misc, 0 };
	r->len = 0;
	put(r, &h, sizeof(h));
}

/* Fills in the size and hands the record to the data path. */
static int emit(struct pd_writer *w, struct rec *r)
{
	u16 size = (u16)r->len;
	memcpy((u8 *)r->store + offsetof(struct perf_event_header, size), &size,
	       sizeof(size));
	return pdw_data_append(w, r->store, r->len);
}

static int name_ok(struct pd_writer *w, const char *s, size_t *len)
{
	if (!s) {
		err_set("%s: synthesized record without a name", w->path);
		return -1;
	}
	*len = strlen(s);
	if (*len >= SYNTH_NAME_MAX) {
		err_set("%s: name too long for a record: %.40s...", w->path, s);
		return -1;
	}
	return 0;
}

int pd_write_comm(struct pd_writer *w, const struct perf_event_attr *attr,
		  u32 pid, u32 tid, const char *comm, bool exec,
		  const struct pd_sample_id *sid)
{
	size_t n;
	if (name_ok(w, comm, &n))
		return -1;
	struct rec r;
	put_header(&r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	put_u32(&r, pid);
	put_u32(&r, tid);
	put_name(&r, comm, n);
	put_sample_id(&r, attr, sid, pid, tid);
	return emit(w, &r);
}

int pd_write_fork(struct pd_writer *w, const struct perf_event_attr *attr,
		  u32 pid, u32 ppid, u32 tid, u32 ptid, u64 time,
		  const struct pd_sample_id *sid)
{
	struct rec r;
	put_header(&r, PERF_RECORD_FORK, 0);
	put_u32(&r, pid);
	put_u32(&r, ppid);
	put_u32(&r, tid);
	put_u32(&r, ptid);
	put_u64(&r, time);
	put_sample_id(&r, attr, sid, pid, tid);
	return emit(w, &r);
}

/* The 24 bytes after pgoff: device and inode, or the build-id. */
static void put_mmap_identity(struct rec *r, const struct pd_mmap2 *m)
{
	if (!m->build_id) {
		put_u32(r, m->maj);
		put_u32(r, m->min);
		put_u64(r, m->ino);
		put_u64(r, m->ino_generation);
		return;
	}
	u8 id[24] = { m->build_id_size };
	memcpy(id + 4, m->build_id, m->build_id_size);
	put(r, id, sizeof(id));
}

/* As the kernel: non-executable mappings are data (prot 0 = unknown). */
static u16 mmap_misc(const struct pd_mmap2 *m)
{
	u16 misc = m->cpumode;
	if (m->build_id)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	if (m->prot && !(m->prot & PROT_EXEC))
		misc |= PERF_RECORD_MISC_MMAP_DATA;
	return misc;
}

int pd_write_mmap2(struct pd_writer *w, const struct perf_event_attr *attr,
		   const struct pd_mmap2 *m, const struct pd_sample_id *sid)
{
	size_t n;
	if (name_ok(w, m->filename, &n))
		return -1;
	if (m->build_id && m->build_id_size > PDW_BUILD_ID_SIZE) {
		err_set("%s: build-id of %u bytes (20 at most)", w->path, m->build_id_size);
		return -1;
	}
	struct rec r;
	put_header(&r, PERF_RECORD_MMAP2, mmap_misc(m));
	put_u32(&r, m->pid);
	put_u32(&r, m->tid);
	put_u64(&r, m->start);
	put_u64(&r, m->len);
	put_u64(&r, m->pgoff);
	put_mmap_identity(&r, m);
	put_u32(&r, m->prot);
	put_u32(&r, m->flags);
	put_name(&r, m->filename, n);
	put_sample_id(&r, attr, sid, m->pid, m->tid);
	return emit(w, &r);
}
