/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "et_cli.h"
#include "mesh.h"

static int
fail(struct mesh *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void
put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static void
encode(const struct msg *x, uint8_t out[MSG_LEN])
{
	const uint32_t w[7] = {x->type, x->a, x->b, x->c, x->d, x->e, x->f};
	const uint64_t v[4] = {x->x, x->y, x->z, x->w};

	for (int i = 0; i < 7; i++)
		put32(out + 4 * i, w[i]);
	for (int i = 0; i < 4; i++) {
		put32(out + 28 + 8 * i, (uint32_t)(v[i] >> 32));
		put32(out + 32 + 8 * i, (uint32_t)v[i]);
	}
}

static void
decode(const uint8_t in[MSG_LEN], struct msg *x)
{
	uint32_t w[7];
	uint64_t v[4];

	for (int i = 0; i < 7; i++)
		w[i] = get32(in + 4 * i);
	for (int i = 0; i < 4; i++)
		v[i] = (uint64_t)get32(in + 28 + 8 * i) << 32 | get32(in + 32 + 8 * i);
	*x = (struct msg){w[0], w[1], w[2], w[3], w[4], w[5], w[6], v[0], v[1], v[2], v[3]};
}

/* Wait until fd is ready for events or the deadline; 1 ready, 0 not. */
static int
wait_fd(struct mesh *m, int fd, short events, uint64_t deadline)
{
	while (!*m->stop) {
		struct pollfd p = {.fd = fd, .events = events};
		uint64_t now = et_mono_ms();

		if (now >= deadline)
			return 0;
		int r = poll(&p, 1, deadline - now > 100 ? 100 : (int)(deadline - now));

		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
	}
	return 0;
}

static int
write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One whole message, waiting for it (bootstrap only); 0 or -1. */
static int
read_msg(struct mesh *m, int fd, struct msg *x, uint64_t deadline)
{
	uint8_t b[MSG_LEN];
	size_t have = 0;

	while (have < MSG_LEN) {
		if (!wait_fd(m, fd, POLLIN, deadline))
			return -1;
		ssize_t k = recv(fd, b + have, MSG_LEN - have, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		have += (size_t)k;
	}
	decode(b, x);
	return 0;
}

static int
send_msg(int fd, const struct msg *x)
{
	uint8_t b[MSG_LEN];

	encode(x, b);
	return write_all(fd, b, MSG_LEN);
}

static void
tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A listening socket on port (0: any); its port in *bound. */
static int
listen_on(struct mesh *m, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_ANY)};
	socklen_t len = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return fail(m, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		fail(m, "listen on port %u: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	m->listen_fd = fd;
	*bound = ntohs(a.sin_port);
	return 0;
}

/* Connect to ip:port, retrying while nobody listens yet. */
static int
connect_to(struct mesh *m, uint32_t ip, uint16_t port, uint64_t deadline, const char *who)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(ip)};

	while (!*m->stop && et_mono_ms() < deadline) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return fail(m, "socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			tune(fd);
			return fd;
		}
		close(fd);
		usleep(50000);
	}
	return fail(m, "cannot reach %s at %u.%u.%u.%u:%u", who, ip >> 24, ip >> 16 & 255,
		    ip >> 8 & 255, ip & 255, port);
}

/* Accept one connection and read its HELLO; the fd, or -1. */
static int
accept_hello(struct mesh *m, struct msg *hello, uint32_t *ip, uint64_t deadline)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd;

	if (!wait_fd(m, m->listen_fd, POLLIN, deadline))
		return -1;
	fd = accept(m->listen_fd, (struct sockaddr *)&a, &len);
	if (fd < 0)
		return -1;
	tune(fd);
	if (read_msg(m, fd, hello, deadline) || hello->type != MSG_HELLO) {
		close(fd);
		return -1;
	}
	*ip = ntohl(a.sin_addr.s_addr);
	return fd;
}

