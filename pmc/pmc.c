/* pmc.c - parses "-e" event specs (comma lists, {groups}, modifiers) into
 * pmc_list entries, dispatching each event to the symbolic, raw,
 * breakpoint, sysfs PMU or tracepoint reader. */
#include <ctype.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>
#include <string.h>

#include "pmc/pmc-internal.h"

/* One pmc_parse() call in progress. */
struct parser {
	struct pmc_list *list;
	const struct pmc_roots *roots;
	const char *tracefs;  /* resolved on the first tracepoint */
	/* Per event of the current item: whether a G or H modifier was seen,
	 * which changes how later u and p modifiers treat exclude_guest (as
	 * in perf).  Indexed from the item's first event. */
	VEC(bool) gh;
	size_t item_start;
};

static void event_free(struct pmc_event *ev)
{
	free(ev->name);
	free(ev->filter);
	free(ev->tp_system);
	free(ev->tp_name);
	free(ev->probe_path);
}

void pmc_list_free(struct pmc_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		event_free(&list->v[i]);
	free(list->v);
	memset(list, 0, sizeof(*list));
}

/* ---- modifiers ------------------------------------------------------- */

#define MODIFIER_CHARS "ukhGHpPIDe"

static bool valid_mods(const char *mods)
{
	return *mods && strspn(mods, MODIFIER_CHARS) == strlen(mods);
}

static int check_mods(const char *mods, const char *event)
{
	if (!*mods) {
		err_set("empty modifier after ':' in '%s'", event);
		return -1;
	}
	size_t bad = strspn(mods, MODIFIER_CHARS);
	if (mods[bad]) {
		err_set("unknown modifier '%c' in '%s' (valid: u k h G H p P I D e)",
			mods[bad], event);
		return -1;
	}
	return 0;
}

/* Applies modifier letters in order, on top of what the event already has,
 * the way perf does: the first of u/k/h excludes all three levels, then
 * each letter re-includes its own; G/H do the same for guest/host. */
static int apply_mods(struct pmc_event *ev, bool *gh, const char *mods,
		      const char *event)
{
	struct perf_event_attr *a = &ev->attr;
	bool eu = a->exclude_user, ek = a->exclude_kernel, eh = a->exclude_hv;
	bool eg = a->exclude_guest, eH = a->exclude_host;
	bool exclude = eu || ek || eh;
	unsigned precise = a->precise_ip;
	if (check_mods(mods, event) < 0)
		return -1;
	for (const char *c = mods; *c; c++) {
		if (strchr("ukh", *c) && !exclude)
			exclude = eu = ek = eh = true;
		if (strchr("GH", *c) && !*gh)
			*gh = eg = eH = true;
		switch (*c) {
		case 'u': eu = false; eg |= !*gh; break;
		case 'k': ek = false; break;
		case 'h': eh = false; break;
		case 'G': eg = false; break;
		case 'H': eH = false; break;
		/* Precise sampling of a guest is not possible. */
		case 'p': precise++; eg |= !*gh; ev->user_precise = true; break;
		case 'P': ev->precise_max = true; break;
		case 'I': a->exclude_idle = 1; break;
		case 'D': a->pinned = 1; break;
		case 'e': a->exclusive = 1; break;
		}
	}
	if (precise > 3) {
		err_set("too many 'p' modifiers in '%s' (at most :ppp)", event);
		return -1;
	}
	a->exclude_user = eu;
	a->exclude_kernel = ek;
	a->exclude_hv = eh;
	a->exclude_guest = eg;
	a->exclude_host = eH;
	a->precise_ip = precise;
	return 0;
}

/* ---- adding events --------------------------------------------------- */

static struct pmc_event *add_event(struct parser *p,
				   const struct perf_event_attr *attr, char *name)
{
	struct pmc_list *l = p->list;
	VEC_GROW(l, l->n + 1);
	struct pmc_event *ev = &l->v[l->n];
	memset(ev, 0, sizeof(*ev));
	ev->attr = *attr;
	ev->attr.size = sizeof(ev->attr);
	ev->name = name;
	ev->group = (int)l->n;
	l->n++;
	VEC_PUSH(&p->gh, false);
	return ev;
}

/* Finishes the events [from, n) of one event text: perf's default
 * exclude_guest when the text has no modifier, else the modifiers. */
