/* symbols-internal.h - what the files of symbols/ share: the dso and
 * context structs, the symbol-table builder, and each loader's entry
 * point.  Nothing outside symbols/ includes this. */
#ifndef EMBER_SYMBOLS_INTERNAL_H
#define EMBER_SYMBOLS_INTERNAL_H

#include <gelf.h>
#include <pthread.h>

#include "symbols/symbols.h"

#define SYM_BUILD_ID_MAX 64

/* ---- Symbol tables (symtab.c) ------------------------------------------ */

/* A symbol while its table is built.  Names are pool offsets because the
 * pool moves as it grows; binding decides between aliases like perf does;
 * secondary entries (.dynsym beside a .symtab) only fill gaps. */
struct symtab_entry {
	u64 start, size;
	u32 name;
	u32 seq;             /* order of arrival: ties keep it */
	u8 bind;
	bool secondary;
	bool mangled;        /* name as the file has it; demangled when needed */
};

struct symtab_builder {
	VEC(struct symtab_entry) ents;
	struct strbuf pool;
	bool demangle;
	/* kallsyms: of several unsized symbols at one address the last one
	 * listed wins (perf sizes them before it picks, and only the last
	 * gets a size). */
	bool last_unsized_wins;
};

/* A finished table: sorted by start, one symbol per start, sizes > 0.
 * Names are demangled on the first lookup that finds them: a C++ library
 * has a hundred thousand symbols, of which a profile names a few. */
struct symtab {
	struct sym *syms;
	size_t n;
	char *pool;
	size_t last;    /* index of the last hit: samples cluster */
	u64 *mangled;   /* bit i: syms[i].name still waits for demangling */
	VEC(char *) demangled;   /* the names demangled since */
	struct symtab_hit *hits; /* big tables: recent answers by address */
	size_t nhits;            /* a power of two, 0 = none yet */
};

/* An address looked up before and its answer (an index into syms, or
 * SYMTAB_NO_SYM): a profile asks for the same addresses again and again,
 * from every process that maps the file. */
#define SYMTAB_NO_SYM UINT32_MAX
struct symtab_hit {
	u64 addr;
	u32 sym;
	bool used;
};

void stb_init(struct symtab_builder *b, bool demangle);
void stb_add(struct symtab_builder *b, u64 start, u64 size, const char *name,
	     u8 bind, bool secondary);
/* The same with the name taken as it is (already demangled or final). */
void stb_add_plain(struct symtab_builder *b, u64 start, u64 size, const char *name,
		   u8 bind, bool secondary);
/* Moves the builder's symbols into t (sorted, aliases resolved, zero
 * sizes extended to the next symbol) and empties the builder. */
void stb_finish(struct symtab_builder *b, struct symtab *t);
void stb_free(struct symtab_builder *b);
void symtab_free(struct symtab *t);
const struct sym *symtab_find(struct symtab *t, u64 addr);

/* ---- Demangling (demangle.c) ------------------------------------------- */

/* A malloc'ed demangled name (no parameters, as perf report shows), or
 * NULL when name is not mangled C++/Rust or no demangler was built in. */
char *sym_demangle_name(const char *name);

/* ---- ELF files (elf.c) ------------------------------------------------- */

struct elf_load {
	u64 offset, vaddr, filesz, memsz, align;
};

struct elf_file {
	int fd;
	Elf *elf;
	void *image;   /* owned copy when opened from memory */
};

int elf_file_open(struct elf_file *f, const char *path);
int elf_file_open_memory(struct elf_file *f, const void *image, size_t size);
void elf_file_close(struct elf_file *f);
/* The GNU build-id note's size (<= cap) or -1 when there is none. */
int elf_file_build_id(Elf *e, u8 *id, size_t cap);
bool elf_file_has_section(Elf *e, Elf64_Word type);
/* Adds the function, object and text-label symbols of the first section
 * of this type (SHT_SYMTAB or SHT_DYNSYM).  Returns how many. */
