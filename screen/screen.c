/* screen.c - the full-screen terminal view (screen.h): raw mode and the
 * alternate screen entered and always left, the signals that must leave
 * it (fatal ones, Ctrl-Z) or take it back (SIGCONT), frames drawn in one
 * write, keys read and decoded. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "screen/screen.h"

struct screen {
	FILE *out;
	int in_fd;
	int rows, cols;            /* read at each frame's start */
	struct strbuf frame;
};

/* ---- the terminal ----------------------------------------------------------
 * What a signal handler restores or takes back: the one piece of state a
 * handler must reach, hence static, and one screen at a time. */
static struct {
	struct termios saved, raw;
	int in_fd, out_fd;
	volatile sig_atomic_t raw_on;   /* raw keys and the alternate screen are on */
	volatile sig_atomic_t open;     /* a screen is open (stopped or not) */
	volatile sig_atomic_t redraw;   /* continued: the screen wants drawing */
	bool atexit_set;
} tty;

static const char enter_seq[] = "\033[?1049h\033[?25l";
static const char leave_seq[] = "\033[?25h\033[?1049l";

/* Async-signal-safe, as is raw_on below. */
static void leave(void)
{
	if (!tty.raw_on)
		return;
	tcsetattr(tty.in_fd, TCSAFLUSH, &tty.saved);
	(void)!write(tty.out_fd, leave_seq, sizeof(leave_seq) - 1);
	tty.raw_on = 0;
}

/* when: TCSAFLUSH at the start, TCSANOW after fg (keys typed since stay). */
static void raw_on(int when)
{
	tcsetattr(tty.in_fd, when, &tty.raw);
	(void)!write(tty.out_fd, enter_seq, sizeof(enter_seq) - 1);
	tty.raw_on = 1;
}

/* Any other fatal signal: the terminal first, then the signal's own end. */
static void on_fatal_signal(int sig)
{
	leave();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Ctrl-Z: the shell gets its terminal back, then we stop: the signal
 * sent again, its default action this time, stops the process once this
 * handler returns; SIGCONT takes the screen again. */
static void on_stop_key(int sig)
{
	int saved = errno;
	leave();
	signal(sig, SIG_DFL);
	kill(getpid(), sig);
	errno = saved;
}

/* Continued (fg, or kill -CONT): the screen again when it is ours (not
 * in the background, where the terminal would stop us again), and a
 * redraw at the next look. */
static void on_continue(int sig)
{
	(void)sig;
	int saved = errno;
	signal(SIGTSTP, on_stop_key);
	if (tty.open && !tty.raw_on && tcgetpgrp(tty.in_fd) == getpgrp())
		raw_on(TCSANOW);
	tty.redraw = 1;
	errno = saved;
}

static int take_terminal(int in_fd, int out_fd)
{
	if (tty.open) {
		err_set("the full screen is open already");
		return -1;
	}
	if (!isatty(in_fd) || !isatty(out_fd)) {
		err_set("the full screen needs a terminal: use --stdio for text");
		return -1;
	}
	if (tcgetattr(in_fd, &tty.saved) < 0) {
		err_set_errno("the terminal");
		return -1;
	}
	tty.in_fd = in_fd;
	tty.out_fd = out_fd;
	tty.raw = tty.saved;
	tty.raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);   /* ISIG stays: Ctrl-C stops */
	tty.raw.c_cc[VMIN] = 0;
	tty.raw.c_cc[VTIME] = 0;
	return 0;
}

struct screen *screen_open(int in_fd, FILE *out)
{
	if (take_terminal(in_fd, fileno(out)) < 0)
		return NULL;
	static const int fatal[] = { SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE };
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		signal(fatal[i], on_fatal_signal);
	if (!tty.atexit_set)
		atexit(leave);
	tty.atexit_set = true;
	fflush(out);
	tty.open = 1;
	tty.redraw = 0;
	raw_on(TCSAFLUSH);
	signal(SIGTSTP, on_stop_key);
	signal(SIGCONT, on_continue);
	struct screen *s = xcalloc(1, sizeof(*s));
	s->out = out;
	s->in_fd = in_fd;
	return s;
}

