/* test-flamegraph.c - folded parsing (good and malformed lines), merging,
 * folded and SVG output: byte-identical for the same input, a profile
 * diffed with itself all neutral, --minwidth dropping, and a million-line
 * input staying under 5 MB. */
#include <stdlib.h>
#include <string.h>

#include "flamegraph/flamegraph.h"
#include "test.h"

/* Output of a writer into a malloc'd string. */
struct mem { char *s; size_t len; FILE *f; };

static FILE *mem_open(struct mem *m)
{
	m->s = NULL;
	m->len = 0;
	return m->f = open_memstream(&m->s, &m->len);
}

static void mem_close(struct mem *m)
{
	fclose(m->f);
}

static struct flame_tree *parse(const char *text, struct flame_parse_stats *st)
{
	struct flame_tree *t = flame_tree_new(NULL);
	struct flame_parse_stats local = { 0 };
	flame_parse_buf(t, text, strlen(text), FLAME_AFTER, st ? st : &local);
	return t;
}

static char *folded(struct flame_tree *t)
{
	struct mem m;
	mem_open(&m);
	flame_write_folded(t, m.f);
	mem_close(&m);
	return m.s;
}

static char *svg(struct flame_tree *t, const struct flame_svg_opts *o)
{
	struct flame_svg_opts def;
	flame_svg_opts_default(&def);
	struct mem m;
	mem_open(&m);
	int rc = flame_write_svg(t, o ? o : &def, m.f);
	mem_close(&m);
	if (rc < 0) {
		free(m.s);
		return NULL;
	}
	return m.s;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_merge_counts(void)
{
	struct flame_tree *t = parse("main;work;leaf_a 3\nmain;work;leaf_b 2\n"
				     "main;work;leaf_a 2\nmain;work 1\nmain;other 4\n", NULL);
	CHECK(flame_tree_total(t, FLAME_AFTER) == 12, "total %llu",
	      (unsigned long long)flame_tree_total(t, FLAME_AFTER));
	char *f = folded(t);
	CHECK(!strcmp(f, "main;other 4\nmain;work 1\nmain;work;leaf_a 5\nmain;work;leaf_b 2\n"),
	      "folded:\n%s", f);
	CHECK(!flame_tree_is_diff(t), "not a diff");
	free(f);
	flame_tree_free(t);
}

static void test_malformed_lines(void)
{
	struct flame_parse_stats st = { 0 };
	const char text[] =
		"good;one 1\n"
		"no count here\n"
		"\n"
		"   \r\n"
		"a;b x7\n"
		" 5\n"
		"a;b 99999999999999999999999\n"
		"a;b 1.5\r\n"
		"a;;b 2\n"
		"tab\tname;x\t3\n"
		"a;b 1.2.3\n"
		"a;b -4\n"
		"bin\x01\x7f\xff;z 1\n"
		"last 1";
	struct flame_tree *t = parse(text, &st);
	CHECK(st.lines == 14, "lines %llu", (unsigned long long)st.lines);
	CHECK(st.bad_lines == 6, "bad %llu", (unsigned long long)st.bad_lines);
	CHECK(st.first_bad_line == 2, "first bad line %llu", (unsigned long long)st.first_bad_line);
	CHECK(st.stacks == 6, "stacks %llu", (unsigned long long)st.stacks);
	char *f = folded(t);
	CHECK(!strcmp(f, "a;;b 2\na;b 2\nbin\x01\x7f\xff;z 1\ngood;one 1\nlast 1\ntab\tname;x 3\n"),
	      "folded:\n%s", f);
	free(f);
	flame_tree_free(t);
}

static void test_limits(void)
{
	/* Too many frames, and a line longer than the limit. */
	size_t deep = FLAME_MAX_DEPTH + 10, n = deep * 2 + 32;
	char *line = malloc(n);
	size_t o = 0;
	for (size_t i = 0; i < deep; i++) {
		line[o++] = 'f';
		line[o++] = ';';
	}
	strcpy(line + o, "x 1\nok 1\n");
	struct flame_parse_stats st = { 0 };
	struct flame_tree *t = parse(line, &st);
	CHECK(st.bad_lines == 1 && st.stacks == 1, "deep: bad %llu stacks %llu",
	      (unsigned long long)st.bad_lines, (unsigned long long)st.stacks);
	flame_tree_free(t);
	free(line);

	size_t big = FLAME_MAX_LINE + 100;
	char *buf = malloc(big + 64);
	memset(buf, 'a', big);
	strcpy(buf + big, " 1\nafter 2\n");
	FILE *f = tmpfile();
	fwrite("before 1\n", 1, 9, f);
	fwrite(buf, 1, strlen(buf), f);
	rewind(f);
	memset(&st, 0, sizeof(st));
	t = flame_tree_new(NULL);
	CHECK(flame_parse_file(t, f, FLAME_AFTER, &st) == 0, "parse_file");
	CHECK(st.bad_lines == 1 && st.stacks == 2 && st.lines == 3,
	      "long line: lines %llu bad %llu stacks %llu", (unsigned long long)st.lines,
	      (unsigned long long)st.bad_lines, (unsigned long long)st.stacks);
	CHECK(flame_tree_total(t, FLAME_AFTER) == 3, "total");
	fclose(f);
	free(buf);
	flame_tree_free(t);

	memset(&st, 0, sizeof(st));
	t = parse("a 18446744073709551615\na 18446744073709551615\n", &st);
	CHECK(st.saturated && flame_tree_total(t, FLAME_AFTER) == UINT64_MAX, "saturation");
	flame_tree_free(t);
}

static void test_annotations_and_diff_lines(void)
{
	struct flame_parse_stats st = { 0 };
	struct flame_tree *t = parse("p;sys_read_[k];jitted_[j];inl_[i];waker_[w] 1\nx;y 3 5\n", &st);
	char *f = folded(t);
	CHECK(flame_tree_is_diff(t), "two counts make a diff");
	CHECK(!strcmp(f, "p;sys_read_[k];jitted_[j];inl_[i];waker 0 1\nx;y 3 5\n"), "folded:\n%s", f);
	free(f);
	flame_tree_free(t);
}

/* The kind is colour and suffix, not identity: "f" and "f_[k]" merge. */
static void test_kind_not_identity(void)
{
	struct flame_tree *t = parse("a;f_[k] 1\na;f 2\nb;g_[i] 1\nc;g 1\n", NULL);
	char *f = folded(t);
	CHECK(!strcmp(f, "a;f_[k] 3\nb;g_[i] 1\nc;g 1\n"), "folded:\n%s", f);
	free(f);
	flame_tree_free(t);
}

static void test_reverse(void)
{
	struct flame_tree_opts o = { .reverse = true };
	struct flame_tree *t = flame_tree_new(&o);
	struct flame_parse_stats st = { 0 };
	const char text[] = "a;b;c 1\nx;b;c 2\n";
	flame_parse_buf(t, text, strlen(text), FLAME_AFTER, &st);
	char *f = folded(t);
	CHECK(!strcmp(f, "c;b;a 1\nc;b;x 2\n"), "folded:\n%s", f);
	free(f);
	flame_tree_free(t);
}

/* Stacks added by interned name ids make the same tree as by text, in
 * both directions, with kinds kept. */
static void test_named_frames(void)
{
	for (int rev = 0; rev < 2; rev++) {
		struct flame_tree_opts o = { .reverse = rev };
		struct flame_tree *byname = flame_tree_new(&o), *byid = flame_tree_new(&o);
		const struct flame_frame s1[] = { { "m", 1, FLAME_USER }, { "w", 1, FLAME_USER },
						  { "k", 1, FLAME_KERNEL } };
		const struct flame_frame s2[] = { { "m", 1, FLAME_USER }, { "z", 1, FLAME_JIT } };
		flame_tree_add(byname, s1, 3, 4, FLAME_AFTER);
		flame_tree_add(byname, s2, 2, 1, FLAME_AFTER);
		flame_tree_add(byname, s1, 3, 2, FLAME_AFTER);
		struct flame_named n1[3], n2[2];
		for (int i = 0; i < 3; i++)
			n1[i] = (struct flame_named){ flame_tree_name(byid, s1[i].name, 1), s1[i].kind };
		for (int i = 0; i < 2; i++)
			n2[i] = (struct flame_named){ flame_tree_name(byid, s2[i].name, 1), s2[i].kind };
		CHECK(n1[0].name == n2[0].name && n1[0].name != FLAME_NO_NAME,
		      "one name, two ids (%u, %u)", n1[0].name, n2[0].name);
		flame_tree_add_named(byid, n1, 3, 4, FLAME_AFTER);
		flame_tree_add_named(byid, n2, 2, 1, FLAME_AFTER);
		flame_tree_add_named(byid, n1, 3, 2, FLAME_AFTER);
		char *a = folded(byname), *b = folded(byid);
		CHECK(!strcmp(a, b), "reverse=%d: by text:\n%sby id:\n%s", rev, a, b);
		CHECK(flame_tree_total(byid, FLAME_AFTER) == 7, "total %llu",
		      (unsigned long long)flame_tree_total(byid, FLAME_AFTER));
		free(a);
		free(b);
		flame_tree_free(byname);
		flame_tree_free(byid);
	}
}

static void test_identical_output(void)
{
	struct flame_tree *a = parse("m;w;b 2\nm;w;a 5\nm;z 1\nk 3\n", NULL);
	struct flame_tree *b = parse("k 3\nm;z 1\nm;w;a 3\nm;w;b 2\nm;w;a 2\n", NULL);
	char *sa = svg(a, NULL), *sb = svg(b, NULL);
	CHECK(sa && sb && !strcmp(sa, sb), "SVGs of the same stacks differ");
	/* Sorted by name at each level: k before m, a before b. */
	const char *k = strstr(sa, "<title>k "), *m = strstr(sa, "<title>m ");
	const char *wa = strstr(sa, "<title>a "), *wb = strstr(sa, "<title>b ");
	CHECK(k && m && k < m && wa && wb && wa < wb, "order");
	CHECK(strstr(sa, "<title>all (11 samples, 100.00%)</title>"), "root title");
	CHECK(strstr(sa, "<title>a (5 samples, 45.45%)</title>"), "merged frame title");
	free(sa);
	free(sb);
	flame_tree_free(a);
	flame_tree_free(b);
}

static void test_diff_neutral(void)
{
	const char text[] = "m;w;a 50\nm;w;b 30\nm;c 20\nk;x 7\n";
	struct flame_tree *t = flame_tree_new(NULL);
	struct flame_parse_stats st = { 0 };
	flame_parse_buf(t, text, strlen(text), FLAME_BEFORE, &st);
	flame_parse_buf(t, text, strlen(text), FLAME_AFTER, &st);
	char *s = svg(t, NULL);
	size_t frames = count_of(s, "<rect x=\"") - 1;  /* less the background */
	size_t neutral = count_of(s, "fill=\"#dcdcdc\"");
	CHECK(frames == 8 && neutral == frames, "%zu frames, %zu neutral", frames, neutral);
	CHECK(strstr(s, "Differential Flame Graph"), "diff title");
	free(s);
	flame_tree_free(t);

	/* A doubled profile is the same shares: still neutral.  A change is not. */
	t = flame_tree_new(NULL);
	flame_parse_buf(t, text, strlen(text), FLAME_BEFORE, &st);
	flame_parse_buf(t, text, strlen(text), FLAME_AFTER, &st);
	flame_parse_buf(t, "m;w;a 40\n", 9, FLAME_AFTER, &st);
	s = svg(t, NULL);
	CHECK(count_of(s, "fill=\"#ff0000\"") >= 1, "largest growth is full red");
	CHECK(count_of(s, "ff\"/>") > count_of(s, "#ffffff\"/>"), "some frames shrank: blue");
	free(s);
	flame_tree_free(t);
}

static void test_minwidth(void)
{
	struct flame_tree *t = parse("big 100000\ntiny 1\n", NULL);
	struct flame_svg_opts o;
	flame_svg_opts_default(&o);
	char *s = svg(t, &o);
	CHECK(!strstr(s, "<title>tiny"), "0.1 px drops a 0.01 px frame");
	free(s);
	o.minwidth = 0;
	s = svg(t, &o);
	CHECK(strstr(s, "<title>tiny"), "minwidth 0 keeps it");
	free(s);
	CHECK(flame_minwidth_parse("2%", &o.minwidth, &o.minwidth_percent) == 0 &&
	      o.minwidth_percent && o.minwidth == 2, "percent parse");
	flame_tree_free(t);
	t = parse("big 97\nsmall 3\n", NULL);
	s = svg(t, &o);
	CHECK(strstr(s, "<title>small"), "3%% kept at 2%%");
	free(s);
	o.minwidth = 5;
	s = svg(t, &o);
	CHECK(!strstr(s, "<title>small"), "3%% dropped at 5%%");
	free(s);
	CHECK(flame_minwidth_parse("x%", &o.minwidth, &o.minwidth_percent) < 0, "bad minwidth");
	flame_tree_free(t);
}

static void test_xml_safety(void)
{
	struct flame_tree *t = parse("a<b>&\"c\";bad\xff\xc0utf8\x01;\xe2\x82\xac ok 5\n", NULL);
	char *s = svg(t, NULL);
	CHECK(strstr(s, "a&lt;b&gt;&amp;&quot;c&quot;"), "escaped");
	CHECK(strstr(s, "bad\xef\xbf\xbd\xef\xbf\xbdutf8?"), "invalid bytes replaced");
	CHECK(strstr(s, "\xe2\x82\xac ok"), "valid UTF-8 kept");
	bool ctl = false;
	for (const char *p = s; *p; p++)
		ctl |= (unsigned char)*p < 0x20 && *p != '\n';
	CHECK(!ctl, "no control characters");
	CHECK(!strstr(s + strlen("<?xml") , "]]>") || strstr(s, "]]></script>") ==
	      strstr(s, "]]>"), "CDATA closes once");
	free(s);
	flame_tree_free(t);
}

static void test_options(void)
{
	enum flame_palette p;
	CHECK(flame_palette_parse("blue", &p) == 0 && p == FLAME_PAL_IO, "blue");
	CHECK(flame_palette_parse("green", &p) == 0 && p == FLAME_PAL_MEM, "green");
	CHECK(flame_palette_parse("annotate", &p) == 0 && p == FLAME_PAL_ANNOTATE, "annotate");
	CHECK(flame_palette_parse("plaid", &p) < 0, "unknown palette");
	struct flame_tree *t = parse("k;sys_x_[k] 3\nk;jit_[j] 2\n", NULL);
	struct flame_svg_opts o;
	flame_svg_opts_default(&o);
	o.palette = FLAME_PAL_ANNOTATE;
	o.inverted = true;
	o.title = "T<1>";
	o.subtitle = "sub";
	o.countname = "ms";
	char *s = svg(t, &o);
	CHECK(strstr(s, ">T&lt;1&gt;</text>") && strstr(s, ">sub</text>"), "titles");
	CHECK(strstr(s, "<title>sys_x (3 ms, 60.00%)</title>"), "annotation stripped, countname");
	CHECK(strstr(s, "data-inverted=\"1\""), "inverted");
	free(s);
	o.width = 5;
	s = svg(t, &o);
	CHECK(!s, "bad width refused");
	free(s);
	flame_tree_free(t);
}

/* A big synthetic profile: skewed so some frames are wide and most are
 * far below 0.1 px, like a real system-wide recording. */
static void test_million_lines(void)
{
	const size_t lines = 1000000;
	struct strbuf in = { 0 };
	u64 x = 88172645463325252ull;
	for (size_t i = 0; i < lines; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int depth = 3 + (int)(x % 14);
		sb_printf(&in, "proc%d", (int)(x >> 20) % 6);
		u64 y = x;
		for (int d = 0; d < depth; d++) {
			y = y * 6364136223846793005ull + 1442695040888963407ull;
			unsigned r = (unsigned)(y >> 33);
			/* Few choices near the root, many near the leaves. */
			unsigned choices = 2u + (unsigned)d * (unsigned)d * 40u;
			sb_printf(&in, ";fn_%d_%u", d, (r % choices) * (r % choices) / choices);
		}
		sb_printf(&in, " %u\n", 1u + (unsigned)(x % 5));
	}
	u64 t0 = now_ns();
	struct flame_tree *t = flame_tree_new(NULL);
	struct flame_parse_stats st = { 0 };
	flame_parse_buf(t, in.s, in.len, FLAME_AFTER, &st);
	u64 t1 = now_ns();
	struct flame_svg_opts o;
	flame_svg_opts_default(&o);
	char *s = svg(t, &o);
	u64 t2 = now_ns();
	size_t size = s ? strlen(s) : 0;
	printf("info: 1M lines (%zu MB folded): %zu nodes, parse %.2f s, SVG %.2f MB "
	       "(%zu frames) in %.2f s\n", in.len >> 20, flame_tree_nodes(t),
	       (double)(t1 - t0) / 1e9, (double)size / 1e6, count_of(s, "<g n="),
	       (double)(t2 - t1) / 1e9);
	CHECK(st.stacks == lines && st.bad_lines == 0, "stacks %llu", (unsigned long long)st.stacks);
	CHECK(size > 0 && size < 5u * 1000 * 1000, "SVG is %zu bytes", size);
	free(s);
	sb_free(&in);
	flame_tree_free(t);
}

int main(void)
{
	RUN(test_merge_counts);
	RUN(test_malformed_lines);
	RUN(test_limits);
	RUN(test_annotations_and_diff_lines);
	RUN(test_kind_not_identity);
	RUN(test_reverse);
	RUN(test_named_frames);
	RUN(test_identical_output);
	RUN(test_diff_neutral);
	RUN(test_minwidth);
	RUN(test_xml_safety);
	RUN(test_options);
	RUN(test_million_lines);
	return test_summary();
}
