/* cmd-serve.c - `ember serve`: collects recordings that `ember record -o
 * tcp://HOST:PORT` streams, one directory per recording; logs each client
 * on standard error. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "common/child.h"
#include "net/net.h"

#define CMD "serve"
/* Descriptors besides the server's own: the standard streams, the one a
 * full pending table takes before it lets its oldest go, the C library's. */
#define FD_SPARE 16

struct cli {
	struct net_server_opts o;
	const char *listen;
	const char *token_file;
	char token[NET_TOKEN_MAX];
};

static const char synopsis[] =
	"usage: ember serve [--listen ADDR:PORT] [-o DIR] [--token-file FILE]\n"
	"\n"
	"Collects the recordings that 'ember record -o tcp://HOST:PORT' streams\n"
	"(blktrace -l): each client's recording is written as it arrives to\n"
	"DIR/HOST-DATE-TIME/ember.data (0600, in a 0700 folder), a perf stream\n"
	"that ember and perf read.  A client that disconnects or dies before\n"
	"the end leaves its file cut back to its last complete round.  Several\n"
	"clients at once; each is logged on standard error.  Until Ctrl-C,\n"
	"--duration or --stop-after.\n"
	"\n";


/* Each prints its own message (cmd_bad): -2. */
static int parse_seconds(const char *opt, const char *arg, double *out)
{
	if (parse_double(arg, out) >= 0 && *out > 0 && *out <= 1e6)
		return 0;
	cmd_bad(CMD, "give a positive number of seconds", "%s %s", opt, arg);
	return -2;
}

static int parse_count(const char *opt, const char *arg, int max, int *out)
{
	if (parse_int(arg, out) >= 0 && *out >= 1 && *out <= max)
		return 0;
	cmd_bad(CMD, "give a count from 1", "%s %s", opt, arg);
	return -2;
}

#define A(f) offsetof(struct cli, f)

static int set_max_conns(void *field, const char *arg)
{
	return parse_count("--max-conns", arg, 4096, field);
}

static int set_timeout(void *field, const char *arg)
{
	double secs;
	if (parse_seconds("--timeout", arg, &secs) < 0)
		return -2;
	*(int *)field = (int)(secs * 1000);
	return 0;
}

static int set_duration(void *field, const char *arg)
{
	return parse_seconds("--duration", arg, field);
}

static int set_stop_after(void *field, const char *arg)
{
	int n;
	if (parse_count("--stop-after", arg, 1 << 30, &n) < 0)
		return -2;
	*(u64 *)field = (u64)n;
	return 0;
}

static const struct opt options[] = {
	OPT_STRING(0, "listen", A(listen), "ADDR:PORT",
	  "where to listen (default 127.0.0.1:8462; other\n"
	  "addresses only when given, e.g. 0.0.0.0:8462;\n"
	  "port 0 picks a free one, printed)"),
	OPT_STRING('o', "output-dir", A(o.dir), "DIR",
	  "write recordings under DIR (default .)"),
	OPT_STRING(0, "token-file", A(token_file), "FILE",
	  "require the shared token in FILE from every\n"
	  "client (record --token-file); a client without it\n"
	  "is refused, logged, and nothing is written"),
	OPT_CALLBACK(0, "max-conns", OPT_ARG, A(o.max_conns), "N",
	  "clients at once (default 32; fewer when the\n"
	  "descriptor limit, ulimit -n, is too low, said in\n"
	  "one line); more are refused.  A connection takes\n"
	  "a client's place only once its hello and token\n"
	  "are good: until then, for at most 1 s, it is one\n"
	  "of 64 pending (8 from one address)", set_max_conns),
	OPT_CALLBACK(0, "timeout", OPT_ARG, A(o.idle_ms), "SECS",
	  "drop a client silent this long (default 60; its\n"
	  "file is kept to its last round)", set_timeout),
	OPT_CALLBACK(0, "duration", OPT_ARG, A(o.duration), "SECS", "stop after SECS seconds",
		     set_duration),
	OPT_CALLBACK(0, "stop-after", OPT_ARG, A(o.stop_after), "N",
	  "stop once N clients have come and gone (stored,\n"
	  "cut or refused)", set_stop_after),
	OPT_END,
};

const struct opt_cmd serve_cmd = {
	.name = CMD,
	.summary = "collect recordings streamed over TCP (record -o tcp://)",
	.synopsis = synopsis,
	.opts = options,
	.column = 25,
};

