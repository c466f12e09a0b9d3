/* SPDX-License-Identifier: BSD-3-Clause
 * An ACK owed when the mbuf pool is empty must still be sent.
 *
 * At 256 hosts a spraying all-reduce holds nearly the whole shared pool in
 * the switches' queues, and a responder's ACKs find it empty.  The NIC
 * serves a QP whose et_qp_tx() returns 0 no more until something wakes it,
 * and a responder whose last packet this was has no timer and gets no more
 * data: its ACKs waited for the requester's per-packet timeouts (1.4 % of
 * the multipath packets, nothing dropped).  Here the pool is drained for
 * exactly that moment, in both modes: at the QP, through its deadline, and
 * at the NIC, which must honour that deadline after taking the QP off its
 * active list.
 *
 * And the multipath state grows with what a QP holds, from nothing, moving
 * every PSN to its new slot as it does.
 */
#include <errno.h>
#include <stdio.h>

#include "et_test.h"

#include <rte_ip.h>

#include "host/et_nic.h"
#include "transport/et_qp_priv.h"
#include "qp_link.h"

#define MEM (256u << 10)
#define MTU 1024u
#define LEN 4000u            /* 4 packets */
#define LATENCY 1000u

/* big: the requester's frames; small: the responder's, drained by a test */
static struct rte_mempool *big, *small;

static int
setup(void **state)
{
	(void)state;
	big = et_test_eal_pool("test_qp_mp", 4095);
	if (big == NULL)
		return -1;
	small = rte_pktmbuf_pool_create("test_qp_mp_small", 63, 0, 0,
					RTE_PKTMBUF_HEADROOM + 4096 + 256, 0);
	return small ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	rte_mempool_free(small);
	return et_test_eal_done(big);
}

/* Every mbuf the small pool has, taken. */
struct stash {
	struct rte_mbuf *m[64];
	unsigned int n;
};

static void
drain(struct stash *s)
{
	s->n = 0;
	while (s->n < RTE_DIM(s->m) && (s->m[s->n] = rte_pktmbuf_alloc(small)) != NULL)
		s->n++;
	assert_int_equal(rte_mempool_avail_count(small), 0);
}

static void
refill(struct stash *s)
{
	rte_pktmbuf_free_bulk(s->m, s->n);
	s->n = 0;
}

/* One end: memory, its region, completion queues. */
struct end {
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	uint8_t *mem;
	const struct et_mr *mr;
};

