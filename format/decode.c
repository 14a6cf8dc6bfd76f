/* decode.c - one kernel record decoded by its attr's sample_type, the
 * same code for the reader (records from a file or stream) and for the
 * recorder (records it drains from the ring buffers). */
#include "format/format-internal.h"

/* ---- attrs ------------------------------------------------------------- */

static size_t id_trailer_size(const struct perf_event_attr *a)
{
	if (!a->sample_id_all)
		return 0;
	u64 t = a->sample_type;
	size_t n = 0;
	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

/* Derived once per attr, so no record recounts them. */
void pd_attr_init(struct pd_attr *a, const struct perf_event_attr *attr)
{
	memset(a, 0, sizeof(*a));
	a->attr = *attr;
	a->id_trailer_size = id_trailer_size(&a->attr);
	a->nr_user_regs = __builtin_popcountll(a->attr.sample_regs_user);
	a->nr_intr_regs = __builtin_popcountll(a->attr.sample_regs_intr);
}

/* ---- samples ------------------------------------------------------------- */

/* PERF_SAMPLE_READ's counter values: one value, or a group's (nr, then a
 * value per member), with the times, ids and lost counts read_format asks
 * for.  A read_format bit newer than this ABI has a size we cannot know:
 * the caller stops before it (see decode_sample_head). */
static bool decode_read(struct cursor *c, u64 fmt, struct pd_sample *s)
{
	u64 nr = 1, v;
	unsigned times = !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);
	unsigned id = !!(fmt & PERF_FORMAT_ID), lost = !!(fmt & PERF_FORMAT_LOST);
	const u8 *p;
	if (fmt & PERF_FORMAT_GROUP) {
		if (!take_u64(c, &nr))
			return false;
		for (unsigned i = 0; i < times; i++)
			if (!take_u64(c, &v))
				return false;
		if (!take_array(c, nr, 8 * (1 + id + lost), &p))
			return false;
		s->read_stride = (u8)(1 + id + lost);
		s->read_id_at = id ? 1 : 0;
	} else {
		if (!take(c, 8 * (1 + times + id + lost), &p))
			return false;
		s->read_stride = 0;
		s->read_id_at = id ? (u8)(1 + times) : 0;
	}
	s->nr_read = nr;
	s->read = (const u64 *)p;
	return true;
}

/* Entries of from, to and flags, newest first, after the count and (with
 * HW_INDEX) the hardware's index of the newest; newer kernels may add a
 * counts word per entry after them. */
static bool decode_branches(struct cursor *c, u64 bst, struct pd_sample *s)
{
	const u8 *p;
	if (!take_u64(c, &s->nr_branches))
		return false;
	s->has_hw_idx = bst & PERF_SAMPLE_BRANCH_HW_INDEX;
	if (s->has_hw_idx && !take_u64(c, &s->branch_hw_idx))
		return false;
	if (!take_array(c, s->nr_branches, 24, &p))
		return false;
	s->branches = (const u64 *)p;
	return !(bst & PD_SAMPLE_BRANCH_COUNTERS) || take_array(c, s->nr_branches, 8, NULL);
}

static bool decode_regs(struct cursor *c, int nregs, u64 *abi, const u64 **regs)
{
	const u8 *p;
	if (!take_u64(c, abi))
		return false;
	if (*abi == 0)
		return true;
	if (!take_array(c, (u64)nregs, 8, &p))
		return false;
	*regs = (const u64 *)p;
	return true;
}

/* The fields samples and sample_id trailers share, in the kernel's order:
 * TID, TIME, (ADDR: samples only), ID, STREAM_ID, CPU. */
static bool take_id_fields(struct cursor *c, u64 t, struct pd_sample *s, bool with_addr)
{
	if ((t & PERF_SAMPLE_TID) && !take_pair32(c, &s->pid, &s->tid))
		return false;
	if ((t & PERF_SAMPLE_TIME) && !take_u64(c, &s->time))
		return false;
	if (with_addr && (t & PERF_SAMPLE_ADDR) && !take_u64(c, &s->addr))
		return false;
	if ((t & PERF_SAMPLE_ID) && !take_u64(c, &s->id))
		return false;
	if ((t & PERF_SAMPLE_STREAM_ID) && !take_u64(c, &s->stream_id))
		return false;
	if (t & PERF_SAMPLE_CPU) {
		u32 res;
		if (!take_pair32(c, &s->cpu, &res))
			return false;
	}
	return true;
}

