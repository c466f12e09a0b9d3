/* SPDX-License-Identifier: BSD-3-Clause
 * The multipath mode (spraying, REPS): reordering, loss and duplicates,
 * per-packet paths and ECN echoes, the reorder window's edge, selective
 * retransmission, retry exhaustion, posting errors, remote access; two QPs
 * on a scripted link, driven by a fake clock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "qp_pair.h"

static void
test_mp_no_loss(void **state)
{
	for (int i = 0; i < 5; i++) {
		mp_pair_init(mtus[i], 0x1000);
		mp_run_workload(64, 4u << 20, SPACE);
		assert_int_equal(P.qp[0]->st.retransmits, 0);
		assert_int_equal(P.qp[0]->st.timeouts, 0);
		assert_int_equal(P.qp[1]->st.rx_dup, 0);
		/* one ACK per data packet */
		assert_int_equal(P.qp[1]->st.acks_tx, P.qp[0]->st.tx_pkts);
		pair_free();
	}
}

/* Sprayed on random paths with jitter of several RTTs, lost, duplicated,
 * ACKs lost: every size, every MTU, the PSNs wrapping once. */
static void
test_mp_reorder_loss_dup(void **state)
{
	static const double loss[] = {0.01, 0.02, 0.03, 0.04, 0.05};

	for (int i = 0; i < 5; i++) {
		mp_pair_init(mtus[i], i == 2 ? 0xffff00 : 0x2000);
		et_qp_set_path_fn(P.qp[0], random_path, NULL);
		P.jitter_ns = 20000; /* the RTT is 4 us */
		P.loss = loss[i];
		P.dup = 0.03;
		P.ack_loss = 0.05;
		mp_run_workload(48, 1u << 20, 3u << 20);
		assert_true(P.link.dropped[0] > 0);
		assert_true(P.qp[1]->st.rx_out_of_order > 100);
		assert_true(P.qp[1]->st.rx_dup > 0);
		assert_true(P.qp[0]->st.retransmits > 0);
		/* only lost packets go again, not windows of them */
		assert_true(P.qp[0]->st.retransmits < 4 * (P.link.dropped[0] + P.link.dropped[1]));
		pair_free();
	}
}

/* A path per packet: the hook is asked for every data packet, the frames
 * carry its answer, ACKs echo it with the ECN bit, the ACK hook hears both. */
struct mp_paths {
	uint32_t calls[4];
	uint16_t timed_out;         /* qp->path_id in the ET_PATH_TIMEOUT call */
	uint16_t last;              /* what the hook last returned */
	uint32_t mismatched;        /* data frames not on that path */
	uint8_t marked[65536];      /* by path ID: 1 sent CE-marked, 2 not */
	uint32_t acks, ecn, wrong;  /* ACK hook: calls, with ECN, disagreeing */
	uint32_t ack_frames, ack_frames_wrong;
};

static struct mp_paths MP;

static uint16_t
counting_path(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	struct mp_paths *m = ctx;

	(void)now;
	m->calls[ev]++;
	if (ev == ET_PATH_TIMEOUT)
		m->timed_out = qp->path_id;
	if (ev != ET_PATH_PACKET)
		return 0;
	m->last = (uint16_t)(0x1000 + m->calls[ET_PATH_PACKET]); /* one each */
	return m->last;
}

static void
ack_hook(void *ctx, struct et_qp *qp, uint16_t path, bool ecn, uint64_t now)
{
	struct mp_paths *m = ctx;

	(void)qp;
	(void)now;
	m->acks++;
	m->ecn += ecn;
	if (m->marked[path] != (ecn ? 1 : 2))
		m->wrong++;
}

static enum qp_verdict
path_script(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	(void)l;
	(void)delay;
	if (dir == 1) {
		if (p->h.opcode == ET_OP_ACK) {
			uint16_t path = et_path_swap(p->h.udp_sport);

			MP.ack_frames++;
			if (MP.marked[path] != (p->h.resv8a == 1 ? 1 : 2) || p->h.resv8a > 1)
				MP.ack_frames_wrong++;
		}
		return QP_DELIVER;
	}
	if (p->h.opcode == ET_OP_CNP || p->h.opcode == ET_OP_ACK)
		return QP_DELIVER;
	if (p->h.udp_sport != MP.last)
		MP.mismatched++;
	if (p->h.opcode != ET_OP_WRITE_ONLY && p->h.opcode != ET_OP_WRITE_ONLY_IMM)
		MP.mismatched++;
	MP.marked[p->h.udp_sport] = p->h.psn % 7 == 3 ? 1 : 2;
	return p->h.psn % 7 == 3 ? QP_MARK : QP_DELIVER;
}

