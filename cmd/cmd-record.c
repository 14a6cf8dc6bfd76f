/* cmd-record.c - the `ember record` command: reads the options, runs the
 * recorder (session.c) and reports; the only place in record/ that prints. */
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cmd/cmd.h"
#include "net/net.h"
#include "record/record.h"

#define CMD "record"

enum { OPT_FILTER = 256, OPT_CALL_GRAPH, OPT_DURATION, OPT_OFF_CPU };

/* zstd's levels, perf record -z's default the fastest. */
#define ZSTD_LEVEL_DEFAULT 1
#define ZSTD_LEVEL_MAX 22

struct cli {
	struct rec_opts o;
	bool quiet;
	bool fell_back;            /* the default event became cpu-clock */
	u32 devs[16];              /* -d: kernel dev_t values (MAJOR << 20 | MINOR) */
	int ndevs;
	const char *token_file;    /* -o tcp://: --token-file, --fallback, */
	const char *fallback;      /* the sender (net/) and what the */
	struct net_client *net;    /* server said it stored */
	char *stored;
};

static int parse_freq(struct rec_opts *o, const char *arg)
{
	if (!strcmp(arg, "max")) {
		o->freq = rec_max_sample_rate();
		return o->freq ? 0 : cmd_bad(CMD, "the kernel's limit is unreadable; give "
					     "a number", "-F %s", arg);
	}
	if (parse_u64(arg, &o->freq) < 0 || o->freq == 0)
		return cmd_bad(CMD, "give a sampling rate in Hz, e.g. -F 999",
			       "-F %s", arg);
	return 0;
}

static int parse_period(struct rec_opts *o, const char *arg)
{
	if (parse_u64(arg, &o->period) < 0 || o->period == 0)
		return cmd_bad(CMD, "give a positive event count, e.g. -c 100000",
			       "-c %s", arg);
	return 0;
}

/* Pages, or a size with K/M/G that is turned into pages. */
static int parse_pages(struct rec_opts *o, const char *arg)
{
	return rec_parse_pages(arg, &o->mmap_pages) < 0 ? cmd_bad(CMD, err_msg(), "-m %s", arg) : 0;
}

/* "MODE" or "MODE,BYTES" for the modes that copy the user stack. */
static int parse_call_graph(struct rec_opts *o, const char *arg)
{
	if (!strcmp(arg, "fp")) {
		o->callgraph = REC_CG_FP;
		return 0;
	}
	size_t len = strcspn(arg, ",");
	if (len == 5 && !strncmp(arg, "dwarf", 5))
		o->callgraph = REC_CG_DWARF;
	else if (len == 4 && !strncmp(arg, "auto", 4))
		o->callgraph = REC_CG_ONLINE;
	else
		return cmd_bad(CMD, "use auto[,BYTES], fp or dwarf[,BYTES]",
			       "--call-graph %s", arg);
	o->stack_bytes = 0;
	if (!arg[len])
		return 0;
	u64 bytes;
	/* The kernel takes at most 65528 bytes, in multiples of 8. */
	if (parse_u64(arg + len + 1, &bytes) < 0 || bytes == 0 || bytes > 65528)
		return cmd_bad(CMD, "the stack size must be 8 to 65528 bytes",
			       "--call-graph %s", arg);
	o->stack_bytes = (u32)((bytes + 7) & ~7ULL);
	return 0;
}

static int parse_duration(struct rec_opts *o, const char *arg)
{
	if (parse_double(arg, &o->duration) < 0 || !(o->duration > 0))
		return cmd_bad(CMD, "give a positive number of seconds",
			       "--duration %s", arg);
	return 0;
}

/* --off-cpu's detail level; without one, the switches alone. */
static int parse_off_cpu(struct rec_opts *o, const char *arg)
{
	if (!arg || !strcmp(arg, "switches"))
		o->off_cpu = REC_OFFCPU_SWITCHES;
	else if (!strcmp(arg, "wakeups"))
		o->off_cpu = REC_OFFCPU_WAKEUPS;
	else if (!strcmp(arg, "wakers"))
		o->off_cpu = REC_OFFCPU_WAKERS;
	else
		return cmd_bad(CMD, "the levels are switches (the default), wakeups "
			       "(for sched lat) and wakers (for offcpu --wakers)",
			       "--off-cpu=%s", arg);
	return 0;
}