static bool decode_raw(struct cursor *c, struct pd_sample *s)
{
	const u8 *p;
	if (!take(c, 4, &p))
		return false;
	s->raw_size = get_u32(p);
	if (!take(c, s->raw_size, &s->raw))
		return false;
	/* The kernel pads size + data to a multiple of 8. */
	size_t pad = (8 - ((4 + (size_t)s->raw_size) & 7)) & 7;
	return take(c, pad, NULL);
}

static bool decode_stack(struct cursor *c, struct pd_sample *s)
{
	if (!take_u64(c, &s->stack_size) || !take(c, s->stack_size, &s->stack))
		return false;
	if (s->stack_size && !take_u64(c, &s->stack_dyn_size))
		return false;
	if (s->stack_dyn_size > s->stack_size)
		s->stack_dyn_size = s->stack_size;
	return true;
}

/* Where the cursor is, as an offset from the record's start (a record is
 * at most 65535 bytes, so it fits). */
static u16 at(const struct cursor *c, const u8 *rec)
{
	return (u16)(c->p - rec);
}

/* How far a sample's head decoded: HEAD_ONLY when the fields after its
 * counter values cannot be found (a read_format newer than this ABI). */
enum head { HEAD_BAD, HEAD_ONLY, HEAD_OK };

/* The fields from IDENTIFIER to the user stack, marking where the
 * callchain and the user regs and stack lie (what the rewriter replaces). */

static enum head decode_sample_head(const struct pd_attr *pa, struct cursor *c, const u8 *rec,
				    struct pd_sample *s)
{
	const struct perf_event_attr *a = &pa->attr;
	u64 t = a->sample_type;
	const u8 *p;

	if ((t & PERF_SAMPLE_IDENTIFIER) && !take_u64(c, &s->id))
		return HEAD_BAD;
	if ((t & PERF_SAMPLE_IP) && !take_u64(c, &s->ip))
		return HEAD_BAD;
	if (!take_id_fields(c, t, s, true))
		return HEAD_BAD;
	if ((t & PERF_SAMPLE_PERIOD) && !take_u64(c, &s->period))
		return HEAD_BAD;
	if (t & PERF_SAMPLE_READ) {
		if (a->read_format >= PERF_FORMAT_MAX) {
			/* Where the rest lies is unknown (the reader notes it). */
			s->chain_off = s->chain_end = s->user_off = s->user_end = at(c, rec);
			return HEAD_ONLY;
		}
		if (!decode_read(c, a->read_format, s))
			return HEAD_BAD;
	}
	s->chain_off = at(c, rec);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (!take_u64(c, &s->nr_callchain) || !take_array(c, s->nr_callchain, 8, &p))
			return HEAD_BAD;
		s->callchain = (const u64 *)p;
	}
	s->chain_end = at(c, rec);
	if ((t & PERF_SAMPLE_RAW) && !decode_raw(c, s))
		return HEAD_BAD;
	if ((t & PERF_SAMPLE_BRANCH_STACK) && !decode_branches(c, a->branch_sample_type, s))
		return HEAD_BAD;
	s->user_off = at(c, rec);
	if ((t & PERF_SAMPLE_REGS_USER) &&
	    !decode_regs(c, pa->nr_user_regs, &s->user_abi, &s->user_regs))
		return HEAD_BAD;
	if ((t & PERF_SAMPLE_STACK_USER) && !decode_stack(c, s))
		return HEAD_BAD;
	s->user_end = at(c, rec);
	return HEAD_OK;
}

/* Decodes the body of a SAMPLE record by its attr's sample_type. */
static bool decode_sample(const struct pd_attr *pa, const u8 *rec, size_t size,
			  struct pd_sample *s)
{
	u64 t = pa->attr.sample_type;
	struct cursor c = { rec + 8, rec + size };

