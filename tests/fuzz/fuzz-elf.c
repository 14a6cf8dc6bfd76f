/* fuzz-elf.c - libFuzzer target for the symbol loader on malformed ELF
 * files: libelf parses, and our code around it (symbol tables, PLT stubs,
 * load segments, build-id notes, debuglink) must not trust its answers. */
#include "tests/fuzz/fuzz.h"
#include "symbols/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char *path = fuzz_as_file(data, len);
	u8 id[64];
	sym_read_build_id(path, id, sizeof(id));
	sym_notes_build_id(data, len, id, sizeof(id));

	/* No kallsyms or debug folder: only the file itself is read. */
	struct sym_opts o = { .demangle = true, .kallsyms = "/nonexistent",
			      .debug_dir = "/nonexistent" };
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
	}
	sym_ctx_free(c);
	return 0;
}
