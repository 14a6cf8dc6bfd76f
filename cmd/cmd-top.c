/* cmd-top.c - `ember top`: the hottest symbols while they happen, as perf
 * top shows them: a full screen (plain ANSI) refreshed every -d seconds
 * with keys to sort, filter and expand callers, or report's table per
 * refresh with --stdio.  The terminal is restored on every way out. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "live/live.h"
#include "views/hist/hist.h"
#include "views/top/top.h"

#define CMD "top"
#define TOP_ROWS_MAX 512
#define TOP_CALLERS_SHOWN 10

struct top_args {
	struct rp_opts rp;
	struct live_view lv;
	struct hist_opts keys;
	const char *sort;
	double delay;              /* -d */
	bool zero, stdio, graph, hide_kernel, hide_user;
};

#define A(f) offsetof(struct top_args, f)

/* -s KEYS: kept as given (the screen's prompt shows them) and parsed. */
static int set_sort(void *field, const char *arg)
{
	struct top_args *a = field;
	a->sort = arg;
	return hist_parse_sort(&a->keys, arg);
}

static const struct opt options[] = {
	OPT_DOUBLE('d', "delay", A(delay), "SECS", "seconds between refreshes (default 2)", 0,
		   "bad -d '%s': give the seconds between refreshes, e.g. -d 2"),
	OPT_BOOL('z', "zero", A(zero), "zero the counts at each refresh (default: decay by 1/8)"),
	OPT_CALLBACK('s', "sort", OPT_ARG, 0, "KEYS", "comm,pid,dso,sym,cpu (default dso,sym); pid: the\n"
	  "thread, TID:COMM (its name at the sample; tid: the same)", set_sort),
	OPT_BOOL('g', NULL, A(graph),
	  "record call chains (as record -g): children (inclusive)\n"
	  "weights, and callers to expand"),
	OPT_BOOL('K', "hide-kernel", A(hide_kernel), "hide kernel symbols"),
	OPT_BOOL('U', "hide-user", A(hide_user), "hide user symbols"),
	OPT_BOOL(0, "stdio", A(stdio),
	  "print each refresh as text: report's header lines and\n"
	  "table of that refresh's samples (as with -z), for scripts"),
	LIVE_COUNT_OPT(A(lv.opts), "exit after N refreshes"),
	OPT_INCLUDE_AT(live_target_opts, A(lv.opts)),
	OPT_INCLUDE_AT(live_pid_opts, A(lv.opts)),
	OPT_INCLUDE_AT(rp_sample_opts, A(rp)),
	OPT_INCLUDE_AT(rp_symbol_opts, A(rp)),
	OPT_END,
};

const struct opt_cmd top_cmd = {
	.name = CMD,
	.summary = "the hottest symbols, live, like perf top",
	.synopsis =
	"usage: ember top [-a | -C CPUS | -p PIDS | -t TIDS] [-d SECS] [options]\n"
	"\n"
	"Samples the system (or the targets) and shows the hottest symbols, refreshed\n"
	"every -d seconds; between refreshes the counts decay by 1/8 (-z zeroes\n"
	"them).  Keys: q quits; z toggles zeroing; s asks for sort keys; / asks for a\n"
	"regular expression that rows must match (empty: all); the arrows choose a\n"
	"row and Enter shows or hides its callers (with -g); K and U hide or show\n"
	"kernel and user symbols.  The top line says what the live path lost.\n"
	"\n",
	.opts = options,
	.column = 25,
	.notes = "Ctrl-C, SIGTERM and q restore the terminal and exit 0.\n",
};

/* ---- the terminal ----------------------------------------------------------
 * The saved settings are what a signal handler restores: the one piece of
 * state a handler must reach. */
static struct termios saved_tio, raw_tio;
static volatile sig_atomic_t tty_raw;
static volatile sig_atomic_t tty_screen;   /* the full screen is on (stopped or not) */
static volatile sig_atomic_t tty_redraw;   /* continued: the screen wants drawing */

static const char tty_enter_seq[] = "\033[?1049h\033[?25l";
static const char tty_leave_seq[] = "\033[?25h\033[?1049l";

