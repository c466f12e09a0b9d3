/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's connection: the peer's parameters (by hand, in our TCP
 * exchange or in an RDMA tool's), its MAC (ARP), our QPs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/et_worker.h"
#include "topo/et_path.h"
#include "et_cli.h"
#include "node.h"

/* While we wait on TCP (no lane runs then): every lane's queue. */
static void
poll_port(void *ctx)
{
	struct node *n = ctx;

	for (uint32_t k = 0; k < n->nics_open; k++)
		et_nic_poll(&n->lane[k].nic, et_tsc_ns());
	if (n->cm)
		cm_poll(n);
}

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

/* The peer's MAC: a known one (--peer mac=, or the TCP exchange) becomes a
 * static ARP entry; otherwise ask by ARP for up to 3 s, polling the NIC
 * (which also answers the peer's own requests and takes its packets), and
 * fall back to broadcast when nobody answers.  SIGINT stops the asking,
 * not the node: what came in meanwhile is reported. */
static void
resolve_peer(struct et_nic *nic, struct et_arp *arp, struct peer *them, bool ask)
{
	uint64_t until = et_tsc_ns() + 3000000000ull, next = 0;
	char ip[INET_ADDRSTRLEN];
	const uint8_t *m;

	if (!ask) {
		if (et_arp_set_static(arp, them->ip, them->mac.addr_bytes))
			et_cli_error("ARP: no room for a static entry");
		return;
	}
	while (!node_stop && et_tsc_ns() < until) {
		uint64_t t = et_tsc_ns();

		if (t >= next) {
			et_nic_arp_request(nic, them->ip, t);
			next = t + 200000000ull;
		}
		et_nic_poll(nic, t);
		m = et_arp_lookup(arp, them->ip);
		if (m) {
			memcpy(them->mac.addr_bytes, m, 6);
			et_info("ARP: %s is at %02x:%02x:%02x:%02x:%02x:%02x",
				ipv4_str(them->ip, ip), m[0], m[1], m[2], m[3], m[4], m[5]);
			return;
		}
	}
	if (node_stop)
		return;
	et_warn("ARP: no answer from %s in 3 s, sending to broadcast", ipv4_str(them->ip, ip));
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

static int
create_qps(struct node *n)
{
	const struct opts *o = &n->o;

	for (uint32_t k = 0; k < o->workers; k++)
		n->lane[k].host.gw_mac = n->them.mac;
	for (uint32_t i = 0; i < o->qps; i++) {
		struct et_qp_attr a;
		bool tool = o->oob == OOB_PERFTEST;

		qp_attr(n, i, &a);
		a.dest_qpn = tool ? n->them_qp[i].qpn : n->them.qpn_base + i;
		a.rq_psn = tool ? n->them_qp[i].psn : n->them.psn;
		/* the peer's responder resources bound our READs (as perftest) */
		a.max_rd_atomic = (uint8_t)RTE_MIN(255u, tool ? n->them_qp[i].rd_atomic
							      : n->them.rd_atomic);
		n->qp[i] = et_host_qp_create(&lane_of(n, i)->host, &a);
		if (!n->qp[i] || et_qp_ready(n->qp[i]))
			return et_cli_error("cannot create QP %u", i);
	}
	/* perftest's receives are posted before each size's sync message */
	if (!is_perftest(o) && (o->mode == MODE_SEND_BW || o->mode == MODE_PINGPONG))
		post_recvs(n, UINT64_MAX);
	telemetry_show_qps(n->qp, o->qps);
	return 0;
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

/* Ready to receive: our QPs in RTS with their receives posted, on a started
 * port; only then do we say who we are, for a peer that has our parameters
 * may send at once. */
static int
get_ready(struct node *n)
{
	if (create_qps(n))
		return -1;
	print_local(n);
	return 0;
}

/* The peer's MAC (resolve_peer()); our QPs, made before it was known,
 * send to it from now on. */
static void
learn_peer_mac(struct node *n, bool ask)
{
	resolve_peer(&n->lane[0].nic, &n->arp, &n->them, ask);
	for (uint32_t k = 0; ask && k < n->o.workers; k++)
		n->lane[k].host.gw_mac = n->them.mac;
	for (uint32_t i = 0; ask && i < n->o.qps; i++)
		et_qp_set_dest_mac(n->qp[i], &n->them.mac);
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

/* --peer: the peer's parameters by hand; ours printed once the QPs exist,
 * so a peer started on them finds us ready.  ARP holds back only what we
 * send: our QPs take the peer's packets while we ask. */
static int
connect_by_hand(struct node *n)
{
	const struct opts *o = &n->o;

	if (parse_peer(o->peer, &n->me, &n->them) || get_ready(n) || wait_link_up(n))
		return -1;
	learn_peer_mac(n, !peer_has_mac(o->peer));
	return 0;
}

/* Ours: the client's line, then the server's once the server is ready.
 * (The client cannot be ready before it has the server's QPNs and PSN;
 * it need not be: the server sends only answers.) */
static int
connect_ethereal(struct node *n)
{
	const struct opts *o = &n->o;

	if ((!o->server && oob_ethereal_send(&n->oob, &n->me)) ||
	    oob_ethereal_recv(&n->oob, &n->them))
		return n->oob.why ? exchange_failed(n, "the parameters") : -1;
	if (n->them.nqp != o->qps || n->them.size != o->size || n->them.mtu != o->mtu) {
		if (o->server) /* the client says so too */
			(void)oob_ethereal_send(&n->oob, &n->me);
		return et_cli_error("the peer runs --qps %u --size %u --mtu %u; give both the same",
				    n->them.nqp, n->them.size, n->them.mtu);
	}
	if (get_ready(n))
		return -1;
	learn_peer_mac(n, false);
	if (o->server && oob_ethereal_send(&n->oob, &n->me))
		return exchange_failed(n, "our parameters");
	return 0;
}

/* ibv_rc_pingpong's: the client's message, the server's once it is ready
 * and knows the client's MAC, then the client's "done": it may start. */
static int
connect_pingpong(struct node *n)
{
	const struct opts *o = &n->o;
	char msg[ET_PINGPONG_MSG_LEN], done[ET_PINGPONG_DONE_LEN] = "done";

	if (!o->server) {
		oob_tool_format(OOB_PINGPONG, &n->me, msg);
		if (oob_write(&n->oob, msg, sizeof(msg)))
			return exchange_failed(n, "our address message");
	}
	if (oob_read(&n->oob, msg, sizeof(msg)))
		return exchange_failed(n, "the peer's address message");
	if (oob_tool_parse(OOB_PINGPONG, msg, sizeof(msg), &n->me, &n->them) || get_ready(n))
		return -1;
	learn_peer_mac(n, true);
	if (o->server) {
		oob_tool_format(OOB_PINGPONG, &n->me, msg);
		if (oob_write(&n->oob, msg, sizeof(msg)))
			return exchange_failed(n, "our address message");
	}
	if (o->server ? oob_read(&n->oob, done, sizeof(done)) : oob_write(&n->oob, done, sizeof(done)))
		return exchange_failed(n, "the client's \"done\"");
	return 0;
}

/* perftest's: the MTU (the smaller), then the address messages (one
 * per QP, N of them; all alike but for the QP) at the tool's points before
 * the test: write_bw N, N, 1; send_bw and send_lat N, 1, N (then one
 * before each size, run.c); write_lat 1, N, N, 1.  Our QPs are made once
 * the first round is in (the tools connect theirs then), before our last
 * message of it goes out. */
static int
perftest_ready(struct node *n)
{
	if (get_ready(n))
		return -1;
	learn_peer_mac(n, true);
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

static int
connect_perftest(struct node *n)
{
	const struct opts *o = &n->o;

	n->oob.why = NULL;
	if (oob_perftest_hello(&n->oob, o->server, &n->o.mtu))
		return n->oob.why ? exchange_failed(n, "the opening (version, page, MTU)") : -1;
	n->them.mtu = n->me.mtu = o->mtu;
	return perftest_rounds(n, perftest_ready);
}

/* The peer's parameters, its MAC, our QPs: by hand (--peer), in our
 * dialect, or in a tool's.  Each side is ready to receive before the peer
 * can have the parameters that let it send; ARP holds back only sending. */
int
connect_peer(struct node *n)
{
	const struct opts *o = &n->o;

	n->oob = (struct oob){.fd = -1, .idle = poll_port, .ctx = n, .stop = &node_stop,
			      .timeout_ms = 60000};
	if (o->peer)
		return connect_by_hand(n);
	if (o->oob == OOB_CM)
		return cm_connect_peer(n);
	/* listen first (a harness starts the client once the server says it
	 * waits), then wait for the link: a memif server's comes up with its
	 * client */
	if (oob_open(&n->oob, o->server, o->client, o->oob_port) || wait_link_up(n))
		return -1;
	switch (o->oob) {
	case OOB_ETHEREAL: return connect_ethereal(n);
	case OOB_PINGPONG: return connect_pingpong(n);
	default: return connect_perftest(n);
	}
}
