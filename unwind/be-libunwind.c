/* be-libunwind.c - the libunwind backend: remote unwinding of a copied
 * user stack, with accessors that read the copy, the sample's registers
 * and the mapped files' .eh_frame_hdr search tables. */
#include "unwind/unwind-internal.h"

#include <libunwind.h>
#include <stdlib.h>

/* Not in libunwind's public headers, but exported: searches a remote
 * .eh_frame_hdr table described by a unw_dyn_info_t. */
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)
extern int dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
				     unw_proc_info_t *pi, int need_unwind_info, void *arg);

struct lu_state {
	unw_accessors_t accessors;    /* libunwind keeps a pointer to them */
	unw_addr_space_t as;
	const void *space;            /* the address space libunwind's cache holds */
	u64 generation;
};

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	struct unw_walk *w = arg;
	struct unw_map m;
	if (!w->in->find_map || w->in->find_map(w->in->find_ctx, ip, &m) < 0)
		return -UNW_ENOINFO;
	struct unw_file *f = unw_file_get(w->u, &m);
	if (!f || !f->fde_count)
		return -UNW_ENOINFO;
	u64 bias = unw_file_bias(f, &m);
	w->cur = f;
	w->cur_bias = bias;
	unw_dyn_info_t di = {
		.start_ip = m.start,
		.end_ip = m.end,
		.format = UNW_INFO_FORMAT_REMOTE_TABLE,
	};
	di.u.rti.segbase = f->hdr_vaddr + bias;
	di.u.rti.table_data = f->table_vaddr + bias;
	/* Entries are two 4-byte words; the length is in unw_word_t units. */
	di.u.rti.table_len = f->fde_count * 8 / sizeof(unw_word_t);
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int lu_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;   /* no JIT registration in an offline copy */
}

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
			 void *arg)
{
	u64 v;
	if (write || unw_read_word(arg, addr, &v) < 0)
		return -UNW_EINVAL;
	*valp = v;
	return 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t regnum, unw_word_t *valp,
			 int write, void *arg)
{
	struct unw_walk *w = arg;
	u64 v;
	if (write)
		return -UNW_EREADONLYREG;
	/* libunwind's x86_64 register numbers are the DWARF ones. */
	if (unw_reg(w->in, regnum, &v) < 0)
		return -UNW_EBADREG;
	*valp = v;
	return 0;
}

static int lu_access_fpreg(unw_addr_space_t as, unw_regnum_t regnum, unw_fpreg_t *val,
			   int write, void *arg)
{
	return -UNW_EINVAL;
}

static int lu_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int lu_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			    unw_word_t *offp, void *arg)
{
	return -UNW_EINVAL;    /* names come from symbols/ */
}

static const unw_accessors_t lu_accessors = {
	.find_proc_info = lu_find_proc_info,
	.put_unwind_info = lu_put_unwind_info,
	.get_dyn_info_list_addr = lu_get_dyn_info_list_addr,
	.access_mem = lu_access_mem,
	.access_reg = lu_access_reg,
	.access_fpreg = lu_access_fpreg,
	.resume = lu_resume,
	.get_proc_name = lu_get_proc_name,
};

static void *lu_open(struct unw_dwarf *u)
{
	struct lu_state *st = xcalloc(1, sizeof(*st));
	st->accessors = lu_accessors;
	st->as = unw_create_addr_space(&st->accessors, 0);
	if (!st->as) {
		err_set("libunwind: cannot create an address space");
		free(st);
		return NULL;
	}
	unw_set_caching_policy(st->as, UNW_CACHE_GLOBAL);
	return st;
}

static void lu_close(void *state)
{
	struct lu_state *st = state;
	unw_destroy_addr_space(st->as);
	free(st);
}

static int lu_walk(void *state, struct unw_walk *w, u64 *pcs, int max)
{
	struct lu_state *st = state;
	/* libunwind caches what it learnt per address: another process (or a
	 * changed layout) may have other code at the same addresses. */
	if (st->space != w->in->space || st->generation != w->in->generation) {
		unw_flush_cache(st->as, 0, 0);
		st->space = w->in->space;
		st->generation = w->in->generation;
	}
	unw_cursor_t c;
	if (unw_init_remote(&c, st->as, w) < 0)
		return 0;
	int n = 0;
	do {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		pcs[n++] = ip;
	} while (n < max && unw_step(&c) > 0);
	return n;
}

const struct unw_backend_ops unw_libunwind_ops = {
	.open = lu_open,
	.close = lu_close,
	.walk = lu_walk,
};