static void tty_leave(void)
{
	if (!tty_raw)
		return;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	(void)!write(STDOUT_FILENO, tty_leave_seq, sizeof(tty_leave_seq) - 1);
	tty_raw = 0;
}

/* Raw keys and the alternate screen (async-signal-safe: SIGCONT's too);
 * when: TCSAFLUSH at the start, TCSANOW after fg (keys typed since stay). */
static void tty_raw_on(int when)
{
	tcsetattr(STDIN_FILENO, when, &raw_tio);
	(void)!write(STDOUT_FILENO, tty_enter_seq, sizeof(tty_enter_seq) - 1);
	tty_raw = 1;
}

/* Any other fatal signal: the terminal first, then the signal's own end. */
static void on_fatal_signal(int sig)
{
	tty_leave();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Ctrl-Z: the shell gets its terminal back, then we stop: the signal
 * sent again, its default action this time, stops the process once this
 * handler returns; SIGCONT takes the screen again. */
static void on_stop_key(int sig)
{
	int saved = errno;
	tty_leave();
	signal(sig, SIG_DFL);
	kill(getpid(), sig);
	errno = saved;
}

/* Continued (fg, or kill -CONT): the screen again when it is ours (not
 * in the background, where the terminal would stop us again), and a
 * redraw at the next round. */
static void on_continue(int sig)
{
	(void)sig;
	int saved = errno;
	signal(SIGTSTP, on_stop_key);
	if (tty_screen && !tty_raw && tcgetpgrp(STDIN_FILENO) == getpgrp())
		tty_raw_on(TCSANOW);
	tty_redraw = 1;
	errno = saved;
}

static int tty_enter(void)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		err_set("the full screen needs a terminal: use --stdio for text");
		return -1;
	}
	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0) {
		err_set_errno("the terminal");
		return -1;
	}
	raw_tio = saved_tio;
	raw_tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO);   /* ISIG stays: Ctrl-C stops */
	raw_tio.c_cc[VMIN] = 0;
	raw_tio.c_cc[VTIME] = 0;
	static const int fatal[] = { SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE };
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		signal(fatal[i], on_fatal_signal);
	atexit(tty_leave);
	fflush(stdout);
	tty_screen = 1;
	tty_raw_on(TCSAFLUSH);
	signal(SIGTSTP, on_stop_key);
	signal(SIGCONT, on_continue);
	return 0;
}

/* The full screen's end: the terminal as it was, job control as usual. */
static void tty_end(void)
{
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCONT, SIG_DFL);
	tty_screen = 0;
	tty_leave();
}