static int finish_events(struct parser *p, size_t from, const char *mods,
			 const char *event)
{
	for (size_t i = from; i < p->list->n; i++) {
		struct pmc_event *ev = &p->list->v[i];
		bool *gh = &p->gh.v[i - p->item_start];
		if (!mods)
			ev->attr.exclude_guest = 1;
		else if (apply_mods(ev, gh, mods, event) < 0)
			return -1;
	}
	return 0;
}

/* "rNNNN": a raw, CPU-specific event code in hex. */
static bool parse_raw(const char *s, u64 *config)
{
	size_t n = strlen(s);
	if (s[0] != 'r' || n < 2 || n > 17 ||
	    strspn(s + 1, "0123456789abcdefABCDEF") != n - 1)
		return false;
	*config = strtoull(s + 1, NULL, 16);
	return true;
}

/* Splits "head:mods" at the first ':'; *mods NULL when there is none. */
static void split_mods(char *text, char **mods)
{
	char *colon = strchr(text, ':');
	*mods = colon ? colon + 1 : NULL;
	if (colon)
		*colon = '\0';
}

/* ---- the kinds of event ---------------------------------------------- */

static int parse_pmu(struct parser *p, const char *text)
{
	const char *slash = strchr(text, '/');
	const char *close = strchr(slash + 1, '/');
	if (!close) {
		err_set("missing closing '/' in '%s'", text);
		return -1;
	}
	if (close == slash + 1) {
		err_set("no terms between the slashes of '%s'", text);
		return -1;
	}
	char *pmu = xasprintf("%.*s", (int)(slash - text), text);
	char *terms = xasprintf("%.*s", (int)(close - slash - 1), slash + 1);
	const char *mods = close[1] == ':' ? close + 2 : close + 1;
	struct perf_event_attr attr = {0};
	char *name = NULL;
	int rc = pmc_pmu_terms(p->roots->sysfs, pmu, terms, &attr, &name);
	free(pmu);
	free(terms);
	if (rc < 0)
		return -1;
	size_t from = p->list->n;
	add_event(p, &attr, name ? name : xstrdup(text));
	return finish_events(p, from, *mods || close[1] == ':' ? mods : NULL, text);
}

static int bp_access(const char *s, u32 *type)
{
	*type = 0;
	for (; *s; s++) {
		if (*s == 'r')
			*type |= HW_BREAKPOINT_R;
		else if (*s == 'w')
			*type |= HW_BREAKPOINT_W;
		else if (*s == 'x')
			*type |= HW_BREAKPOINT_X;
		else
			return -1;
	}
	return 0;
}

/* "mem:ADDR[/LEN][:rwx][:mods]": a hardware breakpoint. */
static int parse_breakpoint(struct parser *p, const char *text)
{
	char *s = xstrdup(text + 4), *mods = NULL, *access = NULL;
	split_mods(s, &access);
	if (access)
		split_mods(access, &mods);
	/* A single field after the address may be modifiers, not access. */
	if (access && !mods && *access && strspn(access, "rwx") != strlen(access)) {
		mods = access;
		access = NULL;
	}
	char *len = strchr(s, '/');
	if (len)
		*len++ = '\0';
	struct perf_event_attr attr = { .type = PERF_TYPE_BREAKPOINT };
	u64 addr, n = 0;
	u32 type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
	int rc = -1;
	if (parse_u64(s, &addr) < 0 || (len && parse_u64(len, &n) < 0)) {
		err_set("bad address or length in breakpoint '%s' "
			"(want mem:ADDR[/LEN][:rwx])", text);
	} else if (access && (!*access || bp_access(access, &type) < 0)) {
		err_set("bad access '%s' in breakpoint '%s' (want r, w, x or rw)",
			access, text);
	} else {
		attr.bp_addr = addr;
		attr.bp_type = type;
		attr.bp_len = n ? n : type == HW_BREAKPOINT_X ? sizeof(long)
							   : HW_BREAKPOINT_LEN_4;
		size_t from = p->list->n;
		add_event(p, &attr, xstrdup(text));
		rc = finish_events(p, from, mods, text);
	}
	free(s);
	return rc;
}

static const char *tracefs_root(struct parser *p)
{
	if (!p->tracefs)
		p->tracefs = p->roots->tracefs ? p->roots->tracefs : pmc_tracefs();
	return p->tracefs;
}