static void
end_init(struct end *e, uint8_t fill)
{
	assert_int_equal(et_mr_table_init(&e->mrs, 2), 0);
	assert_int_equal(et_cq_init(&e->scq, 16), 0);
	assert_int_equal(et_cq_init(&e->rcq, 16), 0);
	e->mem = malloc(MEM);
	assert_non_null(e->mem);
	memset(e->mem, fill, MEM);
	e->mr = et_mr_reg(&e->mrs, e->mem, MEM, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	assert_non_null(e->mr);
}

static void
end_free(struct end *e)
{
	et_mr_table_free(&e->mrs);
	et_cq_free(&e->scq);
	et_cq_free(&e->rcq);
	free(e->mem);
}

static void
attr(struct et_qp_attr *a, bool multipath, uint32_t ip, uint32_t dest_ip)
{
	et_qp_attr_default(a);
	a->mtu = MTU;
	a->multipath = multipath;
	a->ip = ip;
	a->dest_ip = dest_ip;
	a->sq_psn = a->rq_psn = 0xfffffe; /* and the PSNs wrap */
}

static struct et_send_wr
write_wr(const struct end *from, const struct end *to, uint32_t len)
{
	return (struct et_send_wr){.wr_id = 7, .opcode = ET_WR_RDMA_WRITE,
				   .local_addr = from->mem, .length = len,
				   .lkey = from->mr->key,
				   .remote_addr = (uintptr_t)to->mem, .rkey = to->mr->key};
}

static void
check_done(const struct end *a, const struct end *b, const struct et_qp *req, uint32_t len)
{
	struct et_wc wc;

	assert_int_equal(et_cq_poll((struct et_cq *)&a->scq, &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_memory_equal(b->mem, a->mem, len);
	assert_int_equal(req->st.timeouts, 0);
	assert_int_equal(req->st.retransmits, 0);
}

/* ---- the QP: an owed ACK the pool could not give sets a deadline ---- */

static struct et_cq *link_scq;

static bool
link_sent(struct qp_link *l)
{
	(void)l;
	return et_cq_count(link_scq) > 0;
}

static void
qp_pool_empty(bool multipath)
{
	struct end A, B;
	struct et_qp_attr a;
	struct et_qp *qa, *qb;
	struct et_send_wr wr;
	struct qp_link l;
	struct stash s;
	uint64_t t_fail;

	end_init(&A, 0xa5);
	end_init(&B, 0);
	attr(&a, multipath, RTE_IPV4(10, 0, 0, 1), RTE_IPV4(10, 0, 0, 2));
	qa = et_qp_create(&a, &A.mrs, &A.scq, &A.rcq, big);
	attr(&a, multipath, RTE_IPV4(10, 0, 0, 2), RTE_IPV4(10, 0, 0, 1));
	qb = et_qp_create(&a, &B.mrs, &B.scq, &B.rcq, small);
	assert_non_null(qa);
	assert_non_null(qb);
	assert_int_equal(et_qp_connect(qa, 0x22), 0);
	assert_int_equal(et_qp_connect(qb, 0x11), 0);
	assert_int_equal(et_qp_ready(qa), 0);
	assert_int_equal(et_qp_ready(qb), 0);
	wr = write_wr(&A, &B, LEN);
	assert_int_equal(et_qp_post_send(qa, &wr), 0);
	qp_link_init(&l, qa, qb, big, LATENCY);

	/* A sends all four; they arrive at B, which has no mbuf for an ACK */
	drain(&s);
	assert_true(qp_link_step(&l) >= 4);
	l.now += LATENCY;
	while (qp_link_step(&l) > 0)
		;
	assert_int_equal(qb->st.rx_pkts, 4);
	assert_int_equal(qb->st.acks_tx, 0);
	assert_true(qb->st.alloc_fail > 0);
	t_fail = l.now;
	/* owed, not sendable now: the deadline says when to try again */
	assert_false(et_qp_tx_ready(qb, l.now));
	assert_int_equal(et_qp_deadline(qb), t_fail + ET_QP_POOL_RETRY_NS);

	/* the pool has room again: the deadline alone brings the ACK out, long
	 * before the requester's timer (rto 1 ms) */
	refill(&s);
	link_scq = &A.scq;
	assert_int_equal(qp_link_run(&l, link_sent, 100000000ull), 0);
	assert_true(l.now <= t_fail + ET_QP_POOL_RETRY_NS + LATENCY);
	assert_true(qb->st.acks_tx > 0);
	assert_int_equal(qb->pool_retry_at, 0);
	check_done(&A, &B, qa, LEN);

	qp_link_free(&l);
	et_qp_destroy(qa);
	et_qp_destroy(qb);
	end_free(&A);
	end_free(&B);
	assert_int_equal(rte_mempool_in_use_count(small), 0);
	assert_int_equal(rte_mempool_in_use_count(big), 0);
}

static void
test_qp_pool_empty_mp(void **state)
{
	(void)state;
	qp_pool_empty(true);
}

static void
test_qp_pool_empty_gbn(void **state)
{
	(void)state;
	qp_pool_empty(false);
}

/* ---- the NIC: a QP it took off the active list is woken again ---- */

static struct et_nic N[2];

static struct et_cq *nic_scq;

static uint64_t
nic_run(uint64_t now, uint64_t until, bool stop_on_fail, const struct et_qp *watch)
{
	for (int guard = 0; guard < 1000000; guard++) {
		uint32_t w = et_nic_poll(&N[0], now) + et_nic_poll(&N[1], now);
		uint64_t t;

		if (stop_on_fail && watch->st.rx_pkts == 1 && watch->st.alloc_fail > 0)
			return now;
		if (!stop_on_fail && et_cq_count(nic_scq) > 0)
			return now;
		if (w)
			continue;
		t = et_nic_next_event(&N[0], now);
		if (et_nic_next_event(&N[1], now) < t)
			t = et_nic_next_event(&N[1], now);
		if (t == UINT64_MAX || t > until)
			return now;
		now = t > now ? t : now + 1;
	}
	fail_msg("no progress");
	return now;
}

static void
nic_pool_empty(bool multipath)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = LATENCY};
	struct rte_ether_addr mac0 = {{0x02, 0, 0, 0, 0, 1}}, mac1 = {{0x02, 0, 0, 0, 0, 2}};
	uint32_t ip0 = RTE_IPV4(10, 0, 0, 1), ip1 = RTE_IPV4(10, 0, 0, 2);
	struct et_port p0, p1;
	struct end A, B;
	struct et_qp_attr a;
	struct et_qp *qa, *qb;
	struct et_send_wr wr;
	struct stash s;
	uint64_t now, t_fail;

	assert_int_equal(et_port_ring_pair(&p0, &p1, multipath ? "mp" : "gbn", 256, 0), 0);
	assert_int_equal(et_nic_init(&N[0], &p0, &lm, big, &mac0, ip0, 0x100, 4), 0);
	assert_int_equal(et_nic_init(&N[1], &p1, &lm, small, &mac1, ip1, 0x200, 4), 0);
	end_init(&A, 0x5a);
	end_init(&B, 0);
	attr(&a, multipath, ip0, ip1);
	a.dest_mac = mac1;
	qa = et_nic_qp_create(&N[0], &a, &A.mrs, &A.scq, &A.rcq);
	attr(&a, multipath, ip1, ip0);
	a.dest_mac = mac0;
	qb = et_nic_qp_create(&N[1], &a, &B.mrs, &B.scq, &B.rcq);
	assert_non_null(qa);
	assert_non_null(qb);
	assert_int_equal(et_qp_connect(qa, et_qp_qpn(qb)), 0);
	assert_int_equal(et_qp_connect(qb, et_qp_qpn(qa)), 0);
	assert_int_equal(et_qp_ready(qa), 0);
	assert_int_equal(et_qp_ready(qb), 0);
	wr = write_wr(&A, &B, MTU);
	assert_int_equal(et_nic_post_send(&N[0], qa, &wr), 0);

	/* one packet, the last of its message: host 1's pool is empty when
	 * it arrives, its QP tries to ACK, cannot, and leaves the NIC's
	 * active list; no later packet will bring it back */
	drain(&s);
	nic_scq = &A.scq;
	now = nic_run(0, 100000000ull, true, qb);
	t_fail = now;
	assert_int_equal(qb->st.rx_pkts, 1);
	assert_int_equal(qb->st.acks_tx, 0);
	assert_int_equal(N[1].n_active, 0);

	/* room again: nothing arrives at host 1 any more, yet its ACKs go out
	 * within the retry and the link, not after the requester's 1 ms */
	refill(&s);
	now = nic_run(now, 100000000ull, false, qb);
	assert_int_equal(et_cq_count(&A.scq), 1);
	assert_true(now < t_fail + 10 * ET_QP_POOL_RETRY_NS + 2 * LATENCY);
	assert_true(qb->st.acks_tx > 0);
	check_done(&A, &B, qa, MTU);

	et_nic_free(&N[0]);
	et_nic_free(&N[1]);
	et_port_close(&p1);
	et_port_close(&p0);
	end_free(&A);
	end_free(&B);
	assert_int_equal(rte_mempool_in_use_count(small), 0);
	assert_int_equal(rte_mempool_in_use_count(big), 0);
}

static void
test_nic_pool_empty_mp(void **state)
{
	(void)state;
	nic_pool_empty(true);
}

static void
test_nic_pool_empty_gbn(void **state)
{
	(void)state;
	nic_pool_empty(false);
}

/* ---- the state grows with what it holds ---- */

#define BIG_PKTS 512u
static uint32_t held_psn;

/* The first data packet arrives 100 us late, the rest at once: the
 * responder holds the other 511 ahead of its expected PSN. */
static enum qp_verdict
hold_first(struct qp_link *l, int dir, const struct et_roce_pkt *p, uint64_t *delay)
{
	(void)l;
	if (dir == 0 && p->h.opcode != ET_OP_ACK && p->h.opcode != ET_OP_CNP &&
	    p->h.psn == held_psn)
		*delay += 100000;
	return QP_DELIVER;
}

static void
test_state_grows(void **state)
{
	struct end A, B;
	struct et_qp_attr a;
	struct et_qp *qa, *qb;
	struct et_send_wr wr;
	struct qp_link l;
	size_t bare, win;

	(void)state;
	end_init(&A, 0x3c);
	end_init(&B, 0);
	for (uint32_t i = 0; i < MEM; i++)
		A.mem[i] = (uint8_t)(i * 131 + (i >> 9));
	attr(&a, true, RTE_IPV4(10, 0, 0, 1), RTE_IPV4(10, 0, 0, 2));
	a.mtu = 256;
	a.dctcp.init_cwnd = BIG_PKTS * 256;
	qa = et_qp_create(&a, &A.mrs, &A.scq, &A.rcq, big);
	attr(&a, true, RTE_IPV4(10, 0, 0, 2), RTE_IPV4(10, 0, 0, 1));
	a.mtu = 256;
	qb = et_qp_create(&a, &B.mrs, &B.scq, &B.rcq, big);
	assert_int_equal(et_qp_connect(qa, 0x22), 0);
	assert_int_equal(et_qp_connect(qb, 0x11), 0);
	assert_int_equal(et_qp_ready(qa), 0);
	assert_int_equal(et_qp_ready(qb), 0);
	qp_link_init(&l, qa, qb, big, LATENCY);
	link_scq = &A.scq;

	/* created: no ring at all */
	bare = et_qp_mp_state_bytes(qa);
	assert_true(bare > 0 && bare < 256);
	assert_int_equal(et_qp_mp_state_bytes(qb), bare);

	/* a 4-packet message: a few hundred bytes each side, not the window's
	 * 80 KB; the requester holds no responder state and the other way */
	wr = write_wr(&A, &B, 4 * 256);
	assert_int_equal(et_qp_post_send(qa, &wr), 0);
	assert_int_equal(qp_link_run(&l, link_sent, 100000000ull), 0);
	check_done(&A, &B, qa, 4 * 256);
	assert_true(et_qp_mp_state_bytes(qa) < 1024);
	assert_true(et_qp_mp_state_bytes(qb) < 1024);
	assert_true(et_qp_mp_state_bytes(qa) > bare);
	assert_true(et_qp_mp_state_bytes(qb) > bare);
	assert_int_equal(qa->mp != NULL, 1);

	/* 512 packets in flight at once, the first held back: both sides grow
	 * (every PSN moved to its new slot as they do, across the PSN wrap),
	 * to about what they hold, and the data is right */
	memset(B.mem, 0, MEM);
	held_psn = qa->snd_nxt;
	l.script = hold_first;
	wr = write_wr(&A, &B, BIG_PKTS * 256);
	assert_int_equal(et_qp_post_send(qa, &wr), 0);
	assert_int_equal(qp_link_run(&l, link_sent, 100000000ull), 0);
	check_done(&A, &B, qa, BIG_PKTS * 256);
	assert_true(qb->st.rx_out_of_order >= BIG_PKTS - 1);
	assert_int_equal(qb->st.acks_unsent, 0);
	win = et_qp_mp_state_bytes(qa);
	assert_true(win >= BIG_PKTS * 24 && win <= 4 * BIG_PKTS * 64);
	win = et_qp_mp_state_bytes(qb);
	assert_true(win >= BIG_PKTS * 8 && win <= 4 * BIG_PKTS * 16);

	/* the in-order mode holds none */
	attr(&a, false, RTE_IPV4(10, 0, 0, 1), RTE_IPV4(10, 0, 0, 2));
	{
		struct et_qp *g = et_qp_create(&a, &A.mrs, &A.scq, &A.rcq, big);

		assert_int_equal(et_qp_mp_state_bytes(g), 0);
		et_qp_destroy(g);
	}
	qp_link_free(&l);
	et_qp_destroy(qa);
	et_qp_destroy(qb);
	end_free(&A);
	end_free(&B);
	assert_int_equal(rte_mempool_in_use_count(big), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qp_pool_empty_mp),
		cmocka_unit_test(test_qp_pool_empty_gbn),
		cmocka_unit_test(test_nic_pool_empty_mp),
		cmocka_unit_test(test_nic_pool_empty_gbn),
		cmocka_unit_test(test_state_grows),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
