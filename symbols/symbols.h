/* symbols.h - files and their symbols: "what is at this address of this
 * file".  ELF symbol tables through libelf, the kernel from kallsyms,
 * modules, JIT maps (/tmp/perf-PID.map), build-ids and debug files,
 * demangling.  Knows nothing of perf records. */
#ifndef EMBER_SYMBOLS_H
#define EMBER_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/common.h"

/* ---- Build-ids ---------------------------------------------------------- */

/* The GNU build-id of an ELF file, copied into id (at most cap bytes).
 * Returns its size, or -1 with err_set() (not ELF, no build-id note). */
int sym_read_build_id(const char *path, u8 *id, size_t cap);

/* The running kernel's build-id, from /sys/kernel/notes.  Size or -1. */
int sym_kernel_build_id(u8 *id, size_t cap);

/* A loaded module's build-id ("ext4"), from /sys/module.  Size or -1. */
int sym_module_build_id(const char *name, u8 *id, size_t cap);

/* Finds the GNU build-id in a raw ELF note blob (4-byte aligned notes, as
 * /sys/kernel/notes and SHT_NOTE sections hold).  Size or -1. */
int sym_notes_build_id(const void *notes, size_t len, u8 *id, size_t cap);

/* Lowercase hex of a build-id into out (2 * n + 1 bytes). */
void sym_build_id_hex(const u8 *id, size_t n, char *out);

/* ---- The build-id cache ------------------------------------------------- */

/* perf's layout, shared with perf: ROOT/NAME/HEX/LEAF (NAME a file's
 * absolute path, or "[kernel.kallsyms]"; LEAF "elf" or "kallsyms") and a
 * link ROOT/.build-id/XX/REST -> ../../NAME/HEX.  ROOT is $HOME/.debug:
 * malloc'ed, or NULL with err_set() when HOME is not set. */
char *sym_cache_root(void);
/* "NAME/HEX" relative to the root, or NULL when NAME would leave it (not
 * absolute, or a ".." in it) or there is no build-id. */
char *sym_cache_entry(const char *name, const u8 *id, size_t n);
/* ".build-id/XX/REST", relative to the root. */
char *sym_cache_link(const u8 *id, size_t n);
/* Puts a file into the cache unless it is there: a hard link to src when
 * possible, else a copy (of src_fd when >= 0, else of src; src may be
 * NULL then), adding the copied bytes to *copied; then the link.
 * 0, or -1 with err_set(). */
int sym_cache_add(const char *root, const char *name, const u8 *id, size_t n,
		  const char *leaf, const char *src, int src_fd, u64 *copied);
/* The running kernel's kallsyms (and /proc/modules) under its build-id,
 * unless there.  0 or -1 with err_set(). */
int sym_cache_add_kernel(const char *root, const u8 *id, size_t n);
/* The cached file for (name, id), under its name or through the link;
 * malloc'ed, or NULL when the cache does not have it. */
char *sym_cache_find(const char *name, const u8 *id, size_t n, const char *leaf);

/* The file offset of the function called name (versioned names match
 * their base) in the ELF file at path: where a uprobe on it goes.  0, or
 * -1 with err_set() naming the function and the file. */
int sym_func_offset(const char *path, const char *name, u64 *off);
/* The file offset of the ELF file's entry point (e_entry): where a uprobe
 * on its start goes.  0, or -1 with err_set(). */
int sym_entry_offset(const char *path, u64 *off);
/* Calls fn with the name of each function the ELF file's symbol tables
 * define (.symtab and .dynsym: a name may come twice), the version cut
 * off; 0, or -1 with err_set() when it is not ELF. */
typedef void (*sym_name_fn)(const char *name, void *ctx);
int sym_each_function(const char *path, sym_name_fn fn, void *ctx);

/* The syscall instructions of an ELF file (sites.c) whose number, set
 * just before them, is one of those wanted (each with its path
 * argument: 0 for the first, 1 for the second): where each is (its file
 * offset: a uprobe there sees the syscall's registers), and, when the
 * path is in an argument register on entry of the function holding it,
 * that function's first instruction and the register (0 rdi, 1 rsi, 2
 * rdx, 3 rcx, 4 r8, 5 r9).  unknown counts the syscall instructions
 * whose number is set elsewhere (the generic syscall(2)).  x86-64 only. */