static int parse_list(int c, const char *arg, struct rec_opts *o)
{
	int rc;
	if (c == 'C')
		rc = parse_cpu_list(arg, cpus_possible(), &o->cpus, &o->ncpus);
	else if (c == 'p')
		rc = parse_pid_list(arg, &o->pids, &o->npids);
	else
		rc = parse_pid_list(arg, &o->tids, &o->ntids);
	if (rc < 0)
		cmd_error(CMD, "-%c: %s", c, err_msg());
	return rc;
}

/* The kernel's tracepoints print dev_t as MAJOR << 20 | MINOR, unlike
 * userspace's encoding, so the filter needs that form. */
static int parse_device(struct cli *cl, const char *arg)
{
	unsigned maj, min;
	char path[300], extra;
	if (cl->ndevs == (int)ARRAY_SIZE(cl->devs))
		return cmd_bad(CMD, "at most 16 devices", "-d %s", arg);
	if (sscanf(arg, "%u:%u%c", &maj, &min, &extra) != 2) {
		struct stat st;
		snprintf(path, sizeof(path), "%s%s", arg[0] == '/' ? "" : "/dev/", arg);
		if (stat(path, &st) < 0 || !S_ISBLK(st.st_mode))
			return cmd_bad(CMD, "not a block device: give /dev/NAME, NAME or "
				       "MAJOR:MINOR", "-d %s", arg);
		maj = major(st.st_rdev);
		min = minor(st.st_rdev);
	}
	if (maj >= 1u << 12 || min >= 1u << 20)
		return cmd_bad(CMD, "major or minor number out of range", "-d %s", arg);
	cl->devs[cl->ndevs++] = maj << 20 | min;
	return 0;
}

/* -z, -zN, --compression-level[=N] */
static int parse_compression(struct rec_opts *o, const char *arg)
{
	int level = ZSTD_LEVEL_DEFAULT;
	if (arg && (parse_int(arg, &level) < 0 || level < 1 || level > ZSTD_LEVEL_MAX))
		return cmd_bad(CMD, "give a zstd level from 1 (fastest) to 22 (smallest)",
			       "--compression-level=%s", arg);
	o->zstd_level = level;
	return 0;
}

#define A(f) offsetof(struct cli, f)

/* The options that print their own message: 0, or -1 after printing why. */
static int parse_option(struct cli *cl, int c, const char *arg)
{
	struct rec_opts *o = &cl->o;
	switch (c) {
	case 'e': return cmd_said(CMD, pmc_parse(&o->events, arg));
	case OPT_FILTER: return cmd_said(CMD, pmc_set_filter(&o->events, arg));
	case 'F': return parse_freq(o, arg);
	case 'c': return parse_period(o, arg);
	case OPT_CALL_GRAPH: return parse_call_graph(o, arg);
	case 'C': case 'p': case 't': return parse_list(c, arg, o);
	case 'm': return parse_pages(o, arg);
	case 'z': return parse_compression(o, arg);
	case OPT_DURATION: return parse_duration(o, arg);
	case OPT_OFF_CPU: return parse_off_cpu(o, arg);
	case 'd': return parse_device(cl, arg);
	default: return 0;
	}
}

static int parse_one(void *ctx, int c, const char *arg)
{
	return parse_option(ctx, c, arg) < 0 ? -2 : 1;
}

