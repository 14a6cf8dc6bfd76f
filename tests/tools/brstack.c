/* brstack.c - makes perf.data files with branch stacks from a frame-pointer
 * recording (perf record -g), for the tests of what this machine cannot
 * record (no LBR here): each sample's branch stack is built from its own
 * user callchain, so its content is known by construction.
 *
 *   brstack lbr IN OUT   as perf record --call-graph lbr writes them:
 *                        branch_sample_type USER|CALL_STACK|HW_INDEX, the
 *                        callchain cut to its kernel part and the user
 *                        ip, the callers only in the branch stack (entry 0:
 *                        to = the user ip; entry i: from = the i+1-th user
 *                        frame; a lone user frame is its own caller)
 *   brstack any IN OUT   as perf record -b writes them: ANY|USER without
 *                        HW_INDEX, the callchain kept, entry i a call from
 *                        frame i+1 to frame i
 * Every entry's flags are known too: predicted on even entries, mispredicted
 * on odd ones, cycles i + 1, type PERF_BR_CALL (every third one unknown).  Every sample gains a
 * weight after the branch stack (its index times 3, plus 1), so a reader
 * that sizes the stack wrong reads the wrong weight. */
#include <stdio.h>
#include <string.h>

#include "format/format.h"

#define MAX_FRAMES 256

struct conv {
	bool lbr;
	u64 nsamples;
	u64 rec[65536 / 8 + 8];
};

static void put(u8 **p, u64 v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* The user frames of a chain (after its PERF_CONTEXT_USER), and where
 * that marker is (nr when there is none). */
static size_t user_frames(const struct pd_sample *s, u64 *out, u64 *marker)
{
	size_t n = 0;
	*marker = s->nr_callchain;
	for (u64 i = 0; i < s->nr_callchain; i++) {
		if (s->callchain[i] == PERF_CONTEXT_USER) {
			*marker = i;
			continue;
		}
		if (*marker < s->nr_callchain && s->callchain[i] < PERF_CONTEXT_MAX && n < MAX_FRAMES)
			out[n++] = s->callchain[i];
	}
	return n;
}

static u64 entry_flags(u64 i)
{
	u64 f = (i % 2 == 0) ? 2 : 1;          /* predicted : mispredicted */
	f |= ((i + 1) & 0xffff) << 4;          /* cycles */
	f |= (u64)(i % 3 == 2 ? PERF_BR_UNKNOWN : PERF_BR_CALL) << 20;   /* type */
	return f;
}

/* The branch stack after the callchain and raw data of the new record:
 * none for a sample with no user frames (a kernel thread's), as the LBR
 * filtered to user branches would have. */
static void put_branches(struct conv *c, u8 **p, const u64 *user, size_t nuser)
{
	u64 nr = nuser > 1 ? nuser - 1 : nuser;
	put(p, nr);
	if (c->lbr)
		put(p, (nr + 31) & 31);                /* hw_idx: that of the newest */
	for (u64 i = 0; i < nr; i++) {
		u64 from = nuser > 1 ? user[i + 1] : user[0];
		put(p, from);
		put(p, user[i]);
		put(p, entry_flags(i));
	}
}

/* One sample again, with a branch stack and a weight. */
static size_t convert_sample(struct conv *c, const struct pd_event *ev)
{
	const u8 *rec = (const u8 *)ev->raw;
	const struct pd_sample *s = &ev->s;
	u64 user[MAX_FRAMES], marker;
	size_t nuser = user_frames(s, user, &marker);
	u8 *out = (u8 *)c->rec, *p = out;
	memcpy(p, rec, s->chain_off);
	p += s->chain_off;
	if (c->lbr && nuser) {
		/* The kernel part, then PERF_CONTEXT_USER and the user ip alone. */
		put(&p, marker + 2);
		for (u64 i = 0; i < marker; i++)
			put(&p, s->callchain[i]);
		put(&p, PERF_CONTEXT_USER);
		put(&p, user[0]);
	} else {
		memcpy(p, rec + s->chain_off, s->chain_end - s->chain_off);
		p += s->chain_end - s->chain_off;
	}
	memcpy(p, rec + s->chain_end, s->user_off - s->chain_end);   /* RAW */
	p += s->user_off - s->chain_end;
	put_branches(c, &p, user, nuser);
	/* User regs and stack copy, then WEIGHT comes first of the rest. */
	memcpy(p, rec + s->user_off, s->user_end - s->user_off);
	p += s->user_end - s->user_off;
	put(&p, c->nsamples * 3 + 1);
	memcpy(p, rec + s->user_end, ev->size - s->user_end);
	p += ev->size - s->user_end;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, ev->misc, (u16)(p - out) };
	memcpy(out, &h, sizeof(h));
	c->nsamples++;
	return (size_t)(p - out);
}

