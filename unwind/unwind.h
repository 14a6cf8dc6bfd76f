/* unwind.h - a sample -> its frames (addresses, leaf first).  Kernel frames
 * come from the callchain the kernel unwound (ORC here), user frames from
 * the frame-pointer chain the kernel copied; names come later (symbols/). */
#ifndef EMBER_UNWIND_H
#define EMBER_UNWIND_H

#include "common/common.h"
#include "format/format.h"

struct unw_frame {
	u64 ip;
	bool kernel;     /* kernel (or module) address */
};

/* Fills out[] with the frames of sample s (leaf first) and returns how
 * many; at most max.  misc is the record's misc (its cpumode tells where
 * the sampled ip is when there is no callchain).  PERF_CONTEXT_* markers
 * switch between kernel and user; a guest context ends the walk.  A chain
 * with a marker no context has is not trusted: as perf does, only the
 * sampled ip is kept, and *dropped (when not NULL) says so. */
int unw_sample_frames(const struct pd_sample *s, u16 misc, struct unw_frame *out, int max,
		      bool *dropped);

#endif
