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
