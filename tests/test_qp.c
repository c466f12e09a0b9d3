/* SPDX-License-Identifier: BSD-3-Clause
 * The RC transport under every loss pattern: two QPs on a scripted link,
 * driven by a fake clock.
 */
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

static int
setup(void **state)
{
	pool = et_test_eal_pool("test_qp", 16383);
	return pool ? 0 : -1;
}

static int
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

static void
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

static void
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

static void
pair_init(uint32_t mtu, uint32_t psn)
{
	struct et_qp_attr a, b;

	attrs(&a, &b, mtu, psn);
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
}

/* An RDMA WRITE of the first len bytes of src to the start of dst. */
static struct et_send_wr
write_wr(uint64_t id, uint32_t len)
{
	return (struct et_send_wr){.wr_id = id, .opcode = ET_WR_RDMA_WRITE, .local_addr = P.src,
				   .length = len, .lkey = P.msrc->key,
				   .remote_addr = (uintptr_t)(P.dst + GUARD), .rkey = P.mdst->key};
}

static void
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

static void
assert_guards(void)
{
	for (uint32_t i = 0; i < GUARD; i++) {
		assert_int_equal(P.dst[i], 0xa5);
		assert_int_equal(P.dst[GUARD + SPACE + i], 0xa5);
	}
}

/* ---- scripts ---- */

static bool
chance(double p)
{
	return (double)(et_test_rand(&P.seed) % 1000000) < p * 1e6;
}

static enum qp_verdict
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

static bool
all_completed(struct qp_link *l)
{
	(void)l;
	return et_cq_count(&P.scq[0]) >= expect_send && et_cq_count(&P.rcq[1]) >= expect_recv;
}

/* Random sizes from 0 B to max_big, a few big ones and many small ones,
 * laid out without overlap in dst. */
static void
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
static void
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

static void
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

static void
test_no_loss(void **state)
{
	for (int i = 0; i < 5; i++) {
		pair_init(mtus[i], 0x1000);
		P.link.script = script;
		run_workload(mtus[i], 0x1000, 64, 8u << 20, SPACE);
		/* nothing lost: nothing sent twice, no timer fired */
		assert_int_equal(P.qp[0]->st.retransmits, 0);
		assert_int_equal(P.qp[0]->st.timeouts, 0);
		assert_int_equal(P.qp[1]->st.naks_tx, 0);
		pair_free();
	}
}

static void
test_random_loss(void **state)
{
	for (int i = 0; i < 5; i++) {
		pair_init(mtus[i], 0x2000);
		P.link.script = script;
		P.loss = 0.01;
		run_workload(mtus[i], 0x2000, 48, 1u << 20, 3u << 20);
		assert_true(P.link.dropped[0] > 0);
		assert_true(P.qp[0]->st.retransmits > 0);
		pair_free();
	}
}

static void
test_burst_loss(void **state)
{
	pair_init(1024, 0x3000);
	P.link.script = script;
	P.burst_every = 500;
	P.burst_len = 20;
	run_workload(1024, 0x3000, 48, 2u << 20, 6u << 20);
	assert_true(P.qp[1]->st.naks_tx > 0);
	pair_free();
}

static bool one_completion(struct qp_link *l);

static void
test_tail_loss(void **state)
{
	struct et_send_wr wr;
	struct et_wc wc;

	/* a lost last packet leaves no later packet to reveal the gap: only
	 * the retransmit timer repairs it */
	pair_init(2048, 0x4000);
	P.link.script = script;
	P.drop_tails = true;
	wr = write_wr(1, 20000);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(P.qp[0]->st.timeouts, 1);
	assert_int_equal(P.qp[1]->st.naks_tx, 0);
	assert_memory_equal(P.dst + GUARD, P.src, 20000);
	pair_free();

	/* and every message's tail, in a mixed workload */
	pair_init(2048, 0x4000);
	P.link.script = script;
	P.drop_tails = true;
	run_workload(2048, 0x4000, 24, 256 * 1024, 1u << 20);
	pair_free();
}

