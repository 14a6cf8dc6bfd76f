/* buildids.c - the files a recording mapped and their build-ids, gathered
 * from MMAP2 records as they pass and from synthesis, for the build-id
 * header feature that lets readers find the exact binaries later. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "record/record-internal.h"
#include "symbols/symbols.h"

/* The kernel ABI's MMAP2 record when PERF_RECORD_MISC_MMAP_BUILD_ID is set
 * (perf_event.h documents it only as a comment); without it the 24 bytes
 * after pgoff are maj, min, ino and ino_generation, and the filename is
 * at the same place. */
struct mmap2_build_id_rec {
	struct perf_event_header header;
	u32 pid, tid;
	u64 addr, len, pgoff;
	u8 build_id_size, reserved1;
	u16 reserved2;
	u8 build_id[20];
	u32 prot, flags;
	char filename[];
};

void rec_bids_init(struct rec_bids *b)
{
	memset(b, 0, sizeof(*b));
	u64map_init(&b->index);
	pthread_mutex_init(&b->lock, NULL);
}

void rec_bids_free(struct rec_bids *b)
{
	for (size_t i = 0; i < b->v.n; i++)
		free(b->v.v[i].filename);
	VEC_FREE(&b->v);
	u64map_free(&b->index);
	pthread_mutex_destroy(&b->lock);
}

static u64 name_hash(const char *s, size_t n)
{
	u64 h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (u8)s[i]) * 0x100000001b3ULL;
	return h;
}

/* Anonymous memory, the vdso's siblings and deleted files have no file to
 * identify later. */
static bool worth_an_id(const char *name, size_t n)
{
	if (n == 0 || name[0] != '/' || !strncmp(name, "//", 2))
		return false;
	return !memmem(name, n, " (deleted)", 10) && strncmp(name, "/memfd:", 7);
}

static struct rec_bid *find_or_add(struct rec_bids *b, const char *name, size_t n)
{
	u64 key = name_hash(name, n);
	for (;; key++) {           /* a collision moves to the next key */
		bool created;
		u64 *slot = u64map_slot(&b->index, key, &created);
		if (created) {
			struct rec_bid e = { .filename = xmalloc(n + 1) };
			memcpy(e.filename, name, n);
			e.filename[n] = '\0';
			VEC_PUSH(&b->v, e);
			*slot = b->v.n;
			return &b->v.v[b->v.n - 1];
		}
		struct rec_bid *e = &b->v.v[*slot - 1];
		if (strlen(e->filename) == n && !memcmp(e->filename, name, n))
			return e;
	}
}

void rec_bids_add(struct rec_bids *b, const char *name, size_t namelen,
		  const u8 *id, u8 size)
{
	if (!worth_an_id(name, namelen))
		return;
	pthread_mutex_lock(&b->lock);
	struct rec_bid *e = find_or_add(b, name, namelen);
	if (!e->size && id && size && size <= sizeof(e->id)) {
		memcpy(e->id, id, size);
		e->size = size;
	}
	pthread_mutex_unlock(&b->lock);
}

void rec_bids_note_mmap2(struct rec_bids *b, const u8 *rec, size_t len)
{
	const struct mmap2_build_id_rec *m = (const void *)rec;
	size_t off = offsetof(struct mmap2_build_id_rec, filename);
	if (len <= off)
		return;
	size_t n = strnlen(m->filename, len - off);
	/* An id only where the flag says so and the size is one (the flag
	 * can leak from another session's event: then the bytes are device
	 * numbers, and their size byte is rarely 1..20). */
	bool has_id = (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
		      m->build_id_size > 0 && m->build_id_size <= sizeof(m->build_id) &&
		      !m->reserved1 && !m->reserved2;
	rec_bids_add(b, m->filename, n, has_id ? m->build_id : NULL,
		     has_id ? m->build_id_size : 0);
}

static bool kernel_id(struct pd_build_id *out)
{
	int n = sym_kernel_build_id(out->id, sizeof(out->id));
	if (n <= 0)
		return false;
	out->pid = -1;
	out->cpumode = PERF_RECORD_MISC_KERNEL;
	out->size = (u8)n;
	out->filename = "[kernel.kallsyms]";
	return true;
}

/* Files whose MMAP2 came without an id (synthesized ones, or the kernel
 * could not read it) are read now. */
int rec_bids_write(struct rec_bids *b, struct pd_writer *w)
{
	struct pd_build_id *out = xcalloc(b->v.n + 1, sizeof(*out));
	int n = 0;
	if (kernel_id(&out[n]))
		n++;
	for (size_t i = 0; i < b->v.n; i++) {
		struct rec_bid *e = &b->v.v[i];
		if (!e->size) {
			int got = sym_read_build_id(e->filename, e->id, sizeof(e->id));
			if (got <= 0)
				continue;
			e->size = (u8)got;
		}
		out[n] = (struct pd_build_id){ .pid = -1,
			.cpumode = PERF_RECORD_MISC_USER, .size = e->size,
			.filename = e->filename };
		memcpy(out[n].id, e->id, e->size);
		n++;
	}
	int rc = n ? pd_writer_feat_build_ids(w, out, n) : 0;
	free(out);
	return rc;
}
