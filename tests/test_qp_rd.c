/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA READ and atomics (issue 38), in both QP modes: two QPs on a scripted
 * link.  A mixed workload (SENDs, WRITEs, READs, atomics) under loss,
 * duplication and reordering must leave every byte where it belongs and
 * every atomic executed exactly once; and the cases one by one: lost
 * answers, a duplicate READ, a duplicate atomic answered from the replay
 * cache, a READ behind an RNR wait, the outstanding-READ limit, and the
 * requests a responder must refuse.  With R.gather, requests name their
 * local memory as lists of up to ET_MAX_SGE buffers, laid out in reverse.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "qp_pair.h"

/* B's memory that A reads (random bytes), B's atomic counters, and A's
 * memory where answers land (GUARD bytes either side stay untouched). */
#define RD_SPACE (4u << 20)
#define N_CTR 64

static struct {
	uint8_t *rsrc, *rdst;
	uint64_t *ctr;
	const struct et_mr *mrsrc, *mrdst, *mctr;
	/* gather lists: A's bytes to send, where READs scatter, and where
	 * B's receives scatter the SENDs */
	bool gather;
	uint8_t *gsrc, *gdst, *grecv;
	const struct et_mr *mgsrc, *mgdst, *mgrecv;
	uint64_t ctr0[N_CTR];   /* the counters at the start */
	uint64_t adds[N_CTR];   /* sum of every FETCH_ADD posted on each */
	uint32_t n_reads, n_atomics;
	/* every request, in posting order: its kind and where it points */
	struct { uint8_t op; uint32_t off, len; uint32_t ctr; uint64_t add; uint64_t split, rsplit; }
		req[1024];
	uint32_t n_req;
	/* script */
	double answer_loss, req_dup;
	uint32_t max_rd_seen;
} R;

static void
rd_regions(void)
{
	memset(&R, 0, sizeof(R));
	R.rsrc = malloc(RD_SPACE);
	R.rdst = malloc(RD_SPACE + 2 * GUARD);
	R.gsrc = malloc(SPACE);
	R.gdst = malloc(RD_SPACE);
	R.grecv = malloc(SPACE);
	assert_non_null(R.gsrc);
	assert_non_null(R.gdst);
	assert_non_null(R.grecv);
	R.mgrecv = et_mr_reg(&P.mr[1], R.grecv, SPACE, ET_ACCESS_LOCAL_WRITE);
	assert_non_null(R.mgrecv);
	R.mgsrc = et_mr_reg(&P.mr[0], R.gsrc, SPACE, ET_ACCESS_LOCAL_WRITE);
	R.mgdst = et_mr_reg(&P.mr[0], R.gdst, RD_SPACE, ET_ACCESS_LOCAL_WRITE);
	assert_non_null(R.mgsrc);
	assert_non_null(R.mgdst);
	R.ctr = aligned_alloc(64, N_CTR * sizeof(uint64_t));
	assert_non_null(R.rsrc);
	assert_non_null(R.rdst);
	assert_non_null(R.ctr);
	for (uint32_t i = 0; i < RD_SPACE; i++)
		R.rsrc[i] = (uint8_t)(et_test_rand(&P.seed) >> 11);
	memset(R.rdst, 0x5a, RD_SPACE + 2 * GUARD);
	for (uint32_t i = 0; i < N_CTR; i++)
		R.ctr[i] = R.ctr0[i] = et_test_rand(&P.seed);
	R.mrsrc = et_mr_reg(&P.mr[1], R.rsrc, RD_SPACE, ET_ACCESS_REMOTE_READ);
	R.mctr = et_mr_reg(&P.mr[1], R.ctr, N_CTR * sizeof(uint64_t),
			   ET_ACCESS_REMOTE_ATOMIC | ET_ACCESS_REMOTE_READ);
	R.mrdst = et_mr_reg(&P.mr[0], R.rdst + GUARD, RD_SPACE, ET_ACCESS_LOCAL_WRITE);
	assert_non_null(R.mrsrc);
	assert_non_null(R.mctr);
	assert_non_null(R.mrdst);
}