static void
test_ack_loss(void **state)
{
	pair_init(512, 0x5000);
	P.link.script = script;
	P.ack_loss = 0.3;
	run_workload(512, 0x5000, 48, 512 * 1024, 2u << 20);
	assert_true(P.link.dropped[1] > 0);
	pair_free();
}

static void
test_duplicates_and_reordering(void **state)
{
	pair_init(1024, 0x6000);
	P.link.script = script;
	P.dup = 0.05;
	P.reorder = 0.05;
	run_workload(1024, 0x6000, 48, 1u << 20, 3u << 20);
	assert_true(P.qp[1]->st.rx_dup > 0);
	assert_true(P.qp[1]->st.rx_out_of_order > 0);
	pair_free();
}

static void
test_psn_wrap(void **state)
{
	/* the message's PSNs run 0xfffff0 .. past 0xffffff to 0x00002f */
	pair_init(1024, 0xfffff0);
	P.link.script = script;
	P.loss = 0.02;
	run_workload(1024, 0xfffff0, 4, 64 * 1024, 200 * 1024);
	assert_true(et_psn_diff(P.qp[0]->snd_una, 0xfffff0) > 64);
	assert_true(P.qp[0]->snd_una < 0x1000);
	pair_free();
}

static void
test_gap_gives_one_nak(void **state)
{
	pair_init(1024, 0x7000);
	P.link.script = script;
	P.drop_nth = 5; /* many packets follow it inside the window */
	run_workload(1024, 0x7000, 2, 128 * 1024, 256 * 1024);
	assert_true(P.qp[1]->st.rx_out_of_order > 10);
	assert_int_equal(P.qp[1]->st.naks_tx, 1);
	assert_int_equal(P.qp[0]->st.naks_rx, 1);
	assert_int_equal(P.qp[0]->st.timeouts, 0);
	pair_free();
}

static bool
send_cq_has(struct qp_link *l, uint32_t n)
{
	return et_cq_count(&P.scq[0]) >= n;
}

static bool
two_completions(struct qp_link *l)
{
	return send_cq_has(l, 2);
}

static bool
three_completions(struct qp_link *l)
{
	return send_cq_has(l, 3);
}

static void
remote_access_case(uint32_t access, int bad)
{
	struct et_qp_attr a, b;
	struct et_send_wr wr;
	struct et_wc wc;

	attrs(&a, &b, 1024, 0x8000);
	pair_init_attr(&a, &b, access);
	P.link.script = script;
	wr = write_wr(1, 5000);
	if (bad == 0)
		wr.rkey ^= 0x100; /* a key that names no region */
	if (bad == 1)
		wr.remote_addr = (uintptr_t)(P.dst + GUARD + SPACE - 5000 + 1); /* 1 byte out */
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	wr.wr_id = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	wr.wr_id = 3;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, three_completions, 1000000000ull), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, ET_WC_REM_ACCESS_ERR);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	assert_int_equal(P.qp[0]->state, ET_QPS_ERR);
	assert_int_equal(P.qp[1]->state, ET_QPS_ERR);
	assert_int_equal(P.qp[1]->st.err_naks_tx, 1);
	/* nothing written anywhere */
	for (uint32_t i = 0; i < SPACE + 2 * GUARD; i++)
		if (P.dst[i] != 0xa5)
			fail_msg("byte %u written", i);
	/* later requests complete at once, flushed */
	wr.wr_id = 4;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	pair_free();
}

static void
test_remote_access_violations(void **state)
{
	remote_access_case(ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE, 0); /* bad rkey */
	remote_access_case(ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE, 1); /* +1 byte */
	remote_access_case(ET_ACCESS_LOCAL_WRITE, 2); /* no remote write access */
}

static bool
one_completion(struct qp_link *l)
{
	return send_cq_has(l, 1);
}

