/* machine.c - facts about this machine for the file's header features
 * (host, kernel, CPUs, memory, topology) and the tracepoint formats that
 * let readers decode tracepoint fields offline. */
#include <ctype.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "record/record-internal.h"

/* The value of the first "key<tabs>: value" line of /proc/cpuinfo. */
static const char *cpuinfo_value(const char *cpuinfo, const char *key,
				 size_t *len)
{
	size_t klen = strlen(key);
	for (const char *p = cpuinfo; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (strncmp(p, key, klen) || (p[klen] != '\t' && p[klen] != ' ' &&
					      p[klen] != ':'))
			continue;
		const char *colon = strchr(p, ':'), *eol = strchr(p, '\n');
		if (!colon || (eol && colon > eol))
			continue;
		colon++;
		while (*colon == ' ')
			colon++;
		*len = eol ? (size_t)(eol - colon) : strlen(colon);
		return colon;
	}
	return NULL;
}

static bool cpuinfo_copy(const char *cpuinfo, const char *key, char *out, size_t cap)
{
	size_t n;
	const char *v = cpuinfo_value(cpuinfo, key, &n);
	if (!v || n >= cap)
		return false;
	memcpy(out, v, n);
	out[n] = '\0';
	return true;
}

/* perf's cpuid string on x86: "vendor,family,model,stepping". */
int rec_cpuid_from_cpuinfo(const char *cpuinfo, char *out, size_t cap)
{
	char vendor[64], family[16], model[16], stepping[16];
	if (!cpuinfo_copy(cpuinfo, "vendor_id", vendor, sizeof(vendor)) ||
	    !cpuinfo_copy(cpuinfo, "cpu family", family, sizeof(family)) ||
	    !cpuinfo_copy(cpuinfo, "model", model, sizeof(model)) ||
	    !cpuinfo_copy(cpuinfo, "stepping", stepping, sizeof(stepping))) {
		err_set("/proc/cpuinfo: no vendor, family, model and stepping");
		return -1;
	}
	snprintf(out, cap, "%s,%s,%s,%s", vendor, family, model, stepping);
	return 0;
}

/* The model name with runs of blanks squeezed to one, as perf shows it. */
int rec_cpudesc_from_cpuinfo(const char *cpuinfo, char *out, size_t cap)
{
	size_t n, o = 0;
	const char *v = cpuinfo_value(cpuinfo, "model name", &n);
	if (!v || cap == 0) {
		err_set("/proc/cpuinfo: no model name");
		return -1;
	}
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		bool blank = isspace((unsigned char)v[i]);
		if (blank && (o == 0 || out[o - 1] == ' '))
			continue;
		out[o++] = blank ? ' ' : v[i];
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return 0;
}

static int write_uname(struct pd_writer *w)
{
	struct utsname u;
	if (uname(&u) < 0) {
		err_set_errno("uname");
		return -1;
	}
	char version[64];
	snprintf(version, sizeof(version), "ember %s", EMBER_VERSION);
	if (pd_writer_feat_string(w, PD_FEAT_HOSTNAME, u.nodename) < 0 ||
	    pd_writer_feat_string(w, PD_FEAT_OSRELEASE, u.release) < 0 ||
	    pd_writer_feat_string(w, PD_FEAT_VERSION, version) < 0 ||
	    pd_writer_feat_string(w, PD_FEAT_ARCH, u.machine) < 0)
		return -1;
	return 0;
}

static int write_cpu_strings(struct pd_writer *w)
{
	char *ci = read_text_file("/proc/cpuinfo", NULL);
	if (!ci)
		return 0;               /* optional facts */
	char desc[256], id[128];
	int rc = 0;
	if (rec_cpudesc_from_cpuinfo(ci, desc, sizeof(desc)) == 0)
		rc = pd_writer_feat_string(w, PD_FEAT_CPUDESC, desc);
	if (rc == 0 && rec_cpuid_from_cpuinfo(ci, id, sizeof(id)) == 0)
		rc = pd_writer_feat_string(w, PD_FEAT_CPUID, id);
	free(ci);
	return rc;
}

static u64 mem_total_kib(void)
{
	char *t = read_text_file("/proc/meminfo", NULL);
	const char *p = t ? strstr(t, "MemTotal:") : NULL;
	u64 kib = p ? strtoull(p + 9, NULL, 10) : 0;
	free(t);
	return kib;
}

