/* test-frames.c - how replay/frames.c names frames, on frames built
 * by hand: perf script's chain text (inline frames as perf prints them),
 * the report's columns, and the folded names and kinds stackcollapse-
 * perf.pl gives the same frames' perf script text. */
#include <stdlib.h>

#include "replay/replay.h"
#include "tests/unit/test.h"

static struct sym_ctx *ctx;

static struct sym_dso *dso(const char *path)
{
	return sym_dso_get(ctx, path, NULL, 0, 1);
}

/* The folded names of f, ';' between them, each followed by its kind's
 * letter in brackets when not a user frame ("name[k]"). */
static char *fold(const struct rp_frame *f, bool java)
{
	static const char kinds[] = "ukji";
	struct rp_fold fo = { 0 };
	struct strbuf sb = { 0 };
	rp_fold_frame(&fo, f, java);
	for (size_t i = 0; i < fo.parts.n; i++) {
		sb_printf(&sb, "%s%.*s", i ? ";" : "", (int)fo.parts.v[i].len, rp_fold_at(&fo, i));
		if (fo.parts.v[i].kind != RP_FRAME_USER)
			sb_printf(&sb, "[%c]", kinds[fo.parts.v[i].kind]);
	}
	rp_fold_free(&fo);
	char *s = xstrdup(sb.s ? sb.s : "");
	sb_free(&sb);
	return s;
}

#define CHECK_FOLD(f, java, want)                                             \
	do {                                                                  \
		char *got = fold(f, java);                                    \
		CHECK(!strcmp(got, want), "folded '%s', want '%s'", got, want); \
		free(got);                                                    \
	} while (0)

static char *text(const struct rp_frame *f, unsigned what, const char *line)
{
	struct strbuf sb = { 0 };
	rp_put_frame_text(&sb, f, what, line);
	char *s = xstrdup(sb.s ? sb.s : "");
	sb_free(&sb);
	return s;
}

#define CHECK_TEXT(f, what, line, want)                                       \
	do {                                                                  \
		char *got = text(f, what, line);                              \
		CHECK(!strcmp(got, want), "text '%s', want '%s'", got, want);  \
		free(got);                                                    \
	} while (0)

#define ALL (RP_TEXT_SYM | RP_TEXT_SYMOFF | RP_TEXT_DSO)

static void test_script_text(void)
{
	struct sym main_sym = { 0x1000, 0x100, "main" };
	struct sym inl = { 0x1000, 0x100, "spin_inner (inlined)" };
	struct rp_frame f = { .ip = 0x401010, .addr = 0x1010, .dso = dso("/tmp/a.out"), .sym = &main_sym };
	CHECK_TEXT(&f, ALL, NULL, "main+0x10 (/tmp/a.out)");
	CHECK_TEXT(&f, RP_TEXT_SYM, NULL, "main");
	CHECK_TEXT(&f, ALL | RP_TEXT_SRCLINE, "a.c:12", "main+0x10 (/tmp/a.out)\n  a.c:12");
	/* perf: the offset on the name, no file, the line, then " (inlined)". */
	struct rp_frame i = f;
	i.sym = &inl;
	i.inlined = true;
	CHECK_TEXT(&i, ALL, NULL, "spin_inner+0x10 (inlined)");
	CHECK_TEXT(&i, RP_TEXT_SYM, NULL, "spin_inner (inlined)");
	CHECK_TEXT(&i, ALL | RP_TEXT_SRCLINE, "a.c:5", "spin_inner+0x10\n  a.c:5 (inlined)");
	struct rp_frame unknown = { .ip = 0x7000, .addr = 0x7000 };
	CHECK_TEXT(&unknown, ALL, NULL, "[unknown] ([unknown])");
	/* The cut marker: a symbol without a file, so no offset. */
	struct sym cut = { 0, 0, RP_CUT_NAME };
	struct rp_frame c = { .ip = 0x7000, .addr = 0x7000, .sym = &cut };
	CHECK_TEXT(&c, ALL, NULL, "[stack copy ended] ([unknown])");
}

