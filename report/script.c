/* script.c - `ember script`: one line per sample in perf script's default
 * layout (so tools that read perf script text read ember's), with
 * tracepoint fields decoded from the recorded format data. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/bio/bio.h"
#include "report/replay/replay.h"
#include "report/report.h"

enum field {
	F_COMM = 1 << 0, F_PID = 1 << 1, F_TID = 1 << 2, F_CPU = 1 << 3,
	F_TIME = 1 << 4, F_PERIOD = 1 << 5, F_EVENT = 1 << 6, F_TRACE = 1 << 7,
	F_IP = 1 << 8, F_SYM = 1 << 9, F_DSO = 1 << 10, F_SYMOFF = 1 << 11,
	F_BLKPARSE = 1 << 12,      /* --blkparse: block events as blkparse */
	F_SRCLINE = 1 << 13,       /* file:line under each frame */
	F_WEIGHT = 1 << 14, F_BRSTACK = 1 << 15,
};

static const struct { const char *name; unsigned bit; } field_names[] = {
	{ "comm", F_COMM }, { "pid", F_PID }, { "tid", F_TID }, { "cpu", F_CPU },
	{ "time", F_TIME }, { "period", F_PERIOD }, { "event", F_EVENT },
	{ "trace", F_TRACE }, { "ip", F_IP }, { "sym", F_SYM }, { "dso", F_DSO },
	{ "symoff", F_SYMOFF }, { "srcline", F_SRCLINE }, { "weight", F_WEIGHT },
	{ "brstack", F_BRSTACK },
};

#define DEFAULT_FIELDS (F_COMM | F_TID | F_CPU | F_TIME | F_PERIOD | F_EVENT | \
			F_TRACE | F_IP | F_SYM | F_DSO | F_SYMOFF)

struct script {
	unsigned fields;
	unsigned tp_frame_fields;   /* what a tracepoint's frames show */
	struct pd_reader *reader;
	struct replay *rp;          /* for source lines */
	struct pd_trace *trace;     /* NULL without tracepoints */
	struct strbuf line;
	FILE *out;
};

/* -F LIST replaces the fields; a list starting with + or - edits the
 * defaults instead, each name added (+) or removed (-), as in perf. */
static int parse_fields(const char *spec, unsigned *fields)
{
	bool edit = *spec == '+' || *spec == '-';
	if (!edit)
		*fields = 0;
	for (const char *p = spec; *p;) {
		bool remove = *p == '-';
		if (*p == '+' || *p == '-')
			p++;
		size_t n = strcspn(p, ",");
		unsigned bit = 0;
		for (size_t i = 0; i < ARRAY_SIZE(field_names); i++)
			if (strlen(field_names[i].name) == n && !strncmp(p, field_names[i].name, n))
				bit = field_names[i].bit;
		if (!bit) {
			err_set("unknown field '%.*s' in -F (known: comm,pid,tid,cpu,time,"
				"period,event,trace,ip,sym,dso,symoff,srcline,weight,brstack)", (int)n, p);
			return -1;
		}
		if (remove)
			*fields &= ~bit;
		else
			*fields |= bit;
		p += n + (p[n] == ',');
	}
	return 0;
}

#define OUT_CHUNK (1 << 20)

static void script_flush(struct script *sc)
{
	if (sc->line.len)          /* an empty buffer has no memory yet */
		fwrite(sc->line.s, 1, sc->line.len, sc->out);
	sb_reset(&sc->line);
}

static const char *event_name(struct script *sc, const struct pd_attr *a)
{
	if (a->attr.type == PERF_TYPE_TRACEPOINT && sc->trace) {
		const char *n = pd_trace_name(sc->trace, a->attr.config);
		if (n)
			return n;
	}
	return a->name;
}

/* "sym+0xoff (dso)" for one frame, as perf prints it (the fields the
 * sample's event shows). */
