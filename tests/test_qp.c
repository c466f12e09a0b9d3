/* SPDX-License-Identifier: BSD-3-Clause
 * The RC transport under every loss pattern, Go-Back-N mode, and the RNR
 * wait in both modes: two QPs on a scripted link, driven by a fake clock
 * (the multipath mode's own tests: test_qp_multipath.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "qp_pair.h"

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

/* DCTCP's rate mode paces the data: the workload takes its bytes' time at
 * the rate; marks cut the rate and it takes longer.  Returns the time taken
 * in percent of the payload's time at the rate. */
static uint64_t
dctcp_rate_run(bool multipath, double mark, double *rate, uint64_t *cuts)
{
	struct et_qp_attr a, b;
	uint64_t bytes = 0, ns;

	(multipath ? mp_attrs : attrs)(&a, &b, 1024, 0xa000);
	a.dctcp.rate_mode = true;
	a.dctcp.line_bps = 10000000000ull;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = script;
	P.writes_only = multipath;
	P.mark = mark;
	if (multipath)
		mp_run_workload(64, 1u << 20, 4u << 20);
	else
		run_workload(1024, 0xa000, 64, 1u << 20, 4u << 20);
	for (uint32_t i = 0; i < n_msgs; i++)
		bytes += msgs[i].len;
	ns = P.link.now;
	*rate = P.qp[0]->cc.rate_bps;
	*cuts = P.qp[0]->cc.cuts;
	assert_int_equal(et_dctcp_cwnd(&P.qp[0]->cc), a.dctcp.max_cwnd); /* no window */
	pair_free();
	/* at least the payload's time at 10 Gbit/s; headers and the 2 us link
	 * add under a fifth */
	assert_true(ns >= bytes * 8 / 10);
	return ns * 10 / (bytes * 8 / 100); /* percent of the payload's time */
}

static void
test_dctcp_rate_mode(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		double rate;
		uint64_t cuts, pct;

		pct = dctcp_rate_run(mp, 0, &rate, &cuts);
		assert_int_equal(cuts, 0);
		assert_true(rate == 10e9);
		assert_true(pct >= 100 && pct < 120);
		pct = dctcp_rate_run(mp, 0.3, &rate, &cuts);
		assert_true(cuts > 10);
		assert_true(rate < 10e9);
		assert_true(pct > 150);
	}
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

static bool
b_placed_it(struct qp_link *l)
{
	return P.qp[1]->st.rx_bytes >= 3000 && !et_qp_tx_ready(P.qp[1], l->now);
}

/* The last message's ACKs lost as its receiver closes: the sender's
 * retransmission reaches a flushed QP, which acknowledges it again (the
 * sender completes), places nothing and takes no receive. */
static void
test_resent_after_flush(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		struct et_qp_attr a, b;
		struct et_send_wr wr;
		struct et_wc wc;
		uint64_t dups;

		(mp ? mp_attrs : attrs)(&a, &b, 1024, 0xc000);
		pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
		P.link.script = script;
		P.ack_loss = 1.0;
		wr = write_wr(1, 3000);
		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
		assert_int_equal(qp_link_run(&P.link, b_placed_it, 100000000), 0);
		assert_int_equal(et_cq_count(&P.scq[0]), 0);
		et_qp_flush(P.qp[1]);
		dups = P.qp[1]->st.rx_dup;
		P.ack_loss = 0;
		assert_int_equal(qp_link_run(&P.link, one_completion, 100000000), 0);
		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_true(P.qp[1]->st.rx_dup > dups);
		assert_int_equal(P.qp[1]->st.rx_bytes, 3000);
		assert_memory_equal(P.dst + GUARD, P.src, 3000);
		pair_free();
	}
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
		cmocka_unit_test(test_dctcp_rate_mode),
		cmocka_unit_test(test_retry_exhaustion),
		cmocka_unit_test(test_resent_after_flush),
		cmocka_unit_test(test_path_hook),
		cmocka_unit_test(test_post_errors),
	};

	return cmocka_run_group_tests_name("qp", tests, setup, teardown);
}
