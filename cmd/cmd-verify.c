/* cmd-verify.c - `ember verify FILE`: the record-by-record checks of the
 * format reader (format/verify.c) on a data file or blktrace capture;
 * exits 1 when any problem was found. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "format/format.h"

#define CMD "verify"

static const char synopsis[] =
	"usage: ember verify FILE\n"
	"\n"
	"Checks a data file record by record: an ember or perf.data file, or a\n"
	"blktrace capture (one file, DEV for DEV.blktrace.N, or the kernel blk\n"
	"tracer's binary output).  Lists each problem (a record cut short or\n"
	"undecodable, an unknown blktrace action or version, a CPU's time going\n"
	"back, a gap in a CPU's sequence numbers or lost events) with its byte\n"
	"offset, and exits 1 when there is any.\n"
	"\n";

static const struct opt options[] = { OPT_END };

const struct opt_cmd verify_cmd = {
	.name = CMD, .summary = "check a data file or blktrace capture record by record",
	.synopsis = synopsis, .opts = options, .operand = "file",
};

int cmd_verify(int argc, char **argv)
{
	int rc = opt_parse(&verify_cmd, argc, argv, NULL);
	if (rc >= 0)
		return rc;
	u64 problems;
	if (pd_verify(argv[1], stdout, &problems) < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	return problems ? EXIT_RUNTIME : EXIT_OK;
}