static void
rd_free(void)
{
	for (uint32_t i = 0; i < GUARD; i++) {
		assert_int_equal(R.rdst[i], 0x5a);
		assert_int_equal(R.rdst[GUARD + RD_SPACE + i], 0x5a);
	}
	free(R.rsrc);
	free(R.rdst);
	free(R.gsrc);
	free(R.gdst);
	free(R.grecv);
	free(R.ctr);
}

static struct et_send_wr
read_wr(uint64_t id, uint32_t off, uint32_t len)
{
	return (struct et_send_wr){.wr_id = id, .opcode = ET_WR_RDMA_READ,
				   .local_addr = R.rdst + GUARD + off, .length = len,
				   .lkey = R.mrdst->key, .remote_addr = (uintptr_t)(R.rsrc + off),
				   .rkey = R.mrsrc->key};
}

/* FETCH_ADD (or, when swap_too, a CMP_SWP that swaps in the same result:
 * compare with the value it must find) on counter c, the old value into
 * answer slot slot (8 bytes each, at the end of rdst). */
static struct et_send_wr
atomic_wr(uint64_t id, uint32_t c, uint64_t add, uint32_t slot)
{
	return (struct et_send_wr){.wr_id = id, .opcode = ET_WR_ATOMIC_FETCH_ADD,
				   .local_addr = R.rdst + GUARD + RD_SPACE - 8 * (slot + 1),
				   .length = ET_ATOMIC_LEN, .lkey = R.mrdst->key,
				   .remote_addr = (uintptr_t)&R.ctr[c], .rkey = R.mctr->key,
				   .compare_add = add};
}

static uint64_t
answer_slot(uint32_t slot)
{
	uint64_t v;

	memcpy(&v, R.rdst + GUARD + RD_SPACE - 8 * (slot + 1), 8);
	return v;
}

/* [off, off + len) of a region cut (by split, a random word) into 2 to
 * ET_MAX_SGE pieces, zero-length ones among them, placed in scratch in
 * reverse order: piece i's buffer is sgl[i].  Returns how many. */
static uint32_t
split_reversed(uint64_t split, uint8_t *scratch, uint32_t lkey, uint32_t off, uint32_t len,
	       struct et_sge *sgl)
{
	uint32_t k = 2 + (uint32_t)(split % (ET_MAX_SGE - 1)), start = 0;

	for (uint32_t i = 0; i < k; i++) {
		uint32_t piece = i + 1 == k ? len - start
					    : (uint32_t)((split >> (8 + 5 * i)) % 32 * (len - start) / 31);

		if (i % 3 == 1 && i + 1 < k)
			piece = 0;
		sgl[i] = (struct et_sge){scratch + off + len - start - piece, piece, lkey};
		start += piece;
	}
	return k;
}

/* Copy each piece between the region (at off) and its place in scratch. */
static void
pieces_copy(uint64_t split, uint8_t *region, uint8_t *scratch, uint32_t off, uint32_t len,
	    bool to_scratch)
{
	struct et_sge sgl[ET_MAX_SGE];
	uint32_t k = split_reversed(split, scratch, 0, off, len, sgl), start = 0;

	for (uint32_t i = 0; i < k; start += sgl[i++].length)
		if (to_scratch)
			memcpy(sgl[i].addr, region + off + start, sgl[i].length);
		else
			memcpy(region + off + start, sgl[i].addr, sgl[i].length);
}

static enum qp_verdict
rd_script(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	uint16_t opf = et_opcode_flags[p->h.opcode];

	if (P.qp[0]->rd_inflight > R.max_rd_seen)
		R.max_rd_seen = P.qp[0]->rd_inflight;
	if (dir == 1 && (opf & (ET_OPF_READ_RESP | ET_OPF_ATOMIC_ACK)) && R.answer_loss > 0 &&
	    chance(R.answer_loss))
		return QP_DROP;
	if (dir == 0 && (opf & (ET_OPF_READ_REQ | ET_OPF_ATOMIC)) && R.req_dup > 0 &&
	    chance(R.req_dup))
		return QP_DUP;
	return script(l, dir, p, delay);
}

