/* reader.c - reads perf.data files and streams: opens them (the header,
 * attrs and features: header.c), then hands out records one at a time,
 * decoded (decode.c) and, by default, put back into time order (order.c)
 * from the raw records of the input (window.c).  Every size read from the
 * input is checked against what remains before it is used.
 *
 * Records are read into a window that slides along the input (pread for
 * files, read for streams) and are handed out in place; the window keeps
 * every record still queued for ordering.  Copying from the page cache
 * costs about half of what mapping every page of a large file does, and
 * memory stays at the window, not the file.  A file's header and features
 * are read through a mapping, where only the pages touched fault in.
 *
 * Compressed records (perf record -z) are inflated as they are read into
 * a second buffer (compress.c) that slides the same way: the records in
 * it are queued, ordered and handed out like the others, by offsets in
 * the decompressed stream marked with ZOFF.
 *
 * Memory stays at the window: 35 MB, not 528 MB, on a 484 MB --call-graph
 * dwarf file.  An error names the byte offset and comes after every event
 * read before it.  What the reader cannot use is counted for the views'
 * one-line notes, never left out silently: records of a type decode.c
 * gives no body (KSYMBOL, AUX, unknown numbers: delivered as they are,
 * counted by type, named by pd_record_name), what a newer perf wrote
 * (header.c), records whose time lies outside the recording's span and
 * feature sections placed outside the file (order.c, header.c). */
#include "format/format-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A decompressed offset is named by its compressed record's offset and
 * its place in the decompressed stream. */
int pdr_fail_at(struct pd_reader *r, u64 offset, const char *what)
{
	if (offset & ZOFF)
		snprintf(r->error, sizeof(r->error),
			 "offset %#llx (compressed; byte %llu of the decompressed data): %s",
			 (unsigned long long)pdz_file_offset(r->z, offset & ~ZOFF),
			 (unsigned long long)(offset & ~ZOFF), what);
	else
		snprintf(r->error, sizeof(r->error), "offset %#llx: %s",
			 (unsigned long long)offset, what);
	r->failed = true;
	r->ended = true;
	return -1;
}

/* ---- delivering events -------------------------------------------------- */

/* Fills ev from one whole kernel record at rec (8-byte aligned), decoded
 * by decode.c with the attr the record names. */
static int decode(struct pd_reader *r, const u8 *rec, u64 offset, struct pd_event *ev)
{
	const struct perf_event_header *h = (const void *)rec;
	/* perf's own record types carry no sample_id trailer. */
	const struct pd_attr *a = h->type < PD_RECORD_HEADER_ATTR ?
				  pdr_attr_of(r, rec, h->size, h->type) : NULL;
	int rc = pd_decode(a, rec, ev);
	ev->offset = (offset & ZOFF) ? pdz_file_offset(r->z, offset & ~ZOFF) : offset;
	if (rc < 0) {
		char what[96];
		snprintf(what, sizeof(what), "record of type %u and size %u is malformed",
			 h->type, h->size);
		return pdr_fail_at(r, offset, what);
	}
	return 0;
}

/* A record handed on with its body unread: no view may lose it unsaid. */
static void count_undecoded(struct pd_reader *r, u32 type)
{
	struct pd_reader_stats *st = &r->stats;
	st->nr_undecoded++;
	for (int i = 0; i < st->nr_undecoded_types; i++)
		if (st->undecoded[i].type == type) {
			st->undecoded[i].count++;
			return;
		}
	if (st->nr_undecoded_types < (int)ARRAY_SIZE(st->undecoded)) {
		st->undecoded[st->nr_undecoded_types].type = type;
		st->undecoded[st->nr_undecoded_types++].count = 1;
	}
}

/* Counts what the input holds, once per record as it is read. */
static void count_record(struct pd_reader *r, const struct pd_event *ev)
{
	if (ev->type == PERF_RECORD_SAMPLE) {
		r->stats.nr_samples++;
	} else if (ev->type == PERF_RECORD_LOST) {
		r->stats.nr_lost_records++;
		r->stats.lost_samples += ev->u.lost.lost;
	} else if (ev->type == PERF_RECORD_LOST_SAMPLES) {
		r->stats.lost_samples += ev->u.lost_samples.lost;
	} else if (!pdd_type_decoded(ev->type)) {
		count_undecoded(r, ev->type);
	}
}