#define SYM_SITE_ARGS 6
struct sym_syscall_want {
	int nr;
	int arg;                   /* the path's argument: 0 or 1 */
};
struct sym_syscall_site {
	u64 offset;                /* the syscall instruction */
	int nr, arg;
	u64 entry;                 /* the function's first instruction, */
	int entry_arg;             /* its register with the path; -1 none */
};
struct sym_syscall_sites {
	VEC(struct sym_syscall_site) v;
	size_t unknown;
};
/* 0, or -1 with err_set() (not ELF, not x86-64); free with _free. */
int sym_syscall_sites(const char *path, const struct sym_syscall_want *want, size_t n,
		      struct sym_syscall_sites *out);
void sym_syscall_sites_free(struct sym_syscall_sites *s);

/* ---- Resolving addresses ------------------------------------------------ */

struct sym_opts {
	bool demangle;           /* C++ and Rust names (default on) */
	const char *kallsyms;    /* NULL: /proc/kallsyms */
	const char *debug_dir;   /* NULL: /usr/lib/debug */
	const char *cache_dir;   /* inflated copies of compressed debug files
				    (in its debug/); NULL: $EMBER_CACHE_DIR,
				    else ~/.cache/ember; "": none */
};

/* One symbol: start and size are file addresses (ELF st_value space for
 * files; absolute addresses for the kernel and JIT maps). */
struct sym {
	u64 start, size;
	const char *name;        /* demangled when asked */
};

/* A loaded file: an executable, a shared library, the kernel, a module or
 * a JIT map.  Owned by the context, loaded once, shared by all maps. */
struct sym_dso;
struct sym_ctx;

struct sym_ctx *sym_ctx_new(const struct sym_opts *opts);
void sym_ctx_free(struct sym_ctx *c);

/* The file behind a user mapping.  build_id (may be NULL) is the one
 * recorded: a file on disk whose build-id differs is not trusted (its
 * lookups fail and sym_ctx_stats counts them).  pid, when the process may
 * still run, lets /proc/PID/root find files of containers.  Never NULL:
 * a missing file gives a dso with no symbols. */
struct sym_dso *sym_dso_get(struct sym_ctx *c, const char *path, const u8 *build_id,
			    size_t build_id_size, pid_t pid);

/* The kernel ([kernel.kallsyms]) and the module owning a kernel address
 * (from kallsyms' [module] tags, /proc/modules); the kernel itself when no
 * module holds it. */
struct sym_dso *sym_kernel_dso(struct sym_ctx *c, u64 addr);

/* What the recording says of its kernel, told before the first kernel
 * lookup or sym_prefetch_kernel: its build-id.  When that is not the
 * running kernel's, kallsyms comes from the build-id cache; when the
 * cache has none either, the kernel and its modules get no names (never
 * another kernel's).  A kallsyms given in sym_opts is taken as is. */
void sym_kernel_expect(struct sym_ctx *c, const u8 *id, size_t n);
/* The same for a module ("[ext4]" or its .ko path): named from the
 * running kernel's kallsyms, a module whose build-id is not the loaded
 * one's gets no names. */
void sym_kernel_expect_module(struct sym_ctx *c, const char *name, const u8 *id, size_t n);
/* Where the recording saw the kernel: symbol ref ("_text", the suffix of
 * perf's "[kernel.kallsyms]_text" map) at addr (the map's pgoff).  Kernel
 * addresses are relocated by its distance from the kallsyms read (KASLR:
 * another boot of the same build). */
void sym_kernel_recorded_text(struct sym_ctx *c, const char *ref, u64 addr);
/* Where the recording saw a module (name as mapped: "[ext4]" or a .ko
 * path): its addresses are relocated to where the kallsyms read has it. */
void sym_kernel_recorded_module(struct sym_ctx *c, const char *name, u64 start, u64 len);