static bool
rd_all_completed(struct qp_link *l)
{
	(void)l;
	return et_cq_count(&P.scq[0]) >= R.n_req && et_cq_count(&P.rcq[1]) >= expect_recv;
}

/* n requests of every kind: WRITEs and SENDs (multipath: WRITEs only) of
 * P.src into P.dst, READs of rsrc into rdst, FETCH_ADDs on the counters. */
static void
rd_post_workload(uint32_t n, uint32_t max_big)
{
	uint32_t woff = 0, roff = 0, slot = 0;
	struct et_sge sgl[ET_MAX_SGE];

	R.n_req = 0;
	expect_recv = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = et_test_rand(&P.seed);
		uint32_t kind = (uint32_t)(r % 8), len = i % 7 == 3 ? (uint32_t)((r >> 8) % max_big)
								       : (uint32_t)((r >> 8) % 9000);
		struct et_send_wr wr;

		if (kind < 3 && roff + len <= RD_SPACE - 8 * 1024) {
			wr = read_wr(i, roff, len);
			R.req[R.n_req] = (typeof(R.req[0])){ET_WR_RDMA_READ, roff, len, 0, 0, 0, 0};
			roff += len;
			R.n_reads++;
		} else if (kind < 5 && slot < 1024) {
			uint32_t c = (uint32_t)((r >> 40) % N_CTR);
			uint64_t add = r >> 20;

			wr = atomic_wr(i, c, add, slot);
			R.req[R.n_req] = (typeof(R.req[0])){ET_WR_ATOMIC_FETCH_ADD, slot++, 8, c, add, 0, 0};
			R.adds[c] += add;
			R.n_atomics++;
		} else {
			uint8_t op = P.writes_only ? ET_WR_RDMA_WRITE : (uint8_t)(kind % 2 ? ET_WR_SEND
											: ET_WR_RDMA_WRITE);
			uint64_t rsplit = 0;

			if (woff + len > SPACE)
				len = 0;
			wr = (struct et_send_wr){.wr_id = i, .opcode = op, .local_addr = P.src + woff,
						 .length = len, .lkey = P.msrc->key,
						 .remote_addr = (uintptr_t)(P.dst + GUARD + woff),
						 .rkey = P.mdst->key};
			if (op == ET_WR_SEND) {
				struct et_recv_wr rw = {.wr_id = 1000 + i, .addr = P.dst + GUARD + woff,
							.length = len, .lkey = P.mdst->key};
				struct et_sge rsgl[ET_MAX_SGE];

				if (R.gather && len && (r & 1)) { /* the receive a list too */
					rsplit = r ^ (r >> 23);
					rw.num_sge = split_reversed(rsplit, R.grecv, R.mgrecv->key,
								    woff, len, rsgl);
					rw.sgl = rsgl;
				}
				assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
				expect_recv++;
			}
			R.req[R.n_req] = (typeof(R.req[0])){op, woff, len, 0, 0, 0, rsplit};
			woff += len;
		}
		if (R.gather && !et_wr_is_atomic(wr.opcode) && wr.length && (r >> 63)) {
			uint64_t split = r ^ (r >> 17);
			bool read = wr.opcode == ET_WR_RDMA_READ;
			uint8_t *scratch = read ? R.gdst : R.gsrc;

			if (!read)
				pieces_copy(split, P.src, R.gsrc, R.req[R.n_req].off, wr.length, true);
			wr.num_sge = split_reversed(split, scratch, read ? R.mgdst->key : R.mgsrc->key,
						    R.req[R.n_req].off, wr.length, sgl);
			wr.sgl = sgl;
			wr.local_addr = NULL;
			R.req[R.n_req].split = split;
		}
		if (et_qp_post_send(P.qp[0], &wr) != 0)
			fail_msg("post %u: opcode %u, %u bytes", i, wr.opcode, wr.length);
		R.n_req++;
	}
}

/* Every request completed once, in order; every byte where it belongs;
 * every counter holds its start plus every add, exactly once; and in order
 * mode each atomic saw the counter as the ones before it left it. */
