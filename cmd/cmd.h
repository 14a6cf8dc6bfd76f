/* cmd.h - the command layer: every `ember COMMAND` (cmd-*.c, one file a
 * command, as git's builtin/), their option tables over the option engine
 * (parse-options.c, options-internal.h: the only parser of argv, with the
 * shared groups of replay-options.c, live-options.c and tool-options.c),
 * and what they share on the command line (options.c): collapse's
 * options, the warnings after a replay, and the helpers two commands
 * share.  Only ember.c and cmd/ include this header. */
#ifndef EMBER_CMD_H
#define EMBER_CMD_H

#include "cmd/options-internal.h"
#include "live/live.h"
#include "replay/replay.h"
#include "views/collapse/collapse.h"
#include "views/sched/sched.h"

/* ---- How a command speaks (say.c) ------------------------------------ */

/* Exit statuses of every command. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* For commands only: print "ember CMD: message" to stderr. */
void cmd_error(const char *cmd, const char *fmt, ...) PRINTF_LIKE(2, 3);
void cmd_warn(const char *cmd, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Bad input a command found: prints "ember CMD: WHAT: fix", WHAT from
 * fmt, and returns -1. */
int cmd_bad(const char *cmd, const char *fix, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* rc, having printed the library's message (err_msg) when rc < 0: for
 * `return cmd_said(CMD, lib_call(...));`. */
int cmd_said(const char *cmd, int rc);
/* For opt_parse (parse-options.c), whose getopt_long prints nothing
 * itself: prints that option `text` needs a value (opt == ':') or is
 * unknown, pointing at 'ember CMD --help'.  Returns EXIT_USAGE. */
int cmd_bad_option(const char *cmd, int opt, const char *text);
/* For a word left over after the options: names it and points at
 * 'ember HELP --help' (HELP: the command, e.g. "sched lat").  EXIT_USAGE. */
int cmd_extra_argument(const char *cmd, const char *help, const char *text);
/* Ends the process by signal sig as if it had not been caught (output
 * flushed first), so a shell sees 128 + sig and a calling script stops
 * too, as perf does after Ctrl-C.  Returns only if sig is ignored. */
void cmd_die_of(int sig);

/* ---- Views that run live or on a file (live-view.c) -------------------- */

/* A live view's end (live-view.c): the recording stopped and waited for, its
 * warnings printed as cmd's, its failure printed; the exit status: the
 * recording's failure, else status when not 0, else the command's (as
 * record gives it).  Frees l. */
int live_end(struct live *l, const char *cmd, int status);

/* ---- A view's command line (live-view.c) -----------------------------------
 * What every view that runs live given a target, or else on a file, goes
 * through: its parse (cmd/'s live option groups and live_view_parse) fills
 * opts, then live_view_start, its own work, and live_view_end on
 * every path, which frees what was parsed. */
struct live_view {
	const char *cmd;           /* messages: "sched" */
	const char *help;          /* 'ember HELP --help': "sched lat" */
	bool all_by_default;       /* no target: -a (top), not a file */
	struct rp_opts *rp;        /* the view's replay options */
	struct live_opts opts;
	struct live *live;         /* the recording, while live */
	/* A file's progress line on a terminal (the command layer's). */
	void (*progress)(u64 done, u64 total);
};
/* Whether a target was given: the view runs live. */
bool live_view_target(const struct live_view *v);
/* A target: the recording of kind starts, rp to read its stream.  A file:
 * a progress line on a terminal, and --interval's ticks.  -1 to go on,
 * else the exit status (said). */
int live_view_start(struct live_view *v, enum rec_live_kind kind);
/* The end of every path: live_end when live, the options freed; the exit
 * status. */
int live_view_end(struct live_view *v, int status);

int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_offcpu(int argc, char **argv);
int cmd_bio(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_btrace(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);   /* cmd-export.c, over export/ */
int cmd_push(int argc, char **argv);     /* cmd-push.c, over export/ and push/ */
int cmd_record(int argc, char **argv);
/* `ember stat`: counting like perf stat, --ipc and --tlb breakdowns. */
int cmd_stat(int argc, char **argv);
/* `ember list`: the events and metric sets this machine offers. */
int cmd_list(int argc, char **argv);
int cmd_serve(int argc, char **argv);
/* `ember trace`: bpftrace's language (so far its probe listing). */
int cmd_trace(int argc, char **argv);

/* Their option tables (options-internal.h): --help, man pages, completion. */
extern const struct opt_cmd report_cmd, script_cmd, collapse_cmd, flame_cmd, offcpu_cmd,
	sched_cmd, bio_cmd, btrace_cmd, verify_cmd, archive_cmd, top_cmd, export_cmd, push_cmd,
	record_cmd, stat_cmd, list_cmd, serve_cmd, trace_cmd;

/* The tools' commands (cmd-tools.c): the i-th one's option table
 * (NULL past the last), in the order 'ember --help' lists them, and the
 * command that runs any of them (argv[0] names the tool). */
const struct opt_cmd *tool_command(size_t i);
int cmd_tool(int argc, char **argv);

/* collapse's options, shared by flame's data-file input: its own, bound
 * into a struct collapse_args (bare --pid/--tid name process frames
 * here, --pid=LIST still filters), then the shared view options at the
 * command's struct rp_opts (collapse_rp_options). */
struct collapse_args {
	struct collapse_opts *c;
	struct rp_opts *rp;
};
extern const struct opt collapse_options[], collapse_rp_options[];

/* ---- After a replay (options.c, notes.c) ------------------------------- */

/* The warnings every analysis owes its user after a replay: a file not
 * closed cleanly, untrusted files, an input error. */
void rp_warn_summary(const char *cmd, const struct rp_summary *sum, const char *input);
/* "N empty intervals not shown ..." when a long run was skipped (part of
 * rp_warn_summary and rp_warn_view; bio says it for blktrace captures). */
void rp_warn_empty_intervals(const char *cmd, const struct rp_summary *sum);
/* The same for a view whose figures lost events skew (offcpu, bio): a
 * file not closed cleanly, the events lost and what that did to the view
 * (lost_effect), an input error. */
void rp_warn_view(const char *cmd, const struct rp_summary *sum, const char *input,
		  const char *lost_effect);

/* For the commands that fold (collapse, flame): prints collapse_replay's
 * notes and its error (rc -1) as "ember CMD: ..."; returns the exit
 * status. */
int collapse_say(const char *cmd, const char *input, int rc, const struct collapse_notes *n);
/* For the commands that run offcpu_run (offcpu, flame
 * --wall): prints its notes and error (rc -1) or the replay's warnings as
 * "ember CMD: ..."; returns the exit status. */
int offcpu_say_run(const char *cmd, const char *input, int rc, const struct offcpu_notes *n);

#endif
