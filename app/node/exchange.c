/* SPDX-License-Identifier: BSD-3-Clause
 * What every way of connecting shares (connect.c's TCP dialects, cm.c's
 * RDMA CM): our QPs' attributes and parameters, the receives posted, and
 * perftest's address messages (over TCP, or in SENDs after RDMA CM).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topo/et_path.h"
#include "et_cli.h"
#include "node.h"

/* A SEND lands in the receive buffer of its QP; in ping-pong, the second
 * half of the buffer (the first is what we send); in perftest's latency
 * tests, the receive area after the send area.  A QP posts at most
 * recv_left more (perftest's peer sends exactly --iters: none left over
 * for the next size of --all). */
void
post_recv(struct node *n, uint32_t i)
{
	uint64_t off = n->o.mode == MODE_PINGPONG ? (n->o.server ? 0 : n->o.size)
		     : is_lat(n->o.mode) ? n->stride : (uint64_t)i * n->stride;
	struct et_recv_wr rw = {.wr_id = i, .addr = n->buf + off, .length = n->size,
				.lkey = n->key};

	if (n->recv_left[i] == 0)
		return;
	if (n->recv_left[i] != UINT64_MAX)
		n->recv_left[i]--;
	et_qp_post_recv(n->qp[i], &rw);
}

/* DEPTH receives per QP (fewer if per_qp is smaller), per_qp in all. */
void
post_recvs(struct node *n, uint64_t per_qp)
{
	for (uint32_t i = 0; i < n->o.qps; i++) {
		n->recv_left[i] = per_qp;
		for (int k = 0; k < DEPTH; k++)
			post_recv(n, i);
	}
}

/* What QP i of ours is, whoever its peer: ours, the peer's IP; the peer's
 * QPN and PSN come later (by hand, an exchange, RDMA CM). */
void
qp_attr(const struct node *n, uint32_t i, struct et_qp_attr *a)
{
	const struct opts *o = &n->o;

	et_qp_attr_default(a);
	a->dest_ip = n->them.ip;
	a->mtu = o->mtu;
	a->sq_psn = n->me.psn;
	a->rq_psn = n->me.psn; /* RDMA CM: what our REQ or REP says we expect */
	a->max_send_wr = 64;
	a->max_recv_wr = 64;
	/* ucmatose's peer sends --iters at once, every receive posted before */
	while (o->mode == MODE_UCMATOSE && a->max_recv_wr < o->iters)
		a->max_recv_wr *= 2;
	a->max_dest_rd_atomic = NODE_RD_ATOMIC;
	a->retry_cnt = 6; /* a test tool must end: 7 would retry forever */
	a->path_id = et_path_make((uint8_t)(i % o->paths), 0);
	a->rto_ns = (uint64_t)o->rto_ms * 1000000;
	/* QP i is number i: a lane's NIC knows by it whose frame it is */
	a->qpn = n->me.qpn_base + i;
}

/* Our parameters, as --peer takes them. */
void
print_local(const struct node *n)
{
	const struct opts *o = &n->o;
	const uint8_t *m = n->me.mac.addr_bytes;
	char ip[INET_ADDRSTRLEN];

	et_info("%s on %s, %s, local: mac=%02x:%02x:%02x:%02x:%02x:%02x,"
		"ip=%s,qpn=0x%x,psn=0x%x,rkey=0x%x,addr=0x%" PRIx64,
		o->server ? "server" : "client", o->port, mode_names[o->mode], m[0], m[1], m[2],
		m[3], m[4], m[5], ipv4_str(n->me.ip, ip), n->me.qpn_base, n->me.psn, n->me.rkey,
		n->me.addr);
}

/* perftest's tools by our mode: what the peer should be running. */
static const char *
tool_name(enum mode m)
{
	static const char *const names[] = {[MODE_WRITE_BW] = "ib_write_bw",
					    [MODE_SEND_BW] = "ib_send_bw",
					    [MODE_WRITE_LAT] = "ib_write_lat",
					    [MODE_SEND_LAT] = "ib_send_lat",
					    [MODE_PINGPONG] = "ibv_rc_pingpong",
					    [MODE_READ_BW] = "ib_read_bw",
					    [MODE_READ_LAT] = "ib_read_lat",
					    [MODE_ATOMIC_BW] = "ib_atomic_bw"};
	return names[m];
}

/* "out-of-band exchange failed at STEP: WHY", and in a tool's dialect what
 * the peer must run: a tool in another mode falls out of step here. */
int
exchange_failed(struct node *n, const char *step)
{
	if (node_stop)
		return -1;
	if (is_perftest(&n->o))
		return et_cli_error("perftest exchange failed at %s: %s (the peer must run %s "
				    "with -q %u%s%s; a tool in another mode falls out of step)",
				    step, n->oob.why ? n->oob.why : "?", tool_name(n->o.mode),
				    n->o.qps, n->o.all ? " -a" : "", n->o.oob == OOB_CM ? " -R" : "");
	return et_cli_error("out-of-band exchange failed at %s: %s", step,
			    n->oob.why ? n->oob.why : "?");
}

/* Our address message for QP i (perftest): its QPN, and the part of our
 * buffer the peer writes to (the receive area in the latency tests). */