static void test_report_columns(void)
{
	struct sym s = { 0x1000, 0x100, "work" };
	struct strbuf sb = { 0 };
	rp_put_sym_column(&sb, &s, 0, rp_level(false));
	CHECK(!strcmp(sb.s, "[.] work"), "'%s'", sb.s);
	sb_reset(&sb);
	rp_put_sym_column(&sb, NULL, 0x1234, rp_level(true));
	CHECK(!strcmp(sb.s, "[k] 0x0000000000001234"), "'%s'", sb.s);
	sb_reset(&sb);
	/* A branch from nowhere: perf's hypervisor level for an unmapped
	 * user address, user and kernel levels as a sample's otherwise. */
	struct rp_frame nomap = { .ip = 0 }, mapped = { .ip = 0x1010, .dso = dso("/tmp/b.out") },
			kern = { .ip = 0xffffffff81000000ull, .kernel = true };
	CHECK(rp_branch_level(&nomap) == 'H' && rp_branch_level(&mapped) == '.' &&
	      rp_branch_level(&kern) == 'k', "levels %c %c %c", rp_branch_level(&nomap),
	      rp_branch_level(&mapped), rp_branch_level(&kern));
	rp_put_sym_column(&sb, NULL, 0, rp_branch_level(&nomap));
	CHECK(!strcmp(sb.s, "[H] 0000000000000000"), "'%s'", sb.s);
	sb_reset(&sb);
	rp_put_line_stand_in(&sb, &s, dso("/tmp/b.out"), false, 0x1010);
	CHECK(!strcmp(sb.s, "work+16"), "'%s'", sb.s);
	sb_reset(&sb);
	rp_put_line_stand_in(&sb, NULL, dso("/tmp/b.out"), false, 0x1010);
	CHECK(!strcmp(sb.s, "b.out[1010]"), "'%s'", sb.s);
	sb_reset(&sb);
	rp_put_line_stand_in(&sb, NULL, NULL, false, 0x1010);
	CHECK(!strcmp(sb.s, "??:0"), "'%s'", sb.s);
	CHECK(!strcmp(rp_dso_name(NULL), "[unknown]"), "no dso");
	CHECK(!strcmp(rp_dso_name(dso("/usr/lib/libz.so.1")), "libz.so.1"), "short name");
	sb_free(&sb);
}

static void test_fold_names(void)
{
	struct sym_dso *exe = dso("/tmp/a.out");
	struct sym cpp = { 0x1000, 0x10, "ns::f(int, char const*) const" };
	struct sym anon = { 0x1000, 0x10, "ns::(anonymous namespace)::g(int)" };
	struct sym anon_first = { 0x1000, 0x10, "(anonymous namespace)::g(int)" };
	struct sym go = { 0x1000, 0x10, "net/http.(*Client).Do" };
	struct sym semi = { 0x1000, 0x10, "a;b'c\"d" };
	struct sym paren = { 0x1000, 0x10, "(lambda)" };
	struct sym chain = { 0x1000, 0x10, "outer->inner(int)" };
	struct sym javas = { 0x1000, 0x10, "Lorg/x/Y;.call(I)V" };
	struct sym inl = { 0x1000, 0x10, "spin_inner (inlined)" };
	struct rp_frame f = { .ip = 0x401004, .addr = 0x1004, .dso = exe };
	f.sym = &cpp;
	CHECK_FOLD(&f, false, "ns::f");
	f.sym = &anon;
	CHECK_FOLD(&f, false, "ns::(anonymous namespace)::g");
	f.sym = &anon_first;
	CHECK_FOLD(&f, false, "");                   /* starts with '(': skipped */
	f.sym = &go;
	CHECK_FOLD(&f, false, "net/http.(*Client).Do");
	f.sym = &semi;
	CHECK_FOLD(&f, false, "a:bcd");
	f.sym = &paren;
	CHECK_FOLD(&f, false, "");
	f.sym = &chain;
	CHECK_FOLD(&f, false, "outer;inner[i]");
	f.sym = &javas;
	CHECK_FOLD(&f, true, "org/x/Y:.call");
	CHECK_FOLD(&f, false, "Lorg/x/Y:.call");
	/* An inline frame: perf script's "spin_inner+0x4 (inlined)". */
	f.sym = &inl;
	f.inlined = true;
	CHECK_FOLD(&f, false, "spin_inner");
	f.inlined = false;
	f.sym = NULL;
	CHECK_FOLD(&f, false, "[a.out]");
	f.dso = NULL;
	CHECK_FOLD(&f, false, "[unknown]");
	struct sym cut = { 0, 0, RP_CUT_NAME };
	f.sym = &cut;
	CHECK_FOLD(&f, false, "[stack copy ended]");
}

