/* script.c - the perf script lines sink: one line per sample in perf
 * script's default layout (so tools that read perf script text read
 * ember's), with tracepoint fields decoded from the recorded format data.
 *
 * Each line is built in one string buffer without printf on the hot path
 * (the -F fields, frames named by replay/frames.c, brstack entries and
 * source lines under each frame with -F +srcline), and written whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/script/script.h"

struct script {
	unsigned fields;
	unsigned tp_frame_fields;   /* what a tracepoint's frames show */
	struct pd_reader *reader;
	struct replay *rp;          /* for source lines */
	struct pd_trace *trace;     /* NULL without tracepoints */
	struct strbuf line;
	FILE *out;
	char warning[512];
};

static const struct { const char *name; unsigned bit; } field_names[] = {
	{ "comm", SCRIPT_COMM }, { "pid", SCRIPT_PID }, { "tid", SCRIPT_TID }, { "cpu", SCRIPT_CPU },
	{ "time", SCRIPT_TIME }, { "period", SCRIPT_PERIOD }, { "event", SCRIPT_EVENT },
	{ "trace", SCRIPT_TRACE }, { "ip", SCRIPT_IP }, { "sym", SCRIPT_SYM }, { "dso", SCRIPT_DSO },
	{ "symoff", SCRIPT_SYMOFF }, { "srcline", SCRIPT_SRCLINE }, { "weight", SCRIPT_WEIGHT },
	{ "brstack", SCRIPT_BRSTACK },
};

int script_parse_fields(const char *spec, unsigned *fields)
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

/* One chain frame's text (the fields the sample's event shows), as perf
 * prints it: replay/frames.c's. */
static void put_frame(struct script *sc, unsigned fields, const struct rp_frame *f)
{
	unsigned what = (fields & SCRIPT_SYM ? RP_TEXT_SYM : 0) |
			(fields & SCRIPT_SYMOFF ? RP_TEXT_SYMOFF : 0) |
			(fields & SCRIPT_DSO ? RP_TEXT_DSO : 0) |
			(sc->fields & SCRIPT_SRCLINE ? RP_TEXT_SRCLINE : 0);
	const char *line = (what & RP_TEXT_SRCLINE) ? rp_srcline(sc->rp, f) : NULL;
	rp_put_frame_text(&sc->line, f, what, line);
}

/* The leading columns: comm, pid/tid, cpu, time. */
static void put_header(struct script *sc, const struct rp_sample *s, bool chain)
{
	struct strbuf *l = &sc->line;
	u64 t = s->attr->attr.sample_type;
	if (sc->fields & SCRIPT_COMM) {
		sb_add_padded(l, s->thread->comm, chain ? 0 : 16, true);
		sb_add(l, " ", 1);
	}
	/* Signed, as perf prints them: "-1" for no task. */
	int pid = (int)s->s->pid, tid = (int)s->s->tid;
	if ((sc->fields & SCRIPT_PID) && (sc->fields & SCRIPT_TID)) {
		sb_add_dec(l, pid, 5, ' ');
		sb_add(l, "/", 1);
		size_t at = l->len;
		sb_add_dec(l, tid, 0, ' ');
		for (size_t w = l->len - at; w < 5; w++)
			sb_add(l, " ", 1);
		sb_add(l, " ", 1);
	} else if (sc->fields & (SCRIPT_PID | SCRIPT_TID)) {
		sb_add_dec(l, (sc->fields & SCRIPT_PID) ? pid : tid, 5, ' ');
		sb_add(l, " ", 1);
	}
	if ((sc->fields & SCRIPT_CPU) && (t & PERF_SAMPLE_CPU)) {
		sb_add(l, "[", 1);
		sb_add_dec(l, s->s->cpu, 3, '0');
		sb_add(l, "] ", 2);
	}
	if ((sc->fields & SCRIPT_TIME) && (t & PERF_SAMPLE_TIME)) {
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
	bool chain = (s->s->nr_callchain > 0 || s->s->stack_size > 0) && (sc->fields & SCRIPT_IP);
	struct strbuf *l = &sc->line;
	unsigned frame_fields = tracepoint ? sc->tp_frame_fields : sc->fields;
	put_header(sc, s, chain);
	if ((sc->fields & SCRIPT_PERIOD) && !tracepoint && has_period(s->attr)) {
		sb_add_dec(l, (s64)sample_period(s), 10, ' ');
		sb_add(l, " ", 1);
	}
	if (sc->fields & SCRIPT_EVENT) {
		sb_puts(l, event_name(sc, s->attr));
		sb_add(l, ": ", 2);
	}
	if (tracepoint && (sc->fields & SCRIPT_TRACE) && sc->trace)
		pd_trace_format(sc->trace, s->attr->attr.config, s->s->raw, s->s->raw_size, l);
	if ((sc->fields & SCRIPT_WEIGHT) && (s->attr->attr.sample_type & PERF_SAMPLE_WEIGHT)) {
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
			put_frame(sc, frame_fields, f);
			sb_puts(l, "\n");
		}
	} else if ((sc->fields & SCRIPT_IP) && !tracepoint && s->nframes) {
		sb_add(l, " ", 1);
		sb_add_hex(l, s->frames[0].ip, 16);
		sb_add(l, " ", 1);
		put_frame(sc, frame_fields, &s->frames[0]);
	}
	if ((sc->fields & SCRIPT_BRSTACK) && s->s->nr_branches)
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

struct script *script_new(struct replay *rp, unsigned fields, bool given, FILE *out)
{
	struct script *sc = xcalloc(1, sizeof(*sc));
	sc->fields = fields;
	sc->out = out;
	sc->rp = rp;
	sc->reader = rp_reader(rp);
	/* perf script's default layout names a tracepoint's frames without
	 * offset and file when it reads a stream (it learns the events only
	 * as their attrs arrive, after it set the tracepoint defaults). */
	sc->tp_frame_fields = fields;
	if (!given && pd_reader_is_pipe(sc->reader))
		sc->tp_frame_fields &= ~(SCRIPT_SYMOFF | SCRIPT_DSO);
	if (pd_reader_trace(sc->reader, &sc->trace) < 0)
		snprintf(sc->warning, sizeof(sc->warning),
			 "%s; tracepoint fields will not be shown", err_msg());
	return sc;
}

const char *script_warning(const struct script *sc)
{
	return sc->warning;
}

struct rp_sink script_sink(struct script *sc)
{
	return (struct rp_sink){ .ctx = sc, .sample = script_sample, .finish = script_finish };
}

void script_free(struct script *sc)
{
	if (!sc)
		return;
	sb_free(&sc->line);
	free(sc);
}