static void
perftest_mine(const struct node *n, uint32_t i, char out[ET_PERFTEST_MSG_LEN])
{
	struct peer me = n->me;

	me.qpn_base = n->me.qpn_base + i;
	me.addr = (uintptr_t)n->buf + (is_lat(n->o.mode) ? n->stride : (uint64_t)i * n->stride);
	oob_tool_format(n->o.oob, &me, out);
}

/* The peer's message for its QP i: the first names the QP, later ones
 * must name the same (a peer with more QPs than ours sends QP 1's where we
 * expect QP 0's again; one with fewer, QP 0's where we expect QP 1's). */
static int
perftest_learn(struct node *n, uint32_t i, const struct peer *p)
{
	struct peer_qp *q = &n->them_qp[i];

	if (q->qpn == 0) {
		for (uint32_t k = 0; k < i; k++)
			if (n->them_qp[k].qpn == p->qpn_base)
				return et_cli_error("perftest: the peer's QPN 0x%x came again where "
						    "our QP %u's peer belongs: it runs fewer QPs "
						    "than our --qps %u (its -q)", p->qpn_base, i,
						    n->o.qps);
		*q = (struct peer_qp){.qpn = p->qpn_base, .psn = p->psn, .rkey = p->rkey,
				      .addr = p->addr, .rd_atomic = p->rd_atomic};
		return 0;
	}
	if (q->qpn != p->qpn_base)
		return et_cli_error("perftest: the peer's message for QP %u names QPN 0x%x, "
				    "before 0x%x: it runs more QPs than our --qps %u "
				    "(give --qps as its -q)", i, p->qpn_base, q->qpn, n->o.qps);
	return 0;
}

/* count of perftest's address messages, one per QP when count is --qps
 * (else QP 0's): the client's first, then the server's.  ready, when
 * given, runs once the peer's last one is in, before our last goes out. */
int
perftest_keys(struct node *n, uint32_t count, int (*ready)(struct node *n))
{
	char mine[ET_PERFTEST_MSG_LEN], theirs[ET_PERFTEST_MSG_LEN], step[96];
	/* text on TCP; -R's SENDs carry it binary */
	size_t len = n->o.oob == OOB_CM ? ET_PERFTEST_BIN_LEN : ET_PERFTEST_MSG_LEN;
	struct peer them;

	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = count == n->o.qps ? k : 0;

		snprintf(step, sizeof(step), "address message %u of %u %s", k + 1, count, n->phase);
		perftest_mine(n, i, mine);
		if ((!n->o.server && oob_write(&n->oob, mine, len)) ||
		    oob_read(&n->oob, theirs, len))
			return exchange_failed(n, step);
		if (oob_tool_parse(n->o.oob, theirs, len, &n->me, &them) ||
		    perftest_learn(n, i, &them))
			return -1;
		/* the MAC is ours to learn (ARP), not the message's: after the
		 * first message, keep what ARP found */
		if (n->them.ip != 0)
			them.mac = n->them.mac;
		n->them = them;
		if (k + 1 == count && ready && ready(n))
			return -1;
		if (n->o.server && oob_write(&n->oob, mine, len))
			return exchange_failed(n, step);
	}
	return 0;
}

/* The address messages before the test, ready() once the first round is
 * in (perftest over TCP and over RDMA CM alike). */
int
perftest_rounds(struct node *n, int (*ready)(struct node *n))
{
	const struct opts *o = &n->o;
	int r;

	snprintf(n->phase, sizeof(n->phase), "before the test");
	switch (o->mode) {
	case MODE_WRITE_BW:
	case MODE_READ_BW:
	case MODE_ATOMIC_BW:
		r = perftest_keys(n, o->qps, ready) || perftest_keys(n, o->qps, NULL) ||
		    perftest_keys(n, 1, NULL);
		break;
	case MODE_WRITE_LAT:
	case MODE_READ_LAT:
		r = perftest_keys(n, 1, NULL) || perftest_keys(n, o->qps, ready) ||
		    perftest_keys(n, o->qps, NULL) || perftest_keys(n, 1, NULL);
		break;
	default: /* send_bw, send_lat */
		r = perftest_keys(n, o->qps, ready) || perftest_keys(n, 1, NULL) ||
		    perftest_keys(n, o->qps, NULL);
		break;
	}
	return r ? -1 : 0;
}

/* ---- receives posted before a connection is asked for or accepted ---- */

/* ucmatose: QP i's messages land at i * size (all in the same place, as
 * the tool's), and leave from the send area after every QP's receive area. */
void
ucmatose_recvs(struct node *n, uint32_t i)
{
	for (uint64_t k = 0; k < n->o.iters; k++) {
		struct et_recv_wr rw = {.wr_id = i, .addr = n->buf + (uint64_t)i * n->o.size,
					.length = n->o.size, .lkey = n->key};

		et_qp_post_recv(n->qp[i], &rw);
	}
}

/* rping's messages land in two slots after its buffers, one posted each
 * (the tool answers each message before the next). */
uint8_t *
rping_slot(const struct node *n, uint32_t k)
{
	return n->buf + 2 * (uint64_t)n->o.size + 16 * k;
}

void
rping_recv(struct node *n, uint32_t k)
{
	struct et_recv_wr rw = {.wr_id = k, .addr = rping_slot(n, k), .length = 16,
				.lkey = n->key};

	et_qp_post_recv(n->qp[0], &rw);
}

void
rping_recvs(struct node *n)
{
	rping_recv(n, 0);
	rping_recv(n, 1);
}
