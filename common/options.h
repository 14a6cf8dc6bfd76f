/* options.h - one option table per command: getopt_long's short string
 * and long options, the --help text, the man page and the --list-options
 * dump (for completion and the docs test) all come from it, so what a
 * command accepts and what it says it accepts cannot drift apart.
 *
 *   static const struct opt opts[] = {
 *       OPT('i', 'i', "input", OPT_ARG, "FILE", "data file (default ember.data)"),
 *       OPT(OPT_X, 0, "wide", OPT_NO_ARG, NULL, "wide rows\nsecond help line"),
 *       OPT_INCLUDE(rp_filter_opts),      shared groups, defined once
 *       OPT_TEXT("Output:"),              a heading between options
 *       OPT_END,
 *   };
 */
#ifndef EMBER_OPTIONS_H
#define EMBER_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

enum opt_arg { OPT_NO_ARG, OPT_ARG, OPT_OPT_ARG };

struct opt {
	int id;                  /* handed to the command's parse function */
	char shortname;          /* 'i' for -i; 0 for none */
	const char *longname;    /* "input" for --input; NULL for none */
	enum opt_arg arg;
	const char *argname;     /* the placeholder in --help: "FILE" */
	const char *help;        /* lines separated by '\n' */
	const struct opt *group; /* set (nothing else is): that table, included */
};
/* An option: id, short name, long name, argument kind, placeholder, help. */
#define OPT(id, s, l, a, n, h) { (id), (s), (l), (a), (n), (h), NULL }
#define OPT_INCLUDE(g) { .group = (g) }
#define OPT_TEXT(t)    { .help = (t) }
#define OPT_END        { 0 }

struct opt_cmd {
	const char *name;        /* "report": messages, man page name */
	const char *summary;     /* one line for 'ember --help' and NAME */
	const char *synopsis;    /* --help's text before the options */
	const struct opt *opts;
	const char *notes;       /* --help's text after the options, or NULL */
	int column;              /* where help text starts (0: 24) */
	bool stop_at_operand;    /* options end at the first operand (-- CMD) */
	/* Takes one option: 1 taken, 0 not (named as unknown), -1 with
	 * err_set() on a bad value (printed "ember NAME: msg"), -2 when it
	 * printed its own message.  Any of these but 1 exits 2. */
	int (*one)(void *ctx, int id, const char *arg);
};

/* Parses argv[1..] (optind restarts at 1); -h/--help prints the help,
 * --list-options and --man the hidden dumps (exit 0).  Returns -1 to go
 * on with the operands at optind, or the exit status to stop with. */
int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *ctx);
void opt_help(const struct opt_cmd *c, FILE *out);
/* One line per option: "-i --input FILE" ('-' for a missing name,
 * "[=ARG]" for an optional argument), for scripts. */
void opt_list(const struct opt_cmd *c, FILE *out);
/* A man page (roff) from the table, its help texts and notes. */
void opt_man(const struct opt_cmd *c, FILE *out);

#endif
