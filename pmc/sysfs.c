/* sysfs.c - dynamic PMUs described in /sys/bus/event_source/devices/PMU:
 * "pmu/term=val,.../" and "pmu/eventname/" specs, packed into attr config
 * bits as the PMU's format/ files say; their named events listed. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pmc/pmc-internal.h"

/* One "key=value" of a spec or event file; value NULL for a bare "key". */
struct term {
	char *key, *value;
	bool from_event;  /* came from an events/ file, not from the user */
};

typedef VEC(struct term) term_vec;

static void terms_free(term_vec *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].value);
	}
	VEC_FREE(t);
}

/* Reads sysfs/pmu/rel with the trailing newline and blanks cut, or NULL
 * (quietly: callers decide whether absence is an error). */
static char *read_pmu_file(const char *sysfs, const char *pmu, const char *rel)
{
	char *path = xasprintf("%s/%s/%s", sysfs, pmu, rel);
	int fd_errno = 0;
	char *text = read_text_file(path, NULL);
	if (!text)
		fd_errno = errno;
	free(path);
	if (!text) {
		errno = fd_errno;
		return NULL;
	}
	size_t n = strlen(text);
	while (n && isspace((unsigned char)text[n - 1]))
		text[--n] = '\0';
	return text;
}

/* Splits "a=1,b,c=0x2" into terms, appending to out. */
static int split_terms(const char *text, bool from_event, term_vec *out,
		       const char *pmu)
{
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		size_t klen = eq ? (size_t)(eq - p) : n;
		if (klen == 0 || (eq && eq + 1 == p + n)) {
			err_set("malformed term '%.*s' for PMU '%s' "
				"(want term=value or term)", (int)n, p, pmu);
			return -1;
		}
		struct term t = {
			.key = xasprintf("%.*s", (int)klen, p),
			.value = eq ? xasprintf("%.*s", (int)(n - klen - 1), eq + 1)
				    : NULL,
			.from_event = from_event,
		};
		VEC_PUSH(out, t);
		p += n;
		if (*p == ',' && *++p == '\0') {
			err_set("empty term after ',' for PMU '%s'", pmu);
			return -1;
		}
	}
	return 0;
}

/* Points at the attr field a format's "config"/"config1"/"config2" names. */
static __u64 *format_field(struct perf_event_attr *attr, const char *name,
			 size_t len)
{
	if (len == 6 && !strncmp(name, "config", 6))
		return &attr->config;
	if (len == 7 && !strncmp(name, "config1", 7))
		return &attr->config1;
	if (len == 7 && !strncmp(name, "config2", 7))
		return &attr->config2;
	return NULL;
}

/* Reads "lo-hi" or "bit" at *s, advancing past it. */
static int parse_bit_range(const char **s, int *lo, int *hi)
{
	char *end;
	if (!isdigit((unsigned char)**s))
		return -1;
	long a = strtol(*s, &end, 10), b = a;
	if (*end == '-') {
		const char *q = end + 1;
		if (!isdigit((unsigned char)*q))
			return -1;
		b = strtol(q, &end, 10);
	}
	if (a < 0 || b > 63 || a > b)
		return -1;
	*lo = (int)a;
	*hi = (int)b;
	*s = end;
	return 0;
}

int pmc_format_pack(const char *format, u64 value, struct perf_event_attr *attr,
		    const char *pmu, const char *term)
{
	const char *colon = strchr(format, ':');
	__u64 *field = colon ? format_field(attr, format, (size_t)(colon - format))
			   : NULL;
	if (!field)
		goto bad;
	/* Value bits fill the ranges in order, low bits into the first. */
	u64 set = 0, mask = 0;
	int used = 0;
	const char *s = colon + 1;
	for (;;) {
		int lo, hi;
		if (parse_bit_range(&s, &lo, &hi) < 0)
			goto bad;
		for (int b = lo; b <= hi && used < 64; b++, used++) {
			mask |= 1ULL << b;
			set |= ((value >> used) & 1) << b;
		}
		if (*s == '\0')
			break;
		if (*s++ != ',')
			goto bad;
	}
	if (used < 64 && value >> used) {
		err_set("value 0x%llx too big for term '%s' of PMU '%s' "
			"(it has %d bits)", (unsigned long long)value, term, pmu,
			used);
		return -1;
	}
	*field = (*field & ~mask) | set;
	return 0;
bad:
	err_set("malformed format '%s' for term '%s' of PMU '%s' "
		"(want config:LO-HI,...)", format, term, pmu);
	return -1;
}

/* Names of a PMU's format terms, for the hint in error messages. */
static char *list_format_terms(const char *sysfs, const char *pmu)
{
	char *path = xasprintf("%s/%s/format", sysfs, pmu);
	DIR *d = opendir(path);
	free(path);
	struct strbuf sb = {0};
	sb_puts(&sb, "config, config1, config2, name");
	for (struct dirent *de; d && (de = readdir(d));) {
		if (de->d_name[0] != '.')
			sb_printf(&sb, ", %s", de->d_name);
	}
	if (d)
		closedir(d);
	return sb.s;
}

static int term_number(const struct term *t, const char *pmu, u64 *v)
{
	if (!t->value) {
		*v = 1;  /* a bare flag term such as "inv" or "edge" */
		return 0;
	}
	if (parse_u64(t->value, v) < 0) {
		err_set("bad value '%s' for term '%s' of PMU '%s' (want a number)",
			t->value, t->key, pmu);
		return -1;
	}
	return 0;
}