static void
test_mp_paths_and_ecn(void **state)
{
	uint32_t marked = 0;

	memset(&MP, 0, sizeof(MP));
	mp_pair_init(1024, 0x3000);
	P.link.script = path_script;
	et_qp_set_path_fn(P.qp[0], counting_path, &MP);
	et_qp_set_ack_fn(P.qp[0], ack_hook, &MP);
	post_workload(64, 64 * 1024, 1u << 20);
	assert_int_equal(qp_link_run(&P.link, all_completed, 1000000000ull), 0);
	check_workload();
	assert_int_equal(MP.calls[ET_PATH_PACKET], P.qp[0]->st.tx_pkts);
	assert_true(MP.calls[ET_PATH_PACKET] > 300);
	assert_int_equal(MP.calls[ET_PATH_FIRST] + MP.calls[ET_PATH_NAK] +
			 MP.calls[ET_PATH_TIMEOUT], 0);
	assert_int_equal(MP.mismatched, 0);
	/* every ACK: echo of its packet's path, ECN bit exactly on the marked */
	for (uint32_t i = 0; i < 65536; i++)
		marked += MP.marked[i] == 1;
	assert_int_equal(MP.ack_frames, P.qp[0]->st.tx_pkts);
	assert_int_equal(MP.ack_frames_wrong, 0);
	assert_int_equal(MP.acks, P.qp[0]->st.acks_rx);
	assert_int_equal(MP.acks, P.qp[0]->st.tx_pkts);
	assert_int_equal(MP.wrong, 0);
	assert_int_equal(MP.ecn, marked);
	assert_true(marked > 40);
	/* CE still reaches DCTCP through CNPs, as in order */
	assert_int_equal(P.qp[1]->st.cnps_tx, marked);
	assert_true(P.qp[0]->cc.cuts > 0);
	pair_free();
}

/* One frame straight into B, as A would have built it. */
static void
mp_inject(uint32_t psn, uint32_t off, uint32_t len, uint8_t fill, bool last)
{
	static uint8_t payload[4096];
	struct et_roce_hdr h;
	struct et_roce_pkt pkt;
	struct rte_mbuf *m;
	int err;

	memset(payload, fill, sizeof(payload));
	memset(&h, 0, sizeof(h));
	h.src_ip = P.qp[0]->a.ip;
	h.dst_ip = P.qp[0]->a.dest_ip;
	h.ttl = 64;
	h.ecn = ET_ECN_ECT0;
	h.udp_sport = (uint16_t)psn;
	h.opcode = ET_OP_WRITE_ONLY;
	h.ackreq = last;
	h.pkey = ET_PKEY_DEFAULT;
	h.dest_qp = P.qp[1]->a.qpn;
	h.psn = psn & ET_PSN_MASK;
	h.reth_va = (uintptr_t)(P.dst + GUARD + off);
	h.reth_rkey = P.mdst->key;
	h.reth_dma_len = len;
	m = et_roce_build_mbuf(pool, &h, payload, len, &err);
	assert_non_null(m);
	assert_int_equal(et_roce_parse_mbuf(m, &pkt, 0), 0);
	et_qp_rx(P.qp[1], &pkt, P.link.now);
	rte_pktmbuf_free(m);
}

/* B's next ACK: its PSN and cumulative PSN; false if none. */
static bool
mp_take_ack(uint32_t *psn, uint32_t *cum)
{
	struct rte_mbuf *m;
	struct et_roce_pkt pkt;

	if (et_qp_tx(P.qp[1], P.link.now, &m, 1) != 1)
		return false;
	assert_int_equal(et_roce_parse_mbuf(m, &pkt, 0), 0);
	assert_int_equal(pkt.h.opcode, ET_OP_ACK);
	assert_int_equal(pkt.h.aeth_syndrome & ET_AETH_KIND_MASK, ET_AETH_ACK);
	assert_int_equal(pkt.h.udp_sport, et_path_swap((uint16_t)pkt.h.psn));
	*psn = pkt.h.psn;
	*cum = pkt.h.aeth_msn;
	rte_pktmbuf_free(m);
	return true;
}

