/* export.h - profiles for other tools: an in-memory profile built from the
 * replay's resolved samples (or off-CPU stacks), written as pprof's gzipped
 * profile.proto or speedscope's JSON.  `ember export` and a live pusher
 * (one profile per interval: add, encode, reset) share this code. */
#ifndef EMBER_EXPORT_H
#define EMBER_EXPORT_H

#include <stdio.h>

#include "replay/replay.h"

/* What the weights of the profile are. */
enum ex_kind {
	EX_SAMPLES,      /* the samples of one event: a count and their period */
	EX_OFFCPU,       /* off-CPU intervals: a count and nanoseconds blocked */
};

struct ex_profile_opts {
	enum ex_kind kind;
	/* EX_SAMPLES: the event whose samples are taken (pd_attr.name); NULL
	 * takes the first event a sample comes from.  Others are counted
	 * (ex_profile_skipped) and left out: adding up different events
	 * would mean nothing. */
	const char *event;
	/* pprof: each sample carries labels pid, tid (numbers) and comm.
	 * Samples of different threads are then kept apart. */
	bool labels;
	/* speedscope: one profile per process rather than per thread. */
	bool per_process;
	/* The replay the frames come from: source lines (Line.line, the
	 * functions' files and start lines) and the kernel's build-id.
	 * NULL: names only.  Must outlive the profile's adds and encodes. */
	struct replay *rp;
};

struct ex_profile;

/* A new, empty profile (never NULL: allocation failure aborts). */
struct ex_profile *ex_profile_new(const struct ex_profile_opts *o);
void ex_profile_free(struct ex_profile *p);
/* Empties the profile for the next interval, keeping its options (a live
 * pusher calls it after each encode).  Names, mappings and functions are
 * forgotten too, so a profile holds only what it was given since the last
 * reset and its memory stays that of one interval. */
void ex_profile_reset(struct ex_profile *p);

/* Adds one sample as the replay resolved it (frames leaf first, inline
 * frames as their own frames; rp_sample.thread for comm and maps): a
 * count of one and a value of its period (1 when it has none).  Samples
 * of an event other than the profile's are counted and left out.  The
 * profile copies what it keeps: s need not outlive the call.  0, or -1
 * with err_set().  The profile copies every text it keeps and never reads
 * a frame's dso or symbol after the call (their addresses serve as keys
 * until the next reset), so a live replay may release exited processes. */
int ex_profile_add(struct ex_profile *p, const struct rp_sample *s);

/* Adds a stack given as frames (leaf first, as rp_sample.frames) with its
 * thread, count and value (EX_OFFCPU: intervals and nanoseconds; EX_SAMPLES:
 * samples and the period sum), e.g. an off-CPU aggregate.  maps, when not
 * NULL, gives the mappings' real ranges and offsets; time (ns, recording
 * clock, 0 unknown) widens the profile's span.  0, or -1 with err_set(). */
struct ex_stack {
	const struct rp_frame *frames;
	int nframes;
	u32 pid, tid;
	const char *comm;
	struct sym_maps *maps;
	u64 count, value, time;
};
int ex_profile_add_stack(struct ex_profile *p, const struct ex_stack *st);

/* The event the profile took (pd_attr.name of the first sample added, or
 * opts.event), or NULL before any. */
const char *ex_profile_event(const struct ex_profile *p);
/* Samples added and samples of other events left out, since the last reset. */
u64 ex_profile_samples(const struct ex_profile *p);
u64 ex_profile_skipped(const struct ex_profile *p);
/* The sum of the values (period, or nanoseconds off CPU). */
u64 ex_profile_total(const struct ex_profile *p);

/* When the profile was taken: time_nanos is wall-clock time (ns since the
 * epoch) of its start and duration_nanos its length.  Unless set, the
 * span is the first to the last sample's time and the start is unknown
 * (0).  A live pusher sets its interval's. */
void ex_profile_set_time(struct ex_profile *p, u64 time_nanos, u64 duration_nanos);
/* The first and last sample time seen (recording clock, ns; 0 when none). */
void ex_profile_span(const struct ex_profile *p, u64 *first, u64 *last);

/* ---- Writers (pprof.c, speedscope.c) ---------------------------------- */

/* pprof's profile.proto, gzipped, in memory: *gz is malloc'd (the caller
 * frees it).  0, or -1 with err_set(). */
int ex_pprof_encode(const struct ex_profile *p, void **gz, size_t *len);
/* The same written to out. */
int ex_pprof_write(const struct ex_profile *p, FILE *out);
/* speedscope's file format (JSON): a sampled profile per thread (per
 * process with per_process), the frames shared.  name is the file's
 * name field (e.g. the input's).  0, or -1 with err_set(). */
int ex_speedscope_write(const struct ex_profile *p, const char *name, FILE *out);

/* ---- The sink ----------------------------------------------------------- */

/* A replay sink that adds every sample to p (ex_profile_add).  A live
 * pusher keeps its own sink and calls ex_sink_sample from its sample
 * callback, encoding and resetting at each tick. */
struct rp_sink ex_sink(struct ex_profile *p);
int ex_sink_sample(void *p, const struct rp_sample *s);

#endif
