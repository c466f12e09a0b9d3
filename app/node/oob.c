/* SPDX-License-Identifier: BSD-3-Clause
 * The management connection: blocking in spirit, but every wait is a 1 ms
 * poll() followed by the idle callback, so the DPDK port keeps running.
 * PMDs such as net_tap use signals (SIGIO): system calls see EINTR.
 */
#include "oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "et_cli.h"

/* Until fd is ready for events: 0; -1 on timeout or stop (o->why). */
static int
wait_fd(struct oob *o, int fd, short events)
{
	uint64_t until = et_mono_ms() + o->timeout_ms;
	static char why[64];

	while (!*o->stop && et_mono_ms() < until) {
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, 1);

		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR) {
			o->why = strerror(errno);
			return -1;
		}
		if (o->idle)
			o->idle(o->ctx);
	}
	snprintf(why, sizeof(why), "nothing from the peer for %" PRIu64 " s", o->timeout_ms / 1000);
	o->why = *o->stop ? "interrupted" : why;
	return -1;
}

static int
open_server(struct oob *o, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_ANY)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, c = -1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		et_cli_error("cannot listen on TCP %u: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	et_info("waiting for the peer on TCP %u", port);
	if (wait_fd(o, fd, POLLIN) == 0)
		do {
			c = accept(fd, NULL, NULL);
		} while (c < 0 && errno == EINTR);
	else if (!*o->stop)
		et_cli_error("no peer connected to TCP %u within %" PRIu64 " s", port,
			     o->timeout_ms / 1000);
	close(fd);
	return c;
}

static int
open_client(struct oob *o, const char *host, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	uint64_t until = et_mono_ms() + o->timeout_ms;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		return et_cli_bad("--client", "an IPv4 address", host);
	}
	/* the server may not listen yet; a refused connect leaves the socket
	 * unusable, so each try starts afresh */
	while (!*o->stop && et_mono_ms() < until) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return -1;
		for (;;) {
			if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
				return fd;
			if (errno != EINTR)
				break;
		}
		close(fd);
		for (int k = 0; k < 100 && !*o->stop; k++) { /* 100 ms, port running */
			usleep(1000);
			if (o->idle)
				o->idle(o->ctx);
		}
	}
	et_cli_error("cannot reach %s TCP %u", host, port);
	return -1;
}

int
oob_open(struct oob *o, bool server, const char *host, uint16_t port)
{
	o->fd = server ? open_server(o, port) : open_client(o, host, port);
	return o->fd < 0 ? -1 : 0;
}

