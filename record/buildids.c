/* buildids.c - the files a recording mapped and their build-ids, gathered
 * from MMAP2 records as they pass and from synthesis, for the build-id
 * header feature that lets readers find the exact binaries later.
 *
 * The ids are read from the files at the end, as perf does: ember does
 * not set attr.build_id, since this kernel leaks the MMAP2 build-id flag
 * onto other sessions' records and perf aborts on the files it writes
 * beside us (record/events.c).  Each file is held open from its first
 * mapping (hold_file), so a container's file, or one of a process gone
 * by the end, still gets its id; the loaded modules' ids come from
 * their notes (sym_module_build_id). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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
	union {
		struct {
			u8 build_id_size, reserved1;
			u16 reserved2;
			u8 build_id[20];
		};
		struct {
			u32 maj, min;
			u64 ino, ino_generation;
		};
	};
	u32 prot, flags;
	char filename[];
};

/* Files held open for the end, at most (and a quarter of the descriptors
 * allowed, the rest being the events' and the online unwinder's): beyond,
 * their paths serve. */
#define BIDS_MAX_FDS 1024

void rec_bids_init(struct rec_bids *b)
{
	memset(b, 0, sizeof(*b));
	u64map_init(&b->index);
	pthread_mutex_init(&b->lock, NULL);
}

void rec_bids_free(struct rec_bids *b)
{
	for (size_t i = 0; i < b->v.n; i++) {
		free(b->v.v[i].filename);
		if (b->v.v[i].fd >= 0)
			close(b->v.v[i].fd);
	}
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
			struct rec_bid e = { .filename = xmalloc(n + 1), .fd = -1 };
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

/* A file first seen mapped for execution is opened now, as its process
 * sees it (once: a failure is not retried at every mapping): one in
 * another mount namespace has no such path here, and the process may be
 * gone when the recording ends.  It is held open for the build-id cache
 * to copy at the end; with no cache to fill (-N, the live views) only
 * its id is wanted, read now, and it is closed: a recording beside new
 * binaries coming and going holds none of them. */
static void hold_file(struct rec_bids *b, struct rec_bid *e, const struct rec_bid_where *w)
{
	if (!b->max_fds) {         /* first asked once the events raised the limit */
		struct rlimit rl;
		b->max_fds = BIDS_MAX_FDS;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 < (rlim_t)b->max_fds)
			b->max_fds = (int)MAX(rl.rlim_cur / 4, 1);
	}
	if (!w || !w->ino || e->fd >= 0 || e->tried || b->nfds >= b->max_fds)
		return;
	e->tried = true;
	struct sym_map m = { .start = w->start, .end = w->end, .path = e->filename,
			     .maj = w->maj, .min = w->min, .ino = w->ino };
	e->fd = rec_open_mapped(&m, w->pid);
	if (e->fd >= 0 && b->read_now) {
		char fdpath[64];
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", e->fd);
		int got = e->size ? 0 : sym_read_build_id(fdpath, e->id, sizeof(e->id));
		if (got > 0)
			e->size = (u8)got;
		close(e->fd);
		e->fd = -1;
	} else if (e->fd >= 0) {
		b->nfds++;
	}
}

void rec_bids_add(struct rec_bids *b, const char *name, size_t namelen,
		  const u8 *id, u8 size, const struct rec_bid_where *where)
{
	if (!worth_an_id(name, namelen))
		return;
	pthread_mutex_lock(&b->lock);
	struct rec_bid *e = find_or_add(b, name, namelen);
	hold_file(b, e, where);
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
	if (len <= off || b->kernel_only)
		return;
	size_t n = strnlen(m->filename, len - off);
	/* An id only where the flag says so and the size is one (the flag
	 * can leak from another session's event: then the bytes are device
	 * numbers, and their size byte is rarely 1..20). */
	bool has_id = (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
		      m->build_id_size > 0 && m->build_id_size <= sizeof(m->build_id) &&
		      !m->reserved1 && !m->reserved2;
	struct rec_bid_where w = { m->pid, m->addr, m->addr + m->len, 0, 0, 0 };
	if (!has_id && (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) == 0) {
		w.maj = m->maj;
		w.min = m->min;
		w.ino = m->ino;
	}
	rec_bids_add(b, m->filename, n, has_id ? m->build_id : NULL,
		     has_id ? m->build_id_size : 0, (m->prot & PROT_EXEC) ? &w : NULL);
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

/* Each loaded module's build-id, named "[ext4]" as its map is. */
static void module_ids(struct pd_build_id **out, int *n, int *cap)
{
	char *text = read_text_file("/proc/modules", NULL);
	for (char *save, *l = text ? strtok_r(text, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		char name[64];
		struct pd_build_id b = { .pid = -1, .cpumode = PERF_RECORD_MISC_KERNEL };
		if (sscanf(l, "%63s", name) != 1)
			continue;
		int got = sym_module_build_id(name, b.id, sizeof(b.id));
		if (got <= 0)
			continue;
		b.size = (u8)got;
		b.filename = xasprintf("[%s]", name);
		if (*n == *cap)
			*out = xrealloc(*out, (size_t)(*cap *= 2) * sizeof(**out));
		(*out)[(*n)++] = b;
	}
	free(text);
}

/* Files whose MMAP2 came without an id (synthesized ones, or the kernel
 * could not read it) are read now. */
int rec_bids_write(struct rec_bids *b, struct pd_writer *w)
{
	int cap = (int)b->v.n + 16, n = 0;
	struct pd_build_id *out = xcalloc((size_t)cap, sizeof(*out));
	if (kernel_id(&out[n]))
		n++;
	int mods_from = n;
	module_ids(&out, &n, &cap);
	int mods_to = n;
	for (size_t i = 0; i < b->v.n; i++) {
		struct rec_bid *e = &b->v.v[i];
		if (!e->size) {
			char fdpath[64];
			snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", e->fd);
			int got = sym_read_build_id(e->fd >= 0 ? fdpath : e->filename, e->id,
						    sizeof(e->id));
			if (got <= 0)
				continue;
			e->size = (u8)got;
		}
		if (n == cap)
			out = xrealloc(out, (size_t)(cap *= 2) * sizeof(*out));
		out[n] = (struct pd_build_id){ .pid = -1,
			.cpumode = PERF_RECORD_MISC_USER, .size = e->size,
			.filename = e->filename };
		memcpy(out[n].id, e->id, e->size);
		n++;
	}
	int rc = n ? pd_writer_feat_build_ids(w, out, n) : 0;
	for (int i = mods_from; i < mods_to; i++)
		free((char *)out[i].filename);
	free(out);
	return rc;
}
