/* client.c - the sending side of `ember record -o tcp://`: connects and
 * says hello, then a thread relays what the writer puts into a pipe to
 * the server in frames (and into the fallback file, when there is one).
 * A slow network fills the pipe and blocks the writer, so the recorder's
 * rings overflow and the kernel's LOST records count what was dropped.
 *
 * It connects within 10 s; TCP_USER_TIMEOUT (30 s) makes a peer that
 * vanished a dropped connection.  When the connection drops, the client
 * reads the server's last line (it stays readable after a reset), so the
 * reason given is the server's ("the server stopped the recording:
 * writing ...: No space left on device; NAME removed"), not the socket's.
 * With a fallback (0600), the command's callback prints one line and the
 * stream goes on into the file alone, which thus holds the whole
 * recording; without, the relay closes the pipe, the writer fails and
 * record ends with that line, never claiming on its own that the server
 * kept anything.  A server that refuses the hello or cannot be reached:
 * with a fallback, one line and the recording goes into it alone; without,
 * record fails before it starts.  At the end the relay drains the pipe,
 * sends the end frame and takes the server's "OK NAME" for record's
 * summary line; the fallback, having served nothing, is removed.  A failed
 * recording ends the connection without the end frame (shutdown), so the
 * server cuts its file to the last round. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"

#define RELAY_SIZE (256u << 10)
#define KEEPALIVE_MS 5000
#define PIPE_BYTES (1 << 20)
#define LAST_WORD_MS 1000          /* for the server's line after a failure */

struct net_client {
	struct net_client_opts o;
	char *addr;
	int sock;                  /* -1 once the connection dropped */
	int pipe_rd, pipe_wr;
	int fallback;              /* -1 when none, or it failed */
	pthread_t thread;
	bool running;
	char *drop;                /* why the connection dropped */
	char *last_word;           /* the server's ERR after an abort */
	char *fallback_err;        /* why the fallback stopped */
	u64 sent;
	u8 *buf;                   /* 4 bytes of frame head, then the data */
};