static int
check_hello(struct mesh *m, const struct msg *h, uint32_t lo, uint32_t hi)
{
	if (h->b != m->world)
		return fail(m, "rank %u says the world is %u ranks, rank %u says %u", h->a, h->b,
			    m->rank, m->world);
	if (h->a < lo || h->a > hi)
		return fail(m, "a connection from rank %u, expected ranks %u..%u", h->a, lo, hi);
	if (m->fd[h->a] >= 0)
		return fail(m, "rank %u is there twice", h->a);
	return 0;
}

static int
missing(struct mesh *m, uint32_t lo, uint32_t hi, const char *what)
{
	char list[128] = "";
	size_t n = 0;

	for (uint32_t r = lo; r <= hi && n + 12 < sizeof(list); r++)
		if (r != m->rank && m->fd[r] < 0)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u", n ? ", " : "", r);
	return fail(m, "%s: rank%s %s did not come%s", what, strchr(list, ',') ? "s" : "", list,
		    *m->stop ? " before the stop" : " in time");
}

static int
root_side(struct mesh *m, uint16_t port, uint64_t deadline)
{
	uint16_t bound;

	if (listen_on(m, port, &bound))
		return -1;
	for (uint32_t k = 1; k < m->world; k++) {
		struct msg h;
		uint32_t from;
		int fd = accept_hello(m, &h, &from, deadline);

		if (fd < 0)
			return missing(m, 1, m->world - 1, "bootstrap");
		if (check_hello(m, &h, 1, m->world - 1)) {
			close(fd);
			return -1;
		}
		m->fd[h.a] = fd;
		m->ip[h.a] = from;
		m->port[h.a] = (uint16_t)h.c;
	}
	for (uint32_t r = 1; r < m->world; r++)
		for (uint32_t k = 0; k < m->world; k++)
			if (send_msg(m->fd[r], &(struct msg){.type = MSG_ADDR, .a = k, .b = m->ip[k],
							     .c = m->port[k]}))
				return fail(m, "bootstrap: rank %u left", r);
	return 0;
}

static int
rank_side(struct mesh *m, uint32_t root_ip, uint16_t root_port, uint64_t deadline)
{
	uint16_t bound;
	int fd;

	if (listen_on(m, 0, &bound))
		return -1;
	fd = connect_to(m, root_ip, root_port, deadline, "the root (rank 0)");
	if (fd < 0)
		return -1;
	m->fd[0] = fd;
	if (send_msg(fd, &(struct msg){.type = MSG_HELLO, .a = m->rank, .b = m->world, .c = bound}))
		return fail(m, "bootstrap: the root closed the connection");
	for (uint32_t k = 0; k < m->world; k++) {
		struct msg a;

		if (read_msg(m, fd, &a, deadline) || a.type != MSG_ADDR || a.a >= m->world)
			return fail(m, "bootstrap: no address list from the root%s (another rank "
				    "missing, or the root gave up)", *m->stop ? " before the stop" : "");
		m->ip[a.a] = a.b;
		m->port[a.a] = (uint16_t)a.c;
	}
	for (uint32_t r = 1; r < m->rank; r++) {
		char who[32];

		snprintf(who, sizeof(who), "rank %u", r);
		if ((m->fd[r] = connect_to(m, m->ip[r], m->port[r], deadline, who)) < 0)
			return -1;
		if (send_msg(m->fd[r], &(struct msg){.type = MSG_HELLO, .a = m->rank,
						     .b = m->world}))
			return fail(m, "bootstrap: rank %u closed the connection", r);
	}
	for (uint32_t k = m->rank + 1; k < m->world; k++) {
		struct msg h;
		uint32_t from;
		int f = accept_hello(m, &h, &from, deadline);

		if (f < 0)
			return missing(m, m->rank + 1, m->world - 1, "mesh");
		if (check_hello(m, &h, m->rank + 1, m->world - 1)) {
			close(f);
			return -1;
		}
		m->fd[h.a] = f;
	}
	return 0;
}

