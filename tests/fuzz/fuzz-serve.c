/* fuzz-serve.c - libFuzzer target for what ember serve parses of a client:
 * the hello, the frames and the perf stream inside them (net/conn.c and
 * format's pd_cut), fed in pieces of sizes the input picks, as recv(2)
 * hands them over.  Checks that where the file would be cut never lies
 * past the stream bytes handed to the writer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

struct sink {
	u64 bytes;
	u8 sum;
};

static int on_hello(void *ctx, const char *host, const char *token, size_t token_len)
{
	/* Both answers are reached: a token of "ok" is the right one. */
	/* The host becomes a directory name: bounded, no '/', no leading
	 * '.' or '-'. */
	if (strlen(host) > NET_HOST_MAX || token_len > NET_TOKEN_MAX ||
	    !net_host_ok(host, strlen(host)) || host[0] == '-' || host[0] == '.' || strchr(host, '/'))
		abort();
	if (token_len == 2 && !memcmp(token, "ok", 2))
		return 0;
	err_set("wrong token");
	return -1;
}

static int on_data(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;
	const u8 *b = p;
	for (size_t i = 0; i < n; i++)
		s->sum ^= b[i];
	s->bytes += n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 1)
		return 0;
	/* The first byte sets the piece size: 1 to 256 bytes a call. */
	size_t piece = (size_t)data[0] + 1;
	data++, len--;
	struct sink s = {0};
	struct net_conn_cb cb = { .ctx = &s, .hello = on_hello, .data = on_data };
	struct net_conn *c = malloc(sizeof(*c));
	net_conn_init(c, &cb);
	int rc = 0;
	for (size_t off = 0; off < len && rc == 0; off += piece)
		rc = net_conn_feed(c, data + off, len - off < piece ? len - off : piece);
	if (net_conn_safe_end(c) > s.bytes || c->cut.off > s.bytes ||
	    c->cut.record_end > c->cut.off || c->cut.round_end > c->cut.record_end)
		abort();
	free(c);
	return 0;
}
