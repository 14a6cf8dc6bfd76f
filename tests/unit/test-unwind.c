/* test-unwind.c - unit tests of unwind/: backend names, the register
 * order of a sample, the cut marker in a callchain, and both DWARF
 * backends unwinding a copy of this test's own stack (known by
 * construction: the return addresses the functions on it saw), including
 * a copy cut short, the raw chain form, and frames with no CFI (an asm
 * function, and its copy in anonymous memory) that the fast path steps
 * out of by frame pointer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dlfcn.h>

#include "symbols/symbols.h"
#include "tests/unit/test.h"
#include "unwind/unwind.h"

/* ---- names and registers ---------------------------------------------------- */

static void test_backend_names(void)
{
	enum unw_backend b;
	CHECK(unw_parse_backend("libdw", &b) == 0 && b == UNW_BACKEND_LIBDW, "libdw");
	CHECK(unw_parse_backend("libunwind", &b) == 0 && b == UNW_BACKEND_LIBUNWIND, "libunwind");
	CHECK(unw_parse_backend("frame-pointer", &b) < 0, "a bad name is refused");
	CHECK(strstr(err_msg(), "frame-pointer") != NULL, "the message names it: %s", err_msg());
	CHECK(!strcmp(unw_backend_name(UNW_BACKEND_LIBUNWIND), "libunwind"), "name back");
}

/* UNW_CUT_IP ends a user chain ember unwound while recording: the views'
 * cut marker.  In kernel context it is no marker, and every frame is
 * written whole (out[] is reused from sample to sample). */
static void test_chain_cut_marker(void)
{
	const u64 chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL, UNW_CUT_IP,
			      PERF_CONTEXT_USER, 0x401000, 0x401100, UNW_CUT_IP };
	struct pd_sample s = { .ip = 0xffffffff81000010ULL, .nr_callchain = ARRAY_SIZE(chain),
			       .callchain = chain };
	struct unw_frame out[8];
	for (int i = 0; i < 8; i++)
		out[i] = (struct unw_frame){ .ip = 1, .kernel = true, .cut = true };
	bool dropped = true;
	int n = unw_sample_frames(&s, PERF_RECORD_MISC_KERNEL, out, 8, &dropped);
	CHECK(n == 5 && !dropped, "5 frames, chain trusted: %d", n);
	if (n != 5)
		return;
	CHECK(out[1].kernel && out[1].ip == UNW_CUT_IP && !out[1].cut,
	      "in kernel context it is a kernel address");
	CHECK(!out[2].kernel && out[2].ip == 0x401000 && !out[2].cut &&
	      !out[3].kernel && out[3].ip == 0x401100 && !out[3].cut && !out[0].cut,
	      "the other frames as given, none marked cut");
	CHECK(out[4].cut && out[4].ip == UNW_CUT_IP && !out[4].kernel,
	      "in user context the cut marker");
	s.nr_callchain = 0;
	out[0].cut = true;
	CHECK(unw_sample_frames(&s, PERF_RECORD_MISC_KERNEL, out, 8, NULL) == 1 && !out[0].cut,
	      "the ip alone is not marked cut");
}

/* ---- a copy of our own stack ----------------------------------------------- */

#define SNAP_BYTES 16384

struct snap {
	u64 regs[3];               /* perf order for mask BP|SP|IP */
	u8 stack[SNAP_BYTES];
	u64 size;
	u64 stack_end;             /* top of the [stack] mapping */
	void *ra[3];               /* return addresses seen by capture, level1, level2 */
};
#define SNAP_MASK ((1ULL << 6) | (1ULL << 7) | (1ULL << 8))

/* The file mappings of this process, from /proc/self/maps. */
struct self_map {
	u64 start, end, pgoff;
	char *path;
};
struct self_maps {
	struct self_map v[256];
	int n;
	u64 jit_start, jit_end;    /* code with no file, when not 0 */
};

static void read_self_maps(struct self_maps *m, u64 *stack_end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	m->n = 0;
	while (f && fgets(line, sizeof(line), f) && m->n < 256) {
		unsigned long lo, hi, off;
		char path[512] = "";
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %511s", &lo, &hi, &off, path) < 3)
			continue;
		if (!strcmp(path, "[stack]"))
			*stack_end = hi;
		if (path[0] != '/')
			continue;
		m->v[m->n++] = (struct self_map){ lo, hi, off, xstrdup(path) };
	}
	if (f)
		fclose(f);
}

