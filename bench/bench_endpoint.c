/* SPDX-License-Identifier: BSD-3-Clause
 * Two hosts, each a NIC model with its QPs, on two lcores joined by a
 * net_ring link: the sender posts 1 MB RDMA WRITEs on 4 QPs (4 KB MTU, ICRC
 * built), the receiver checks every ICRC and places every payload.  Goodput
 * is the payload placed per second; memcpy bandwidth of the same sizes is
 * measured in the same run, and the receiver's floor: what a 4 KB packet
 * cannot cost less than, its ICRC checked and its payload copied into
 * memory, against the receiving core's busy time per packet.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bench.h"
#include "host/et_nic.h"
#include "host/et_worker.h"
#include "wire/et_wire.h"

#define NQP 4
#define MSG (1u << 20)
#define DEPTH 4
/* What perftest's default (timeout 14: 4.096 us << 14) gives a NIC.  Not
 * the fabric's 1 ms: on a shared machine the OS takes the receiving lcore
 * away for longer than that (1.3-7.2 ms seen here, endpoint_receiver_max_
 * pause_us), and every QP then times out on a peer that lost nothing. */
#define RTO_NS 67108864ull

struct side {
	struct et_nic nic;
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	uint8_t *mem;
	const struct et_mr *mr;
	struct et_qp *qp[NQP];
};

static struct side S[2];
static _Atomic int running;

static uint64_t
ns(void)
{
	return et_tsc_ns();
}

static int
side_init(struct side *s, const struct et_port *port, uint8_t id, struct rte_mempool *mp)
{
	struct et_link_model wire = {0};
	struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, id}};

	memset(s, 0, sizeof(*s));
	s->mem = calloc(1, (size_t)MSG * NQP);
	if (!s->mem || et_nic_init(&s->nic, port, &wire, mp, &mac, RTE_IPV4(10, 0, 0, id),
				   0x100, NQP) ||
	    et_mr_table_init(&s->mrs, 2) || et_cq_init(&s->scq, 1024) || et_cq_init(&s->rcq, 1024))
		return -1;
	s->mr = et_mr_reg(&s->mrs, s->mem, (uint64_t)MSG * NQP, ET_ACCESS_REMOTE_WRITE);
	return 0;
}

static void
side_free(struct side *s)
{
	et_nic_free(&s->nic);
	et_mr_table_free(&s->mrs);
	et_cq_free(&s->scq);
	et_cq_free(&s->rcq);
	free(s->mem);
}

/* GB/s of memcpy in 4 KB pieces across buffers larger than the caches. */
static double
memcpy_gbps(void)
{
	size_t size = 64u << 20, off;
	uint8_t *a = malloc(size), *b = malloc(size);
	uint64_t t0, bytes = 0;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memset(a, 1, size);
	memset(b, 2, size);
	t0 = ns();
	while (ns() - t0 < 300000000ull)
		for (off = 0; off < size; off += 4096, bytes += 4096)
			memcpy(b + off, a + off, 4096);
	t0 = ns() - t0;
	free(a);
	free(b);
	return bytes * 8.0 / (double)t0;
}

/* The receiver's floor, ns a packet: a WRITE MIDDLE of 4 KB (IPv4, UDP,
 * BTH, payload, ICRC) has its ICRC computed and its payload copied out,
 * frame after frame from a region the size of the receiver's pool into one
 * the size of its memory (NQP x MSG), as the receiving core does and
 * nothing else. */
static double
copy_icrc_4k_ns(void)
{
	enum { HDR = 20 + 8 + 12, FRAME = HDR + 4096 + 4, STRIDE = 4224 };
	size_t n = (64u << 20) / STRIDE, k = 0;
	size_t slots = (size_t)NQP * MSG / 4096;
	uint8_t *src = malloc(n * STRIDE), *dst = malloc(slots * 4096);
	uint64_t t0, pkts = 0;
	volatile uint32_t sink = 0;

	if (!src || !dst) {
		free(src);
		free(dst);
		return 0;
	}
	memset(src, 3, n * STRIDE);
	memset(dst, 4, slots * 4096);
	t0 = ns();
	while (ns() - t0 < 300000000ull) {
		for (k = 0; k < n; k++, pkts++) {
			uint8_t *f = src + k * STRIDE;

			sink += et_icrc_compute(f, FRAME);
			memcpy(dst + (k % slots) * 4096, f + HDR, 4096);
		}
	}
	t0 = ns() - t0;
	(void)sink;
	free(src);
	free(dst);
	return (double)t0 / (double)pkts;
}

