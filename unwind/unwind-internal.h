/* unwind-internal.h - (private to unwind/) what the DWARF unwinder's files
 * share: the per-file cache of unwind tables, reads from the stack copy
 * and the mapped files, and the two backends' entry points. */
#ifndef EMBER_UNWIND_INTERNAL_H
#define EMBER_UNWIND_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>

#include "unwind/unwind.h"

/* A PT_LOAD segment: where file bytes appear in the ELF address space. */
struct unw_load {
	u64 vaddr, offset, filesz;
};

/* One ELF file, opened once: its bytes (mmap'd), its segments, where its
 * .eh_frame_hdr search table is, and libdw's CFI for it (made on use). */
struct unw_file {
	const void *key;
	int fd;
	const u8 *data;
	size_t size;
	Elf *elf;
	bool is_dyn;                  /* ET_DYN: placed by a load bias */
	VEC(struct unw_load) loads;
	u64 hdr_vaddr, table_vaddr;   /* .eh_frame_hdr and its table */
	u64 fde_count;                /* 0: no usable search table */
	Dwarf_CFI *cfi;               /* .eh_frame through libdw */
	bool cfi_tried;
	u32 index;                    /* in all_files: part of rule keys */
	Dwarf *own_dwarf;             /* the file's own .debug_frame ... */
	Dwarf_CFI *debug_cfi;         /* ... through libdw */
	bool debug_tried;
	struct unw_debug_frame *lu_debug;  /* the same, indexed for libunwind */
	bool lu_debug_tried;
};

/* The sample being unwound, as the backends' callbacks see it. */
struct unw_walk {
	struct unw_dwarf *u;
	const struct unw_user *in;
	u64 sp;                       /* the user sp: the copy starts here */
	bool hit_end;                 /* a read went past the end of the copy */
	bool failed;                  /* the backend stopped on an error, not
					 at the outermost frame */
	struct unw_file *cur;         /* the file being searched, tried first */
	u64 cur_bias;
};

#define UNW_MAX_PCS 512

/* A mapping the fast path met: where, and the file's bias.  f NULL:
 * code with no file (find_map's key NULL), walked by frame pointer. */
struct unw_fast_map {
	u64 start, end, bias;
	struct unw_file *f;
};
#define UNW_FAST_MAPS 16

struct unw_backend_ops {
	void *(*open)(struct unw_dwarf *u);
	void (*close)(void *state);
	/* Fills pcs (leaf first, raw: return addresses as found) and returns
	 * how many (0 when not even the first frame could be read). */
	int (*walk)(void *state, struct unw_walk *w, u64 *pcs, int max);
	/* Drops what the backend keeps for an address space. */
	void (*forget_space)(void *state, const void *space);
};
extern const struct unw_backend_ops unw_libunwind_ops;
extern const struct unw_backend_ops unw_libdw_ops;

/* The unwinder: one backend, the files it loaded, what it did. */
struct unw_dwarf {
	enum unw_backend backend;
	const struct unw_backend_ops *ops;
	void *state;
	const struct unw_backend_ops *other_ops;  /* the second opinion */
	void *other_state;            /* opened when first asked */
	struct u64map files;          /* file key -> index + 1 in all_files */
	VEC(struct unw_file *) all_files;   /* NULL: a forgotten file's index */
	VEC(u32) dead;                /* indexes forgotten, still in rules */
	VEC(u32) free_index;          /* indexes in no rule: taken first */
	struct unw_stats stats;
	u64 pcs[UNW_MAX_PCS];
	/* The fast path (fast.c): on unless EMBER_UNWIND_FAST=0. */
	bool fast;
	struct u64map rules;          /* file index << 48 | address -> rule */
	struct u64map ends;           /* pc -> 1 + whether a walk may end there */
	const void *fm_space;         /* the layout fm[] describes */
	u64 fm_generation;
	struct unw_fast_map fm[UNW_FAST_MAPS];
	int fm_n;
	unsigned fm_next;
};

/* perf's x86_64 register numbers (asm/perf_regs.h), used in the mask. */
enum {
	UNW_PERF_AX, UNW_PERF_BX, UNW_PERF_CX, UNW_PERF_DX, UNW_PERF_SI,
	UNW_PERF_DI, UNW_PERF_BP, UNW_PERF_SP, UNW_PERF_IP, UNW_PERF_FLAGS,
	UNW_PERF_R8 = 16,
};
#define UNW_DWARF_NREGS 17            /* DWARF x86_64: 0..15 GPRs, 16 = RIP */

/* The value of DWARF register dw (0..16) in the sample; -1 if absent. */
int unw_reg(const struct unw_user *in, int dw, u64 *val);

/* How far above sp an address still counts as the stack: a read there
 * beyond the copy means the copy was too small, not a bad address. */
#define UNW_STACK_REACH (8ull << 20)

/* Reads 8 bytes at addr of the sampled process: from the stack copy, or
 * from the file mapped there.  -1 when it is neither. */
int unw_read_word(struct unw_walk *w, u64 addr, u64 *val);

/* The file behind a mapping, loaded once per key; NULL when unusable or
 * when the mapping has no file (key NULL, never cached). */
struct unw_file *unw_file_get(struct unw_dwarf *u, const struct unw_map *m);
/* The load bias of a file placed by mapping m (0 for ET_EXEC). */
u64 unw_file_bias(const struct unw_file *f, const struct unw_map *m);
/* libdw's CFI for the file (its .eh_frame), or NULL. */
Dwarf_CFI *unw_file_cfi(struct unw_file *f);
/* The (uncompressed) contents of the file's section NAME, or NULL. */
Elf_Data *unw_file_section(struct unw_file *f, const char *name);
/* libdw's CFI for the file's own .debug_frame, or NULL when it has none. */
Dwarf_CFI *unw_file_debug_cfi(struct unw_file *f);

/* What libdw's rule for a register is, in the shapes the fast path and
 * the leaf repair run themselves (offsets in *off). */
enum unw_rule_kind {
	UNW_RULE_UNDEFINED,           /* no value: for the return address, the end */
	UNW_RULE_SAME,                /* unchanged from the callee */
	UNW_RULE_AT_CFA,              /* saved at CFA + off */
	UNW_RULE_VAL_CFA,             /* is CFA + off */
	UNW_RULE_OTHER,               /* anything else: registers, expressions */
};
enum unw_rule_kind unw_rule_reg(Dwarf_Frame *fr, int regno, s64 *off);
/* The CFA as register + offset; -1 when it is an expression. */
int unw_rule_cfa(Dwarf_Frame *fr, int *reg, s64 *off);

/* Frees what the libunwind backend built from a file's .debug_frame. */
void unw_lu_debug_free(struct unw_debug_frame *d);

/* The fast path's walk: fills pcs like a backend's walk and returns the
 * count, or -1 when the sample needs the backend. */
int unw_fast_walk(struct unw_dwarf *u, struct unw_walk *w, u64 *pcs, int max);

#endif
