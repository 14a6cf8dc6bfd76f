/* addr.c - addresses, sockets, the shared token and the hello: what both
 * ends of `ember record -o tcp://` and `ember serve` need. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"

static int parse_port(const char *s, u16 *port)
{
	u64 v;
	if (parse_u64(s, &v) < 0 || v > 65535) {
		err_set("'%s' is not a port (0 to 65535)", s);
		return -1;
	}
	*port = (u16)v;
	return 0;
}

/* Splits "HOST:PORT", "[V6]:PORT", "HOST", ":PORT" into host and port. */
static int split_addr(const char *text, char *host, size_t size, u16 *port)
{
	const char *colon = NULL, *h = text;
	size_t hlen;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || (close[1] && close[1] != ':')) {
			err_set("'%s': write an IPv6 address as [ADDR]:PORT", text);
			return -1;
		}
		h = text + 1;
		hlen = (size_t)(close - h);
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strrchr(text, ':');
		if (colon && strchr(text, ':') != colon) {
			err_set("'%s': write an IPv6 address as [ADDR]:PORT", text);
			return -1;
		}
		hlen = colon ? (size_t)(colon - text) : strlen(text);
	}
	if (hlen >= size) {
		err_set("'%s': the host name is too long", text);
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = 0;
	if (!hlen)
		strcpy(host, "127.0.0.1");
	return colon ? parse_port(colon + 1, port) : 0;
}

int net_parse_addr(const char *text, u16 default_port, struct net_addr *a)
{
	char host[256], port_text[8];
	u16 port = default_port;
	if (split_addr(text, host, sizeof(host), &port) < 0)
		return -1;
	snprintf(port_text, sizeof(port_text), "%u", port);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int rc = getaddrinfo(host, port_text, &hints, &res);
	if (rc) {
		err_set("'%s': %s", host, gai_strerror(rc));
		return -1;
	}
	memset(a, 0, sizeof(*a));
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

const char *net_addr_str(const struct net_addr *a, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (a->ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&a->ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		snprintf(buf, size, "[%s]:%u", host, port);
		return buf;
	}
	const struct sockaddr_in *s4 = (const void *)&a->ss;
	inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
	port = ntohs(s4->sin_port);
	snprintf(buf, size, "%s:%u", host, port);
	return buf;
}

int net_listen(struct net_addr *a)
{
	char name[80];
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err_set_errno("socket");
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a->ss, a->len) < 0 || listen(fd, 64) < 0) {
		err_set_errno("listening on %s", net_addr_str(a, name, sizeof(name)));
		close(fd);
		return -1;
	}
	a->len = sizeof(a->ss);
	getsockname(fd, (struct sockaddr *)&a->ss, &a->len);
	return fd;
}

/* A non-blocking connect waited for in poll, so a silent host costs
 * timeout_ms, not the kernel's minutes. */
int net_connect(const struct net_addr *a, int timeout_ms)
{
	char name[80];
	net_addr_str(a, name, sizeof(name));
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err_set_errno("socket");
		return -1;
	}
	int err = 0;
	if (connect(fd, (const struct sockaddr *)&a->ss, a->len) < 0) {
		err = errno;
		if (err == EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			socklen_t len = sizeof(err);
			int r = poll(&p, 1, timeout_ms);
			if (r == 0)
				err = ETIMEDOUT;
			else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
				err = errno;
		}
	}
	if (err) {
		errno = err;
		err_set_errno("connecting to %s", name);
		close(fd);
		return -1;
	}
	int flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

int net_read_token(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	char tmp[NET_TOKEN_MAX + 2];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	close(fd);
	if (n < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == '\r' ||
			 tmp[n - 1] == ' ' || tmp[n - 1] == '\t'))
		n--;
	if (n == 0) {
		err_set("%s: the token file is empty", path);
		return -1;
	}
	if ((size_t)n > NET_TOKEN_MAX || (size_t)n > size) {
		err_set("%s: a token is at most %d bytes", path, NET_TOKEN_MAX);
		return -1;
	}
	memcpy(buf, tmp, (size_t)n);
	return (int)n;
}

static bool host_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

bool net_host_ok(const char *name, size_t len)
{
	/* Not '.' first ("..", hidden) nor '-' (an option to whatever is
	 * run on the directory later). */
	if (len == 0 || len > NET_HOST_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!host_char_ok(name[i]))
			return false;
	return true;
}

void net_host_name(char *buf, size_t size)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	size_t n = 0;
	for (; host[n] && n + 1 < size && n < NET_HOST_MAX; n++)
		buf[n] = host_char_ok(host[n]) ? host[n] : '-';
	buf[n] = 0;
	if (buf[0] == '.' || buf[0] == '-')
		buf[0] = '_';
}

static void put_u16(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

size_t net_hello_encode(u8 *buf, size_t size, const char *host,
			const char *token, size_t token_len)
{
	size_t hlen = strlen(host);
	size_t need = NET_HELLO_SIZE + hlen + token_len;
	if (need > size)
		return 0;
	memcpy(buf, NET_MAGIC, 8);
	put_u16(buf + 8, NET_VERSION);
	put_u16(buf + 10, (u32)hlen);
	put_u16(buf + 12, (u32)token_len);
	put_u16(buf + 14, 0);
	memcpy(buf + NET_HELLO_SIZE, host, hlen);
	if (token_len)
		memcpy(buf + NET_HELLO_SIZE + hlen, token, token_len);
	return need;
}
