/* writer.c - the perf.data writer: the PERFILE2 file (header, attrs, data,
 * feature sections) and the pipe variant (a stream of records), with a
 * buffered data path and a header that only claims what is on disk. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/writer-internal.h"

/* Big enough that a busy recording costs few syscalls, small enough that
 * a crash loses little. */
#define PDW_BUF_SIZE (2u << 20)

struct file_section {
	u64 offset, size;
};

/* perf_file_header: fixed by perf; 104 bytes. */
struct file_header {
	u64 magic;
	u64 size;
	u64 attr_size;
	struct file_section attrs, data, event_types;
	u64 features[PD_FEAT_MAX / 64];
};
_Static_assert(sizeof(struct file_header) == 104, "perf_file_header is 104 bytes");

/* perf_file_attr: the attr, then where its ids are. */
struct file_attr {
	struct perf_event_attr attr;
	struct file_section ids;
};

struct pipe_header {
	u64 magic, size;
};

struct feature_record {
	struct perf_event_header header;
	u64 feat_id;
};

/* perf_record_header_tracing_data is 12 bytes: perf reads exactly that,
 * then the tracing data straight from the stream. */
struct tracing_record {
	struct perf_event_header header;
	u32 size;
} __attribute__((packed));
_Static_assert(sizeof(struct tracing_record) == 12, "tracing record is 12 bytes");

/* ---- Output ------------------------------------------------------------ */

