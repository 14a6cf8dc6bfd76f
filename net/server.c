/* server.c - the collecting server of `ember serve`: one poll loop over
 * the listening socket, a small table of connections that have not yet
 * said a good hello, and a bounded set of clients, each client's stream
 * written to DIR/HOST-DATE-TIME/ember.data as it arrives, and cut back to
 * its last complete round when the client goes before its end frame.
 *
 * A new connection is pending: it holds no client slot, has 1 s for its
 * hello, and takes a slot (--max-conns, 32) only once its hello and token
 * are good (one more is answered "ERR busy").  The pending table has 64
 * places, 8 for one source (an IPv4 address, an IPv6 /64): a 9th from
 * there is refused at once, and a full table lets its oldest go (a real
 * client's hello comes within a round trip).  Before this, 33 silent
 * sockets reopened every 10 s held every slot for good.  Lines about
 * connections that never had a good hello are 5 a second at most, the
 * rest counted.  When accept fails (EMFILE, ENFILE, ENOMEM), the listening
 * socket leaves the poll for 250 ms at a time, logged once.
 * Each stream is written as it arrives, as is: ember and perf read a
 * pipe-variant file with -i, it needs no second pass, and the file stays
 * readable at every round while the recording goes on (a rewrite into a
 * PERFILE2 file at the end would need the whole stream again and leave
 * nothing readable until then).  Recordings are 0600 in 0700 folders, as
 * record's own files: they can hold user-stack copies.  A client that
 * goes before its end frame (closed, reset, a bad frame or record, silent
 * for --timeout) has its file cut to its last complete round, or removed
 * with its folder when not even the stream's header arrived; a refused
 * client gets no folder at all.  Folder names are HOST-DATE-TIME, then -2,
 * -3... for two recordings of a host begun in the same second.  Each
 * event is one line through the caller's log callback, with the peer's
 * address and host name, never the token. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"

#define READ_SIZE (64u << 10)
#define TICK_MS 200
#define ACCEPT_BURST 16            /* connections taken per wake-up */
#define ACCEPT_PAUSE_MS 250        /* no accept this long after it failed */
#define QUIET_LINES 5              /* lines a second on hello-less connections */

struct conn {
	struct net_server *srv;
	int fd;
	bool pending;              /* no good hello yet: holds no client slot */
	struct net_addr addr;
	char peer[80];
	char host[NET_HOST_MAX + 1];
	char *rel;                 /* HOST-DATE-TIME/ember.data, under dir */
	int file;                  /* -1 until the hello is accepted */
	u64 written;
	u64 deadline_ns;           /* the hello's, then the idle one */
	struct net_conn in;
};

/* Lines about connections that never said a good hello: anyone can open
 * any number of them, so at most QUIET_LINES a second are logged one by
 * one and the rest counted in one line. */
struct quiet {
	u64 since_ns;
	int shown;
	u64 hidden;
};

struct net_server {
	struct net_server_opts *o;
	int lfd;
	int nslots;                /* pending_max + max_conns */
	struct conn **conns;       /* nslots, NULL when free */
	int npending, nclients;
	struct pollfd *pfds;
	int *slots;                /* which conn each pollfd is */
	u8 *buf;
	u64 accept_paused_ns;      /* accept failed: none until then */
	u64 accept_fails;          /* in a row */
	struct quiet quiet;
	struct net_server_stats st;
};

static void logf_(struct net_server *s, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void logf_(struct net_server *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->o->log)
		s->o->log(s->o->log_ctx, line);
}

/* A short line to the client, best effort: its socket buffer is empty
 * or the client is gone, and the server never waits for it. */
