/* dwarf.c - DWARF unwinding of user stack copies, the part both backends
 * share: the per-file cache of ELF files and unwind tables, reads from the
 * stack copy and the mapped files, and joining kernel and user frames.
 *
 * A long-running caller lets go of a file (unw_dwarf_forget: its ELF,
 * mmap, fd and CFI; its index in the fast path's rule keys is taken again
 * once a batch of 64 dead ones has been sifted out of the
 * rules, and the walk-end cache, keyed by address alone, starts afresh
 * then) and of an address space (unw_dwarf_forget_space: libdw's Dwfl and
 * its modules' fds; libunwind's cache is flushed for the next walk).
 * Callers' addresses are return addresses minus one, as perf gives them;
 * unw_dwarf_user_chain gives the same walk as a raw user callchain (the
 * ip, then return addresses as found, UNW_CUT_IP where the copy ended),
 * the form the recorder writes and callchain.c reads back. */
#include "unwind/unwind-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int unw_parse_backend(const char *name, enum unw_backend *b)
{
	if (!strcmp(name, "libunwind")) {
		*b = UNW_BACKEND_LIBUNWIND;
		return 0;
	}
	if (!strcmp(name, "libdw")) {
		*b = UNW_BACKEND_LIBDW;
		return 0;
	}
	err_set("unknown unwinder '%s' (use libunwind or libdw)", name);
	return -1;
}

const char *unw_backend_name(enum unw_backend b)
{
	return b == UNW_BACKEND_LIBUNWIND ? "libunwind" : "libdw";
}

struct unw_dwarf *unw_dwarf_new(enum unw_backend b)
{
	struct unw_dwarf *u = xcalloc(1, sizeof(*u));
	u->backend = b;
	u->ops = b == UNW_BACKEND_LIBUNWIND ? &unw_libunwind_ops : &unw_libdw_ops;
	u->other_ops = b == UNW_BACKEND_LIBUNWIND ? &unw_libdw_ops : &unw_libunwind_ops;
	u64map_init(&u->files);
	u64map_init(&u->rules);
	u64map_init(&u->ends);
	const char *fast = getenv("EMBER_UNWIND_FAST");
	u->fast = !fast || strcmp(fast, "0");
	elf_version(EV_CURRENT);
	u->state = u->ops->open(u);
	if (!u->state) {
		unw_dwarf_free(u);
		return NULL;
	}
	return u;
}

static void file_free(struct unw_file *f)
{
	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	if (f->own_dwarf)
		dwarf_end(f->own_dwarf);     /* ends its debug_cfi too */
	unw_lu_debug_free(f->lu_debug);
	if (f->elf)
		elf_end(f->elf);
	if (f->data)
		munmap((void *)f->data, f->size);
	if (f->fd >= 0)
		close(f->fd);
	VEC_FREE(&f->loads);
	free(f);
}

void unw_dwarf_free(struct unw_dwarf *u)
{
	if (!u)
		return;
	if (u->state)
		u->ops->close(u->state);
	if (u->other_state)
		u->other_ops->close(u->other_state);
	for (size_t i = 0; i < u->all_files.n; i++)
		if (u->all_files.v[i])
			file_free(u->all_files.v[i]);
	VEC_FREE(&u->all_files);
	VEC_FREE(&u->dead);
	VEC_FREE(&u->free_index);
	u64map_free(&u->files);
	u64map_free(&u->rules);
	u64map_free(&u->ends);
	free(u);
}

const struct unw_stats *unw_dwarf_stats(const struct unw_dwarf *u)
{
	return &u->stats;
}

/* ---- registers ----------------------------------------------------------- */

/* DWARF x86_64 numbering (rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip) to
 * perf's. */
static const u8 dwarf_to_perf[UNW_DWARF_NREGS] = {
	UNW_PERF_AX, UNW_PERF_DX, UNW_PERF_CX, UNW_PERF_BX, UNW_PERF_SI,
	UNW_PERF_DI, UNW_PERF_BP, UNW_PERF_SP,
	UNW_PERF_R8, UNW_PERF_R8 + 1, UNW_PERF_R8 + 2, UNW_PERF_R8 + 3,
	UNW_PERF_R8 + 4, UNW_PERF_R8 + 5, UNW_PERF_R8 + 6, UNW_PERF_R8 + 7,
	UNW_PERF_IP,
};

int unw_reg(const struct unw_user *in, int dw, u64 *val)
{
	if (!in->regs || dw < 0 || dw >= UNW_DWARF_NREGS)
		return -1;
	int bit = dwarf_to_perf[dw];
	if (!(in->regs_mask & (1ULL << bit)))
		return -1;
	/* The regs come in mask bit order: count the set bits below ours. */
	int idx = __builtin_popcountll(in->regs_mask & ((1ULL << bit) - 1));
	*val = in->regs[idx];
	return 0;
}