static void put_frame_text(struct script *sc, unsigned fields, const struct rp_frame *f)
{
	struct strbuf *l = &sc->line;
	if (fields & F_SYM) {
		if (f->sym) {
			sb_puts(l, f->sym->name);
			/* A symbol without a file is the cut marker: no offset. */
			if ((fields & F_SYMOFF) && f->dso) {
				sb_add(l, "+0x", 3);
				sb_add_hex(l, f->addr - f->sym->start, 0);
			}
		} else {
			sb_puts(l, "[unknown]");
		}
	}
	if ((fields & F_DSO) && !f->inlined) {   /* perf names no file for those */
		sb_add(l, " (", 2);
		sb_puts(l, f->dso ? sym_dso_path(f->dso) : "[unknown]");
		sb_add(l, ")", 1);
	}
}

/* "  file:line" on a line of its own under a frame, as perf prints it:
 * nothing for a user address without line information, the kernel's
 * file and address for a kernel one. */
static void put_srcline(struct script *sc, const struct rp_frame *f)
{
	struct strbuf *l = &sc->line;
	const char *line = rp_srcline(sc->rp, f);
	if (line) {
		sb_add(l, "\n  ", 3);
		sb_puts(l, line);
	} else if (f->kernel) {
		sb_add(l, "\n  ", 3);
		sb_puts(l, rp_frame_dso(f));
		sb_add(l, "[", 1);
		sb_add_hex(l, f->ip, 0);
		sb_add(l, "]", 1);
	}
}

/* The leading columns: comm, pid/tid, cpu, time. */
static void put_header(struct script *sc, const struct rp_sample *s, bool chain)
{
	struct strbuf *l = &sc->line;
	u64 t = s->attr->attr.sample_type;
	if (sc->fields & F_COMM) {
		sb_add_padded(l, s->thread->comm, chain ? 0 : 16, true);
		sb_add(l, " ", 1);
	}
	/* Signed, as perf prints them: "-1" for no task. */
	int pid = (int)s->s->pid, tid = (int)s->s->tid;
	if ((sc->fields & F_PID) && (sc->fields & F_TID)) {
		sb_add_dec(l, pid, 5, ' ');
		sb_add(l, "/", 1);
		size_t at = l->len;
		sb_add_dec(l, tid, 0, ' ');
		for (size_t w = l->len - at; w < 5; w++)
			sb_add(l, " ", 1);
		sb_add(l, " ", 1);
	} else if (sc->fields & (F_PID | F_TID)) {
		sb_add_dec(l, (sc->fields & F_PID) ? pid : tid, 5, ' ');
		sb_add(l, " ", 1);
	}
	if ((sc->fields & F_CPU) && (t & PERF_SAMPLE_CPU)) {
		sb_add(l, "[", 1);
		sb_add_dec(l, s->s->cpu, 3, '0');
		sb_add(l, "] ", 2);
	}
	if ((sc->fields & F_TIME) && (t & PERF_SAMPLE_TIME)) {
		sb_add_dec(l, (s64)(s->s->time / 1000000000ULL), 5, ' ');
		sb_add(l, ".", 1);
		sb_add_dec(l, (s64)(s->s->time % 1000000000ULL / 1000), 6, '0');
		sb_add(l, ": ", 2);
	}
}

/* " 0xFROM/0xTO/P/-/-/CYCLES/TYPE " per branch, newest first, as perf
 * script -F brstack prints them (M mispredicted, P predicted, X in a
 * transaction, A an aborted one). */
static void put_brstack(struct strbuf *l, const struct pd_sample *s)
{
	for (u64 i = 0; i < s->nr_branches; i++) {
		const u64 *e = s->branches + 3 * i;
		u64 f = e[2];
		sb_add(l, " 0x", 3);
		sb_add_hex(l, e[0], 0);
		sb_add(l, "/0x", 3);
		sb_add_hex(l, e[1], 0);
		char flags[8] = { '/', PD_BRANCH_PREDICTED(f) ? 'P' : PD_BRANCH_MISPRED(f) ? 'M' : '-',
				  '/', PD_BRANCH_IN_TX(f) ? 'X' : '-', '/', PD_BRANCH_ABORT(f) ? 'A' : '-',
				  '/' };
		sb_add(l, flags, 7);
		sb_add_dec(l, (s64)PD_BRANCH_CYCLES(f), 0, ' ');
		sb_add(l, "/", 1);
		sb_puts(l, pd_branch_type_name(f));
		sb_add(l, " ", 1);
	}
}

