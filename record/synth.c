/* synth.c - writes what the kernel would have told us about things that
 * existed before recording began: the kernel and its modules as maps, and
 * for -a / -p the comms, threads and executable mappings found in /proc. */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "record/record-internal.h"

/* The first attr carries the side-band bits; synthesized records borrow
 * its id so readers attach them to it. */
static struct pd_sample_id synth_id(const struct rec_session *s, u32 pid, u32 tid)
{
	const struct rec_evsel *e = &s->evsels[0];
	return (struct pd_sample_id){ .pid = pid, .tid = tid, .time = 0,
				      .id = e->ids.n ? e->ids.v[0] : 0, .cpu = 0 };
}

/* ---- the kernel ---------------------------------------------------------- */

static int kallsyms_addr(const char *text, const char *sym, u64 *addr)
{
	size_t n = strlen(sym);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		char *end;
		u64 a = strtoull(p, &end, 16);
		/* "ADDR T NAME" */
		if (end[0] == ' ' && end[1] && end[2] == ' ' &&
		    !strncmp(end + 3, sym, n) && (end[3 + n] == '\n' || !end[3 + n])) {
			*addr = a;
			return 0;
		}
	}
	return -1;
}

/* "Kernel code" in /proc/iomem spans _text to _etext; it saves reading
 * the whole of kallsyms (tens of ms) to find _etext. */
static u64 iomem_kernel_code_len(const char *iomem)
{
	const char *p = iomem ? strstr(iomem, " : Kernel code") : NULL;
	if (!p)
		return 0;
	const char *line = p;
	while (line > iomem && line[-1] != '\n')
		line--;
	unsigned long long a, b;
	if (sscanf(line, " %llx-%llx", &a, &b) != 2 || b < a)
		return 0;
	return b - a + 1;
}

int rec_kernel_text(const char *kallsyms_head, const char *iomem, u64 *start,
		    u64 *len)
{
	if (kallsyms_addr(kallsyms_head, "_text", start) < 0 || !*start) {
		err_set("no _text in /proc/kallsyms (kernel addresses hidden: "
			"set /proc/sys/kernel/kptr_restrict to 0)");
		return -1;
	}
	*len = iomem_kernel_code_len(iomem);
	if (!*len)
		*len = ~0ULL - *start;   /* unknown end: to the top */
	return 0;
}

/* _text sits in the first lines of kallsyms; reading a few KiB is enough. */
static char *kallsyms_head(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return NULL;
	size_t cap = 16384;
	char *buf = xmalloc(cap + 1);
	size_t n = fread(buf, 1, cap, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int write_kernel_map(struct rec_session *s, const char *name, u64 start,
			    u64 len, u64 pgoff)
{
	struct pd_mmap2 m = { .pid = (u32)-1, .tid = 0, .start = start, .len = len,
			      .pgoff = pgoff, .prot = PROT_READ | PROT_EXEC,
			      .flags = MAP_PRIVATE, .cpumode = PERF_RECORD_MISC_KERNEL,
			      .filename = name };
	struct pd_sample_id sid = synth_id(s, (u32)-1, 0);
	return pd_write_mmap2(s->w, &s->evsels[0].attr, &m, &sid);
}

/* "name size refs deps state 0xaddr": one map per loaded module. */
static int synth_modules(struct rec_session *s)
{
	char *text = read_text_file("/proc/modules", NULL);
	if (!text)
		return 0;               /* a kernel without modules */
	int rc = 0;
	for (char *save, *l = strtok_r(text, "\n", &save); l && rc == 0;
	     l = strtok_r(NULL, "\n", &save)) {
		char name[64 + 2];
		unsigned long long size, addr;
		if (sscanf(l, "%64s %llu %*s %*s %*s %llx", name + 1, &size, &addr) != 3 || !addr)
			continue;
		name[0] = '[';
		strcat(name, "]");
		rc = write_kernel_map(s, name, addr, size, 0);
	}
	free(text);
	return rc;
}

int rec_synth_kernel(struct rec_session *s)
{
	char *head = kallsyms_head();
	char *iomem = read_text_file("/proc/iomem", NULL);
	u64 start, len;
	int rc = head ? rec_kernel_text(head, iomem, &start, &len) : -1;
	free(head);
	free(iomem);
	if (rc < 0) {
		/* Kernel samples will lack names; the user samples are fine. */
		if (!s->evsels[0].attr.exclude_kernel)
			rec_note(s, "no kernel map written: %s", err_msg());
		return 0;
	}
	if (write_kernel_map(s, "[kernel.kallsyms]_text", start, len, start) < 0)
		return -1;
	s->kernel_mapped = true;
	return synth_modules(s);
}

/* ---- processes ----------------------------------------------------------- */

int rec_parse_maps_line(char *line, struct rec_maps_line *m)
{
	char perms[5];
	unsigned long long start, end, off, ino;
	int name_at = 0;
	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms,
		   &off, &m->maj, &m->min, &ino, &name_at) < 7)
		return -1;
	m->start = start;
	m->end = end;
	m->pgoff = off;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	char *name = name_at ? line + name_at : line + strlen(line);
	name[strcspn(name, "\n")] = '\0';
	m->name = *name ? name : "//anon";
	return 0;
}

