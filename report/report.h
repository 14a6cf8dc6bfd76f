/* report.h - the offline analyses of a recording as commands: report,
 * script, collapse, flame, offcpu, sched, bio, verify, archive, and what
 * they share on the command line (options.c): the option groups, their
 * parser, the progress line and the warnings after a replay. */
#ifndef EMBER_REPORT_H
#define EMBER_REPORT_H

#include "common/options.h"
#include "report/collapse/collapse.h"
#include "report/replay/replay.h"
#include "report/sched/sched.h"

int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_offcpu(int argc, char **argv);
int cmd_sched(int argc, char **argv);
int cmd_bio(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_btrace(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);   /* cmd-export.c, over export/ */
int cmd_push(int argc, char **argv);     /* cmd-push.c, over export/ and push/ */

/* Their option tables (common/options.h): --help, man pages, completion. */
extern const struct opt_cmd report_cmd, script_cmd, collapse_cmd, flame_cmd, offcpu_cmd,
	sched_cmd, bio_cmd, btrace_cmd, verify_cmd, archive_cmd, top_cmd, export_cmd, push_cmd;

/* ---- Shared options (options.c) ---------------------------------------- */

/* getopt_long codes for the shared options. */
enum {
	RP_OPT_COMM = 0x1000, RP_OPT_PID, RP_OPT_TID, RP_OPT_CPU, RP_OPT_TIME,
	RP_OPT_NO_DEMANGLE, RP_OPT_UNWINDER, RP_OPT_LEAF_FIX, RP_OPT_NO_LEAF_FIX, RP_OPT_INLINE,
	RP_OPT_NO_INLINE, RP_OPT_KALLSYMS,
};
/* The shared option groups, each defined once and included in the tables
 * of the commands that take it; their ids go to rp_parse_filter_opt.
 * rp_view_opts is all of them but -i. */
extern const struct opt rp_input_opts[];     /* -i, --input FILE */
extern const struct opt rp_pid_tid_opts[];   /* --pid LIST, --tid LIST */
extern const struct opt rp_short_pid_opts[]; /* -p LIST, as --pid */
extern const struct opt rp_sample_opts[];    /* --comm, --cpu, --time */
extern const struct opt rp_symbol_opts[];    /* --no-demangle, --kallsyms */
extern const struct opt rp_unwind_opts[];    /* --unwinder, --[no-]leaf-fix, --[no-]inline */
extern const struct opt rp_view_opts[];

/* Handles -i, --comm, --pid, --tid, --cpu, --time and the symbol and
 * unwinder options.  Returns 1 when opt was one of these, 0 when not, -1
 * with err_set() on a bad value. */
int rp_parse_filter_opt(struct rp_opts *o, int opt, const char *arg);
/* The views' defaults: input ember.data, names demangled, -g chains with
 * a frameless leaf's caller restored (from the snapshot record -g takes;
 * `script` turns it off to print chains as perf does). */
void rp_opts_init(struct rp_opts *o);
void rp_opts_free(struct rp_opts *o);

/* collapse's options, shared by flame's data-file input: its own and the
 * shared view options, whose bare --pid/--tid name process frames here
 * (--pid=LIST still filters). */
enum {
	COLLAPSE_OPT_PID = 0x3000, COLLAPSE_OPT_TID, COLLAPSE_OPT_ANNOTATE,
	COLLAPSE_OPT_WEIGHT, COLLAPSE_OPT_SRCLINE,
};
extern const struct opt collapse_options[];
/* 1 when opt was one of collapse_options, 0 when not, -1 with err_set()
 * on a bad value. */
int collapse_parse_opt(struct collapse_opts *c, struct rp_opts *rp, int opt, const char *arg);

/* ---- ember bio --replay and --save-plan (cmd-bio-replay.c) ------------- */

/* The replay's options, in bio's table; its parse takes their ids (1
 * taken, 0 not ours, -1 err_set) into *b, made at the first one. */
struct bio_replay;
struct bio_view_opts;
extern const struct opt bio_replay_opts[];
int bio_replay_parse(struct bio_replay **b, int opt, const char *arg);
/* -1 to go on, or EXIT_USAGE having said why (b NULL: no replay). */
int bio_replay_check(const struct bio_replay *b, bool input_set, bool other_view);
/* The plan (of rp's input, filtered by v and rp's filters, or --plan's),
 * saved and/or replayed; returns the exit status, having said why. */
int bio_replay_cmd(struct bio_replay *b, const struct rp_opts *rp, const struct bio_view_opts *v);
void bio_replay_free(struct bio_replay *b);

/* ---- After a replay (options.c, cmd-collapse.c, cmd-offcpu.c) ---------- */

/* A progress line on stderr for rp_opts.progress when stderr is a
 * terminal: rp_progress_if_tty(&opts). */
void rp_progress_if_tty(struct rp_opts *o);

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
/* cmd-offcpu.c, for the commands that run offcpu_run (offcpu, flame
 * --wall): prints its notes and error (rc -1) or the replay's warnings as
 * "ember CMD: ..."; returns the exit status. */
int offcpu_say_run(const char *cmd, const char *input, int rc, const struct offcpu_notes *n);

#endif
