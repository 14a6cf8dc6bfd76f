/* conn.c - one connection's input as the server parses it: the hello,
 * the frames and, inside them, the perf stream followed record by record
 * (format's pd_cut) so a cut-off file can end where it stays readable.
 * No I/O, no allocation; the fuzz target feeds it directly. */
#include <string.h>

#include "net/net.h"

void net_conn_init(struct net_conn *c, const struct net_conn_cb *cb)
{
	memset(c, 0, sizeof(*c));
	c->cb = *cb;
	c->state = NET_HELLO;
	c->head_want = NET_HELLO_SIZE;
	pd_cut_init(&c->cut);
}

static u32 get_be16(const u8 *p)
{
	return (u32)p[0] << 8 | p[1];
}

static u32 get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/* The fixed part: magic, version and lengths, each within its bound, so
 * the rest of the hello fits in head. */
static int hello_fixed(struct net_conn *c)
{
	const u8 *h = c->head;
	if (memcmp(h, NET_MAGIC, 8)) {
		err_set("not an ember client (no EMBERNET hello)");
		return -1;
	}
	u32 version = get_be16(h + 8), hlen = get_be16(h + 10), tlen = get_be16(h + 12);
	if (version != NET_VERSION) {
		err_set("protocol version %u (this server speaks %d)", version, NET_VERSION);
		return -1;
	}
	if (hlen == 0 || hlen > NET_HOST_MAX || tlen > NET_TOKEN_MAX || get_be16(h + 14)) {
		err_set("bad hello: host length %u (1 to %d), token length %u (at most %d)",
			hlen, NET_HOST_MAX, tlen, NET_TOKEN_MAX);
		return -1;
	}
	c->head_want = NET_HELLO_SIZE + hlen + tlen;
	return 0;
}

static int hello_done(struct net_conn *c)
{
	u32 hlen = get_be16(c->head + 10), tlen = get_be16(c->head + 12);
	char host[NET_HOST_MAX + 1];
	memcpy(host, c->head + NET_HELLO_SIZE, hlen);
	host[hlen] = 0;
	if (!net_host_ok(host, hlen)) {
		err_set("bad hello: the host name is not [A-Za-z0-9._-]");
		return -1;
	}
	const char *token = (const char *)c->head + NET_HELLO_SIZE + hlen;
	if (c->cb.hello(c->cb.ctx, host, token, tlen) < 0) {
		c->refused = true;
		return -1;
	}
	c->state = NET_FRAME_HEAD;
	c->head_len = 0;
	return 0;
}

static size_t feed_hello(struct net_conn *c, const u8 *p, size_t n, int *rc)
{
	size_t take = MIN(n, (size_t)(c->head_want - c->head_len));
	memcpy(c->head + c->head_len, p, take);
	c->head_len += (u32)take;
	if (c->head_len < c->head_want)
		return take;
	if (c->head_want == NET_HELLO_SIZE && hello_fixed(c) < 0)
		*rc = -1;
	else if (c->head_len == c->head_want && c->head_want > NET_HELLO_SIZE)
		*rc = hello_done(c);
	return take;
}

/* A frame's length: the end, a keepalive, or data within its bound. */
static int frame_head_done(struct net_conn *c)
{
	u32 len = get_be32(c->head);
	c->head_len = 0;
	if (len == NET_FRAME_KEEPALIVE)
		return 0;
	if (len == 0) {
		if (!pd_cut_at_boundary(&c->cut)) {
			err_set("the stream ended inside a record (stream offset %llu)",
				(unsigned long long)c->cut.off);
			return -1;
		}
		c->state = NET_ENDED;
		return 1;
	}
	if (len > NET_FRAME_MAX) {
		err_set("frame length %u exceeds the bound of %u bytes", len, NET_FRAME_MAX);
		return -1;
	}
	c->frame_left = len;
	c->state = NET_FRAME_BODY;
	return 0;
}

static size_t feed_frame_head(struct net_conn *c, const u8 *p, size_t n, int *rc)
{
	size_t take = MIN(n, (size_t)(4 - c->head_len));
	memcpy(c->head + c->head_len, p, take);
	c->head_len += (u32)take;
	if (c->head_len == 4)
		*rc = frame_head_done(c);
	return take;
}

static size_t feed_body(struct net_conn *c, const u8 *p, size_t n, int *rc)
{
	size_t take = MIN(n, (size_t)c->frame_left);
	/* Written first: the cut then never lies past the bytes written,
	 * even when these bytes hold whole records before a bad one. */
	if (c->cb.data(c->cb.ctx, p, take) < 0) {
		*rc = -1;
		return take;
	}
	if (pd_cut_feed(&c->cut, p, take) < 0) {
		err_prefix("perf stream");
		*rc = -1;
		return take;
	}
	c->frame_left -= (u32)take;
	if (!c->frame_left)
		c->state = NET_FRAME_HEAD;
	return take;
}

int net_conn_feed(struct net_conn *c, const void *buf, size_t n)
{
	const u8 *p = buf;
	int rc = 0;
	while (n && rc == 0) {
		size_t used;
		switch (c->state) {
		case NET_HELLO: used = feed_hello(c, p, n, &rc); break;
		case NET_FRAME_HEAD: used = feed_frame_head(c, p, n, &rc); break;
		case NET_FRAME_BODY: used = feed_body(c, p, n, &rc); break;
		default:
			err_set("bytes after the end of the stream");
			return -1;
		}
		c->received += used;
		p += used;
		n -= used;
	}
	return rc;      /* after the end frame, the rest is ignored */
}

u64 net_conn_safe_end(const struct net_conn *c)
{
	return pd_cut_safe_end(&c->cut);
}