static void tty_size(int *rows, int *cols)
{
	struct winsize ws;
	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* ---- the screen ------------------------------------------------------------ */

struct top_ui {
	struct top_args *a;
	struct top_table *t;
	struct replay *rp;
	struct live *live;
	struct top_filter filter;
	regex_t re;
	char re_text[128];
	char sort_text[128];
	size_t sel;                /* selected line */
	char *expanded;            /* the text of the row whose callers show */
	char prompt;               /* 's' or '/' while asking, else 0 */
	char input[128];
	size_t ninput;
	char message[160];         /* the last key's complaint */
	u64 refreshes, last_samples;
	struct strbuf screen;
};

/* One screen line, cut to the width, cleared to its end. */
static void put_line(struct strbuf *sb, const char *text, int cols, bool reverse)
{
	if (reverse)
		sb_puts(sb, "\033[7m");
	size_t n = strlen(text);
	sb_add(sb, text, MIN(n, (size_t)cols));
	sb_puts(sb, "\033[K");
	if (reverse)
		sb_puts(sb, "\033[m");
	sb_puts(sb, "\r\n");
}

static void draw_header(struct top_ui *u, int cols)
{
	char line[512];
	const struct rp_summary *sum = rp_summary(u->rp);
	snprintf(line, sizeof(line),
		 "ember top: %llu samples in the last refresh, %llu lost in all, %llu KB not "
		 "read yet%s%s%s", (unsigned long long)u->last_samples,
		 (unsigned long long)sum->lost,
		 (unsigned long long)(live_backlog(u->live) / 1024),
		 u->a->zero ? ", zeroing" : ", decaying",
		 u->filter.hide_kernel ? ", kernel hidden" : "",
		 u->filter.hide_user ? ", user hidden" : "");
	put_line(&u->screen, line, cols, false);
	snprintf(line, sizeof(line), "sort %s%s%s%s  |  q quit  z zero  s sort  / filter  "
		 "arrows+Enter callers  K U", u->sort_text, u->re_text[0] ? "  filter /" : "",
		 u->re_text, u->re_text[0] ? "/" : "");
	put_line(&u->screen, line, cols, false);
	put_line(&u->screen, u->message, cols, false);
	put_line(&u->screen, u->a->graph ? "  Children      Self  Row" : "  Overhead  Row", cols,
		 false);
}

/* The rows' key columns padded to the widest shown (tabs in the text). */
#define COLUMN_MAX 48
struct columns {
	int width[HK_MAX];
};

static void measure(struct columns *c, const char *text)
{
	for (int k = 0; *text && k < HK_MAX; k++) {
		int n = (int)strcspn(text, "\t");
		c->width[k] = MAX(c->width[k], MIN(n, COLUMN_MAX));
		text += n + (text[n] == '\t');
	}
}

static void put_columns(struct strbuf *sb, const struct columns *c, const char *text)
{
	for (int k = 0; *text && k < HK_MAX; k++) {
		int n = (int)strcspn(text, "\t");
		bool more = text[n] == '\t';
		if (more) {
			int w = c ? c->width[k] : 0;
			sb_printf(sb, "%-*.*s  ", w, n, text);
		} else {
			sb_add(sb, text, (size_t)n);
		}
		text += n + more;
	}
}

static double pct(double w, double all)
{
	return all > 0 ? 100.0 * w / all : 0;
}

static int draw_callers(struct top_ui *u, const struct top_line *l, int room, int cols)
{
	const char *text[TOP_CALLERS_SHOWN];
	double w[TOP_CALLERS_SHOWN];
	size_t n = top_callers(u->t, l->row, text, w, TOP_CALLERS_SHOWN);
	double base = u->a->graph ? l->total : l->self;
	int used = 0;
	if (!n && room > 0) {
		put_line(&u->screen, "              (no callers: record them with -g)", cols, false);
		return 1;
	}
	struct strbuf cl = { 0 };
	for (size_t i = 0; i < n && used < room; i++, used++) {
		sb_reset(&cl);
		sb_printf(&cl, "              %6.2f%%  called from ", pct(w[i], base));
		put_columns(&cl, NULL, text[i]);
		put_line(&u->screen, cl.s, cols, false);
	}
	sb_free(&cl);
	return used;
}

static void draw(struct top_ui *u)
{
	int rows, cols;
	tty_size(&rows, &cols);
	struct top_line lines[TOP_ROWS_MAX];
	double all;
	size_t n = top_view(u->t, &u->filter, lines, MIN((size_t)rows, TOP_ROWS_MAX), &all);
	if (n && u->sel >= n)
		u->sel = n - 1;
	sb_reset(&u->screen);
	sb_puts(&u->screen, "\033[H");
	draw_header(u, cols);
	int left = rows - 5;
	char line[256];
	struct columns c = { { 0 } };
	for (size_t i = 0; i < n; i++)
		measure(&c, lines[i].text);
	struct strbuf row = { 0 };
	for (size_t i = 0; i < n && left > 0; i++, left--) {
		const struct top_line *l = &lines[i];
		sb_reset(&row);
		if (u->a->graph)
			sb_printf(&row, "  %7.2f%%  %7.2f%%  ", pct(l->total, all), pct(l->self, all));
		else
			sb_printf(&row, "  %7.2f%%  ", pct(l->self, all));
		put_columns(&row, &c, l->text);
		put_line(&u->screen, row.s, cols, i == u->sel);
		if (u->expanded && !strcmp(u->expanded, l->text))
			left -= draw_callers(u, l, left - 1, cols);
	}
	sb_free(&row);
	sb_puts(&u->screen, "\033[J");
	if (u->prompt) {
		snprintf(line, sizeof(line), "\033[%d;1H%s %.*s\033[K", rows,
			 u->prompt == 's' ? "sort keys:" : "filter (regex):", (int)u->ninput, u->input);
		sb_puts(&u->screen, line);
	}
	fwrite(u->screen.s, 1, u->screen.len, stdout);
	fflush(stdout);
}

/* ---- keys ------------------------------------------------------------------ */

static void apply_sort(struct top_ui *u, const char *text)
{
	struct hist_opts keys = { 0 };
	if (hist_parse_sort(&keys, text) < 0 || top_set_keys(u->t, &keys) < 0) {
		snprintf(u->message, sizeof(u->message), "%s", err_msg());
		return;
	}
	snprintf(u->sort_text, sizeof(u->sort_text), "%s", text);
	u->message[0] = '\0';
}

static void apply_filter(struct top_ui *u, const char *text)
{
	if (u->filter.re) {
		regfree(&u->re);
		u->filter.re = NULL;
	}
	u->re_text[0] = '\0';
	u->message[0] = '\0';
	if (!*text)
		return;
	if (regcomp(&u->re, text, REG_EXTENDED | REG_NOSUB) != 0) {
		snprintf(u->message, sizeof(u->message), "not a regular expression: %s", text);
		return;
	}
	u->filter.re = &u->re;
	snprintf(u->re_text, sizeof(u->re_text), "%s", text);
	u->sel = 0;
}

static void prompt_key(struct top_ui *u, char c)
{
	if (c == '\r' || c == '\n') {
		u->input[u->ninput] = '\0';
		if (u->prompt == 's')
			apply_sort(u, u->input);
		else
			apply_filter(u, u->input);
		u->prompt = 0;
	} else if (c == 27) {
		u->prompt = 0;
	} else if ((c == 127 || c == 8) && u->ninput) {
		u->ninput--;
	} else if (c >= 32 && c < 127 && u->ninput < sizeof(u->input) - 1) {
		u->input[u->ninput++] = c;
	}
}

/* Enter: the selected row's callers shown, or hidden again. */
static void toggle_expand(struct top_ui *u)
{
	struct top_line lines[TOP_ROWS_MAX];
	double all;
	size_t n = top_view(u->t, &u->filter, lines, TOP_ROWS_MAX, &all);
	if (u->sel >= n)
		return;
	bool same = u->expanded && !strcmp(u->expanded, lines[u->sel].text);
	free(u->expanded);
	u->expanded = same ? NULL : xstrdup(lines[u->sel].text);
}

static void start_prompt(struct top_ui *u, char kind)
{
	u->prompt = kind;
	u->ninput = 0;
}

/* One key (arrows come as ESC [ A / B); false for q. */
static bool key(struct top_ui *u, const char *k, size_t n)
{
	if (u->prompt) {
		for (size_t i = 0; i < n; i++)
			prompt_key(u, k[i]);
		return true;
	}
	if (n >= 3 && k[0] == 27 && k[1] == '[') {
		if (k[2] == 'A' && u->sel)
			u->sel--;
		else if (k[2] == 'B')
			u->sel++;
		return true;
	}
	switch (k[0]) {
	case 'q': return false;
	case 'z': u->a->zero = !u->a->zero; break;
	case 's': start_prompt(u, 's'); break;
	case '/': start_prompt(u, '/'); break;
	case 'K': u->filter.hide_kernel = !u->filter.hide_kernel; break;
	case 'U': u->filter.hide_user = !u->filter.hide_user; break;
	case '\r': case '\n': toggle_expand(u); break;
	default: break;
	}
	return true;
}

/* Keys waiting on the terminal, read without blocking. */
static void read_keys(struct top_ui *u)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[64];
	bool changed = false;
	while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			/* An arrow's three bytes go together. */
			size_t len = buf[i] == 27 && i + 2 < n && buf[i + 1] == '[' ? 3 : 1;
			if (u->prompt)
				len = 1;
			if (!key(u, buf + i, len)) {
				live_stop(u->live);
				return;
			}
			i += (ssize_t)len - 1;
			changed = true;
		}
	}
	if (changed)
		draw(u);
}

