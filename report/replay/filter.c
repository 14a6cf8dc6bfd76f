/* filter.c - the id and comm list tests behind --pid, --tid and --comm,
 * shared by the replay and by analyses that filter their own events (sched,
 * the bio library).  Kept apart from replay.c so the bio library's views
 * link without the replay (the blktrace fuzz target's archive). */
#include <string.h>

#include "report/replay/replay.h"

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
