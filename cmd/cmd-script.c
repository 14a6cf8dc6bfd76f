/* cmd-script.c - `ember script`: one line per sample in perf script's
 * layout (views/script/), or with --blkparse the block I/O events in
 * blkparse's (the bio library). */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "block/block.h"
#include "cmd/cmd.h"
#include "views/script/script.h"

struct args {
	struct rp_opts rp;
	unsigned fields;
	bool given;                /* -F given */
};

#define A(f) offsetof(struct args, f)

static int set_fields(void *field, const char *arg)
{
	struct args *a = field;
	a->given = true;
	return script_parse_fields(arg, &a->fields);
}

static int set_blkparse(void *field, const char *arg)
{
	*(unsigned *)field |= SCRIPT_BLKPARSE;
	return 0;
}

static const struct opt options[] = {
	OPT_INCLUDE_AT(rp_input_opts, A(rp)),
	OPT_CALLBACK('F', "fields", OPT_ARG, 0, "LIST",
	  "comm,pid,tid,cpu,time,period,event,trace,ip,sym,dso,symoff,\n"
	  "srcline,weight,brstack (default: all that the recording\n"
	  "has but srcline, weight and brstack); +LIST adds to the\n"
	  "defaults, -LIST removes", set_fields),
	OPT_CALLBACK(0, "blkparse", OPT_NO_ARG, A(fields), NULL,
	  "block I/O events in blkparse's default line layout, from\n"
	  "an ember recording or a blktrace capture (as ember bio)", set_blkparse),
	OPT_INCLUDE_AT(rp_view_opts, A(rp)),
	OPT_END,
};

const struct opt_cmd script_cmd = {
	.name = "script",
	.summary = "print one line per sample, like perf script",
	.synopsis =
	"usage: ember script [-i FILE] [-F FIELDS] [filters]\n"
	"\n"
	"Prints one line per sample, as perf script does.\n"
	"\n",
	.opts = options,
};

/* -1 to go on, or the exit status to stop with; *given says -F was. */
static int parse_args(struct rp_opts *o, unsigned *fields, bool *given, int argc, char **argv)
{
	struct args a = { .rp = *o, .fields = *fields };
	int rc = opt_parse(&script_cmd, argc, argv, &a);
	*o = a.rp;                 /* the lists parsed are o's to free */
	*fields = a.fields;
	*given = a.given;
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cmd_extra_argument("script", "script", argv[optind]);
	return -1;
}

/* --blkparse: the bio library reads both ember files and blktrace
 * captures and knows blkparse's layout; the filters pick the lines. */
static int script_blkparse(struct rp_opts *o)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	rp_progress_if_tty(o);
	struct bio_blkparse bp = { .out = stdout };
	struct bio_load_opts lo = { .rp = o, .blkparse = &bp };
	struct bio_data d = { 0 };
	int rc = bio_load(&d, &lo);
	if (d.warning[0])
		cmd_warn("script", "%s", d.warning);
	if (rc < 0)
		cmd_error("script", "%s", err_msg());
	else if (d.replayed)
		rp_warn_view("script", &d.summary, o->input, "some I/Os are left out");
	int status = rc < 0 || (d.replayed && d.summary.input_error) ? EXIT_RUNTIME : EXIT_OK;
	fflush(stdout);
	bio_data_free(&d);
	return status;
}

int cmd_script(int argc, char **argv)
{
	struct rp_opts o;
	rp_opts_init(&o);
	o.leaf_fix = false;        /* chains as recorded, as perf script prints */
	unsigned fields = SCRIPT_DEFAULT_FIELDS;
	bool fields_given = false;
	int rc = parse_args(&o, &fields, &fields_given, argc, argv);
	if (rc >= 0) {
		rp_opts_free(&o);
		return rc;
	}
	if (fields & SCRIPT_BLKPARSE) {
		rc = script_blkparse(&o);
		rp_opts_free(&o);
		return rc;
	}
	/* Big writes: reports run to tens of thousands of lines. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	rp_progress_if_tty(&o);
	o.tracing = true;          /* tracepoints named, their fields printed */
	struct replay *rp = rp_open(&o);
	if (!rp) {
		cmd_error("script", "%s", err_msg());
		rp_opts_free(&o);
		return EXIT_RUNTIME;
	}
	struct script *sc = script_new(rp, fields, fields_given, stdout);
	if (*script_warning(sc))
		cmd_warn("script", "%s", script_warning(sc));
	rp_set_callchains(rp, rp_has_callchains(rp));
	struct rp_sink sink = script_sink(sc);
	rc = rp_run(rp, &sink);
	fflush(stdout);
	const struct rp_summary *sum = rp_summary(rp);
	if (rc < 0)
		cmd_error("script", "%s", err_msg());
	rp_warn_summary("script", sum, o.input);
	int status = rc < 0 || sum->input_error ? EXIT_RUNTIME : EXIT_OK;
	script_free(sc);
	rp_close(rp);
	rp_opts_free(&o);
	return status;
}
