/* bidcache.c - the build-id cache in perf's layout, so that perf and ember
 * share it: ROOT/NAME/HEX/elf for a file (NAME its absolute path),
 * ROOT/[kernel.kallsyms]/HEX/kallsyms for a kernel, and a symbolic link
 * ROOT/.build-id/XX/REST -> ../../NAME/HEX for each.  ROOT is
 * $HOME/.debug.  record fills it, report looks in it, archive packs it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols-internal.h"

char *sym_cache_root(void)
{
	const char *home = getenv("HOME");
	if (!home || !*home) {
		err_set("HOME is not set (the build-id cache is $HOME/.debug)");
		return NULL;
	}
	return xasprintf("%s/.debug", home);
}

/* A name that stays inside the cache when joined to it: absolute, or the
 * kernel's bracketed name, and no ".." component. */
static bool name_is_safe(const char *name)
{
	if (name[0] != '/' && name[0] != '[')
		return false;
	for (const char *p = name; (p = strstr(p, "..")); p += 2)
		if ((p == name || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return false;
	return true;
}

char *sym_cache_entry(const char *name, const u8 *id, size_t n)
{
	if (!n || n > SYM_BUILD_ID_MAX || !name_is_safe(name))
		return NULL;
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	sym_build_id_hex(id, n, hex);
	return xasprintf("%s/%s", name[0] == '/' ? name + 1 : name, hex);
}

char *sym_cache_link(const u8 *id, size_t n)
{
	if (!n || n > SYM_BUILD_ID_MAX)
		return NULL;
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	sym_build_id_hex(id, n, hex);
	return xasprintf(".build-id/%.2s/%s", hex, hex + 2);
}

/* mkdir -p of the folder holding path, from the deepest one that is
 * missing (most of the cache's folders are there already). */
static int make_parent_dirs(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno == ENOENT && make_parent_dirs(dir) == 0)
			mkdir(dir, 0755);
		struct stat st;
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			err_set_errno("mkdir %s", dir);
			rc = -1;
		}
	}
	free(dir);
	return rc;
}

/* Copies fd's bytes into a new file at dst (through a temporary name, so
 * a reader never sees half a copy).  Returns the bytes copied or -1. */
static s64 copy_fd_to(int fd, const char *dst)
{
	char *tmp = xasprintf("%s.tmp%d", dst, (int)getpid());
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err_set_errno("%s", tmp);
		free(tmp);
		return -1;
	}
	s64 total = 0;
	char buf[1 << 16];
	bool ok = lseek(fd, 0, SEEK_SET) >= 0 || errno == ESPIPE;
	ssize_t got;
	while (ok && (got = read(fd, buf, sizeof(buf))) != 0) {
		ok = got > 0 && write_all(out, buf, (size_t)got) == 0;
		total += ok ? got : 0;
	}
	ok = close(out) == 0 && ok;
	if (ok && rename(tmp, dst) == 0) {
		free(tmp);
		return total;
	}
	err_set_errno("copying into %s", dst);
	unlink(tmp);
	free(tmp);
	return -1;
}

/* ROOT/.build-id/XX/REST -> ../../ENTRY, unless some link is there
 * (one failed symlink(2) when it is: the usual case). */
static int add_link(const char *root, const char *entry, const u8 *id, size_t n)
{
	char *rel = sym_cache_link(id, n);
	char *link = xasprintf("%s/%s", root, rel);
	char *target = xasprintf("../../%s", entry);
	int rc = symlink(target, link);
	if (rc < 0 && errno == ENOENT && make_parent_dirs(link) == 0)
		rc = symlink(target, link);
	if (rc < 0 && errno != EEXIST)
		err_set_errno("symlink %s", link);
	else
		rc = 0;
	free(rel);
	free(link);
	free(target);
	return rc;
}

int sym_cache_add(const char *root, const char *name, const u8 *id, size_t n,
		  const char *leaf, const char *src, int src_fd, u64 *copied)
{
	char *entry = sym_cache_entry(name, id, n);
	if (!entry) {
		err_set("%s: no build-id or a name the cache cannot hold", name);
		return -1;
	}
	char *dst = xasprintf("%s/%s/%s", root, entry, leaf);
	struct stat st;
	int rc = 0;
	if (stat(dst, &st) < 0) {
		rc = make_parent_dirs(dst);
		/* A hard link costs nothing (AT_SYMLINK_FOLLOW: a
		 * /proc/self/fd link gives the open file itself); across file
		 * systems, or for /proc's own files, a copy. */
		if (rc == 0 && (!src || linkat(AT_FDCWD, src, AT_FDCWD, dst,
					       AT_SYMLINK_FOLLOW) < 0)) {
			int fd = src_fd >= 0 ? src_fd : open(src, O_RDONLY | O_CLOEXEC);
			s64 got = fd >= 0 ? copy_fd_to(fd, dst) : -1;
			if (fd < 0)
				err_set_errno("%s", src);
			if (fd >= 0 && fd != src_fd)
				close(fd);
			rc = got < 0 ? -1 : 0;
			if (got > 0 && copied)
				*copied += (u64)got;
		}
	}
	if (rc == 0)
		rc = add_link(root, entry, id, n);
	free(dst);
	free(entry);
	return rc;
}

int sym_cache_add_kernel(const char *root, const u8 *id, size_t n)
{
	if (sym_cache_add(root, "[kernel.kallsyms]", id, n, "kallsyms", "/proc/kallsyms", -1,
			  NULL) < 0)
		return -1;
	/* Where the modules sat, beside it (ember reads it; perf ignores it). */
	if (access("/proc/modules", R_OK) == 0)
		sym_cache_add(root, "[kernel.kallsyms]", id, n, "modules", "/proc/modules", -1,
			      NULL);
	return 0;
}

char *sym_cache_find(const char *name, const u8 *id, size_t n, const char *leaf)
{
	char *root = sym_cache_root();
	char *entry = root ? sym_cache_entry(name, id, n) : NULL;
	char *link = root ? sym_cache_link(id, n) : NULL;
	char *found = NULL;
	/* The entry under its own name first; else whatever the build-id's
	 * link points at (the same file recorded under another path). */
	char *cand[2] = {
		entry ? xasprintf("%s/%s/%s", root, entry, leaf) : NULL,
		link ? xasprintf("%s/%s/%s", root, link, leaf) : NULL,
	};
	for (size_t i = 0; i < 2; i++) {
		if (!found && cand[i] && access(cand[i], R_OK) == 0)
			found = cand[i];
		else
			free(cand[i]);
	}
	free(root);
	free(entry);
	free(link);
	return found;
}