static int
parse_root(struct mesh *m, const char *root, uint32_t *ip, uint16_t *port)
{
	char host[256];
	const char *colon = strrchr(root, ':');
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	char *end;
	unsigned long p;

	if (!colon || colon == root || (size_t)(colon - root) >= sizeof(host))
		return fail(m, "--root: expected HOST:PORT, got '%s'", root);
	p = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || p == 0 || p > 65535)
		return fail(m, "--root: expected a port 1..65535 after ':', got '%s'", colon + 1);
	memcpy(host, root, (size_t)(colon - root));
	host[colon - root] = 0;
	if (getaddrinfo(host, NULL, &hints, &res) || res == NULL)
		return fail(m, "--root: cannot resolve '%s'", host);
	*ip = ntohl(((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr);
	freeaddrinfo(res);
	*port = (uint16_t)p;
	return 0;
}

int
mesh_open(struct mesh *m, uint32_t rank, uint32_t world, const char *root,
	  uint64_t timeout_ms, volatile sig_atomic_t *stop)
{
	uint64_t deadline = et_mono_ms() + timeout_ms;
	uint32_t ip;
	uint16_t port;

	memset(m, 0, sizeof(*m));
	m->rank = rank;
	m->world = world;
	m->stop = stop;
	m->listen_fd = -1;
	m->fd = malloc(world * sizeof(*m->fd));
	m->buf = calloc(world, sizeof(*m->buf));
	m->have = calloc(world, sizeof(*m->have));
	m->may_leave = calloc(world, sizeof(*m->may_leave));
	m->ip = calloc(world, sizeof(*m->ip));
	m->port = calloc(world, sizeof(*m->port));
	if (!m->fd || !m->buf || !m->have || !m->may_leave || !m->ip || !m->port)
		return fail(m, "out of memory");
	for (uint32_t r = 0; r < world; r++)
		m->fd[r] = -1;
	if (parse_root(m, root, &ip, &port))
		return -1;
	if (world == 1)
		return 0;
	if (rank == 0 ? root_side(m, port, deadline) : rank_side(m, ip, port, deadline))
		return -1;
	close(m->listen_fd);
	m->listen_fd = -1;
	return 0;
}

int
mesh_send(struct mesh *m, uint32_t to, const struct msg *x)
{
	if (to >= m->world || m->fd[to] < 0 || send_msg(m->fd[to], x)) {
		m->lost = true;
		return fail(m, "rank %u: the connection to rank %u is gone", m->rank, to);
	}
	return 0;
}

int
mesh_recv(struct mesh *m, uint32_t *from, struct msg *x)
{
	for (uint32_t k = 0; k < m->world; k++) {
		uint32_t r = (m->next + k) % m->world;

		if (m->fd[r] < 0)
			continue;
		ssize_t n = recv(m->fd[r], m->buf[r] + m->have[r], MSG_LEN - m->have[r],
				 MSG_DONTWAIT);

		if (n == 0 && m->may_leave[r] && m->have[r] == 0) {
			close(m->fd[r]);
			m->fd[r] = -1;
			continue;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			m->lost = true;
			return fail(m, "rank %u: lost the connection to rank %u (%s)", m->rank, r,
				    n == 0 ? "it closed" : strerror(errno));
		}
		if (n > 0 && (m->have[r] += (uint32_t)n) == MSG_LEN) {
			decode(m->buf[r], x);
			m->have[r] = 0;
			*from = r;
			m->next = r; /* a rank with more to say is read on first */
			return 1;
		}
	}
	return 0;
}

void
mesh_may_leave(struct mesh *m, uint32_t r)
{
	if (r < m->world)
		m->may_leave[r] = 1;
}

void
mesh_close(struct mesh *m)
{
	if (m->fd == NULL) /* never opened */
		return;
	for (uint32_t r = 0; m->fd && r < m->world; r++)
		if (m->fd[r] >= 0)
			close(m->fd[r]);
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	free(m->fd);
	free(m->buf);
	free(m->have);
	free(m->may_leave);
	free(m->ip);
	free(m->port);
	m->fd = NULL;
	m->buf = NULL;
	m->have = NULL;
}
