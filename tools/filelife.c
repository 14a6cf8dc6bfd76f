/* filelife.c - files created and deleted while tracing, with their age
 * (BCC's filelife): TIME(s) PID COMM AGE(s) FILE, one line at each
 * delete of a file seen born.  BCC watches the VFS's create and unlink;
 * without kprobes this works at the syscall level: a file is born at
 * the first successful open with O_CREAT (or creat) of its path, and
 * dies at a successful unlink or unlinkat of the same path.  An open
 * with O_CREAT of a file that already existed counts as its birth (the
 * syscall cannot tell); renames, links and other processes' relative
 * paths are not followed.  The paths are the path probes' (strings.c). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tools.h"

enum { FL_CREAT, FL_OPEN, FL_OPENAT, FL_OPENAT2, FL_UNLINK, FL_UNLINKAT, FL_N };
static const char *const enter_names[FL_N] = {
	"syscalls:sys_enter_creat", "syscalls:sys_enter_open", "syscalls:sys_enter_openat",
	"syscalls:sys_enter_openat2", "syscalls:sys_enter_unlink", "syscalls:sys_enter_unlinkat",
};
static const char *const exit_names[FL_N] = {
	"syscalls:sys_exit_creat", "syscalls:sys_exit_open", "syscalls:sys_exit_openat",
	"syscalls:sys_exit_openat2", "syscalls:sys_exit_unlink", "syscalls:sys_exit_unlinkat",
};

/* A file seen born: its key (the path, "PID:path" when relative). */
struct born {
	char key[TOOL_STR_MAX + 16];
	u64 time;
};

/* A thread's call under way: what it would create or delete. */
struct call {
	int kind;                  /* FL_*, -1 when none or not of interest */
	char key[TOOL_STR_MAX + 16];
};

struct filelife {
	struct tool_opts o;
	const struct tool_env *env;
	u64 enter_id[FL_N], exit_id[FL_N];
	bool have_enter[FL_N], have_exit[FL_N];
	struct tool_slots calls;   /* struct call by thread */
	struct u64map files;       /* hash of key -> index + 1 into born_v */
	VEC(struct born) born_v;
	VEC(size_t) free_born;     /* slots of born_v to reuse */
	u64 first_time;
	bool header;
	u64 unread;
};

static int start(void *ctx, const struct tool_env *env)
{
	struct filelife *x = ctx;
	x->env = env;
	for (int i = 0; i < FL_N; i++) {
		x->have_enter[i] = tool_tp_id(env, enter_names[i], &x->enter_id[i]);
		x->have_exit[i] = tool_tp_id(env, exit_names[i], &x->exit_id[i]);
	}
	if (!x->have_exit[FL_UNLINK] && !x->have_exit[FL_UNLINKAT])
		return tool_missing("filelife", "syscalls:sys_exit_unlink* events");
	return 0;
}

static u64 hash_key(const char *s)
{
	u64 h = 14695981039346656037ULL;   /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (u8)*s) * 1099511628211ULL;
	return h;
}

/* Whether the open creates: O_CREAT in its flags (openat2's are the
 * first field of its struct open_how, read from the stack copy). */
static bool creates(struct filelife *x, int kind, const struct rp_sample *s)
{
	u64 flags = 0;
	if (kind == FL_CREAT)
		return true;
	if (kind == FL_OPENAT2)
		return tool_user_u64(s, tool_field(x->env, s, "how"), &flags) && (flags & O_CREAT);
	return tool_field(x->env, s, "flags") & O_CREAT;
}

static void on_enter(struct filelife *x, int kind, const struct rp_sample *s)
{
	struct call *c = tool_slots_get(&x->calls, s->s->tid);
	char path[TOOL_STR_MAX];
	c->kind = -1;
	if (kind < FL_UNLINK ? !creates(x, kind, s)
	    : kind == FL_UNLINKAT && (tool_field(x->env, s, "flag") & AT_REMOVEDIR))
		return;
	if (!tool_syscall_str(x->env, s, tool_path_arg(x->env, s), path, sizeof(path))) {
		x->unread++;
		return;
	}
	c->kind = kind;
	if (path[0] == '/')
		snprintf(c->key, sizeof(c->key), "%s", path);
	else
		snprintf(c->key, sizeof(c->key), "%u:%s", s->s->pid, path);
}

