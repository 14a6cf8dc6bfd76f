/* probe.c - asking the kernel what it accepts (probing attrs, precise_ip
 * levels, whether a hardware PMU exists) and explaining why an event
 * failed to open in words a user can act on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmc/pmc-internal.h"

int pmc_probe(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	a.size = sizeof(a);
	a.disabled = 1;  /* a probe must not count or sample anything */
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int pmc_fit_precise(struct perf_event_attr *attr)
{
	unsigned asked = attr->precise_ip;
	for (int level = (int)asked; level >= 0; level--) {
		attr->precise_ip = (unsigned)level;
		if (pmc_probe(attr) == 0)
			return level;
	}
	/* Leave the request as it was so an error message can show it. */
	attr->precise_ip = asked;
	return -1;
}

/* The generic cycles event, counting user space only so that the answer
 * does not depend on perf_event_paranoid for unprivileged callers. */
static struct perf_event_attr cycles_attr(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	return a;
}

bool pmc_have_hw_pmu(void)
{
	struct perf_event_attr a = cycles_attr();
	return pmc_probe(&a) == 0;
}

int pmc_max_precise(void)
{
	struct perf_event_attr a = cycles_attr();
	/* Precise modes matter only when sampling; some PMUs check the
	 * level only for sampling events. */
	a.sample_period = 100000;
	a.precise_ip = 3;
	int level = pmc_fit_precise(&a);
	return level < 0 ? 0 : level;
}

/* Events counted by the CPU's own PMU: without one they cannot exist. */
static bool needs_cpu_pmu(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE ||
	       a->type == PERF_TYPE_RAW;
}

static const char *ev_name(const struct pmc_event *ev)
{
	return ev->name ? ev->name : "?";
}

static void explain_unsupported(const struct pmc_event *ev, int err)
{
	const struct perf_event_attr *a = &ev->attr;
	if (needs_cpu_pmu(a) && !pmc_have_hw_pmu()) {
		err_set("event '%s' is not supported on this machine (no hardware "
			"PMU; try -e cpu-clock)", ev_name(ev));
	} else if (a->precise_ip) {
		err_set("event '%s' is not supported with precise level %u here "
			"(use fewer 'p' modifiers, or :P for the best available)",
			ev_name(ev), a->precise_ip);
	} else if (err == EOPNOTSUPP && a->sample_period) {
		err_set("event '%s' cannot be sampled here (its PMU only counts or "
			"lacks a requested sampling feature; try 'ember stat')",
			ev_name(ev));
	} else {
		err_set("event '%s' is not supported by this kernel or CPU "
			"(see 'ember list')", ev_name(ev));
	}
}

static void explain_permission(const struct pmc_event *ev)
{
	char *p = read_text_file("/proc/sys/kernel/perf_event_paranoid", NULL);
	if (p)
		p[strcspn(p, "\n")] = '\0';
	err_set("no permission to open event '%s' (kernel.perf_event_paranoid "
		"is %s; run as root, or lower it: sysctl "
		"kernel.perf_event_paranoid=-1%s)",
		ev_name(ev), p ? p : "unknown",
		ev->attr.exclude_kernel ? "" : ", or count user space only with :u");
	free(p);
}

static void explain_invalid(const struct pmc_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;
	char *rate = NULL;
	if (a->freq) {
		rate = read_text_file("/proc/sys/kernel/perf_event_max_sample_rate",
				      NULL);
	}
	u64 max = 0;
	if (rate) {
		rate[strcspn(rate, "\n")] = '\0';
		if (parse_u64(rate, &max) < 0)
			max = 0;
		free(rate);
	}
	if (a->freq && max && a->sample_freq > max)
		err_set("event '%s': frequency %llu Hz is above "
			"kernel.perf_event_max_sample_rate (%llu); lower -F",
			ev_name(ev), (unsigned long long)a->sample_freq,
			(unsigned long long)max);
	else if (a->type >= PERF_TYPE_MAX)
		/* Uncore-style PMUs (msr, power, ...) count whole CPUs only. */
		err_set("the kernel refused the attributes of event '%s' (invalid "
			"config, or a PMU that counts only system-wide: try -a)",
			ev_name(ev));
	else
		err_set("the kernel refused the attributes of event '%s' (invalid "
			"config, modifier or sampling setting; check the event "
			"spec and options)", ev_name(ev));
}

/* Errors whose explanation does not depend on the event. */
static const struct {
	int err;
	const char *why;
} plain_errors[] = {
	{ ESRCH, "no such process (it exited, or the pid/tid is wrong)" },
	{ EMFILE, "too many open files (raise the limit, e.g. ulimit -n 65536, "
		  "or watch fewer CPUs/events)" },
	{ ENFILE, "the system's file table is full (raise fs.file-max)" },
	{ EBUSY, "the PMU is busy (another tool holds it exclusively)" },
	{ ENOSPC, "no free counter or breakpoint slot (open fewer such events "
		  "at once)" },
	{ EOVERFLOW, "call-chain depth above kernel.perf_event_max_stack (ask "
		     "for fewer frames)" },
	{ E2BIG, "the kernel is older than this perf_event_attr layout (E2BIG)" },
	{ ENOSYS, "this kernel has no perf_event_open (CONFIG_PERF_EVENTS is "
		  "off)" },
};

void pmc_explain_open_error(const struct pmc_event *ev, int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOENT: case EOPNOTSUPP: case ENODEV:
		explain_unsupported(ev, err);
		return;
	case EACCES: case EPERM:
		explain_permission(ev);
		return;
	case EINVAL:
		explain_invalid(ev);
		return;
	}
	const char *why = strerror(err);
	for (size_t i = 0; i < ARRAY_SIZE(plain_errors); i++)
		if (plain_errors[i].err == err)
			why = plain_errors[i].why;
	err_set("cannot open event '%s': %s", ev_name(ev), why);
}