static void
rd_check_workload(bool in_order)
{
	uint64_t seen[N_CTR];
	struct et_wc wc;

	memcpy(seen, R.ctr0, sizeof(seen));
	for (uint32_t i = 0; i < R.n_req; i++) {
		static const uint8_t wc_op[] = {
			[ET_WR_RDMA_WRITE] = ET_WC_RDMA_WRITE, [ET_WR_SEND] = ET_WC_SEND,
			[ET_WR_RDMA_READ] = ET_WC_RDMA_READ,
			[ET_WR_ATOMIC_FETCH_ADD] = ET_WC_FETCH_ADD};
		typeof(R.req[0]) *q = &R.req[i];

		assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
		if (wc.status != ET_WC_SUCCESS)
			fail_msg("request %u: %s", i, et_wc_status_str(wc.status));
		assert_int_equal(wc.wr_id, i);
		assert_int_equal(wc.opcode, wc_op[q->op]);
		assert_int_equal(wc.byte_len, q->len);
		if (q->op == ET_WR_RDMA_READ && q->split) /* the pieces back in their order */
			pieces_copy(q->split, R.rdst + GUARD, R.gdst, q->off, q->len, false);
		if (q->op == ET_WR_RDMA_READ &&
		    memcmp(R.rdst + GUARD + q->off, R.rsrc + q->off, q->len))
			fail_msg("READ %u (%u bytes at %u) differs", i, q->len, q->off);
		if (q->op == ET_WR_SEND && q->rsplit) /* the received pieces in order */
			pieces_copy(q->rsplit, P.dst + GUARD, R.grecv, q->off, q->len, false);
		if (q->op == ET_WR_RDMA_WRITE || q->op == ET_WR_SEND) {
			if (memcmp(P.dst + GUARD + q->off, P.src + q->off, q->len))
				fail_msg("request %u (%u bytes at %u) differs", i, q->len, q->off);
		}
		if (q->op == ET_WR_ATOMIC_FETCH_ADD && in_order) {
			if (answer_slot(q->off) != seen[q->ctr])
				fail_msg("atomic %u: old value %" PRIx64 ", expected %" PRIx64, i,
					 answer_slot(q->off), seen[q->ctr]);
			seen[q->ctr] += q->add;
		}
	}
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 0);
	for (uint32_t c = 0; c < N_CTR; c++)
		if (R.ctr[c] != R.ctr0[c] + R.adds[c])
			fail_msg("counter %u: %" PRIx64 ", expected %" PRIx64 " (executed twice?)", c,
				 R.ctr[c], R.ctr0[c] + R.adds[c]);
	assert_guards();
	assert_int_equal(et_qp_sq_outstanding(P.qp[0]), 0);
}

static void
rd_pair(bool mp, uint32_t mtu)
{
	struct et_qp_attr a, b;

	if (mp)
		mp_attrs(&a, &b, mtu, 0xfffff0);
	else
		attrs(&a, &b, mtu, 0xfffff0); /* the PSNs wrap inside the run */
	a.max_send_sge = ET_MAX_SGE;
	b.max_recv_sge = ET_MAX_SGE;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.writes_only = mp;
	P.link.script = rd_script;
	if (mp)
		et_qp_set_path_fn(P.qp[0], random_path, NULL);
	rd_regions();
}

static void
rd_run(uint32_t n, uint32_t max_big, bool in_order)
{
	int rc;

	rd_post_workload(n, max_big);
	rc = qp_link_run(&P.link, rd_all_completed, 60ull * 1000000000);
	if (rc)
		fail_msg("run: %d (completions %u/%u, timeouts %" PRIu64 ")", rc,
			 et_cq_count(&P.scq[0]), R.n_req, P.qp[0]->st.timeouts);
	rd_check_workload(in_order);
}

static void
rd_done(void)
{
	rd_free();
	pair_free();
}

/* ---- the cases ---- */

static void
test_mixed_no_loss(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		for (int i = 0; i < 5; i++) {
			rd_pair(mp, mtus[i]);
			rd_run(200, 200000, !mp);
			assert_int_equal(P.qp[0]->st.retransmits, 0);
			assert_int_equal(P.qp[0]->st.timeouts, 0);
			assert_true(P.qp[1]->st.reads_rx > 0);
			assert_int_equal(P.qp[1]->st.reads_again, 0);
			assert_int_equal(P.qp[1]->st.atomics_rx, R.n_atomics);
			rd_done();
		}
	}
}

