/* options-internal.h - the command layer's option engine (parse-options.c),
 * the only parser of argv: one option table per command, from which
 * getopt_long's short string and long options, the --help text, the man
 * page and the --list-options dump (for completion and the docs test) all
 * come, so what a command accepts and what it says it accepts cannot
 * drift apart.
 *
 * Most entries store their value themselves (typed bindings), at an
 * offset into the command's args struct (the ctx handed to opt_parse), so
 * a table needs no context for --help, --man and the dumps:
 *
 *   #define A(f) offsetof(struct args, f)
 *   static int set_state(void *field, const char *arg);  0, or -1 err_set()
 *   static const struct opt opts[] = {
 *       OPT_STRING('i', "input", A(input), "FILE", "data file"),
 *       OPT_BOOL(0, "wide", A(wide), "wide rows\nsecond help line"),
 *       OPT_INT(0, "rows", A(rows), "N", "the top N", 1, INT_MAX,
 *               "--rows '%s': give a count of rows, 1 or more"),
 *       OPT_CALLBACK(0, "state", OPT_ARG, A(states), "LETTERS", "only these",
 *                    set_state),
 *       OPT_SET(0, "folded", A(view), VIEW_FOLDED, 1, "folded lines"),
 *       OPT_XCALLBACK(1, 0, "flame", OPT_ARG, 0, "FILE", "a graph", set_flame),
 *       OPT_INCLUDE_AT(rp_view_opts, A(rp)),     a group over struct rp_opts
 *       OPT_TEXT("Output:"),                     a heading between options
 *       OPT_END,
 *   };
 *
 * OPT_BOOL stores true, OPT_FALSE false (the --no-X of a pair), OPT_STRING
 * the argument (const char *), OPT_SET an int (an enum's value); OPT_INT
 * (int), OPT_U64 (u64) and OPT_DOUBLE take the value between the bounds
 * (OPT_U64: LO or more; OPT_DOUBLE: above LO), else fail with the
 * message, "%s" the value.
 * OPT_CALLBACK's function gets the field (offset 0: the struct itself)
 * and the argument: 0 taken, -1 err_set() (printed "ember NAME: msg"), -2
 * when it printed its own message.  A group's offsets are from its own
 * struct; OPT_INCLUDE_AT says where that struct lies in the command's
 * (OPT_INCLUDE: at 0, or a group without bindings).
 *
 * Exclusive options share a group number (OPT_SET's and OPT_XCALLBACK's
 * x; 0 for none): a second, different one of a group is refused
 * with "--a, --b and --c exclude each other: pick one", named in table
 * order.  The same one twice is taken.
 *
 * A command may have subcommands (subs: `ember sched lat`): opt_run runs
 * the one the first word names; its synopsis shows them.  It may declare
 * one operand (operand: `ember verify FILE`), which opt_parse checks, and
 * a handover: an option that, anywhere on the line before "--", hands the
 * whole line to another command (`record --push` is `push`).
 *
 * The old way stays for what binds nothing: OPT(id, ...) hands its id to
 * the command's `one` function. */
#ifndef EMBER_CMD_OPTIONS_INTERNAL_H
#define EMBER_CMD_OPTIONS_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/common.h"

enum opt_arg { OPT_NO_ARG, OPT_ARG, OPT_OPT_ARG };

/* What an entry does with its value: OPT_BY_ID hands it to `one`. */
enum opt_kind {
	OPT_BY_ID, OPT_K_TRUE, OPT_K_FALSE, OPT_K_STRING, OPT_K_SET, OPT_K_INT, OPT_K_U64,
	OPT_K_DOUBLE, OPT_K_CALLBACK,
};

struct opt {
	int id;                  /* OPT_BY_ID: handed to the command's one() */
	char shortname;          /* 'i' for -i; 0 for none */
	const char *longname;    /* "input" for --input; NULL for none */
	enum opt_arg arg;
	const char *argname;     /* the placeholder in --help: "FILE" */
	const char *help;        /* lines separated by '\n' */
	const struct opt *group; /* set: that table, included (at off) */
	enum opt_kind kind;
	size_t off;              /* the field: its offset in the args struct */
	int (*fn)(void *field, const char *arg);   /* OPT_K_CALLBACK */
	double lo, hi;           /* number kinds: the bounds */
	const char *bad;         /* number kinds: the message, "%s" the value */
	int value;               /* OPT_K_SET: the value stored */
	int excl;                /* exclusive group (1, 2, ...), 0 none */
};
/* An option: id, short name, long name, argument kind, placeholder, help. */
#define OPT(i_, s_, l_, a_, n_, h_) { .id = (i_), .shortname = (s_), .longname = (l_), \
				      .arg = (a_), .argname = (n_), .help = (h_) }
