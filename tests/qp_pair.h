/* SPDX-License-Identifier: BSD-3-Clause
 * Two QPs on a scripted link (qp_link.h), driven by a fake clock, and the
 * workloads and scripts the transport's tests run on them: Go-Back-N pairs
 * (attrs, pair_init) and multipath ones (mp_attrs, mp_pair_init).
 */
#ifndef QP_PAIR_H
#define QP_PAIR_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "et_test.h"

#include <rte_ip.h>

#include "topo/et_path.h"
#include "transport/et_qp_priv.h"
#include "qp_link.h"


#define GUARD 4096
#define SPACE (12u << 20)

static struct rte_mempool *pool;

static inline int
setup(void **state)
{
	pool = et_test_eal_pool("test_qp", 16383);
	return pool ? 0 : -1;
}

static inline int
teardown(void **state)
{
	return et_test_eal_done(pool);
}

/* Side A sends from src, side B receives into dst; both are full QPs. */
struct pair {
	struct et_mr_table mr[2];
	struct et_cq scq[2], rcq[2];
	struct et_qp *qp[2];
	uint8_t *src, *dst;           /* dst has GUARD bytes on each side */
	const struct et_mr *msrc, *mdst;
	struct qp_link link;
	uint64_t seed;
	/* script state */
	double loss;
	uint64_t data_seen;
	uint32_t burst_every, burst_len;
	bool drop_tails, drop_all_ab;
	double ack_loss, dup, reorder, mark;
	uint64_t drop_nth;            /* drop the nth A->B data packet (1-based) */
	uint32_t tail_dropped[1024];
	uint32_t n_tail_dropped;
	uint16_t last_data_sport, last_ack_sport, last_rx_sport;
	/* multipath */
	bool writes_only;             /* workload: WRITE and WRITE_IMM only */
	uint64_t jitter_ns;           /* extra random delay per frame, both ways */
	uint32_t max_span;            /* most PSNs in flight seen at A */
	uint32_t verified;            /* messages whose bytes were checked */
	uint32_t recv_seen;           /* receive completions checked */
	uint32_t dropped_psn;
	uint16_t dropped_sport, resent_sport;
	uint64_t dropped_at, resent_at;
};

static struct pair P;

static inline void
attrs(struct et_qp_attr *a, struct et_qp_attr *b, uint32_t mtu, uint32_t psn)
{
	et_qp_attr_default(a);
	a->qpn = 0x11;
	a->dest_qpn = 0x22;
	a->ip = RTE_IPV4(10, 0, 0, 1);
	a->dest_ip = RTE_IPV4(10, 0, 1, 1);
	a->mtu = mtu;
	a->sq_psn = psn;
	a->rq_psn = 0x500;
	a->path_id = 0x0102;
	a->dctcp.init_cwnd = 64 * 1024;
	a->max_send_wr = 1024;
	a->max_recv_wr = 1024;
	*b = *a;
	b->qpn = 0x22;
	b->dest_qpn = 0x11;
	b->ip = a->dest_ip;
	b->dest_ip = a->ip;
	b->sq_psn = 0x500;
	b->rq_psn = psn;
}

static inline void
pair_init_attr(const struct et_qp_attr *a, const struct et_qp_attr *b, uint32_t b_access)
{
	memset(&P, 0, sizeof(P));
	P.seed = 0x5eed;
	P.src = malloc(SPACE);
	P.dst = malloc(SPACE + 2 * GUARD);
	assert_non_null(P.src);
	assert_non_null(P.dst);
	for (uint32_t i = 0; i < SPACE; i++)
		P.src[i] = (uint8_t)(et_test_rand(&P.seed) >> 7);
	memset(P.dst, 0xa5, SPACE + 2 * GUARD);
	for (int s = 0; s < 2; s++) {
		assert_int_equal(et_mr_table_init(&P.mr[s], 8), 0);
		assert_int_equal(et_cq_init(&P.scq[s], 4096), 0);
		assert_int_equal(et_cq_init(&P.rcq[s], 4096), 0);
	}
	P.msrc = et_mr_reg(&P.mr[0], P.src, SPACE, ET_ACCESS_LOCAL_WRITE);
	P.mdst = et_mr_reg(&P.mr[1], P.dst + GUARD, SPACE, b_access);
	P.qp[0] = et_qp_create(a, &P.mr[0], &P.scq[0], &P.rcq[0], pool);
	P.qp[1] = et_qp_create(b, &P.mr[1], &P.scq[1], &P.rcq[1], pool);
	assert_non_null(P.qp[0]);
	assert_non_null(P.qp[1]);
	assert_int_equal(et_qp_ready(P.qp[0]), 0);
	assert_int_equal(et_qp_ready(P.qp[1]), 0);
	qp_link_init(&P.link, P.qp[0], P.qp[1], pool, 2000);
	P.link.ctx = &P;
}

