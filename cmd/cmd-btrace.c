/* cmd-btrace.c - `ember btrace DEV` (blktrace's btrace script): blkparse
 * lines for one device as its block events happen, until Ctrl-C: the live
 * engine (live/) records the device's block events on every CPU
 * and the bio library prints them from the stream. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "block/block.h"
#include "cmd/cmd.h"
#include "live/live.h"

#define CMD "btrace"

static const char synopsis[] =
	"usage: ember btrace [-w SECS] DEV\n"
	"\n"
	"Prints a blkparse line for each block event of device DEV (NAME, /dev/NAME\n"
	"or MAJ,MIN) as it happens, until Ctrl-C (or -w): the block tracepoints of\n"
	"every CPU are recorded ('ember record --block -a -d DEV') and read as\n"
	"they come.  The lines are those of 'ember bio\n"
	"--blkparse'; times count from the first event.\n"
	"\n";

struct args {
	double duration;
	u32 dev;
};

static const struct opt options[] = {
	OPT_DOUBLE('w', "duration", offsetof(struct args, duration), "SECS",
		   "stop after SECS seconds", 0, "-w '%s': give a positive number of seconds"),
	OPT_END,
};

const struct opt_cmd btrace_cmd = {
	.name = CMD,
	.summary = "live blkparse lines for one block device, like btrace",
	.synopsis = synopsis,
	.opts = options,
};

static int parse_args(struct args *a, int argc, char **argv)
{
	int rc = opt_parse(&btrace_cmd, argc, argv, a);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		cmd_error(CMD, "no device: give one, e.g. 'ember btrace sda'");
		return EXIT_USAGE;
	}
	if (optind + 1 < argc)
		return cmd_extra_argument(CMD, CMD, argv[optind + 1]);
	a->dev = bio_dev_parse(argv[optind]);
	if (!a->dev) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_btrace(int argc, char **argv)
{
	struct args a = { 0 };
	int rc = parse_args(&a, argc, argv);
	if (rc >= 0)
		return rc;
	struct rp_opts rp;
	rp_opts_init(&rp);
	struct live_opts lo = { .all = true, .duration = a.duration, .devs = &a.dev, .ndevs = 1 };
	bool usage;
	struct live *l = live_start(&lo, REC_LIVE_BLOCK, &rp, &usage);
	if (!l) {
		cmd_error(CMD, "%s", err_msg());
		rp_opts_free(&rp);
		return usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	struct bio_blkparse bp = { .out = stdout, .dev = a.dev, .flush = true };
	struct bio_load_opts blo = { .rp = &rp, .blkparse = &bp, .forget = true };
	struct bio_data d = { 0 };
	int lrc = bio_load(&d, &blo);
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", lrc < 0 ? err_msg() : d.summary.error);
	bool input_error = lrc < 0 || d.summary.input_error;
	fflush(stdout);
	/* Ctrl-C stops the recording, whose stream then ends, and the lines
	 * with it.  A recording that failed says why; the reader's error
	 * would only echo it. */
	rc = live_end(l, CMD, EXIT_OK);
	if (rc == EXIT_OK && input_error) {
		cmd_error(CMD, "%s", msg);
		rc = EXIT_RUNTIME;
	}
	if (rc == EXIT_OK && d.replayed && d.summary.lost)
		cmd_warn(CMD, "%llu events lost: some lines are missing",
			 (unsigned long long)d.summary.lost);
	bio_data_free(&d);
	rp_opts_free(&rp);
	return rc;
}