static int find_self_map(void *ctx, u64 addr, struct unw_map *out)
{
	struct self_maps *m = ctx;
	if (addr >= m->jit_start && addr < m->jit_end) {
		*out = (struct unw_map){ m->jit_start, m->jit_end, 0, "", NULL };
		return 0;
	}
	for (int i = 0; i < m->n; i++) {
		if (addr >= m->v[i].start && addr < m->v[i].end) {
			/* The first mapping of a file stands for the file. */
			const void *key = m->v[i].path;
			for (int j = 0; j < i; j++)
				if (!strcmp(m->v[j].path, m->v[i].path)) {
					key = m->v[j].path;
					break;
				}
			*out = (struct unw_map){ m->v[i].start, m->v[i].end, m->v[i].pgoff,
						 m->v[i].path, key };
			return 0;
		}
	}
	return -1;
}

/* Registers and stack bytes at one instruction, as the kernel would take
 * them.  Not instrumented: it reads stack above its own frame. */
__attribute__((noipa, no_sanitize_address)) static void capture(struct snap *s)
{
	u64 ip, sp, bp;
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	s->ra[0] = __builtin_return_address(0);
	s->regs[0] = bp;
	s->regs[1] = sp;
	s->regs[2] = ip;
	s->size = MIN((u64)SNAP_BYTES, s->stack_end - sp);
	for (u64 i = 0; i < s->size; i++)
		s->stack[i] = ((volatile const u8 *)(uintptr_t)sp)[i];
}

/* Work after each call keeps it from being a tail call; noipa keeps gcc
 * from dropping that work when the result goes unused. */
__attribute__((noipa)) static int level1(struct snap *s)
{
	s->ra[1] = __builtin_return_address(0);
	capture(s);
	return (int)s->size & 1;
}

__attribute__((noipa)) static int level2(struct snap *s)
{
	s->ra[2] = __builtin_return_address(0);
	return level1(s) + 1;
}

/* void test_nocfi_call(struct snap *s, void (*fn)(struct snap *), void **ra):
 * stores its return address in *ra and calls fn(s) from a standard frame
 * (push %rbp; mov %rsp,%rbp) with no .cfi directives, so no FDE covers
 * it: only its frame pointer leads out.  Position-independent, so a copy
 * in anonymous memory runs too. */
void test_nocfi_call(struct snap *s, void (*fn)(struct snap *), void **ra);
extern const char test_nocfi_call_end[];
__asm__(".pushsection .text\n"
	".globl test_nocfi_call\n"
	".type test_nocfi_call, @function\n"
	"test_nocfi_call:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov 8(%rbp), %rax\n"
	"	mov %rax, (%rdx)\n"
	"	call *%rsi\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl test_nocfi_call_end\n"
	"test_nocfi_call_end:\n"
	".size test_nocfi_call, . - test_nocfi_call\n"
	".popsection\n");

typedef void (*nocfi_fn)(struct snap *s, void (*fn)(struct snap *), void **ra);

/* capture <- call (no CFI) <- via_nocfi: s->ra[] as level1 and level2
 * leave it (capture's, call's, via_nocfi's return addresses). */
__attribute__((noipa)) static int via_nocfi(struct snap *s, nocfi_fn call)
{
	s->ra[2] = __builtin_return_address(0);
	call(s, capture, &s->ra[1]);
	return (int)s->size & 1;
}

static struct unw_user user_of(const struct snap *s, struct self_maps *maps, u64 size)
{
	return (struct unw_user){
		.regs = s->regs, .regs_mask = SNAP_MASK,
		.stack = s->stack, .stack_size = size,
		.pid = (u32)getpid(), .tid = (u32)getpid(),
		.space = maps, .generation = 1,
		.find_map = find_self_map, .find_ctx = maps,
	};
}

