/* strings.c - the paths syscalls point at, as the tools read them.  The
 * recording's path probes (record/strings.c: ember_PID:path_di, path_si,
 * ..., uprobes at the syscall instructions of the C library and the
 * loader, or at the entry of the functions holding them) fetched the
 * string at the pointer the kernel was about to take.  A hit is kept for its thread until the sys_enter it announces:
 * the next sample of that thread, taken only when the syscall number and
 * the pointer are the same, so a string is never shown for a call it did
 * not come from.  A lost-records report forgets every kept hit (its sys_enter
 * might have been the lost one).  Without a hit the stack copy and the
 * files mapped serve (util.c), as for programs that make their syscalls
 * elsewhere (static, Go). */
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

/* One thread's last hit. */
struct kept {
	u64 ptr;
	bool full;                 /* a hit waits for its sys_enter */
	char s[TOOL_STR_MAX];
};

#define PROBE_EVENTS 6            /* path_di, path_si, path_dx, ... */

struct tool_strings {
	u64 id[PROBE_EVENTS];
	size_t n;
	struct tool_slots kept;    /* struct kept by thread */
};

struct tool_strings *tool_strings_new(const struct tool_env *env)
{
	struct tool_strings *x = xcalloc(1, sizeof(*x));
	tool_slots_init(&x->kept, sizeof(struct kept));
	/* The group is named after the recorder's pid: any ember_*. */
	x->n = tool_tp_ids(env, "ember_*:path_*", x->id, PROBE_EVENTS);
	return x;
}

void tool_strings_free(struct tool_strings *x)
{
	if (!x)
		return;
	tool_slots_free(&x->kept);
	free(x);
}

bool tool_strings_recorded(const struct tool_strings *x)
{
	return x && x->n;
}

/* The fetched string, whole: the kernel writes a faulted fetch (the page
 * not resident) as length 0, a string as its bytes and the NUL. */
static bool fetched(const struct tool_env *env, const struct rp_sample *s, char *out)
{
	size_t len;
	const char *src = tool_data_loc(s, tool_field(env, s, "path"), &len);
	if (!src || !len)
		return false;
	if (src[len - 1] != '\0' || strlen(src) != len - 1 || len > TOOL_STR_MAX)
		return false;
	memcpy(out, src, len);
	return true;
}

bool tool_strings_take(struct tool_strings *x, const struct tool_env *env,
		       const struct rp_sample *s)
{
	bool hit = false;
	for (size_t i = 0; x && i < x->n && !hit; i++)
		hit = tool_is_tp(s, x->id[i]);
	if (!hit)
		return false;
	struct kept *k = tool_slots_get(&x->kept, s->s->tid);
	k->ptr = tool_field(env, s, "ptr");
	k->full = fetched(env, s, k->s);
	return true;
}

void tool_strings_forget(struct tool_strings *x)
{
	for (size_t i = 0; x && i < x->kept.v.n; i++)
		((struct kept *)x->kept.v.v[i])->full = false;
}

const char *tool_strings_get(const struct tool_strings *x, const struct rp_sample *s, u64 addr)
{
	struct kept *k = x ? tool_slots_find(&x->kept, s->s->tid) : NULL;
	return k && k->full && k->ptr == addr ? k->s : NULL;
}

void tool_strings_done(struct tool_strings *x, const struct rp_sample *s)
{
	struct kept *k = x && x->kept.v.n ? tool_slots_find(&x->kept, s->s->tid) : NULL;
	if (k)
		k->full = false;
}

const char *tool_syscall_str(const struct tool_env *env, const struct rp_sample *s, u64 addr,
			     char *buf, size_t cap)
{
	const char *p = tool_strings_get(env->strings, s, addr);
	if (p) {
		snprintf(buf, cap, "%s", p);
		return buf;
	}
	return tool_user_str(s, addr, buf, cap);
}
