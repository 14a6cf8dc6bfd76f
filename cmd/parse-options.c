/* parse-options.c - a command's option table turned into getopt_long's inputs,
 * its --help text, a man page and the --list-options dump (options-internal.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "cmd/cmd.h"

/* getopt_long values of the long options: the entry's index plus this,
 * so a long name needs no id of its own and never clashes with a letter. */
#define LONG_BASE 0x10000
enum { HIDDEN_LIST = 0x7f00, HIDDEN_MAN };

/* A flattened entry: the option and where its group's struct lies in the
 * command's (the sum of the OPT_INCLUDE_AT offsets above it). */
struct flat {
	const struct opt *o;
	size_t base;
};
typedef VEC(struct flat) opt_vec;

/* Every command's -h, listed after its own options. */
static const struct opt help_opt = OPT('h', 'h', "help", OPT_NO_ARG, NULL, "this help");

static bool is_end(const struct opt *o)
{
	return !o->id && !o->shortname && !o->longname && !o->help && !o->group;
}

static bool is_option(const struct opt *o)
{
	return o->shortname || o->longname;
}

/* The table with its included groups spliced in, headings kept. */
static void flatten(const struct opt *t, size_t base, opt_vec *out)
{
	for (; !is_end(t); t++) {
		if (t->group)
			flatten(t->group, base + t->off, out);
		else
			VEC_PUSH(out, ((struct flat){ t, base }));
	}
}

static const char *arg_colons(enum opt_arg a)
{
	return a == OPT_ARG ? ":" : a == OPT_OPT_ARG ? "::" : "";
}

static int getopt_has_arg(enum opt_arg a)
{
	return a == OPT_ARG ? required_argument : a == OPT_OPT_ARG ? optional_argument : no_argument;
}

/* getopt_long's short string and long options for the flattened table. */
static char *build_getopt(const struct opt_cmd *c, const opt_vec *v, struct option **longs)
{
	struct strbuf sb = {0};
	sb_puts(&sb, c->stop_at_operand ? "+:" : ":");
	struct option *lo = xcalloc(v->n + 4, sizeof(*lo));
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct opt *o = v->v[i].o;
		if (o->shortname) {
			sb_add(&sb, &o->shortname, 1);
			sb_puts(&sb, arg_colons(o->arg));
		}
		if (o->longname)
			lo[n++] = (struct option){ o->longname, getopt_has_arg(o->arg), NULL,
						   LONG_BASE + (int)i };
	}
	sb_puts(&sb, "h");
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n++] = (struct option){ "list-options", no_argument, NULL, HIDDEN_LIST };
	lo[n++] = (struct option){ "man", no_argument, NULL, HIDDEN_MAN };
	*longs = lo;
	return sb.s;
}

/* The index of the entry getopt_long's value stands for, or -1. */
static long entry_of(const opt_vec *v, int val)
{
	if (val >= LONG_BASE && (size_t)(val - LONG_BASE) < v->n)
		return val - LONG_BASE;
	for (size_t i = 0; i < v->n; i++)
		if (val > 0 && v->v[i].o->shortname == val)
			return (long)i;
	return -1;
}

/* "--wide=1" for a --wide that takes no value: says so (1), rather than
 * calling a known option unknown. */
static int flag_given_value(const struct opt_cmd *c, const opt_vec *v, const char *text)
{
	const char *eq = strchr(text, '=');
	if (strncmp(text, "--", 2) || !eq)
		return 0;
	for (size_t i = 0; i < v->n; i++) {
		const char *l = v->v[i].o->longname;
		if (l && v->v[i].o->arg == OPT_NO_ARG && strlen(l) == (size_t)(eq - text - 2) &&
		    !strncmp(l, text + 2, strlen(l))) {
			cmd_error(c->name, "option '--%s' takes no value: give it alone (see "
				  "'ember %s --help')", l, c->name);
			return 1;
		}
	}
	return 0;
}

/* A number kind's value into its field: 1, or -1 with the entry's message. */
static int store_number(const struct opt *o, void *field, const char *arg)
{
	int i = 0;
	u64 u = 0;
	double d = 0;
	bool ok;
	if (o->kind == OPT_K_INT)
		ok = parse_int(arg, &i) == 0 && i >= o->lo && i <= o->hi;
	else if (o->kind == OPT_K_U64)
		ok = parse_u64(arg, &u) == 0 && (double)u >= o->lo;
	else
		ok = parse_double(arg, &d) == 0 && d > o->lo;
	if (!ok) {
		err_set(o->bad, arg);
		return -1;
	}
	if (o->kind == OPT_K_INT)
		*(int *)field = i;
	else if (o->kind == OPT_K_U64)
		*(u64 *)field = u;
	else
		*(double *)field = d;
	return 1;
}