static void
test_rnr(void **state)
{
	struct et_send_wr wr;
	struct et_recv_wr rw;
	struct et_qp_attr a, b;
	struct et_wc wc;

	pair_init(1024, 0x9000);
	P.link.script = script;
	wr = (struct et_send_wr){.wr_id = 7, .opcode = ET_WR_SEND, .local_addr = P.src,
				 .length = 3000, .lkey = P.msrc->key};
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	/* no receive posted: RNR NAKs, the sender waits and tries again */
	assert_int_equal(qp_link_run(&P.link, one_completion, 5000000), -3);
	assert_true(P.qp[1]->st.rnr_naks_tx >= 2);
	assert_true(P.qp[0]->st.rnr_naks_rx >= 2);
	rw = (struct et_recv_wr){.wr_id = 8, .addr = P.dst + GUARD, .length = 4000,
				 .lkey = P.mdst->key};
	assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(et_cq_poll(&P.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 8);
	assert_int_equal(wc.byte_len, 3000);
	assert_memory_equal(P.dst + GUARD, P.src, 3000);
	pair_free();

	/* rnr_retry 0: the first RNR NAK ends it */
	attrs(&a, &b, 1024, 0x9000);
	a.rnr_retry = 0;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = script;
	wr.local_addr = P.src;
	wr.lkey = P.msrc->key;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_RNR_RETRY_EXC_ERR);
	pair_free();

	/* a receive too small for the SEND: NAK invalid request, both fail */
	pair_init(1024, 0x9000);
	P.link.script = script;
	wr.local_addr = P.src;
	wr.lkey = P.msrc->key;
	rw = (struct et_recv_wr){.wr_id = 8, .addr = P.dst + GUARD, .length = 100,
				 .lkey = P.mdst->key};
	assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_REM_INV_REQ_ERR);
	assert_int_equal(et_cq_poll(&P.rcq[1], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_LOC_LEN_ERR);
	assert_guards();
	pair_free();
}

static void
dctcp_run(double mark, uint64_t cnp_interval, double *alpha, uint32_t *cwnd,
	  uint64_t *cnps, uint64_t *marks)
{
	struct et_qp_attr a, b;

	attrs(&a, &b, 1024, 0xa000);
	b.cnp_interval_ns = cnp_interval;
	a.dctcp.init_cwnd = 256 * 1024;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = script;
	P.mark = mark;
	run_workload(1024, 0xa000, 64, 1u << 20, 8u << 20);
	*alpha = P.qp[0]->cc.alpha;
	*cwnd = et_dctcp_cwnd(&P.qp[0]->cc);
	*cnps = P.qp[1]->st.cnps_tx;
	*marks = P.qp[1]->st.rx_ce;
	assert_int_equal(P.qp[0]->st.cnps_rx, *cnps);
	pair_free();
}

static void
test_dctcp_through_the_qp(void **state)
{
	double alpha0, alpha;
	uint32_t cwnd0, cwnd;
	uint64_t cnps, marks;

	dctcp_run(0, 0, &alpha0, &cwnd0, &cnps, &marks);
	assert_int_equal(cnps, 0);
	assert_true(cwnd0 > 256 * 1024); /* grew: no marks */
	dctcp_run(0.3, 0, &alpha, &cwnd, &cnps, &marks);
	assert_true(marks > 1000);
	assert_int_equal(cnps, marks); /* one CNP per marked packet */
	assert_true(alpha > 0.15 && alpha < 0.6);
	assert_true(cwnd < cwnd0 / 4);
	/* a minimum gap between CNPs thins them out */
	dctcp_run(0.3, 50000, &alpha, &cwnd, &cnps, &marks);
	assert_true(cnps > 0 && cnps < marks / 4);
}

static void
test_retry_exhaustion(void **state)
{
	struct et_send_wr wr;
	struct et_qp_attr a, b;
	struct et_wc wc;

	attrs(&a, &b, 1024, 0xb000);
	a.retry_cnt = 2;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = script;
	P.drop_all_ab = true;
	wr = write_wr(1, 10000);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	wr.wr_id = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, NULL, 1000000000ull), 0);
	assert_int_equal(P.qp[0]->st.timeouts, 3);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_RETRY_EXC_ERR);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 0);
	assert_int_equal(P.qp[0]->state, ET_QPS_ERR);
	/* 1 ms RTO, three tries: done within a few ms of virtual time */
	assert_true(P.link.now < 5000000);
	pair_free();

	/* retry_cnt 7 tries forever; the link heals and it completes */
	pair_init(1024, 0xb000);
	P.link.script = script;
	P.drop_all_ab = true;
	wr = write_wr(1, 10000);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 30000000), -3);
	assert_true(P.qp[0]->st.timeouts >= 25);
	assert_int_equal(et_cq_count(&P.scq[0]), 0);
	P.drop_all_ab = false;
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_memory_equal(P.dst + GUARD, P.src, 10000);
	pair_free();
}

