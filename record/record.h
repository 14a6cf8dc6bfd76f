/* record.h - the recorder: opens events on CPUs and tasks, drains per-CPU
 * ring buffers into a perf.data writer, synthesizes what already runs, and
 * launches the command.  cmd_record() is the thin command-line front. */
#ifndef EMBER_RECORD_H
#define EMBER_RECORD_H

#include "common/options.h"

int cmd_record(int argc, char **argv);
extern const struct opt_cmd record_cmd;   /* its option table */

#endif
