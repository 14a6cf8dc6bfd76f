/* test-options.c - common/options.c: a table with an included group and
 * a heading parses short, long, optional-argument and grouped options to
 * their ids, stops at the first operand when asked, rejects unknown
 * options and missing values with exit 2, and lays out --help, the
 * --list-options dump and the man page from the same entries. */
#include <getopt.h>
#include <stdlib.h>

#include "common/common.h"
#include "common/options.h"
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

int main(void)
{
	RUN(test_parse_ids);
	RUN(test_stop_at_operand);
	RUN(test_bad_options);
	RUN(test_help_layout);
	RUN(test_list_and_man);
	return test_summary();
}