static void test_registers(void)
{
	/* The full x86_64 set perf records: values are the perf indexes. */
	u64 mask = 0xff0fffULL, regs[24];
	int k = 0;
	for (int bit = 0; bit < 64; bit++)
		if (mask & (1ULL << bit))
			regs[k++] = (u64)bit;
	struct snap *s = xcalloc(1, sizeof(*s));
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	struct unw_user in = user_of(s, maps, 0);
	in.regs = regs;
	in.regs_mask = mask;
	/* Through the public unwinder: a walk with no stack gives the ip. */
	struct unw_dwarf *u = unw_dwarf_new(UNW_BACKEND_LIBUNWIND);
	struct unw_frame out[4];
	int n = unw_dwarf_user(u, &in, out, 4);
	CHECK(n >= 1 && out[0].ip == 8, "the first frame is the IP register (perf index 8): %d %llu",
	      n, n ? (unsigned long long)out[0].ip : 0ULL);
	in.regs_mask = mask & ~(1ULL << 7);    /* no SP: nothing to walk */
	CHECK(unw_dwarf_user(u, &in, out, 4) == 0, "no sp, no user frames");
	unw_dwarf_free(u);
	free(maps);
	free(s);
}

static void free_maps(struct self_maps *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->v[i].path);
}

static void unwind_own_stack(enum unw_backend b)
{
	struct snap *s = xcalloc(1, sizeof(*s));
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	read_self_maps(maps, &s->stack_end);
	CHECK(s->stack_end != 0, "found the [stack] mapping");
	level2(s);
	struct unw_dwarf *u = unw_dwarf_new(b);
	CHECK(u != NULL, "%s: unwinder made", unw_backend_name(b));
	if (!u)
		return;
	struct unw_frame out[64];
	struct unw_user in = user_of(s, maps, s->size);
	int n = unw_dwarf_user(u, &in, out, 64);
	CHECK(n >= 5, "%s: %d frames (capture, level1, level2, the test, main...)",
	      unw_backend_name(b), n);
	CHECK(n > 0 && out[0].ip == s->regs[2], "%s: the first frame is the sampled ip",
	      unw_backend_name(b));
	for (int i = 0; i < 3 && i + 1 < n; i++)
		CHECK(out[i + 1].ip + 1 == (u64)(uintptr_t)s->ra[i],
		      "%s: frame %d is return address %p less one (got %#llx)",
		      unw_backend_name(b), i + 1, s->ra[i], (unsigned long long)out[i + 1].ip);
	CHECK(n > 0 && !out[n - 1].cut, "%s: a whole copy ends without the marker",
	      unw_backend_name(b));

	/* A copy of 24 bytes holds capture's return address but not the
	 * rest: the same first frames, then the marker, and nothing read
	 * from outside the copy. */
	struct unw_frame cut[64];
	in = user_of(s, maps, 24);
	int m = unw_dwarf_user(u, &in, cut, 64);
	CHECK(m >= 2 && m < n && cut[m - 1].cut && cut[m - 1].ip == 0,
	      "%s: a short copy ends in the marker (%d of %d frames)", unw_backend_name(b), m, n);
	for (int i = 0; i + 1 < m; i++)
		CHECK(cut[i].ip == out[i].ip && !cut[i].cut, "%s: frame %d as in the whole copy",
		      unw_backend_name(b), i);
	CHECK(unw_dwarf_stats(u)->cut == 1 && unw_dwarf_stats(u)->samples == 2,
	      "%s: stats count 2 walks, 1 cut", unw_backend_name(b));
	unw_dwarf_free(u);
	free_maps(maps);
	free(maps);
	free(s);
}

static void test_libunwind_own_stack(void) { unwind_own_stack(UNW_BACKEND_LIBUNWIND); }
static void test_libdw_own_stack(void) { unwind_own_stack(UNW_BACKEND_LIBDW); }

/* A caller that lets go of every file and the address space after each
 * walk (as the recorder does when processes exit) gets the same frames
 * each time: the files load again, their indexes are taken again once a
 * batch of dead ones is sifted out of the fast path's rules (70 rounds
 * pass the batch of 64 several times), and nothing freed is read. */
