/* cache.c - the build-id cache step at the end of a recording, as perf
 * record does it: what another machine (or this one, after a rebuild or
 * a reboot) needs to name the recording's frames goes into ~/.debug in
 * perf's layout: this kernel's kallsyms, and each file of the build-id
 * list (every executable file mapped, as ember lists them: which of them
 * samples hit is known only after reading the whole recording again,
 * which is the slow step perf spends its exit time on).  Files are hard
 * linked where the file system allows and copied only when absent; the
 * copies of one recording stop at COPY_BUDGET bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "record/record-internal.h"

#define COPY_BUDGET (1ULL << 30)

static void cache_kernel(struct rec_session *s, const char *root)
{
	u8 id[64];
	int n = sym_kernel_build_id(id, sizeof(id));
	if (n > 0 && sym_cache_add_kernel(root, id, (size_t)n) < 0)
		rec_note(s, "build-id cache: %s", err_msg());
}

static void cache_files(struct rec_session *s, const char *root)
{
	u64 copied = 0;
	size_t failed = 0, over = 0;
	char first_err[512] = "";
	for (size_t i = 0; i < s->bids.v.n; i++) {
		const struct rec_bid *e = &s->bids.v.v[i];
		if (!e->size)
			continue;
		if (copied >= COPY_BUDGET) {
			over++;
			continue;
		}
		char fdpath[64];
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", e->fd);
		if (sym_cache_add(root, e->filename, e->id, e->size, "elf",
				  e->fd >= 0 ? fdpath : e->filename, e->fd, &copied) < 0 &&
		    !failed++)
			snprintf(first_err, sizeof(first_err), "%s", err_msg());
	}
	if (failed)
		rec_note(s, "build-id cache: %zu files not cached (%s)", failed, first_err);
	if (over)
		rec_note(s, "build-id cache: %zu files not cached: this recording copied "
			 "%llu MiB already (the limit)", over,
			 (unsigned long long)(copied >> 20));
}

void rec_cache_fill(struct rec_session *s)
{
	if (s->no_cache)
		return;
	char *root = sym_cache_root();
	if (!root) {
		rec_note(s, "build-id cache: %s", err_msg());
		return;
	}
	if (s->kernel_mapped)
		cache_kernel(s, root);
	cache_files(s, root);
	free(root);
}