size_t elf_file_add_symbols(Elf *e, Elf64_Word type, bool secondary,
			    struct symtab_builder *b);
/* Adds NAME@plt symbols for the PLT stubs (.plt.sec or .plt). */
size_t elf_file_add_plt(Elf *e, struct symtab_builder *b);
/* The PT_LOAD segments, malloc'ed; count or -1. */
int elf_file_loads(Elf *e, struct elf_load **loads);
/* The .gnu_debuglink file name, malloc'ed, or NULL. */
char *elf_file_debuglink(Elf *e);

/* ---- Dsos ---------------------------------------------------------------- */

enum dso_kind { DSO_FILE, DSO_KERNEL, DSO_MODULE, DSO_JIT };

struct sym_dso {
	char *path;
	const char *short_name;   /* points into path or a literal */
	char *sym_file;           /* the file the symbols came from, or NULL */
	char *file;               /* the recorded file, where it was found */
	enum dso_kind kind;
	bool trusted;
	struct symtab tab;
	struct elf_load *loads;
	size_t nloads;
	u64 start, end;           /* modules: [start, end) */
	/* Kernel and modules: the recorded address minus the address in
	 * the kallsyms read (another boot's KASLR offset, or a module
	 * loaded elsewhere); lookups subtract it. */
	s64 reloc;
	bool missing;             /* a file not found, nor in the cache */
	u8 build_id[SYM_BUILD_ID_MAX];
	size_t build_id_size;
	u64 hkey;
	struct sym_dso *hnext;    /* next dso in the same hash bucket */
	bool cached;              /* in the context's files (sym_dso_get's) */
	u32 holds;                /* sym_dso_hold's, less sym_dso_put's */
	u64 epoch;                /* the release epoch it was last handed out in */
	bool forgotten;           /* a JIT map whose process ended (sym_jit_forget) */
	struct sym_dwarf *dwarf;  /* inline.c: DWARF, looked for on first use */
	bool dwarf_tried;
	u64 dwarf_epoch;          /* the release epoch it was looked for in */
};

/* Addresses in a kallsyms of the symbols perf relocates the kernel by
 * (its kernel map's name says which: "[kernel.kallsyms]_text"). */
struct kernel_refs {
	u64 text, stext;
};

/* A module where the recording saw it (its kernel-mode mmap). */
struct kernel_rec_module {
	char *name;               /* "ext4", as kallsyms tags it */
	u64 start, end;
	struct sym_dso *d;        /* its dso in the kallsyms read, once found */
	bool looked;
};

/* A module's build-id as the recording lists it. */
struct kernel_mod_id {
	char *name;               /* "ext4" */
	u8 id[SYM_BUILD_ID_MAX];
	size_t n;
};

struct sym_ctx {
	bool demangle;
	char *kallsyms;
	bool kallsyms_given;      /* by the user: taken as the recording's */
	/* The recording's kernel (sym_kernel_expect): its build-id, the
	 * running one's, and where to read its symbols from. */
	u8 kernel_rec_id[SYM_BUILD_ID_MAX], kernel_run_id[SYM_BUILD_ID_MAX];
	size_t kernel_rec_id_size, kernel_run_id_size;
	bool kernel_cached;       /* kallsyms is the build-id cache's copy */
	bool kernel_unknown;      /* neither running nor cached: no names */
	char kernel_ref_name[16]; /* "_text": the symbol the recording ... */
	u64 kernel_ref_addr;      /* ... saw at this address (0: unknown) */
	struct kernel_refs kernel_src_refs;  /* the same in the kallsyms read */
	VEC(struct kernel_rec_module) rec_modules;
	VEC(struct kernel_mod_id) mod_ids;   /* modules' recorded build-ids */
	VEC(struct sym_dso *) problems;   /* files missing or not as recorded */
	char *debug_dir;
	char *cache_dir;          /* inflate.c: where inflated copies go, or NULL */
	struct sym_stats stats;
	struct u64map files;      /* hash of path+build-id -> first dso */
	u64 release_epoch;        /* sym_ctx_release calls so far */
	VEC(struct sym_dso *) all;
	struct sym_dso *kernel;
	VEC(struct sym_dso *) modules;   /* sorted by start */
	struct kernel_parse *kernel_parse;  /* kallsyms being read on a thread */
	pthread_t kernel_thread;
	struct u64map jits;       /* pid -> dso, or 1 when there is no map */
	struct file_prefetch *prefetch;  /* files being loaded on a thread */
};