/* key's slot in born_v, or NULL. */
static struct born *find_born(struct filelife *x, const char *key, u64 *hash)
{
	*hash = hash_key(key);
	u64 *slot = u64map_get(&x->files, *hash);
	struct born *b = slot ? &x->born_v.v[*slot - 1] : NULL;
	return b && !strcmp(b->key, key) ? b : NULL;
}

static void born(struct filelife *x, const struct call *c, u64 time)
{
	u64 h;
	if (find_born(x, c->key, &h) || u64map_get(&x->files, h))
		return;            /* born before (or a hash twin: left out) */
	size_t i;
	if (x->free_born.n)
		i = x->free_born.v[--x->free_born.n];
	else {
		VEC_PUSH(&x->born_v, (struct born){0});
		i = x->born_v.n - 1;
	}
	snprintf(x->born_v.v[i].key, sizeof(x->born_v.v[i].key), "%s", c->key);
	x->born_v.v[i].time = time;
	bool created;
	*u64map_slot(&x->files, h, &created) = i + 1;
}

static void died(struct filelife *x, const struct call *c, const struct rp_sample *s)
{
	u64 h;
	struct born *b = find_born(x, c->key, &h);
	if (!b)
		return;
	FILE *out = x->env->out;
	if (!x->header) {
		fprintf(out, "%-14s %-6s %-16s %-8s %s\n", "TIME(s)", "PID", "COMM", "AGE(s)", "FILE");
		x->header = true;
	}
	const char *path = c->key[0] == '/' ? c->key : strchr(c->key, ':') + 1;
	fprintf(out, "%-14.9f %-6u %-16s %-8.2f %s\n", (double)(s->s->time - x->first_time) / 1e9,
		s->s->pid, s->thread ? s->thread->comm : "?", (double)(s->s->time - b->time) / 1e9,
		path);
	VEC_PUSH(&x->free_born, (size_t)(b - x->born_v.v));
	u64map_del(&x->files, h);
}

static void on_exit_(struct filelife *x, const struct rp_sample *s)
{
	struct call *c = tool_slots_find(&x->calls, s->s->tid);
	if (!c || c->kind < 0 || (s64)tool_field(x->env, s, "ret") < 0)
		return;
	if (c->kind < FL_UNLINK)
		born(x, c, s->s->time);
	else
		died(x, c, s);
	c->kind = -1;
}

static int sample(void *ctx, const struct rp_sample *s)
{
	struct filelife *x = ctx;
	if (!x->first_time)
		x->first_time = s->s->time;
	for (int i = 0; i < FL_N; i++) {
		if (x->have_enter[i] && tool_is_tp(s, x->enter_id[i]))
			on_enter(x, i, s);
		else if (x->have_exit[i] && tool_is_tp(s, x->exit_id[i]))
			on_exit_(x, s);
		else
			continue;
		break;
	}
	return 0;
}

static int finish(void *ctx)
{
	struct filelife *x = ctx;
	if (x->unread)
		tool_note(x->env, "%llu creates or deletes had a path found nowhere (the "
			  "heap of a program the path probes do not see): not followed",
			  (unsigned long long)x->unread);
	return 0;
}

static void filelife_free(void *ctx)
{
	struct filelife *x = ctx;
	tool_slots_free(&x->calls);
	VEC_FREE(&x->born_v);
	VEC_FREE(&x->free_born);
	u64map_free(&x->files);
	free(x);
}

struct tool *filelife_new(const struct tool_opts *o)
{
	struct filelife *x = xcalloc(1, sizeof(*x));
	x->o = *o;
	tool_slots_init(&x->calls, sizeof(struct call));
	u64map_init(&x->files);
	struct tool *t = xcalloc(1, sizeof(*t));
	*t = (struct tool){ .name = "filelife", .ctx = x, .start = start,
			    .sink = { .ctx = x, .sample = sample, .finish = finish },
			    .free = filelife_free };
	return t;
}