static const struct opt options[] = {
	OPT('e', 'e', "event", OPT_ARG, "EVENT",
	  "event to record (repeatable; comma lists, groups,\n"
	  "tracepoints sys:name with globs, uprobes\n"
	  "u:PATH:SYMBOL and ur: for returns, u:libc:malloc);\n"
	  "default cycles, or cpu-clock on a CPU without a\n"
	  "hardware PMU"),
	OPT(OPT_FILTER, 0, "filter", OPT_ARG, "EXPR", "tracepoint filter for the preceding -e"),
	OPT('F', 'F', "freq", OPT_ARG, "HZ", "samples per second per CPU (default 4000, or max)"),
	OPT('c', 'c', "count", OPT_ARG, "PERIOD", "a sample every PERIOD events instead of -F"),
	OPT_SET('g', NULL, A(o.callgraph), REC_CG_ONLINE, 0,
	  "call chains, user stacks unwound with CFI while\n"
	  "recording (--call-graph auto)"),
	OPT(OPT_CALL_GRAPH, 0, "call-graph", OPT_ARG, "MODE",
	  "auto[,BYTES] (-g; BYTES of user stack copied for\n"
	  "unwinding, default 32768 where a ring holds 125 ms of\n"
	  "them, up to -F 1024 with -m's default, else 16384, and\n"
	  "16384 for tracepoints), fp (frame pointers), or\n"
	  "dwarf[,BYTES] (stack copies kept for the report,\n"
	  "default 8192)"),
	OPT_BOOL('a', "all-cpus", A(o.system_wide), "system-wide, on every CPU"),
	OPT('C', 'C', "cpu", OPT_ARG, "LIST", "only these CPUs (0-3,6)"),
	OPT('p', 'p', "pid", OPT_ARG, "PIDS", "these processes, all threads, new ones too"),
	OPT('t', 't', "tid", OPT_ARG, "TIDS", "only these threads"),
	OPT_STRING('o', "output", A(o.output), "FILE",
	  "output (default ember.data; an old one becomes\n"
	  "FILE.old); - writes a stream to standard output;\n"
	  "tcp://HOST:PORT streams it to 'ember serve'"),
	OPT_STRING(0, "token-file", A(token_file), "FILE",
	  "with -o tcp://, the shared token the server\n"
	  "requires (ember serve --token-file)"),
	OPT_STRING(0, "fallback", A(fallback), "FILE",
	  "with -o tcp://, keep the stream in FILE too, so\n"
	  "that if the connection drops the recording goes\n"
	  "on there, whole; removed once the server has it.\n"
	  "A server that refuses or cannot be reached: the\n"
	  "recording goes into FILE alone (said in a line)"),
	OPT('m', 'm', "mmap-pages", OPT_ARG, "N",
	  "ring pages per CPU, a power of two (or 512K, 4M)"),
	OPT('z', 'z', "compression-level", OPT_OPT_ARG, "N",
	  "write records zstd-compressed, level N from 1\n"
	  "(fastest, the default) to 22 (smallest), as\n"
	  "perf record -z does; perf and ember read them"),
	OPT(OPT_DURATION, 0, "duration", OPT_ARG, "SECS", "stop after SECS seconds"),
	OPT_BOOL(0, "switch-events", A(o.switch_events), "record context switches"),
	OPT(OPT_OFF_CPU, 0, "off-cpu", OPT_OPT_ARG, "LEVEL",
	  "record where threads block: sched_switch with call\n"
	  "chains (-g unless --call-graph) and switch events;\n"
	  "with -F or -c also CPU samples.  LEVEL adds:\n"
	  "wakeups  sched_wakeup(_new), for 'ember sched lat'\n"
	  "wakers   and their call chains, for 'offcpu --wakers'"),
	OPT_BOOL(0, "block", A(o.block),
	  "record block I/O: the block tracepoints this kernel\n"
	  "has (queue, getrq, insert, issue, complete, merges,\n"
	  "splits, remaps, requeues, errors), system-wide\n"
	  "(completions run outside the task); see 'ember bio'"),
	OPT_STRING(0, "tool", A(o.tool), "NAME",
	  "record the events tool NAME reads (execsnoop,\n"
	  "opensnoop, statsnoop, filelife, syscount, exitsnoop,\n"
	  "cpudist, softirqs, hardirqs, oomkill, drsnoop, writeback; funccount and\n"
	  "stackcount with -e), for 'ember NAME -i FILE'"),
	OPT('d', 'd', "device", OPT_ARG, "DEV",
	  "with --block, only this block device (repeatable;\n"
	  "/dev/sda, sda or MAJOR:MINOR)"),
	OPT_BOOL(0, "no-leaf-fix", A(o.no_leaf_fix),
	  "with --call-graph fp, no user-stack snapshot for\n"
	  "repairing the caller of a frameless leaf function"),
	OPT_BOOL('N', "no-buildid-cache", A(o.no_buildid_cache),
	  "leave the build-id cache alone: by default this\n"
	  "kernel's kallsyms and the mapped files go into\n"
	  "~/.debug, for reporting elsewhere or later (not\n"
	  "with -o /dev/null or another character device)"),
	OPT_BOOL('q', "quiet", A(quiet), "no summary line"),
	OPT_END,
};

const struct opt_cmd record_cmd = {
	.name = CMD,
	.summary = "sample and trace into a perf.data file",
	.synopsis =
	"usage: ember record [options] [-- command [args]]\n"
	"\n"
	"Samples and traces into a perf.data file that ember and Linux perf read.\n"
	"Without a command, -p, -t or -C, the whole system is recorded until\n"
	"Ctrl-C or --duration.\n"
	"\n",
	.opts = options,
	.column = 25,
	.stop_at_operand = true,
	.one = parse_one,
	/* `record --push URL` is the continuous profiler, `push --every`:
	 * record/ never calls the views, so push takes the whole line. */
	.handover_option = "push",
	.handover = cmd_push,
};

