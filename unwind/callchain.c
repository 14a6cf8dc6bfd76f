/* callchain.c - frames from the kernel-supplied callchain: the kernel part
 * (unwound in the kernel) and the user part (walked by frame pointers). */
#include "unwind/unwind.h"

int unw_sample_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max)
{
	bool kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	int n = 0;
	if (!s->nr_callchain) {
		if (max > 0) {
			out[0].ip = s->ip;
			out[0].kernel = kernel;
			n = 1;
		}
		return n;
	}
	for (u64 i = 0; i < s->nr_callchain && n < max; i++) {
		u64 ip = s->callchain[i];
		if (ip >= PERF_CONTEXT_MAX) {
			if (ip == PERF_CONTEXT_KERNEL)
				kernel = true;
			else if (ip == PERF_CONTEXT_USER)
				kernel = false;
			else
				break; /* guest or hypervisor contexts: not ours */
			continue;
		}
		out[n].ip = ip;
		out[n].kernel = kernel;
		n++;
	}
	return n;
}