struct hook_log {
	uint32_t calls[3];
};

static struct hook_log hooks;

static uint16_t
hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	struct hook_log *h = ctx;

	(void)qp;
	(void)now;
	h->calls[ev]++;
	return (uint16_t)((ev + 1) << 8 | h->calls[ev]);
}

static bool
b_received_fresh(struct qp_link *l)
{
	return P.qp[1]->st.rx_pkts > 0 && P.data_seen > P.drop_nth + 3;
}

static void
test_path_hook(void **state)
{
	struct et_send_wr wr;
	uint16_t sport;

	memset(&hooks, 0, sizeof(hooks));
	pair_init(1024, 0xc000);
	P.link.script = script;
	et_qp_set_path_fn(P.qp[0], hook, &hooks);
	wr = write_wr(1, 100000);
	P.drop_nth = 3;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, b_received_fresh, 100000000), 0);
	assert_int_equal(hooks.calls[ET_PATH_FIRST], 1);
	assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
	assert_int_equal(hooks.calls[ET_PATH_FIRST], 1);
	assert_int_equal(hooks.calls[ET_PATH_NAK], 1);
	assert_int_equal(hooks.calls[ET_PATH_TIMEOUT], 0);
	/* data after the NAK went on the path the hook gave for it */
	assert_int_equal(P.last_data_sport, 0x0201);
	/* the responder answers on the byte swap of what it received */
	assert_int_equal(P.last_ack_sport, et_path_swap(0x0201));

	/* a timeout asks again, and says so */
	P.drop_all_ab = true;
	wr.wr_id = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, NULL, P.link.now + 1500000), -3);
	assert_int_equal(hooks.calls[ET_PATH_TIMEOUT], 1);
	/* healed, but only the next timeout resends: on the path it gets */
	P.drop_all_ab = false;
	assert_int_equal(qp_link_run(&P.link, two_completions, P.link.now + 100000000), 0);
	assert_int_equal(hooks.calls[ET_PATH_TIMEOUT], 2);
	sport = P.last_data_sport;
	assert_int_equal(sport, 0x0302);
	assert_int_equal(P.last_ack_sport, et_path_swap(0x0302));
	assert_int_equal(P.qp[0]->st.path_changes, 3);
	pair_free();
}

static void
test_post_errors(void **state)
{
	struct et_qp_attr a, b;
	struct et_send_wr wr;
	struct et_recv_wr rw;
	struct et_qp *q;
	const char *why;

	attrs(&a, &b, 1024, 0);
	a.max_send_wr = 4;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	wr = (struct et_send_wr){.opcode = ET_WR_RDMA_WRITE, .local_addr = P.src, .length = 10,
				 .lkey = P.msrc->key, .rkey = P.mdst->key,
				 .remote_addr = (uintptr_t)(P.dst + GUARD)};
	for (int i = 0; i < 4; i++)
		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -ENOSPC);
	wr.lkey ^= 0x100;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	wr.lkey ^= 0x100;
	wr.opcode = 9;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	/* a receive buffer without local write access */
	rw = (struct et_recv_wr){.addr = P.src, .length = 10, .lkey = P.msrc->key};
	assert_int_equal(et_qp_post_recv(P.qp[0], &rw), 0);
	rw.lkey = 0;
	assert_int_equal(et_qp_post_recv(P.qp[0], &rw), -EINVAL);
	/* RESET: not yet */
	q = et_qp_create(&a, &P.mr[0], &P.scq[0], &P.rcq[0], pool);
	assert_non_null(q);
	wr.opcode = ET_WR_SEND;
	assert_int_equal(et_qp_post_send(q, &wr), -EINVAL);
	/* the peer's QPN: 24 bits, and only before the QP is ready */
	assert_int_equal(et_qp_connect(q, ET_QPN_MASK + 1), -EINVAL);
	assert_int_equal(et_qp_connect(q, 0x33), 0);
	assert_int_equal(et_qp_ready(q), 0);
	assert_int_equal(et_qp_connect(q, 0x34), -EINVAL);
	assert_int_equal(et_qp_ready(q), -EINVAL);
	et_qp_destroy(q);
	/* attributes */
	a.mtu = 1000;
	assert_int_equal(et_qp_attr_check(&a, &why), -EINVAL);
	assert_non_null(strstr(why, "MTU"));
	assert_null(et_qp_create(&a, &P.mr[0], &P.scq[0], &P.rcq[0], pool));
	pair_free();
}

