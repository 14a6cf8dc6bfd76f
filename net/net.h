/* net.h - recordings over TCP: addresses, the handshake and framing that
 * `ember record -o tcp://` speaks, the per-connection parser and the
 * collecting server of `ember serve`, and the client's sender.
 *
 * The wire, version 1 (the constants below).  Client to server: a hello
 * of 16 bytes, "EMBERNET" then big-endian u16 version, host-name length
 * (1 to 64), token length (0 to 256) and flags (0), followed by the host
 * name ([A-Za-z0-9._-], not starting with '.' or '-': it becomes a
 * directory name, and a leading '-' would be an option to a tool run on
 * it) and the token; then frames, each a big-endian u32 length and that
 * many bytes of the perf stream (the pipe variant, as `record -o -`
 * writes it): 1 byte to 1 MiB of data, 0 for the end of the stream,
 * 0xffffffff a keepalive (sent after 5 s without data).  Server to
 * client: a line after the hello, "OK" or "ERR why" (then it closes), and
 * a line after the end frame, "OK HOST-DATE-TIME/ember.data" once the
 * file is complete, or "ERR why; what became of the file" ("NAME kept to
 * its last complete round (K of N bytes)" or "nothing readable arrived,
 * NAME removed"), also sent when the server stops a client mid-stream.
 * Every length is checked against its bound before anything is read into
 * a fixed buffer; nothing is allocated from a length field. */
#ifndef EMBER_NET_H
#define EMBER_NET_H

#include <signal.h>
#include <sys/socket.h>

#include "common/common.h"
#include "format/format.h"


/* --- The wire (net.h's opening comment, above) -------------------------------
 * Client to server: a hello (16 bytes: "EMBERNET", then big-endian u16
 * version, host length, token length, flags 0; then the host name and the
 * token), then frames: a big-endian u32 length and that many bytes of the
 * perf stream; length 0 ends the stream, NET_FRAME_KEEPALIVE carries
 * nothing.  Server to client: one line after the hello ("OK" or
 * "ERR why"), and one after the end ("OK DIR/ember.data" or "ERR why"). */
#define NET_DEFAULT_PORT 8462
#define NET_MAGIC "EMBERNET"
#define NET_VERSION 1
#define NET_HELLO_SIZE 16
#define NET_HOST_MAX 64
#define NET_TOKEN_MAX 256
#define NET_FRAME_MAX (1u << 20)
#define NET_FRAME_KEEPALIVE 0xffffffffu
#define NET_LINE_MAX 256
/* Connections that have not yet said a good hello: at most this many,
 * and this many from one source, each for hello_ms; none holds a client
 * slot, so silent connections cannot keep clients out. */
#define NET_PENDING_MAX 64
#define NET_PENDING_PER_ADDR 8
#define NET_HELLO_MS 1000

struct net_addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/* "HOST:PORT", "[V6]:PORT", "HOST" (default_port) or ":PORT"; names are
 * resolved.  -1 with err_set(). */
int net_parse_addr(const char *text, u16 default_port, struct net_addr *a);
/* "127.0.0.1:8462", "[::1]:8462" into buf. */
const char *net_addr_str(const struct net_addr *a, char *buf, size_t size);
/* A listening socket (SO_REUSEADDR, non-blocking, close-on-exec); a
 * ':0' port is chosen by the kernel and written back into *a. */
int net_listen(struct net_addr *a);
/* A connected, blocking socket, within timeout_ms. */
int net_connect(const struct net_addr *a, int timeout_ms);
/* The shared token in path: at most NET_TOKEN_MAX bytes, trailing
 * whitespace dropped, not empty.  Its length, or -1 with err_set(); the
 * token itself is never in a message. */
int net_read_token(const char *path, char *buf, size_t size);
/* This machine's name as the hello carries it: [A-Za-z0-9._-] only, a
 * '.' or '-' first made '_'. */
void net_host_name(char *buf, size_t size);
/* Whether name is fit for a hello (and a directory name): 1 to
 * NET_HOST_MAX of [A-Za-z0-9._-], not starting with '.' or '-'. */
bool net_host_ok(const char *name, size_t len);
/* The hello's bytes into buf (NET_HELLO_SIZE + host + token); its size. */
size_t net_hello_encode(u8 *buf, size_t size, const char *host,
			const char *token, size_t token_len);

/* --- One connection's input, as the server parses it -----------------------
 * No I/O and no allocation: bytes in, calls out.  Every length is checked
 * against its bound before it is used. */
struct net_conn_cb {
	void *ctx;
	/* The hello: 0 to accept, -1 (with err_set, the reason) to refuse. */
	int (*hello)(void *ctx, const char *host, const char *token, size_t token_len);
	/* Bytes of the perf stream; -1 (with err_set) stops the connection. */
	int (*data)(void *ctx, const void *p, size_t n);
};