/* ---- files --------------------------------------------------------------- */

/* .eh_frame_hdr's search table, in the layout every GNU toolchain writes
 * (version 1; pc-relative sdata4 eh_frame pointer; udata4 count;
 * datarel sdata4 entries).  libunwind's remote search wants the table's
 * address and length, which are in this fixed 12-byte header. */
#define EH_HDR_SIZE 12
static void find_search_table(struct unw_file *f, const GElf_Phdr *ph)
{
	if (ph->p_offset + EH_HDR_SIZE > f->size)
		return;
	const u8 *h = f->data + ph->p_offset;
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return;
	u32 count;
	memcpy(&count, h + 8, sizeof(count));
	f->hdr_vaddr = ph->p_vaddr;
	f->table_vaddr = ph->p_vaddr + EH_HDR_SIZE;
	f->fde_count = count;
}

static int file_read_layout(struct unw_file *f)
{
	GElf_Ehdr eh;
	size_t nph;
	if (!gelf_getehdr(f->elf, &eh) || elf_getphdrnum(f->elf, &nph) < 0)
		return -1;
	f->is_dyn = eh.e_type == ET_DYN;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(f->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz <= f->size) {
			struct unw_load l = { ph.p_vaddr, ph.p_offset, ph.p_filesz };
			VEC_PUSH(&f->loads, l);
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			find_search_table(f, &ph);
		}
	}
	return f->loads.n ? 0 : -1;
}

/* The vdso is the same for every process of a kernel, and has no file:
 * ours, copied into a memory file, stands in for the recorded one (the
 * caller checked the build-ids). */
static int own_vdso_fd(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR), lo = 0, hi = 0;
	FILE *maps = base ? fopen("/proc/self/maps", "re") : NULL;
	char line[512];
	while (maps && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base)
			break;
	if (maps)
		fclose(maps);
	if (!base || lo != base || hi <= lo)
		return -1;
	int fd = memfd_create("ember-vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, (const void *)lo, hi - lo) != (ssize_t)(hi - lo)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static struct unw_file *file_load(const struct unw_map *m)
{
	struct unw_file *f = xcalloc(1, sizeof(*f));
	f->key = m->key;
	f->fd = !strcmp(m->path, "[vdso]") ? own_vdso_fd() : open(m->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (f->fd < 0 || fstat(f->fd, &st) < 0 || st.st_size < 64)
		return f;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (p == MAP_FAILED)
		return f;
	f->data = p;
	f->size = (size_t)st.st_size;
	f->elf = elf_memory((char *)p, f->size);
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF && file_read_layout(f) == 0)
		return f;
	if (f->elf)
		elf_end(f->elf);
	f->elf = NULL;
	return f;
}

struct unw_file *unw_file_get(struct unw_dwarf *u, const struct unw_map *m)
{
	if (!m->key)
		return NULL;       /* code with no file: nothing to load or cache */
	bool created;
	u64 *slot = u64map_slot(&u->files, (u64)(uintptr_t)m->key, &created);
	if (created) {
		struct unw_file *f = file_load(m);
		if (u->free_index.n) {
			f->index = u->free_index.v[--u->free_index.n];
			u->all_files.v[f->index] = f;
		} else {
			f->index = (u32)u->all_files.n;
			VEC_PUSH(&u->all_files, f);
		}
		*slot = (u64)f->index + 1;
		if (f->elf)
			u->stats.files++;
	}
	struct unw_file *f = u->all_files.v[*slot - 1];
	return f->elf ? f : NULL;
}

/* Forgotten files' indexes are in the fast path's rule keys: the rules
 * are sifted once a batch of them is dead (a pass over all the rules per
 * file would cost more than the files' unwinding), and the indexes taken
 * again after.  The walk ends, keyed by address alone, were learnt in
 * processes now gone: they start afresh. */
#define UNW_DEAD_BATCH 64

static void sift_rules(struct unw_dwarf *u)
{
	struct u64map kept;
	u64map_init(&kept);
	size_t pos = 0;
	u64 key, rule;
	while (u64map_next(&u->rules, &pos, &key, &rule))
		if ((key >> 48) < u->all_files.n && u->all_files.v[key >> 48])
			*u64map_slot(&kept, key, NULL) = rule;
	u64map_free(&u->rules);
	u->rules = kept;
	u64map_free(&u->ends);
	u64map_init(&u->ends);
	for (size_t i = 0; i < u->dead.n; i++)
		VEC_PUSH(&u->free_index, u->dead.v[i]);
	u->dead.n = 0;
}

void unw_dwarf_forget(struct unw_dwarf *u, const void *key)
{
	u64 *slot = key ? u64map_get(&u->files, (u64)(uintptr_t)key) : NULL;
	if (!slot)
		return;
	u32 index = (u32)(*slot - 1);
	u64map_del(&u->files, (u64)(uintptr_t)key);
	file_free(u->all_files.v[index]);
	u->all_files.v[index] = NULL;
	VEC_PUSH(&u->dead, index);
	u->stats.forgotten++;
	u->fm_space = NULL;      /* the fast path's maps may hold the file */
	u->fm_n = 0;
	if (u->dead.n >= UNW_DEAD_BATCH)
		sift_rules(u);
}

void unw_dwarf_forget_space(struct unw_dwarf *u, const void *space)
{
	u->ops->forget_space(u->state, space);
	if (u->other_state)
		u->other_ops->forget_space(u->other_state, space);
	if (u->fm_space == space) {
		u->fm_space = NULL;
		u->fm_n = 0;
	}
}

/* The segment holding file offset off (mappings start page-aligned). */
static const struct unw_load *load_at_offset(const struct unw_file *f, u64 off)
{
	for (size_t i = 0; i < f->loads.n; i++) {
		const struct unw_load *l = &f->loads.v[i];
		if ((l->offset & ~0xfffULL) <= off && off < l->offset + l->filesz)
			return l;
	}
	return f->loads.n ? &f->loads.v[0] : NULL;
}

u64 unw_file_bias(const struct unw_file *f, const struct unw_map *m)
{
	if (!f->is_dyn)
		return 0;
	const struct unw_load *l = load_at_offset(f, m->pgoff);
	return m->start + l->offset - l->vaddr - m->pgoff;
}

Dwarf_CFI *unw_file_cfi(struct unw_file *f)
{
	if (!f->cfi_tried) {
		f->cfi_tried = true;
		f->cfi = dwarf_getcfi_elf(f->elf);
	}
	return f->cfi;
}

/* The file's section of that name, with contents in the file. */
static Elf_Scn *find_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (n && !strcmp(n, name) && sh.sh_type != SHT_NOBITS)
			return scn;
	}
	return NULL;
}