void
oob_close(struct oob *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

bool
oob_pending(struct oob *o)
{
	struct pollfd p = {.fd = o->fd, .events = POLLIN};

	if (o->msg)
		return o->msg->pending(o);
	return o->fd >= 0 && poll(&p, 1, 0) > 0;
}

int
oob_write(struct oob *o, const void *buf, size_t n)
{
	const char *p = buf;

	if (o->msg)
		return o->msg->write(o, buf, n);
	while (n) {
		ssize_t w = send(o->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
			if (errno == EAGAIN && wait_fd(o, o->fd, POLLOUT))
				return -1;
			continue;
		}
		if (w <= 0) {
			o->why = w < 0 && errno == EPIPE ? "the peer closed the connection"
			       : w < 0 ? strerror(errno) : "nothing written";
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
oob_read(struct oob *o, void *buf, size_t n)
{
	char *p = buf;

	if (o->msg)
		return o->msg->read(o, buf, n);
	while (n) {
		ssize_t r;

		if (wait_fd(o, o->fd, POLLIN))
			return -1;
		r = recv(o->fd, p, n, MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			o->why = r == 0 ? "the peer closed the connection" : strerror(errno);
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
oob_read_line(struct oob *o, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		if (oob_read(o, buf + n, 1))
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

int
oob_ethereal_send(struct oob *o, const struct peer *me)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "ETHEREAL1 %02x:%02x:%02x:%02x:%02x:%02x %u %u %u %u %u %u %u %" PRIu64
			 " %u\n",
			 me->mac.addr_bytes[0], me->mac.addr_bytes[1], me->mac.addr_bytes[2],
			 me->mac.addr_bytes[3], me->mac.addr_bytes[4], me->mac.addr_bytes[5],
			 me->ip, me->qpn_base, me->nqp, me->psn, me->rkey, me->size, me->mtu, me->addr,
			 me->rd_atomic);

	return oob_write(o, line, (size_t)n);
}

int
oob_ethereal_recv(struct oob *o, struct peer *them)
{
	char line[256];
	unsigned int m[6];

	if (oob_read_line(o, line, sizeof(line)))
		return -1;
	if (sscanf(line, "ETHEREAL1 %x:%x:%x:%x:%x:%x %u %u %u %u %u %u %u %" SCNu64 " %u", &m[0],
		   &m[1], &m[2], &m[3], &m[4], &m[5], &them->ip, &them->qpn_base, &them->nqp,
		   &them->psn, &them->rkey, &them->size, &them->mtu, &them->addr,
		   &them->rd_atomic) != 15) {
		et_cli_error("the peer does not speak our exchange: '%.60s' "
			     "(an RDMA tool? give --oob pingpong or --oob perftest)", line);
		return -1;
	}
	for (int i = 0; i < 6; i++)
		them->mac.addr_bytes[i] = (uint8_t)m[i];
	return 0;
}

void
oob_tool_format(enum oob_dialect d, const struct peer *me, char *out)
{
	struct et_oob_dest x = {.qpn = me->qpn_base, .psn = me->psn, .rkey = me->rkey,
				.vaddr = me->addr, .out_reads = (uint16_t)me->rd_atomic};

	et_gid_from_ipv4(me->ip, x.gid);
	if (d == OOB_PINGPONG)
		et_pingpong_format(&x, out);
	else if (d == OOB_CM)
		et_perftest_bin_format(&x, (uint8_t *)out);
	else
		et_perftest_format(&x, out);
}

int
oob_tool_parse(enum oob_dialect d, const char *msg, size_t len, const struct peer *me,
	       struct peer *them)
{
	struct et_oob_dest x;
	char err[160];
	int r = d == OOB_PINGPONG ? et_pingpong_parse(msg, len, &x, err, sizeof(err))
	      : d == OOB_CM ? et_perftest_bin_parse((const uint8_t *)msg, len, &x, err, sizeof(err))
			    : et_perftest_parse(msg, len, &x, err, sizeof(err));

	if (r) {
		et_cli_error("%s", err);
		return -1;
	}
	*them = *me;
	memset(&them->mac, 0xff, sizeof(them->mac));
	if (et_gid_to_ipv4(x.gid, &them->ip)) {
		et_cli_error("the peer's GID is not IPv4-mapped (::ffff:a.b.c.d): "
			     "give its RoCEv2 IPv4 GID index (-g / -x, 1 on rxe)");
		return -1;
	}
	them->qpn_base = x.qpn;
	them->psn = x.psn;
	them->rkey = x.rkey;
	them->addr = x.vaddr;
	them->rd_atomic = x.out_reads;
	return 0;
}

int
oob_xchg(struct oob *o, bool server, const void *mine, void *theirs, size_t n)
{
	if (server)
		return oob_read(o, theirs, n) || oob_write(o, mine, n) ? -1 : 0;
	return oob_write(o, mine, n) || oob_read(o, theirs, n) ? -1 : 0;
}

/* perftest's MTU on the wire: the verbs enum (256 -> 1 ... 4096 -> 5) as
 * one ASCII digit and a NUL. */
static char
mtu_digit(uint32_t mtu)
{
	char d = '1';

	while (mtu > 256) {
		mtu >>= 1;
		d++;
	}
	return d;
}

int
oob_perftest_hello(struct oob *o, bool server, uint32_t *mtu)
{
	/* the version perftest 4.5 speaks; >= 5.70 is what it requires */
	char ver[16] = "6.06", rver[17] = {0};
	uint32_t page = htonl(4096), line = htonl(64), rpage, rline;
	char m[2] = {mtu_digit(*mtu), '\0'}, rm[2];

	if (oob_xchg(o, server, ver, rver, 16))
		return -1;
	if (atof(rver) < 5.70) {
		et_cli_error("the peer speaks perftest version '%.16s'; "
			     "we speak 6.06 and need 5.70 or later", rver);
		return -1;
	}
	if (oob_xchg(o, server, &page, &rpage, 4) || oob_xchg(o, server, &line, &rline, 4) ||
	    oob_xchg(o, server, m, rm, 2))
		return -1;
	if (ntohl(rpage) > 65536) {
		et_cli_error("the peer's cycle buffer (%u bytes) is larger than ours "
			     "(64 KiB)", ntohl(rpage));
		return -1;
	}
	if (rm[0] < '1' || rm[0] > '5' || rm[1] != '\0') {
		et_cli_error("the peer's MTU message is not an MTU (%02x %02x)", (uint8_t)rm[0],
			     (uint8_t)rm[1]);
		return -1;
	}
	if (rm[0] < m[0])
		*mtu = 256u << (rm[0] - '1');
	return 0;
}

int
oob_perftest_report(struct oob *o, bool server, const struct et_perftest_report *mine,
		    struct et_perftest_report *theirs)
{
	uint8_t out[ET_PERFTEST_REPORT_LEN], in[ET_PERFTEST_REPORT_LEN];
	char err[200];

	/* five exchanges of 8 bytes, not one of 40: each side writes one
	 * field only after reading (server) or before reading (client) one */
	et_perftest_report_format(mine, out);
	o->why = NULL;
	for (int f = 0; f < 5; f++)
		if (oob_xchg(o, server, out + 8 * f, in + 8 * f, 8))
			return -1; /* o->why says why; the caller names the step */
	/* ib_write_bw's server sends its report uninitialised (it ran no test):
	 * only the client's is read */
	if (!server) {
		memset(theirs, 0, sizeof(*theirs));
		return 0;
	}
	if (et_perftest_report_parse(in, theirs, err, sizeof(err)))
		return et_cli_error("%s", err);
	return 0;
}

void
oob_perftest_bye(struct oob *o)
{
	char done[5] = "done", theirs[5];

	if (oob_write(o, done, sizeof(done)) == 0)
		(void)oob_read(o, theirs, sizeof(theirs)); /* or the peer's close */
}
