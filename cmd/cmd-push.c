/* cmd-push.c - `ember push`: one profile sent to Pyroscope's ingest (a
 * recording exported to pprof, a .pb.gz as it is, or folded stacks), or,
 * with --every (and `ember record --push`, routed here by ember.c), a
 * continuous profiler sending one pprof per interval of a live recording. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "live/live.h"

#define CMD "push"
#define DEFAULT_SPOOL_MAX 100
#define DEFAULT_DRAIN 10.0
#define DEFAULT_SAMPLE_RATE 100
#define FAILURE_REPEAT_NS (60 * 1000000000ull)   /* failure lines at most once a minute */

struct push_args {
	struct rp_opts rp;
	struct live_opts live;
	struct push_opts po;
	const char *input;         /* -i or the operand */
	u64 from, until;           /* --from, --until; 0: from the file */
	u64 sample_rate;
	double every;              /* --every: continuous */
	const char *spool;
	u64 spool_max;
	double drain;
	bool graph, verbose;
};

#define A(f) offsetof(struct push_args, f)

static int set_seconds_u64(const char *arg, u64 *out, const char *what)
{
	if (parse_u64(arg, out) < 0 || !*out) {
		err_set("bad %s '%s': give unix seconds (date +%%s)", what, arg);
		return -1;
	}
	return 0;
}

static int set_from(void *field, const char *arg)
{
	return set_seconds_u64(arg, field, "--from");
}

static int set_until(void *field, const char *arg)
{
	return set_seconds_u64(arg, field, "--until");
}

static int set_every(void *field, const char *arg)
{
	return push_parse_duration(arg, field);
}

static const struct opt options[] = {
	OPT_TEXT("Where to:"),
	OPT_STRING(0, "url", A(po.url), "URL",
	  "the backend: http(s)://HOST[:PORT][/PREFIX]; profiles go\n"
	  "to PREFIX/ingest (Pyroscope's ingest API)"),
	OPT_STRING(0, "push", A(po.url), "URL", "the same as --url (for ember record --push)"),
	OPT_STRING(0, "name", A(po.name), "NAME",
	  "application name and labels, e.g. 'app.cpu{env=prod,host=web1}'"),
	OPT_STRING(0, "basic-auth", A(po.basic_auth), "USER:FILE",
	  "HTTP basic auth as USER, the password or token read\n"
	  "from FILE (Grafana Cloud: the instance id and a token)"),
	OPT_STRING(0, "bearer-token-file", A(po.bearer_file), "FILE",
	  "send 'Authorization: Bearer TOKEN', TOKEN read from FILE"),
	OPT_STRING(0, "tenant", A(po.tenant), "ID", "X-Scope-OrgID: the tenant of a multi-tenant Pyroscope"),
	OPT_STRING(0, "cacert", A(po.ca_file), "FILE",
	  "https: trust the certificates in FILE (PEM: a private CA,\n"
	  "or a self-signed backend's own) instead of the system's"),
	OPT_DOUBLE(0, "timeout", A(po.timeout), "SECS", "each request's time limit (default 10)", 0,
		   "bad --timeout '%s': give a positive number of seconds"),
	OPT_INT(0, "retries", A(po.retries), "N",
	  "attempts after a failed one (default 3), waiting 1, 2, 4 s...;\n"
	  "HTTP 4xx answers but 408 and 429 are not retried", 0, 20,
	  "bad --retries '%s': give 0 to 20"),
	OPT_TEXT("One profile:"),
	OPT_STRING('i', "input", A(input), "FILE",
	  "a recording, exported to pprof first (or give FILE as\n"
	  "an operand: a recording, a .pb.gz sent as it is, or\n"
	  "folded stacks)"),
	OPT_CALLBACK(0, "from", OPT_ARG, A(from), "SECS",
	  "the profile's start, unix seconds (default: from the\n"
	  "pprof's time, else the file's time less its length)", set_from),
	OPT_CALLBACK(0, "until", OPT_ARG, A(until), "SECS", "the profile's end, unix seconds",
		     set_until),
	OPT_U64(0, "sample-rate", A(sample_rate), "HZ",
		"folded stacks: their sampling rate (default 100)", 1,
		"bad --sample-rate '%s': give the sampling rate in Hz"),
	OPT_TEXT("Continuous profiling:"),
	OPT_CALLBACK(0, "every", OPT_ARG, A(every), "DUR",
	  "record live and send a pprof every DUR (10s, 500ms, 1m)", set_every),
	OPT_CALLBACK(0, "push-every", OPT_ARG, A(every), "DUR",
	  "the same as --every (for ember record --push)", set_every),
	OPT_BOOL('g', NULL, A(graph), "record call chains (as record -g)"),
	LIVE_COUNT_OPT(A(live), "stop after N intervals"),
	OPT_STRING(0, "spool", A(spool), "DIR",
	  "keep profiles that could not be sent in DIR and send\n"
	  "them when the backend answers again (none: dropped);\n"
	  "your own directory, writable by you alone"),
	OPT_U64(0, "spool-max", A(spool_max), "N",
	  "at most N profiles in the spool, the oldest dropped\n"
	  "first (default 100)", 1, "bad --spool-max '%s': give a number of profiles, 1 or more"),
	OPT_DOUBLE(0, "drain-time", A(drain), "SECS",
	  "at the end (SIGTERM, Ctrl-C, --duration), time left to\n"
	  "send what is pending before it is spooled (default 10)", 0,
	  "bad --drain-time '%s': give a positive number of seconds"),
	OPT_BOOL('v', "verbose", A(verbose), "a line per interval: its times, samples and bytes"),
	OPT_INCLUDE_AT(live_target_opts, A(live)),
	OPT_INCLUDE_AT(live_pid_opts, A(live)),
	OPT_INCLUDE_AT(rp_symbol_opts, A(rp)),
	OPT_END,
};