struct sym_kernel_info {
	bool used;                /* kernel addresses were looked up */
	bool unknown;             /* ... and got no names: not this kernel */
	bool cached;              /* ... named from the build-id cache */
	char recorded[129], running[129];  /* build-ids in hex, "" unknown */
};
void sym_kernel_info(const struct sym_ctx *c, struct sym_kernel_info *out);

/* Starts reading kallsyms on a thread of its own, so the work overlaps
 * with the caller's; sym_kernel_dso() waits for it when first called. */
void sym_prefetch_kernel(struct sym_ctx *c);

/* Starts loading, on a thread of its own, the files a recording names
 * with their build-ids (its build-id list), so that sym_dso_get() finds
 * them loaded.  Results are those of sym_dso_get() alone. */
struct sym_file_hint {
	const char *path;
	const u8 *build_id;
	size_t build_id_size;
};
void sym_prefetch_files(struct sym_ctx *c, const struct sym_file_hint *hints, size_t n);
/* Waits until the prefetch thread has gone through its whole list. */
void sym_prefetch_wait(struct sym_ctx *c);

/* The JIT map /tmp/perf-PID.map, or NULL when there is none.  Read once
 * per process: sym_jit_forget says the process ended, so a new one with
 * the pid reads its own map (and the old one's symbols go at the next
 * sym_ctx_release). */
struct sym_dso *sym_jit_dso(struct sym_ctx *c, pid_t pid);
void sym_jit_forget(struct sym_ctx *c, pid_t pid);

/* True for a mapping of memory without a file ([heap], [stack...],
 * //anon, /dev/zero, SysV shm): perf maps its addresses one for one, so
 * a frame there is shown at its address, not at an offset into the map
 * (the map's recorded offset is 0 when it came from /proc/PID/maps). */
bool sym_path_is_memory(const char *path);

/* Translates an address in a mapping [map_start, ...) at file offset pgoff
 * to the file address that symbols use (through the program headers, so
 * PIE executables and shared libraries work).  JIT dsos take addresses
 * unchanged; kernel ones relocated (sym_kernel_recorded_text). */
u64 sym_map_to_file(const struct sym_dso *d, u64 addr, u64 map_start, u64 pgoff);

/* The symbol containing file address addr, or NULL. */
const struct sym *sym_lookup(struct sym_dso *d, u64 file_addr);

const char *sym_dso_path(const struct sym_dso *d);   /* full path or [name] */
const char *sym_dso_short(const struct sym_dso *d);  /* basename, as perf's dso column */
bool sym_dso_is_kernel(const struct sym_dso *d);     /* kernel or module */

struct sym_stats {
	u64 files_loaded;
	u64 build_id_mismatches;  /* files not trusted */
	u64 missing_files;
	u64 files_prefetched;     /* of files_loaded, loaded by the prefetch thread */
	u64 files_released;       /* sym_ctx_release's, in all */
	u64 dwarf_renewed;        /* files kept whose DWARF a release let go of,
				     to be opened anew on next use */
	u64 dwarf_lines_closed;   /* ... whose line tables it let go of (each
				     release: sym_dwarf_drop_lines) */
};
const struct sym_stats *sym_ctx_stats(const struct sym_ctx *c);

/* ---- Releasing files (long live sessions) ------------------------------
 * Processes come and go, and with them the files they map.  A file (its
 * dso, symbols, names, DWARF and source lines) stays until the owner of
 * the context releases the unused ones, at a moment when it keeps no
 * pointer into them but those it holds. */

/* One more hold on d: sym_ctx_release leaves it alone. */
void sym_dso_hold(struct sym_dso *d);
/* One hold less: 0, or -1 with err_set() when d was not held (the count
 * stays 0). */
int sym_dso_put(struct sym_dso *d);
/* Frees the executables and libraries nobody holds that sym_dso_get has
 * not handed out since the previous release (so a file used in every
 * interval by processes that come and go is not loaded again each time);
 * never the kernel, modules, the JIT maps of processes not forgotten nor
 * the files sym_problem_file lists.  A file asked for later loads again.
 * The DWARF of a file kept through many releases is let go of too, and
 * opened again on its next use (its caches would otherwise grow through
 * the whole session).  Returns how many files were freed
 * (sym_stats.files_released counts them all). */
