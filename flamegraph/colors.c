/* colors.c - frame colours: palettes keyed by a hash of the name (so the
 * output never depends on a random seed), by kind of code, or by how much
 * a frame changed in a differential graph. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flamegraph/flamegraph-internal.h"

struct rgb { double r, g, b; };

/* Three numbers in [0, 1) from a name: one FNV-1a pass, split in thirds. */
static void name_mix(const char *s, size_t len, u64 salt, double v[3])
{
	u64 h = 1469598103934665603ull ^ salt;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (u8)s[i]) * 1099511628211ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	v[0] = (double)(h & 0xffff) / 65536.0;
	v[1] = (double)((h >> 16) & 0xffff) / 65536.0;
	v[2] = (double)((h >> 32) & 0xffff) / 65536.0;
}

/* Each palette is a base colour plus a spread per channel. */
static struct rgb spread(struct rgb base, struct rgb span, const double v[3])
{
	return (struct rgb){ base.r + span.r * v[0], base.g + span.g * v[1],
			     base.b + span.b * v[2] };
}

static struct rgb hot(const double v[3])
{
	/* One number drives red-to-yellow so frames stay warm, not brown. */
	double w[3] = { v[1], v[0], v[2] };
	return spread((struct rgb){ 205, 50, 0 }, (struct rgb){ 50, 170, 50 }, w);
}

static struct rgb palette_color(enum flame_palette pal, enum flame_kind kind, const double v[3])
{
	double same[3] = { v[0], v[0], v[1] };
	switch (pal) {
	case FLAME_PAL_IO:
		return spread((struct rgb){ 80, 110, 200 }, (struct rgb){ 60, 60, 55 }, same);
	case FLAME_PAL_MEM:
		return spread((struct rgb){ 40, 160, 50 }, (struct rgb){ 60, 80, 60 }, same);
	case FLAME_PAL_ANNOTATE:
		if (kind == FLAME_KERNEL)
			return spread((struct rgb){ 220, 120, 0 }, (struct rgb){ 30, 50, 40 }, same);
		if (kind == FLAME_JIT)
			return spread((struct rgb){ 50, 180, 50 }, (struct rgb){ 60, 50, 60 }, same);
		if (kind == FLAME_INLINED)
			return spread((struct rgb){ 40, 190, 190 }, (struct rgb){ 60, 40, 40 }, same);
		return hot(v);
	case FLAME_PAL_HOT:
	default:
		return hot(v);
	}
}

static int clamp255(double x)
{
	return x < 0 ? 0 : x > 255 ? 255 : (int)lround(x);
}

static void format_rgb(struct rgb c, char out[8])
{
	snprintf(out, 8, "#%02x%02x%02x", clamp255(c.r), clamp255(c.g), clamp255(c.b));
}

void flame_color(enum flame_palette pal, bool hash, const char *name, size_t len,
		 enum flame_kind kind, int depth, char out[8])
{
	double v[3];
	/* --hash: the name alone picks the colour, so graphs compare by eye;
	 * otherwise the depth varies it too, as a random palette would. */
	name_mix(name, len, hash ? 0 : (u64)depth * 0x9e3779b97f4a7c15ull, v);
	format_rgb(palette_color(pal, kind, v), out);
}

void flame_diff_color(double delta, char out[8])
{
	if (delta == 0) {
		memcpy(out, FLAME_DIFF_NEUTRAL, 8);
		return;
	}
	double s = fabs(delta) > 1 ? 1 : fabs(delta);
	double pale = 215 * (1 - s);
	struct rgb c = delta > 0 ? (struct rgb){ 255, pale, pale } : (struct rgb){ pale, pale, 255 };
	format_rgb(c, out);
}