Elf_Data *unw_file_section(struct unw_file *f, const char *name)
{
	Elf_Scn *scn = find_section(f->elf, name);
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh))
		return NULL;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	Elf_Data *d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

Dwarf_CFI *unw_file_debug_cfi(struct unw_file *f)
{
	if (!f->debug_tried) {
		f->debug_tried = true;
		/* Only a file that has one: libdw would read all its DWARF. */
		if (find_section(f->elf, ".debug_frame"))
			f->own_dwarf = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
		if (f->own_dwarf)
			f->debug_cfi = dwarf_getcfi(f->own_dwarf);
	}
	return f->debug_cfi;
}

/* 8 bytes at ELF address vaddr of the file, when the file holds them. */
static int file_read(const struct unw_file *f, u64 vaddr, u64 *val)
{
	for (size_t i = 0; i < f->loads.n; i++) {
		const struct unw_load *l = &f->loads.v[i];
		if (vaddr >= l->vaddr && vaddr + 8 <= l->vaddr + l->filesz) {
			memcpy(val, f->data + l->offset + (vaddr - l->vaddr), 8);
			return 0;
		}
	}
	return -1;
}

/* ---- memory -------------------------------------------------------------- */

int unw_read_word(struct unw_walk *w, u64 addr, u64 *val)
{
	const struct unw_user *in = w->in;
	u64 off = addr - w->sp;
	if (addr >= w->sp && off + 8 <= in->stack_size && off < in->stack_size) {
		memcpy(val, in->stack + off, 8);
		return 0;
	}
	if (w->cur && file_read(w->cur, addr - w->cur_bias, val) == 0)
		return 0;
	struct unw_map m;
	if (in->find_map && in->find_map(in->find_ctx, addr, &m) == 0) {
		struct unw_file *f = unw_file_get(w->u, &m);
		if (f && file_read(f, addr - unw_file_bias(f, &m), val) == 0)
			return 0;
	}
	if (addr >= w->sp && off < UNW_STACK_REACH)
		w->hit_end = true;
	return -1;
}

/* ---- walking ------------------------------------------------------------- */

/* Whether a walk may end at pc: its CFI leaves the return address
 * undefined (_start, clone3, thread starts), or it has no CFI, so no
 * unwinder could go on.  Asked once per pc (walks end at a few). */