static int check_targets(struct rec_opts *o)
{
	if (o->pids && o->tids)
		return cmd_bad(CMD, "give one of them", "-p and -t");
	if ((o->pids || o->tids) && o->command)
		return cmd_bad(CMD, "record either running tasks or a command, not both",
			       "-p/-t with a command");
	if (!o->pids && !o->tids && !o->command && !o->cpus)
		o->system_wide = true;  /* perf's default too */
	if (o->period)
		o->freq = 0;            /* -c wins, as in perf */
	/* Completions run in interrupts and other tasks' time: a per-task
	 * recording would see I/Os start and never end. */
	if (o->block && (o->pids || o->tids))
		return cmd_bad(CMD, "block I/O completes outside the task; record "
			       "system-wide (-a, or a command) or with -C", "--block with -p/-t");
	if (o->block && !o->cpus)
		o->system_wide = true;
	return 0;
}

/* A sample with a user stack copy takes 8 or 16 KB of the ring, not 100
 * bytes: 4 MiB per CPU holds 50 to 100 ms of them at -F 4999, where
 * perf's 512 KiB holds 12 ms and a drain that waits for a busy CPU
 * loses samples (40 of 40,000 at -F 4999 -a here).  Only root may lock
 * that much beyond perf_event_mlock_kb, and a machine of many CPUs gets
 * smaller rings (256 MiB in all at most). */
static u32 default_pages(const struct rec_opts *o)
{
	return rec_copies_stacks(o) ? rec_stack_pages(REC_STACK_PAGES) : REC_DEFAULT_PAGES;
}

/* -1 to go on, or the exit status to stop with. */
static int parse_cli(struct cli *cl, int argc, char **argv)
{
	struct rec_opts *o = &cl->o;
	o->output = "ember.data";
	o->self_argc = argc;
	o->self_argv = argv;
	int rc = opt_parse(&record_cmd, argc, argv, cl);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		o->command = argv + optind;
	return check_targets(o) < 0 ? EXIT_USAGE : -1;
}

static int add_default_event(struct cli *cl)
{
	return cmd_said(CMD, rec_add_default_event(&cl->o.events, &cl->fell_back));
}

static int add_off_cpu_events(struct cli *cl)
{
	if (rec_add_off_cpu_events(&cl->o, &cl->fell_back) < 0) {
		cmd_error(CMD, "--off-cpu: %s", err_msg());
		return -1;
	}
	return 0;
}

/* --block: the block tracepoints (CPU samples first when -F or -c asks). */
static int add_block_events(struct cli *cl)
{
	struct rec_opts *o = &cl->o;
	if (o->events.n == 0 && (o->freq || o->period) && add_default_event(cl) < 0)
		return -1;
	if (rec_add_block_events(o, cl->devs, cl->ndevs) < 0) {
		cmd_error(CMD, "%s", err_msg());
		return -1;
	}
	return 0;
}

/* Said once the recording is sure to start, so that a bad-input error
 * stays the only line. */
static void print_fallback(const struct cli *cl)
{
	if (cl->fell_back && !cl->quiet)
		cmd_error(CMD, "no hardware PMU on this CPU: sampling cpu-clock "
			  "instead of cycles");
}

static void print_notes(struct rec_session *s, size_t *shown)
{
	for (const char *note; (note = rec_session_note(s, *shown)); (*shown)++)
		cmd_warn(CMD, "%s", note);
}

static const char *output_name(const struct cli *cl)
{
	static char buf[512];
	const char *out = cl->o.output;
	if (cl->net && cl->stored)
		snprintf(buf, sizeof(buf), "%s, stored as %s", out, cl->stored);
	else if (cl->net && cl->fallback)
		snprintf(buf, sizeof(buf), "%s (the fallback)", cl->fallback);
	else
		return strcmp(out, "-") ? out : "standard output";
	return buf;
}

/* "cpu0 1200, cpu1 1308": the CPUs whose rings dropped samples (a busy
 * CPU overflows while the others keep up). */
static const char *lost_per_cpu(const struct rec_session *s)
{
	static char buf[256];
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < rec_session_rings(s) && len < sizeof(buf) - 32; i++) {
		int cpu;
		u64 lost = rec_session_ring_lost(s, i, &cpu);
		if (!lost)
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%scpu%d %llu",
					len ? ", " : "", cpu, (unsigned long long)lost);
	}
	if (len >= sizeof(buf) - 32)
		snprintf(buf + len, sizeof(buf) - len, ", ...");
	return buf;
}

