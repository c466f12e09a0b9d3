/* SPDX-License-Identifier: BSD-3-Clause
 * The datagram mode (UD): SENDs to the destination each request names,
 * complete as they leave; receives behind the GRH's 40 bytes; Q_Keys, no
 * receive, a short buffer; what a UD QP refuses.
 */
#include <errno.h>

#include "et_test.h"

#include <rte_ip.h>

#include "base/et_bytes.h"
#include "transport/et_qp_priv.h"
#include "qp_link.h"

#define QKEY 0x11111111u
#define GRH 40u

static struct rte_mempool *pool;

static int
setup(void **state)
{
	(void)state;
	pool = et_test_eal_pool("test_qp_ud", 1023);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return et_test_eal_done(pool);
}

struct ud {
	struct et_mr_table mr[2];
	struct et_cq scq[2], rcq[2];
	struct et_qp *qp[2];
	uint8_t src[4096], dst[8][1280];
	const struct et_mr *msrc, *mdst;
	struct qp_link link;
	uint32_t seen;          /* frames the script checked */
	uint32_t want_qkey;     /* what the next frames' DETH must carry */
};

static struct ud U;

static void
ud_attr(struct et_qp_attr *a, uint32_t qpn, uint32_t ip)
{
	et_qp_attr_default(a);
	a->datagram = true;
	a->qkey = QKEY;
	a->qpn = qpn;
	a->ip = ip;
	a->mtu = 1024;
	/* a connected QP's peer: a datagram must not go there */
	a->dest_qpn = 0x77;
	a->dest_ip = RTE_IPV4(10, 9, 9, 9);
}

/* Every frame is a UD SEND to B (QPN 0x22, 10.0.1.1) from A's QPN. */
static enum qp_verdict
check_frame(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	(void)l;
	(void)delay;
	assert_int_equal(dir, 0);
	assert_true(p->h.opcode == ET_OP_UD_SEND_ONLY || p->h.opcode == ET_OP_UD_SEND_ONLY_IMM);
	assert_int_equal(p->h.dest_qp, 0x22);
	assert_int_equal(p->h.dst_ip, RTE_IPV4(10, 0, 1, 1));
	assert_int_equal(p->h.deth_src_qp, 0x11);
	assert_int_equal(p->h.deth_qkey, U.want_qkey);
	assert_int_equal(p->h.udp_sport, 0xc001);
	U.seen++;
	return QP_DELIVER;
}

static void
ud_init(void)
{
	struct et_qp_attr a, b;

	memset(&U, 0, sizeof(U));
	for (int s = 0; s < 2; s++) {
		assert_int_equal(et_mr_table_init(&U.mr[s], 4), 0);
		assert_int_equal(et_cq_init(&U.scq[s], 64), 0);
		assert_int_equal(et_cq_init(&U.rcq[s], 64), 0);
	}
	for (uint32_t i = 0; i < sizeof(U.src); i++)
		U.src[i] = (uint8_t)(i * 7 + 3);
	U.msrc = et_mr_reg(&U.mr[0], U.src, sizeof(U.src), ET_ACCESS_LOCAL_WRITE);
	U.mdst = et_mr_reg(&U.mr[1], U.dst, sizeof(U.dst), ET_ACCESS_LOCAL_WRITE);
	ud_attr(&a, 0x11, RTE_IPV4(10, 0, 0, 1));
	ud_attr(&b, 0x22, RTE_IPV4(10, 0, 1, 1));
	a.max_send_sge = 2;
	b.max_recv_sge = 3;
	for (int s = 0; s < 2; s++) {
		U.qp[s] = et_qp_create(s ? &b : &a, &U.mr[s], &U.scq[s], &U.rcq[s], pool);
		assert_non_null(U.qp[s]);
		assert_int_equal(et_qp_ready(U.qp[s]), 0);
	}
	qp_link_init(&U.link, U.qp[0], U.qp[1], pool, 1000);
	U.link.script = check_frame;
	U.want_qkey = QKEY;
}

static void
ud_free(void)
{
	qp_link_free(&U.link);
	for (int s = 0; s < 2; s++) {
		et_qp_destroy(U.qp[s]);
		et_cq_free(&U.scq[s]);
		et_cq_free(&U.rcq[s]);
		et_mr_table_free(&U.mr[s]);
	}
	assert_int_equal(rte_mempool_in_use_count(pool), 0); /* no mbuf leak */
}

static void
run(void)
{
	for (int i = 0; i < 100; i++) {
		U.link.now += 500;
		assert_true(qp_link_step(&U.link) >= 0);
	}
}