/* Typed bindings: short name, long name, offset of the field, ... */
#define OPT_BOOL(s_, l_, o_, h_) { .shortname = (s_), .longname = (l_), .help = (h_), \
				   .kind = OPT_K_TRUE, .off = (o_) }
#define OPT_FALSE(s_, l_, o_, h_) { .shortname = (s_), .longname = (l_), .help = (h_), \
				    .kind = OPT_K_FALSE, .off = (o_) }
#define OPT_STRING(s_, l_, o_, n_, h_) { .shortname = (s_), .longname = (l_), .arg = OPT_ARG, \
	.argname = (n_), .help = (h_), .kind = OPT_K_STRING, .off = (o_) }
/* Stores value v in an int (an enum); x: its exclusive group, or 0. */
#define OPT_SET(s_, l_, o_, v_, x_, h_) { .shortname = (s_), .longname = (l_), .help = (h_), \
	.kind = OPT_K_SET, .off = (o_), .value = (v_), .excl = (x_) }
#define OPT_NUM(k_, s_, l_, o_, n_, h_, lo_, hi_, b_) { .shortname = (s_), .longname = (l_), \
	.arg = OPT_ARG, .argname = (n_), .help = (h_), .kind = (k_), .off = (o_), .lo = (lo_), \
	.hi = (hi_), .bad = (b_) }
#define OPT_INT(s_, l_, o_, n_, h_, lo_, hi_, b_) \
	OPT_NUM(OPT_K_INT, s_, l_, o_, n_, h_, lo_, hi_, b_)
#define OPT_U64(s_, l_, o_, n_, h_, lo_, b_) OPT_NUM(OPT_K_U64, s_, l_, o_, n_, h_, lo_, 0, b_)
#define OPT_DOUBLE(s_, l_, o_, n_, h_, lo_, b_) \
	OPT_NUM(OPT_K_DOUBLE, s_, l_, o_, n_, h_, lo_, 0, b_)
/* A callback: argument kind a (OPT_ARG, OPT_NO_ARG: arg NULL);
 * OPT_XCALLBACK one of exclusive group x. */
#define OPT_XCALLBACK(x_, s_, l_, a_, o_, n_, h_, f_) { .shortname = (s_), .longname = (l_), \
	.arg = (a_), .argname = (n_), .help = (h_), .kind = OPT_K_CALLBACK, .off = (o_), \
	.fn = (f_), .excl = (x_) }
#define OPT_CALLBACK(s_, l_, a_, o_, n_, h_, f_) OPT_XCALLBACK(0, s_, l_, a_, o_, n_, h_, f_)
#define OPT_INCLUDE(g) { .group = (g) }
#define OPT_INCLUDE_AT(g, o) { .group = (g), .off = (o) }
#define OPT_TEXT(t)    { .help = (t) }
#define OPT_END        { 0 }

struct opt_cmd;
/* A subcommand: its name and what runs it (argv[0] its name). */
struct opt_sub {
	const char *name;
	int (*run)(int argc, char **argv);
};

struct opt_cmd {
	const char *name;        /* "report": messages, man page name */
	const char *summary;     /* one line for 'ember --help' and NAME */
	const char *synopsis;    /* --help's text before the options */
	const struct opt *opts;
	const char *notes;       /* --help's text after the options, or NULL */
	int column;              /* where help text starts (0: 24) */
	bool stop_at_operand;    /* options end at the first operand (-- CMD) */
	/* Takes one OPT() option: 1 taken, 0 not (named as unknown), -1 with
	 * err_set() on a bad value (printed "ember NAME: msg"), -2 when it
	 * printed its own message.  Any of these but 1 exits 2.  NULL: none. */
	int (*one)(void *ctx, int id, const char *arg);
	/* Set: exactly one word after the command, not an option ("file"),
	 * else "ember NAME: WORD: give one file: see 'ember NAME --help'"
	 * (WORD the first word, or "no file"). */
	const char *operand;
	/* Subcommands, ended by { NULL }: the first word picks one. */
	const struct opt_sub *subs;
	/* A long option that hands the whole line to another command. */
	const char *handover_option;
	int (*handover)(int argc, char **argv);
};