/* A bound entry's value stored: 1, -1 with err_set(), -2 said. */
static int store(const struct opt *o, void *field, const char *arg)
{
	switch (o->kind) {
	case OPT_K_TRUE: *(bool *)field = true; return 1;
	case OPT_K_FALSE: *(bool *)field = false; return 1;
	case OPT_K_STRING: *(const char **)field = arg; return 1;
	case OPT_K_SET: *(int *)field = o->value; return 1;
	case OPT_K_CALLBACK: {
		int rc = o->fn(field, arg);
		return rc < 0 ? rc : 1;
	}
	default: return store_number(o, field, arg);
	}
}

/* Per parse: the first entry given of each exclusive group. */
struct parse_state {
	const struct opt_cmd *c;
	const opt_vec *v;
	void *ctx;
	long excl_first[16];
};

/* An exclusive group's refusal: its members named in table order. */
static void excl_refuse(const struct parse_state *st, int group)
{
	struct strbuf sb = {0};
	size_t n = 0, k = 0;
	for (size_t i = 0; i < st->v->n; i++)
		n += st->v->v[i].o->excl == group;
	for (size_t i = 0; i < st->v->n; i++) {
		if (st->v->v[i].o->excl != group)
			continue;
		k++;
		sb_printf(&sb, "%s--%s", k == 1 ? "" : k == n ? " and " : ", ",
			  st->v->v[i].o->longname);
	}
	cmd_error(st->c->name, "%s exclude each other: pick one", sb.s);
	sb_free(&sb);
}

/* The entry at i taken: 1, 0 unknown to the command, -1 err_set, -2 said. */
static int take_entry(struct parse_state *st, long i)
{
	const struct flat *f = &st->v->v[i];
	int x = f->o->excl;
	if (x > 0 && x < (int)ARRAY_SIZE(st->excl_first)) {
		if (st->excl_first[x] >= 0 && st->excl_first[x] != i) {
			excl_refuse(st, x);
			return -2;
		}
		st->excl_first[x] = i;
	}
	char *at = st->ctx ? (char *)st->ctx + f->base : NULL;
	if (f->o->kind != OPT_BY_ID)      /* no args struct (a help request): nowhere to store */
		return at ? store(f->o, at + f->o->off, optarg) : 0;
	return st->c->one ? st->c->one(at, f->o->id, optarg) : 0;
}

/* What one getopt_long value means: -1 go on, else the exit status. */
static int take(struct parse_state *st, int val, char **argv)
{
	const struct opt_cmd *c = st->c;
	switch (val) {
	case 'h': opt_help(c, stdout); return EXIT_OK;
	case HIDDEN_LIST: opt_list(c, stdout); return EXIT_OK;
	case HIDDEN_MAN: opt_man(c, stdout); return EXIT_OK;
	}
	long i = val == ':' || val == '?' ? -1 : entry_of(st->v, val);
	int rc = i >= 0 ? take_entry(st, i) : 0;
	if (rc == 1)
		return -1;
	if (rc == -1)
		cmd_error(c->name, "%s", err_msg());
	else if (rc == 0 && !flag_given_value(c, st->v, argv[optind - 1]))
		cmd_bad_option(c->name, val, argv[optind - 1]);
	return EXIT_USAGE;
}

/* The declared operand: exactly one word, not an option (as verify has
 * always checked it, on the words as given). */
static int check_operand(const struct opt_cmd *c, int argc, char **argv)
{
	if (argc == 2 && argv[1][0] != '-')
		return -1;
	cmd_error(c->name, "%s: give one %s: see 'ember %s --help'",
		  argc < 2 ? "no file" : argv[1], c->operand, c->name);
	return EXIT_USAGE;
}

int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *ctx)
{
	opt_vec v = {0};
	flatten(c->opts, 0, &v);
	struct option *longs;
	char *shorts = build_getopt(c, &v, &longs);
	struct parse_state st = { .c = c, .v = &v, .ctx = ctx };
	for (size_t i = 0; i < ARRAY_SIZE(st.excl_first); i++)
		st.excl_first[i] = -1;
	int val, rc = -1;
	optind = 0;     /* a fresh start, '+' read again (script runs bio's parse) */
	opterr = 0;
	while (rc < 0 && (val = getopt_long(argc, argv, shorts, longs, NULL)) != -1)
		rc = take(&st, val, argv);
	free(shorts);
	free(longs);
	VEC_FREE(&v);
	if (rc < 0 && c->operand)
		rc = check_operand(c, argc, argv);
	return rc;
}