enum net_conn_state { NET_HELLO, NET_FRAME_HEAD, NET_FRAME_BODY, NET_ENDED };

struct net_conn {
	struct net_conn_cb cb;
	enum net_conn_state state;
	u8 head[NET_HELLO_SIZE + NET_HOST_MAX + NET_TOKEN_MAX];
	u32 head_len, head_want;
	u32 frame_left;            /* body bytes of the current frame */
	u64 received;              /* bytes fed */
	struct pd_cut cut;         /* where the stream may be cut */
	bool refused;              /* the hello callback said no */
};

void net_conn_init(struct net_conn *c, const struct net_conn_cb *cb);
/* 0: more wanted; 1: the stream ended with its end frame on a record
 * boundary; -1: err_set() says what was wrong (refused, bad framing, not
 * a perf stream) and the connection is to be dropped. */
int net_conn_feed(struct net_conn *c, const void *buf, size_t n);
/* Bytes of the stream from which the file stays readable. */
u64 net_conn_safe_end(const struct net_conn *c);

/* --- The server (server.c) ------------------------------------------------- */
struct net_server_opts {
	struct net_addr listen;
	const char *dir;           /* recordings go to DIR/HOST-DATE-TIME/ember.data */
	const char *token;         /* required from clients, or NULL */
	size_t token_len;
	int max_conns;             /* clients at once; more are refused */
	int pending_max;           /* connections before their hello (0: */
	int pending_per_addr;      /* NET_PENDING_MAX, NET_PENDING_PER_ADDR) */
	int idle_ms;               /* a client silent this long is dropped */
	int hello_ms;              /* time for the hello, from the accept */
	double duration;           /* seconds to serve, 0 for ever */
	u64 stop_after;            /* clients to serve, 0 for no limit */
	volatile sig_atomic_t *stop;      /* set by a signal handler */
	const sigset_t *poll_mask;        /* the mask to wait with */
	/* Each event, one line (a client stored, refused, dropped...). */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

struct net_server_stats {
	u64 clients, stored, cut, refused, failed;
};

/* Descriptors the server may hold at once: a socket each pending
 * connection, a socket and a file each client, the listening socket. */
#define NET_SERVER_FDS(max_conns, pending_max) (2 * (max_conns) + (pending_max) + 1)

/* Listens (the address chosen, port 0 resolved, in o->listen) and serves
 * until stop, duration or stop_after; 0, or -1 with err_set() when it
 * could not start. */
struct net_server;
struct net_server *net_server_open(struct net_server_opts *o);
int net_server_run(struct net_server *s, struct net_server_stats *st);
void net_server_close(struct net_server *s);

/* --- The client (client.c) -------------------------------------------------
 * Connects, says hello, and relays what the writer puts into a pipe to
 * the server (framed) on a thread of its own; with a fallback file, every
 * byte goes there too, so that when the connection drops the file holds
 * the whole recording and writing goes on into it. */
struct net_client_opts {
	const char *addr;          /* "HOST:PORT" (tcp:// taken off) */
	const char *token;         /* or NULL */
	size_t token_len;
	const char *fallback;      /* or NULL */
	int timeout_ms;            /* to connect and for each answer */
	/* Called when the connection drops and the fallback keeps the
	 * stream: on the relay's thread while it goes on into the fallback
	 * alone, or in net_client_finish (at_end) when the server's answer
	 * to the end was not OK.  A connection that fails at the start is
	 * net_client_dropped() once net_client_start returns. */
	void (*on_drop)(void *ctx, const char *why, bool at_end);
	void *ctx;
};

struct net_client;
/* NULL with err_set() when it cannot connect or the server refuses, and
 * there is no fallback; with one, the client records into it alone. */
struct net_client *net_client_start(const struct net_client_opts *o);
/* The pipe the stream is written into (the caller does not close it). */
int net_client_fd(const struct net_client *c);
/* The stream is complete: ends it and waits for the server's word.  0
 * with *stored (the server's name of the file, the caller frees) or, when
 * the stream was kept in the fallback after a drop, *stored NULL; -1 with
 * err_set() when the recording reached neither whole. */
int net_client_finish(struct net_client *c, char **stored);
/* The recording failed: ends the connection without the end frame (the
 * server keeps its file to the last round) and reads what the server
 * says it kept (net_client_last_word). */
void net_client_abort(struct net_client *c);
/* Why the connection dropped, or NULL; when the server said why, its
 * word (what it kept of the file) is in it. */
const char *net_client_dropped(const struct net_client *c);
/* After net_client_abort: the server's "why; what it kept", or NULL. */
const char *net_client_last_word(const struct net_client *c);
/* Whether the fallback file holds the whole stream so far. */
bool net_client_has_fallback(const struct net_client *c);
/* Bytes the server took, and the fallback's. */
u64 net_client_sent(const struct net_client *c);
void net_client_free(struct net_client *c);

#endif