/* Parses argv[1..] (optind restarts at 1); -h/--help prints the help,
 * --list-options and --man the hidden dumps (exit 0).  Returns -1 to go
 * on with the operands at optind, or the exit status to stop with. */
int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *ctx);
/* Runs a command (argv[0] its name): its handover when the line has that
 * option, the subcommand the first word names, else run.  Returns the
 * exit status. */
int opt_run(const struct opt_cmd *c, int (*run)(int, char **), int argc, char **argv);
void opt_help(const struct opt_cmd *c, FILE *out);
/* One line per option: "-i --input FILE" ('-' for a missing name,
 * "[=ARG]" for an optional argument), for scripts. */
void opt_list(const struct opt_cmd *c, FILE *out);
/* A man page (roff) from the table, its help texts and notes. */
void opt_man(const struct opt_cmd *c, FILE *out);

/* ==== The shared groups: the replay's (replay-options.c), live's
 * (live-options.c) and the tools' (tool-options.c). ==== */

struct rp_opts;
struct live_opts;
struct live_view;
struct tool_target;

/* The shared option groups, each defined once and included in the tables
 * of the commands that take it, at their struct rp_opts
 * (OPT_INCLUDE_AT(rp_view_opts, offsetof(struct args, rp))).
 * rp_view_opts is all of them but -i. */
extern const struct opt rp_input_opts[];     /* -i, --input FILE */
extern const struct opt rp_pid_tid_opts[];   /* --pid LIST, --tid LIST */
extern const struct opt rp_short_pid_opts[]; /* -p LIST, as --pid */
extern const struct opt rp_sample_opts[];    /* --comm, --cpu, --time */
extern const struct opt rp_symbol_opts[];    /* --no-demangle, --kallsyms */
extern const struct opt rp_unwind_opts[];    /* --unwinder, --[no-]leaf-fix, --[no-]inline */
extern const struct opt rp_view_opts[];
/* Callbacks on a struct rp_filter: --pid, --tid, --time's lists. */
int rp_set_pids(void *filter, const char *arg);
int rp_set_tids(void *filter, const char *arg);
int rp_set_time(void *filter, const char *arg);

/* A progress line on stderr for rp_opts.progress when stderr is a
 * terminal: rp_progress_if_tty(&opts); the line itself (total 0: done,
 * erased), for live_view's file path. */
void rp_progress_if_tty(struct rp_opts *o);
void rp_progress_line(u64 done, u64 total);

/* The option groups, for the views' tables (included at their struct
 * live_opts): targets (-a, -C, -t, -o, -F, --duration), -p as a target,
 * and --interval/--count. */
extern const struct opt live_target_opts[];
/* Parts of it, for views that take fewer targets (bio: no -t, no -F):
 * -a and -C; --duration, -o and --mmap-pages. */
extern const struct opt live_system_opts[];
extern const struct opt live_keep_opts[];
extern const struct opt live_pid_opts[];
extern const struct opt live_interval_opts[];
extern const struct opt live_stack_opts[];     /* --call-graph fp|dwarf */

/* Callbacks on a struct live_opts: -C's and -p's lists. */
int live_set_cpus(void *live_opts, const char *arg);
int live_set_pids(void *live_opts, const char *arg);
/* --duration and --count of the struct live_opts at offset base, with
 * their messages, for tables that word their help their own way. */
#define LIVE_DURATION_OPT(base, help) OPT_DOUBLE(0, "duration", \
	(base) + offsetof(struct live_opts, duration), "SECS", help, 0, \
	"bad --duration '%s': give a positive number of seconds")
#define LIVE_COUNT_OPT(base, help) OPT_U64(0, "count", (base) + offsetof(struct live_opts, count), \
	"N", help, 1, "bad --count '%s': give a number of intervals, 1 or more")

/* After opt_parse, whose result rc is: a stray operand (a command comes
 * after "--") and the live options' conflicts said.  -1 to go on, else
 * the exit status (rc when it was one). */
int live_view_parse(struct live_view *v, int rc, int argc, char **argv);

/* After the options: the operands (a command after --) and the checks.
 * -1 to go on, or the exit status. */
int tool_finish_target(const char *cmd, struct tool_target *tg, int argc, char **argv);

/* The options every tool shares, bound into struct tool_target. */
extern const struct opt tool_target_opts[];     /* -i -o -a -p -C --duration --tid --comm --time */
extern const struct opt tool_target_opts_no_c[];  /* the same, --cpu without -C */
/* --interval and --count: live's live_interval_opts. */

#endif