/* ---- the sinks --------------------------------------------------------------- */

static int ui_sample(void *ctx, const struct rp_sample *s)
{
	struct top_ui *u = ctx;
	top_add(u->t, s);
	return 0;
}

static int ui_tick(void *ctx, u64 end, bool last)
{
	struct top_ui *u = ctx;
	if (last || live_stopping(u->live))
		return 0;
	u->last_samples = top_refresh_samples(u->t);
	if (!u->refreshes)
		u->message[0] = '\0';   /* no longer gathering the first */
	draw(u);
	top_decay(u->t, u->a->zero);
	if (++u->refreshes >= u->a->lv.opts.count && u->a->lv.opts.count)
		live_stop(u->live);
	return 0;
}

static int ui_round(void *ctx)
{
	struct top_ui *u = ctx;
	if (tty_redraw && tty_raw) {
		tty_redraw = 0;
		draw(u);             /* back from Ctrl-Z */
	}
	if (!live_stopping(u->live))
		read_keys(u);
	return 0;
}

static int run_screen(struct top_args *a, struct replay *rp, struct live *live)
{
	struct top_ui u = { .a = a, .rp = rp, .live = live };
	u.t = top_new(&a->keys, a->graph);
	u.filter.hide_kernel = a->hide_kernel;
	u.filter.hide_user = a->hide_user;
	snprintf(u.sort_text, sizeof(u.sort_text), "%s", a->sort);
	snprintf(u.message, sizeof(u.message), "gathering the first %g s...", a->delay);
	int rc = top_set_keys(u.t, &a->keys);
	if (rc == 0 && (rc = tty_enter()) == 0) {
		draw(&u);
		struct rp_sink sink = { .ctx = &u, .sample = ui_sample, .tick = ui_tick,
					.round = ui_round };
		rc = rp_run(rp, &sink);
		tty_end();
	}
	if (u.filter.re)
		regfree(&u.re);
	free(u.expanded);
	sb_free(&u.screen);
	top_free(u.t);
	return rc;
}