static void put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static int send_all(int fd, const void *p, size_t n)
{
	const u8 *b = p;
	while (n) {
		ssize_t r = send(fd, b, n, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One line from the server within timeout_ms, without its newline; its
 * text is the peer's, so it comes escaped for the terminal (str_escape). */
static int read_line(int fd, char *line, size_t size, int timeout_ms)
{
	char raw[NET_LINE_MAX];
	size_t len = 0;
	if (size > sizeof(raw))
		size = sizeof(raw);
	u64 end = now_ns() + (u64)timeout_ms * 1000000;
	while (len + 1 < size) {
		u64 now = now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (now >= end || poll(&p, 1, (int)((end - now) / 1000000) + 1) == 0) {
			err_set("no answer from the server in %d s", timeout_ms / 1000);
			return -1;
		}
		ssize_t r = recv(fd, raw + len, 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err_set_errno("reading the server's answer");
			return -1;
		}
		if (r == 0) {
			err_set("the server closed the connection");
			return -1;
		}
		if (raw[len] == '\n')
			break;
		len++;
	}
	str_escape(line, size, raw, len);
	return 0;
}

/* "OK[ rest]": 0 with rest in *rest; "ERR why" or anything else: -1. */
static int check_answer(const char *line, const char **rest)
{
	if (!strncmp(line, "OK", 2) && (!line[2] || line[2] == ' ')) {
		*rest = line[2] ? line + 3 : "";
		return 0;
	}
	if (!strncmp(line, "ERR ", 4))
		err_set("the server refused: %.200s", line + 4);
	else
		err_set("the server's answer is not ember's: %.60s", line);
	return -1;
}

static int hello(struct net_client *c)
{
	u8 msg[NET_HELLO_SIZE + NET_HOST_MAX + NET_TOKEN_MAX];
	char host[NET_HOST_MAX + 1], line[NET_LINE_MAX];
	const char *rest;
	net_host_name(host, sizeof(host));
	size_t n = net_hello_encode(msg, sizeof(msg), host, c->o.token, c->o.token_len);
	int rc = n && send_all(c->sock, msg, n) == 0 ? 0 : -1;
	memset(msg, 0, sizeof(msg));
	if (rc < 0) {
		err_set_errno("sending the hello");
		return -1;
	}
	if (read_line(c->sock, line, sizeof(line), c->o.timeout_ms) < 0)
		return -1;
	return check_answer(line, &rest);
}

static void drop(struct net_client *c, const char *why)
{
	c->drop = xstrdup(why);
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
}

/* The server's "ERR why; what it kept" when it sent one before it closed
 * (it stays readable after a reset), without "ERR ", in a new string. */
static char *server_last_word(struct net_client *c)
{
	char line[NET_LINE_MAX];
	if (read_line(c->sock, line, sizeof(line), LAST_WORD_MS) < 0 || strncmp(line, "ERR ", 4))
		return NULL;
	return xstrdup(line + 4);
}

/* Sending failed (why): the server's own word on it, when it said one,
 * tells the user more than the socket's error does. */
static void lost(struct net_client *c, const char *why)
{
	char *saved = xstrdup(why);
	char *word = server_last_word(c);
	if (word) {
		char *both = xasprintf("the server stopped the recording: %s", word);
		drop(c, both);
		free(both);
	} else {
		drop(c, saved);
	}
	free(word);
	free(saved);
}

static int send_frame(struct net_client *c, size_t n)
{
	put_be32(c->buf, n ? (u32)n : NET_FRAME_KEEPALIVE);
	if (send_all(c->sock, c->buf, 4 + n) < 0) {
		err_set_errno("connection lost");
		return -1;
	}
	c->sent += n;
	return 0;
}

static void keep_in_fallback(struct net_client *c, size_t n)
{
	if (c->fallback < 0 || write_all(c->fallback, c->buf + 4, n) == 0)
		return;
	err_set_errno("%s", c->o.fallback);
	c->fallback_err = xstrdup(err_msg());
	close(c->fallback);
	c->fallback = -1;
}

/* Relays the pipe until its end; when nothing can take the stream any
 * more, closes the pipe so the writer fails. */
static void *relay(void *arg)
{
	struct net_client *c = arg;
	for (;;) {
		struct pollfd p = { .fd = c->pipe_rd, .events = POLLIN };
		int r = poll(&p, 1, KEEPALIVE_MS);
		if (r == 0 && c->sock >= 0 && send_frame(c, 0) < 0)
			lost(c, err_msg());
		if (r <= 0)
			continue;
		ssize_t n = read(c->pipe_rd, c->buf + 4, RELAY_SIZE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		keep_in_fallback(c, (size_t)n);
		if (c->sock >= 0 && send_frame(c, (size_t)n) < 0) {
			lost(c, err_msg());
			if (c->fallback >= 0 && c->o.on_drop)
				c->o.on_drop(c->o.ctx, c->drop, false);
		}
		if (c->sock < 0 && c->fallback < 0)
			break;
	}
	close(c->pipe_rd);
	c->pipe_rd = -1;
	return NULL;
}

static int open_fallback(struct net_client *c)
{
	if (!c->o.fallback)
		return 0;
	/* 0600 as record's files: stack copies can hold secrets. */
	c->fallback = open(c->o.fallback, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (c->fallback < 0) {
		err_set_errno("--fallback %s", c->o.fallback);
		return -1;
	}
	return 0;
}

static int start_relay(struct net_client *c)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		err_set_errno("pipe");
		return -1;
	}
	c->pipe_rd = fds[0];
	c->pipe_wr = fds[1];
	fcntl(c->pipe_wr, F_SETPIPE_SZ, PIPE_BYTES);
	if (pthread_create(&c->thread, NULL, relay, c)) {
		err_set("cannot start the sending thread");
		return -1;
	}
	c->running = true;
	return 0;
}

/* A peer that stops acknowledging is a dropped connection after this
 * long, not after the kernel's many minutes of retries. */
static void set_user_timeout(int fd, int ms)
{
	unsigned v = (unsigned)ms;
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v, sizeof(v));
}

/* Connected and answered OK; -1 with err_set(). */
static int connect_server(struct net_client *c, const struct net_addr *a)
{
	if ((c->sock = net_connect(a, c->o.timeout_ms)) < 0 || hello(c) < 0)
		return -1;
	set_user_timeout(c->sock, 3 * c->o.timeout_ms);
	return 0;
}

struct net_client *net_client_start(const struct net_client_opts *o)
{
	struct net_client *c = xcalloc(1, sizeof(*c));
	c->o = *o;
	c->sock = c->pipe_rd = c->pipe_wr = c->fallback = -1;
	c->addr = xstrdup(o->addr);
	c->o.addr = c->addr;
	c->buf = xmalloc(4 + RELAY_SIZE);
	struct net_addr a;
	if (net_parse_addr(o->addr, NET_DEFAULT_PORT, &a) < 0)
		goto fail;
	/* Refused or unreachable: with a fallback, the recording goes there
	 * alone (net_client_dropped says why); without, it fails here. */
	if (connect_server(c, &a) < 0) {
		if (!o->fallback)
			goto fail;
		drop(c, err_msg());
	}
	if (open_fallback(c) < 0 || start_relay(c) < 0)
		goto fail;
	return c;
fail:
	net_client_free(c);
	return NULL;
}

int net_client_fd(const struct net_client *c)
{
	return c->pipe_wr;
}

/* The writer is done: the relay sends what is left and ends. */
static void stop_relay(struct net_client *c)
{
	if (c->pipe_wr >= 0)
		close(c->pipe_wr);
	c->pipe_wr = -1;
	if (c->running)
		pthread_join(c->thread, NULL);
	c->running = false;
}

/* The end frame and the server's word on what it stored. */
static int end_stream(struct net_client *c, char **stored)
{
	char line[NET_LINE_MAX];
	const char *rest;
	u8 end[4] = { 0 };
	if (send_all(c->sock, end, sizeof(end)) < 0) {
		err_set_errno("connection lost at the end");
		char *why = xstrdup(err_msg()), *word = server_last_word(c);
		if (word)
			err_set("the server stopped the recording: %s", word);
		else
			err_set("%s", why);
		free(word);
		free(why);
		return -1;
	}
	if (read_line(c->sock, line, sizeof(line), c->o.timeout_ms) < 0 ||
	    check_answer(line, &rest) < 0)
		return -1;
	*stored = xstrdup(rest);
	return 0;
}

int net_client_finish(struct net_client *c, char **stored)
{
	*stored = NULL;
	stop_relay(c);
	if (c->sock >= 0 && end_stream(c, stored) < 0) {
		drop(c, err_msg());
		if (c->fallback >= 0 && c->o.on_drop)
			c->o.on_drop(c->o.ctx, c->drop, true);
	}
	if (*stored) {
		if (c->fallback >= 0) {     /* the server has it all */
			close(c->fallback);
			c->fallback = -1;
			unlink(c->o.fallback);
		}
		return 0;
	}
	if (c->fallback >= 0)
		return 0;
	err_set("%s%s%s", c->drop ? c->drop : "the connection dropped",
		c->fallback_err ? "; " : "", c->fallback_err ? c->fallback_err : "");
	return -1;
}

void net_client_abort(struct net_client *c)
{
	stop_relay(c);
	if (c->sock >= 0) {
		/* The stream ends without its end frame: the server cuts its
		 * file and says what it kept. */
		shutdown(c->sock, SHUT_WR);
		c->last_word = server_last_word(c);
		close(c->sock);
		c->sock = -1;
	}
}

const char *net_client_dropped(const struct net_client *c)
{
	return c->drop;
}

const char *net_client_last_word(const struct net_client *c)
{
	return c->last_word;
}

bool net_client_has_fallback(const struct net_client *c)
{
	return c->fallback >= 0;
}

u64 net_client_sent(const struct net_client *c)
{
	return c->sent;
}

void net_client_free(struct net_client *c)
{
	if (!c)
		return;
	stop_relay(c);
	if (c->sock >= 0)
		close(c->sock);
	if (c->pipe_rd >= 0)
		close(c->pipe_rd);
	if (c->fallback >= 0)
		close(c->fallback);
	free(c->drop);
	free(c->last_word);
	free(c->fallback_err);
	free(c->addr);
	free(c->buf);
	free(c);
}