static int add_attrs(struct pd_reader *r, struct pd_writer *w, bool lbr)
{
	for (size_t i = 0; i < pd_reader_nattrs(r); i++) {
		const struct pd_attr *a = pd_reader_attr(r, i);
		struct perf_event_attr attr = a->attr;
		if (attr.sample_type & (PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_WEIGHT |
					PERF_SAMPLE_WEIGHT_STRUCT)) {
			fprintf(stderr, "brstack: the input has branch stacks or weights already\n");
			return -1;
		}
		attr.sample_type |= PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_WEIGHT;
		attr.branch_sample_type = PERF_SAMPLE_BRANCH_USER |
			(lbr ? PERF_SAMPLE_BRANCH_CALL_STACK | PERF_SAMPLE_BRANCH_HW_INDEX
			     : PERF_SAMPLE_BRANCH_ANY);
		if (pd_writer_add_attr(w, &attr, a->name, a->ids, a->nids) < 0)
			return -1;
	}
	return 0;
}

/* The input's header features, as they were (event names come again from
 * the attrs). */
static void copy_features(struct pd_reader *r, struct pd_writer *w)
{
	for (int f = 1; f <= PD_FEAT_LAST_KNOWN; f++) {
		size_t len;
		const void *body = pd_reader_feature(r, f, &len);
		if (!body || f == PD_FEAT_EVENT_DESC)
			continue;
		pd_writer_feat_raw(w, f, body, len);
	}
	pd_writer_feat_event_desc(w);
	/* perf record marks a file whose samples have branch stacks; the
	 * section has no body. */
	pd_writer_feat_raw(w, PD_FEAT_BRANCH_STACK, "", 0);
}

static int convert(struct pd_reader *r, struct pd_writer *w, bool lbr)
{
	static struct conv c;
	c.lbr = lbr;
	if (add_attrs(r, w, lbr) < 0)
		return -1;
	copy_features(r, w);
	if (pd_writer_begin(w) < 0)
		return -1;
	struct pd_event ev;
	int rc;
	while ((rc = pd_reader_next(r, &ev)) == 1) {
		int bad;
		if (ev.type == PERF_RECORD_SAMPLE)
			bad = pd_writer_write(w, c.rec, convert_sample(&c, &ev));
		else
			bad = pd_writer_write(w, ev.raw, ev.size);
		if (bad < 0)
			return -1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "lbr") && strcmp(argv[1], "any"))) {
		fprintf(stderr, "usage: brstack lbr|any IN OUT\n");
		return 2;
	}
	struct pd_reader_opts ro = { .unordered = true };
	struct pd_reader *r = pd_reader_open(argv[2], &ro);
	struct pd_writer *w = r ? pd_writer_open(argv[3], false) : NULL;
	if (!w) {
		fprintf(stderr, "brstack: %s\n", err_msg());
		pd_reader_close(r);
		return 1;
	}
	int rc = convert(r, w, !strcmp(argv[1], "lbr"));
	if (rc < 0) {
		fprintf(stderr, "brstack: %s\n", err_msg());
		pd_writer_abort(w);
	} else if (pd_writer_close(w) < 0) {
		fprintf(stderr, "brstack: %s\n", err_msg());
		rc = -1;
	}
	pd_reader_close(r);
	return rc < 0 ? 1 : 0;
}
