/* test-options.c - cmd/parse-options.c: a table with an included group and
 * a heading parses short, long, optional-argument and grouped options to
 * their ids, stops at the first operand when asked, rejects unknown
 * options and missing values with exit 2, and lays out --help, the
 * --list-options dump and the man page from the same entries.  The typed
 * bindings store each kind at its offset (in an included group's struct
 * too) and refuse bad values with their message; exclusive groups,
 * subcommands, the declared operand and the handover. */
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/common.h"
#include "cmd/cmd.h"
#include "tests/unit/test.h"

enum { ID_WIDE = 0x100, ID_LEVEL, ID_SHARED };

static const struct opt shared[] = {
	OPT(ID_SHARED, 0, "shared", OPT_ARG, "LIST", "from the group"),
	OPT_END,
};

static const struct opt table[] = {
	OPT('i', 'i', "input", OPT_ARG, "FILE", "data file"),
	OPT(ID_WIDE, 0, "wide", OPT_NO_ARG, NULL, "wide rows\nsecond line"),
	OPT_TEXT("Heading:"),
	OPT(ID_LEVEL, 'z', "level", OPT_OPT_ARG, "N", "a level"),
	OPT('G', 'G', NULL, OPT_NO_ARG, NULL, "short only"),
	OPT_INCLUDE(shared),
	OPT_END,
};

/* What the parse function saw, in order: "id=arg;". */
static char seen[256];

static int one(void *ctx, int id, const char *arg)
{
	if (id == ID_SHARED && arg && !strcmp(arg, "bad")) {
		err_set("bad --shared '%s'", arg);
		return -1;
	}
	size_t n = strlen(seen);
	snprintf(seen + n, sizeof(seen) - n, "%x=%s;", id, arg ? arg : "-");
	return 1;
}

static struct opt_cmd cmd = {
	.name = "t", .summary = "a test", .synopsis = "usage: ember t [options]\n\nIt tests.\n\n",
	.opts = table, .notes = "Notes.\n", .column = 20, .one = one,
};

static int parse(int argc, char **argv)
{
	seen[0] = 0;
	return opt_parse(&cmd, argc, argv, NULL);
}

static void test_parse_ids(void)
{
	char *argv[] = { "t", "-i", "f", "--wide", "-z3", "--level", "--shared", "a,b", "-G",
			 "operand", NULL };
	int rc = parse(10, argv);
	CHECK(rc == -1, "rc %d", rc);
	CHECK(!strcmp(seen, "69=f;100=-;101=3;101=-;102=a,b;47=-;"), "seen %s", seen);
	CHECK(optind == 9 && !strcmp(argv[optind], "operand"), "optind %d", optind);
}

static void test_stop_at_operand(void)
{
	char *argv[] = { "t", "-G", "cmd", "--wide", NULL };
	cmd.stop_at_operand = true;
	int rc = parse(4, argv);
	cmd.stop_at_operand = false;
	CHECK(rc == -1 && optind == 2, "rc %d optind %d", rc, optind);
	CHECK(!strcmp(seen, "47=-;"), "--wide after the operand was taken: %s", seen);
}

static void test_bad_options(void)
{
	char *unknown[] = { "t", "--nope", NULL };
	CHECK(parse(2, unknown) == EXIT_USAGE, "unknown option");
	char *missing[] = { "t", "--input", NULL };
	CHECK(parse(2, missing) == EXIT_USAGE, "missing value");
	char *bad[] = { "t", "--shared", "bad", NULL };
	CHECK(parse(3, bad) == EXIT_USAGE, "bad value");
	char *value_on_flag[] = { "t", "--wide=1", NULL };
	CHECK(parse(2, value_on_flag) == EXIT_USAGE, "value on a flag");
	CHECK(!strcmp(seen, ""), "a refused option reached the parse function: %s", seen);
}