const struct opt_cmd push_cmd = {
	.name = CMD,
	.summary = "send profiles to Pyroscope (once, or continuously)",
	.synopsis =
	"usage: ember push --url URL --name NAME [-i FILE | FILE.pb.gz | FILE.folded]\n"
	"       ember push --url URL --name NAME --every DUR [-a | -C | -p | -- cmd] [-g]\n"
	"       ember record -a -g -F 99 --push URL --name NAME --push-every 10s\n"
	"\n"
	"Sends a profile to a continuous-profiling backend's HTTP ingest (Grafana\n"
	"Pyroscope's POST /ingest): a recording as pprof, a pprof file as it is, or\n"
	"folded stacks.  With --every it records live and sends each interval's\n"
	"samples as one pprof from a thread of its own, so the recording never\n"
	"waits on the network; what cannot be sent waits in the --spool directory.\n"
	"Credentials are read from files and never printed.\n"
	"\n",
	.opts = options,
	.column = 26,
	.notes =
	"SIGTERM and Ctrl-C end the recording; what is pending is sent (for at most\n"
	"--drain-time seconds, the rest spooled) and ember exits 0.  Exit status 1:\n"
	"the profile was not sent; 2: bad usage.\n",
};

/* ---- one profile ------------------------------------------------------------- */

enum file_kind { FILE_RECORDING, FILE_PPROF, FILE_FOLDED };

static int sniff(const char *path, enum file_kind *kind)
{
	if (!strcmp(path, "-")) {
		*kind = FILE_RECORDING;
		return 0;
	}
	FILE *f = fopen(path, "rb");
	if (!f)
		return cmd_bad(CMD, "give an existing file", "cannot open %s", path);
	unsigned char m[8] = {0};
	size_t n = fread(m, 1, sizeof(m), f);
	fclose(f);
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		*kind = FILE_PPROF;
	else if (n == 8 && !memcmp(m, "PERFILE2", 8))
		*kind = FILE_RECORDING;
	else
		*kind = FILE_FOLDED;
	return 0;
}

/* A recording as pprof, gzipped, in *gz. */
static int export_recording(struct push_args *a, void **gz, size_t *len, u64 *samples)
{
	a->rp.input = a->input;
	a->rp.callchains = true;
	struct replay *rp = rp_open(&a->rp);
	if (!rp)
		return cmd_said(CMD, -1);
	struct ex_profile_opts eo = { .kind = EX_SAMPLES, .rp = rp };
	struct ex_profile *p = ex_profile_new(&eo);
	struct rp_sink sink = ex_sink(p);
	int rc = rp_run(rp, &sink);
	if (rc == 0)
		rp_warn_summary(CMD, rp_summary(rp), a->input);
	*samples = ex_profile_samples(p);
	if (rc == 0 && !*samples) {
		err_set("%s holds no samples: nothing to send", a->input);
		rc = -1;
	}
	if (rc == 0)
		rc = ex_pprof_encode(p, gz, len);
	ex_profile_free(p);
	rp_close(rp);
	return cmd_said(CMD, rc);
}

/* from and until: the options', else the pprof's own, else the file's
 * modification time less the profile's length. */
