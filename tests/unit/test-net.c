/* test-net.c - unit tests of net/ (the hello, the frames, where a stream
 * is cut) and of format's pd_cut that it uses, on streams built by hand. */
#include <string.h>

#include "net/net.h"
#include "tests/unit/test.h"

/* A pipe header, a tracing-data record with 16 bytes after it, a round,
 * and a 24-byte record. */
static size_t make_stream(u8 *b)
{
	size_t n = 0;
	u64 magic = PD_MAGIC, hsize = 16;
	memcpy(b + n, &magic, 8); memcpy(b + n + 8, &hsize, 8); n += 16;
	struct perf_event_header h = { PD_RECORD_HEADER_TRACING_DATA, 0, 12 };
	u32 tlen = 16;
	memcpy(b + n, &h, 8); memcpy(b + n + 8, &tlen, 4); n += 12;
	memset(b + n, 0xee, 16); n += 16;
	h = (struct perf_event_header){ PD_RECORD_FINISHED_ROUND, 0, 8 };
	memcpy(b + n, &h, 8); n += 8;
	h = (struct perf_event_header){ PERF_RECORD_COMM, 0, 24 };
	memcpy(b + n, &h, 8); memset(b + n + 8, 'x', 16); n += 24;
	return n;
}

static void test_cut(void)
{
	u8 s[128];
	size_t n = make_stream(s);
	/* Every split point: the same boundaries, byte by byte or at once. */
	for (size_t piece = 1; piece <= n; piece++) {
		struct pd_cut c;
		pd_cut_init(&c);
		for (size_t off = 0; off < n; off += piece)
			CHECK(pd_cut_feed(&c, s + off, MIN(piece, n - off)) == 0, "%s", err_msg());
		CHECK(c.round_end == 52 && c.record_end == n && pd_cut_at_boundary(&c),
		      "piece %zu: round %llu record %llu", piece,
		      (unsigned long long)c.round_end, (unsigned long long)c.record_end);
	}
	/* Cut inside the last record: readable to the round. */
	struct pd_cut c;
	pd_cut_init(&c);
	pd_cut_feed(&c, s, n - 3);
	CHECK(!pd_cut_at_boundary(&c) && pd_cut_safe_end(&c) == 52, "safe %llu",
	      (unsigned long long)pd_cut_safe_end(&c));
	/* A record smaller than its header, and a bad magic. */
	pd_cut_init(&c);
	u8 bad[24];
	memcpy(bad, s, 16);
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 4 };
	memcpy(bad + 16, &h, 8);
	CHECK(pd_cut_feed(&c, bad, sizeof(bad)) < 0 && strstr(err_msg(), "offset 16"), "%s", err_msg());
	pd_cut_init(&c);
	bad[0] ^= 1;
	CHECK(pd_cut_feed(&c, bad, 16) < 0, "a bad magic is taken");
}

struct got {
	char host[NET_HOST_MAX + 1];
	u8 data[256];
	size_t n;
};

static int on_hello(void *ctx, const char *host, const char *token, size_t tlen)
{
	struct got *g = ctx;
	snprintf(g->host, sizeof(g->host), "%s", host);
	if (tlen == 3 && !memcmp(token, "abc", 3))
		return 0;
	err_set("wrong token");
	return -1;
}

static int on_data(void *ctx, const void *p, size_t n)
{
	struct got *g = ctx;
	memcpy(g->data + g->n, p, n);
	g->n += n;
	return 0;
}

static size_t put_frame(u8 *b, const u8 *p, u32 n)
{
	b[0] = (u8)(n >> 24); b[1] = (u8)(n >> 16); b[2] = (u8)(n >> 8); b[3] = (u8)n;
	if (p)
		memcpy(b + 4, p, n);
	return 4 + (p ? n : 0);
}