static void forget_and_again(enum unw_backend b)
{
	const char *name = unw_backend_name(b);
	struct snap *s = xcalloc(1, sizeof(*s));
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	read_self_maps(maps, &s->stack_end);
	level2(s);
	struct unw_dwarf *u = unw_dwarf_new(b);
	CHECK(u != NULL, "%s: unwinder made", name);
	if (!u)
		return;
	struct unw_frame first[64], again[64];
	struct unw_user in = user_of(s, maps, s->size);
	int n = unw_dwarf_user(u, &in, first, 64), differ = 0;
	u64 loaded = unw_dwarf_stats(u)->files;
	const int rounds = 70;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < maps->n; i++)
			unw_dwarf_forget(u, maps->v[i].path);  /* non-keys: ignored */
		unw_dwarf_forget_space(u, maps);
		int m = unw_dwarf_user(u, &in, again, 64);
		bool same = m == n;
		for (int i = 0; same && i < n; i++)
			same = again[i].ip == first[i].ip;
		differ += !same;
	}
	const struct unw_stats *st = unw_dwarf_stats(u);
	CHECK(n >= 5 && differ == 0, "%s: %d of %d walks after letting go differ (%d frames)",
	      name, differ, rounds, n);
	CHECK(loaded > 0 && st->files == loaded * (rounds + 1) && st->forgotten == loaded * rounds,
	      "%s: %llu files loaded first, %llu in all, %llu let go of", name,
	      (unsigned long long)loaded, (unsigned long long)st->files,
	      (unsigned long long)st->forgotten);
	unw_dwarf_free(u);
	free_maps(maps);
	free(maps);
	free(s);
}

static void test_libunwind_forget(void) { forget_and_again(UNW_BACKEND_LIBUNWIND); }
static void test_libdw_forget(void) { forget_and_again(UNW_BACKEND_LIBDW); }

/* An unwinder with the fast path on or off (EMBER_UNWIND_FAST=0). */
static struct unw_dwarf *unwinder_with(enum unw_backend b, bool fast)
{
	if (fast)
		unsetenv("EMBER_UNWIND_FAST");
	else
		setenv("EMBER_UNWIND_FAST", "0", 1);
	struct unw_dwarf *u = unw_dwarf_new(b);
	unsetenv("EMBER_UNWIND_FAST");
	return u;
}

/* The fast path gives the backend's frames exactly: for the whole copy
 * and for every copy cut short of it (each 8-byte step moves where the
 * walk runs out, and the marker must come at the same frame). */
static void fast_same_as_backend(enum unw_backend b)
{
	const char *name = unw_backend_name(b);
	struct snap *s = xcalloc(1, sizeof(*s));
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	read_self_maps(maps, &s->stack_end);
	level2(s);
	struct unw_dwarf *fast = unwinder_with(b, true), *slow = unwinder_with(b, false);
	CHECK(fast && slow, "%s: unwinders made", name);
	if (!fast || !slow)
		return;
	int differ = 0, cuts = 0, walks = 0;
	u64 first_bad = 0;
	for (u64 size = 8; size <= s->size; size += 8) {
		struct unw_frame a[64], z[64];
		struct unw_user in = user_of(s, maps, size);
		int na = unw_dwarf_user(fast, &in, a, 64), nz = unw_dwarf_user(slow, &in, z, 64);
		bool same = na == nz;
		for (int i = 0; same && i < na; i++)
			same = a[i].ip == z[i].ip && a[i].cut == z[i].cut;
		if (!same && !differ++)
			first_bad = size;
		cuts += na > 0 && a[na - 1].cut;
		walks++;
	}
	CHECK(differ == 0, "%s: fast path and backend agree on %d copies (%d differ, first at %llu bytes)",
	      name, walks, differ, (unsigned long long)first_bad);
	CHECK(cuts > 0 && cuts < walks, "%s: %d of %d copies cut short", name, cuts, walks);
	CHECK(unw_dwarf_stats(fast)->fast * 10 >= unw_dwarf_stats(fast)->samples * 9,
	      "%s: the fast path took %llu of %llu walks", name,
	      (unsigned long long)unw_dwarf_stats(fast)->fast,
	      (unsigned long long)unw_dwarf_stats(fast)->samples);
	CHECK(unw_dwarf_stats(slow)->fast == 0, "%s: EMBER_UNWIND_FAST=0 turns it off", name);
	unw_dwarf_free(fast);
	unw_dwarf_free(slow);
	free_maps(maps);
	free(maps);
	free(s);
}