static void file_times(const struct push_args *a, struct push_profile *p)
{
	u64 t = 0, d = 0;
	if (p->format == PUSH_PPROF)
		push_pprof_times(p->data, p->len, &t, &d);
	struct stat st;
	u64 mtime = a->input && stat(a->input, &st) == 0 ? (u64)st.st_mtime : (u64)time(NULL);
	u64 secs = MAX((d + 999999999u) / 1000000000u, 1);
	p->from = a->from ? a->from : t ? t / 1000000000u : mtime - MIN(mtime, secs);
	p->until = a->until ? a->until : t ? (t + d + 999999999u) / 1000000000u : p->from + secs;
	if (a->from && !a->until)
		p->until = p->from + secs;
	if (a->until && !a->from)
		p->from = p->until - MIN(p->until, secs);
	if (p->until <= p->from)   /* Pyroscope wants from < until */
		p->until = p->from + 1;
}

static int push_file(struct push_args *a)
{
	enum file_kind kind = FILE_FOLDED;
	if (sniff(a->input, &kind) < 0)
		return EXIT_USAGE;
	struct push_client *c = push_client_new(&a->po);
	if (!c) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_USAGE;
	}
	void *data = NULL;
	size_t len = 0;
	u64 samples = 0;
	int rc = 0;
	if (kind == FILE_RECORDING)
		rc = export_recording(a, &data, &len, &samples);
	else if (!(data = read_text_file(a->input, &len)))
		rc = cmd_said(CMD, -1);
	if (rc == 0 && !len)
		rc = cmd_bad(CMD, "give a profile", "%s is empty", a->input);
	if (rc < 0) {
		free(data);
		push_client_free(c);
		return EXIT_RUNTIME;
	}
	struct push_profile p = { .format = kind == FILE_FOLDED ? PUSH_FOLDED : PUSH_PPROF,
				  .data = data, .len = len,
				  .sample_rate = a->sample_rate ? a->sample_rate : DEFAULT_SAMPLE_RATE };
	file_times(a, &p);
	rc = push_send(c, &p, 0);
	if (rc == 0) {
		printf("sent %s (%zu bytes of %s", a->input, len,
		       p.format == PUSH_PPROF ? "pprof" : "folded stacks");
		if (samples)
			printf(", %llu samples", (unsigned long long)samples);
		printf(", %llu to %llu) to %s\n", (unsigned long long)p.from,
		       (unsigned long long)p.until, a->po.url);
	} else {
		cmd_error(CMD, "%s", err_msg());
	}
	free(data);
	push_client_free(c);
	return rc == 0 ? EXIT_OK : EXIT_RUNTIME;
}

/* ---- continuous ---------------------------------------------------------------- */

struct run {
	struct push_args *a;
	struct live *live;
	struct push_sender *sender;
	u64 n;                     /* intervals */
	struct push_stats told;    /* the counts last printed */
	bool failing;              /* a failure was said, no recovery since */
	u64 failure_said_at;
};

/* What changed in the sender's counts since the last interval, said once:
 * failures (at most once a minute while they go on) and the recovery. */
static void say_sender(struct run *r)
{
	struct push_stats st;
	push_sender_stats(r->sender, &st);
	u64 now = now_ns();
	if (st.failed > r->told.failed) {
		if (!r->failing || now - r->failure_said_at >= FAILURE_REPEAT_NS) {
			cmd_warn(CMD, "upload failed: %s; in the spool: %zu, dropped: %llu",
				 st.last_error, st.in_spool, (unsigned long long)st.dropped);
			r->failure_said_at = now;
		}
		r->failing = true;
	} else if (st.sent > r->told.sent && r->failing) {
		r->failing = false;
		cmd_warn(CMD, "the backend answers again: %zu spooled profiles to send",
			 st.in_spool);
	}
	if (st.dropped > r->told.dropped && !r->failing)
		cmd_warn(CMD, "%llu profiles dropped in all (the oldest first)",
			 (unsigned long long)st.dropped);
	r->told = st;
}

static int after_interval(void *ctx, const struct live_push_interval *iv)
{
	struct run *r = ctx;
	if (r->a->verbose)
		printf("%llu-%llu: %llu samples, %zu bytes%s\n", (unsigned long long)iv->from,
		       (unsigned long long)iv->until, (unsigned long long)iv->samples, iv->bytes,
		       iv->bytes ? "" : " (not sent)");
	fflush(stdout);
	say_sender(r);
	if (r->a->live.count && ++r->n >= r->a->live.count)
		live_stop(r->live);
	return 0;
}

static void say_end(const struct push_stats *st, const struct rp_summary *sum)
{
	fprintf(stderr, "ember push: %llu profiles sent (%llu from the spool), %llu failed uploads, "
		"%zu in the spool, %llu dropped; %llu samples lost at the ring\n",
		(unsigned long long)st->sent, (unsigned long long)st->sent_from_spool,
		(unsigned long long)st->failed, st->in_spool, (unsigned long long)st->dropped,
		(unsigned long long)sum->lost);
	if (st->failed && st->last_error[0])
		cmd_warn(CMD, "the last failure: %s", st->last_error);
}