static inline void
pair_init(uint32_t mtu, uint32_t psn)
{
	struct et_qp_attr a, b;

	attrs(&a, &b, mtu, psn);
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
}

/* An RDMA WRITE of the first len bytes of src to the start of dst. */
static inline struct et_send_wr
write_wr(uint64_t id, uint32_t len)
{
	return (struct et_send_wr){.wr_id = id, .opcode = ET_WR_RDMA_WRITE, .local_addr = P.src,
				   .length = len, .lkey = P.msrc->key,
				   .remote_addr = (uintptr_t)(P.dst + GUARD), .rkey = P.mdst->key};
}

static inline void
pair_free(void)
{
	qp_link_free(&P.link);
	for (int s = 0; s < 2; s++) {
		et_qp_destroy(P.qp[s]);
		et_cq_free(&P.scq[s]);
		et_cq_free(&P.rcq[s]);
		et_mr_table_free(&P.mr[s]);
	}
	free(P.src);
	free(P.dst);
	assert_int_equal(rte_mempool_in_use_count(pool), 0); /* no mbuf leak */
}

static inline void
assert_guards(void)
{
	for (uint32_t i = 0; i < GUARD; i++) {
		assert_int_equal(P.dst[i], 0xa5);
		assert_int_equal(P.dst[GUARD + SPACE + i], 0xa5);
	}
}

/* ---- scripts ---- */

static inline bool
chance(double p)
{
	return (double)(et_test_rand(&P.seed) % 1000000) < p * 1e6;
}

static inline enum qp_verdict
script(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	bool data = p->h.opcode != ET_OP_ACK && p->h.opcode != ET_OP_CNP;

	if (P.jitter_ns)
		*delay += et_test_rand(&P.seed) % P.jitter_ns;
	if (dir == 0 && data && P.qp[0]->mp) {
		uint32_t span = (uint32_t)et_psn_diff(P.qp[0]->snd_nxt, P.qp[0]->snd_una);

		if (span > P.max_span)
			P.max_span = span;
		if (P.drop_nth && P.data_seen + 1 == P.drop_nth) {
			P.dropped_psn = p->h.psn;
			P.dropped_sport = p->h.udp_sport;
			P.dropped_at = l->now;
		} else if (P.drop_nth && P.data_seen >= P.drop_nth && p->h.psn == P.dropped_psn &&
			   !P.resent_at) {
			P.resent_at = l->now;
			P.resent_sport = p->h.udp_sport;
		}
	}
	if (dir == 1) {
		if (p->h.opcode == ET_OP_ACK)
			P.last_ack_sport = p->h.udp_sport;
		if (P.ack_loss > 0 && chance(P.ack_loss))
			return QP_DROP;
		if (P.dup > 0 && chance(P.dup))
			return QP_DUP;
		return QP_DELIVER;
	}
	if (!data)
		return QP_DELIVER;
	P.data_seen++;
	P.last_data_sport = p->h.udp_sport;
	if (P.drop_all_ab)
		return QP_DROP;
	if (P.drop_nth && P.data_seen == P.drop_nth)
		return QP_DROP;
	if (P.loss > 0 && chance(P.loss))
		return QP_DROP;
	if (P.burst_every && P.data_seen % P.burst_every < P.burst_len)
		return QP_DROP;
	if (P.drop_tails && (et_opcode_flags[p->h.opcode] & ET_OPF_LAST)) {
		/* each message's last packet is lost the first time it is sent */
		for (uint32_t i = 0; i < P.n_tail_dropped; i++)
			if (P.tail_dropped[i] == p->h.psn)
				goto keep;
		if (P.n_tail_dropped < 1024) {
			P.tail_dropped[P.n_tail_dropped++] = p->h.psn;
			return QP_DROP;
		}
	}
keep:
	if (P.dup > 0 && chance(P.dup))
		return QP_DUP;
	if (P.reorder > 0 && chance(P.reorder)) {
		*delay *= 4;
		return QP_DELIVER;
	}
	if (P.mark > 0 && chance(P.mark))
		return QP_MARK;
	return QP_DELIVER;
}

