/* SPDX-License-Identifier: BSD-3-Clause
 * A requester and a responder QP on one core, joined by the in-memory link
 * of the tests (no loss): 4 KB MTU, every frame built with its ICRC and
 * parsed with its ICRC checked, RDMA WRITEs for about a second; each
 * stage of each side timed by the TSC; 1 MB messages, 8 posted.  Twice:
 * with a window of one BDP (400 Gbit/s x 4 us, where DCTCP starts), and
 * with no window at all (all 8 MB in flight, far past a core's caches:
 * every frame is cold when it is built and when it is checked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "bench.h"
#include "qp_link.h"

#define BURST 32 /* frames a side builds before the other reads them */

/* l->ctx: the requests to keep in flight */
static bool
idle(struct qp_link *l)
{
	return et_qp_sq_outstanding(l->qp[0]) < *(const uint32_t *)l->ctx;
}

static void
num(struct bench_out *o, const char *pre, const char *key, double v)
{
	char k[64];

	snprintf(k, sizeof(k), "%s%s", pre, key);
	bench_num(o, k, v);
}

static int
pair(struct bench_out *o, struct rte_mempool *mp, uint32_t msg, uint32_t in_flight,
     uint32_t window, const char *pre)
{
	struct et_mr_table mr[2];
	struct et_cq scq[2], rcq[2];
	struct et_qp_attr a, b;
	struct et_qp *qa, *qb;
	struct qp_link l;
	struct et_wc wc[64];
	uint8_t *src = malloc(msg), *dst = malloc(msg);
	const struct et_mr *ms, *md;
	uint64_t t0, pkts;
	double wall;
	int rc = -1;

	memset(mr, 0, sizeof(mr));
	memset(scq, 0, sizeof(scq));
	memset(rcq, 0, sizeof(rcq));
	if (!src || !dst)
		goto out;
	memset(src, 0x5a, msg);
	for (int s = 0; s < 2; s++)
		if (et_mr_table_init(&mr[s], 4) || et_cq_init(&scq[s], 1024) ||
		    et_cq_init(&rcq[s], 1024))
			goto out;
	ms = et_mr_reg(&mr[0], src, msg, 0);
	md = et_mr_reg(&mr[1], dst, msg, ET_ACCESS_REMOTE_WRITE);
	et_qp_attr_default(&a);
	a.qpn = 1;
	a.dest_qpn = 2;
	a.ip = RTE_IPV4(10, 0, 0, 1);
	a.dest_ip = RTE_IPV4(10, 0, 1, 1);
	a.mtu = 4096;
	a.dctcp.enabled = false; /* no marks on this link: measure the QP */
	a.dctcp.max_cwnd = window;
	b = a;
	b.qpn = 2;
	b.dest_qpn = 1;
	qa = et_qp_create(&a, &mr[0], &scq[0], &rcq[0], mp);
	qb = et_qp_create(&b, &mr[1], &scq[1], &rcq[1], mp);
	if (!qa || !qb || et_qp_ready(qa) || et_qp_ready(qb))
		goto out;
	qp_link_init(&l, qa, qb, mp, 1000);
	l.time_it = true;
	l.burst = BURST;
	l.ctx = &in_flight;
	t0 = qp_link_clock_ns();
	while (qp_link_clock_ns() - t0 < 1000000000ull) {
		struct et_send_wr wr = {.opcode = ET_WR_RDMA_WRITE, .local_addr = src,
					.length = msg, .lkey = ms->key,
					.remote_addr = (uintptr_t)dst, .rkey = md->key};

		while (et_qp_sq_outstanding(qa) < in_flight)
			if (et_qp_post_send(qa, &wr))
				goto out;
		if (qp_link_run(&l, idle, UINT64_MAX) != 0)
			goto out;
		while (et_cq_poll(&scq[0], wc, 64))
			;
	}
	wall = (double)(qp_link_clock_ns() - t0);
	pkts = et_qp_stats(qb)->rx_pkts;
	num(o, pre, "pair_gbps", (double)et_qp_stats(qb)->rx_bytes * 8 / wall);
	/* per data packet, each side and each stage: the sender builds it
	 * (header, copy, ICRC) and takes its ACK (parse, state); the receiver
	 * checks it (parse, ICRC), places it (copy, state) and builds the ACK */
	double per = (double)pkts * (double)rte_get_tsc_hz() / 1e9;

	num(o, pre, "sender_ns_per_pkt", (double)(l.tx_cyc[0] + l.parse_cyc[0] + l.rx_cyc[0]) / per);
	num(o, pre, "receiver_ns_per_pkt", (double)(l.tx_cyc[1] + l.parse_cyc[1] + l.rx_cyc[1]) / per);
	num(o, pre, "sender_build_ns", (double)l.tx_cyc[0] / per);
	num(o, pre, "sender_ack_ns", (double)(l.parse_cyc[0] + l.rx_cyc[0]) / per);
	num(o, pre, "receiver_parse_ns", (double)l.parse_cyc[1] / per);
	num(o, pre, "receiver_place_ns", (double)l.rx_cyc[1] / per);
	num(o, pre, "receiver_ack_ns", (double)l.tx_cyc[1] / per);
	qp_link_free(&l);
	et_qp_destroy(qa);
	et_qp_destroy(qb);
	rc = 0;
out:
	for (int s = 0; s < 2; s++) {
		et_cq_free(&scq[s]);
		et_cq_free(&rcq[s]);
		et_mr_table_free(&mr[s]);
	}
	free(src);
	free(dst);
	return rc;
}

int
bench_qp(struct bench_out *o, struct rte_mempool *mp)
{
	struct et_dctcp_params d;

	et_dctcp_params_default(&d);
	return pair(o, mp, 1u << 20, 8, d.init_cwnd, "qp_") ||
	       pair(o, mp, 1u << 20, 8, d.max_cwnd, "qp_deep_");
}