/* Samples lost to full rings are reported even with -q. */
static void print_summary(const struct cli *cl, const struct rec_session *s)
{
	const struct rec_tally *t = rec_session_total(s);
	if (t->lost)
		cmd_warn(CMD, "%llu samples lost (%s): the rings overflowed; use a larger -m "
			 "or a lower -F", (unsigned long long)t->lost, lost_per_cpu(s));
	if (t->throttles && !cl->quiet)
		cmd_warn(CMD, "the kernel throttled sampling %llu times "
			 "(perf_event_max_sample_rate)", (unsigned long long)t->throttles);
	if (cl->quiet)
		return;
	fprintf(stderr, "ember record: %llu samples, %llu lost, %.3f MB written to %s",
		(unsigned long long)t->samples, (unsigned long long)t->lost,
		t->bytes / 1048576.0, output_name(cl));
	if (t->zstd_out)
		fprintf(stderr, ", compressed (%.3f MB of records, ratio %.1f)",
			t->zstd_in / 1048576.0, (double)t->zstd_in / (double)t->zstd_out);
	fputc('\n', stderr);
	if (cl->o.callgraph == REC_CG_ONLINE) {
		const struct rec_online_stats *u = rec_session_online_stats(s);
		if (u->files_missing)
			cmd_warn(CMD, "%llu mapped files could not be opened as they were "
				 "mapped (gone from disk or replaced, their process gone): "
				 "user stacks stop in them", (unsigned long long)u->files_missing);
		fprintf(stderr, "ember record: user stacks: %llu unwound while recording, "
			"%llu left for the report (the drain was behind), %llu without user "
			"state\n", (unsigned long long)u->unwound, (unsigned long long)u->deferred,
			(unsigned long long)u->no_user);
		if (u->maps_released)
			fprintf(stderr, "ember record: processes gone: %llu maps let go of, "
				"%llu files closed, %llu samples after their maps went "
				"(sampled ip only), %llu found gone without an EXIT record\n",
				(unsigned long long)u->maps_released,
				(unsigned long long)u->files_closed,
				(unsigned long long)u->no_maps, (unsigned long long)u->vanished);
	}
}

/* After a failure: where what was recorded until then is, or NULL.  Over tcp://
 * only the fallback or the server's word says; the server may have
 * removed its file (nothing readable arrived, or its disk is full). */
static const char *kept_where(const struct cli *cl, char *buf, size_t size)
{
	if (!cl->net)
		return "what was recorded until then is kept and readable";
	if (net_client_has_fallback(cl->net))
		snprintf(buf, size, "what was recorded until then is kept and readable in %s",
			 cl->fallback);
	else if (net_client_last_word(cl->net))
		snprintf(buf, size, "the server: %s", net_client_last_word(cl->net));
	else if (net_client_dropped(cl->net))
		return NULL;    /* the reason holds the server's word, if any */
	else
		return "the server said nothing of what it kept";
	return buf;
}

static int fail(struct rec_session *s, size_t *shown, struct cli *cl)
{
	char msg[1024], kept[512];
	snprintf(msg, sizeof(msg), "%s", err_msg());
	enum rec_fail kind = rec_session_failure(s);
	bool started = rec_session_started(s);
	rec_cleanup_failed(s);
	if (cl->net) {           /* the server cuts its file to the last round */
		net_client_abort(cl->net);
		if (net_client_dropped(cl->net))
			snprintf(msg, sizeof(msg), "%s: %s", cl->o.output,
				 net_client_dropped(cl->net));
	}
	print_notes(s, shown);
	const char *where = started ? kept_where(cl, kept, sizeof(kept)) : NULL;
	if (where)
		cmd_error(CMD, "%s (%s)", msg, where);
	else
		cmd_error(CMD, "%s", msg);
	if (started)
		print_summary(cl, s);
	return kind == REC_FAIL_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
}

static void said_drop(void *ctx, const char *why, bool at_end)
{
	const struct cli *cl = ctx;
	cmd_warn(CMD, "%s: %s; the recording %s %s", cl->o.output, why,
		 at_end ? "is kept whole in" : "goes on into", cl->fallback);
}

/* -o tcp://HOST:PORT: connected, the hello answered, before anything is
 * opened; -1 to go on, or the exit status. */