/* The live copy of a stream (pd_writer_tee): all of it or an error. */
static size_t out_tee(int fd, const u8 *b, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = write(fd, b + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	return done;
}

/* Writes at off (file) or appends (pipe); returns the bytes that made it,
 * with errno telling why when short. */
static size_t out_raw(struct pd_writer *w, u64 off, const void *p, size_t n)
{
	const u8 *b = p;
	size_t done = 0;
	while (done < n) {
		ssize_t r = w->pipe ? write(w->fd, b + done, n - done)
				    : pwrite(w->fd, b + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = ENOSPC;
			break;
		}
		done += (size_t)r;
	}
	if (w->tee_fd >= 0 && done && out_tee(w->tee_fd, b, done) < done)
		return 0;
	return done;
}

/* Records the first write error; every later write repeats it, since a
 * stream with a hole in it must not continue. */
static int fail(struct pd_writer *w, const char *what)
{
	err_set_errno("%s: %s", w->path, what);
	if (!w->fail_msg)
		w->fail_msg = xstrdup(err_msg());
	w->failed = true;
	return -1;
}

static int refuse_if_failed(const struct pd_writer *w)
{
	if (!w->failed)
		return 0;
	err_set("%s", w->fail_msg ? w->fail_msg : "earlier write failed");
	return -1;
}

/* Header, attrs, features and pipe side records: not counted as data. */
static int out_meta(struct pd_writer *w, u64 off, const void *p, size_t n,
		    const char *what)
{
	size_t done = out_raw(w, off, p, n);
	if (w->pipe)
		w->stream_off += done;
	return done < n ? fail(w, what) : 0;
}

static int out_data(struct pd_writer *w, const void *p, size_t n)
{
	size_t done = out_raw(w, w->data_offset + w->data_disk, p, n);
	w->data_disk += done;
	if (w->pipe)
		w->stream_off += done;
	return done < n ? fail(w, "write") : 0;
}

/* Writes out the buffer of records as they go to the file. */
static int flush_buf(struct pd_writer *w)
{
	size_t n = w->buf_len;
	if (!n || w->failed)
		return refuse_if_failed(w);
	w->buf_len = 0;
	return out_data(w, w->buf, n);
}

/* Appends bytes as they go to the file (records, or compressed ones). */
static int buf_append(struct pd_writer *w, const void *p, size_t n)
{
	/* Copying a big piece only to write it out again gains nothing. */
	if (n >= w->buf_cap / 2) {
		if (flush_buf(w))
			return -1;
		return out_data(w, p, n);
	}
	if (w->buf_len + n > w->buf_cap && flush_buf(w))
		return -1;
	memcpy(w->buf + w->buf_len, p, n);
	w->buf_len += n;
	return 0;
}

static int emit_compressed(void *ctx, const void *rec, size_t len)
{
	return buf_append(ctx, rec, len);
}

/* The records gathered for compression, deflated into the buffer. */
static int deflate_batch(struct pd_writer *w)
{
	size_t n = w->zbuf_len;
	if (!n)
		return 0;
	w->zbuf_len = 0;
	if (pdz_deflate(w->z, w->zbuf, n, emit_compressed, w) == 0)
		return 0;
	if (w->failed)
		return -1;       /* the write's own error is set */
	err_prefix("%s: compressing", w->path);
	w->fail_msg = xstrdup(err_msg());
	w->failed = true;
	return -1;
}

static int flush(struct pd_writer *w)
{
	if (w->z && deflate_batch(w))
		return -1;
	return flush_buf(w);
}

/* Gathers records for compression; a full batch is deflated at once, so
 * no compressed record inflates to more than the batch size. */
static int zbuf_append(struct pd_writer *w, const void *p, size_t n)
{
	const u8 *b = p;
	while (n) {
		size_t take = MIN(n, w->zbuf_cap - w->zbuf_len);
		memcpy(w->zbuf + w->zbuf_len, b, take);
		w->zbuf_len += take;
		b += take;
		n -= take;
		if (w->zbuf_len == w->zbuf_cap && deflate_batch(w))
			return -1;
	}
	return 0;
}

/* Whether records may be written now. */
static int data_check(struct pd_writer *w)
{
	if (!w->begun) {
		err_set("%s: records written before pd_writer_begin", w->path);
		return -1;
	}
	return refuse_if_failed(w);
}

int pdw_data_append(struct pd_writer *w, const void *p, size_t n)
{
	if (data_check(w))
		return -1;
	return w->z ? zbuf_append(w, p, n) : buf_append(w, p, n);
}

/* ---- Opening and attrs ------------------------------------------------- */

struct pd_writer *pd_writer_open(const char *path, bool pipe)
{
	bool to_stdout = !strcmp(path, "-");
	/* A file-mode header cannot be rewritten on a FIFO or socket. */
	struct stat st;
	if (!to_stdout && stat(path, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		pipe = true;
	/* Files are opened for reading too: salvaging after a failure reads
	 * back the last records to find where the last whole one ends. */
	int flags = pipe ? O_WRONLY | O_CREAT | O_CLOEXEC
			 : O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC;
	int fd = to_stdout ? STDOUT_FILENO : open(path, flags, 0600);
	if (fd < 0) {
		err_set_errno("%s", path);
		return NULL;
	}
	if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		pipe = true;

	struct pd_writer *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->tee_fd = -1;
	w->own_fd = !to_stdout;
	w->pipe = pipe || to_stdout;
	w->path = xstrdup(to_stdout ? "<stdout>" : path);
	w->buf_cap = PDW_BUF_SIZE;
	w->buf = xmalloc(w->buf_cap);
	return w;
}

struct pd_writer *pd_writer_open_fd(int fd, const char *name)
{
	struct pd_writer *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->tee_fd = -1;
	w->pipe = true;
	w->path = xstrdup(name);
	w->buf_cap = PDW_BUF_SIZE;
	w->buf = xmalloc(w->buf_cap);
	return w;
}

void pd_writer_tee(struct pd_writer *w, int fd)
{
	w->tee_fd = fd;
}

bool pd_writer_is_pipe(const struct pd_writer *w)
{
	return w->pipe;
}

int pd_writer_add_attr(struct pd_writer *w, const struct perf_event_attr *attr,
		       const char *name, const u64 *ids, size_t nids)
{
	if (w->begun) {
		err_set("%s: events must be added before the data begins", w->path);
		return -1;
	}
	struct pdw_attr a = { .attr = *attr, .nids = nids };
	/* Readers take the attr's length from attr.size; ours is the whole struct. */
	a.attr.size = sizeof(a.attr);
	a.name = name ? xstrdup(name) : NULL;
	if (nids) {
		a.ids = xmalloc(nids * sizeof(u64));
		memcpy(a.ids, ids, nids * sizeof(u64));
	}
	VEC_PUSH(&w->attrs, a);
	return 0;
}

/* ---- File mode ------------------------------------------------------------ */

static int write_file_header(struct pd_writer *w, u64 data_size, const u64 *features)
{
	struct file_header h = {
		.magic = PD_MAGIC,
		.size = sizeof(h),
		.attr_size = sizeof(struct file_attr),
		.attrs = { w->attrs_offset, w->attrs.n * sizeof(struct file_attr) },
		.data = { w->data_offset, data_size },
	};
	if (features)
		memcpy(h.features, features, sizeof(h.features));
	return out_meta(w, 0, &h, sizeof(h), "writing the header");
}

/* Layout: header, every attr's ids, the perf_file_attr array, then data.
 * The placeholder header already points at attrs and data, with a data
 * size of 0 meaning "not finished" (perf warns; readers may scan on). */
static int begin_file(struct pd_writer *w)
{
	u64 off = sizeof(struct file_header);
	u64 *ids_at = xcalloc(w->attrs.n, sizeof(u64));
	int ret = 0;
	for (size_t i = 0; i < w->attrs.n && !ret; i++) {
		struct pdw_attr *a = &w->attrs.v[i];
		ids_at[i] = off;
		ret = out_meta(w, off, a->ids, a->nids * sizeof(u64), "writing ids");
		off += a->nids * sizeof(u64);
	}
	w->attrs_offset = off;
	for (size_t i = 0; i < w->attrs.n && !ret; i++) {
		struct file_attr fa = {
			.attr = w->attrs.v[i].attr,
			.ids = { ids_at[i], w->attrs.v[i].nids * sizeof(u64) },
		};
		ret = out_meta(w, off, &fa, sizeof(fa), "writing attrs");
		off += sizeof(fa);
	}
	free(ids_at);
	w->data_offset = off;
	return ret ? ret : write_file_header(w, 0, NULL);
}

/* The section table (one perf_file_section per set bit, in bit order) at
 * 'at', the bodies after it.  Returns the end offset, 0 on failure. */
static u64 write_feature_sections(struct pd_writer *w, u64 at)
{
	int n = 0;
	for (int f = 0; f < PD_FEAT_MAX; f++)
		n += pdw_bit(w->feat_set, f);
	struct file_section *secs = xcalloc(n ? n : 1, sizeof(*secs));
	u64 off = at + (u64)n * sizeof(*secs);
	int i = 0, ret = 0;
	for (int f = 0; f < PD_FEAT_MAX && !ret; f++) {
		if (!pdw_bit(w->feat_set, f))
			continue;
		secs[i].offset = off;
		secs[i].size = w->feat[f].len;
		ret = out_meta(w, off, w->feat[f].p, w->feat[f].len, "writing features");
		off += w->feat[f].len;
		i++;
	}
	if (!ret)
		ret = out_meta(w, at, secs, n * sizeof(*secs), "writing features");
	free(secs);
	return ret ? 0 : off;
}

/* Features after the data, then the header that makes them visible: a
 * crash in between leaves the old, still consistent header. */
static int finish_file(struct pd_writer *w, u64 data_size)
{
	u64 end = write_feature_sections(w, w->data_offset + data_size);
	if (!end)
		return -1;
	if (write_file_header(w, data_size, w->feat_set))
		return -1;
	/* Drop stale bytes (a cut record) past the end; only tidiness. */
	struct stat st;
	if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && (u64)st.st_size > end)
		(void)!ftruncate(w->fd, (off_t)end);
	return 0;
}

/* The end of the last whole record on disk.  Records before data_safe are
 * known whole (a FINISHED_ROUND ended there); past it we walk the record
 * headers, at most one round of data. */
static u64 last_whole_record(struct pd_writer *w)
{
	u64 pos = w->data_safe, end = w->data_disk;
	while (pos < end) {
		size_t want = (size_t)MIN((u64)w->buf_cap, end - pos);
		ssize_t got = pread(w->fd, w->buf, want, (off_t)(w->data_offset + pos));
		if (got < (ssize_t)sizeof(struct perf_event_header))
			break;
		size_t i = 0;
		while (i + sizeof(struct perf_event_header) <= (size_t)got) {
			struct perf_event_header h;
			memcpy(&h, w->buf + i, sizeof(h));
			if (h.size < sizeof(h) || i + h.size > (size_t)got)
				break;
			i += h.size;
		}
		if (i == 0)
			break;
		pos += i;
		if (i < (size_t)got && (size_t)got < want)
			break;
	}
	return pos;
}

/* After a failure: a header whose data size covers only whole records
 * that reached the disk, and no features (they may not have). */
static void salvage_file(struct pd_writer *w)
{
	char *msg = w->fail_msg ? xstrdup(w->fail_msg) : NULL;
	u64 size = last_whole_record(w);
	static const u64 none[PD_FEAT_MAX / 64];
	(void)write_file_header(w, size, none);
	if (msg) {
		err_set("%s", msg);
		free(msg);
	}
}

/* ---- Pipe mode ------------------------------------------------------------ */

static int pipe_feature(struct pd_writer *w, int f)
{
	const struct pdw_bytes *b = &w->feat[f];
	if (sizeof(struct feature_record) + b->len > 0xffff) {
		err_set("%s: feature %d is too big for a pipe record (%zu bytes)",
			w->path, f, b->len);
		return -1;
	}
	struct feature_record r = {
		.header = { PD_RECORD_HEADER_FEATURE, 0,
			    (u16)(sizeof(r) + b->len) },
		.feat_id = (u64)f,
	};
	if (out_meta(w, 0, &r, sizeof(r), "write") ||
	    out_meta(w, 0, b->p, b->len, "write"))
		return -1;
	pdw_set_bit(w->feat_sent, f);
	return 0;
}

static int pipe_attr(struct pd_writer *w, const struct pdw_attr *a)
{
	size_t size = sizeof(struct perf_event_header) + sizeof(a->attr) +
		      a->nids * sizeof(u64);
	if (size > 0xffff) {
		err_set("%s: too many ids (%zu) for a pipe attr record", w->path, a->nids);
		return -1;
	}
	struct perf_event_header h = { PD_RECORD_HEADER_ATTR, 0, (u16)size };
	if (out_meta(w, 0, &h, sizeof(h), "write") ||
	    out_meta(w, 0, &a->attr, sizeof(a->attr), "write") ||
	    out_meta(w, 0, a->ids, a->nids * sizeof(u64), "write"))
		return -1;
	return 0;
}

/* As perf: a 12-byte record holding the padded size, then the tracing data
 * itself, then zeros up to that size. */
static int pipe_tracing(struct pd_writer *w)
{
	const struct pdw_bytes *b = &w->feat[PD_FEAT_TRACING_DATA];
	size_t padded = PDW_ALIGN(b->len, sizeof(u64));
	static const u8 zeros[8];
	struct tracing_record r = {
		.header = { PD_RECORD_HEADER_TRACING_DATA, 0, sizeof(r) },
		.size = (u32)padded,
	};
	if (flush(w) ||
	    out_meta(w, 0, &r, sizeof(r), "write") ||
	    out_meta(w, 0, b->p, b->len, "write") ||
	    out_meta(w, 0, zeros, padded - b->len, "write"))
		return -1;
	pdw_set_bit(w->feat_sent, PD_FEAT_TRACING_DATA);
	return 0;
}

/* The BUILD_ID body is a run of build_id_event records; in a stream each
 * becomes a HEADER_BUILD_ID record.  Only the ones not yet sent go out. */
static int pipe_build_ids(struct pd_writer *w)
{
	const struct pdw_bytes *b = &w->feat[PD_FEAT_BUILD_ID];
	while (w->build_ids_sent + sizeof(struct perf_event_header) <= b->len) {
		struct perf_event_header h;
		memcpy(&h, b->p + w->build_ids_sent, sizeof(h));
		h.type = PD_RECORD_HEADER_BUILD_ID;
		if (out_meta(w, 0, &h, sizeof(h), "write") ||
		    out_meta(w, 0, b->p + w->build_ids_sent + sizeof(h),
			     h.size - sizeof(h), "write"))
			return -1;
		w->build_ids_sent += h.size;
	}
	pdw_set_bit(w->feat_sent, PD_FEAT_BUILD_ID);
	return 0;
}

/* Features with their own record types are not HEADER_FEATURE records. */
static bool streams_as_feature(int f)
{
	return f != PD_FEAT_TRACING_DATA && f != PD_FEAT_BUILD_ID;
}

static bool feature_pending(const struct pd_writer *w, int f)
{
	return pdw_bit(w->feat_set, f) && !pdw_bit(w->feat_sent, f);
}

/* All pending features but 'except' (0 for none). */
static int pipe_pending_features(struct pd_writer *w, int except)
{
	for (int f = 1; f < PD_FEAT_MAX; f++)
		if (f != except && feature_pending(w, f) && streams_as_feature(f) &&
		    pipe_feature(w, f))
			return -1;
	return 0;
}

static bool build_ids_pending(const struct pd_writer *w)
{
	return w->build_ids_sent < w->feat[PD_FEAT_BUILD_ID].len;
}

/* perf's order: pipe header, features, attrs, tracing data; except that
 * EVENT_DESC follows the attrs, as perf only names events it already has.
 * perf sends a HEADER_LAST_FEATURE marker too, but its number changes
 * between perf versions (newer perf rejects an unknown one): left out. */
static int begin_pipe(struct pd_writer *w)
{
	struct pipe_header ph = { PD_MAGIC, sizeof(ph) };
	if (out_meta(w, 0, &ph, sizeof(ph), "write") ||
	    pipe_pending_features(w, PD_FEAT_EVENT_DESC))
		return -1;
	for (size_t i = 0; i < w->attrs.n; i++)
		if (pipe_attr(w, &w->attrs.v[i]))
			return -1;
	if (feature_pending(w, PD_FEAT_EVENT_DESC) && pipe_feature(w, PD_FEAT_EVENT_DESC))
		return -1;
	if (pdw_bit(w->feat_set, PD_FEAT_TRACING_DATA) && pipe_tracing(w))
		return -1;
	if (build_ids_pending(w) && pipe_build_ids(w))
		return -1;
	return 0;
}

static int finish_pipe(struct pd_writer *w)
{
	if (flush(w) || pipe_pending_features(w, 0))
		return -1;
	if (pdw_bit(w->feat_set, PD_FEAT_TRACING_DATA) &&
	    !pdw_bit(w->feat_sent, PD_FEAT_TRACING_DATA) && pipe_tracing(w))
		return -1;
	if (build_ids_pending(w) && pipe_build_ids(w))
		return -1;
	return 0;
}

/* ---- Features: shared checks and timing ------------------------------------ */

int pdw_feature_check(struct pd_writer *w, int f)
{
	if (f <= 0 || f >= PD_FEAT_MAX) {
		err_set("%s: no feature %d", w->path, f);
		return -1;
	}
	return refuse_if_failed(w);
}

int pdw_feature_ready(struct pd_writer *w, int f)
{
	pdw_set_bit(w->feat_set, f);
	w->feat_sent[f / 64] &= ~(1ULL << (f % 64));
	/* Samples after this point need the formats: send them now. */
	if (w->pipe && w->begun && f == PD_FEAT_TRACING_DATA)
		return pipe_tracing(w);
	return 0;
}

/* ---- The public sequence ------------------------------------------------------ */

int pd_writer_begin(struct pd_writer *w)
{
	if (w->begun) {
		err_set("%s: pd_writer_begin called twice", w->path);
		return -1;
	}
	if (!w->attrs.n) {
		err_set("%s: no events to write", w->path);
		return -1;
	}
	if (refuse_if_failed(w))
		return -1;
	int ret = w->pipe ? begin_pipe(w) : begin_file(w);
	w->begun = true;
	/* Data after a broken head would be unreadable: refuse it. */
	if (ret && !w->failed) {
		w->fail_msg = xstrdup(err_msg());
		w->failed = true;
	}
	return ret;
}

int pd_writer_write(struct pd_writer *w, const void *buf, size_t len)
{
	return pdw_data_append(w, buf, len);
}

/* How often a file's header is brought up to date while recording. */
#define CHECKPOINT_NS 1000000000ull

int pd_writer_finished_round(struct pd_writer *w)
{
	struct perf_event_header h = { PD_RECORD_FINISHED_ROUND, 0, sizeof(h) };
	/* Compressed, a round ends its batch; the round itself stays plain,
	 * as perf writes it. */
	if (data_check(w) || (w->z && deflate_batch(w)) || buf_append(w, &h, sizeof(h)) ||
	    flush_buf(w))
		return -1;
	w->data_safe = w->data_disk;
	/* Keep the header's data size near the truth, so a recorder killed
	 * outright leaves a file readable up to a recent round. */
	u64 now = now_ns();
	if (!w->pipe && now - w->checkpoint_ns >= CHECKPOINT_NS) {
		w->checkpoint_ns = now;
		return write_file_header(w, w->data_safe, NULL);
	}
	return 0;
}

u64 pd_writer_data_size(const struct pd_writer *w)
{
	return w->data_disk + w->buf_len + w->zbuf_len;
}

/* The COMPRESSED feature: version 0, method 1 (zstd), level, the ratio
 * of record bytes to file bytes, and the mmap size, which tells perf how
 * big a buffer to inflate each compressed record into. */
static int compressed_feature(struct pd_writer *w)
{
	u64 in, out;
	pdz_out_totals(w->z, &in, &out);
	u32 body[5] = { 0, 1, (u32)w->zlevel, out ? (u32)((double)in / (double)out + 0.5) : 0,
			(u32)w->zbuf_cap };
	return pd_writer_feat_raw(w, PD_FEAT_COMPRESSED, body, sizeof(body));
}

int pd_writer_set_compression(struct pd_writer *w, int level, u32 batch_bytes)
{
	if (w->begun) {
		err_set("%s: compression must be set before the data begins", w->path);
		return -1;
	}
	if (level < 1 || level > 22 || batch_bytes < 4096) {
		err_set("%s: bad compression (level %d, batches of %u bytes)", w->path, level,
			batch_bytes);
		return -1;
	}
	pdz_out_free(w->z);
	w->z = pdz_out_new(level);
	w->zlevel = level;
	free(w->zbuf);
	w->zbuf = xmalloc(batch_bytes);
	w->zbuf_cap = batch_bytes;
	return compressed_feature(w);
}

void pd_writer_compressed(const struct pd_writer *w, u64 *in, u64 *out)
{
	*in = *out = 0;
	if (w->z)
		pdz_out_totals(w->z, in, out);
}

static void writer_free(struct pd_writer *w)
{
	for (size_t i = 0; i < w->attrs.n; i++) {
		free(w->attrs.v[i].name);
		free(w->attrs.v[i].ids);
	}
	VEC_FREE(&w->attrs);
	for (int f = 0; f < PD_FEAT_MAX; f++)
		pdw_bytes_free(&w->feat[f]);
	pdz_out_free(w->z);
	free(w->zbuf);
	free(w->buf);
	free(w->path);
	free(w->fail_msg);
	free(w);
}

/* Closes the descriptor; a late error (e.g. NFS) still counts. */
static int close_fd(struct pd_writer *w)
{
	if (!w->own_fd || close(w->fd) == 0)
		return 0;
	return w->failed ? -1 : fail(w, "close");
}

int pd_writer_close(struct pd_writer *w)
{
	if (!w)
		return -1;
	int ret = 0;
	if (!w->begun)
		ret = pd_writer_begin(w);
	if (!ret && !w->failed) {
		if (w->pipe)
			ret = finish_pipe(w);
		else if (flush(w) || (w->z && compressed_feature(w)))
			ret = -1;      /* the file's ratio is known now */
		else
			ret = finish_file(w, w->data_disk);
	}
	if (w->failed && !w->pipe && w->begun)
		salvage_file(w);
	if (w->failed)
		ret = -1;
	if (close_fd(w))
		ret = -1;
	if (ret && w->fail_msg)
		err_set("%s", w->fail_msg);
	writer_free(w);
	return ret;
}

void pd_writer_abort(struct pd_writer *w)
{
	if (!w)
		return;
	if (w->begun && !w->failed) {
		(void)flush(w);
		if (w->pipe) {
			/* Nothing to fix up: the stream is what it is. */
		} else if (w->failed || finish_file(w, last_whole_record(w))) {
			w->failed = true;
		}
	}
	if (w->begun && w->failed && !w->pipe)
		salvage_file(w);
	(void)close_fd(w);
	writer_free(w);
}
