/* spool.c - profiles that could not be sent, kept in a directory until
 * the backend answers again: one file each, named by a sequence number
 * and the profile's times, at most max of them, the oldest dropped first. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/push.h"

struct spooled {
	u64 id;                    /* sequence number: the order they came in */
	u64 from, until, rate;
	enum push_format format;
};

struct push_spool {
	char *dir;
	size_t max;
	VEC(struct spooled) v;     /* oldest first */
	u64 next_id;
};

static const char *ext_of(enum push_format f)
{
	return f == PUSH_PPROF ? "pb.gz" : "folded";
}

static char *path_of(const struct push_spool *s, const struct spooled *e)
{
	return xasprintf("%s/%020llu-%llu-%llu-%llu.%s", s->dir, (unsigned long long)e->id,
			 (unsigned long long)e->from, (unsigned long long)e->until,
			 (unsigned long long)e->rate, ext_of(e->format));
}

/* A spool file's name back to its entry; false for anything else. */
static bool parse_name(const char *name, struct spooled *e)
{
	unsigned long long id, from, until, rate;
	int n = 0;
	if (sscanf(name, "%20llu-%llu-%llu-%llu.%n", &id, &from, &until, &rate, &n) != 4 || !n)
		return false;
	const char *ext = name + n;
	if (!strcmp(ext, "pb.gz"))
		e->format = PUSH_PPROF;
	else if (!strcmp(ext, "folded"))
		e->format = PUSH_FOLDED;
	else
		return false;
	*e = (struct spooled){ id, from, until, rate, e->format };
	return true;
}

static int by_id(const void *a, const void *b)
{
	const struct spooled *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int take_up(struct push_spool *s)
{
	DIR *d = opendir(s->dir);
	if (!d) {
		err_set_errno("spool directory %s", s->dir);
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct spooled e;
		if (parse_name(de->d_name, &e)) {
			VEC_PUSH(&s->v, e);
			s->next_id = MAX(s->next_id, e.id + 1);
		}
	}
	closedir(d);
	if (s->v.n > 1)
		qsort(s->v.v, s->v.n, sizeof(*s->v.v), by_id);
	return 0;
}

static void drop_oldest(struct push_spool *s, size_t n, u64 *dropped)
{
	for (size_t i = 0; i < n; i++) {
		char *p = path_of(s, &s->v.v[i]);
		unlink(p);
		free(p);
	}
	memmove(s->v.v, s->v.v + n, (s->v.n - n) * sizeof(*s->v.v));
	s->v.n -= n;
	if (dropped)
		*dropped += n;
}

struct push_spool *push_spool_open(const char *dir, size_t max)
{
	if (!max) {
		err_set("--spool-max 0: give 1 or more profiles");
		return NULL;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		err_set_errno("cannot make the spool directory %s", dir);
		return NULL;
	}
	struct push_spool *s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(dir);
	s->max = max;
	if (take_up(s) < 0) {
		push_spool_close(s);
		return NULL;
	}
	if (s->v.n > max)
		drop_oldest(s, s->v.n - max, NULL);
	return s;
}

void push_spool_close(struct push_spool *s)
{
	if (!s)
		return;
	VEC_FREE(&s->v);
	free(s->dir);
	free(s);
}

size_t push_spool_count(const struct push_spool *s)
{
	return s->v.n;
}

int push_spool_put(struct push_spool *s, const struct push_profile *p, u64 *dropped)
{
	struct spooled e = { s->next_id++, p->from, p->until, p->sample_rate, p->format };
	char *path = path_of(s, &e);
	char *tmp = xasprintf("%s/.new-%llu", s->dir, (unsigned long long)e.id);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = fd < 0 || write_all(fd, p->data, p->len) < 0 ? -1 : 0;
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc < 0) {
		err_set_errno("cannot spool a profile in %s", s->dir);
		unlink(tmp);
	} else {
		if (s->v.n >= s->max)
			drop_oldest(s, s->v.n - s->max + 1, dropped);
		VEC_PUSH(&s->v, e);
	}
	free(tmp);
	free(path);
	return rc;
}

int push_spool_oldest(struct push_spool *s, struct push_profile *p, struct strbuf *buf,
		      u64 *id, u64 *dropped)
{
	while (s->v.n) {
		struct spooled *e = &s->v.v[0];
		char *path = path_of(s, e);
		size_t len;
		char *data = read_text_file(path, &len);
		free(path);
		if (!data) {
			drop_oldest(s, 1, dropped);   /* deleted or unreadable */
			continue;
		}
		sb_reset(buf);
		sb_add(buf, data, len);
		free(data);
		*p = (struct push_profile){ .format = e->format, .data = buf->s, .len = buf->len,
					    .from = e->from, .until = e->until,
					    .sample_rate = e->rate };
		*id = e->id;
		return 1;
	}
	return 0;
}

void push_spool_remove(struct push_spool *s, u64 id)
{
	for (size_t i = 0; i < s->v.n; i++) {
		if (s->v.v[i].id != id)
			continue;
		char *path = path_of(s, &s->v.v[i]);
		unlink(path);
		free(path);
		memmove(s->v.v + i, s->v.v + i + 1, (s->v.n - i - 1) * sizeof(*s->v.v));
		s->v.n--;
		return;
	}
}