/* A period to print: the sample's own, or the fixed one of its event
 * (perf prints that too when the recording used -c). */
static bool has_period(const struct pd_attr *a)
{
	return (a->attr.sample_type & PERF_SAMPLE_PERIOD) || (!a->attr.freq && a->attr.sample_period);
}

static u64 sample_period(const struct rp_sample *s)
{
	if (s->attr->attr.sample_type & PERF_SAMPLE_PERIOD)
		return s->s->period;
	return s->attr->attr.sample_period;
}

static int script_sample(void *ctx, const struct rp_sample *s)
{
	struct script *sc = ctx;
	if (!s->attr)
		return 0;
	bool tracepoint = s->attr->attr.type == PERF_TYPE_TRACEPOINT;
	/* A dwarf sample taken in user mode has no kernel chain, only the
	 * stack copy its user frames are unwound from. */
	bool chain = (s->s->nr_callchain > 0 || s->s->stack_size > 0) && (sc->fields & F_IP);
	struct strbuf *l = &sc->line;
	unsigned frame_fields = tracepoint ? sc->tp_frame_fields : sc->fields;
	put_header(sc, s, chain);
	if ((sc->fields & F_PERIOD) && !tracepoint && has_period(s->attr)) {
		sb_add_dec(l, (s64)sample_period(s), 10, ' ');
		sb_add(l, " ", 1);
	}
	if (sc->fields & F_EVENT) {
		sb_puts(l, event_name(sc, s->attr));
		sb_add(l, ": ", 2);
	}
	if (tracepoint && (sc->fields & F_TRACE) && sc->trace)
		pd_trace_format(sc->trace, s->attr->attr.config, s->s->raw, s->s->raw_size, l);
	if ((sc->fields & F_WEIGHT) && (s->attr->attr.sample_type & PERF_SAMPLE_WEIGHT)) {
		sb_add(l, " ", 1);
		sb_add_dec(l, (s64)s->s->weight, 16, ' ');
	}
	if (chain) {
		sb_puts(l, "\n");
		/* perf prints no frames of a chain it could not trust. */
		for (int i = 0; i < (s->chain_dropped ? 0 : s->nframes); i++) {
			const struct rp_frame *f = &s->frames[i];
			/* perf prints user chain entries at their file offset. */
			sb_add(l, "\t", 1);
			sb_add_hex(l, f->offset, 16);
			sb_add(l, " ", 1);
			put_frame_text(sc, frame_fields, f);
			if (sc->fields & F_SRCLINE)
				put_srcline(sc, f);
			sb_puts(l, "\n");
		}
	} else if ((sc->fields & F_IP) && !tracepoint && s->nframes) {
		sb_add(l, " ", 1);
		sb_add_hex(l, s->frames[0].ip, 16);
		sb_add(l, " ", 1);
		put_frame_text(sc, frame_fields, &s->frames[0]);
		if (sc->fields & F_SRCLINE)
			put_srcline(sc, &s->frames[0]);
	}
	if ((sc->fields & F_BRSTACK) && s->s->nr_branches)
		put_brstack(l, s->s);
	sb_add(l, "\n", 1);
	/* Lines gather in one buffer that goes out in big writes. */
	if (l->len >= OUT_CHUNK)
		script_flush(sc);
	return 0;
}

static int script_finish(void *ctx)
{
	script_flush(ctx);
	return 0;
}

struct args {
	struct rp_opts *o;
	unsigned *fields;
	bool *given;
};

