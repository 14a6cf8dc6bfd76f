/* prefetch.c - symbol tables of the files a recording names in its
 * build-id list, loaded on a thread of their own while the replay reads
 * the first events, so the reporter's main thread rarely parses an ELF
 * file itself.  The thread builds dsos apart from the context; the main
 * thread adopts one when it first asks for that file (waiting if it is
 * being loaded) or loads the file itself when the thread has not begun it.
 * Only files named with a build-id are prefetched, and only a load that
 * found the right file is adopted: everything else takes the ordinary
 * path, with its /proc/PID/root lookup and its statistics. */
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

enum pf_state { PF_WAITING, PF_LOADING, PF_DONE, PF_TAKEN };

struct pf_entry {
	char *path;
	u8 id[SYM_BUILD_ID_MAX];
	size_t id_size;
	struct sym_dso *d;         /* PF_DONE: the load, until taken */
	enum pf_state state;
};

struct file_prefetch {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t done;       /* an entry reached PF_DONE */
	struct pf_entry *v;
	size_t n;
	struct u64map index;       /* file key -> entry index + 1 */
	bool stop;                 /* the context is being freed */
	bool joined;               /* the thread has ended (or never ran) */
	bool demangle;
	char *debug_dir;
};

/* Whether the thread may load entry e: nobody has asked for it yet and
 * the context is not going away. */
static bool claim(struct file_prefetch *p, struct pf_entry *e)
{
	pthread_mutex_lock(&p->lock);
	bool mine = e->state == PF_WAITING && !p->stop;
	if (mine)
		e->state = PF_LOADING;
	pthread_mutex_unlock(&p->lock);
	return mine;
}

static void *prefetch_run(void *arg)
{
	struct file_prefetch *p = arg;
	for (size_t i = 0; i < p->n; i++) {
		struct pf_entry *e = &p->v[i];
		if (!claim(p, e))
			continue;
		/* file_load reads only these fields of a context (and counts
		 * into its stats, which a discarded load must not touch). */
		struct sym_ctx shadow = { .demangle = p->demangle, .debug_dir = p->debug_dir };
		struct sym_dso *d = dso_alloc(DSO_FILE, e->path);
		memcpy(d->build_id, e->id, e->id_size);
		d->build_id_size = e->id_size;
		file_load(&shadow, d, 0);
		pthread_mutex_lock(&p->lock);
		e->d = d;
		e->state = PF_DONE;
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

void sym_prefetch_files(struct sym_ctx *c, const struct sym_file_hint *hints, size_t n)
{
	if (c->prefetch || n == 0)
		return;
	struct file_prefetch *p = xcalloc(1, sizeof(*p));
	p->v = xcalloc(n, sizeof(*p->v));
	u64map_init(&p->index);
	for (size_t i = 0; i < n; i++) {
		const struct sym_file_hint *h = &hints[i];
		size_t size = MIN(h->build_id_size, (size_t)SYM_BUILD_ID_MAX);
		if (!h->path || h->path[0] != '/' || size == 0)
			continue;
		bool created;
		u64 *slot = u64map_slot(&p->index, dso_file_key(h->path, h->build_id, size), &created);
		if (!created)
			continue;   /* named twice (or a key collision: loaded the usual way) */
		struct pf_entry *e = &p->v[p->n];
		e->path = xstrdup(h->path);
		memcpy(e->id, h->build_id, size);
		e->id_size = size;
		*slot = ++p->n;
	}
	p->demangle = c->demangle;
	p->debug_dir = xstrdup(c->debug_dir);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->done, NULL);
	elf_version(EV_CURRENT);   /* set once here, not raced by two threads */
	if (p->n == 0 || pthread_create(&p->thread, NULL, prefetch_run, p) != 0) {
		p->joined = true;  /* nothing runs: every entry stays waiting */
		c->prefetch = p;
		prefetch_end(c);
		return;
	}
	c->prefetch = p;
}

struct sym_dso *prefetch_take(struct sym_ctx *c, u64 key, const char *path, const u8 *id,
			      size_t n)
{
	struct file_prefetch *p = c->prefetch;
	u64 *slot = p ? u64map_get(&p->index, key) : NULL;
	if (!slot)
		return NULL;
	struct pf_entry *e = &p->v[*slot - 1];
	if (e->id_size != n || strcmp(e->path, path) || memcmp(e->id, id, n))
		return NULL;
	pthread_mutex_lock(&p->lock);
	while (e->state == PF_LOADING)
		pthread_cond_wait(&p->done, &p->lock);
	struct sym_dso *d = e->d;
	e->d = NULL;
	e->state = PF_TAKEN;
	pthread_mutex_unlock(&p->lock);
	if (d && (!d->trusted || !d->sym_file)) {
		dso_free(d);    /* not found as recorded: the usual path decides */
		d = NULL;
	}
	return d;
}

void sym_prefetch_wait(struct sym_ctx *c)
{
	struct file_prefetch *p = c->prefetch;
	if (p && !p->joined) {
		pthread_join(p->thread, NULL);
		p->joined = true;
	}
}

void prefetch_end(struct sym_ctx *c)
{
	struct file_prefetch *p = c->prefetch;
	if (!p)
		return;
	if (!p->joined) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (p->v[i].d)
			dso_free(p->v[i].d);
		free(p->v[i].path);
	}
	free(p->v);
	u64map_free(&p->index);
	free(p->debug_dir);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->done);
	free(p);
	c->prefetch = NULL;
}