static struct et_send_wr
send_to_b(uint64_t id, uint32_t off, uint32_t len, uint32_t qkey)
{
	return (struct et_send_wr){
		.wr_id = id, .opcode = ET_WR_SEND, .local_addr = U.src + off, .length = len,
		.lkey = U.msrc->key,
		.ud = {.ip = RTE_IPV4(10, 0, 1, 1), .qpn = 0x22, .qkey = qkey, .sport = 0xc001},
	};
}

static void
post_recv(uint64_t id, uint32_t slot, uint32_t len)
{
	struct et_recv_wr r = {.wr_id = id, .addr = U.dst[slot], .length = len,
			       .lkey = U.mdst->key};

	assert_int_equal(et_qp_post_recv(U.qp[1], &r), 0);
}

/* Three datagrams, one with immediate data and one empty: each where it
 * belongs behind a GRH holding the sender's IPv4 header, each send
 * complete once it left. */
static void
test_ud_send_recv(void **state)
{
	uint32_t len[3] = {1000, 17, 0}, off[3] = {0, 100, 0};
	struct et_send_wr w[3];
	struct et_wc wc;

	(void)state;
	ud_init();
	for (uint32_t i = 0; i < 3; i++)
		w[i] = send_to_b(i + 1, off[i], len[i], QKEY);
	w[1].opcode = ET_WR_SEND_IMM;
	w[1].imm = 0xabcdef01;
	for (uint32_t i = 0; i < 3; i++)
		post_recv(10 + i, i, 1280);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(et_qp_post_send(U.qp[0], &w[i]), 0);
	run();
	assert_int_equal(U.seen, 3);
	for (uint32_t i = 0; i < 3; i++) {
		const uint8_t *g = U.dst[i];

		assert_int_equal(et_cq_poll(&U.scq[0], &wc, 1), 1);
		assert_int_equal(wc.wr_id, i + 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.opcode, ET_WC_SEND);
		assert_int_equal(et_cq_poll(&U.rcq[1], &wc, 1), 1);
		assert_int_equal(wc.wr_id, 10 + i);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.opcode, ET_WC_RECV);
		assert_int_equal(wc.byte_len, GRH + len[i]);
		assert_int_equal(wc.src_qp, 0x11);
		assert_int_equal(wc.qpn, 0x22);
		assert_int_equal(wc.with_imm, i == 1);
		if (i == 1)
			assert_int_equal(wc.imm, 0xabcdef01);
		for (uint32_t k = 0; k < 20; k++)
			assert_int_equal(g[k], 0);
		assert_int_equal(g[20], 0x45); /* IPv4, 20-byte header */
		assert_int_equal(g[20 + 9], 17); /* UDP */
		assert_int_equal(et_load32(g + 20 + 12), RTE_IPV4(10, 0, 0, 1));
		assert_int_equal(et_load32(g + 20 + 16), RTE_IPV4(10, 0, 1, 1));
		assert_memory_equal(g + GRH, U.src + off[i], len[i]);
	}
	assert_int_equal(et_cq_count(&U.scq[0]), 0);
	assert_int_equal(et_cq_count(&U.rcq[1]), 0);
	assert_int_equal(et_qp_stats(U.qp[1])->rx_pkts, 3);
	assert_int_equal(et_qp_sq_outstanding(U.qp[0]), 0);
	assert_int_equal(et_qp_deadline(U.qp[0]), UINT64_MAX);
	ud_free();
}

/* A datagram gathered from two buffers lands over three: the GRH across
 * the first two, the payload on into the third. */