static int synth_maps(struct rec_session *s, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;               /* gone, or a kernel thread */
	char line[4096 + 256];
	int rc = 0;
	struct pd_sample_id sid = synth_id(s, (u32)pid, (u32)pid);
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		struct rec_maps_line ml;
		if (rec_parse_maps_line(line, &ml) < 0 ||
		    (!(ml.prot & PROT_EXEC) && !s->evsels[0].attr.mmap_data))
			continue;
		struct pd_mmap2 m = { .pid = (u32)pid, .tid = (u32)pid,
			.start = ml.start, .len = ml.end - ml.start, .pgoff = ml.pgoff,
			.maj = ml.maj, .min = ml.min, .ino = ml.ino, .prot = ml.prot,
			.flags = ml.flags, .cpumode = PERF_RECORD_MISC_USER,
			.filename = ml.name };
		rc = pd_write_mmap2(s->w, &s->evsels[0].attr, &m, &sid);
		if (s->online) {
			struct rec_online_map om = { (u32)pid, ml.start, ml.end - ml.start,
				ml.pgoff, ml.maj, ml.min, ml.prot, ml.ino, ml.name, 0 };
			rec_online_add_map(s->online, &om);
		}
		struct rec_bid_where w = { (u32)pid, ml.start, ml.end, ml.maj, ml.min, ml.ino };
		rec_bids_add(&s->bids, ml.name, strlen(ml.name), NULL, 0,
			     (ml.prot & PROT_EXEC) ? &w : NULL);
	}
	fclose(f);
	return rc;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static int list_numeric_dir(const char *path, pid_t **ids, int *n)
{
	DIR *d = opendir(path);
	if (!d) {
		err_set_errno("%s", path);
		return -1;
	}
	VEC(pid_t) v = {0};
	struct dirent *de;
	while ((de = readdir(d)))
		if (all_digits(de->d_name))
			VEC_PUSH(&v, (pid_t)atoi(de->d_name));
	closedir(d);
	*ids = v.v;
	*n = (int)v.n;
	return 0;
}

int rec_threads_of(pid_t pid, pid_t **tids, int *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (list_numeric_dir(path, tids, n) < 0) {
		err_set("no such pid %d: check it with ps", pid);
		return -1;
	}
	return 0;
}

static int read_comm(pid_t pid, pid_t tid, char *out, size_t cap)
{
	char path[80];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	bool ok = fgets(out, (int)cap, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* COMM for every thread; FORK ties each non-leader thread to its process
 * so readers share the process's maps with it. */
static int synth_thread(struct rec_session *s, pid_t pid, pid_t tid)
{
	char comm[64];
	if (read_comm(pid, tid, comm, sizeof(comm)) < 0)
		return 0;               /* exited meanwhile */
	const struct perf_event_attr *a = &s->evsels[0].attr;
	struct pd_sample_id sid = synth_id(s, (u32)pid, (u32)tid);
	if (tid != pid && pd_write_fork(s->w, a, (u32)pid, (u32)pid, (u32)tid,
					(u32)pid, 0, &sid) < 0)
		return -1;
	return pd_write_comm(s->w, a, (u32)pid, (u32)tid, comm, false, &sid);
}

static int synth_process(struct rec_session *s, pid_t pid)
{
	pid_t *tids;
	int n;
	if (rec_threads_of(pid, &tids, &n) < 0)
		return 0;               /* exited meanwhile */
	int rc = synth_thread(s, pid, pid);
	for (int i = 0; i < n && rc == 0; i++)
		if (tids[i] != pid)
			rc = synth_thread(s, pid, tids[i]);
	free(tids);
	return rc < 0 ? rc : synth_maps(s, pid);
}

/* -t names threads; their process is what has comms and maps. */
static pid_t tgid_of(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	char *t = read_text_file(path, NULL);
	const char *p = t ? strstr(t, "\nTgid:") : NULL;
	pid_t tgid = p ? (pid_t)atoi(p + 6) : tid;
	free(t);
	return tgid > 0 ? tgid : tid;
}

/* The processes to describe: the -p ones, the owners of -t threads, or
 * every process for system-wide recording. */
int rec_synth_procs(struct rec_session *s)
{
	const struct rec_opts *o = s->o;
	pid_t *pids = NULL;
	int n = 0, rc = 0;
	if (o->pids) {
		for (int i = 0; i < o->npids && rc == 0; i++)
			rc = synth_process(s, o->pids[i]);
		return rc;
	}
	if (o->tids) {
		for (int i = 0; i < o->ntids && rc == 0; i++)
			rc = synth_process(s, tgid_of(o->tids[i]));
		return rc;
	}
	if (list_numeric_dir("/proc", &pids, &n) < 0)
		return -1;
	for (int i = 0; i < n && rc == 0; i++)
		rc = synth_process(s, pids[i]);
	free(pids);
	return rc;
}
