/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's port and memory: the DPDK port, the NIC model on it,
 * ARP, the buffer and its region; and closing them in an order DPDK
 * 22.11's memif survives.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "et_app_eal.h"
#include "et_cli.h"
#include "link/et_capture.h"
#include "node.h"

/* Completions a lane's CQs hold: 4096, or ucmatose's every message (its
 * server takes the answers while it waits for its SENDs to complete),
 * up to 2^22. */
static uint32_t
cq_size(const struct opts *o)
{
	uint64_t want = o->mode == MODE_UCMATOSE ? (uint64_t)o->qps * o->iters : 0;
	uint32_t size = 4096;

	while (size < want && size < (1u << 22))
		size *= 2;
	return size;
}

/* A NIC and host per worker, each on its queue pair; with more than one,
 * a team (et_nic_team) that hands frames to the lane that holds their QP.
 * The port's --rate is shared; each lane's faults get their own seed. */
static int
open_lanes(struct node *n, const struct rte_ether_addr *mac)
{
	const struct opts *o = &n->o;
	struct rte_ether_addr bcast;

	/* frames go to broadcast until the peer's MAC is known */
	memset(&bcast, 0xff, sizeof(bcast));
	if (o->workers > 1 && et_nic_team_init(&n->team, o->workers, 1024, (int)rte_socket_id()))
		return et_cli_error("out of memory for %u workers' inboxes", o->workers);
	for (uint32_t k = 0; k < o->workers; k++) {
		struct lane *l = &n->lane[k];
		struct et_port q = et_port_queue(&n->port, (uint16_t)k);
		struct et_link_model lm = o->faults;

		lm.rate_bps = o->rate_bps / o->workers;
		lm.seed = o->faults.seed + k;
		l->n = n;
		l->k = k;
		/* perftest -R's exchange has a QP of its own, after the test's */
		if (et_nic_init(&l->nic, &q, &lm, n->mp, mac, o->ip, 0x100,
				o->qps + (o->oob == OOB_CM && is_perftest(o))))
			return et_cli_error("cannot set up the NIC model");
		n->nics_open++;
		l->nic.rx_loss_ppm = o->rx_loss_ppm;
		if (o->workers > 1)
			et_nic_join(&l->nic, &n->team, k);
		if (et_host_init(&l->host, &l->nic, &bcast, cq_size(o)))
			return et_cli_error("out of memory");
	}
	return 0;
}

/* Port, NIC, ARP, memory.  The port is started (what arrives once the link
 * is up waits in its queue) and polled from here on, also while we wait on
 * TCP: ARP is answered during the exchange. */