static int no_tracepoint(struct parser *p, const char *sys, const char *name,
			 const char *text)
{
	if (pmc_tp_system_exists(p->tracefs, sys))
		err_set("no tracepoint matches '%s:%s' (see 'ember list' or %s/events/%s)",
			sys, name, p->tracefs, sys);
	else if (valid_mods(name))
		err_set("unknown event '%s' (see 'ember list')", sys);
	else
		err_set("unknown event '%s': no tracepoint system '%s' "
			"(see 'ember list')", text, sys);
	return -1;
}

/* "sys:name[:mods]" with fnmatch globs in sys and name. */
static int parse_tracepoint(struct parser *p, char *sys, char *rest,
			    const char *text)
{
	char *mods;
	split_mods(rest, &mods);
	if (!*sys || !*rest) {
		err_set("unknown event '%s' (tracepoints are written "
			"subsystem:name; see 'ember list')", text);
		return -1;
	}
	if (!tracefs_root(p))
		return -1;
	struct pmc_tp *tps;
	int n = pmc_tp_glob(p->tracefs, sys, rest, &tps);
	if (n < 0)
		return -1;
	if (n == 0)
		return no_tracepoint(p, sys, rest, text);
	size_t from = p->list->n;
	for (int i = 0; i < n; i++) {
		struct perf_event_attr attr = { .type = PERF_TYPE_TRACEPOINT,
						.config = (u64)tps[i].id };
		/* perf names tracepoints without their modifiers. */
		struct pmc_event *ev = add_event(
			p, &attr, xasprintf("%s:%s", tps[i].system, tps[i].name));
		ev->tp_system = tps[i].system;
		ev->tp_name = tps[i].name;
		tps[i].system = tps[i].name = NULL;
	}
	pmc_tp_free(tps, n);
	return finish_events(p, from, mods, text);
}

/* "u:PATH:SYMBOL" or "ur:" (uprobe.c), counted at every hit. */
static int parse_uprobe(struct parser *p, const char *text)
{
	struct perf_event_attr attr = {0};
	char *path;
	if (pmc_uprobe_attr(text, &attr, &path) < 0)
		return -1;
	struct pmc_event *ev = add_event(p, &attr, xstrdup(text));
	ev->probe_path = path;
	ev->attr.config1 = (u64)(uintptr_t)path;
	ev->every_hit = true;
	return 0;
}

/* One event (no commas, no braces) of a spec. */
static int parse_event(struct parser *p, const char *text)
{
	if (!*text) {
		err_set("empty event in the list (two commas in a row?)");
		return -1;
	}
	if (!strncmp(text, "mem:", 4))
		return parse_breakpoint(p, text);
	if (!strncmp(text, "u:", 2) || !strncmp(text, "ur:", 3))
		return parse_uprobe(p, text);
	if (strchr(text, '/'))
		return parse_pmu(p, text);
	char *head = xstrdup(text), *mods;
	split_mods(head, &mods);
	struct perf_event_attr attr = {0};
	int rc = pmc_symbolic(head, &attr);
	u64 raw;
	if (rc == 1 && parse_raw(head, &raw)) {
		attr.type = PERF_TYPE_RAW;
		attr.config = raw;
		rc = 0;
	}
	if (rc == 0) {
		size_t from = p->list->n;
		add_event(p, &attr, xstrdup(text));
		rc = finish_events(p, from, mods, text);
	} else if (rc == 1 && mods) {
		rc = parse_tracepoint(p, head, mods, text);
	} else if (rc == 1) {
		err_set("unknown event '%s' (see 'ember list')", text);
		rc = -1;
	}
	free(head);
	return rc;
}

/* ---- lists and groups ------------------------------------------------ */

/* Length of the first item of s: up to a ',' outside braces and outside
 * the "/terms/" of a PMU event (whose terms are comma-separated too). */
static size_t item_len(const char *s)
{
	int depth = 0;
	bool in_terms = false;
	const char *tok = s;
	for (const char *c = s; *c; c++) {
		if (*c == '/' && strncmp(tok, "mem:", 4))
			in_terms = !in_terms;
		else if (in_terms)
			continue;
		else if (*c == '{')
			depth++, tok = c + 1;
		else if (*c == '}')
			depth--;
		else if (*c == ',' && depth <= 0)
			return (size_t)(c - s);
		else if (*c == ',')
			tok = c + 1;
	}
	return strlen(s);
}