/* ember's own command line with argv[0] as the binary's full path. */
static int write_cmdline(struct rec_session *s)
{
	const struct rec_opts *o = s->o;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char **argv = xcalloc((size_t)o->self_argc + 2, sizeof(char *));
	argv[0] = "ember";
	if (n > 0) {
		exe[n] = '\0';
		argv[0] = exe;
	}
	argv[1] = "record";
	for (int i = 1; i < o->self_argc; i++)
		argv[i + 1] = o->self_argv[i];
	int rc = pd_writer_feat_cmdline(s->w, o->self_argc + 1, argv);
	free(argv);
	return rc;
}

/* ---- topology ------------------------------------------------------------ */

static char *sysfs_line(int cpu, const char *file)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s",
		 cpu, file);
	char *t = read_text_file(path, NULL);
	if (t)
		t[strcspn(t, "\n")] = '\0';
	return t;
}

static u32 sysfs_u32(int cpu, const char *file)
{
	char *t = sysfs_line(cpu, file);
	u32 v = t ? (u32)strtoul(t, NULL, 10) : (u32)-1;
	free(t);
	return v;
}

/* Adds s to the list unless an equal string is there; takes ownership. */
static void add_unique(char ***list, int *n, char *s)
{
	if (!s)
		return;
	for (int i = 0; i < *n; i++)
		if (!strcmp((*list)[i], s)) {
			free(s);
			return;
		}
	*list = xrealloc(*list, (size_t)(*n + 1) * sizeof(char *));
	(*list)[(*n)++] = s;
}

static void topology_free(struct pd_cpu_topology *t)
{
	for (int i = 0; i < t->nr_cores; i++)
		free(t->core_siblings[i]);
	for (int i = 0; i < t->nr_threads; i++)
		free(t->thread_siblings[i]);
	for (int i = 0; i < t->nr_dies; i++)
		free(t->die_siblings[i]);
	free(t->core_siblings);
	free(t->thread_siblings);
	free(t->die_siblings);
	free(t->core_id);
	free(t->socket_id);
	free(t->die_id);
}

static int write_cpu_topology(struct pd_writer *w)
{
	struct pd_cpu_topology t = { .nr_cpus = cpus_possible() };
	t.core_id = xcalloc((size_t)t.nr_cpus, sizeof(u32));
	t.socket_id = xcalloc((size_t)t.nr_cpus, sizeof(u32));
	t.die_id = xcalloc((size_t)t.nr_cpus, sizeof(u32));
	for (int c = 0; c < t.nr_cpus; c++) {
		add_unique(&t.core_siblings, &t.nr_cores, sysfs_line(c, "core_siblings_list"));
		add_unique(&t.thread_siblings, &t.nr_threads,
			   sysfs_line(c, "thread_siblings_list"));
		add_unique(&t.die_siblings, &t.nr_dies, sysfs_line(c, "die_cpus_list"));
		t.core_id[c] = sysfs_u32(c, "core_id");
		t.socket_id[c] = sysfs_u32(c, "physical_package_id");
		t.die_id[c] = sysfs_u32(c, "die_id");
	}
	int rc = t.nr_cores ? pd_writer_feat_cpu_topology(w, &t) : 0;
	topology_free(&t);
	return rc;
}

/* "0-3,8" from a libnuma CPU mask. */
static char *mask_to_list(struct bitmask *m)
{
	struct strbuf sb = {0};
	unsigned n = numa_bitmask_nbytes(m) * 8;
	for (unsigned i = 0; i < n; i++) {
		if (!numa_bitmask_isbitset(m, i))
			continue;
		unsigned j = i;
		while (j + 1 < n && numa_bitmask_isbitset(m, j + 1))
			j++;
		sb_printf(&sb, sb.len ? ",%u" : "%u", i);
		if (j > i)
			sb_printf(&sb, "-%u", j);
		i = j;
	}
	return sb.s ? sb.s : xstrdup("");
}