static void test_libunwind_fast_path(void) { fast_same_as_backend(UNW_BACKEND_LIBUNWIND); }
static void test_libdw_fast_path(void) { fast_same_as_backend(UNW_BACKEND_LIBDW); }

/* The raw chain is the same walk as the frames: the sampled ip, then the
 * return addresses themselves (the frames have them minus one), and
 * UNW_CUT_IP where the frames have the cut marker; fast path or not. */
static void user_chain(bool fast)
{
	const char *how = fast ? "fast path" : "backend";
	struct snap *s = xcalloc(1, sizeof(*s));
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	read_self_maps(maps, &s->stack_end);
	level2(s);
	struct unw_dwarf *u = unwinder_with(UNW_BACKEND_DEFAULT, fast);
	CHECK(u != NULL, "%s: unwinder made", how);
	if (!u)
		return;
	struct unw_frame f[64];
	u64 c[64];
	struct unw_user in = user_of(s, maps, s->size);
	int n = unw_dwarf_user(u, &in, f, 64), m = unw_dwarf_user_chain(u, &in, c, 64);
	CHECK(n >= 5 && m == n, "%s: %d frames, %d chain entries", how, n, m);
	CHECK(m > 0 && c[0] == s->regs[2] && c[0] == f[0].ip, "%s: the chain starts at the ip",
	      how);
	for (int i = 1; i < MIN(n, m); i++)
		CHECK(c[i] == f[i].ip + 1 && c[i] != UNW_CUT_IP,
		      "%s: entry %d is frame %d's address plus one (%#llx, %#llx)", how, i, i,
		      (unsigned long long)c[i], (unsigned long long)f[i].ip);
	for (int i = 0; i < 3 && i + 1 < m; i++)
		CHECK(c[i + 1] == (u64)(uintptr_t)s->ra[i], "%s: entry %d is return address %p",
		      how, i + 1, s->ra[i]);
	in = user_of(s, maps, 24);
	n = unw_dwarf_user(u, &in, f, 64);
	m = unw_dwarf_user_chain(u, &in, c, 64);
	CHECK(n >= 2 && m == n && f[n - 1].cut && c[m - 1] == UNW_CUT_IP,
	      "%s: a short copy's chain ends in UNW_CUT_IP (%d frames, %d entries)", how, n, m);
	CHECK(unw_dwarf_stats(u)->samples == 4 && unw_dwarf_stats(u)->cut == 2,
	      "%s: both forms count as walks", how);
	/* No sp: no frames, but a chain has the ip, as the kernel gives it. */
	u64 regs[2] = { s->regs[0], s->regs[2] };
	in.regs = regs;
	in.regs_mask = (1ULL << 6) | (1ULL << 8);
	CHECK(unw_dwarf_user(u, &in, f, 64) == 0, "%s: no sp, no frames", how);
	m = unw_dwarf_user_chain(u, &in, c, 64);
	CHECK(m == 1 && c[0] == s->regs[2], "%s: no sp, the chain is the ip (%d)", how, m);
	CHECK(unw_dwarf_user_chain(u, &in, c, 0) == 0, "%s: no room, no entries", how);
	unw_dwarf_free(u);
	free_maps(maps);
	free(maps);
	free(s);
}

static void test_user_chain_fast(void) { user_chain(true); }
static void test_user_chain_backend(void) { user_chain(false); }

/* Whether b's frames are a's first ones, in order (a backend that stops
 * where the fast path steps on by frame pointer), or all of them. */
static bool frames_prefix(const struct unw_frame *a, int na, const struct unw_frame *b, int nb)
{
	if (nb > na)
		return false;
	for (int i = 0; i < nb; i++)
		if (a[i].ip != b[i].ip || (a[i].cut != b[i].cut && i < nb - 1))
			return false;
	return true;
}

/* The fast path steps out of a frame with no CFI by its frame pointer
 * and goes on with CFI: the whole stack, by construction, in one walk of
 * its own.  Each copy cut short gives the whole copy's first frames and
 * the marker. */
