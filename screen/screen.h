/* screen.h - a full-screen terminal view in plain ANSI, as ember top draws
 * it (and an interactive report may): raw keys and the alternate screen,
 * entered once and restored on every way out (screen_close, exit, a fatal
 * signal, Ctrl-Z, whose SIGCONT takes the screen back); frames of rows cut
 * to the width, a status line at the bottom; keys read with a timeout and
 * decoded from their bytes.  What the rows say and what keys do is the
 * command's.  One screen is open at a time: the signal handlers reach the
 * terminal's saved settings through screen.c's one static state. */
#ifndef EMBER_SCREEN_H
#define EMBER_SCREEN_H

#include <stdio.h>

#include "common/common.h"

struct screen;

/* The full screen on the terminal in_fd (keys) and out (drawing) are:
 * NULL with err_set() when either is no terminal or one is open already.
 * ISIG stays on: Ctrl-C and the stop keys still send their signals. */
struct screen *screen_open(int in_fd, FILE *out);
/* The terminal as it was, job control as usual; NULL is a no-op. */
void screen_close(struct screen *s);

/* True once after the process was continued (fg) with the screen back:
 * the caller draws a whole frame again. */
bool screen_take_redraw(struct screen *s);

/* A frame: begun (the terminal's size read again, the cursor home),
 * rows added top down, ended (the rest of the screen cleared, the status
 * line, when not NULL, on the last row) and written at once. */
void screen_begin(struct screen *s);
void screen_size(const struct screen *s, int *rows, int *cols);
void screen_row(struct screen *s, const char *text, bool reverse);
void screen_end(struct screen *s, const char *status);

/* Keys other than a byte's own value (an escape sequence ESC [ X). */
enum {
	SCREEN_KEY_ESC = 27,
	SCREEN_KEY_UP = 0x100,
	SCREEN_KEY_DOWN,
	SCREEN_KEY_RIGHT,
	SCREEN_KEY_LEFT,
	SCREEN_KEY_SEQ,            /* another ESC [ X */
};
/* Keys typed, decoded: up to cap into keys, waiting at most timeout_ms
 * (0: not at all, -1: until one comes) for the first; the count, 0 when
 * none came, -1 with err_set() when the terminal failed. */
int screen_keys(struct screen *s, int timeout_ms, int *keys, size_t cap);

/* ---- the pieces, without a terminal (and for tests) ---- */

/* The key at the start of buf (n > 0 bytes) into *key: how many bytes it
 * took.  An arrow is ESC [ A..D in one read; a lone ESC is SCREEN_KEY_ESC. */
size_t screen_key_decode(const char *buf, size_t n, int *key);
/* One screen line: text cut to cols bytes, cleared to the line's end,
 * in reverse video when asked. */
void screen_fit(struct strbuf *sb, const char *text, int cols, bool reverse);

/* Columns: tab-separated fields padded to the widest field of the rows
 * measured (each counted up to SCREEN_COLUMN_WIDTH). */
#define SCREEN_COLUMNS 8
#define SCREEN_COLUMN_WIDTH 48
struct screen_columns {
	int width[SCREEN_COLUMNS];
};
void screen_columns_measure(struct screen_columns *c, const char *text);
/* text's fields, each but the last padded and followed by two spaces;
 * with c NULL, not padded. */
void screen_columns_put(struct strbuf *sb, const struct screen_columns *c, const char *text);

#endif