	enum head h = decode_sample_head(pa, &c, rec, s);
	if (h != HEAD_OK)
		return h == HEAD_ONLY;
	if ((t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && !take_u64(&c, &s->weight))
		return false;
	if ((t & PERF_SAMPLE_DATA_SRC) && !take_u64(&c, &s->data_src))
		return false;
	if ((t & PERF_SAMPLE_TRANSACTION) && !take_u64(&c, &s->transaction))
		return false;
	if (t & PERF_SAMPLE_REGS_INTR) {
		u64 abi;
		const u64 *regs;
		if (!decode_regs(&c, pa->nr_intr_regs, &abi, &regs))
			return false;
	}
	if ((t & PERF_SAMPLE_PHYS_ADDR) && !take_u64(&c, &s->phys_addr))
		return false;
	if ((t & PERF_SAMPLE_AUX) && (!take_u64(&c, &s->aux_size) || !take(&c, s->aux_size, NULL)))
		return false;
	if ((t & PERF_SAMPLE_CGROUP) && !take_u64(&c, &s->cgroup))
		return false;
	if ((t & PERF_SAMPLE_DATA_PAGE_SIZE) && !take_u64(&c, &s->data_page_size))
		return false;
	if ((t & PERF_SAMPLE_CODE_PAGE_SIZE) && !take_u64(&c, &s->code_page_size))
		return false;
	return true;
}

/* ---- other records ------------------------------------------------------- */

/* The sample_id trailer of a non-sample record: pid, tid, time, id, cpu. */
static bool decode_id_trailer(const struct pd_attr *pa, const u8 *rec, size_t size,
			      struct pd_sample *s)
{
	size_t n = pa->id_trailer_size;
	if (!n)
		return true;
	if (size < 8 + n)
		return false;
	struct cursor c = { rec + size - n, rec + size };
	u64 t = pa->attr.sample_type, v;
	if (!take_id_fields(&c, t, s, false))
		return false;
	if ((t & PERF_SAMPLE_IDENTIFIER) && !take_u64(&c, &v))
		return false;
	return true;
}

const char *pdd_string_in(const u8 *p, const u8 *end)
{
	if (p >= end || !memchr(p, 0, (size_t)(end - p)))
		return NULL;
	return (const char *)p;
}

static bool decode_mmap(struct pd_event *ev, const u8 *body, const u8 *end, bool v2)
{
	struct cursor c = { body, end };
	const u8 *p;
	if (!take_pair32(&c, &ev->u.mmap.pid, &ev->u.mmap.tid) ||
	    !take_u64(&c, &ev->u.mmap.start) || !take_u64(&c, &ev->u.mmap.len) ||
	    !take_u64(&c, &ev->u.mmap.pgoff))
		return false;
	if (v2) {
		if (!take(&c, 24, &p))
			return false;
		/* With the flag but a size outside 1..20 or reserved bytes
		 * set, the flag leaked from another session's event (a
		 * kernel bug) onto a record of device and inode numbers. */
		if ((ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && p[0] > 0 && p[0] <= 20 &&
		    !p[1] && !p[2] && !p[3]) {
			ev->u.mmap.build_id_size = p[0];
			ev->u.mmap.build_id = p + 4;
		} else {
			ev->u.mmap.maj = get_u32(p);
			ev->u.mmap.min = get_u32(p + 4);
			ev->u.mmap.ino = get_u64(p + 8);
		}
		if (!take_pair32(&c, &ev->u.mmap.prot, &ev->u.mmap.flags))
			return false;
	}
	ev->u.mmap.filename = pdd_string_in(c.p, c.end);
	return ev->u.mmap.filename != NULL;
}

/* Decodes the fixed part of kernel side-band records. */
static bool decode_sideband(struct pd_event *ev, const u8 *rec, size_t size)
{
	size_t trailer = ev->attr ? ev->attr->id_trailer_size : 0;
	if (size < 8 + trailer)
		return false;
	const u8 *body = rec + 8, *end = rec + size - trailer;
	struct cursor c = { body, end };
	switch (ev->type) {
	case PERF_RECORD_MMAP:
		return decode_mmap(ev, body, end, false);
	case PERF_RECORD_MMAP2:
		return decode_mmap(ev, body, end, true);
	case PERF_RECORD_COMM:
		ev->u.comm.exec = ev->misc & PERF_RECORD_MISC_COMM_EXEC;
		if (!take_pair32(&c, &ev->u.comm.pid, &ev->u.comm.tid))
			return false;
		ev->u.comm.comm = pdd_string_in(c.p, c.end);
		return ev->u.comm.comm != NULL;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return take_pair32(&c, &ev->u.task.pid, &ev->u.task.ppid) &&
		       take_pair32(&c, &ev->u.task.tid, &ev->u.task.ptid) &&
		       take_u64(&c, &ev->u.task.time);
	case PERF_RECORD_LOST:
		return take_u64(&c, &ev->u.lost.id) && take_u64(&c, &ev->u.lost.lost);
	case PERF_RECORD_LOST_SAMPLES:
		return take_u64(&c, &ev->u.lost_samples.lost);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return take_u64(&c, &ev->u.throttle.time) && take_u64(&c, &ev->u.throttle.id) &&
		       take_u64(&c, &ev->u.throttle.stream_id);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		ev->u.cswitch.out = ev->misc & PERF_RECORD_MISC_SWITCH_OUT;
		ev->u.cswitch.preempt = ev->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
		if (ev->type == PERF_RECORD_SWITCH_CPU_WIDE)
			return take_pair32(&c, &ev->u.cswitch.pid, &ev->u.cswitch.tid);
		return true;
	default:
		return true;
	}
}

/* The types decode_sideband and decode_sample give a body to; every
 * other one is delivered with its header and sample_id trailer only. */
bool pdd_type_decoded(u32 type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return true;
	default:
		return false;
	}
}

const char *pd_record_name(u32 type)
{
	static const char *const kernel[] = {
		[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE", [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES", [PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};
	static const char *const user[] = {
		"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA",
		"HEADER_BUILD_ID", "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO",
		"AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG",
		"STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV", "HEADER_FEATURE",
		"COMPRESSED", "FINISHED_INIT", "COMPRESSED2", "BPF_METADATA",
	};
	if (type < ARRAY_SIZE(kernel))
		return kernel[type];
	if (type >= PD_RECORD_HEADER_ATTR && type - PD_RECORD_HEADER_ATTR < ARRAY_SIZE(user))
		return user[type - PD_RECORD_HEADER_ATTR];
	return NULL;
}

/* ---- branch entries -------------------------------------------------------- */

const char *pd_branch_type_name(u64 flags)
{
	static const char *const names[] = {
		"", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET", "SYSCALL",
		"SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ", "SERROR", "NO_TX",
	};
	static const char *const extended[] = {
		"FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1", "ARCH_2", "ARCH_3",
		"ARCH_4", "ARCH_5",
	};
	u64 type = PD_BRANCH_TYPE(flags), new_type = PD_BRANCH_NEW_TYPE(flags);
	if (type < ARRAY_SIZE(names))
		return names[type];
	return new_type < ARRAY_SIZE(extended) ? extended[new_type] : "";
}

/* ---- one record ------------------------------------------------------------ */

int pd_decode(const struct pd_attr *a, const void *rec, struct pd_event *ev)
{
	const struct perf_event_header *h = rec;
	memset(ev, 0, sizeof(*ev));
	ev->type = h->type;
	ev->misc = h->misc;
	ev->size = h->size;
	ev->raw = h;
	ev->attr = a;
	if (h->size < sizeof(*h))
		return -1;     /* the reader never hands these on; others may */
	bool ok;
	if (h->type == PERF_RECORD_SAMPLE) {
		ok = a && decode_sample(a, rec, h->size, &ev->s);
		ev->has_time = ok && (a->attr.sample_type & PERF_SAMPLE_TIME);
	} else {
		ok = !a || decode_id_trailer(a, rec, h->size, &ev->s);
		ok = ok && decode_sideband(ev, rec, h->size);
		ev->has_time = ok && a && a->attr.sample_id_all &&
			       (a->attr.sample_type & PERF_SAMPLE_TIME);
	}
	return ok ? 0 : -1;
}