static void nocfi_walk(const char *what, struct self_maps *maps, nocfi_fn call)
{
	struct snap *s = xcalloc(1, sizeof(*s));
	read_self_maps(maps, &s->stack_end);
	via_nocfi(s, call);      /* capture <- call (no CFI) <- via_nocfi */
	struct unw_dwarf *u = unwinder_with(UNW_BACKEND_DEFAULT, true);
	CHECK(u != NULL, "%s: unwinder made", what);
	if (!u) {
		free(s);
		return;
	}
	struct unw_frame out[64];
	struct unw_user in = user_of(s, maps, s->size);
	int n = unw_dwarf_user(u, &in, out, 64);
	CHECK(n >= 5 && !out[n - 1].cut, "%s: %d frames, to the end of the stack", what, n);
	for (int i = 0; i < 3 && i + 1 < n; i++)
		CHECK(out[i + 1].ip + 1 == (u64)(uintptr_t)s->ra[i],
		      "%s: frame %d is return address %p less one (got %#llx)", what, i + 1,
		      s->ra[i], (unsigned long long)out[i + 1].ip);
	const struct unw_stats *st = unw_dwarf_stats(u);
	CHECK(st->fast == 1 && st->fp_steps == 1,
	      "%s: the fast path's walk, one frame-pointer step (%llu, %llu)", what,
	      (unsigned long long)st->fast, (unsigned long long)st->fp_steps);
	int bad = 0, cuts = 0, walks = 0;
	u64 first_bad = 0;
	for (u64 size = 8; size < s->size; size += 8, walks++) {
		struct unw_frame c[64];
		in = user_of(s, maps, size);
		int m = unw_dwarf_user(u, &in, c, 64);
		/* Large enough, the copy holds every frame's slots. */
		bool whole = m == n && frames_prefix(out, n, c, m) && !c[m - 1].cut;
		bool ok = whole || (m >= 2 && m <= n && c[m - 1].cut &&
				    frames_prefix(out, n, c, m - 1));
		cuts += m > 0 && c[m - 1].cut;
		if (!ok && !bad++)
			first_bad = size;
	}
	CHECK(bad == 0,
	      "%s: %d of %d short copies neither whole nor first frames and marker (first at %llu)",
	      what, bad, walks, (unsigned long long)first_bad);
	CHECK(cuts > 0 && cuts < walks, "%s: %d of %d copies cut short", what, cuts, walks);
	CHECK(st->fast == (u64)walks + 1, "%s: the fast path took every walk (%llu of %d)", what,
	      (unsigned long long)st->fast, walks + 1);
	/* libdw's own fallback is the same step: it stops before or agrees.
	 * (libunwind's guesses may not: under ASan it takes a stack address
	 * for the caller of the copy in anonymous memory.) */
	struct unw_dwarf *slow = unwinder_with(UNW_BACKEND_LIBDW, false);
	struct unw_frame z[64];
	in = user_of(s, maps, s->size);
	int nz = slow ? unw_dwarf_user(slow, &in, z, 64) : -1;
	CHECK(nz >= 1 && frames_prefix(out, n, z, nz),
	      "%s: libdw's %d frames are the fast path's first (of %d)", what, nz, n);
	unw_dwarf_free(slow);
	unw_dwarf_free(u);
	free(s);
}

static void test_nocfi_frame(void)
{
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	nocfi_walk("asm with no FDE", maps, test_nocfi_call);
	free_maps(maps);
	free(maps);
}

/* A sampled ip with no CFI and an rbp that is no frame pointer into the
 * copy: the walk stops there (the ip alone), with the marker when rbp is
 * above the copy's end, where the stack goes on. */
