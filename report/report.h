/* report.h - the offline analyses of a recording: report, script, and the
 * later views (collapse, offcpu, sched, bio) are commands of this module. */
#ifndef EMBER_REPORT_H
#define EMBER_REPORT_H

#include "common/options.h"

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

/* Their option tables (common/options.h): --help, man pages, completion. */
extern const struct opt_cmd report_cmd, script_cmd, collapse_cmd, flame_cmd, offcpu_cmd,
	sched_cmd, bio_cmd, btrace_cmd, verify_cmd, archive_cmd;

#endif