/* --stdio: report's table per refresh, then the live counts. */
static int run_stdio(struct top_args *a, struct replay *rp, struct live *live)
{
	struct live_tables run = { .live = live, .rp = rp, .count = a->lv.opts.count };
	struct hist_opts h = a->keys;
	h.children = a->graph;
	h.graph = HG_NONE;
	struct hist_interval *iv = hist_interval_new(&h, rp, a->rp.interval_ns, stdout,
						     live_after_table, &run);
	struct rp_sink sink = hist_interval_sink(iv);
	int rc = rp_run(rp, &sink);
	hist_interval_free(iv);
	return rc;
}

/* ---- the command ------------------------------------------------------------- */

int cmd_top(int argc, char **argv)
{
	struct top_args a = { .delay = 2, .sort = "dso,sym",
			      .lv = { .cmd = CMD, .help = CMD, .all_by_default = true, .rp = &a.rp } };
	rp_opts_init(&a.rp);
	hist_parse_sort(&a.keys, a.sort);
	int rc = live_view_parse(&a.lv, opt_parse(&top_cmd, argc, argv, &a), argc, argv);
	if (rc < 0 && !a.stdio && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cmd_error(CMD, "the full screen needs a terminal: add --stdio for text");
		rc = EXIT_USAGE;
	}
	a.lv.opts.callchains = a.graph;
	a.rp.interval_ns = (u64)(a.delay * 1e9 + 0.5);
	if (rc < 0)
		rc = live_view_start(&a.lv, REC_LIVE_SAMPLES);   /* -a by default: always live */
	if (rc >= 0)
		goto out;
	struct live *live = a.lv.live;
	struct replay *rp = rp_open(&a.rp);
	rc = EXIT_RUNTIME;
	if (rp) {
		rp_set_callchains(rp, a.graph && rp_has_callchains(rp));
		/* The rows keep texts, --stdio's tables last a refresh. */
		rp_set_release_files(rp, true);
		int run = a.stdio ? run_stdio(&a, rp, live) : run_screen(&a, rp, live);
		rc = run < 0 ? EXIT_RUNTIME : EXIT_OK;
		if (run < 0)
			cmd_error(CMD, "%s", err_msg());
		rp_close(rp);
	} else {
		cmd_error(CMD, "%s", err_msg());
	}
out:
	rc = live_view_end(&a.lv, rc);
	rp_opts_free(&a.rp);
	return rc;
}