static void
test_mr_bounds(void **state)
{
	static uint8_t buf[1000];
	struct et_mr_table t;
	const struct et_mr *mr;
	uint64_t va = (uintptr_t)buf;
	uint32_t key;

	assert_int_equal(et_mr_table_init(&t, 2), 0);
	mr = et_mr_reg(&t, buf, sizeof(buf), ET_ACCESS_REMOTE_WRITE);
	key = mr->key;
	assert_ptr_equal(et_mr_lookup(&t, key, va, 1000, ET_ACCESS_REMOTE_WRITE), buf);
	assert_ptr_equal(et_mr_lookup(&t, key, va + 999, 1, ET_ACCESS_REMOTE_WRITE), buf + 999);
	assert_null(et_mr_lookup(&t, key, va + 1000, 1, ET_ACCESS_REMOTE_WRITE));
	assert_null(et_mr_lookup(&t, key, va - 1, 1, ET_ACCESS_REMOTE_WRITE));
	assert_null(et_mr_lookup(&t, key, va, 1001, ET_ACCESS_REMOTE_WRITE));
	assert_null(et_mr_lookup(&t, key, va + 1, UINT64_MAX, ET_ACCESS_REMOTE_WRITE));
	assert_null(et_mr_lookup(&t, key, UINT64_MAX, 2, ET_ACCESS_REMOTE_WRITE));
	assert_null(et_mr_lookup(&t, key, va, 10, ET_ACCESS_REMOTE_READ));
	assert_null(et_mr_lookup(&t, key + 1, va, 10, ET_ACCESS_REMOTE_WRITE));
	/* a stale key misses after the slot is reused */
	assert_int_equal(et_mr_dereg(&t, key), 0);
	assert_int_equal(et_mr_dereg(&t, key), -EINVAL);
	mr = et_mr_reg(&t, buf, sizeof(buf), ET_ACCESS_REMOTE_WRITE);
	assert_int_not_equal(mr->key, key);
	assert_null(et_mr_lookup(&t, key, va, 10, ET_ACCESS_REMOTE_WRITE));
	assert_non_null(et_mr_reg(&t, buf, 10, 0));
	assert_null(et_mr_reg(&t, buf, 10, 0)); /* full */
	assert_null(et_mr_reg(&t, NULL, 10, 0));
	et_mr_table_free(&t);
}

/* ---- multipath mode ---- */

static void
mp_attrs(struct et_qp_attr *a, struct et_qp_attr *b, uint32_t mtu, uint32_t psn)
{
	attrs(a, b, mtu, psn);
	a->multipath = b->multipath = true;
}

static void
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
static void
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

static uint16_t
random_path(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	(void)ctx;
	(void)qp;
	(void)now;
	return ev == ET_PATH_PACKET ? (uint16_t)et_test_rand(&P.seed) : 0;
}

static void
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

/* ---- RNR NAKs (issue 21) ---- */

/* Run until A has taken this many RNR NAKs (or a request completed). */
static uint32_t rnr_want;
/* The data frames A sent: PSN and time, in order. */
static uint32_t rnr_psn[16];
static uint64_t rnr_at[16];
static uint32_t rnr_sent;

static bool
rnr_naks_in(struct qp_link *l)
{
	return P.qp[0]->st.rnr_naks_rx >= rnr_want || send_cq_has(l, 1);
}