static void reply(struct conn *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void reply(struct conn *c, const char *fmt, ...)
{
	char line[NET_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = MIN(n, (int)sizeof(line) - 2);
	line[n++] = '\n';
	if (send(c->fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return;
}

/* The same token, in time that does not depend on where they differ. */
static bool token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	u8 diff = alen != blen;
	for (size_t i = 0; i < alen && i < blen; i++)
		diff |= (u8)(a[i] ^ b[i]);
	return diff == 0;
}

/* DIR/HOST-DATE-TIME, with -2, -3... when two clients of a host begin in
 * the same second. */
static int make_dir(struct conn *c)
{
	const char *dir = c->srv->o->dir;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	for (int i = 1; i < 1000; i++) {
		char name[NET_HOST_MAX + 48];
		if (i == 1)
			snprintf(name, sizeof(name), "%s-%s", c->host, stamp);
		else
			snprintf(name, sizeof(name), "%s-%s-%d", c->host, stamp, i);
		char *path = xasprintf("%s/%s", dir, name);
		/* Only the server's user reads recordings: they can hold
		 * copies of user stacks (as record's files are 0600). */
		int rc = mkdir(path, 0700);
		free(path);
		if (rc == 0) {
			c->rel = xasprintf("%s/ember.data", name);
			return 0;
		}
		if (errno != EEXIST) {
			err_set_errno("cannot store: %s/%s", dir, name);
			return -1;
		}
	}
	err_set("cannot store: %s/%s-%s: 999 directories of that name already", dir, c->host, stamp);
	return -1;
}

static int open_file(struct conn *c)
{
	if (make_dir(c) < 0)
		return -1;
	char *path = xasprintf("%s/%s", c->srv->o->dir, c->rel);
	c->file = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->file < 0)
		err_set_errno("cannot store: %s", path);
	free(path);
	return c->file < 0 ? -1 : 0;
}

static int on_hello(void *ctx, const char *host, const char *token, size_t token_len)
{
	struct conn *c = ctx;
	const struct net_server_opts *o = c->srv->o;
	snprintf(c->host, sizeof(c->host), "%s", host);
	if (o->token && !token_len) {
		err_set("this server needs a token (record --token-file)");
		return -1;
	}
	if (o->token && !token_equal(token, token_len, o->token, o->token_len)) {
		err_set("wrong token");
		return -1;
	}
	/* Only now, the hello and token good, does it take a client slot. */
	if (c->srv->nclients >= o->max_conns) {
		err_set("busy: %d clients already (--max-conns)", o->max_conns);
		return -1;
	}
	if (open_file(c) < 0)
		return -1;
	c->pending = false;
	c->srv->npending--;
	c->srv->nclients++;
	reply(c, "OK");
	c->deadline_ns = now_ns() + (u64)o->idle_ms * 1000000;
	return 0;
}

static int on_data(void *ctx, const void *p, size_t n)
{
	struct conn *c = ctx;
	if (write_all(c->file, p, n) < 0) {
		err_set_errno("writing %s", c->rel);
		return -1;
	}
	c->written += n;
	return 0;
}

static void conn_free(struct net_server *s, int slot)
{
	struct conn *c = s->conns[slot];
	if (c->file >= 0)
		close(c->file);
	close(c->fd);
	if (c->pending)
		s->npending--;
	else
		s->nclients--;
	free(c->rel);
	free(c);
	s->conns[slot] = NULL;
}

static const char *who(const struct conn *c, char *buf, size_t size)
{
	if (c->host[0])
		snprintf(buf, size, "%s (%s)", c->peer, c->host);
	else
		snprintf(buf, size, "%s", c->peer);
	return buf;
}

/* A line on a connection without a good hello, within the quiet budget. */
static void log_quiet(struct net_server *s, const char *line)
{
	struct quiet *q = &s->quiet;
	if (q->shown >= QUIET_LINES) {
		q->hidden++;
		return;
	}
	q->shown++;
	logf_(s, "%s", line);
}

/* Once a second: the count of the lines not logged, and a new budget. */
static void quiet_tick(struct net_server *s, bool force)
{
	struct quiet *q = &s->quiet;
	u64 now = now_ns();
	if (!force && now - q->since_ns < 1000000000ull)
		return;
	if (q->hidden)
		logf_(s, "%llu more connections closed before a good hello (not logged one by one)",
		      (unsigned long long)q->hidden);
	q->since_ns = now;
	q->shown = 0;
	q->hidden = 0;
}

/* A connection that never had a file: refused (token, busy) or failed. */
static void conn_drop(struct net_server *s, int slot, const char *why)
{
	struct conn *c = s->conns[slot];
	char name[160], line[512];
	if (c->in.refused)
		s->st.refused++;
	else
		s->st.failed++;
	snprintf(line, sizeof(line), "%s: %s%s; nothing written", who(c, name, sizeof(name)),
		 c->in.refused ? "refused: " : "", why);
	if (c->pending)
		log_quiet(s, line);
	else
		logf_(s, "%s", line);
	reply(c, "ERR %s", why);
	conn_free(s, slot);
}

/* A client gone before its end frame: its file is cut back to where it
 * stays readable, or removed with its directory when nothing is; the
 * client is told which, as the log is. */
static void conn_cut(struct net_server *s, int slot, const char *why)
{
	struct conn *c = s->conns[slot];
	if (c->file < 0) {
		conn_drop(s, slot, why);
		return;
	}
	char name[160], what[160];
	who(c, name, sizeof(name));
	u64 keep = net_conn_safe_end(&c->in);
	s->st.cut++;
	if (keep && ftruncate(c->file, (off_t)keep) == 0) {
		snprintf(what, sizeof(what), "%s kept to its last complete round (%llu of %llu bytes)",
			 c->rel, (unsigned long long)keep, (unsigned long long)c->written);
	} else {
		char *path = xasprintf("%s/%s", s->o->dir, c->rel);
		unlink(path);
		*strrchr(path, '/') = 0;
		rmdir(path);
		free(path);
		snprintf(what, sizeof(what), "nothing readable arrived, %s removed", c->rel);
	}
	logf_(s, "%s: %s; %s", name, why, what);
	reply(c, "ERR %s; %s", why, what);
	conn_free(s, slot);
}

static void conn_stored(struct net_server *s, int slot)
{
	struct conn *c = s->conns[slot];
	char name[160];
	s->st.stored++;
	logf_(s, "%s: stored %s (%llu bytes)", who(c, name, sizeof(name)), c->rel,
	      (unsigned long long)c->written);
	reply(c, "OK %s", c->rel);
	conn_free(s, slot);
}

/* Reads what the client sent and feeds it to its parser. */
static void conn_read(struct net_server *s, int slot)
{
	struct conn *c = s->conns[slot];
	ssize_t n = recv(c->fd, s->buf, READ_SIZE, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		err_set_errno("connection lost");
		conn_cut(s, slot, err_msg());
		return;
	}
	if (n == 0) {
		conn_cut(s, slot, "the client closed the connection before the end of its stream");
		return;
	}
	if (c->file >= 0)
		c->deadline_ns = now_ns() + (u64)s->o->idle_ms * 1000000;
	int rc = net_conn_feed(&c->in, s->buf, (size_t)n);
	if (rc < 0)
		conn_cut(s, slot, err_msg());
	else if (rc == 1)
		conn_stored(s, slot);
}

/* The same source: one IPv4 address, or one IPv6 /64 (what one host
 * is usually given). */
static bool same_source(const struct net_addr *a, const struct net_addr *b)
{
	if (a->ss.ss_family != b->ss.ss_family)
		return false;
	if (a->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)&a->ss, *y = (const void *)&b->ss;
		return !memcmp(&x->sin6_addr, &y->sin6_addr, 8);
	}
	const struct sockaddr_in *x = (const void *)&a->ss, *y = (const void *)&b->ss;
	return x->sin_addr.s_addr == y->sin_addr.s_addr;
}

/* Room in the pending table for a connection from addr: -1 when its
 * source has pending_per_addr there already; otherwise, the table full,
 * the oldest pending connection goes (a client's hello comes within a
 * round trip, so it is never the oldest for long). */
static int make_pending_room(struct net_server *s, const struct net_addr *addr)
{
	int same = 0, oldest = -1;
	for (int i = 0; i < s->nslots; i++) {
		struct conn *c = s->conns[i];
		if (!c || !c->pending)
			continue;
		same += same_source(&c->addr, addr);
		if (oldest < 0 || c->deadline_ns < s->conns[oldest]->deadline_ns)
			oldest = i;
	}
	if (same >= s->o->pending_per_addr)
		return -1;
	if (s->npending >= s->o->pending_max && oldest >= 0)
		conn_drop(s, oldest, "no hello in time (room made for newer connections)");
	return 0;
}

static int free_slot(const struct net_server *s)
{
	for (int i = 0; i < s->nslots; i++)
		if (!s->conns[i])
			return i;
	return -1;
}

/* accept4 failed: descriptors or memory short (or a connection gone
 * already).  The listening socket stays readable, so it is left out of
 * the poll for a while instead of failing again at once; the first
 * failure of a run is logged. */
static void accept_failed(struct net_server *s)
{
	if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
		return;
	if (!s->accept_fails++)
		logf_(s, "accept: %s; taking no connection for %d ms at a time until it works",
		      strerror(errno), ACCEPT_PAUSE_MS);
	s->accept_paused_ns = now_ns() + (u64)ACCEPT_PAUSE_MS * 1000000;
}

static struct conn *conn_new(struct net_server *s, int fd, const struct net_addr *peer)
{
	struct conn *c = xcalloc(1, sizeof(*c));
	c->srv = s;
	c->fd = fd;
	c->file = -1;
	c->pending = true;
	c->addr = *peer;
	net_addr_str(peer, c->peer, sizeof(c->peer));
	c->deadline_ns = now_ns() + (u64)s->o->hello_ms * 1000000;
	struct net_conn_cb cb = { .ctx = c, .hello = on_hello, .data = on_data };
	net_conn_init(&c->in, &cb);
	return c;
}

/* One new connection into the pending table: it has hello_ms for its
 * hello, and takes a client slot only once hello and token are good. */
static bool take_client(struct net_server *s)
{
	struct net_addr peer = { .len = sizeof(peer.ss) };
	int fd = accept4(s->lfd, (struct sockaddr *)&peer.ss, &peer.len,
			 SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		accept_failed(s);
		return false;
	}
	if (s->accept_fails)
		logf_(s, "accept works again, after %llu failures",
		      (unsigned long long)s->accept_fails);
	s->accept_fails = 0;
	s->st.clients++;
	struct conn *c = conn_new(s, fd, &peer);
	int slot = make_pending_room(s, &peer) < 0 ? -1 : free_slot(s);
	if (slot < 0) {
		char line[160];
		s->st.failed++;
		snprintf(line, sizeof(line), "%s: refused: %d connections from there await their hello already",
			 c->peer, s->o->pending_per_addr);
		log_quiet(s, line);
		reply(c, "ERR busy: too many connections from your address");
		close(fd);
		free(c);
		return true;
	}
	s->conns[slot] = c;
	s->npending++;
	return true;
}

struct net_server *net_server_open(struct net_server_opts *o)
{
	struct stat st;
	if (stat(o->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		err_set("%s: not a directory", o->dir);
		return NULL;
	}
	int lfd = net_listen(&o->listen);
	if (lfd < 0)
		return NULL;
	struct net_server *s = xcalloc(1, sizeof(*s));
	s->o = o;
	s->lfd = lfd;
	if (!o->pending_max)
		o->pending_max = NET_PENDING_MAX;
	if (!o->pending_per_addr)
		o->pending_per_addr = NET_PENDING_PER_ADDR;
	s->nslots = o->pending_max + o->max_conns;
	s->conns = xcalloc((size_t)s->nslots, sizeof(*s->conns));
	s->pfds = xcalloc((size_t)s->nslots + 1, sizeof(*s->pfds));
	s->slots = xcalloc((size_t)s->nslots + 1, sizeof(*s->slots));
	s->buf = xmalloc(READ_SIZE);
	s->quiet.since_ns = now_ns();
	return s;
}

static u64 ended(const struct net_server *s)
{
	return s->st.stored + s->st.cut + s->st.refused + s->st.failed;
}

static bool should_stop(const struct net_server *s, u64 end_ns)
{
	if (s->o->stop && *s->o->stop)
		return true;
	if (end_ns && now_ns() >= end_ns)
		return true;
	return s->o->stop_after && ended(s) >= s->o->stop_after;
}

static void expire(struct net_server *s)
{
	u64 now = now_ns();
	for (int i = 0; i < s->nslots; i++) {
		struct conn *c = s->conns[i];
		if (c && now >= c->deadline_ns)
			conn_cut(s, i, c->file < 0 ? "no hello in time" : "silent for too long (--timeout)");
	}
	quiet_tick(s, false);
}

/* One wait: the listening socket (unless accept is paused) and every
 * connection; -1 on a poll error. */
static int wait_once(struct net_server *s)
{
	int n = 0;
	bool listening = now_ns() >= s->accept_paused_ns;
	s->pfds[n++] = (struct pollfd){ .fd = listening ? s->lfd : -1, .events = POLLIN };
	for (int i = 0; i < s->nslots; i++) {
		if (!s->conns[i])
			continue;
		s->slots[n] = i;
		s->pfds[n++] = (struct pollfd){ .fd = s->conns[i]->fd, .events = POLLIN };
	}
	struct timespec ts = { 0, TICK_MS * 1000000L };
	int r = ppoll(s->pfds, (nfds_t)n, &ts, s->o->poll_mask);
	if (r < 0 && errno != EINTR) {
		err_set_errno("poll");
		return -1;
	}
	for (int k = 1; r > 0 && k < n; k++)
		if (s->pfds[k].revents)
			conn_read(s, s->slots[k]);
	if (r > 0 && s->pfds[0].revents & POLLIN)
		for (int i = 0; i < ACCEPT_BURST && take_client(s); i++)
			;
	return 0;
}

int net_server_run(struct net_server *s, struct net_server_stats *st)
{
	u64 end_ns = s->o->duration > 0 ? now_ns() + (u64)(s->o->duration * 1e9) : 0;
	int rc = 0;
	while (!should_stop(s, end_ns)) {
		if (wait_once(s) < 0) {
			rc = -1;
			break;
		}
		expire(s);
	}
	for (int i = 0; i < s->nslots; i++)
		if (s->conns[i])
			conn_cut(s, i, "the server is stopping");
	quiet_tick(s, true);
	*st = s->st;
	return rc;
}

void net_server_close(struct net_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nslots; i++)
		if (s->conns[i])
			conn_free(s, i);
	close(s->lfd);
	free(s->conns);
	free(s->pfds);
	free(s->slots);
	free(s->buf);
	free(s);
}
