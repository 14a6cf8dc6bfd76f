/* fuzz-folded.c - libFuzzer target for the folded-stack parser
 * (flame_parse_buf), then both writers on the tree it built: folded text
 * and the SVG, which must escape whatever names came in. */
#include "tests/fuzz/fuzz.h"
#include "flamegraph/flamegraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	/* The first byte picks the options, so reversed trees and the
	 * BEFORE side (a differential graph) are covered too. */
	uint8_t mode = len ? data[0] : 0;
	struct flame_tree_opts to = { .reverse = mode & 1 };
	struct flame_tree *t = flame_tree_new(&to);
	struct flame_parse_stats st = {0};
	enum flame_side side = (mode & 2) ? FLAME_BEFORE : FLAME_AFTER;
	if (flame_parse_buf(t, (const char *)data, len, side, &st) == 0) {
		flame_write_folded(t, null);
		struct flame_svg_opts so;
		flame_svg_opts_default(&so);
		so.inverted = mode & 4;
		so.negate = mode & 8;
		so.palette = (mode >> 4) & 3;
		flame_write_svg(t, &so, null);
	}
	flame_tree_free(t);
	return 0;
}