/* ---- subcommands and handovers ---------------------------------------------- */

/* Whether the line has the handover option before any "--". */
static bool hands_over(const struct opt_cmd *c, int argc, char **argv)
{
	size_t n = strlen(c->handover_option);
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, c->handover_option, n) &&
		    (!argv[i][2 + n] || argv[i][2 + n] == '='))
			return true;
	return false;
}

/* The subcommand argv[1] names; no word or a help request answered. */
static int run_sub(const struct opt_cmd *c, int argc, char **argv)
{
	if (argc < 2) {
		opt_help(c, stderr);
		return EXIT_USAGE;
	}
	/* -h, --help and the hidden dumps may come before the subcommand:
	 * they take no value and stop at once, so no context is needed. */
	static const char *const asks[] = { "-h", "--help", "--list-options", "--man" };
	for (size_t i = 0; i < ARRAY_SIZE(asks); i++)
		if (!strcmp(argv[1], asks[i]))
			return opt_parse(c, 2, argv, NULL);
	for (const struct opt_sub *s = c->subs; s->name; s++)
		if (!strcmp(argv[1], s->name))
			return s->run(argc - 1, argv + 1);
	struct strbuf sb = {0};
	for (const struct opt_sub *s = c->subs; s->name; s++)
		sb_printf(&sb, "%s'%s'", s == c->subs ? "" : s[1].name ? ", " : " or ", s->name);
	cmd_error(c->name, "unknown subcommand '%s': %s %s", argv[1],
		  c->subs[1].name ? "the ones there are are" : "the one there is is", sb.s);
	sb_free(&sb);
	return EXIT_USAGE;
}

int opt_run(const struct opt_cmd *c, int (*run)(int, char **), int argc, char **argv)
{
	if (c->handover_option && hands_over(c, argc, argv))
		return c->handover(argc, argv);
	if (c->subs)
		return run_sub(c, argc, argv);
	return run(argc, argv);
}

/* ---- --help ---------------------------------------------------------------- */

/* "-i, --input FILE", "--call-graph[=MODE]", "-G": how the option is written. */
static void spelling(const struct opt *o, struct strbuf *sb)
{
	const char *a = o->argname ? o->argname : "ARG";
	if (o->shortname) {
		sb_printf(sb, "-%c", o->shortname);
		if (!o->longname && o->arg == OPT_ARG)
			sb_printf(sb, " %s", a);
		else if (!o->longname && o->arg == OPT_OPT_ARG)
			sb_printf(sb, "[%s]", a);
	}
	if (!o->longname)
		return;
	sb_printf(sb, "%s--%s", o->shortname ? ", " : "", o->longname);
	if (o->arg == OPT_ARG)
		sb_printf(sb, " %s", a);
	else if (o->arg == OPT_OPT_ARG)
		sb_printf(sb, "[=%s]", a);
}

/* Length of the first line of s. */
static size_t line_len(const char *s)
{
	const char *nl = strchr(s, '\n');
	return nl ? (size_t)(nl - s) : strlen(s);
}

static void help_option(const struct opt *o, int column, FILE *out)
{
	struct strbuf left = {0};
	sb_puts(&left, o->shortname ? "  " : "      ");
	spelling(o, &left);
	const char *h = o->help ? o->help : "";
	fputs(left.s, out);
	int len = (int)left.len;
	if (*h && len >= column && len + 2 + (int)line_len(h) > 80)
		fprintf(out, "\n%*s", column, "");
	else if (*h)
		fprintf(out, "%*s", len < column ? column - len : 2, "");
	for (const char *p = h; *p;) {
		size_t n = line_len(p);
		fwrite(p, 1, n, out);
		p += n;
		if (*p == '\n' && *++p)
			fprintf(out, "\n%*s", column, "");
	}
	fputc('\n', out);
	sb_free(&left);
}

void opt_help(const struct opt_cmd *c, FILE *out)
{
	opt_vec v = {0};
	flatten(c->opts, 0, &v);
	int column = c->column ? c->column : 24;
	fputs(c->synopsis, out);
	for (size_t i = 0; i < v.n; i++) {
		if (is_option(v.v[i].o))
			help_option(v.v[i].o, column, out);
		else
			fprintf(out, "%s\n", v.v[i].o->help);
	}
	help_option(&help_opt, column, out);
	if (c->notes)
		fprintf(out, "\n%s", c->notes);
	VEC_FREE(&v);
}