struct sym_dso *dso_new(struct sym_ctx *c, enum dso_kind kind, const char *path);
/* A dso owned by nobody yet (dso_new also registers it with c). */
struct sym_dso *dso_alloc(enum dso_kind kind, const char *path);
void dso_free(struct sym_dso *d);
/* The cache key of a file: its path and build-id. */
u64 dso_file_key(const char *path, const u8 *id, size_t n);

/* prefetch.c: a prefetched dso of that file, now c's to register, or NULL
 * (not prefetched, not begun, or not found as recorded); and the end of
 * the thread, whatever it was doing. */
struct sym_dso *prefetch_take(struct sym_ctx *c, u64 key, const char *path, const u8 *id,
			      size_t n);
void prefetch_end(struct sym_ctx *c);

/* kernel.c: loads kallsyms and modules into c->kernel and c->modules
 * (finishing a sym_prefetch_kernel when one runs); or stops and drops a
 * prefetch nobody asked for. */
void kernel_load(struct sym_ctx *c);
void kernel_abandon(struct sym_ctx *c);
/* kchoice.c: notes a reference symbol's address while kallsyms is parsed;
 * sets the kernel's relocation once both sides are known; the module the
 * recording saw at addr (NULL when it listed none there); frees. */
void kernel_note_ref(struct kernel_refs *r, const char *name, u64 addr);
void kernel_relocate(struct sym_ctx *c);
/* Distrusts the modules whose loaded build-id is not the recorded one. */
void kernel_check_modules(struct sym_ctx *c);
struct sym_dso *kernel_recorded_module(struct sym_ctx *c, u64 addr);
void kernel_choice_free(struct sym_ctx *c);
/* inline.c */
struct sym_dwarf;
void sym_dwarf_free(struct sym_dwarf *dw);
/* Closes the opening with the line tables, if any (true when one was
 * open); the next line asked opens it again. */
bool sym_dwarf_drop_lines(struct sym_dwarf *dw);
/* A DWARF section neither inline frames nor source lines read. */
bool dwarf_section_unread(const char *name);

/* inflate.c: the folder of inflated copies for sym_opts.cache_dir asked
 * (malloc'ed), or NULL for none; and the inflated copy of the debug file
 * at path, made there if need be (malloc'ed path), or NULL when path has
 * nothing compressed, no build-id, or no copy could be made. */
char *inflate_cache_dir(const char *asked);
char *inflated_copy(const char *dir, const char *path);

/* jit.c: a dso of the perf map file at path; NULL when unreadable. */
struct sym_dso *jit_load(struct sym_ctx *c, const char *path);
/* find.c: locates and loads the symbols of a file dso. */
void file_load(struct sym_ctx *c, struct sym_dso *d, pid_t pid);

/* byname.c: the ELF file at path opened for reading (NULL with err_set(),
 * *fd closed, when it is none); an address's file offset through the
 * PT_LOAD holding it (-1 when none does). */
Elf *sym_elf_open(const char *path, int *fd);
int sym_elf_offset(Elf *elf, u64 addr, u64 *off);
/* byname.c: calls fn with each defined function of the file's symbol
 * tables (.symtab, .dynsym; its name as the table has it, and its value)
 * until fn returns true. */
typedef bool (*sym_func_fn)(const char *name, u64 value, void *ctx);
void sym_elf_each_function(Elf *elf, sym_func_fn fn, void *ctx);

#endif