void screen_close(struct screen *s)
{
	if (!s)
		return;
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCONT, SIG_DFL);
	tty.open = 0;
	leave();
	sb_free(&s->frame);
	free(s);
}

bool screen_take_redraw(struct screen *s)
{
	(void)s;
	if (!tty.redraw || !tty.raw_on)
		return false;
	tty.redraw = 0;
	return true;
}

/* ---- frames ------------------------------------------------------------------ */

void screen_fit(struct strbuf *sb, const char *text, int cols, bool reverse)
{
	if (reverse)
		sb_puts(sb, "\033[7m");
	size_t n = strlen(text);
	sb_add(sb, text, MIN(n, (size_t)MAX(cols, 0)));
	sb_puts(sb, "\033[K");
	if (reverse)
		sb_puts(sb, "\033[m");
	sb_puts(sb, "\r\n");
}

void screen_begin(struct screen *s)
{
	struct winsize ws;
	s->rows = 24;
	s->cols = 80;
	if (ioctl(fileno(s->out), TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		s->rows = ws.ws_row;
		s->cols = ws.ws_col;
	}
	sb_reset(&s->frame);
	sb_puts(&s->frame, "\033[H");
}

void screen_size(const struct screen *s, int *rows, int *cols)
{
	*rows = s->rows;
	*cols = s->cols;
}

void screen_row(struct screen *s, const char *text, bool reverse)
{
	screen_fit(&s->frame, text, s->cols, reverse);
}

void screen_end(struct screen *s, const char *status)
{
	sb_puts(&s->frame, "\033[J");
	if (status)
		sb_printf(&s->frame, "\033[%d;1H%s\033[K", s->rows, status);
	fwrite(s->frame.s, 1, s->frame.len, s->out);
	fflush(s->out);
}

/* ---- keys -------------------------------------------------------------------- */

size_t screen_key_decode(const char *buf, size_t n, int *key)
{
	if (n >= 3 && buf[0] == 27 && buf[1] == '[') {
		static const char arrows[] = "ABCD";
		const char *a = buf[2] ? strchr(arrows, buf[2]) : NULL;
		*key = a ? SCREEN_KEY_UP + (int)(a - arrows) : SCREEN_KEY_SEQ;
		return 3;
	}
	*key = (unsigned char)buf[0];
	return 1;
}

int screen_keys(struct screen *s, int timeout_ms, int *keys, size_t cap)
{
	struct pollfd p = { .fd = s->in_fd, .events = POLLIN };
	char buf[64];
	int r = poll(&p, 1, timeout_ms);
	if (r < 0 && errno != EINTR) {
		err_set_errno("the terminal");
		return -1;
	}
	if (r != 1 || !(p.revents & POLLIN))
		return 0;
	ssize_t n = read(s->in_fd, buf, MIN(sizeof(buf), cap));
	if (n < 0 && errno != EINTR && errno != EAGAIN) {
		err_set_errno("the terminal");
		return -1;
	}
	size_t got = 0;
	for (size_t i = 0; n > 0 && i < (size_t)n; got++)
		i += screen_key_decode(buf + i, (size_t)n - i, &keys[got]);
	return (int)got;
}

/* ---- columns ----------------------------------------------------------------- */

void screen_columns_measure(struct screen_columns *c, const char *text)
{
	for (int k = 0; *text && k < SCREEN_COLUMNS; k++) {
		int n = (int)strcspn(text, "\t");
		c->width[k] = MAX(c->width[k], MIN(n, SCREEN_COLUMN_WIDTH));
		text += n + (text[n] == '\t');
	}
}

void screen_columns_put(struct strbuf *sb, const struct screen_columns *c, const char *text)
{
	for (int k = 0; *text && k < SCREEN_COLUMNS; k++) {
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
