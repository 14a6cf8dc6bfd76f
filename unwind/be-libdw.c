/* be-libdw.c - the libdw backend: dwfl frame unwinding of a copied user
 * stack, with a memory callback over the copy.  One Dwfl per address
 * space (process and layout), its modules reported as unwinding meets
 * them, so each file's CFI loads once per process. */
#include "unwind/unwind-internal.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <unistd.h>

/* A process's Dwfl, valid while its maps keep one layout. */
struct ld_space {
	Dwfl *dwfl;
	u64 generation;
	bool attached;
	size_t at;                    /* in ld_state's all */
};

struct ld_state {
	struct unw_dwarf *u;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	struct u64map spaces;         /* space pointer -> struct ld_space * */
	VEC(struct ld_space *) all;
	struct unw_walk *cur;         /* the walk the callbacks serve */
};

/* The frames a walk collects. */
struct ld_frames {
	u64 *pcs;
	int n, max;
};

static pid_t ld_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct ld_state *st = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return (pid_t)st->cur->in->tid;
}

static bool ld_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool ld_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct ld_state *st = arg;
	u64 v;
	if (unw_read_word(st->cur, addr, &v) < 0)
		return false;
	*result = v;
	return true;
}

static bool ld_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct ld_state *st = arg;
	const struct unw_user *in = st->cur->in;
	for (int r = 0; r < UNW_DWARF_NREGS - 1; r++) {
		u64 v;
		Dwarf_Word word;
		if (unw_reg(in, r, &v) < 0)
			continue;     /* left undefined: rules needing it fail */
		word = v;
		if (!dwfl_thread_state_registers(thread, r, 1, &word))
			return false;
	}
	u64 ip;
	if (unw_reg(in, 16, &ip) < 0)
		return false;
	dwfl_thread_state_register_pc(thread, ip);
	return true;
}

static const Dwfl_Thread_Callbacks ld_thread_callbacks = {
	.next_thread = ld_next_thread,
	.get_thread = ld_get_thread,
	.memory_read = ld_memory_read,
	.set_initial_registers = ld_set_initial_registers,
};

/* No separate debug files: libdw would read one only for its
 * .debug_frame, after .eh_frame had no entry, and distributions' debug
 * files carry none, but opening one inflates all its DWARF (tens of ms
 * for libc's).  A file's own .debug_frame is still used, as the
 * libunwind backend and the fast path use it. */
static int ld_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static void *ld_open(struct unw_dwarf *u)
{
	struct ld_state *st = xcalloc(1, sizeof(*st));
	st->u = u;
	st->callbacks.find_elf = dwfl_build_id_find_elf;
	st->callbacks.find_debuginfo = ld_no_debuginfo;
	st->callbacks.debuginfo_path = &st->debuginfo_path;
	u64map_init(&st->spaces);
	return st;
}

static void ld_close(void *state)
{
	struct ld_state *st = state;
	for (size_t i = 0; i < st->all.n; i++) {
		if (st->all.v[i]->dwfl)
			dwfl_end(st->all.v[i]->dwfl);
		free(st->all.v[i]);
	}
	VEC_FREE(&st->all);
	u64map_free(&st->spaces);
	free(st);
}

/* The Dwfl of the walk's address space, new when its layout changed. */
static struct ld_space *ld_space_get(struct ld_state *st, const struct unw_user *in)
{
	bool created;
	u64 *slot = u64map_slot(&st->spaces, (u64)(uintptr_t)in->space, &created);
	if (created) {
		struct ld_space *sp = xcalloc(1, sizeof(*sp));
		sp->at = st->all.n;
		VEC_PUSH(&st->all, sp);
		*slot = (u64)(uintptr_t)sp;
	}
	struct ld_space *sp = (struct ld_space *)(uintptr_t)*slot;
	if (sp->dwfl && sp->generation != in->generation) {
		dwfl_end(sp->dwfl);
		sp->dwfl = NULL;
	}
	if (!sp->dwfl) {
		sp->dwfl = dwfl_begin(&st->callbacks);
		sp->generation = in->generation;
		sp->attached = false;
	}
	return sp->dwfl ? sp : NULL;
}

static void ld_forget_space(void *state, const void *space)
{
	struct ld_state *st = state;
	u64 *slot = u64map_get(&st->spaces, (u64)(uintptr_t)space);
	if (!slot)
		return;
	struct ld_space *sp = (struct ld_space *)(uintptr_t)*slot;
	u64map_del(&st->spaces, (u64)(uintptr_t)space);
	if (sp->dwfl)
		dwfl_end(sp->dwfl);      /* closes its modules' fds */
	struct ld_space *last = st->all.v[--st->all.n];
	st->all.v[sp->at] = last;
	last->at = sp->at;
	free(sp);
}

/* Reports the file mapped at addr to the Dwfl.  False when there is none. */
static bool ld_report(struct ld_state *st, struct ld_space *sp, u64 addr)
{
	const struct unw_user *in = st->cur->in;
	struct unw_map m;
	if (!in->find_map || in->find_map(in->find_ctx, addr, &m) < 0)
		return false;
	struct unw_file *f = unw_file_get(st->u, &m);
	if (!f)
		return false;
	int fd = dup(f->fd);       /* the module owns (closes) its fd */
	if (fd < 0)
		return false;
	dwfl_report_begin_add(sp->dwfl);
	Dwfl_Module *mod = dwfl_report_elf(sp->dwfl, m.path, m.path, fd,
					   unw_file_bias(f, &m), true);
	dwfl_report_end(sp->dwfl, NULL, NULL);
	if (!mod)
		close(fd);
	return mod != NULL && dwfl_addrmodule(sp->dwfl, addr) != NULL;
}

static int ld_frame(Dwfl_Frame *state, void *arg)
{
	struct ld_frames *fr = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	fr->pcs[fr->n++] = pc;
	return fr->n < fr->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Walks again after reporting a file the walk stopped in: modules are
 * reported as met, so a new file costs one more walk, once per process. */
#define LD_MAX_RETRIES 16

static int ld_walk(void *state, struct unw_walk *w, u64 *pcs, int max)
{
	struct ld_state *st = state;
	st->cur = w;
	struct ld_space *sp = ld_space_get(st, w->in);
	u64 ip;
	if (!sp || unw_reg(w->in, 16, &ip) < 0)
		return 0;
	if (!dwfl_addrmodule(sp->dwfl, ip) && !ld_report(st, sp, ip))
		return 0;
	if (!sp->attached) {
		if (!dwfl_attach_state(sp->dwfl, NULL, (pid_t)w->in->pid, &ld_thread_callbacks, st))
			return 0;
		sp->attached = true;
	}
	struct ld_frames fr = { pcs, 0, max };
	for (int tries = 0; tries < LD_MAX_RETRIES; tries++) {
		fr.n = 0;
		w->hit_end = false;
		/* -1: an error stopped the walk (0 the outermost frame, 1 our
		 * callback). */
		w->failed = dwfl_getthread_frames(sp->dwfl, (pid_t)w->in->tid, ld_frame, &fr) < 0;
		if (fr.n == 0 || fr.n >= max)
			break;
		u64 last = pcs[fr.n - 1] - (fr.n > 1);
		if (dwfl_addrmodule(sp->dwfl, last) || !ld_report(st, sp, last))
			break;
	}
	return fr.n;
}

const struct unw_backend_ops unw_libdw_ops = {
	.open = ld_open,
	.close = ld_close,
	.walk = ld_walk,
	.forget_space = ld_forget_space,
};