static enum qp_verdict
rnr_script(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	if (dir == 0 && p->h.opcode != ET_OP_ACK && p->h.opcode != ET_OP_CNP &&
	    rnr_sent < RTE_DIM(rnr_psn)) {
		rnr_psn[rnr_sent] = p->h.psn;
		rnr_at[rnr_sent++] = l->now;
	}
	return script(l, dir, p, delay);
}

/* One SEND (in multipath mode a WRITE with immediate, which needs a
 * receive too) of len bytes from A, none posted at B; B's RNR NAKs carry
 * timer code b_code, A's own min_rnr_timer is another. */
static void
rnr_pair(bool multipath, uint32_t psn, uint8_t b_code, uint8_t rnr_retry, uint32_t len)
{
	struct et_qp_attr a, b;
	struct et_send_wr wr;

	if (multipath)
		mp_attrs(&a, &b, 1024, psn);
	else
		attrs(&a, &b, 1024, psn);
	a.min_rnr_timer = 1;
	a.rnr_retry = rnr_retry;
	b.min_rnr_timer = b_code;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = rnr_script;
	rnr_sent = 0;
	wr = write_wr(7, len);
	wr.opcode = multipath ? ET_WR_RDMA_WRITE_IMM : ET_WR_SEND;
	wr.imm = 0x5151;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
}

/* A has just taken an RNR NAK carrying timer code `code`: it waits that
 * long (the NAK's time, not its own min_rnr_timer), sends nothing before
 * the end and may send at the end.  A NIC fires its timer at the end of
 * the wait; after that the QP's deadline must be later than that now, or
 * the NIC, polling at that now, fires it again and again (issue 21). */
static void
rnr_wait_out(uint8_t code)
{
	struct et_qp *q = P.qp[0];
	uint64_t end = et_qp_deadline(q);

	assert_int_equal(end - P.link.now, et_rnr_timer_ns(code));
	assert_false(et_qp_tx_ready(q, end - 1));
	P.link.now = end;
	et_qp_timer(q, end);
	if (et_qp_deadline(q) <= end)
		fail_msg("its timer ran at %" PRIu64 " ns and the QP's deadline is still %" PRIu64
			 " ns: a NIC would fire it again at the same now", end, et_qp_deadline(q));
	assert_true(et_qp_tx_ready(q, end));
}

/* The peer answers the first message with an RNR NAK and then has a
 * receive: the requester waits the NAK's time, sends again from the NAKed
 * PSN, completes, and has its RNR retries back. */
static void
test_rnr_nak_once(void **state)
{
	struct et_recv_wr rw;
	struct et_wc wc;

	(void)state;
	/* IBTA vol. 1 table 45: code 0 is the longest */
	assert_int_equal(et_rnr_timer_ns(0), 655360000);
	assert_int_equal(et_rnr_timer_ns(1), 10000);
	assert_int_equal(et_rnr_timer_ns(14), 1280000);
	assert_int_equal(et_rnr_timer_ns(31), 491520000);
	for (int mp = 0; mp < 2; mp++) {
		rnr_pair(mp, 0xfffffe, 14, 3, 1000);
		rnr_want = 1;
		assert_int_equal(qp_link_run(&P.link, rnr_naks_in, 1000000000), 0);
		assert_int_equal(P.qp[0]->st.rnr_naks_rx, 1);
		assert_int_equal(et_cq_count(&P.scq[0]), 0);
		assert_int_equal(P.qp[0]->rnr_retries_left, 2);
		rw = (struct et_recv_wr){.wr_id = 8, .addr = mp ? NULL : P.dst + GUARD,
					 .length = mp ? 0 : 1000, .lkey = P.mdst->key};
		assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
		rnr_wait_out(14);
		assert_int_equal(qp_link_run(&P.link, one_completion, P.link.now + 1000000000), 0);
		/* sent twice: again from the NAKed PSN, at the end of the wait */
		assert_int_equal(rnr_sent, 2);
		assert_int_equal(rnr_psn[0], 0xfffffe);
		assert_int_equal(rnr_psn[1], 0xfffffe);
		assert_int_equal(rnr_at[1] - rnr_at[0], 2 * P.link.latency_ns + et_rnr_timer_ns(14));
		assert_int_equal(P.qp[0]->st.retransmits, 1);
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		assert_int_equal(wc.wr_id, 7);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(et_cq_poll(&P.rcq[1], &wc, 1), 1);
		assert_int_equal(wc.wr_id, 8);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.byte_len, 1000);
		assert_memory_equal(P.dst + GUARD, P.src, 1000);
		assert_int_equal(P.qp[0]->rnr_retries_left, 3);
		assert_int_equal(et_qp_deadline(P.qp[0]), UINT64_MAX);
		pair_free();
	}
}

