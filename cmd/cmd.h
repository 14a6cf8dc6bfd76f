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
#include "replay/replay.h"
#include "views/collapse/collapse.h"
#include "views/sched/sched.h"

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

/* Their option tables (options-internal.h): --help, man pages, completion. */
extern const struct opt_cmd report_cmd, script_cmd, collapse_cmd, flame_cmd, offcpu_cmd,
	sched_cmd, bio_cmd, btrace_cmd, verify_cmd, archive_cmd, top_cmd, export_cmd, push_cmd,
	record_cmd, stat_cmd, list_cmd, serve_cmd;

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
