/* be-libunwind.c - the libunwind backend: remote unwinding of a copied
 * user stack, with accessors that read the copy, the sample's registers
 * and the mapped files' .eh_frame_hdr search tables, and a file's own
 * .debug_frame where .eh_frame has no entry. */
#include "unwind/unwind-internal.h"

#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

/* Not in libunwind's public headers, but exported: searches a remote
 * .eh_frame_hdr table described by a unw_dyn_info_t. */
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)
extern int dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
				     unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* libunwind reads a .debug_frame (UNW_INFO_FORMAT_TABLE) from local
 * memory through this descriptor: its struct unw_debug_frame_list, the
 * one its own (here not exported) dwarf_find_debug_frame builds.  Not in
 * its public headers, so mirrored as 1.6 lays it out (checked against
 * the installed library's code; 1.6 added load_offset and counts the
 * index in bytes): a sorted table of (start address, FDE offset) over
 * the section's bytes.  tests/e2e/unwind-dwarf.sh fails if it drifts. */
struct lu_table_entry {
	int32_t start_ip_offset;
	int32_t fde_offset;
};
#define LU_DEBUG_FRAME_1_6 (UNW_VERSION >= UNW_VERSION_CODE(1, 6))
struct lu_debug_frame_list {
	unw_word_t start, end;
#if LU_DEBUG_FRAME_1_6
	unw_word_t load_offset;
#endif
	char *debug_frame;
	size_t debug_frame_size;
	struct lu_table_entry *index;
	size_t index_size;            /* bytes since 1.6, entries before */
	struct lu_debug_frame_list *next;
};
struct unw_debug_frame {
	struct lu_debug_frame_list list;
	VEC(struct lu_table_entry) entries;
};

void unw_lu_debug_free(struct unw_debug_frame *d)
{
	if (!d)
		return;
	VEC_FREE(&d->entries);
	free(d);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct lu_table_entry *x = a, *y = b;
	return (x->start_ip_offset > y->start_ip_offset) - (x->start_ip_offset < y->start_ip_offset);
}

/* The search table of the file's own .debug_frame: libdw walks its
 * entries; each FDE's address range starts with its first address. */
static struct unw_debug_frame *lu_debug_frame(struct unw_file *f)
{
	if (f->lu_debug_tried)
		return f->lu_debug;
	f->lu_debug_tried = true;
	Elf_Data *data = unw_file_section(f, ".debug_frame");
	const unsigned char *ident = (const unsigned char *)elf_getident(f->elf, NULL);
	if (!data || !ident)
		return NULL;
	struct unw_debug_frame *d = xcalloc(1, sizeof(*d));
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	while (dwarf_next_cfi(ident, data, false, off, &next, &e) == 0) {
		if (!dwarf_cfi_cie_p(&e) && e.fde.end - e.fde.start >= 16) {
			u64 start;
			memcpy(&start, e.fde.start, sizeof(start));
			if (start <= INT32_MAX && off <= INT32_MAX) {
				struct lu_table_entry t = { (int32_t)start, (int32_t)off };
				VEC_PUSH(&d->entries, t);
			}
		}
		off = next;
	}
	if (!d->entries.n) {
		unw_lu_debug_free(d);
		return NULL;
	}
	qsort(d->entries.v, d->entries.n, sizeof(*d->entries.v), entry_cmp);
	d->list.debug_frame = data->d_buf;
	d->list.debug_frame_size = data->d_size;
	d->list.index = d->entries.v;
#if LU_DEBUG_FRAME_1_6
	d->list.index_size = d->entries.n * sizeof(struct lu_table_entry);
#else
	d->list.index_size = d->entries.n;
#endif
	d->list.start = 0;
	d->list.end = ~(unw_word_t)0;
	f->lu_debug = d;
	return d;
}

/* ip's entry in the file's own .debug_frame (libunwind parses it from
 * our memory; bias places the file's addresses). */
static int lu_search_debug_frame(unw_addr_space_t as, unw_word_t ip, struct unw_file *f,
				 u64 bias, const struct unw_map *m, unw_proc_info_t *pi,
				 int need_unwind_info, void *arg)
{
	struct unw_debug_frame *d = lu_debug_frame(f);
	if (!d)
		return -UNW_ENOINFO;
	unw_dyn_info_t di = {
		.start_ip = m->start,
		.end_ip = m->end,
		.format = UNW_INFO_FORMAT_TABLE,
	};
	di.u.ti.segbase = bias;
	di.u.ti.table_len = sizeof(d->list) / sizeof(unw_word_t);
	di.u.ti.table_data = (unw_word_t *)&d->list;
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

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
	if (!f)
		return -UNW_ENOINFO;
	u64 bias = unw_file_bias(f, &m);
	w->cur = f;
	w->cur_bias = bias;
	int ret = -UNW_ENOINFO;
	if (f->fde_count) {
		unw_dyn_info_t di = {
			.start_ip = m.start,
			.end_ip = m.end,
			.format = UNW_INFO_FORMAT_REMOTE_TABLE,
		};
		di.u.rti.segbase = f->hdr_vaddr + bias;
		di.u.rti.table_data = f->table_vaddr + bias;
		/* Entries are two 4-byte words; the length is in unw_word_t units. */
		di.u.rti.table_len = f->fde_count * 8 / sizeof(unw_word_t);
		ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	}
	/* No .eh_frame entry: the file's own .debug_frame, as libdw looks. */
	if (ret == -UNW_ENOINFO)
		ret = lu_search_debug_frame(as, ip, f, bias, &m, pi, need_unwind_info, arg);
	return ret;
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
	int n = 0, step = 0;
	do {
		unw_word_t ip;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		pcs[n++] = ip;
	} while (n < max && (step = unw_step(&c)) > 0);
	w->failed = step < 0;      /* 0: the outermost frame was reached */
	return n;
}

/* libunwind's cache is of one space at a time, flushed when another
 * comes: a forgotten one's pointer, reused, must not look like it. */
static void lu_forget_space(void *state, const void *space)
{
	struct lu_state *st = state;
	if (st->space == space)
		st->space = st;          /* no caller's space: the next walk flushes */
}

const struct unw_backend_ops unw_libunwind_ops = {
	.open = lu_open,
	.close = lu_close,
	.walk = lu_walk,
	.forget_space = lu_forget_space,
};