static void test_nocfi_stops(void)
{
	struct snap *s = xcalloc(1, sizeof(*s));
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	read_self_maps(maps, &s->stack_end);
	level2(s);
	struct unw_dwarf *u = unwinder_with(UNW_BACKEND_DEFAULT, true);
	u64 sp = s->regs[1];
	const struct { u64 rbp; bool cut; const char *what; } cases[] = {
		{ sp - 16, false, "below sp" },
		{ sp + 12, false, "not aligned" },
		{ sp + s->size - 8, true, "its words past the copy's end" },
		{ sp + s->size + 4096, true, "above the copy" },
	};
	for (size_t i = 0; u && i < ARRAY_SIZE(cases); i++) {
		s->regs[0] = cases[i].rbp;
		s->regs[2] = (u64)(uintptr_t)test_nocfi_call + 4;
		struct unw_user in = user_of(s, maps, s->size);
		struct unw_frame out[8];
		int n = unw_dwarf_user(u, &in, out, 8);
		CHECK(n == 1 + cases[i].cut && out[0].ip == s->regs[2] &&
		      out[n - 1].cut == cases[i].cut, "rbp %s: %d frames, the ip%s", cases[i].what,
		      n, cases[i].cut ? " and the marker" : "");
	}
	CHECK(u && unw_dwarf_stats(u)->fast == ARRAY_SIZE(cases) && !unw_dwarf_stats(u)->fp_steps,
	      "the fast path's stops, no frame-pointer step");
	unw_dwarf_free(u);
	free_maps(maps);
	free(maps);
	free(s);
}

/* The same function copied to anonymous executable memory: find_map
 * says code is there with no file (key NULL). */
static void test_nocfi_no_file(void)
{
	size_t len = (size_t)(test_nocfi_call_end - (const char *)(uintptr_t)test_nocfi_call);
	long page = sysconf(_SC_PAGESIZE);
	void *code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	CHECK(code != MAP_FAILED && len < (size_t)page, "anonymous memory for %zu bytes", len);
	if (code == MAP_FAILED)
		return;
	memcpy(code, (const void *)(uintptr_t)test_nocfi_call, len);
	if (mprotect(code, (size_t)page, PROT_READ | PROT_EXEC) < 0) {
		munmap(code, (size_t)page);
		SKIP(test_nocfi_no_file, "no executable anonymous memory here");
		return;
	}
	struct self_maps *maps = xcalloc(1, sizeof(*maps));
	maps->jit_start = (u64)(uintptr_t)code;
	maps->jit_end = maps->jit_start + (u64)page;
	nocfi_walk("code with no file", maps, (nocfi_fn)(uintptr_t)code);
	free_maps(maps);
	free(maps);
	munmap(code, (size_t)page);
}

/* symbols/inline.c opens DWARF without the line tables for scopes and
 * again with them for source lines: both must answer, in either order. */
static void test_source_lines(void)
{
	Dl_info info;
	CHECK(dladdr((void *)level2, &info) && info.dli_fbase, "dladdr finds level2");
	u64 fa = (u64)(uintptr_t)level2 - (u64)(uintptr_t)info.dli_fbase;
	struct sym_opts o = { .demangle = true, .debug_dir = "/nonexistent" };
	struct sym_ctx *c = sym_ctx_new(&o);
	struct sym_dso *d = sym_dso_get(c, "/proc/self/exe", NULL, 0, 0);
	const struct sym *s = d ? sym_lookup(d, fa) : NULL;
	CHECK(s && !strcmp(s->name, "level2"), "level2 by its file address %#llx",
	      (unsigned long long)fa);
	const struct sym *out[8];
	if (s)
		CHECK(sym_inline_frames(c, d, fa, s, out, 8) >= 0, "scopes of level2");
	const char *line = sym_srcline(c, d, fa);
	CHECK(line && !strncmp(line, "test-unwind.c:", 14),
	      "level2's source line after its scopes: %s", line ? line : "(none)");
	/* Asked again, the same cached answer. */
	CHECK(line && sym_srcline(c, d, fa) == line, "level2's source line is cached");
	sym_ctx_free(c);
}

int main(void)
{
	RUN(test_backend_names);
	RUN(test_chain_cut_marker);
	RUN(test_registers);
	RUN(test_libunwind_own_stack);
	RUN(test_libdw_own_stack);
	RUN(test_libunwind_forget);
	RUN(test_libdw_forget);
	RUN(test_libunwind_fast_path);
	RUN(test_libdw_fast_path);
	RUN(test_user_chain_fast);
	RUN(test_user_chain_backend);
	RUN(test_nocfi_frame);
	RUN(test_nocfi_stops);
	RUN(test_nocfi_no_file);
	RUN(test_source_lines);
	return test_summary();
}
