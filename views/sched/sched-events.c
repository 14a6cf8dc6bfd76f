/* sched-events.c - decodes the scheduler's tracepoints (by field name,
 * through the recorded format data) and switch records for offcpu and
 * sched lat. */
#include <string.h>

#include "views/sched/sched.h"

int sched_tp_init(struct sched_tp *tp, struct pd_reader *r)
{
	memset(tp, 0, sizeof(*tp));
	int n;
	const char *const *names = pd_tracepoints(PD_TP_SCHED, &n);
	/* each kind one past its place in the set */
	return pd_trace_open_ids(r, &tp->trace, names, n, tp->id + 1, tp->have + 1);
}

char sched_state_char(u64 prev_state)
{
	/* The kernel's report bits, in the order of its format string; none
	 * of them (a preemption sets a bit above these) reads as running. */
	static const char letters[] = "SDTtXZPI";
	for (int i = 0; i < 8; i++)
		if (prev_state & (1u << i))
			return letters[i];
	return 'R';
}

static int field(const struct sched_tp *tp, const struct pd_sample *s, u64 id,
		 const char *name, u64 *v)
{
	return pd_trace_field(tp->trace, id, s->raw, s->raw_size, name, v);
}

static enum sched_kind kind_of(const struct sched_tp *tp, const struct pd_attr *a)
{
	if (!tp->trace || !a || a->attr.type != PERF_TYPE_TRACEPOINT)
		return SCHED_OTHER;
	for (int k = SCHED_SWITCH; k < SCHED_KINDS; k++)
		if (tp->have[k] && tp->id[k] == a->attr.config)
			return (enum sched_kind)k;
	return SCHED_OTHER;
}

enum sched_kind sched_tp_decode(const struct sched_tp *tp, const struct pd_attr *a,
				const struct pd_sample *s, struct sched_ev *out)
{
	enum sched_kind k = kind_of(tp, a);
	u64 id = a ? a->attr.config : 0, v1, v2, v3;
	memset(out, 0, sizeof(*out));
	if (k == SCHED_SWITCH) {
		if (field(tp, s, id, "prev_pid", &v1) < 0 || field(tp, s, id, "next_pid", &v2) < 0 ||
		    field(tp, s, id, "prev_state", &v3) < 0)
			return SCHED_OTHER;
		out->prev_pid = (u32)v1;
		out->next_pid = (u32)v2;
		out->prev_state = sched_state_char(v3);
	} else if (k != SCHED_OTHER) {
		if (field(tp, s, id, "pid", &v1) < 0)
			return SCHED_OTHER;
		out->target = (u32)v1;
		out->target_cpu = field(tp, s, id, "target_cpu", &v2) < 0 ? -1 : (s32)v2;
		/* The woken's name: a new thread's may be known nowhere else. */
		if (pd_trace_field_str(tp->trace, id, s->raw, s->raw_size, "comm", out->comm,
				       sizeof(out->comm)) < 0)
			out->comm[0] = '\0';
	}
	out->kind = k;
	return k;
}

bool sched_switch_record(const struct pd_event *ev, u32 *tid, bool *out, bool *preempt)
{
	if (ev->type != PERF_RECORD_SWITCH && ev->type != PERF_RECORD_SWITCH_CPU_WIDE)
		return false;
	if (!ev->attr || !ev->attr->attr.sample_id_all ||
	    !(ev->attr->attr.sample_type & PERF_SAMPLE_TID) || !ev->has_time)
		return false;
	*tid = ev->s.tid;
	*out = ev->u.cswitch.out;
	*preempt = ev->u.cswitch.preempt;
	return true;
}

bool sched_is_clock_event(const struct pd_attr *a)
{
	return a && a->attr.type == PERF_TYPE_SOFTWARE &&
	       (a->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		a->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}