static bool outermost(struct unw_dwarf *u, struct unw_walk *w, u64 pc)
{
	bool created;
	u64 *slot = u64map_slot(&u->ends, pc, &created);
	if (!created)
		return *slot == 2;
	bool end = true;
	struct unw_map m;
	struct unw_file *f = NULL;
	if (w->in->find_map && w->in->find_map(w->in->find_ctx, pc, &m) == 0)
		f = unw_file_get(u, &m);
	Dwarf_CFI *cfi = f ? unw_file_cfi(f) : NULL;
	Dwarf_Frame *fr;
	if (cfi && dwarf_cfi_addrframe(cfi, pc - unw_file_bias(f, &m), &fr) == 0) {
		s64 off;
		end = unw_rule_reg(fr, 16, &off) == UNW_RULE_UNDEFINED;
		free(fr);
	}
	*slot = end ? 2 : 1;
	return end;
}

/* The chosen backend stopped inside the copy where a walk cannot end: on
 * an error, or, as libdw does at ld.so's lazy-binding trampoline (whose
 * CFA is defined by a register it loses), as if at the outermost frame.
 * The other backend walks the same copy, and its frames are taken when it
 * goes further.  Rare, so its state opens on first use.  Returns the
 * frame count in u->pcs. */
static int second_opinion(struct unw_dwarf *u, struct unw_walk *w, int n, int max)
{
	u->stats.asked++;
	if (!u->other_state)
		u->other_state = u->other_ops->open(u);
	if (!u->other_state)
		return n;
	struct unw_walk w2 = { .u = u, .in = w->in, .sp = w->sp };
	u64 pcs[UNW_MAX_PCS];
	int n2 = u->other_ops->walk(u->other_state, &w2, pcs, max);
	if (n2 <= n)
		return n;
	memcpy(u->pcs, pcs, (size_t)n2 * sizeof(*pcs));
	w->hit_end = w2.hit_end;
	u->stats.second++;
	return n2;
}

/* The walk both front ends share: the sample's user stack into u->pcs
 * (leaf first, raw return addresses), at most max (already within
 * UNW_MAX_PCS).  Returns the count, 0 without an sp and an ip register;
 * *cut says the copy ended first and there is room for a marker after. */
static int user_walk(struct unw_dwarf *u, const struct unw_user *in, int max, bool *cut)
{
	struct unw_walk w = { .u = u, .in = in };
	u64 ip;
	*cut = false;
	if (max < 1 || unw_reg(in, 7, &w.sp) < 0 || unw_reg(in, 16, &ip) < 0)
		return 0;
	int n = u->fast ? unw_fast_walk(u, &w, u->pcs, max) : -1;
	if (n > 0) {
		u->stats.fast++;
	} else {
		/* The backend starts afresh: nothing the fast path saw counts. */
		w.hit_end = false;
		n = u->ops->walk(u->state, &w, u->pcs, max);
		if (!w.hit_end && n > 0 && n < max &&
		    (w.failed || !outermost(u, &w, u->pcs[n - 1] - (n > 1))))
			n = second_opinion(u, &w, n, max);
	}
	if (n < 1) {
		u->pcs[0] = ip;     /* the sampled ip at least */
		n = 1;
	}
	u->stats.samples++;
	u->stats.frames += (u64)n;
	*cut = w.hit_end && n < max;
	u->stats.cut += *cut;
	return n;
}

int unw_dwarf_user(struct unw_dwarf *u, const struct unw_user *in, struct unw_frame *out,
		   int max)
{
	bool cut;
	int n = user_walk(u, in, MIN(max, UNW_MAX_PCS), &cut);
	for (int i = 0; i < n; i++) {
		/* A caller's pc is a return address: one less names the call. */
		out[i].ip = i ? u->pcs[i] - 1 : u->pcs[i];
		out[i].kernel = false;
		out[i].cut = false;
	}
	if (cut) {
		out[n].ip = 0;
		out[n].kernel = false;
		out[n].cut = true;
		n++;
	}
	return n;
}

int unw_dwarf_user_chain(struct unw_dwarf *u, const struct unw_user *in, u64 *out, int max)
{
	bool cut;
	int n = user_walk(u, in, MIN(max, UNW_MAX_PCS), &cut);
	if (n == 0)     /* no sp: the ip alone, as the kernel's walk gives it */
		return max >= 1 && unw_reg(in, 16, &out[0]) == 0 ? 1 : 0;
	memcpy(out, u->pcs, (size_t)n * sizeof(*out));
	if (cut)
		out[n++] = UNW_CUT_IP;
	return n;
}

int unw_dwarf_sample_frames(struct unw_dwarf *u, const struct pd_sample *s, u16 misc,
			    const struct unw_user *in, struct unw_frame *out, int max,
			    bool *dropped)
{
	int n = unw_sample_frames(s, misc, out, max, dropped);
	if (!in->regs || (dropped && *dropped))
		return n;
	int k = 0;
	while (k < n && out[k].kernel)
		k++;
	int user = unw_dwarf_user(u, in, out + k, max - k);
	return user > 0 ? k + user : n;
}