/* The peer never has a receive: rnr_retry 3 allows three more tries after
 * the first RNR NAK; the fourth NAK fails the QP with RNR retry exceeded,
 * and nothing is left to happen (no hang). */
static void
test_rnr_retry_exceeded(void **state)
{
	struct et_send_wr wr;
	struct et_wc wc;

	(void)state;
	for (int mp = 0; mp < 2; mp++) {
		rnr_pair(mp, 0x9200, 1, 3, 1000);
		for (uint32_t n = 1; n <= 4; n++) {
			rnr_want = n;
			assert_int_equal(qp_link_run(&P.link, rnr_naks_in, P.link.now + 1000000000),
					 0);
			assert_int_equal(P.qp[0]->st.rnr_naks_rx, n);
			if (n == 4)
				break;
			assert_int_equal(et_cq_count(&P.scq[0]), 0);
			assert_int_equal(P.qp[0]->rnr_retries_left, 3 - n);
			rnr_wait_out(1);
		}
		assert_int_equal(rnr_sent, 4);
		for (uint32_t i = 0; i < 4; i++)
			assert_int_equal(rnr_psn[i], 0x9200);
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		assert_int_equal(wc.wr_id, 7);
		assert_int_equal(wc.status, ET_WC_RNR_RETRY_EXC_ERR);
		assert_string_equal(et_wc_status_str(wc.status), "RNR retry counter exceeded");
		assert_int_equal(P.qp[0]->state, ET_QPS_ERR);
		assert_int_equal(et_qp_deadline(P.qp[0]), UINT64_MAX);
		/* nothing left to happen: the run ends by itself */
		assert_int_equal(qp_link_run(&P.link, NULL, P.link.now + 1000000000), 0);
		assert_int_equal(rnr_sent, 4);
		/* later requests complete at once, flushed */
		wr = write_wr(9, 100);
		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
		pair_free();
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mr_bounds),
		cmocka_unit_test(test_no_loss),
		cmocka_unit_test(test_random_loss),
		cmocka_unit_test(test_burst_loss),
		cmocka_unit_test(test_tail_loss),
		cmocka_unit_test(test_ack_loss),
		cmocka_unit_test(test_duplicates_and_reordering),
		cmocka_unit_test(test_psn_wrap),
		cmocka_unit_test(test_gap_gives_one_nak),
		cmocka_unit_test(test_remote_access_violations),
		cmocka_unit_test(test_rnr),
		cmocka_unit_test(test_rnr_nak_once),
		cmocka_unit_test(test_rnr_retry_exceeded),
		cmocka_unit_test(test_dctcp_through_the_qp),
		cmocka_unit_test(test_retry_exhaustion),
		cmocka_unit_test(test_path_hook),
		cmocka_unit_test(test_post_errors),
		cmocka_unit_test(test_mp_no_loss),
		cmocka_unit_test(test_mp_reorder_loss_dup),
		cmocka_unit_test(test_mp_paths_and_ecn),
		cmocka_unit_test(test_mp_window_edge),
		cmocka_unit_test(test_mp_selective_retransmission),
		cmocka_unit_test(test_mp_retry_exhaustion),
		cmocka_unit_test(test_mp_post_and_errors),
		cmocka_unit_test(test_mp_remote_access),
	};

	return cmocka_run_group_tests_name("qp", tests, setup, teardown);
}