/* Answers lost on the way back: asked for again (a gap, an ACK past the
 * READ, or the timer), never executed twice. */
static void
test_lost_answers(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		rd_pair(mp, 1024);
		R.answer_loss = 0.05;
		rd_run(300, 100000, !mp);
		assert_true(P.qp[0]->st.retransmits > 0);
		assert_true(P.qp[1]->st.atomics_replayed > 0); /* a lost ATOMIC ACK */
		assert_int_equal(P.qp[1]->st.atomics_rx, R.n_atomics);
		if (!mp)
			assert_true(P.qp[0]->st.resp_gap_rx > 0);
		rd_done();
	}
}

/* Loss, duplication and reordering both ways, of everything. */
static void
test_mixed_under_faults(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		rd_pair(mp, 512);
		P.loss = 0.02;
		P.ack_loss = 0.02;
		P.dup = 0.02;
		P.reorder = mp ? 0.05 : 0;
		R.answer_loss = 0.01;
		R.req_dup = 0.05;
		rd_run(300, 60000, !mp);
		assert_int_equal(P.qp[1]->st.atomics_rx, R.n_atomics);
		rd_done();
	}
}

/* A duplicate READ request is read again from the PSN it names; a
 * duplicate atomic is answered from the cache, not executed again. */
static void
test_duplicate_requests(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		rd_pair(mp, 1024);
		R.req_dup = 1.0; /* every READ and atomic request twice */
		rd_run(100, 20000, !mp);
		assert_true(P.qp[1]->st.atomics_replayed >= R.n_atomics);
		assert_int_equal(P.qp[1]->st.atomics_rx, R.n_atomics);
		assert_true(P.qp[1]->st.reads_again > 0);
		assert_int_equal(P.qp[0]->st.rx_bad_resp, 0);
		rd_done();
	}
}

/* Gather lists: WRITEs and SENDs from, READs and receives into, up to
 * ET_MAX_SGE buffers each (pieces of a packet from several, a buffer over several
 * packets), under loss, so that resent packets gather again. */
static void
test_gather_lists(void **state)
{
	for (int mp = 0; mp < 2; mp++) {
		rd_pair(mp, 1024);
		R.gather = true;
		P.loss = 0.02;
		R.answer_loss = 0.02;
		rd_run(300, 60000, !mp);
		assert_true(P.qp[0]->st.retransmits > 0);
		rd_done();
	}
}

/* B's frames out at now, dropped: what the test does not look at. */
static uint16_t
drain(struct et_qp *qp, uint64_t now)
{
	struct rte_mbuf *m[64];
	uint16_t n, all = 0;

	while ((n = et_qp_tx(qp, now, m, 64)) > 0) {
		rte_pktmbuf_free_bulk(m, n);
		all += n;
	}
	return all;
}

/* A Go-Back-N requester (rxe) that lost one atomic's answer sends its
 * window again, and a new request behind it while the responder still
 * owes the replays: the new one is ignored as lost (rd_res_busy), not
 * refused as an invalid request (which ended rxe's QP), and taken when it
 * comes again; each atomic executed once. */
static void
test_new_request_behind_replays(void **state)
{
	struct rte_mbuf *req[16];
	struct et_roce_pkt pk[16], extra;
	uint64_t now = 1000000000ull;

	rd_pair(false, 1024);
	for (uint32_t i = 0; i < 16; i++) {
		struct et_send_wr wr = atomic_wr(i, 0, 1, i);

		assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	}
	assert_int_equal(et_qp_tx(P.qp[0], now, req, 16), 16);
	for (uint32_t i = 0; i < 16; i++) {
		assert_int_equal(et_roce_parse_mbuf(req[i], &pk[i], 0), 0);
		et_qp_rx(P.qp[1], &pk[i], now);
	}
	assert_true(drain(P.qp[1], now += 1000000) > 0);
	for (uint32_t i = 0; i < 16; i++)
		et_qp_rx(P.qp[1], &pk[i], now); /* the window again */
	extra = pk[15];
	extra.h.psn = et_psn_add(pk[15].h.psn, 1);
	et_qp_rx(P.qp[1], &extra, now);
	assert_int_equal(P.qp[1]->st.rd_res_busy, 1);
	assert_int_equal(P.qp[1]->state, ET_QPS_RTS);
	assert_int_equal(P.qp[1]->st.atomics_rx, 16);
	drain(P.qp[1], now += 1000000); /* the replays leave */
	et_qp_rx(P.qp[1], &extra, now);
	assert_int_equal(P.qp[1]->st.atomics_rx, 17);
	assert_int_equal(P.qp[1]->st.atomics_replayed, 16);
	assert_true(R.ctr[0] == R.ctr0[0] + 17);
	drain(P.qp[1], now += 1000000);
	rte_pktmbuf_free_bulk(req, 16);
	rd_done();
}