void opt_list(const struct opt_cmd *c, FILE *out)
{
	opt_vec v = {0};
	flatten(c->opts, 0, &v);
	VEC_PUSH(&v, ((struct flat){ &help_opt, 0 }));
	for (size_t i = 0; i < v.n; i++) {
		const struct opt *o = v.v[i].o;
		if (!is_option(o))
			continue;
		if (o->shortname)
			fprintf(out, "-%c", o->shortname);
		else
			fputs("-", out);
		if (o->longname)
			fprintf(out, " --%s", o->longname);
		else
			fputs(" -", out);
		const char *a = o->argname ? o->argname : "ARG";
		if (o->arg == OPT_ARG)
			fprintf(out, " %s", a);
		else if (o->arg == OPT_OPT_ARG)
			fprintf(out, " [=%s]", a);
		fputc('\n', out);
	}
	VEC_FREE(&v);
}

/* ---- man page ---------------------------------------------------------------- */

/* n bytes of s as roff text: backslashes and dashes escaped, a line that
 * would start with a control character guarded. */
static void roff(const char *s, size_t n, FILE *out)
{
	if (n && (*s == '.' || *s == '\''))
		fputs("\\&", out);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			fputs("\\e", out);
		else if (s[i] == '-')
			fputs("\\-", out);
		else
			fputc(s[i], out);
	}
}

/* Text in roff lines; a blank line starts a paragraph. */
static void roff_text(const char *s, FILE *out)
{
	while (*s) {
		size_t n = line_len(s);
		while (n && s[0] == ' ') {
			s++;
			n--;
		}
		if (!n)
			fputs(".PP\n", out);
		else {
			roff(s, n, out);
			fputc('\n', out);
		}
		s += n;
		if (*s == '\n')
			s++;
	}
}

static void man_option(const struct opt *o, FILE *out)
{
	struct strbuf sb = {0};
	spelling(o, &sb);
	fputs(".TP\n.B ", out);
	roff(sb.s, sb.len, out);
	fputc('\n', out);
	roff_text(o->help ? o->help : "", out);
	sb_free(&sb);
}

/* The synopsis' first paragraph, less "usage: ", is the SYNOPSIS; the
 * rest the DESCRIPTION. */
static void man_synopsis(const struct opt_cmd *c, FILE *out)
{
	const char *s = c->synopsis;
	const char *end = strstr(s, "\n\n");
	end = end ? end + 1 : s + strlen(s);
	fputs(".SH SYNOPSIS\n.nf\n", out);
	while (s < end) {
		size_t n = line_len(s);
		const char *p = s;
		if (!strncmp(p, "usage: ", 7))
			p += 7;
		roff(p, (size_t)(s + n - p), out);
		fputc('\n', out);
		s += n + 1;
	}
	fputs(".fi\n.SH DESCRIPTION\n", out);
	roff_text(*end == '\n' ? end + 1 : end, out);
}

void opt_man(const struct opt_cmd *c, FILE *out)
{
	opt_vec v = {0};
	flatten(c->opts, 0, &v);
	fprintf(out, ".\\\" ember-%s.1 - generated by 'ember %s --man' from its option table "
		"(make man); do not edit\n", c->name, c->name);
	fputs(".TH EMBER-", out);
	for (const char *p = c->name; *p; p++)
		fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, out);
	fputs(" 1 \"\" ember \"ember manual\"\n.SH NAME\nember\\-", out);
	roff(c->name, strlen(c->name), out);
	fputs(" \\- ", out);
	roff(c->summary, strlen(c->summary), out);
	fputc('\n', out);
	man_synopsis(c, out);
	fputs(".SH OPTIONS\n", out);
	for (size_t i = 0; i < v.n; i++) {
		if (is_option(v.v[i].o))
			man_option(v.v[i].o, out);
		else {
			fputs(".PP\n", out);
			roff_text(v.v[i].o->help, out);
		}
	}
	man_option(&help_opt, out);
	if (c->notes) {
		fputs(".SH NOTES\n", out);
		roff_text(c->notes, out);
	}
	fputs(".SH EXIT STATUS\n0 on success, 1 on a runtime error, 2 on a usage error "
	      "(a bad option or value: one line says which).\n"
	      ".SH SEE ALSO\n.BR ember (1)\n", out);
	VEC_FREE(&v);
}