static int write_numa(struct pd_writer *w)
{
	if (numa_available() < 0)
		return 0;
	int max = numa_max_node();
	struct pd_numa_node *nodes = xcalloc((size_t)max + 1, sizeof(*nodes));
	struct bitmask *cpus = numa_allocate_cpumask();
	int n = 0;
	for (int node = 0; node <= max; node++) {
		if (!numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node))
			continue;
		long long free_b = 0, total = numa_node_size64(node, &free_b);
		numa_bitmask_clearall(cpus);
		numa_node_to_cpus(node, cpus);
		nodes[n++] = (struct pd_numa_node){ .node = (u32)node,
			.mem_total_kib = total > 0 ? (u64)total / 1024 : 0,
			.mem_free_kib = free_b > 0 ? (u64)free_b / 1024 : 0,
			.cpus = mask_to_list(cpus) };
	}
	int rc = n ? pd_writer_feat_numa(w, nodes, n) : 0;
	for (int i = 0; i < n; i++)
		free((char *)nodes[i].cpus);
	free(nodes);
	numa_free_cpumask(cpus);
	return rc;
}

int rec_write_machine_features(struct rec_session *s)
{
	struct pd_writer *w = s->w;
	long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);
	if (write_uname(w) < 0 ||
	    pd_writer_feat_nrcpus(w, (u32)conf, (u32)onln) < 0 ||
	    write_cpu_strings(w) < 0 ||
	    pd_writer_feat_total_mem(w, mem_total_kib()) < 0 ||
	    write_cmdline(s) < 0 ||
	    pd_writer_feat_event_desc(w) < 0 ||
	    write_cpu_topology(w) < 0 ||
	    write_numa(w) < 0)
		return -1;
	return 0;
}

/* ---- tracing data -------------------------------------------------------- */

struct tracing_files {
	char *header_page, *header_event, *printk, *cmdlines;
	size_t hp_len, he_len, printk_len, cmdlines_len;
	struct pd_tracing_event *events;
	int nevents;
};

static void tracing_files_free(struct tracing_files *f)
{
	for (int i = 0; i < f->nevents; i++)
		free((char *)f->events[i].format);
	free(f->events);
	free(f->header_page);
	free(f->header_event);
	free(f->printk);
	free(f->cmdlines);
}

static bool already_listed(struct rec_session *s, int upto)
{
	const struct pmc_event *e = s->evsels[upto].ev;
	for (int i = 0; i < upto; i++) {
		const struct pmc_event *o = s->evsels[i].ev;
		if (o->tp_system && !strcmp(o->tp_system, e->tp_system) &&
		    !strcmp(o->tp_name, e->tp_name))
			return true;
	}
	return false;
}

static int read_event_formats(struct rec_session *s, struct tracing_files *f)
{
	f->events = xcalloc((size_t)s->nevsels, sizeof(*f->events));
	for (int i = 0; i < s->nevsels; i++) {
		const struct pmc_event *e = s->evsels[i].ev;
		if (!e->tp_system || !e->tp_name || already_listed(s, i))
			continue;
		char *rel = xasprintf("events/%s/%s/format", e->tp_system, e->tp_name);
		struct pd_tracing_event *te = &f->events[f->nevents];
		te->format = pmc_tracefs_read(rel, &te->format_len);
		free(rel);
		if (!te->format)
			return -1;
		te->system = e->tp_system;
		f->nevents++;
	}
	return 0;
}

int rec_write_tracing_data(struct rec_session *s)
{
	struct tracing_files f = {0};
	int rc = -1;
	if (read_event_formats(s, &f) < 0)
		goto out;
	if (f.nevents == 0) {
		rc = 0;
		goto out;
	}
	f.header_page = pmc_tracefs_read("events/header_page", &f.hp_len);
	f.header_event = pmc_tracefs_read("events/header_event", &f.he_len);
	if (!f.header_page || !f.header_event)
		goto out;
	/* Nice to have for printk-style fields and pid names; not required. */
	f.printk = pmc_tracefs_read("printk_formats", &f.printk_len);
	f.cmdlines = pmc_tracefs_read("saved_cmdlines", &f.cmdlines_len);
	struct pd_tracing t = {
		.header_page = f.header_page, .header_page_len = f.hp_len,
		.header_event = f.header_event, .header_event_len = f.he_len,
		.events = f.events, .nr_events = f.nevents,
		.kallsyms = "", .kallsyms_len = 0,
		.printk = f.printk ? f.printk : "", .printk_len = f.printk_len,
		.cmdlines = f.cmdlines ? f.cmdlines : "", .cmdlines_len = f.cmdlines_len,
	};
	rc = pd_writer_feat_tracing_data(s->w, &t);
out:
	tracing_files_free(&f);
	return rc;
}