static void log_line(void *ctx, const char *line)
{
	fprintf(stderr, "ember serve: %s\n", line);
}

/* --max-conns within the descriptor limit, which would otherwise make
 * accept fail over and over: the soft limit raised as far as needed and
 * the hard one allows; when that is not enough, fewer clients (and
 * pending connections), said in one line.  -1 when not one fits. */
static int fit_fd_limit(struct net_server_opts *o)
{
	struct rlimit rl;
	rlim_t need = NET_SERVER_FDS((rlim_t)o->max_conns, NET_PENDING_MAX) + FD_SPARE;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = MIN(need, rl.rlim_max);
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= need)
		return 0;
	long avail = rl.rlim_cur > FD_SPARE + 1 ? (long)(rl.rlim_cur - FD_SPARE - 1) : 0;
	int pending = (int)MIN((long)NET_PENDING_MAX, avail / 4);
	int fit = (int)((avail - pending) / 2);
	if (pending < 1 || fit < 1) {
		cmd_error(CMD, "the descriptor limit (ulimit -n) is %llu: no room for a "
			  "client; raise it", (unsigned long long)rl.rlim_cur);
		return -1;
	}
	cmd_warn(CMD, "--max-conns %d capped to %d: the descriptor limit (ulimit -n) "
		 "is %llu, and a client takes 2", o->max_conns, fit,
		 (unsigned long long)rl.rlim_cur);
	o->max_conns = fit;
	o->pending_max = pending;
	o->pending_per_addr = MIN(NET_PENDING_PER_ADDR, pending);
	return 0;
}

/* -1 to go on, or the exit status. */
static int parse_cli(struct cli *cl, int argc, char **argv)
{
	cl->o.dir = ".";
	cl->o.max_conns = 32;
	cl->o.idle_ms = 60000;
	cl->o.hello_ms = NET_HELLO_MS;
	int rc = opt_parse(&serve_cmd, argc, argv, cl);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cmd_extra_argument(CMD, CMD, argv[optind]);
	cl->o.hello_ms = MIN(cl->o.hello_ms, cl->o.idle_ms);
	if (net_parse_addr(cl->listen ? cl->listen : "127.0.0.1", NET_DEFAULT_PORT,
			   &cl->o.listen) < 0) {
		cmd_error(CMD, "--listen: %s", err_msg());
		return EXIT_USAGE;
	}
	if (cl->token_file) {
		int n = net_read_token(cl->token_file, cl->token, sizeof(cl->token));
		if (n < 0) {
			cmd_error(CMD, "--token-file: %s", err_msg());
			return EXIT_USAGE;
		}
		cl->o.token = cl->token;
		cl->o.token_len = (size_t)n;
	}
	return fit_fd_limit(&cl->o) < 0 ? EXIT_RUNTIME : -1;
}

int cmd_serve(int argc, char **argv)
{
	struct cli cl = {0};
	int rc = parse_cli(&cl, argc, argv);
	if (rc >= 0)
		return rc;
	struct stop_handlers h;
	cl.o.stop = stop_install(&h, true);
	cl.o.poll_mask = &h.mask;
	cl.o.log = log_line;
	signal(SIGPIPE, SIG_IGN);
	struct net_server *s = net_server_open(&cl.o);
	if (!s) {
		stop_restore(&h);
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	char addr[80];
	fprintf(stderr, "ember serve: listening on %s, writing under %s%s\n",
		net_addr_str(&cl.o.listen, addr, sizeof(addr)), cl.o.dir,
		cl.o.token ? ", token required" : "");
	struct net_server_stats st = {0};
	rc = net_server_run(s, &st);
	net_server_close(s);
	stop_restore(&h);
	memset(cl.token, 0, sizeof(cl.token));
	if (rc < 0) {
		cmd_error(CMD, "%s", err_msg());
		return EXIT_RUNTIME;
	}
	fprintf(stderr, "ember serve: %llu clients: %llu stored, %llu cut short, "
		"%llu refused, %llu failed\n", (unsigned long long)st.clients,
		(unsigned long long)st.stored, (unsigned long long)st.cut,
		(unsigned long long)st.refused, (unsigned long long)st.failed);
	/* Stopped by Ctrl-C or SIGTERM: ended by it, as every command is. */
	if (stop_signal())
		cmd_die_of(stop_signal());
	return EXIT_OK;
}