/* max_rd_atomic: never more READs and atomics out at once. */
static void
test_initiator_depth(void **state)
{
	struct et_qp_attr a, b;

	for (int mp = 0; mp < 2; mp++) {
		if (mp)
			mp_attrs(&a, &b, 1024, 0);
		else
			attrs(&a, &b, 1024, 0);
		a.max_rd_atomic = 2;
		b.max_dest_rd_atomic = 2;
		pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
		P.writes_only = mp;
		P.link.script = rd_script;
		rd_regions();
		rd_run(100, 40000, !mp);
		assert_true(R.max_rd_seen <= 2);
		assert_true(R.max_rd_seen == 2);
		rd_done();
	}
}

/* A READ behind a SEND that found no receive: the RNR wait, then both go. */
static void
test_read_after_rnr(void **state)
{
	struct et_send_wr s, r;
	struct et_recv_wr rw;
	struct et_wc wc;

	rd_pair(false, 1024);
	s = (struct et_send_wr){.wr_id = 1, .opcode = ET_WR_SEND, .local_addr = P.src,
				.length = 3000, .lkey = P.msrc->key};
	r = read_wr(2, 0, 10000);
	assert_int_equal(et_qp_post_send(P.qp[0], &s), 0);
	assert_int_equal(et_qp_post_send(P.qp[0], &r), 0);
	/* no receive yet: an RNR NAK, the wait */
	assert_int_equal(qp_link_run(&P.link, NULL, 300000), -3);
	assert_true(P.qp[1]->st.rnr_naks_tx > 0);
	assert_int_equal(et_cq_count(&P.scq[0]), 0);
	rw = (struct et_recv_wr){.wr_id = 9, .addr = P.dst + GUARD, .length = 3000,
				 .lkey = P.mdst->key};
	assert_int_equal(et_qp_post_recv(P.qp[1], &rw), 0);
	assert_int_equal(qp_link_run(&P.link, two_completions, 1000000000ull), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(wc.opcode, ET_WC_RDMA_READ);
	assert_memory_equal(R.rdst + GUARD, R.rsrc, 10000);
	assert_memory_equal(P.dst + GUARD, P.src, 3000);
	rd_done();
}

/* The requests a responder refuses: each a NAK, the request completes with
 * the matching error, both QPs go to error, nothing else is touched. */
enum refusal { OUTSIDE_MR, TOO_LONG, MISALIGNED, NO_ATOMIC_ACCESS, N_REFUSALS };

static void
refused(bool mp, enum refusal what)
{
	struct et_qp_attr a, b;
	struct et_send_wr wr;
	struct et_wc wc;
	uint8_t status = ET_WC_REM_INV_REQ_ERR;

	if (mp)
		mp_attrs(&a, &b, 1024, 0);
	else
		attrs(&a, &b, 1024, 0);
	if (what == TOO_LONG)
		b.max_msg_size = 4096;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	P.link.script = rd_script;
	rd_regions();
	switch (what) {
	case OUTSIDE_MR: /* its last 100 bytes are the region's, the rest not */
		wr = read_wr(0, RD_SPACE - 100, 4096);
		status = ET_WC_REM_ACCESS_ERR;
		break;
	case TOO_LONG:
		wr = read_wr(0, 0, 8192);
		break;
	case MISALIGNED:
		wr = atomic_wr(0, 3, 1, 0);
		wr.remote_addr += 4;
		break;
	default: /* memory that grants READ only */
		wr = atomic_wr(0, 3, 1, 0);
		wr.remote_addr = (uintptr_t)R.rsrc;
		wr.rkey = R.mrsrc->key;
		status = ET_WC_REM_ACCESS_ERR;
		break;
	}
	if (what == OUTSIDE_MR)
		wr.local_addr = R.rdst + GUARD;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	assert_int_equal(qp_link_run(&P.link, one_completion, 1000000000ull), 0);
	assert_int_equal(et_cq_poll(&P.scq[0], &wc, 1), 1);
	if (wc.status != status)
		fail_msg("refusal %d (%s mode): %s", what, mp ? "multipath" : "in order",
			 et_wc_status_str(wc.status));
	assert_int_equal(P.qp[1]->st.err_naks_tx, 1);
	assert_int_equal(P.qp[1]->state, ET_QPS_ERR);
	assert_int_equal(P.qp[0]->state, ET_QPS_ERR);
	assert_int_equal(P.qp[1]->st.reads_rx + P.qp[1]->st.atomics_rx, 0);
	for (uint32_t c = 0; c < N_CTR; c++)
		assert_true(R.ctr[c] == R.ctr0[c]);
	rd_done();
}

static void
test_refused_requests(void **state)
{
	for (int mp = 0; mp < 2; mp++)
		for (int what = 0; what < N_REFUSALS; what++)
			/* a multipath READ travels as one-packet READs: none
			 * is ever longer than an MTU */
			if (!(mp && what == TOO_LONG))
				refused(mp, what);
}

/* Posting: a READ into memory without local write, an atomic of the wrong
 * length, any of them with max_rd_atomic 0. */
static void
test_post_checks(void **state)
{
	struct et_qp_attr a, b;
	struct et_send_wr wr;

	rd_pair(false, 1024);
	wr = read_wr(0, 0, 100);
	wr.local_addr = R.rsrc; /* B's, and without LOCAL_WRITE */
	wr.lkey = R.mrsrc->key;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	wr = atomic_wr(0, 0, 1, 0);
	wr.length = 4;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	/* gather lists: longer than max_send_sge, for an atomic, a bad key */
	struct et_sge sgl[ET_MAX_SGE + 1];

	for (uint32_t i = 0; i <= ET_MAX_SGE; i++)
		sgl[i] = (struct et_sge){R.gdst + 8 * i, 8, R.mgdst->key};
	wr = read_wr(0, 0, 0);
	wr.sgl = sgl;
	wr.num_sge = ET_MAX_SGE + 1;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	wr = atomic_wr(0, 0, 1, 0);
	wr.sgl = sgl;
	wr.num_sge = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	sgl[1].lkey = 0xdead; /* no region of A's */
	wr = read_wr(0, 0, 0);
	wr.sgl = sgl;
	wr.num_sge = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	rd_done();

	attrs(&a, &b, 1024, 0);
	a.max_rd_atomic = 0;
	pair_init_attr(&a, &b, ET_ACCESS_LOCAL_WRITE);
	rd_regions();
	wr = read_wr(0, 0, 100);
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	/* a QP made without max_send_sge takes one buffer; a list of one is it */
	struct et_sge two[2] = {{P.src, 10, P.msrc->key}, {P.src + 10, 10, P.msrc->key}};

	wr = write_wr(0, 0);
	wr.sgl = two;
	wr.num_sge = 2;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), -EINVAL);
	wr.num_sge = 1;
	assert_int_equal(et_qp_post_send(P.qp[0], &wr), 0);
	rd_done();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_checks),
		cmocka_unit_test(test_mixed_no_loss),
		cmocka_unit_test(test_lost_answers),
		cmocka_unit_test(test_duplicate_requests),
		cmocka_unit_test(test_initiator_depth),
		cmocka_unit_test(test_read_after_rnr),
		cmocka_unit_test(test_refused_requests),
		cmocka_unit_test(test_mixed_under_faults),
		cmocka_unit_test(test_gather_lists),
		cmocka_unit_test(test_new_request_behind_replays),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
