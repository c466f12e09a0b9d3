/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's connection: the peer's parameters (by hand, in our TCP
 * exchange or in an RDMA tool's), its MAC (ARP), our QPs.
 */
#include <stdio.h>
#include <string.h>

#include "host/et_worker.h"
#include "topo/et_path.h"
#include "et_cli.h"
#include "node.h"

static void
poll_port(void *ctx)
{
	struct node *n = ctx;

	et_nic_poll(&n->nic, et_tsc_ns());
}

/* A SEND lands in the receive buffer of its QP; in ping-pong, the second
 * half of the buffer (the first is what we send). */
void
post_recv(struct node *n, uint32_t i)
{
	uint64_t off = n->o.mode == MODE_PINGPONG ? (n->o.server ? 0 : n->o.size)
						   : (uint64_t)i * n->o.size;
	struct et_recv_wr rw = {.wr_id = i, .addr = n->buf + off, .length = n->o.size,
				.lkey = n->mr->key};

	et_qp_post_recv(n->qp[i], &rw);
}

/* The peer's MAC: a known one (--peer mac=, or the TCP exchange) becomes a
 * static ARP entry; otherwise ask by ARP for up to 3 s, polling the NIC
 * (which also answers the peer's own requests), and fall back to
 * broadcast when nobody answers. */
static int
resolve_peer(struct et_nic *nic, struct et_arp *arp, struct peer *them, bool ask)
{
	uint64_t until = et_tsc_ns() + 3000000000ull, next = 0;
	char ip[INET_ADDRSTRLEN];
	const uint8_t *m;

	if (!ask) {
		if (et_arp_set_static(arp, them->ip, them->mac.addr_bytes))
			et_cli_error("ARP: no room for a static entry");
		return 0;
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
			printf("ethereal-node: ARP: %s is at %02x:%02x:%02x:%02x:%02x:%02x\n",
			       ipv4_str(them->ip, ip), m[0], m[1], m[2], m[3], m[4], m[5]);
			fflush(stdout);
			return 0;
		}
	}
	if (node_stop)
		return -1;
	printf("ethereal-node: ARP: no answer from %s in 3 s, sending to broadcast\n",
	       ipv4_str(them->ip, ip));
	fflush(stdout);
	return 0;
}

static int
create_qps(struct node *n)
{
	const struct opts *o = &n->o;

	for (uint32_t i = 0; i < o->qps; i++) {
		struct et_qp_attr a;

		et_qp_attr_default(&a);
		a.dest_qpn = n->them.qpn_base + i;
		a.dest_mac = n->them.mac;
		a.dest_ip = n->them.ip;
		a.mtu = o->mtu;
		a.sq_psn = n->me.psn;
		a.rq_psn = n->them.psn;
		a.max_send_wr = 64;
		a.max_recv_wr = 64;
		a.retry_cnt = 6; /* a test tool must end: 7 would retry forever */
		a.path_id = et_path_make((uint8_t)(i % o->paths), 0);
		a.rto_ns = (uint64_t)o->rto_ms * 1000000;
		n->qp[i] = et_nic_qp_create(&n->nic, &a, &n->mrs, &n->scq, &n->rcq);
		if (!n->qp[i] || et_qp_ready(n->qp[i]))
			return et_cli_error("cannot create QP %u", i);
		if (o->mode == MODE_SEND_BW || o->mode == MODE_PINGPONG)
			for (int k = 0; k < DEPTH; k++)
				post_recv(n, i);
	}
	telemetry_show_qps(n->qp, o->qps);
	return 0;
}

/* One of perftest's address messages (all alike, each re-read). */
int
perftest_key(struct node *n)
{
	char mine[ET_PERFTEST_MSG_LEN], theirs[ET_PERFTEST_MSG_LEN];
	struct peer them;

	oob_tool_format(OOB_PERFTEST, &n->me, mine);
	if (oob_xchg(&n->oob, n->o.server, mine, theirs, sizeof(theirs))) {
		if (!node_stop)
			et_cli_error("out-of-band exchange with the peer failed");
		return -1;
	}
	if (oob_tool_parse(OOB_PERFTEST, theirs, sizeof(theirs), &n->me, &them))
		return -1;
	/* the MAC is ours to learn (ARP), not the message's: after the first
	 * message, keep what ARP found */
	if (n->them.ip != 0)
		them.mac = n->them.mac;
	n->them = them;
	return 0;
}

/* The peer's parameters, its MAC, our QPs: by hand (--peer), in our
 * dialect, or in a tool's.  The tools' servers connect their QP before they
 * answer and the clients send as soon as they have the answer, so our QPs
 * exist before the message that lets the peer send. */
int
connect_peer(struct node *n)
{
	const struct opts *o = &n->o;
	char msg[ET_PINGPONG_MSG_LEN]; /* perftest's go through perftest_key() */
	bool ask_arp = true;

	n->oob = (struct oob){.fd = -1, .idle = poll_port, .ctx = n, .stop = &node_stop,
			      .timeout_ms = 60000};
	if (o->peer) {
		if (parse_peer(o->peer, &n->me, &n->them))
			return -1;
		ask_arp = !peer_has_mac(o->peer);
	} else {
		if (oob_open(&n->oob, o->server, o->client, o->oob_port))
			return -1;
		if (o->oob == OOB_ETHEREAL) {
			if (oob_ethereal_exchange(&n->oob, &n->me, &n->them))
				goto failed;
			if (n->them.nqp != o->qps || n->them.size != o->size ||
			    n->them.mtu != o->mtu)
				return et_cli_error("the peer runs --qps %u --size %u --mtu %u; "
						    "give both the same", n->them.nqp, n->them.size,
						    n->them.mtu);
			ask_arp = false;
		} else if (o->oob == OOB_PINGPONG) {
			if (!o->server)
				oob_tool_format(OOB_PINGPONG, &n->me, msg);
			if ((!o->server && oob_write(&n->oob, msg, sizeof(msg))) ||
			    oob_read(&n->oob, msg, sizeof(msg)))
				goto failed;
			if (oob_tool_parse(OOB_PINGPONG, msg, sizeof(msg), &n->me, &n->them))
				return -1;
		} else {
			/* perftest: the MTU is negotiated (the smaller), then
			 * the first of identical address messages connects */
			if (oob_perftest_hello(&n->oob, o->server, &n->o.mtu))
				goto failed;
			n->them.mtu = n->me.mtu = o->mtu;
			if (perftest_key(n))
				return -1;
		}
	}
	if (resolve_peer(&n->nic, &n->arp, &n->them, ask_arp) || create_qps(n))
		return -1;
	if (o->oob == OOB_ETHEREAL || o->peer)
		return 0;
	if (o->oob == OOB_PERFTEST) {
		/* two more before the test; send_bw a third: the server's
		 * receives are posted */
		for (int k = o->mode == MODE_SEND_BW ? 3 : 2; k > 0; k--)
			if (perftest_key(n))
				return -1;
		return 0;
	}
	if (o->server) {
		oob_tool_format(OOB_PINGPONG, &n->me, msg);
		if (oob_write(&n->oob, msg, sizeof(msg)))
			goto failed;
	}
	/* the client's "done": it may start */
	char done[ET_PINGPONG_DONE_LEN] = "done";

	if (o->server ? oob_read(&n->oob, done, sizeof(done)) : oob_write(&n->oob, done, sizeof(done)))
		goto failed;
	return 0;
failed:
	if (!node_stop)
		et_cli_error("out-of-band exchange with the peer failed");
	return -1;
}