/* ---- a workload of random messages ---- */

struct msg {
	uint8_t opcode;
	uint32_t off, len;
};

static struct msg msgs[512];
static uint32_t n_msgs;

static uint32_t expect_send, expect_recv;

static inline bool
all_completed(struct qp_link *l)
{
	(void)l;
	return et_cq_count(&P.scq[0]) >= expect_send && et_cq_count(&P.rcq[1]) >= expect_recv;
}

/* Random sizes from 0 B to max_big, a few big ones and many small ones,
 * laid out without overlap in dst. */
static inline void
post_workload(uint32_t n, uint32_t max_big, uint32_t total)
{
	uint32_t off = 0;

	n_msgs = 0;
	expect_send = expect_recv = 0;
	for (uint32_t i = 0; i < n && off < total; i++) {
		uint64_t r = et_test_rand(&P.seed);
		uint32_t len = i % 8 == 3 ? (uint32_t)(r % (max_big + 1)) : (uint32_t)(r % 5000);
		uint8_t op = (uint8_t)(et_test_rand(&P.seed) % (P.writes_only ? 2 : 4));
		struct et_send_wr wr;

		if (i == 0)
			len = 0;
		if (i == 1)
			len = max_big;
		if (off + len > total)
			len = total - off;
		wr = (struct et_send_wr){.wr_id = i, .opcode = op, .local_addr = P.src + off,
					 .length = len, .lkey = P.msrc->key,
					 .remote_addr = (uintptr_t)(P.dst + GUARD + off),
					 .rkey = P.mdst->key, .imm = 0xabc00000 + i};
		if (op == ET_WR_SEND || op == ET_WR_SEND_IMM || op == ET_WR_RDMA_WRITE_IMM) {
			struct et_recv_wr rw = {.wr_id = 1000 + i,
						.addr = op == ET_WR_RDMA_WRITE_IMM ? NULL
						      : P.dst + GUARD + off,
						.length = op == ET_WR_RDMA_WRITE_IMM ? 0 : len,
						.lkey = P.mdst->key};

			assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
			expect_recv++;
		}
		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
		msgs[n_msgs++] = (struct msg){op, off, len};
		expect_send++;
		off += len;
	}
}

/* Every request completed once, in order, successfully; every receive with
 * the right length and immediate; the bytes arrived; nothing else moved. */
static inline void
check_workload(void)
{
	struct et_wc wc;
	uint32_t i, r = 0;

	for (i = 0; i < n_msgs; i++) {
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		if (wc.status != ET_WC_SUCCESS)
			fail_msg("send %u: %s", i, et_wc_status_str(wc.status));
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.byte_len, msgs[i].len);
		assert_int_equal(wc.opcode, msgs[i].opcode >= ET_WR_SEND ? ET_WC_SEND
									 : ET_WC_RDMA_WRITE);
		if (msgs[i].opcode == ET_WR_RDMA_WRITE)
			continue;
		assert_int_equal(et_cq_poll(&P.rcq[1], &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.wr_id, 1000 + i);
		assert_int_equal(wc.byte_len, msgs[i].len);
		assert_int_equal(wc.with_imm, msgs[i].opcode != ET_WR_SEND);
		if (wc.with_imm)
			assert_int_equal(wc.imm, 0xabc00000 + i);
		assert_int_equal(wc.opcode, msgs[i].opcode == ET_WR_RDMA_WRITE_IMM
						    ? ET_WC_RECV_RDMA_WITH_IMM : ET_WC_RECV);
		r++;
	}
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 0);  /* exactly once */
	assert_int_equal(et_cq_poll(&P.rcq[1], &wc, 1), 0);
	for (i = 0; i < n_msgs; i++)
		if (memcmp(P.dst + GUARD + msgs[i].off, P.src + msgs[i].off, msgs[i].len))
			fail_msg("message %u (%u bytes at %u) differs", i, msgs[i].len, msgs[i].off);
	assert_guards();
	assert_int_equal(et_qp_sq_outstanding(P.qp[0]), 0);
	(void)r;
}