/* 1 taken, 0 not ours, -1 err_set. */
static int parse_one(void *ctx, int opt, const char *arg)
{
	struct args *a = ctx;
	switch (opt) {
	case 'F':
		*a->given = true;
		return parse_fields(arg, a->fields) < 0 ? -1 : 1;
	case 'B':
		*a->fields |= F_BLKPARSE;
		return 1;
	default:
		return rp_parse_filter_opt(a->o, opt, arg);
	}
}

static const struct opt options[] = {
	OPT_INCLUDE(rp_input_opts),
	OPT('F', 'F', "fields", OPT_ARG, "LIST",
	  "comm,pid,tid,cpu,time,period,event,trace,ip,sym,dso,symoff,\n"
	  "srcline,weight,brstack (default: all that the recording\n"
	  "has but srcline, weight and brstack); +LIST adds to the\n"
	  "defaults, -LIST removes"),
	OPT('B', 0, "blkparse", OPT_NO_ARG, NULL,
	  "block I/O events in blkparse's default line layout, from\n"
	  "an ember recording or a blktrace capture (as ember bio)"),
	OPT_INCLUDE(rp_view_opts),
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
	.one = parse_one,
};

/* -1 to go on, or the exit status to stop with; *given says -F was. */
static int parse_args(struct rp_opts *o, unsigned *fields, bool *given, int argc, char **argv)
{
	struct args a = { o, fields, given };
	int rc = opt_parse(&script_cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cmd_extra_argument("script", "script", argv[optind]);
	return -1;
}

static void load_trace(struct script *sc)
{
	size_t len;
	const void *data = pd_reader_feature(sc->reader, PD_FEAT_TRACING_DATA, &len);
	if (data && !(sc->trace = pd_trace_parse(data, len)))
		cmd_warn("script", "%s; tracepoint fields will not be shown", err_msg());
}

/* --blkparse: the bio library reads both ember files and blktrace
 * captures and knows blkparse's layout; the filters pick the lines. */
static int script_blkparse(struct rp_opts *o)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	rp_progress_if_tty(o);
	struct bio_blkparse bp = { .out = stdout, .filter = &o->filter };
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
	struct script sc = { .fields = DEFAULT_FIELDS, .out = stdout };
	bool fields_given = false;
	int rc = parse_args(&o, &sc.fields, &fields_given, argc, argv);
	if (rc >= 0) {
		rp_opts_free(&o);
		return rc;
	}
	if (sc.fields & F_BLKPARSE) {
		rc = script_blkparse(&o);
		rp_opts_free(&o);
		return rc;
	}
	/* Big writes: reports run to tens of thousands of lines. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	rp_progress_if_tty(&o);
	struct replay *rp = rp_open(&o);
	if (!rp) {
		cmd_error("script", "%s", err_msg());
		rp_opts_free(&o);
		return EXIT_RUNTIME;
	}
	sc.reader = rp_reader(rp);
	sc.rp = rp;
	/* perf script's default layout names a tracepoint's frames without
	 * offset and file when it reads a stream (it learns the events only
	 * as their attrs arrive, after it set the tracepoint defaults). */
	sc.tp_frame_fields = sc.fields;
	if (!fields_given && pd_reader_is_pipe(sc.reader))
		sc.tp_frame_fields &= ~(F_SYMOFF | F_DSO);
	rp_set_callchains(rp, rp_has_callchains(rp));
	load_trace(&sc);
	struct rp_sink sink = { .ctx = &sc, .sample = script_sample, .finish = script_finish };
	rc = rp_run(rp, &sink);
	fflush(stdout);
	const struct rp_summary *sum = rp_summary(rp);
	if (rc < 0)
		cmd_error("script", "%s", err_msg());
	rp_warn_summary("script", sum, o.input);
	int status = rc < 0 || sum->input_error ? EXIT_RUNTIME : EXIT_OK;
	pd_trace_free(sc.trace);
	sb_free(&sc.line);
	rp_close(rp);
	rp_opts_free(&o);
	return status;
}
