/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's management connection: one TCP socket on which the two
 * sides trade their parameters before the test, in one of three dialects
 * (ours, ibv_rc_pingpong's, perftest's), and a last word after it; or,
 * with --oob cm, no socket: SENDs on a QP that RDMA CM connected, as
 * perftest -R trades its messages (cm.c carries them).
 *
 * Waiting on the socket never stops the port: the idle callback runs
 * between short waits, so ARP keeps being answered (a kernel RoCE peer
 * resolves our MAC while we wait for its reply) and data still in flight
 * is acknowledged.
 */
#ifndef ET_NODE_OOB_H
#define ET_NODE_OOB_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>

#include "host/et_oob_tools.h"

enum oob_dialect { OOB_ETHEREAL, OOB_PINGPONG, OOB_PERFTEST, OOB_CM };

struct oob;

/* A message transport in place of the socket: one write is one message,
 * one read takes one message of exactly n bytes (-1, o->why set,
 * otherwise); pending: a message waits to be read. */
struct oob_msg_ops {
	int (*write)(struct oob *o, const void *buf, size_t n);
	int (*read)(struct oob *o, void *buf, size_t n);
	bool (*pending)(struct oob *o);
};

struct oob {
	int fd;
	const struct oob_msg_ops *msg; /* NULL: the socket fd */
	void *msg_ctx;
	void (*idle)(void *ctx);
	void *ctx;
	volatile sig_atomic_t *stop;
	uint64_t timeout_ms;  /* any one wait */
	const char *why;      /* what ended the last failed read or write */
	/* the exchange's last words: a peer that closes once it has them
	 * may not have acknowledged them (its close says it has them) */
	bool closing;
};

/* What one side tells the other (in our dialect all of it; the tools'
 * dialects carry QPN, PSN, GID and, perftest, rkey and address). */
struct peer {
	struct rte_ether_addr mac;  /* all-ones when unknown: ask ARP */
	uint32_t ip, qpn_base, nqp, psn, rkey, size, mtu;
	uint32_t rd_atomic;         /* READs and atomics it answers at once
				     * (perftest's out_reads) */
	uint64_t addr;
};

/* One QP of the peer, as a perftest address message gives it. */
struct peer_qp {
	uint32_t qpn, psn, rkey, rd_atomic;
	uint64_t addr;
};

/* Listen on port and take one connection (server), or connect to host:port,
 * retrying while the server is not up yet (client).  -1 with a message. */
int oob_open(struct oob *o, bool server, const char *host, uint16_t port);
void oob_close(struct oob *o);

/* There is a management connection (a socket, or --oob cm's QP). */
static inline bool
oob_is_open(const struct oob *o)
{
	return o->fd >= 0 || o->msg != NULL;
}

/* Something from the peer waits to be read (never blocks). */
bool oob_pending(struct oob *o);

/* All n bytes, or -1 (peer gone, timeout, stop: o->why says which). */
int oob_write(struct oob *o, const void *buf, size_t n);
int oob_read(struct oob *o, void *buf, size_t n);
/* One '\n'-terminated line, without the '\n'. */
int oob_read_line(struct oob *o, char *buf, size_t cap);

/* Our dialect: one line each way, the client's first (the server answers
 * once it is ready for what the client may then send). */
int oob_ethereal_send(struct oob *o, const struct peer *me);
int oob_ethereal_recv(struct oob *o, struct peer *them);

/* A tool's message into them: IP from the GID, QPN, PSN (rkey and address
 * for perftest); size, MTU and QP count stay ours (the tools do not say).
 * OOB_CM: perftest -R's binary one (ET_PERFTEST_BIN_LEN bytes). */
int oob_tool_parse(enum oob_dialect d, const char *msg, size_t len, const struct peer *me,
		   struct peer *them);
void oob_tool_format(enum oob_dialect d, const struct peer *me, char *out);

/* One exchange of n bytes each way, as the tools do it: the client writes
 * first, the server reads first. */
int oob_xchg(struct oob *o, bool server, const void *mine, void *theirs, size_t n);

/* perftest's opening: version, page size, cache line, MTU.  mtu: ours in,
 * the smaller of the two out (as perftest picks it). */
int oob_perftest_hello(struct oob *o, bool server, uint32_t *mtu);

/* What perftest's write_bw client reports to its server after the test
 * (the server prints it); MiB/s and Mpps.  The server's, both ways, is
 * whatever its memory held (ib_write_bw's server ran no test): a client
 * gets zeros.  -1: the exchange failed (o->why set, nothing said) or,
 * server, what came is not a report (said; o->why NULL). */
int oob_perftest_report(struct oob *o, bool server, const struct et_perftest_report *mine,
			struct et_perftest_report *theirs);

/* perftest's "done", both ways, before closing: closing with its word
 * unread would reset the connection under its own write. */
void oob_perftest_bye(struct oob *o);

#endif /* ET_NODE_OOB_H */