size_t sym_ctx_release(struct sym_ctx *c);

/* ---- Added by the symbols module: introspection for reports and tests. */

/* The file the dso's symbols were read from (the file itself, a debug
 * file, the JIT map), or NULL when none was found or trusted. */
const char *sym_dso_symfile(const struct sym_dso *d);
/* Where the recorded file itself was found (its path, through
 * /proc/PID/root, or the build-id cache), for reading its bytes; NULL
 * when it was not. */
const char *sym_dso_file(const struct sym_dso *d);
/* The build-id the dso was asked for (the recorded one); *n 0 when none. */
const u8 *sym_dso_build_id(const struct sym_dso *d, size_t *n);
/* False when the file on disk is not the one recorded (build-id). */
bool sym_dso_trusted(const struct sym_dso *d);
/* The i-th file looked up that was missing (neither on disk nor in the
 * build-id cache) or not the one recorded (sym_dso_trusted false), in
 * the order they were met; NULL past the last. */
const struct sym_dso *sym_problem_file(const struct sym_ctx *c, size_t i);
/* How many symbols the dso has. */
size_t sym_dso_count(const struct sym_dso *d);
/* The file its inline frames and source lines are read from (its debug
 * file, or that file's inflated copy), looked for now if need be; NULL
 * when it has no DWARF. */
const char *sym_dso_dwarf_file(struct sym_ctx *c, struct sym_dso *d);

/* ---- Process address spaces -------------------------------------------- */

/* One mapping of a process: [start, end) at file offset pgoff of path. */
struct sym_map {
	u64 start, end, pgoff;
	char *path;
	u8 build_id[20];           /* as recorded, when the record had one */
	u8 build_id_size;
	u32 maj, min;              /* the file's device and inode, when known */
	u64 ino;
	void *file;                /* the owner's answer for this file ... */
	bool file_known;           /* ... once looked up (NULL is an answer) */
};

/* The maps of one process, shared by its threads. */
struct sym_maps {
	VEC(struct sym_map) v;     /* sorted by start, not overlapping */
	u64 generation;            /* changes with every edit (a cache key) */
	u32 pid;
	u64 *clock;                /* the owner's counter generations come
				      from, unique across processes */
};

struct sym_maps *sym_maps_new(u32 pid, u64 *clock);
/* A forked process's copy (paths copied, files kept). */
struct sym_maps *sym_maps_copy(const struct sym_maps *from, u32 pid);
void sym_maps_free(struct sym_maps *m);
/* The mapping holding addr, or NULL. */
struct sym_map *sym_maps_find(struct sym_maps *m, u64 addr);
/* Adds nm, taking over its path; the older maps it overlaps are cut back
 * or removed, as a new mmap over an old range replaces it. */
void sym_maps_insert(struct sym_maps *m, struct sym_map *nm);

/* ---- Inline frames and source lines (libdw) ---------------------------- */

/* The source frames at file address addr of d whose symbol is base, as
 * perf shows them: the functions inlined there, innermost first, named
 * "NAME (inlined)", then base itself.  The function holding addr is
 * never renamed after its DWARF name (an alias such as libc's
 * clock_gettime stays one frame).  The symbols are owned by d.  Returns
 * how many (at most max); 0 when there is nothing to add (no DWARF, or
 * no inlining there): base stands alone. */
int sym_inline_frames(struct sym_ctx *c, struct sym_dso *d, u64 file_addr,
		      const struct sym *base, const struct sym **out, int max);

/* "file:line" of file address addr of d (the line table's innermost
 * location), owned by d and looked up once per address; NULL when the
 * DWARF does not say. */
const char *sym_srcline(struct sym_ctx *c, struct sym_dso *d, u64 file_addr);

/* The same for frame depth of the inline chain sym_inline_frames() gives
 * at addr (0 the innermost): an outer frame's line is where it calls the
 * function inlined into it, as perf shows it. */
const char *sym_inline_srcline(struct sym_ctx *c, struct sym_dso *d, u64 file_addr, int depth);

#endif