static void
test_mp_window_edge(void **state)
{
	const uint32_t e = 0xfffe00, w = ET_QP_MP_WINDOW; /* the window wraps */
	uint32_t psn, cum;

	mp_pair_init(1024, e);
	/* beyond the window: dropped, counted, not acknowledged */
	mp_inject(e + w, 0, 1024, 0x11, false);
	assert_int_equal(P.qp[1]->st.rx_beyond_window, 1);
	assert_false(et_qp_tx_ready(P.qp[1], P.link.now));
	assert_int_equal(P.dst[GUARD], 0xa5);
	/* the window's last PSN: placed out of order at once */
	mp_inject(e + w - 1, 4096, 1024, 0x22, false);
	assert_int_equal(P.qp[1]->st.rx_out_of_order, 1);
	assert_int_equal(P.dst[GUARD + 4096], 0x22);
	assert_true(mp_take_ack(&psn, &cum));
	assert_int_equal(psn, (e + w - 1) & ET_PSN_MASK);
	assert_int_equal(cum, e);
	/* the expected PSN: epsn moves by one, the gap stays */
	mp_inject(e, 0, 1024, 0x33, false);
	assert_true(mp_take_ack(&psn, &cum));
	assert_int_equal(psn, e);
	assert_int_equal(cum, e + 1);
	assert_int_equal(P.qp[1]->epsn, e + 1);
	/* duplicates, below epsn and inside the window: acknowledged again,
	 * not placed again */
	mp_inject(e, 0, 1024, 0x44, false);
	mp_inject(e + w - 1, 4096, 1024, 0x55, false);
	assert_int_equal(P.qp[1]->st.rx_dup, 2);
	assert_true(mp_take_ack(&psn, &cum));
	assert_int_equal(psn, e);
	assert_int_equal(cum, e + 1);
	assert_true(mp_take_ack(&psn, &cum));
	assert_int_equal(psn, (e + w - 1) & ET_PSN_MASK);
	assert_false(mp_take_ack(&psn, &cum));
	assert_int_equal(P.dst[GUARD], 0x33);
	assert_int_equal(P.dst[GUARD + 4096], 0x22);
	assert_int_equal(P.qp[1]->st.rx_pkts, 2);
	/* the window has moved: one past its old end is now inside */
	mp_inject(e + w, 8192, 1024, 0x66, false);
	assert_int_equal(P.qp[1]->st.rx_beyond_window, 1);
	assert_int_equal(P.dst[GUARD + 8192], 0x66);
	assert_int_equal(P.qp[1]->st.rx_pkts, 3);
	pair_free();
}

static void
test_mp_selective_retransmission(void **state)
{
	struct et_send_wr wr;
	struct et_wc wc;

	memset(&MP, 0, sizeof(MP));
	mp_pair_init(1024, 0x4000);
	et_qp_set_path_fn(P.qp[0], counting_path, &MP);
	P.drop_nth = 50; /* in the middle of 100 packets */
	wr = write_wr(1, 100 * 1024);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_memory_equal(P.dst + GUARD, P.src, 100 * 1024);
	assert_int_equal(P.qp[0]->st.retransmits, 1);
	assert_int_equal(P.qp[0]->st.timeouts, 1);
	assert_int_equal(P.qp[0]->st.tx_pkts, 101);
	assert_int_equal(P.qp[1]->st.rx_dup, 0);
	assert_int_equal(P.qp[1]->st.naks_tx, 0);
	assert_true(P.qp[1]->st.rx_out_of_order >= 50);
	/* the packet's own timer sent it again, one RTO after it left */
	assert_true(P.resent_at >= P.dropped_at + P.qp[0]->a.rto_ns);
	assert_true(P.resent_at <= P.dropped_at + P.qp[0]->a.rto_ns + 10000);
	/* the hook heard which path lost it, and chose a path for the resend */
	assert_int_equal(MP.calls[ET_PATH_TIMEOUT], 1);
	assert_int_equal(MP.timed_out, P.dropped_sport);
	assert_int_equal(MP.calls[ET_PATH_PACKET], 101);
	assert_int_equal(P.resent_sport, 0x1000 + 101);
	assert_int_equal(et_qp_deadline(P.qp[0]), UINT64_MAX);
	pair_free();
}