/* Parses a comma list of events (no groups) in s[0, len). */
static int parse_members(struct parser *p, const char *s, size_t len)
{
	char *copy = xasprintf("%.*s", (int)len, s);
	int rc = 0;
	for (char *c = copy; rc == 0;) {
		size_t n = item_len(c);
		bool last = c[n] == '\0';
		c[n] = '\0';
		if (strchr(c, '{') || strchr(c, '}')) {
			err_set("nested or unbalanced braces in '%s'", c);
			rc = -1;
		} else {
			rc = parse_event(p, c);
		}
		if (last)
			break;
		c += n + 1;
	}
	free(copy);
	return rc;
}

/* "{a,b,...}[:mods]": the first event leads; modifiers apply to all. */
static int parse_group(struct parser *p, const char *item, size_t len)
{
	const char *end = memchr(item, '}', len);
	if (!end) {
		err_set("missing '}' in '%.*s'", (int)len, item);
		return -1;
	}
	if (memchr(item + 1, '{', (size_t)(end - item - 1))) {
		err_set("nested groups are not supported: '%.*s'", (int)len, item);
		return -1;
	}
	const char *after = end + 1;
	size_t after_len = len - (size_t)(after - item);
	if (after_len && *after != ':') {
		err_set("unexpected '%.*s' after group '%.*s' (want :modifiers)",
			(int)after_len, after, (int)(after - item), item);
		return -1;
	}
	if (end == item + 1) {
		err_set("empty group '{}'");
		return -1;
	}
	size_t leader = p->list->n;
	if (parse_members(p, item + 1, (size_t)(end - item - 1)) < 0)
		return -1;
	for (size_t i = leader; i < p->list->n; i++)
		p->list->v[i].group = (int)leader;
	if (!after_len)
		return 0;
	char *text = xasprintf("%.*s", (int)len, item);
	char *mods = xasprintf("%.*s", (int)after_len - 1, after + 1);
	int rc = 0;
	for (size_t i = leader; rc == 0 && i < p->list->n; i++)
		rc = apply_mods(&p->list->v[i], &p->gh.v[i - p->item_start], mods,
				text);
	free(text);
	free(mods);
	return rc;
}

static int parse_item(struct parser *p, const char *item, size_t len)
{
	p->gh.n = 0;
	p->item_start = p->list->n;
	if (*item == '{')
		return parse_group(p, item, len);
	if (memchr(item, '}', len)) {
		err_set("unbalanced '}' in '%.*s'", (int)len, item);
		return -1;
	}
	return parse_members(p, item, len);
}

static void rollback(struct pmc_list *list, size_t to)
{
	while (list->n > to)
		event_free(&list->v[--list->n]);
}

int pmc_parse_at(struct pmc_list *list, const char *spec,
		 const struct pmc_roots *roots)
{
	struct parser p = { .list = list, .roots = roots };
	size_t start = list->n;
	int rc = 0;
	if (!*spec) {
		err_set("empty event spec (see 'ember list')");
		return -1;
	}
	for (const char *s = spec; rc == 0;) {
		size_t n = item_len(s);
		rc = parse_item(&p, s, n);
		if (!s[n])
			break;
		s += n + 1;
		if (!*s) {
			err_set("empty event in the list (trailing comma?)");
			rc = -1;
		}
	}
	VEC_FREE(&p.gh);
	if (rc < 0) {
		rollback(list, start);
		return -1;
	}
	list->last = start;
	return 0;
}

int pmc_parse(struct pmc_list *list, const char *spec)
{
	static const struct pmc_roots system_roots = { PMC_SYSFS_PMUS, NULL };
	return pmc_parse_at(list, spec, &system_roots);
}

int pmc_set_filter(struct pmc_list *list, const char *filter)
{
	int n = 0;
	for (size_t i = list->last; i < list->n; i++) {
		struct pmc_event *ev = &list->v[i];
		if (ev->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		free(ev->filter);
		ev->filter = xstrdup(filter);
		n++;
	}
	if (n == 0) {
		err_set("--filter '%s' follows no tracepoint (put it after an "
			"-e SUBSYS:NAME)", filter);
		return -1;
	}
	return 0;
}