static int apply_term(const char *sysfs, const char *pmu, const struct term *t,
		      struct perf_event_attr *attr, char **name)
{
	if (!strcmp(t->key, "name")) {
		if (!t->value) {
			err_set("term 'name' of PMU '%s' needs a value", pmu);
			return -1;
		}
		free(*name);
		*name = xstrdup(t->value);
		return 0;
	}
	u64 v;
	__u64 *direct = format_field(attr, t->key, strlen(t->key));
	if (direct) {
		if (term_number(t, pmu, &v) < 0)
			return -1;
		*direct = v;
		return 0;
	}
	char *rel = xasprintf("format/%s", t->key);
	char *format = read_pmu_file(sysfs, pmu, rel);
	free(rel);
	if (!format) {
		char *known = list_format_terms(sysfs, pmu);
		err_set("unknown %s '%s' for PMU '%s' (its terms: %s)",
			t->value ? "term" : "event or term", t->key, pmu, known);
		free(known);
		return -1;
	}
	int rc = term_number(t, pmu, &v);
	if (rc == 0)
		rc = pmc_format_pack(format, v, attr, pmu, t->key);
	free(format);
	return rc;
}

/* A bare word that names a file in events/ stands for that file's terms. */
static int expand_user_terms(const char *sysfs, const char *pmu,
			     const char *text, term_vec *out)
{
	term_vec user = {0};
	int rc = split_terms(text, false, &user, pmu);
	for (size_t i = 0; rc == 0 && i < user.n; i++) {
		struct term *t = &user.v[i];
		char *ev = NULL;
		if (!t->value) {
			char *rel = xasprintf("events/%s", t->key);
			ev = read_pmu_file(sysfs, pmu, rel);
			free(rel);
		}
		if (ev) {
			rc = split_terms(ev, true, out, pmu);
			free(ev);
			continue;
		}
		VEC_PUSH(out, *t);
		t->key = t->value = NULL;  /* now owned by out */
	}
	terms_free(&user);
	return rc;
}

/* Event files may leave a parameter as "?": the user must supply it. */
static int check_placeholders(const term_vec *t, const char *pmu)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!t->v[i].value || strcmp(t->v[i].value, "?"))
			continue;
		bool given = false;
		for (size_t j = 0; j < t->n; j++)
			given |= !t->v[j].from_event && !strcmp(t->v[j].key, t->v[i].key);
		if (!given) {
			err_set("event of PMU '%s' needs a value for '%s' "
				"(add %s=N between the slashes)", pmu, t->v[i].key,
				t->v[i].key);
			return -1;
		}
	}
	return 0;
}

static int pmu_type(const char *sysfs, const char *pmu, u32 *type)
{
	char *dir = xasprintf("%s/%s", sysfs, pmu);
	struct stat st;
	bool exists = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
	free(dir);
	if (!exists || !*pmu || !strcmp(pmu, ".") || !strcmp(pmu, "..")) {
		err_set("unknown PMU '%s' (not in %s; see 'ember list')", pmu,
			sysfs);
		return -1;
	}
	char *text = read_pmu_file(sysfs, pmu, "type");
	int v;
	if (!text || parse_int(text, &v) < 0 || v < 0) {
		err_set("cannot read the type of PMU '%s' from %s/%s/type", pmu,
			sysfs, pmu);
		free(text);
		return -1;
	}
	free(text);
	*type = (u32)v;
	return 0;
}

int pmc_pmu_terms(const char *sysfs, const char *pmu, const char *terms,
		  struct perf_event_attr *attr, char **name)
{
	*name = NULL;
	if (pmu_type(sysfs, pmu, &attr->type) < 0)
		return -1;
	term_vec all = {0};
	int rc = expand_user_terms(sysfs, pmu, terms, &all);
	if (rc == 0)
		rc = check_placeholders(&all, pmu);
	for (size_t i = 0; rc == 0 && i < all.n; i++) {
		const struct term *t = &all.v[i];
		if (t->value && !strcmp(t->value, "?"))
			continue;
		rc = apply_term(sysfs, pmu, t, attr, name);
	}
	terms_free(&all);
	if (rc < 0) {
		free(*name);
		*name = NULL;
	}
	return rc;
}

/* ---- listing ------------------------------------------------------------ */

/* An event file, not one of the companions that describe an event. */
static bool is_event_file(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && !(n > 6 && !strcmp(name + n - 6, ".scale")) &&
	       !(n > 5 && !strcmp(name + n - 5, ".unit")) &&
	       !(n > 9 && !strcmp(name + n - 9, ".per-pkg")) &&
	       !(n > 9 && !strcmp(name + n - 9, ".snapshot"));
}

static void each_event_of(const char *pmu, pmc_pmu_event_fn fn, void *ctx)
{
	char *dir = xasprintf("%s/%s/events", PMC_SYSFS_PMUS, pmu);
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (is_event_file(names[i]->d_name)) {
			char *path = xasprintf("%s/%s", dir, names[i]->d_name);
			char *enc = read_text_file(path, NULL);
			if (enc)
				enc[strcspn(enc, "\n")] = '\0';
			fn(pmu, names[i]->d_name, enc, ctx);
			free(enc);
			free(path);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	free(dir);
}

void pmc_each_pmu_event(pmc_pmu_event_fn fn, void *ctx)
{
	struct dirent **names;
	int n = scandir(PMC_SYSFS_PMUS, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			each_event_of(names[i]->d_name, fn, ctx);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}