static int connect_server(struct cli *cl)
{
	char token[NET_TOKEN_MAX];
	int token_len = 0;
	if (strncmp(cl->o.output, "tcp://", 6)) {
		cmd_bad(CMD, "only with -o tcp://HOST:PORT", "%s",
			cl->token_file ? "--token-file" : "--fallback");
		return EXIT_USAGE;
	}
	if (cl->token_file &&
	    (token_len = net_read_token(cl->token_file, token, sizeof(token))) < 0) {
		cmd_error(CMD, "--token-file: %s", err_msg());
		return EXIT_USAGE;
	}
	struct net_client_opts no = {
		.addr = cl->o.output + 6, .token = token_len ? token : NULL,
		.token_len = (size_t)token_len, .fallback = cl->fallback,
		.timeout_ms = 10000, .on_drop = said_drop, .ctx = cl,
	};
	cl->net = net_client_start(&no);
	memset(token, 0, sizeof(token));
	if (!cl->net) {
		cmd_error(CMD, "%s: %s", cl->o.output, err_msg());
		return EXIT_RUNTIME;
	}
	if (net_client_dropped(cl->net))      /* refused or unreachable */
		cmd_warn(CMD, "%s: %s; recording into %s instead", cl->o.output,
			 net_client_dropped(cl->net), cl->fallback);
	cl->o.to_fd = true;
	cl->o.out_fd = net_client_fd(cl->net);
	return -1;
}

/* SIGINT/SIGTERM/SIGHUP are blocked except while the drain waits in ppoll
 * (stop_install), so a stop request cannot slip in between a check and a
 * wait.  Like perf, the command's own failure becomes ours, and a stop
 * request ends us by its signal once the file is complete and the
 * summary printed (common/stop.c). */
static int record(struct cli *cl)
{
	struct stop_handlers h;
	volatile sig_atomic_t *stop = stop_install(&h, true);
	signal(SIGPIPE, SIG_IGN);   /* a closed pipe is an error, not death */
	struct rec_session *s = rec_session_new(&cl->o, stop, &h.mask);
	size_t shown = 0;
	int rc = -1, die_sig = 0;
	if (rec_prepare(s) < 0 ||
	    (print_fallback(cl), print_notes(s, &shown), rec_start(s) < 0) ||
	    rec_run(s) < 0 || rec_finish(s) < 0) {
		rc = fail(s, &shown, cl);
	} else {
		print_notes(s, &shown);
		if (cl->net && net_client_finish(cl->net, &cl->stored) < 0) {
			cmd_error(CMD, "%s: %s", cl->o.output, err_msg());
			rc = EXIT_RUNTIME;
		}
		print_summary(cl, s);
	}
	stop_restore(&h);
	if (rc < 0) {
		struct child_end end = rec_session_child_end(s);
		rc = stop_exit_status(&end, &die_sig);
	}
	rec_session_free(s);
	rec_probes_remove(&cl->o.probes);   /* its descriptors closed */
	if (die_sig)
		cmd_die_of(die_sig);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct cli cl = {0};
	int rc = EXIT_USAGE;
	int parsed = parse_cli(&cl, argc, argv);
	if (parsed >= 0) {
		rc = parsed;
		goto out;
	}
	if (cl.o.off_cpu && add_off_cpu_events(&cl) < 0)
		goto out;
	if (cl.ndevs && !cl.o.block) {
		cmd_error(CMD, "-d: only with --block: add --block");
		goto out;
	}
	if (cl.o.block && add_block_events(&cl) < 0)
		goto out;
	if (cl.o.tool && rec_tool_add(&cl.o, cl.o.tool) < 0) {
		cmd_error(CMD, "%s", err_msg());
		goto out;
	}
	if (cl.o.events.n == 0 && add_default_event(&cl) < 0)
		goto out;
	/* The rings' size once the events say whether they copy stacks
	 * (--off-cpu's and the tools' chains are unwound while recording). */
	if (!cl.o.mmap_pages)
		cl.o.mmap_pages = default_pages(&cl.o);
	if ((cl.token_file || cl.fallback || !strncmp(cl.o.output, "tcp://", 6)) &&
	    (rc = connect_server(&cl)) >= 0)
		goto out;
	rc = record(&cl);
out:
	rec_probes_remove(&cl.o.probes);
	net_client_free(cl.net);
	free(cl.stored);
	pmc_list_free(&cl.o.events);
	free(cl.o.cpus);
	free(cl.o.pids);
	free(cl.o.tids);
	return rc;
}