/* The text fn writes for cmd, NUL-terminated (caller frees). */
static char *capture(void (*fn)(const struct opt_cmd *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fn(&cmd, f);
	fclose(f);
	return buf;
}

static void test_help_layout(void)
{
	char *h = capture(opt_help);
	const char *want =
		"usage: ember t [options]\n\nIt tests.\n\n"
		"  -i, --input FILE  data file\n"
		"      --wide        wide rows\n"
		"                    second line\n"
		"Heading:\n"
		"  -z, --level[=N]   a level\n"
		"  -G                short only\n"
		"      --shared LIST from the group\n"
		"  -h, --help        this help\n"
		"\nNotes.\n";
	CHECK(!strcmp(h, want), "help:\n%s", h);
	free(h);
}

static void test_list_and_man(void)
{
	char *l = capture(opt_list);
	CHECK(!strcmp(l, "-i --input FILE\n- --wide\n-z --level [=N]\n-G -\n- --shared LIST\n"
		      "-h --help\n"), "list:\n%s", l);
	free(l);
	char *m = capture(opt_man);
	CHECK(strstr(m, ".SH NAME\nember\\-t \\- a test\n") != NULL, "NAME: %s", m);
	CHECK(strstr(m, ".TP\n.B \\-z, \\-\\-level[=N]\na level\n") != NULL, "level: %s", m);
	CHECK(strstr(m, ".TP\n.B \\-\\-shared LIST\nfrom the group\n") != NULL, "group: %s", m);
	CHECK(strstr(m, ".SH SYNOPSIS\n.nf\nember t [options]\n.fi\n") != NULL, "synopsis: %s", m);
	free(m);
}

/* ---- typed bindings ------------------------------------------------------- */

struct inner {
	const char *name;
	bool flag;
};

struct bound {
	bool wide, fix;
	const char *title;
	int rows, view;
	u64 count;
	double secs;
	const char *state;
	struct inner in;
};

#define B(f) offsetof(struct bound, f)

static int set_state(void *field, const char *arg)
{
	if (strcmp(arg, "S") && strcmp(arg, "D")) {
		err_set("bad --state '%s' (S or D)", arg);
		return -1;
	}
	*(const char **)field = arg;
	return 0;
}

static const struct opt inner_opts[] = {
	OPT_STRING('n', "name", offsetof(struct inner, name), "NAME", "a name"),
	OPT_BOOL(0, "flag", offsetof(struct inner, flag), "a flag"),
	OPT_END,
};

static const struct opt bound_opts[] = {
	OPT_BOOL('w', "wide", B(wide), "wide"),
	OPT_FALSE(0, "no-fix", B(fix), "no fix"),
	OPT_STRING(0, "title", B(title), "TEXT", "a title"),
	OPT_INT(0, "rows", B(rows), "N", "rows", 1, 100, "--rows '%s': give 1 to 100"),
	OPT_U64(0, "count", B(count), "N", "count", 1, "bad --count '%s': 1 or more"),
	OPT_DOUBLE(0, "secs", B(secs), "SECS", "secs", 0, "bad --secs '%s': above 0"),
	OPT_CALLBACK(0, "state", OPT_ARG, B(state), "S", "state", set_state),
	OPT_SET(0, "folded", B(view), 1, 1, "folded"),
	OPT_SET(0, "flame", B(view), 2, 1, "flame"),
	OPT_SET(0, "threads", B(view), 3, 1, "threads"),
	OPT_INCLUDE_AT(inner_opts, B(in)),
	OPT_END,
};

static const struct opt_cmd bound_cmd = {
	.name = "b", .summary = "bound", .synopsis = "usage: ember b\n\n", .opts = bound_opts,
};

/* What fn(arg) wrote to stderr, NUL-terminated (caller frees). */
static char *stderr_of(int (*fn)(char **argv), char **argv, int *rc)
{
	fflush(stderr);
	int saved = dup(2);
	FILE *tmp = tmpfile();
	dup2(fileno(tmp), 2);
	*rc = fn(argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char *buf = xcalloc(512, 1);
	rewind(tmp);
	size_t n = fread(buf, 1, 511, tmp);
	buf[n] = 0;
	fclose(tmp);
	return buf;
}

static struct bound b;

static int parse_bound(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	memset(&b, 0, sizeof(b));
	b.fix = true;
	return opt_parse(&bound_cmd, argc, argv, &b);
}

static void test_bindings(void)
{
	char *argv[] = { "b", "-w", "--no-fix", "--title", "T", "--rows", "7", "--count", "9",
			 "--secs", "0.5", "--state", "D", "--flame", "-n", "x", "--flag", NULL };
	int rc = parse_bound(argv);
	CHECK(rc == -1, "rc %d", rc);
	CHECK(b.wide && !b.fix && !strcmp(b.title, "T") && b.rows == 7 && b.count == 9 &&
	      b.secs == 0.5 && !strcmp(b.state, "D") && b.view == 2, "stored wrong");
	CHECK(b.in.name && !strcmp(b.in.name, "x") && b.in.flag, "the group's struct");
}

/* Each bad value: exit 2 and its message. */
static void test_binding_errors(void)
{
	static const struct { const char *opt, *arg, *msg; } bad[] = {
		{ "--rows", "0", "ember b: --rows '0': give 1 to 100\n" },
		{ "--rows", "x", "ember b: --rows 'x': give 1 to 100\n" },
		{ "--count", "0", "ember b: bad --count '0': 1 or more\n" },
		{ "--secs", "0", "ember b: bad --secs '0': above 0\n" },
		{ "--state", "Q", "ember b: bad --state 'Q' (S or D)\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *argv[] = { "b", (char *)bad[i].opt, (char *)bad[i].arg, NULL };
		int rc;
		char *err = stderr_of(parse_bound, argv, &rc);
		CHECK(rc == EXIT_USAGE, "%s %s: rc %d", bad[i].opt, bad[i].arg, rc);
		CHECK(!strcmp(err, bad[i].msg), "%s %s: %s", bad[i].opt, bad[i].arg, err);
		free(err);
	}
}

static void test_exclusive(void)
{
	char *twice[] = { "b", "--folded", "--folded", NULL };
	CHECK(parse_bound(twice) == -1 && b.view == 1, "the same one twice");
	char *two[] = { "b", "--folded", "--threads", NULL };
	int rc;
	char *err = stderr_of(parse_bound, two, &rc);
	CHECK(rc == EXIT_USAGE, "rc %d", rc);
	CHECK(!strcmp(err, "ember b: --folded, --flame and --threads exclude each other: "
		      "pick one\n"), "%s", err);
	free(err);
}

/* ---- subcommands, operand, handover ---------------------------------------- */

static int ran;

static int run_a(int argc, char **argv)
{
	ran = argc * 10 + (argv[0][0] == 'a');
	return 0;
}

static int run_other(int argc, char **argv)
{
	ran = -argc;
	return 3;
}

static const struct opt_sub subs[] = { { "a", run_a }, { NULL, NULL } };

static const struct opt_cmd sub_cmd = {
	.name = "s", .summary = "subs", .synopsis = "usage: ember s a\n\n", .opts = bound_opts,
	.subs = subs,
};

static const struct opt_cmd file_cmd = {
	.name = "f", .summary = "file", .synopsis = "usage: ember f FILE\n\n",
	.opts = inner_opts, .operand = "file", .handover_option = "push",
	.handover = run_other,
};

static int run_sub_cmd(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	return opt_run(&sub_cmd, run_other, argc, argv);
}

static int parse_file(char **argv)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	struct inner in = {0};
	return opt_parse(&file_cmd, argc, argv, &in);
}

static void test_subcommands(void)
{
	char *a[] = { "s", "a", "x", NULL };
	ran = 0;
	CHECK(run_sub_cmd(a) == 0 && ran == 21, "ran %d", ran);
	char *bad[] = { "s", "z", NULL };
	int rc;
	char *err = stderr_of(run_sub_cmd, bad, &rc);
	CHECK(rc == EXIT_USAGE && !strcmp(err, "ember s: unknown subcommand 'z': the one there "
					 "is is 'a'\n"), "rc %d: %s", rc, err);
	free(err);
}

static void test_operand_and_handover(void)
{
	char *one[] = { "f", "file", NULL };
	CHECK(parse_file(one) == -1, "one operand");
	char *two[] = { "f", "a", "b", NULL };
	int rc;
	char *err = stderr_of(parse_file, two, &rc);
	CHECK(rc == EXIT_USAGE && !strcmp(err, "ember f: a: give one file: see 'ember f "
					 "--help'\n"), "rc %d: %s", rc, err);
	free(err);
	char *none[] = { "f", NULL };
	err = stderr_of(parse_file, none, &rc);
	CHECK(rc == EXIT_USAGE && !strcmp(err, "ember f: no file: give one file: see "
					 "'ember f --help'\n"), "rc %d: %s", rc, err);
	free(err);
	char *push[] = { "f", "-n", "x", "--push=u", NULL };
	CHECK(opt_run(&file_cmd, run_a, 4, push) == 3 && ran == -4, "handover");
	char *after[] = { "f", "--", "--push", NULL };
	CHECK(opt_run(&file_cmd, run_a, 3, after) == 0, "--push after --");
	char *pushy[] = { "f", "--pushy", NULL };
	CHECK(opt_run(&file_cmd, run_a, 2, pushy) == 0, "--pushy is not --push");
}

int main(void)
{
	RUN(test_bindings);
	RUN(test_binding_errors);
	RUN(test_exclusive);
	RUN(test_subcommands);
	RUN(test_operand_and_handover);
	RUN(test_parse_ids);
	RUN(test_stop_at_operand);
	RUN(test_bad_options);
	RUN(test_help_layout);
	RUN(test_list_and_man);
	return test_summary();
}