static inline void
run_workload(uint32_t mtu, uint32_t psn, uint32_t n, uint32_t max_big, uint32_t total)
{
	int rc;

	post_workload(n, max_big, total);
	rc = qp_link_run(&P.link, all_completed, 60ull * 1000000000);
	if (rc)
		fail_msg("run: %d (sent %lu completions %u/%u)", rc, P.link.sent[0],
			 et_cq_count(&P.scq[0]), expect_send);
	check_workload();
	(void)mtu;
	(void)psn;
}

static const uint32_t mtus[] = {256, 512, 1024, 2048, 4096};

static inline bool
send_cq_has(struct qp_link *l, uint32_t n)
{
	return et_cq_count(&P.scq[0]) >= n;
}

static inline bool
two_completions(struct qp_link *l)
{
	return send_cq_has(l, 2);
}

static inline bool
three_completions(struct qp_link *l)
{
	return send_cq_has(l, 3);
}

static inline bool
one_completion(struct qp_link *l)
{
	return send_cq_has(l, 1);
}

/* ---- multipath mode ---- */

static inline void
mp_attrs(struct et_qp_attr *a, struct et_qp_attr *b, uint32_t mtu, uint32_t psn)
{
	attrs(a, b, mtu, psn);
	a->multipath = b->multipath = true;
}

static inline void
mp_pair_init(uint32_t mtu, uint32_t psn)
{
	struct et_qp_attr a, b;

	mp_attrs(&a, &b, mtu, psn);
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = script;
	P.writes_only = true;
}

/* Each receive completion must find its message, and every one before it,
 * already in place: peek at B's receive queue after every packet B takes. */
static inline void
mp_check_recv(struct qp_link *l, int side)
{
	const struct et_cq *cq = &P.rcq[1];

	(void)l;
	if (side != 1)
		return;
	while (P.recv_seen < et_cq_count(cq)) {
		const struct et_wc *wc = &cq->ring[(cq->head + P.recv_seen) & (cq->size - 1)];
		uint32_t m = (uint32_t)wc->wr_id - 1000;

		assert_true(m < n_msgs);
		for (; P.verified <= m; P.verified++)
			if (memcmp(P.dst + GUARD + msgs[P.verified].off, P.src + msgs[P.verified].off,
				   msgs[P.verified].len))
				fail_msg("message %u incomplete at the completion of %u",
					 P.verified, m);
		P.recv_seen++;
	}
}

static inline uint16_t
random_path(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	(void)ctx;
	(void)qp;
	(void)now;
	return ev == ET_PATH_PACKET ? (uint16_t)et_test_rand(&P.seed) : 0;
}

static inline void
mp_run_workload(uint32_t n, uint32_t max_big, uint32_t total)
{
	int rc;

	post_workload(n, max_big, total);
	P.link.after_rx = mp_check_recv;
	rc = qp_link_run(&P.link, all_completed, 60ull * 1000000000);
	if (rc)
		fail_msg("run: %d (sent %lu completions %u/%u)", rc, P.link.sent[0],
			 et_cq_count(&P.scq[0]), expect_send);
	check_workload();
	assert_int_equal(P.recv_seen, expect_recv);
	assert_true(P.max_span <= ET_QP_MP_WINDOW);
	assert_int_equal(P.qp[1]->st.rx_beyond_window, 0);
	assert_int_equal(P.qp[1]->st.naks_tx, 0);
}

#endif /* QP_PAIR_H */
