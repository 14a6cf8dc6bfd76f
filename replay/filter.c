/* filter.c - the one filter layer behind --pid, --tid, --comm, --cpu and
 * --time: the replay's samples, and every view that measures its own
 * events (offcpu, sched lat, the bio library, the tools), test what they
 * count here, and a view refuses the filters it cannot honour with
 * rp_filter_refuse.  Kept apart from replay.c so the bio library's views
 * link without the replay (the blktrace fuzz target's archive). */
#include <string.h>

#include "replay/replay.h"

bool rp_id_listed(const int *ids, int n, u32 id)
{
	for (int i = 0; i < n; i++)
		if ((u32)ids[i] == id)
			return true;
	return false;
}

bool rp_comm_listed(const char *list, const char *comm)
{
	size_t len = strlen(comm);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == len && !strncmp(p, comm, n))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

bool rp_filter_task(const struct rp_filter *f, u32 pid, u32 tid, const char *comm)
{
	if (!f)
		return true;
	if (f->npids && !rp_id_listed(f->pids, f->npids, pid))
		return false;
	if (f->ntids && !rp_id_listed(f->tids, f->ntids, tid))
		return false;
	return !f->comms || rp_comm_listed(f->comms, comm ? comm : "");
}

bool rp_filter_cpu(const struct rp_filter *f, int cpu)
{
	return !f || !f->ncpus || (cpu >= 0 && rp_id_listed(f->cpus, f->ncpus, (u32)cpu));
}

bool rp_filter_time(const struct rp_filter *f, u64 time)
{
	return !f || (time >= f->time_start && (!f->time_end || time <= f->time_end));
}

bool rp_filter_clip(const struct rp_filter *f, u64 *start, u64 *end)
{
	if (f) {
		if (*start < f->time_start)
			*start = f->time_start;
		if (f->time_end && *end > f->time_end)
			*end = f->time_end;
	}
	return *end > *start;
}

bool rp_filter_pass(const struct rp_filter *f, u32 pid, u32 tid, const char *comm,
		    int cpu, u64 time)
{
	return rp_filter_task(f, pid, tid, comm) && rp_filter_cpu(f, cpu) &&
	       rp_filter_time(f, time);
}

unsigned rp_filter_used(const struct rp_filter *f)
{
	unsigned used = 0;
	if (f->npids)
		used |= RP_FILTER_PID;
	if (f->ntids)
		used |= RP_FILTER_TID;
	if (f->comms)
		used |= RP_FILTER_COMM;
	if (f->ncpus)
		used |= RP_FILTER_CPU;
	if (f->time_start || f->time_end)
		used |= RP_FILTER_TIME;
	return used;
}

int rp_filter_refuse(const struct rp_filter *f, unsigned honoured, const char *view)
{
	static const struct { unsigned bit; const char *option, *what; } names[] = {
		{ RP_FILTER_PID, "--pid", "process" },
		{ RP_FILTER_TID, "--tid", "thread" },
		{ RP_FILTER_COMM, "--comm", "command name" },
		{ RP_FILTER_CPU, "--cpu", "CPU" },
		{ RP_FILTER_TIME, "--time", "time" },
	};
	unsigned refused = rp_filter_used(f) & ~honoured;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (refused & names[i].bit) {
			err_set("%s: %s cannot filter by %s; leave %s out", names[i].option,
				view, names[i].what, names[i].option);
			return -1;
		}
	return 0;
}