static void
test_ud_lists(void **state)
{
	struct et_sge from[2] = {{U.src, 300, 0}, {U.src + 500, 200, 0}};
	struct et_sge into[3] = {{U.dst[0], 30, 0}, {U.dst[1], 100, 0}, {U.dst[2], 1000, 0}};
	struct et_send_wr w;
	struct et_recv_wr r = {.wr_id = 7};
	uint8_t got[GRH + 500];
	struct et_wc wc;

	(void)state;
	ud_init();
	for (int i = 0; i < 2; i++)
		from[i].lkey = U.msrc->key;
	for (int i = 0; i < 3; i++)
		into[i].lkey = U.mdst->key;
	r.sgl = into;
	r.num_sge = 3;
	assert_int_equal(et_qp_post_recv(U.qp[1], &r), 0);
	w = send_to_b(1, 0, 0, QKEY);
	w.sgl = from;
	w.num_sge = 2;
	assert_int_equal(et_qp_post_send(U.qp[0], &w), 0);
	run();
	assert_int_equal(et_cq_poll(&U.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(wc.byte_len, GRH + 500);
	memcpy(got, U.dst[0], 30);
	memcpy(got + 30, U.dst[1], 100);
	memcpy(got + 130, U.dst[2], GRH + 500 - 130);
	assert_int_equal(got[20], 0x45);
	assert_int_equal(et_load32(got + 20 + 12), RTE_IPV4(10, 0, 0, 1));
	assert_memory_equal(got + GRH, U.src, 300);
	assert_memory_equal(got + GRH + 300, U.src + 500, 200);
	/* more buffers than the queue takes */
	r.num_sge = 4;
	assert_int_equal(et_qp_post_recv(U.qp[1], &r), -EINVAL);
	assert_int_equal(et_cq_poll(&U.scq[0], &wc, 1), 1);
	ud_free();
}

/* What UD drops (another Q_Key, no receive posted) is counted and takes
 * nothing; a buffer shorter than GRH + payload completes in error. */
static void
test_ud_drops(void **state)
{
	struct et_send_wr bad, good;
	struct et_wc wc;

	(void)state;
	ud_init();
	bad = send_to_b(1, 0, 64, 0x1234);
	good = send_to_b(2, 0, 64, QKEY);
	post_recv(10, 0, 1024);
	U.want_qkey = 0x1234;
	assert_int_equal(et_qp_post_send(U.qp[0], &bad), 0);
	run();
	assert_int_equal(et_qp_stats(U.qp[1])->rx_qkey_bad, 1);
	assert_int_equal(et_cq_count(&U.rcq[1]), 0);
	U.want_qkey = QKEY;
	assert_int_equal(et_qp_post_send(U.qp[0], &good), 0);
	run();
	assert_int_equal(et_cq_poll(&U.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 10);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	/* no receive: dropped, counted, nothing completes */
	assert_int_equal(et_qp_post_send(U.qp[0], &good), 0);
	run();
	assert_int_equal(et_qp_stats(U.qp[1])->rx_no_recv, 1);
	assert_int_equal(et_cq_count(&U.rcq[1]), 0);
	/* GRH + 64 bytes into 100: too short */
	post_recv(11, 1, 100);
	assert_int_equal(et_qp_post_send(U.qp[0], &good), 0);
	run();
	assert_int_equal(et_cq_poll(&U.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 11);
	assert_int_equal(wc.status, ET_WC_LOC_LEN_ERR);
	assert_int_equal(et_cq_count(&U.scq[0]), 4);
	ud_free();
}

/* A message longer than the MTU, RDMA on UD, a datagram multipath QP;
 * a flush completes what is posted. */
static void
test_ud_refusals(void **state)
{
	struct et_send_wr big, wr;
	struct et_qp_attr a;
	struct et_wc wc;

	(void)state;
	ud_init();
	big = send_to_b(1, 0, 1025, QKEY);
	wr = send_to_b(2, 0, 8, QKEY);
	assert_int_equal(et_qp_post_send(U.qp[0], &big), -EINVAL);
	wr.opcode = ET_WR_RDMA_WRITE;
	assert_int_equal(et_qp_post_send(U.qp[0], &wr), -EINVAL);
	wr.opcode = ET_WR_RDMA_READ;
	assert_int_equal(et_qp_post_send(U.qp[0], &wr), -EINVAL);
	ud_attr(&a, 0x33, RTE_IPV4(10, 0, 0, 3));
	a.multipath = true;
	assert_int_equal(et_qp_attr_check(&a, NULL), -EINVAL);
	assert_null(et_qp_create(&a, &U.mr[0], &U.scq[0], &U.rcq[0], pool));
	a = *et_qp_attr_of(U.qp[0]);
	a.datagram = false;
	assert_int_equal(et_qp_modify(U.qp[0], &a), -EINVAL);
	post_recv(10, 0, 1024);
	et_qp_flush(U.qp[1]);
	assert_int_equal(et_cq_poll(&U.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	/* a datagram for a QP in error: dropped and counted */
	U.link.script = NULL;
	wr.opcode = ET_WR_SEND;
	assert_int_equal(et_qp_post_send(U.qp[0], &wr), 0);
	run();
	assert_int_equal(et_qp_stats(U.qp[1])->rx_dropped, 1);
	ud_free();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ud_send_recv),
		cmocka_unit_test(test_ud_lists),
		cmocka_unit_test(test_ud_drops),
		cmocka_unit_test(test_ud_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
