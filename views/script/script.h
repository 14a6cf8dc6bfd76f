/* script.h - the perf script lines sink behind `ember script`: one line
 * per sample in perf script's default layout (so tools that read perf
 * script text read ember's), tracepoint fields decoded from the
 * recording's format data. */
#ifndef EMBER_VIEWS_SCRIPT_H
#define EMBER_VIEWS_SCRIPT_H

#include <stdio.h>

#include "replay/replay.h"

/* The fields of a line (-F). */
enum script_field {
	SCRIPT_COMM = 1 << 0, SCRIPT_PID = 1 << 1, SCRIPT_TID = 1 << 2, SCRIPT_CPU = 1 << 3,
	SCRIPT_TIME = 1 << 4, SCRIPT_PERIOD = 1 << 5, SCRIPT_EVENT = 1 << 6, SCRIPT_TRACE = 1 << 7,
	SCRIPT_IP = 1 << 8, SCRIPT_SYM = 1 << 9, SCRIPT_DSO = 1 << 10, SCRIPT_SYMOFF = 1 << 11,
	SCRIPT_BLKPARSE = 1 << 12,      /* --blkparse: block events as blkparse */
	SCRIPT_SRCLINE = 1 << 13,       /* file:line under each frame */
	SCRIPT_WEIGHT = 1 << 14, SCRIPT_BRSTACK = 1 << 15,
};

#define SCRIPT_DEFAULT_FIELDS (SCRIPT_COMM | SCRIPT_TID | SCRIPT_CPU | SCRIPT_TIME | \
			       SCRIPT_PERIOD | SCRIPT_EVENT | SCRIPT_TRACE | SCRIPT_IP | \
			       SCRIPT_SYM | SCRIPT_DSO | SCRIPT_SYMOFF)

/* -F LIST: replaces *fields, or with a list starting with + or -, edits
 * them, each name added (+) or removed (-), as in perf.  -1 with err_set()
 * naming an unknown field and listing the known ones. */
int script_parse_fields(const char *spec, unsigned *fields);

struct script;
/* Lines of fields for rp's samples to out.  given: the fields were
 * chosen (-F), not perf's defaults.  rp is opened with rp_opts.tracing
 * for the tracepoints' names and fields; a recording whose tracing data
 * does not parse still prints, without tracepoint fields: script_warning
 * says so. */
struct script *script_new(struct replay *rp, unsigned fields, bool given, FILE *out);
/* What the user should hear before the lines ("" when nothing). */
const char *script_warning(const struct script *sc);
/* The sink to hand to rp_run(); lines go out in big writes, the last at
 * finish. */
struct rp_sink script_sink(struct script *sc);
void script_free(struct script *sc);

#endif