static int run_live(struct push_args *a, struct push_client *c, struct push_spool *s)
{
	a->live.callgraph = a->graph ? REC_CG_ONLINE : REC_CG_NONE;
	a->rp.interval_ns = (u64)(a->every * 1e9 + 0.5);
	bool usage;
	struct live *live = live_start(&a->live, REC_LIVE_SAMPLES, &a->rp, &usage);
	if (!live) {
		cmd_error(CMD, "%s", err_msg());
		return usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	struct replay *rp = rp_open(&a->rp);
	if (!rp) {
		cmd_error(CMD, "%s", err_msg());
		return live_end(live, CMD, EXIT_RUNTIME);
	}
	rp_set_callchains(rp, a->graph && rp_has_callchains(rp));
	/* Each interval's profile is encoded and reset at its tick (export keeps
	 * copies of texts only), so the files no process maps any more can go. */
	rp_set_release_files(rp, true);
	/* The sender thread starts after the replay opened (no thread may run
	 * while the reader forks). */
	struct run r = { .a = a, .live = live, .sender = push_sender_start(c, s) };
	struct live_push *lp = live_push_new(rp, r.sender, a->rp.interval_ns, after_interval, &r);
	struct rp_sink sink = live_push_sink(lp);
	int rc = rp_run(rp, &sink) < 0 ? EXIT_RUNTIME : EXIT_OK;
	if (rc != EXIT_OK)
		cmd_error(CMD, "%s", err_msg());
	struct push_stats st;
	push_sender_finish(r.sender, a->drain, &st);
	say_end(&st, rp_summary(rp));
	live_push_free(lp);
	rp_close(rp);
	return live_end(live, CMD, rc);
}

static int push_continuous(struct push_args *a)
{
	struct push_client *c = push_client_new(&a->po);
	if (!c) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_USAGE;
	}
	struct push_spool *s = NULL;
	if (a->spool && !(s = push_spool_open(a->spool, a->spool_max))) {
		cmd_error(CMD, "%s", err_msg());
		push_client_free(c);
		return EXIT_RUNTIME;
	}
	int rc = run_live(a, c, s);
	push_spool_close(s);
	push_client_free(c);
	return rc;
}

/* ---- the command ---------------------------------------------------------------- */

static int check_args(struct push_args *a, int argc, char **argv)
{
	if (!a->po.url)
		return cmd_bad(CMD, "give --url http://HOST:4040 (Pyroscope)", "no backend URL");
	if (!a->po.name)
		return cmd_bad(CMD, "give --name 'app.cpu{env=prod,host=...}'", "no application name");
	if (!a->every) {
		if (a->live.all || a->live.cpus || a->live.pids || a->live.tids || a->live.duration > 0 ||
		    a->live.output || a->live.freq || a->live.count || a->graph)
			return cmd_bad(CMD, "add --every DUR to profile continuously",
				       "-a, -C, -p, -t, -F, -g, -o, --duration and --count are for a live profile");
		if (a->from && a->until && a->from >= a->until)
			return cmd_bad(CMD, "give --from before --until", "--from %llu, --until %llu",
				       (unsigned long long)a->from, (unsigned long long)a->until);
		if (optind < argc && a->input)
			return cmd_bad(CMD, "give one file", "-i %s and %s", a->input, argv[optind]);
		if (optind < argc)
			a->input = argv[optind++];
		if (optind < argc) {
			cmd_extra_argument(CMD, CMD, argv[optind]);
			return -1;
		}
		if (!a->input)
			return cmd_bad(CMD, "give -i FILE, FILE.pb.gz or FILE.folded, or --every DUR",
				       "nothing to send");
		return 0;
	}
	if (a->input || a->from || a->until || a->sample_rate)
		return cmd_bad(CMD, "leave out --every to send a file",
			       "-i, --from, --until and --sample-rate are for one file");
	if (live_wanted(&a->live, argc, argv, optind) < 0) {
		cmd_error(CMD, "%s", err_msg());
		return -1;
	}
	if (!(a->live.cpus || a->live.pids || a->live.tids || a->live.command))
		a->live.all = true;
	return 0;
}

int cmd_push(int argc, char **argv)
{
	struct push_args a = { .spool_max = DEFAULT_SPOOL_MAX, .drain = DEFAULT_DRAIN };
	a.po.retries = -1;
	rp_opts_init(&a.rp);
	int rc = opt_parse(&push_cmd, argc, argv, &a);
	if (rc < 0)
		rc = check_args(&a, argc, argv) < 0 ? EXIT_USAGE
		   : a.every ? push_continuous(&a) : push_file(&a);
	rp_opts_free(&a.rp);
	live_opts_free(&a.live);
	return rc;
}
