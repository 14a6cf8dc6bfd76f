/* spool.c - profiles that could not be sent, kept in a directory until
 * the backend answers again: one file each, named by a sequence number
 * and the profile's times, at most max of them, the oldest dropped first.
 *
 * The directory may be in a place other users can reach, and the process
 * is often root: it must be the user's own and writable by no one else
 * (as ssh judges ~/.ssh), one process holds it at a time (a lock), every
 * entry is opened relative to it without following links, new ones under
 * a random name created exclusively, and only regular files of a bounded
 * size are read back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/push.h"

struct spooled {
	u64 id;                    /* sequence number: the order they came in */
	u64 from, until, rate;
	enum push_format format;
};

/* A spooled profile larger than this is no profile ember wrote. */
#define SPOOL_ENTRY_MAX (256u << 20)

struct push_spool {
	char *dir;
	int dirfd;                 /* open and locked while the spool is */
	size_t max;
	VEC(struct spooled) v;     /* oldest first */
	u64 next_id;
};

static const char *ext_of(enum push_format f)
{
	return f == PUSH_PPROF ? "pb.gz" : "folded";
}

/* An entry's name inside the directory. */
static char *name_of(const struct spooled *e)
{
	return xasprintf("%020llu-%llu-%llu-%llu.%s", (unsigned long long)e->id,
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
	int fd = dup(s->dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err_set_errno("spool directory %s", s->dir);
		if (fd >= 0)
			close(fd);
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
		char *name = name_of(&s->v.v[i]);
		unlinkat(s->dirfd, name, 0);
		free(name);
	}
	memmove(s->v.v, s->v.v + n, (s->v.n - n) * sizeof(*s->v.v));
	s->v.n -= n;
	if (dropped)
		*dropped += n;
}

/* The directory, made 0700 when absent (its parents too), opened without
 * following a link and judged: the user's own, writable by no one else. */
static int open_dir(const char *dir)
{
	if (mkdir_p(dir, 0700) < 0)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		err_set("spool directory %s is a symbolic link: give the directory itself", dir);
		return -1;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_set_errno("cannot open the spool directory %s", dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		err_set("spool directory %s is %s: give a directory of your own that only you "
			"can write (chmod 700)", dir,
			st.st_uid != geteuid() ? "another user's" : "writable by others");
		close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			err_set("spool directory %s is in use by another ember: give each its own",
				dir);
		else
			err_set_errno("cannot lock the spool directory %s", dir);
		close(fd);
		return -1;
	}
	return fd;
}

struct push_spool *push_spool_open(const char *dir, size_t max)
{
	if (!max) {
		err_set("--spool-max 0: give 1 or more profiles");
		return NULL;
	}
	int fd = open_dir(dir);
	if (fd < 0)
		return NULL;
	struct push_spool *s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(dir);
	s->dirfd = fd;
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
	if (s->dirfd >= 0)
		close(s->dirfd);   /* and the lock with it */
	free(s->dir);
	free(s);
}

size_t push_spool_count(const struct push_spool *s)
{
	return s->v.n;
}

/* A new file of the directory under a random name, created here (never
 * an existing name or a link planted there); its name into tmp. */
static int create_new(const struct push_spool *s, char tmp[32])
{
	for (int tries = 0; tries < 8; tries++) {
		u64 r;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (u64)now_ns() ^ ((u64)getpid() << 32);
		snprintf(tmp, 32, ".new-%016llx", (unsigned long long)r);
		int fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int push_spool_put(struct push_spool *s, const struct push_profile *p, u64 *dropped)
{
	struct spooled e = { s->next_id++, p->from, p->until, p->sample_rate, p->format };
	char tmp[32];
	int fd = create_new(s, tmp);
	int rc = fd < 0 || write_all(fd, p->data, p->len) < 0 ? -1 : 0;
	if (fd >= 0 && close(fd) < 0)
		rc = -1;
	char *name = name_of(&e);
	if (rc == 0 && renameat(s->dirfd, tmp, s->dirfd, name) < 0)
		rc = -1;
	if (rc < 0) {
		err_set_errno("cannot spool a profile in %s", s->dir);
		if (fd >= 0)
			unlinkat(s->dirfd, tmp, 0);
	} else {
		if (s->v.n >= s->max)
			drop_oldest(s, s->v.n - s->max + 1, dropped);
		VEC_PUSH(&s->v, e);
	}
	free(name);
	return rc;
}

/* An entry's bytes into buf: a regular file (not followed if a link) of
 * at most SPOOL_ENTRY_MAX bytes; -1 for anything else. */
static int read_entry(const struct push_spool *s, const struct spooled *e, struct strbuf *buf)
{
	char *name = name_of(e);
	int fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(name);
	struct stat st;
	int rc = -1;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (u64)st.st_size <= SPOOL_ENTRY_MAX) {
		sb_reset(buf);
		char chunk[65536];
		ssize_t n;
		while ((n = read(fd, chunk, sizeof(chunk))) > 0 && buf->len + (size_t)n <= SPOOL_ENTRY_MAX)
			sb_add(buf, chunk, (size_t)n);
		rc = n == 0 ? 0 : -1;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int push_spool_oldest(struct push_spool *s, struct push_profile *p, struct strbuf *buf,
		      u64 *id, u64 *dropped)
{
	while (s->v.n) {
		struct spooled *e = &s->v.v[0];
		if (read_entry(s, e, buf) < 0) {
			/* deleted, unreadable, or no file ember wrote */
			drop_oldest(s, 1, dropped);
			continue;
		}
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
		char *name = name_of(&s->v.v[i]);
		unlinkat(s->dirfd, name, 0);
		free(name);
		memmove(s->v.v + i, s->v.v + i + 1, (s->v.n - i - 1) * sizeof(*s->v.v));
		s->v.n--;
		return;
	}
}
