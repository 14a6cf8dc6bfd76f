/* callchain.c - frames from the kernel-supplied callchain: the kernel part
 * (unwound in the kernel) and the user part (walked by frame pointers, or
 * unwound by ember while recording, with its cut marker, or kept by the
 * hardware in the LBR call stack).
 *
 * For an event whose branch stack is the LBR call stack (`--call-graph
 * lbr`), the chain is perf's: the kernel part, the newest branch's target,
 * then every branch's source (unw_lbr_frames).  UNW_CUT_IP in the user
 * context is where an online unwinding's stack copy ended: a marker frame. */
#include "unwind/unwind.h"

/* The sampled ip alone, in the mode the record's misc gives. */
static int leaf_only(const struct pd_sample *s, bool kernel, struct unw_frame *out, int max)
{
	if (max < 1)
		return 0;
	out[0].ip = s->ip;
	out[0].kernel = kernel;
	out[0].cut = false;
	return 1;
}

int unw_sample_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
		      bool *dropped)
{
	bool kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (dropped)
		*dropped = false;
	if (!s->nr_callchain)
		return leaf_only(s, kernel, out, max);
	int n = 0;
	for (u64 i = 0; i < s->nr_callchain && n < max; i++) {
		u64 ip = s->callchain[i];
		if (ip < PERF_CONTEXT_MAX) {
			/* Every field: out[] is reused, and a cut left from
			 * an earlier sample would show as the marker. */
			bool cut = ip == UNW_CUT_IP && !kernel;
			out[n].ip = ip;     /* script prints it as recorded */
			out[n].kernel = kernel;
			out[n].cut = cut;
			n++;
			continue;
		}
		if (ip == PERF_CONTEXT_KERNEL || ip == PERF_CONTEXT_HV) {
			kernel = true;
		} else if (ip == PERF_CONTEXT_USER) {
			kernel = false;
		} else if (ip == PERF_CONTEXT_GUEST || ip == PERF_CONTEXT_GUEST_KERNEL ||
			   ip == PERF_CONTEXT_GUEST_USER) {
			break;   /* the guest's frames are not ours to name */
		} else {
			if (dropped)
				*dropped = true;
			kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
			return leaf_only(s, kernel, out, max);
		}
	}
	return n;
}

int unw_recorded_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
			bool *dropped)
{
	int n = unw_sample_frames(s, misc, out, max, dropped);
	if (dropped && *dropped)
		return n;          /* the sampled ip alone */
	bool leaf = true;
	for (int i = 0; i < n; i++) {
		if (out[i].kernel || out[i].cut)
			continue;
		if (!leaf)
			out[i].ip--;
		leaf = false;
	}
	return n;
}

/* Where the user part of a callchain starts (its PERF_CONTEXT_USER), or
 * -1 when there is none. */
static long user_marker(const struct pd_sample *s)
{
	for (u64 i = 0; i < s->nr_callchain; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER)
			return (long)i;
	return -1;
}

int unw_lbr_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
		   bool *dropped)
{
	long user = user_marker(s);
	if (user < 0 || !s->nr_branches)
		return unw_sample_frames(s, misc, out, max, dropped);
	struct pd_sample kernel_part = *s;
	kernel_part.nr_callchain = (u64)user;
	int n = user ? unw_sample_frames(&kernel_part, misc, out, max, dropped) : 0;
	if (dropped && *dropped)
		return n;          /* the sampled ip alone */
	if (dropped)
		*dropped = false;
	/* An entry is from, to, flags; the newest first. */
	for (u64 i = 0; i <= s->nr_branches && n < max; i++) {
		out[n].ip = i == 0 ? s->branches[1] : s->branches[3 * (i - 1)];
		out[n].kernel = false;
		out[n].cut = false;
		n++;
	}
	return n;
}
