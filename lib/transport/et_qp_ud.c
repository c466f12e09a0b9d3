/* SPDX-License-Identifier: BSD-3-Clause
 * The datagram mode: IBTA's UD service (vol. 1 9.8, 10.2.3) over RoCEv2.
 *
 * A SEND is one packet (UD SEND ONLY, with its DETH: the Q_Key and our
 * QPN), to the address and QP its request names, and completes when it
 * leaves: UD is unacknowledged, so nothing is kept to send again and no
 * timer runs.  A datagram for us is placed into the oldest receive behind
 * the 40 bytes a GRH takes, which over IPv4 hold 20 zero bytes and the
 * IPv4 header as it arrived (as Linux's rxe and mlx5 write it: that is
 * where a program finds the sender's address), if its Q_Key is the QP's;
 * one that finds no receive posted is dropped and counted, for UD has no
 * RNR.  DCTCP has no ACK to run on here: a UD sender is held back by its
 * link alone; a CE mark is counted, and a CNP taken in is too.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "transport/et_qp_priv.h"

/* what a UD receive gives the GRH before the payload */
#define UD_GRH_LEN 40u

static void
ud_rx(struct et_qp *qp, const struct et_roce_pkt *pkt, uint64_t now)
{
	const struct et_roce_hdr *h = &pkt->h;
	struct et_wc wc = {.opcode = ET_WC_RECV, .status = ET_WC_SUCCESS};
	const struct et_recv_wr *r;
	uint8_t grh[UD_GRH_LEN];

	(void)now;
	if (h->opcode == ET_OP_CNP) {
		qp->st.cnps_rx++;
		return;
	}
	if (qp->state != ET_QPS_RTS ||
	    (h->opcode != ET_OP_UD_SEND_ONLY && h->opcode != ET_OP_UD_SEND_ONLY_IMM)) {
		qp->st.rx_dropped++;
		return;
	}
	if (h->deth_qkey != qp->a.qkey) {
		qp->st.rx_qkey_bad++;
		return;
	}
	if ((r = et_qp_recv_take(qp)) == NULL) {
		qp->st.rx_no_recv++;
		return;
	}
	if (h->ecn == ET_ECN_CE)
		qp->st.rx_ce++;
	wc.src_qp = h->deth_src_qp;
	wc.with_imm = h->opcode == ET_OP_UD_SEND_ONLY_IMM;
	wc.imm = h->imm;
	wc.byte_len = UD_GRH_LEN + pkt->payload_len;
	if (r->length < wc.byte_len) {
		wc.status = ET_WC_LOC_LEN_ERR;
		et_qp_complete_recv_wc(qp, &wc);
		return;
	}
	memset(grh, 0, sizeof(grh));
	if (pkt->l3)
		memcpy(grh + UD_GRH_LEN - ET_IPV4_HLEN, pkt->l3, ET_IPV4_HLEN);
	et_qp_recv_place(qp, 0, grh, UD_GRH_LEN);
	et_qp_recv_place(qp, UD_GRH_LEN, pkt->payload, pkt->payload_len);
	qp->st.rx_pkts++;
	qp->st.rx_bytes += pkt->payload_len;
	et_qp_complete_recv_wc(qp, &wc);
}

static bool
ud_tx_ready(const struct et_qp *qp, uint64_t now)
{
	(void)now;
	return qp->state == ET_QPS_RTS && qp->sq_cur != qp->sq_tail;
}

/* The oldest request not yet sent, as its one frame; complete once built. */
static struct rte_mbuf *
build_datagram(struct et_qp *qp)
{
	const struct et_send_wr *wr = &qp->sq[qp->sq_cur & qp->sq_mask].wr;
	struct et_roce_hdr h;
	struct rte_mbuf *m;

	et_qp_base_hdr(qp, &h, wr->ud.sport);
	h.dst_mac = wr->ud.mac;
	h.dst_ip = wr->ud.ip;
	h.dest_qp = wr->ud.qpn;
	h.ecn = ET_ECN_ECT0;
	h.ip_id = qp->ip_id++;
	h.opcode = wr->opcode == ET_WR_SEND_IMM ? ET_OP_UD_SEND_ONLY_IMM : ET_OP_UD_SEND_ONLY;
	h.psn = qp->snd_nxt;
	h.imm = wr->imm;
	h.deth_qkey = wr->ud.qkey;
	h.deth_src_qp = qp->a.qpn;
	m = et_qp_build_data(qp, &h, wr, 0, wr->length);
	if (m == NULL)
		return NULL;
	qp->st.tx_pkts++;
	qp->st.tx_bytes += wr->length;
	qp->snd_nxt = qp->snd_una = qp->snd_max = et_psn_add(qp->snd_nxt, 1);
	qp->sq_cur++;
	et_qp_complete_send(qp, wr, ET_WC_SUCCESS);
	qp->sq_head++;
	return m;
}

static uint16_t
ud_tx(struct et_qp *qp, uint64_t now, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && ud_tx_ready(qp, now) && (pkts[k] = build_datagram(qp)))
		k++;
	return k;
}

static void
ud_timer(struct et_qp *qp, uint64_t now)
{
	(void)qp;
	(void)now;
}

static uint64_t
ud_deadline(const struct et_qp *qp)
{
	(void)qp;
	return UINT64_MAX;
}

const struct et_qp_ops et_qp_ud_ops = {
	.rx = ud_rx,
	.timer = ud_timer,
	.tx_ready = ud_tx_ready,
	.tx = ud_tx,
	.deadline = ud_deadline,
	.opcodes = 1u << ET_WR_SEND | 1u << ET_WR_SEND_IMM,
	.single_packet = true,
};
