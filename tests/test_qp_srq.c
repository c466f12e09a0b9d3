/* SPDX-License-Identifier: BSD-3-Clause
 * A shared receive queue: two QPs take from one, each message the oldest
 * receive at its first packet (messages of two QPs interleaved on the
 * wire land whole, each in its own buffer); a QP on it refuses receives
 * of its own; one that fails leaves the rest to the other.
 */
#include <errno.h>

#include "et_test.h"

#include <rte_ip.h>

#include "transport/et_qp_priv.h"
#include "qp_link.h"

#define LEN 1500u  /* two packets at an MTU of 1024 */

static struct rte_mempool *pool;

static int
setup(void **state)
{
	(void)state;
	pool = et_test_eal_pool("test_qp_srq", 1023);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return et_test_eal_done(pool);
}

static struct et_qp *
rc_qp(struct et_mr_table *mrs, struct et_cq *scq, struct et_cq *rcq, uint32_t qpn,
      uint32_t dest_qpn)
{
	struct et_qp_attr a;
	struct et_qp *qp;

	et_qp_attr_default(&a);
	a.qpn = qpn;
	a.dest_qpn = dest_qpn;
	a.mtu = 1024;
	qp = et_qp_create(&a, mrs, scq, rcq, pool);
	assert_non_null(qp);
	return qp;
}

static void
test_srq(void **state)
{
	static uint8_t src[2][LEN], dst[4][2048];
	struct et_mr_table mr[2];
	struct et_cq scq[2], rcq[2];
	struct et_qp *a[2], *b[2];
	struct qp_link link[2];
	struct et_rq srq;
	const struct et_mr *ms, *md;
	struct et_wc wc;

	(void)state;
	for (int s = 0; s < 2; s++) {
		assert_int_equal(et_mr_table_init(&mr[s], 4), 0);
		assert_int_equal(et_cq_init(&scq[s], 64), 0);
		assert_int_equal(et_cq_init(&rcq[s], 64), 0);
	}
	for (uint32_t i = 0; i < LEN; i++) {
		src[0][i] = (uint8_t)(i * 3 + 1);
		src[1][i] = (uint8_t)(i * 5 + 2);
	}
	ms = et_mr_reg(&mr[0], src, sizeof(src), ET_ACCESS_LOCAL_WRITE);
	md = et_mr_reg(&mr[1], dst, sizeof(dst), ET_ACCESS_LOCAL_WRITE);
	assert_int_equal(et_rq_init(&srq, 3, 1), -EINVAL);
	assert_int_equal(et_rq_init(&srq, 8, 1), 0);
	for (int k = 0; k < 2; k++) {
		a[k] = rc_qp(&mr[0], &scq[0], &rcq[0], 0x10 + k, 0x20 + k);
		b[k] = rc_qp(&mr[1], &scq[1], &rcq[1], 0x20 + k, 0x10 + k);
		assert_int_equal(et_qp_set_srq(b[k], &srq), 0);
		assert_int_equal(et_qp_ready(a[k]), 0);
		assert_int_equal(et_qp_ready(b[k]), 0);
		qp_link_init(&link[k], a[k], b[k], pool, 1000);
		link[k].burst = 1; /* a packet a pass: the two QPs' messages interleave */
	}
	assert_int_equal(et_qp_set_srq(a[0], &srq), -EINVAL); /* ready already */
	for (uint64_t i = 0; i < 4; i++) {
		struct et_recv_wr r = {.wr_id = i, .addr = dst[i], .length = 2048, .lkey = md->key};

		assert_int_equal(et_srq_post(&srq, &mr[1], &r), 0);
		if (i == 0)
			assert_int_equal(et_qp_post_recv(b[0], &r), -EINVAL);
	}
	for (int k = 0; k < 2; k++) {
		struct et_send_wr w = {.wr_id = 7, .opcode = ET_WR_SEND, .local_addr = src[k],
				       .length = LEN, .lkey = ms->key};

		assert_int_equal(et_qp_post_send(a[k], &w), 0);
	}
	for (int i = 0; i < 200; i++)
		for (int k = 0; k < 2; k++) {
			link[k].now += 300;
			assert_true(qp_link_step(&link[k]) >= 0);
		}
	/* A0's FIRST took receive 0, A1's receive 1; each whole in its own */
	for (int n = 0; n < 2; n++) {
		assert_int_equal(et_cq_poll(&rcq[1], &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.byte_len, LEN);
		assert_memory_equal(dst[wc.wr_id], src[wc.qpn - 0x20], LEN);
		assert_int_equal(wc.wr_id, wc.qpn - 0x20);
	}
	assert_int_equal(et_rq_count(&srq), 2);
	/* B0 fails: nothing of the shared queue is flushed; B1 takes on */
	et_qp_flush(b[0]);
	assert_int_equal(et_cq_count(&rcq[1]), 0);
	assert_int_equal(et_rq_count(&srq), 2);
	struct et_send_wr w = {.wr_id = 8, .opcode = ET_WR_SEND, .local_addr = src[1],
			       .length = 10, .lkey = ms->key};

	assert_int_equal(et_qp_post_send(a[1], &w), 0);
	for (int i = 0; i < 50; i++) {
		link[1].now += 300;
		assert_true(qp_link_step(&link[1]) >= 0);
	}
	assert_int_equal(et_cq_poll(&rcq[1], &wc, 1), 1);
	assert_int_equal(wc.qpn, 0x21);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.byte_len, 10);
	for (int k = 0; k < 2; k++) {
		qp_link_free(&link[k]);
		et_qp_destroy(a[k]);
		et_qp_destroy(b[k]);
	}
	et_rq_free(&srq);
	for (int s = 0; s < 2; s++) {
		et_cq_free(&scq[s]);
		et_cq_free(&rcq[s]);
		et_mr_table_free(&mr[s]);
	}
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* A multipath QP keeps its own receives. */
static void
test_srq_refused(void **state)
{
	struct et_mr_table mr;
	struct et_cq cq;
	struct et_qp_attr a;
	struct et_rq srq;
	struct et_qp *qp;

	(void)state;
	assert_int_equal(et_mr_table_init(&mr, 4), 0);
	assert_int_equal(et_cq_init(&cq, 16), 0);
	assert_int_equal(et_rq_init(&srq, 4, 1), 0);
	et_qp_attr_default(&a);
	a.multipath = true;
	qp = et_qp_create(&a, &mr, &cq, &cq, pool);
	assert_non_null(qp);
	assert_int_equal(et_qp_set_srq(qp, &srq), -EINVAL);
	et_qp_destroy(qp);
	et_rq_free(&srq);
	et_cq_free(&cq);
	et_mr_table_free(&mr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srq),
		cmocka_unit_test(test_srq_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