static void test_conn(void)
{
	u8 s[128], wire[512];
	size_t sn = make_stream(s);
	size_t n = net_hello_encode(wire, sizeof(wire), "host-1", "abc", 3);
	n += put_frame(wire + n, NULL, NET_FRAME_KEEPALIVE);
	n += put_frame(wire + n, s, 30);
	n += put_frame(wire + n, s + 30, (u32)(sn - 30));
	n += put_frame(wire + n, NULL, 0);
	for (size_t piece = 1; piece <= n; piece += 7) {
		struct got g = {0};
		struct net_conn_cb cb = { &g, on_hello, on_data };
		struct net_conn c;
		net_conn_init(&c, &cb);
		int rc = 0;
		for (size_t off = 0; off < n && rc == 0; off += piece)
			rc = net_conn_feed(&c, wire + off, MIN(piece, n - off));
		CHECK(rc == 1 && !strcmp(g.host, "host-1") && g.n == sn && !memcmp(g.data, s, sn),
		      "piece %zu: rc %d host %s %zu bytes: %s", piece, rc, g.host, g.n, err_msg());
	}
	/* A wrong token: refused before any data. */
	struct got g = {0};
	struct net_conn_cb cb = { &g, on_hello, on_data };
	struct net_conn c;
	net_conn_init(&c, &cb);
	n = net_hello_encode(wire, sizeof(wire), "h", "abd", 3);
	CHECK(net_conn_feed(&c, wire, n) < 0 && c.refused && g.n == 0, "refused %d", c.refused);
	/* A frame past the bound, and a host name that is a path. */
	net_conn_init(&c, &cb);
	n = net_hello_encode(wire, sizeof(wire), "h", "abc", 3);
	n += put_frame(wire + n, NULL, NET_FRAME_MAX + 1);
	CHECK(net_conn_feed(&c, wire, n) < 0 && strstr(err_msg(), "exceeds"), "%s", err_msg());
	net_conn_init(&c, &cb);
	n = net_hello_encode(wire, sizeof(wire), "../x", "abc", 3);
	CHECK(net_conn_feed(&c, wire, n) < 0 && !c.refused, "a path as host name is taken");
	/* The end frame inside a record. */
	net_conn_init(&c, &cb);
	g.n = 0;
	n = net_hello_encode(wire, sizeof(wire), "h", "abc", 3);
	n += put_frame(wire + n, s, 20);
	n += put_frame(wire + n, NULL, 0);
	CHECK(net_conn_feed(&c, wire, n) < 0 && net_conn_safe_end(&c) == 16, "%s", err_msg());
}

static void test_addr(void)
{
	struct net_addr a;
	char buf[80];
	CHECK(net_parse_addr("127.0.0.1:9", 1, &a) == 0 &&
	      !strcmp(net_addr_str(&a, buf, sizeof(buf)), "127.0.0.1:9"), "%s", buf);
	CHECK(net_parse_addr(":77", 1, &a) == 0 &&
	      !strcmp(net_addr_str(&a, buf, sizeof(buf)), "127.0.0.1:77"), "%s", buf);
	CHECK(net_parse_addr("[::1]:8", 1, &a) == 0 &&
	      !strcmp(net_addr_str(&a, buf, sizeof(buf)), "[::1]:8"), "%s", buf);
	CHECK(net_parse_addr("127.0.0.1:99999", 1, &a) < 0, "port 99999 taken");
	CHECK(net_parse_addr("::1:8", 1, &a) < 0, "bare IPv6 taken");
	CHECK(net_host_ok("a.b-c_d", 7) && !net_host_ok(".x", 2) && !net_host_ok("a/b", 3),
	      "host names");
	/* A leading '-' would be an option to whatever runs on the folder. */
	CHECK(!net_host_ok("-rf", 3) && net_host_ok("r-f", 3), "a host name starting with '-'");
	char me[NET_HOST_MAX + 1];
	net_host_name(me, sizeof(me));
	CHECK(net_host_ok(me, strlen(me)), "this host's name '%s' is refused", me);
}

int main(void)
{
	RUN(test_cut);
	RUN(test_conn);
	RUN(test_addr);
	return test_summary();
}