int
node_open(struct node *n)
{
	const struct opts *o = &n->o;
	struct rte_ether_addr mac;
	int r;

	n->mp = et_app_pool("node", 16383 * o->workers, ET_APP_MBUF_4K_FRAME);
	/* QP i's part starts at i * stride; perftest's small writes walk its
	 * cycle buffer (a page, 64 KiB at most), --all's sizes go to 8 MiB */
	n->size = o->all ? ALL_MIN_SIZE : o->size;
	n->stride = o->mode == MODE_ATOMIC_BW && !is_perftest(o) ? ATOMIC_STRIDE
		  : !is_perftest(o) ? o->size
		  : o->all || o->size > 65536 ? (o->all ? ALL_MAX_SIZE : o->size) : 65536;
	/* ping-pong and the latency tests: what we send, then what we receive;
	 * ucmatose: each QP's receive area, then each one's send area */
	bool two_areas = o->mode == MODE_PINGPONG || (is_perftest(o) && is_lat(o->mode));

	n->buf_len = n->stride * (two_areas ? 2 : o->mode == MODE_UCMATOSE ? 2 * o->qps : o->qps);
	if (o->mode == MODE_RPING) /* its two buffers, then its messages' slots */
		n->buf_len = 2 * n->stride + RPING_CTL;
	n->buf = calloc(1, n->buf_len);
	n->qp = calloc(o->qps, sizeof(*n->qp));
	n->them_qp = calloc(o->qps, sizeof(*n->them_qp));
	n->recv_left = calloc(o->qps, sizeof(*n->recv_left));
	if (!n->mp || !n->buf || !n->qp || !n->them_qp || !n->recv_left)
		return et_cli_error("out of memory");
	r = et_port_ethdev(&n->port, o->port, n->mp, 1024, (uint16_t)o->workers);
	if (r)
		return et_cli_error("--port: cannot start '%s': %s", o->port,
				    r == -E2BIG ? "it has fewer queue pairs than --workers" : strerror(-r));
	n->port_open = true;
	/* on a kernel tap the port's MAC is also the kernel interface's, which
	 * a bridge keeps for itself: --mac gives the host one of its own */
	if (o->mac)
		rte_ether_unformat_addr(o->mac, &mac);
	else
		rte_eth_macaddr_get(n->port.eth_port, &mac);
	if (open_lanes(n, &mac))
		return -1;
	if (o->pcap) {
		errno = 0;
		n->cap = et_capture_open(o->pcap, o->port);
		if (n->cap == NULL)
			return et_cli_error("--pcap: cannot write %s: %s", o->pcap,
					    errno ? strerror(errno) : "no memory");
		n->lane[0].nic.eg.cap = n->cap;
	}
	/* ARP on the control path, so kernel hosts on the segment can reach us;
	 * at most 100 frames/s out, bursts of 8 */
	et_arp_init(&n->arp, mac.addr_bytes, o->ip, 10000000, 8);
	n->lane[0].nic.arp = &n->arp;
	/* what a client sends, or a server's that the client reads; the
	 * latency tests' receive area stays zero (the peer's counter lands in
	 * its last byte), and so do the atomics' counters */
	if ((is_rd(o->mode) ? o->server && o->mode != MODE_ATOMIC_BW : !o->server) &&
	    o->mode != MODE_PINGPONG)
		for (uint64_t k = 0; k < (two_areas ? n->stride : n->buf_len); k++)
			n->buf[k] = test_pattern(k);
	/* each lane's table holds the one region, under the same key */
	for (uint32_t k = 0; k < o->workers; k++) {
		uint32_t key = et_host_reg(&n->lane[k].host, n->buf, n->buf_len,
					   ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE |
					   ET_ACCESS_REMOTE_READ | ET_ACCESS_REMOTE_ATOMIC);

		if (key == 0 || (k && key != n->key))
			return et_cli_error("cannot register %" PRIu64 " bytes", n->buf_len);
		n->key = key;
	}
	n->me = (struct peer){.mac = mac, .ip = o->ip, .qpn_base = 0x100, .nqp = o->qps,
			      .psn = 0x1000, .rkey = n->key, .size = o->size, .mtu = o->mtu,
			      .addr = (uintptr_t)n->buf, .rd_atomic = NODE_RD_ATOMIC};
	telemetry_show_nic(&n->lane[0].nic);
	return 0;
}

/* memif and tap come up a little after start: frames sent before are lost.
 * Waits at most 5 s. */
int
wait_link_up(struct node *n)
{
	if (et_port_await_link_up(&n->port, 5000, &node_stop))
		return et_cli_error("--port %s: the link is not up after 5 s", n->o.port);
	return 0;
}

/* The client stops its port first, then closes the TCP connection; the
 * server waits for that, then for its side of the link to go down (see
 * et_port_await_peer_gone), and only then stops. */
static void
await_client_gone(struct node *n)
{
	static volatile sig_atomic_t never;
	char c;

	n->oob.idle = NULL;
	n->oob.stop = &never;
	n->oob.timeout_ms = 10000;
	if (oob_read(&n->oob, &c, 1) == 0)
		return; /* not a close: the client is confused, nothing to wait for */
	et_port_await_peer_gone(&n->port, 2000);
}

void
node_close(struct node *n)
{
	if (n->port_open && n->oob.fd >= 0 && n->o.oob == OOB_ETHEREAL && n->o.server)
		await_client_gone(n);
	for (uint32_t k = 0; k < n->nics_open; k++) {
		et_nic_free(&n->lane[k].nic);
		et_host_free(&n->lane[k].host);
	}
	et_nic_team_free(&n->team);
	if (n->cap) {
		et_info("%s: %" PRIu64 " frames sent", n->o.pcap, et_capture_count(n->cap));
		et_capture_close(n->cap);
	}
	if (n->port_open)
		et_port_close(&n->port);
	oob_close(&n->oob); /* after the port: our server waits for this */
	free(n->lat);
	free(n->buf);
	free(n->qp);
	free(n->them_qp);
	free(n->recv_left);
}