static int next_ordered(struct pd_reader *r, struct pd_event *ev)
{
	if (r->out_next == r->out_end)
		pdr_fill_queue(r);
	if (r->out_next == r->out_end && r->round_seen) {
		r->round_seen = false;
		memset(ev, 0, sizeof(*ev));
		ev->type = PD_RECORD_FINISHED_ROUND;
		return 1;
	}
	if (r->out_next == r->out_end) {
		if (r->failed) {
			err_set("%s", r->error);
			return -1;
		}
		return 0;
	}
	struct pdr_queued *q = &r->queue.v[r->out_next++];
	const u8 *rec = pdr_at(r, q->offset);
	rec = pdr_aligned(r, rec, get_u32(rec + 4) >> 16);
	r->last_out_time = q->time;
	if (decode(r, rec, q->offset, ev) < 0) {
		/* A damaged record ends the input here. */
		r->out_next = r->out_end = r->queue.n;
		err_set("%s", r->error);
		return -1;
	}
	count_record(r, ev);
	return 1;
}

static int next_unordered(struct pd_reader *r, struct pd_event *ev)
{
	for (;;) {
		const u8 *rec;
		u64 offset;
		if (r->ended) {
			if (r->failed)
				err_set("%s", r->error);
			return r->failed ? -1 : 0;
		}
		int got = pdr_next_raw(r, &rec, &offset);
		if (got == 0) {
			r->ended = true;
			return 0;
		}
		if (got < 0) {
			err_set("%s", r->error);
			return -1;
		}
		if (get_u32(rec) >= PD_RECORD_HEADER_ATTR) {
			int used = pdr_user_record(r, rec, offset);
			if (used < 0) {
				err_set("%s", r->error);
				return -1;
			}
			if (used)
				continue;
		}
		if (decode(r, rec, offset, ev) < 0) {
			err_set("%s", r->error);
			return -1;
		}
		count_record(r, ev);
		return 1;
	}
}

int pd_reader_next(struct pd_reader *r, struct pd_event *ev)
{
	return r->ordered ? next_ordered(r, ev) : next_unordered(r, ev);
}

struct pd_reader *pd_reader_open(const char *path, const struct pd_reader_opts *opts)
{
	struct pd_reader *r = xcalloc(1, sizeof(*r));
	r->ordered = !(opts && opts->unordered);
	r->rounds = r->ordered && opts && opts->rounds;
	u64map_init(&r->id_to_attr);
	bool use_fd = opts && opts->fd > 0;
	bool use_stdin = use_fd || !strcmp(path, "-");
	r->fd = use_fd ? opts->fd : use_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err_set_errno("%s", path);
		goto fail;
	}
	if (pdr_read_header(r, path, use_stdin) < 0)
		goto fail;
	if (r->pipe && r->ordered)
		pdr_fill_queue(r);   /* the stream's attrs lead it: read them now */
	if (opts && opts->tracing)
		pdr_read_trace(r, opts->own_recording);
	return r;
fail:
	pd_reader_close(r);
	return NULL;
}

void pd_reader_close(struct pd_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap((void *)r->map, r->map_len);
	if (r->fd > 0)
		close(r->fd);
	pdr_header_free(r);
	pdr_attrs_free(r);
	VEC_FREE(&r->queue);
	VEC_FREE(&r->merge_tmp);
	VEC_FREE(&r->scratch);
	pdz_free(r->z);
	free(r->win);
	free(r);
}

const struct pd_reader_stats *pd_reader_stats(const struct pd_reader *r)
{
	return &r->stats;
}

bool pd_reader_is_pipe(const struct pd_reader *r)
{
	return r->pipe;
}

u64 pd_reader_position(const struct pd_reader *r, u64 *total)
{
	*total = r->pipe ? 0 : r->data_end - r->data_begin;
	return r->pipe ? r->pos : r->pos - r->data_begin;
}
