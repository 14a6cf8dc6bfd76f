/* fuzz-elf.c - libFuzzer target for the symbol loader on malformed ELF
 * files: libelf parses, and our code around it (symbol tables, PLT stubs,
 * load segments, build-id notes, debuglink) must not trust its answers;
 * and libdw's DWARF behind inline frames and source lines (sym_inline_frames,
 * sym_srcline, sym_inline_srcline) at addresses on and around the symbols
 * found. */
#include "tests/fuzz/fuzz.h"
#include "symbols/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
const char *__lsan_default_suppressions(void);

/* elfutils 0.188's dwarf_getscopes leaks the scopes it found when its
 * second walk (abstract origins) fails on broken DWARF: not ours to fix
 * (corpus/fuzz-elf/regress-libdw-getscopes-leak).  The leak's stack
 * stops inside libdw (no frame pointers there), so only the library can
 * name it: leaks of libdw's own allocations are not reported by this
 * target; ours (inline.c's symbols and tables) still are. */
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

/* Inline frames and the source line of one address. */
static void source_at(struct sym_ctx *c, struct sym_dso *d, u64 fa, const struct sym *s)
{
	const struct sym *out[16];
	int n = sym_inline_frames(c, d, fa, s, out, 16);
	if (n < 0 || n > 16)
		abort();
	for (int i = 0; i < n; i++)
		fuzz_touch_str(out[i]->name);
	int depth = n > 1 ? n : 1;
	const char *line = sym_srcline(c, d, fa);
	if (line)
		fuzz_touch_str(line);
	/* The call sites of the chain's outer frames, and one past them. */
	for (int i = 1; i <= depth; i++) {
		line = sym_inline_srcline(c, d, fa, i);
		if (line)
			fuzz_touch_str(line);
	}
}

/* The symbol at addr and a walk through its first bytes, where inlined
 * code and line rows are. */
static void source_frames(struct sym_ctx *c, struct sym_dso *d, u64 addr)
{
	const struct sym *s = sym_lookup(d, addr);
	if (!s)
		return;
	source_at(c, d, addr, s);
	u64 span = s->size < 256 ? s->size : 256;
	for (u64 off = 0; off < span; off += 8)
		source_at(c, d, s->start + off, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *path = fuzz_as_file(data, len);
	u8 id[64];
	sym_read_build_id(path, id, sizeof(id));
	sym_notes_build_id(data, len, id, sizeof(id));

	/* No kallsyms, debug folder or cache: only the file itself is read
	 * (and no copy of it written). */
	struct sym_opts o = { .demangle = true, .kallsyms = "/nonexistent",
			      .debug_dir = "/nonexistent", .cache_dir = "" };
	struct sym_ctx *c = sym_ctx_new(&o);
	struct sym_dso *d = sym_dso_get(c, path, NULL, 0, 0);
	fuzz_touch_str(sym_dso_path(d));
	fuzz_touch_str(sym_dso_short(d));
	fuzz_touch_str(sym_dso_symfile(d));
	fuzz_sink += sym_dso_count(d) + sym_dso_trusted(d);
	/* Addresses that land on and between the symbols of a small file. */
	static const u64 probes[] = { 0, 0x1000, 0x1040, 0x1139, 0x2000, 0x400000,
				      0x401000, UINT64_MAX };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		u64 fa = sym_map_to_file(d, probes[i], 0x1000, 0);
		const struct sym *s = sym_lookup(d, fa);
		if (s)
			fuzz_touch_str(s->name);
		s = sym_lookup(d, probes[i]);
		if (s)
			fuzz_touch_str(s->name);
		source_frames(c, d, probes[i]);
	}
	/* Each function of a small program's text (0x1000..0x2000), once. */
	const struct sym *last = NULL;
	for (u64 a = 0x1000; a < 0x2000; a += 0x20) {
		const struct sym *s = sym_lookup(d, a);
		if (s && s != last)
			source_frames(c, d, s->start);
		last = s;
	}
	sym_ctx_free(c);
	return 0;
}