static void test_fold_kinds(void)
{
	struct sym s = { 0x1000, 0x10, "fn" };
	struct rp_frame f = { .ip = 0x1004, .addr = 0x1004, .sym = &s };
	f.dso = dso("/tmp/perf-4242.map");
	CHECK_FOLD(&f, false, "fn[j]");
	f.dso = dso("/boot/vmlinux");
	CHECK_FOLD(&f, false, "fn[k]");
	f.dso = dso("[vdso]");
	CHECK_FOLD(&f, false, "fn");
	/* A file name holding " (": the rules take what its last "(...)"
	 * holds as the file, the rest going with the name. */
	f.dso = dso("/memfd:x (deleted)");
	CHECK_FOLD(&f, false, "fn+0x4 ");
	f.sym = NULL;
	CHECK_FOLD(&f, false, "[unknown] ");
	struct rp_fold fo = { 0 };
	rp_fold_process(&fo, "my prog", 10, 11, RP_FOLD_TID);
	CHECK(fo.parts.n == 1 && !strcmp(rp_fold_at(&fo, 0), "my_prog-10/11"), "'%s'",
	      rp_fold_at(&fo, 0));
	rp_fold_free(&fo);
	CHECK(rp_fold_java("java") && rp_fold_java("javac") && !rp_fold_java("jav"), "java");
}

/* Places: one per names, found again from other pointers after a forget
 * (a file released and loaded again), and a pointer reused by another
 * symbol after a forget is that symbol's place, not the old one's. */
static void test_places(void)
{
	struct rp_places p;
	rp_places_init(&p);
	struct sym s1 = { .start = 0x1000, .size = 0x20, .name = "work" };
	struct sym s2 = s1;            /* the same symbol, loaded again */
	struct sym_dso *d = dso("/tmp/places.so");
	const struct rp_place *a = rp_place_of(&p, d, &s1);
	CHECK(a->sym.name && !strcmp(a->sym.name, "work") && a->sym.name != s1.name &&
	      !strcmp(a->path, "/tmp/places.so") && !strcmp(a->file, "places.so"),
	      "place of work: own copies of its names");
	CHECK(rp_place_of(&p, d, &s1) == a, "found again by its pointers");
	rp_places_forget(&p);
	CHECK(rp_place_of(&p, d, &s2) == a, "the symbol loaded again has its place");
	CHECK(rp_place_of(&p, d, &s1) == a, "and so has the first copy");
	s1.name = "other";             /* s1's memory now another symbol's */
	s1.start = 0x2000;
	CHECK(rp_place_of(&p, d, &s1) == a, "without a forget the pointer's place stays");
	rp_places_forget(&p);
	const struct rp_place *b = rp_place_of(&p, d, &s1);
	CHECK(b != a && !strcmp(b->sym.name, "other") && b->sym.start == 0x2000,
	      "a reused pointer after a forget names its new symbol");
	const struct rp_place *none = rp_place_of(&p, NULL, NULL);
	CHECK(!none->path && !none->file && !none->sym.name, "no file, no symbol");
	/* A kept frame names its file and symbol as the frame it was. */
	struct rp_frame f = { .ip = 0x401004, .addr = 0x1004, .dso = d, .sym = &s2 };
	struct rp_frame kept = f;
	rp_place_frame(a, &kept);
	CHECK(!kept.dso && kept.sym == &a->sym, "kept frame: the place's records");
	char *was = fold(&f, false), *is = fold(&kept, false);
	CHECK(!strcmp(was, is), "kept frame folds as '%s', want '%s'", is, was);
	free(was);
	free(is);
	CHECK_TEXT(&kept, ALL, NULL, "work+0x4 (/tmp/places.so)");
	rp_places_free(&p);
}

int main(void)
{
	struct sym_opts o = { .demangle = true };
	ctx = sym_ctx_new(&o);
	RUN(test_script_text);
	RUN(test_report_columns);
	RUN(test_fold_names);
	RUN(test_fold_kinds);
	RUN(test_places);
	sym_ctx_free(ctx);
	return test_summary();
}
