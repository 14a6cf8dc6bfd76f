/* test-screen.c - screen/'s pieces that need no terminal: rows cut to a
 * width, keys decoded from their bytes, tab-separated columns padded; and
 * screen_open refusing what is not a terminal, leaving nothing open. */
#include <stdlib.h>
#include <unistd.h>

#include "screen/screen.h"
#include "test.h"

/* screen_fit's line for text at cols, as a C string to compare. */
static const char *fit(const char *text, int cols, bool reverse)
{
	static struct strbuf sb;
	sb_reset(&sb);
	screen_fit(&sb, text, cols, reverse);
	sb_add(&sb, "", 1);
	return sb.s;
}

static void test_fit_cuts_to_the_width(void)
{
	CHECK(!strcmp(fit("abcdef", 4, false), "abcd\033[K\r\n"), "%s", fit("abcdef", 4, false));
	CHECK(!strcmp(fit("abc", 10, false), "abc\033[K\r\n"), "shorter: kept whole");
	CHECK(!strcmp(fit("abc", 3, false), "abc\033[K\r\n"), "exactly the width");
	CHECK(!strcmp(fit("abc", 0, false), "\033[K\r\n"), "no columns: cleared only");
	CHECK(!strcmp(fit("", 80, false), "\033[K\r\n"), "empty line");
	CHECK(!strcmp(fit("abcdef", 2, true), "\033[7mab\033[K\033[m\r\n"),
	      "reverse: %s", fit("abcdef", 2, true));
}

/* Keys of a byte string, decoded one after the other into out. */
static size_t decode_all(const char *buf, size_t n, int *out, size_t cap)
{
	size_t got = 0;
	for (size_t i = 0; i < n && got < cap; got++)
		i += screen_key_decode(buf + i, n - i, &out[got]);
	return got;
}

static void test_keys_from_bytes(void)
{
	int k[16];
	size_t n = decode_all("\033[A\033[Bq", 7, k, 16);
	CHECK(n == 3 && k[0] == SCREEN_KEY_UP && k[1] == SCREEN_KEY_DOWN && k[2] == 'q',
	      "arrows then q: %zu keys", n);
	n = decode_all("\033[C\033[D\033[H", 9, k, 16);
	CHECK(n == 3 && k[0] == SCREEN_KEY_RIGHT && k[1] == SCREEN_KEY_LEFT &&
	      k[2] == SCREEN_KEY_SEQ, "right, left, another sequence: %zu keys", n);
	n = decode_all("\033", 1, k, 16);
	CHECK(n == 1 && k[0] == SCREEN_KEY_ESC, "a lone Esc");
	n = decode_all("\033q", 2, k, 16);
	CHECK(n == 2 && k[0] == SCREEN_KEY_ESC && k[1] == 'q', "Esc then q (Alt-q)");
	n = decode_all("\033[", 2, k, 16);
	CHECK(n == 2 && k[0] == SCREEN_KEY_ESC && k[1] == '[',
	      "a sequence cut by the read: its bytes as they are");
	n = decode_all("\r\177\xc3\xa9", 4, k, 16);
	CHECK(n == 4 && k[0] == '\r' && k[1] == 127 && k[2] == 0xc3 && k[3] == 0xa9,
	      "Enter, Backspace, bytes above 127 as 128..255");
	n = decode_all("\033[\0", 3, k, 16);
	CHECK(n == 1 && k[0] == SCREEN_KEY_SEQ, "ESC [ NUL: another sequence");
}

static const char *columns(const struct screen_columns *c, const char *text)
{
	static struct strbuf sb;
	sb_reset(&sb);
	screen_columns_put(&sb, c, text);
	sb_add(&sb, "", 1);
	return sb.s;
}

static void test_columns_padded_to_the_widest(void)
{
	struct screen_columns c = { { 0 } };
	screen_columns_measure(&c, "ab\tx\tlast");
	screen_columns_measure(&c, "abcd\txyz\tz");
	CHECK(c.width[0] == 4 && c.width[1] == 3 && c.width[2] == 4, "widths %d %d %d",
	      c.width[0], c.width[1], c.width[2]);
	CHECK(!strcmp(columns(&c, "ab\tx\tlast"), "ab    x    last"), "'%s'",
	      columns(&c, "ab\tx\tlast"));
	CHECK(!strcmp(columns(NULL, "ab\tx\tlast"), "ab  x  last"), "unpadded: '%s'",
	      columns(NULL, "ab\tx\tlast"));
	CHECK(!strcmp(columns(&c, "one"), "one"), "one field: as it is");
	/* A field counts up to SCREEN_COLUMN_WIDTH, and a longer one is kept whole. */
	char wide[80];
	memset(wide, 'w', 60);
	strcpy(wide + 60, "\tz");
	struct screen_columns w = { { 0 } };
	screen_columns_measure(&w, wide);
	CHECK(w.width[0] == SCREEN_COLUMN_WIDTH, "width %d", w.width[0]);
	CHECK(strlen(columns(&w, wide)) == 60 + 2 + 1, "'%s'", columns(&w, wide));
}

static void test_open_needs_a_terminal(void)
{
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	FILE *out = fdopen(p[1], "w");
	for (int i = 0; i < 2; i++) {
		struct screen *s = screen_open(p[0], out);
		CHECK(!s, "a pipe is no terminal");
		CHECK(strstr(err_msg(), "needs a terminal"), "try %d: %s", i, err_msg());
		screen_close(s);
	}
	fclose(out);
	close(p[0]);
}

int main(void)
{
	RUN(test_fit_cuts_to_the_width);
	RUN(test_keys_from_bytes);
	RUN(test_columns_padded_to_the_widest);
	RUN(test_open_needs_a_terminal);
	return test_summary();
}