int
bench_endpoint(struct bench_out *o, struct rte_mempool *mp)
{
	unsigned int lcore = rte_get_next_lcore(rte_lcore_id(), 1, 0);
	bool two_cores = lcore < RTE_MAX_LCORE;
	struct et_port a, b;
	uint64_t now, t0, t_end, pkts0, bytes0, retx = 0, tmo = 0, naks = 0, ooo = 0, dup = 0;
	/* a timeout needs 1 ms without an ACK: the longest silence of the
	 * receiver, and of this loop itself, say which side went away */
	uint64_t last_poll, last_ack, acks = 0, poll_gap = 0, ack_gap = 0;
	struct et_wc wc[32];
	double s;
	int i;

	/* the receiver's frames come from the pool of its lcore's NUMA node */
	struct rte_mempool *rx_mp = two_cores ? et_pool_for_lcore(lcore, 16383) : mp;

	if (rx_mp == NULL ||
	    et_port_net_ring_pair(&a, &b, "bend", 4096, (int)rte_socket_id(), mp) ||
	    side_init(&S[0], &a, 1, mp) || side_init(&S[1], &b, 2, rx_mp))
		return -1;
	for (i = 0; i < NQP; i++) {
		struct et_qp_attr at;

		et_qp_attr_default(&at);
		at.mtu = 4096;
		at.rto_ns = RTO_NS;
		/* the ring drains at the receiver's speed, with no ECN to say so:
		 * a window near the BDP keeps its queue short */
		at.dctcp.init_cwnd = 256 * 1024;
		at.dctcp.max_cwnd = 512 * 1024; /* 4 QPs: 2 MB in flight, well under the RTO */
		for (int k = 0; k < 2; k++) {
			at.dest_ip = S[1 - k].nic.ip;
			at.dest_mac = S[1 - k].nic.mac;
			S[k].qp[i] = et_nic_qp_create(&S[k].nic, &at, &S[k].mrs, &S[k].scq, &S[k].rcq);
			if (!S[k].qp[i])
				return -1;
		}
		for (int k = 0; k < 2; k++)
			if (et_qp_connect(S[k].qp[i], et_qp_qpn(S[1 - k].qp[i])) ||
			    et_qp_ready(S[k].qp[i]))
				return -1;
	}
	struct et_nic *rx_host = &S[1].nic;
	struct et_worker w = {.hosts = &rx_host, .n_hosts = 1, .run = &running, .clock = et_tsc_ns};

	atomic_store(&running, 1);
	if (two_cores)
		rte_eal_remote_launch(et_worker_main, &w, lcore);
	t0 = ns();
	t_end = t0 + 1000000000ull;
	pkts0 = S[1].nic.st.rx_pkts;
	bytes0 = 0;
	last_poll = last_ack = t0;
	while ((now = ns()) < t_end) {
		if (now - last_poll > poll_gap)
			poll_gap = now - last_poll;
		last_poll = now;
		if (S[0].nic.st.rx_pkts != acks) {
			acks = S[0].nic.st.rx_pkts;
			last_ack = now;
		} else if (now - last_ack > ack_gap) {
			ack_gap = now - last_ack;
		}
		for (i = 0; i < NQP; i++)
			while (et_qp_sq_outstanding(S[0].qp[i]) < DEPTH) {
				struct et_send_wr wr = {.opcode = ET_WR_RDMA_WRITE,
							.local_addr = S[0].mem + (uint64_t)i * MSG,
							.length = MSG, .lkey = S[0].mr->key,
							.remote_addr = (uintptr_t)(S[1].mem + (uint64_t)i * MSG),
							.rkey = S[1].mr->key};

				if (et_nic_post_send(&S[0].nic, S[0].qp[i], &wr))
					break;
			}
		et_nic_poll(&S[0].nic, ns());
		while (et_cq_poll(&S[0].scq, wc, 32))
			;
		if (!two_cores)
			et_nic_poll(&S[1].nic, ns());
	}
	s = (double)(ns() - t0) / 1e9;
	atomic_store(&running, 0);
	if (two_cores)
		rte_eal_wait_lcore(lcore);
	for (i = 0; i < NQP; i++) {
		bytes0 += et_qp_stats(S[1].qp[i])->rx_bytes;
		retx += et_qp_stats(S[0].qp[i])->retransmits;
		tmo += et_qp_stats(S[0].qp[i])->timeouts;
		naks += et_qp_stats(S[0].qp[i])->naks_rx;
		ooo += et_qp_stats(S[1].qp[i])->rx_out_of_order;
		dup += et_qp_stats(S[1].qp[i])->rx_dup;
	}
	bench_num(o, "endpoint_gbps", bytes0 * 8 / s / 1e9);
	bench_num(o, "endpoint_mpps", (S[1].nic.st.rx_pkts - pkts0) / s / 1e6);
	bench_num(o, "endpoint_lcores", two_cores ? 2 : 1);
	bench_num(o, "endpoint_rto_ms", RTO_NS / 1e6);
	bench_num(o, "endpoint_retransmits", (double)retx);
	bench_num(o, "endpoint_timeouts", (double)tmo);
	bench_num(o, "endpoint_naks", (double)naks);
	bench_num(o, "endpoint_rx_out_of_order", (double)ooo);
	bench_num(o, "endpoint_rx_dup", (double)dup);
	bench_num(o, "endpoint_sender_max_pause_us", poll_gap / 1e3);
	bench_num(o, "endpoint_max_ack_silence_us", ack_gap / 1e3);
	bench_num(o, "endpoint_receiver_max_pause_us", w.max_gap_ns / 1e3);
	bench_num(o, "memcpy_4k_gbps", memcpy_gbps());
	if (two_cores && S[1].nic.st.rx_pkts > pkts0) {
		/* the receiving core's own cost, its idle polls left out, beside
		 * the floor measured now: 1 means nothing but the floor's work */
		double busy = (double)w.busy_ns / (double)(S[1].nic.st.rx_pkts - pkts0);
		double floor = copy_icrc_4k_ns();

		bench_num(o, "endpoint_receiver_busy_ns_per_pkt", busy);
		bench_num(o, "copy_icrc_4k_ns", floor);
		bench_num(o, "endpoint_receiver_vs_floor", busy > 0 ? floor / busy : 0);
	}
	side_free(&S[0]);
	side_free(&S[1]);
	et_port_close(&b);
	et_port_close(&a);
	return 0;
}