static void
test_mp_retry_exhaustion(void **state)
{
	struct et_send_wr wr;
	struct et_qp_attr a, b;
	struct et_wc wc;

	mp_attrs(&a, &b, 1024, 0xb000);
	a.retry_cnt = 2;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = script;
	P.drop_all_ab = true;
	wr = write_wr(1, 10000);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	wr.wr_id = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, NULL, 1000000000ull), 0);
	/* each of 20 packets sent three times; the first third timeout ends it */
	assert_int_equal(P.qp[0]->st.tx_pkts, 60);
	assert_int_equal(P.qp[0]->st.timeouts, 41);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, ET_WC_RETRY_EXC_ERR);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 0);
	assert_int_equal(P.qp[0]->state, ET_QPS_ERR);
	assert_int_equal(et_qp_deadline(P.qp[0]), UINT64_MAX);
	assert_false(et_qp_tx_ready(P.qp[0], P.link.now));
	assert_true(P.link.now < 5000000);
	pair_free();

	/* retry_cnt 7 tries forever; the link heals and it completes */
	mp_pair_init(1024, 0xb000);
	P.drop_all_ab = true;
	wr = write_wr(1, 10000);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 30000000), -3);
	assert_true(P.qp[0]->st.timeouts >= 25 * 10);
	assert_int_equal(et_cq_count(&P.scq[0]), 0);
	P.drop_all_ab = false;
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_memory_equal(P.dst + GUARD, P.src, 10000);
	pair_free();
}

static void
test_mp_post_and_errors(void **state)
{
	struct et_send_wr wr;
	struct et_recv_wr rw;
	struct et_wc wc;

	/* a SEND has no address for its later packets: refused */
	mp_pair_init(1024, 0xd000);
	wr = (struct et_send_wr){.wr_id = 7, .opcode = ET_WR_SEND, .local_addr = P.src,
				 .length = 3000, .lkey = P.msrc->key};
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	wr.opcode = ET_WR_SEND_IMM;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	assert_int_equal(et_qp_sq_outstanding(P.qp[0]), 0);

	/* a WRITE with immediate and no receive: RNR NAKs until one is posted;
	 * the rest of the message is placed meanwhile */
	wr = write_wr(8, 5000);
	wr.opcode = ET_WR_RDMA_WRITE_IMM;
	wr.imm = 0x1234;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 5000000), -3);
	assert_true(P.qp[1]->st.rnr_naks_tx >= 2);
	assert_true(P.qp[0]->st.rnr_naks_rx >= 2);
	assert_memory_equal(P.dst + GUARD, P.src, 4096);
	rw = (struct et_recv_wr){.wr_id = 9, .lkey = P.mdst->key};
	assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(et_cq_poll(&P.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(wc.opcode, ET_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc.byte_len, 5000);
	assert_int_equal(wc.imm, 0x1234);
	assert_memory_equal(P.dst + GUARD, P.src, 5000);
	pair_free();
}

static void
test_mp_remote_access(void **state)
{
	for (int bad = 0; bad < 3; bad++) {
		struct et_qp_attr a, b;
		struct et_send_wr wr;
		struct et_wc wc;

		mp_attrs(&a, &b, 1024, 0xe000);
		pair_init_attr(&a, &b, bad == 2 ? ET_ACCESS_LOCAL_WRITE
						: ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
		P.link.script = script;
		wr = write_wr(1, 5000);
		if (bad == 0)
			wr.rkey ^= 0x100;
		if (bad == 1) /* only the last packet is out of bounds, by one byte */
			wr.remote_addr = (uintptr_t)(P.dst + GUARD + SPACE - 5000 + 1);
		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
		wr.wr_id = 2;
		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
		assert_int_equal(qp_link_run(&P.link, two_completions, 1000000000ull), 0);
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		assert_int_equal(wc.wr_id, 1);
		assert_int_equal(wc.status, ET_WC_REM_ACCESS_ERR);
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
		assert_int_equal(P.qp[0]->state, ET_QPS_ERR);
		assert_int_equal(P.qp[1]->state, ET_QPS_ERR);
		assert_int_equal(P.qp[1]->st.err_naks_tx, 1);
		assert_guards();
		pair_free();
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mp_no_loss),
		cmocka_unit_test(test_mp_reorder_loss_dup),
		cmocka_unit_test(test_mp_paths_and_ecn),
		cmocka_unit_test(test_mp_window_edge),
		cmocka_unit_test(test_mp_selective_retransmission),
		cmocka_unit_test(test_mp_retry_exhaustion),
		cmocka_unit_test(test_mp_post_and_errors),
		cmocka_unit_test(test_mp_remote_access),
	};

	return cmocka_run_group_tests_name("qp-multipath", tests, setup, teardown);
}
