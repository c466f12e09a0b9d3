/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA CM over the NIC model: two hosts on a ring pair, each with its ARP
 * and the agent on QP 1, both sides in one test in virtual time.  A
 * connection made on the wire (REQ, REP, RTU as UD SENDs to QP 1, MACs by
 * ARP), data both ways on the QPs it bound, DREQ/DREP; the same under 30 %
 * loss each way; rejects; hostile frames for QP 1, each refused and
 * counted, with an established connection undisturbed; and a thousand
 * connections at once, their REQs held until ARP answers.
 */
#include "et_test.h"

#include <rte_ip.h>

#include "host/et_arp.h"
#include "host/et_nic.h"
#include "host/et_rdmacm.h"
#include "transport/et_qp_priv.h"
#include "wire/et_gid.h"

#define MEM (1u << 20)
#define PORT 7471

static struct rte_mempool *pool;

struct host {
	struct et_nic nic;
	struct et_arp arp;
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	uint8_t *mem;
	const struct et_mr *mr;
	struct et_rdmacm *cm;
	bool auto_accept;
	struct et_qp *qp;        /* the last QP it connected or accepted with */
	struct et_rdmacm_id *id; /* and its id */
	struct et_rdmacm_event ev[64];
	int nev, next_ev;
	/* many at once (test_many): events counted by type, not kept; each
	 * request accepted with a QP of its own, kept here */
	bool counting;
	uint32_t count[ET_CM_EV_SIDR_REPLY + 1];
	struct et_qp **qps;
	struct et_rdmacm_id **ids;
};

static struct host H[2];
static struct et_port PA, PB;
static uint64_t now;
static uint32_t nic_qps = 64;

static int
setup(void **state)
{
	(void)state;
	pool = et_test_eal_pool("test_rdmacm", 8191);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return et_test_eal_done(pool);
}

static void
host_init(struct host *h, const struct et_port *port, uint32_t ip, uint8_t id)
{
	struct et_link_model lm = {.rate_bps = 10000000000ull, .latency_ns = 2000, .seed = id};
	struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, id}};
	struct et_rdmacm_conf c;

	memset(h, 0, sizeof(*h));
	assert_int_equal(et_nic_init(&h->nic, port, &lm, pool, &mac, ip, 0x100, nic_qps), 0);
	et_arp_init(&h->arp, mac.addr_bytes, ip, 1000, 8);
	h->nic.arp = &h->arp;
	assert_int_equal(et_mr_table_init(&h->mrs, 4), 0);
	assert_int_equal(et_cq_init(&h->scq, 1024), 0);
	assert_int_equal(et_cq_init(&h->rcq, 1024), 0);
	h->mem = calloc(1, MEM);
	h->mr = et_mr_reg(&h->mrs, h->mem, MEM, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	et_rdmacm_conf_default(&c);
	c.cm.seed = id;
	h->cm = et_rdmacm_create(&h->nic, &c);
	assert_non_null(h->cm);
}

static void
hosts_up(void)
{
	assert_int_equal(et_port_ring_pair(&PA, &PB, "cm", 1024, 0), 0);
	host_init(&H[0], &PA, RTE_IPV4(10, 77, 0, 3), 1);
	host_init(&H[1], &PB, RTE_IPV4(10, 77, 0, 2), 2);
	now = 1000;
}

static void
hosts_down(void)
{
	for (int i = 0; i < 2; i++) {
		struct host *h = &H[i];

		et_rdmacm_destroy(h->cm, now);
		et_nic_free(&h->nic);
		et_mr_table_free(&h->mrs);
		et_cq_free(&h->scq);
		et_cq_free(&h->rcq);
		free(h->mem);
	}
	et_port_close(&PA);
	et_port_close(&PB);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* A QP of h's in RESET for the peer at ip. */
static struct et_qp *
qp_for(struct host *h, uint32_t ip, uint32_t mtu)
{
	struct et_qp_attr a;
	struct et_qp *qp;

	et_qp_attr_default(&a);
	a.dest_ip = ip;
	a.mtu = mtu;
	/* what it expects (its REQ or REP says so); where it sends from
	 * comes from the peer */
	a.rq_psn = 0x1000 + (uint32_t)(h - H) * 0x1000;
	a.sq_psn = 0x777;
	a.rto_ns = 5000000;
	qp = et_nic_qp_create(&h->nic, &a, &h->mrs, &h->scq, &h->rcq);
	assert_non_null(qp);
	return qp;
}

static void
take_events(struct host *h)
{
	struct et_rdmacm_event e;

	while (et_rdmacm_get_event(h->cm, &e)) {
		if (h->counting && e.type == ET_CM_EV_CONNECT_REQUEST) {
			struct et_rdmacm_conn_param p = {.psn = 0x2000, .rnr_retry_count = 7};
			uint32_t k = h->count[e.type];
			struct et_recv_wr rw = {.wr_id = k, .addr = h->mem + 64 * k, .length = 64,
						.lkey = h->mr->key};

			h->qps[k] = qp_for(h, e.peer_ip, e.mtu);
			h->ids[k] = e.id;
			assert_int_equal(et_qp_post_recv(h->qps[k], &rw), 0);
			assert_int_equal(et_rdmacm_accept(h->cm, e.id, h->qps[k], &p, now), 0);
		}
		if (h->counting) {
			h->count[e.type]++;
			continue;
		}
		assert_true(h->nev < 64);
		if (e.type == ET_CM_EV_CONNECT_REQUEST && h->auto_accept) {
			struct et_rdmacm_conn_param p = {.psn = 0x2000, .rnr_retry_count = 7,
							 .pdata = "rep", .pdata_len = 3};
			struct et_recv_wr rw = {.wr_id = 1, .addr = h->mem + MEM / 2,
						.length = MEM / 2, .lkey = h->mr->key};

			/* receives posted in RESET, as librdmacm's users do */
			h->qp = qp_for(h, e.peer_ip, e.mtu);
			assert_int_equal(et_qp_post_recv(h->qp, &rw), 0);
			assert_int_equal(et_rdmacm_accept(h->cm, e.id, h->qp, &p, now), 0);
			h->id = e.id;
		}
		h->ev[h->nev++] = e;
	}
}

/* Virtual time until done() or until; both hosts' NICs, CMs, events. */
static void
run(bool (*done)(void), uint64_t until)
{
	for (int guard = 0; guard < 10000000; guard++) {
		uint32_t w = 0;
		uint64_t t = UINT64_MAX;

		for (int i = 0; i < 2; i++) {
			w += et_nic_poll(&H[i].nic, now);
			et_rdmacm_poll(H[i].cm, now);
			take_events(&H[i]);
		}
		if (done && done())
			return;
		if (w)
			continue;
		for (int i = 0; i < 2; i++) {
			uint64_t a = et_nic_next_event(&H[i].nic, now), b = et_rdmacm_next_event(H[i].cm);

			t = a < t ? a : t;
			t = b < t ? b : t;
		}
		if (t == UINT64_MAX || t > until)
			return;
		now = t > now ? t : now + 1;
	}
	fail_msg("no progress");
}

/* The next event h had, which must be of type t. */
static struct et_rdmacm_event *
expect(struct host *h, enum et_cm_event_type t)
{
	struct et_rdmacm_event *e;

	if (h->next_ev == h->nev)
		fail_msg("no event, want %s", et_cm_event_name(t));
	e = &h->ev[h->next_ev++];
	if (e->type != t)
		fail_msg("event %s, want %s", et_cm_event_name(e->type), et_cm_event_name(t));
	return e;
}

static void
no_event(struct host *h)
{
	if (h->next_ev != h->nev)
		fail_msg("unexpected event %s", et_cm_event_name(h->ev[h->next_ev].type));
}

static bool
both_established(void)
{
	return H[0].nev && H[0].ev[H[0].nev - 1].type == ET_CM_EV_ESTABLISHED && H[1].nev &&
	       H[1].ev[H[1].nev - 1].type == ET_CM_EV_ESTABLISHED;
}

static bool
both_disconnected(void)
{
	return H[0].nev && H[0].ev[H[0].nev - 1].type == ET_CM_EV_DISCONNECTED && H[1].nev &&
	       H[1].ev[H[1].nev - 1].type == ET_CM_EV_DISCONNECTED;
}

/* A connects to B's listener with qp, private data "hi". */
static void
a_connects(uint16_t port)
{
	struct et_rdmacm_conn_param p = {.psn = 0x1000, .mtu = 1024, .retry_count = 6,
					 .rnr_retry_count = 7, .responder_resources = 1,
					 .initiator_depth = 1, .pdata = "hi", .pdata_len = 2};
	int err;

	H[0].qp = qp_for(&H[0], H[1].nic.ip, 1024);
	H[0].id = et_rdmacm_connect(H[0].cm, H[1].nic.ip, port, H[0].qp, &p, &H[0], now, &err);
	assert_non_null(H[0].id);
}

static bool
sends_done(void)
{
	return et_cq_count(&H[0].scq) >= 1 && et_cq_count(&H[1].rcq) >= 1 &&
	       et_cq_count(&H[1].scq) >= 1 && et_cq_count(&H[0].rcq) >= 1;
}

/* A SEND each way on the connection's QPs, its bytes checked. */
static void
exchange(uint32_t len)
{
	struct et_recv_wr rw = {.wr_id = 2, .addr = H[0].mem + MEM / 2, .length = MEM / 2,
				.lkey = H[0].mr->key};
	struct et_wc wc;

	for (uint32_t k = 0; k < len; k++) {
		H[0].mem[k] = (uint8_t)(k * 7 + 1);
		H[1].mem[k] = (uint8_t)(k * 13 + 5);
	}
	assert_int_equal(et_qp_post_recv(H[0].qp, &rw), 0);
	for (int i = 0; i < 2; i++) {
		struct et_send_wr wr = {.wr_id = 3, .opcode = ET_WR_SEND, .local_addr = H[i].mem,
					.length = len, .lkey = H[i].mr->key};

		assert_int_equal(et_nic_post_send(&H[i].nic, H[i].qp, &wr), 0);
	}
	run(sends_done, now + 10000000000ull);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(et_cq_poll(&H[i].scq, &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(et_cq_poll(&H[i].rcq, &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.byte_len, len);
		assert_memory_equal(H[i].mem + MEM / 2, H[1 - i].mem, len);
	}
}

static bool
a_has_event(void)
{
	return H[0].nev > H[0].next_ev;
}

static bool
b_has_event(void)
{
	return H[1].nev > H[1].next_ev;
}

/* A UD QP of h's, ready, Q_Key qkey. */
static struct et_qp *
ud_qp(struct host *h, uint32_t qkey)
{
	struct et_qp_attr a;
	struct et_qp *qp;

	et_qp_attr_default(&a);
	a.datagram = true;
	a.qkey = qkey;
	qp = et_nic_qp_create(&h->nic, &a, &h->mrs, &h->scq, &h->rcq);
	assert_non_null(qp);
	assert_int_equal(et_qp_ready(qp), 0);
	return qp;
}

/* UD by SIDR (RDMA CM's UDP port space): A asks for B's UD QP behind a
 * port, B's listener hears of it and answers with its QP and Q_Key, A
 * learns them and sends B a datagram there; a refused one and one for a
 * port nobody listens on end in a SIDR reply with the status. */
static void
test_sidr(void **state)
{
	struct et_rdmacm_conn_param p = {.qkey = 0x01234567, .pdata = "ok", .pdata_len = 2};
	struct et_qp *qa, *qb;
	struct et_rdmacm_event *e;
	struct et_rdmacm_id *id;
	struct et_wc wc;
	int err;

	(void)state;
	hosts_up();
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_UDP, PORT, &H[1]), 0);
	assert_int_equal(et_rdmacm_listen(H[1].cm, 0x0200, PORT, &H[1]), -EINVAL);
	qa = ud_qp(&H[0], 0x01234567);
	qb = ud_qp(&H[1], 0x01234567);
	id = et_rdmacm_sidr(H[0].cm, H[1].nic.ip, PORT, 0xc001, "ud", 2, &H[0], now, &err);
	assert_non_null(id);
	run(b_has_event, now + 10000000000ull);
	e = expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	assert_true(e->sidr);
	assert_int_equal(e->port, PORT);
	assert_int_equal(e->peer_ip, H[0].nic.ip);
	assert_int_equal(e->peer_port, 0xc001);
	assert_memory_equal(e->pdata, "ud", 2);
	assert_int_equal(et_rdmacm_accept(H[1].cm, e->id, qb, &p, now), 0);
	et_rdmacm_release(H[1].cm, e->id, now);
	run(a_has_event, now + 10000000000ull);
	e = expect(&H[0], ET_CM_EV_SIDR_REPLY);
	assert_ptr_equal(e->id, id);
	assert_ptr_equal(e->ctx, &H[0]);
	assert_true(e->sidr);
	assert_int_equal(e->reason, ET_CM_SIDR_SUCCESS);
	assert_int_equal(e->peer_qpn, et_qp_qpn(qb));
	assert_int_equal(e->qkey, 0x01234567);
	assert_memory_equal(e->pdata, "ok", 2);
	et_rdmacm_release(H[0].cm, id, now);
	/* what A learnt reaches B's QP */
	struct et_recv_wr rw = {.wr_id = 9, .addr = H[1].mem, .length = 256, .lkey = H[1].mr->key};
	struct et_send_wr sw = {.wr_id = 8, .opcode = ET_WR_SEND, .local_addr = H[0].mem,
				.length = 100, .lkey = H[0].mr->key,
				.ud = {.ip = H[1].nic.ip, .mac = H[1].nic.mac, .sport = 0xc001,
				       .qpn = e->peer_qpn, .qkey = e->qkey}};

	assert_int_equal(et_qp_post_recv(qb, &rw), 0);
	assert_int_equal(et_nic_post_send(&H[0].nic, qa, &sw), 0);
	run(NULL, now + 1000000);
	assert_int_equal(et_cq_poll(&H[1].rcq, &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(wc.src_qp, et_qp_qpn(qa));
	assert_int_equal(wc.byte_len, 40 + 100);
	assert_memory_equal(H[1].mem + 40, H[0].mem, 100);
	assert_int_equal(et_cq_poll(&H[0].scq, &wc, 1), 1);
	assert_int_equal(wc.wr_id, 8);
	/* refused: the reply says so */
	id = et_rdmacm_sidr(H[0].cm, H[1].nic.ip, PORT, 0xc002, NULL, 0, &H[0], now, &err);
	run(b_has_event, now + 10000000000ull);
	e = expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	assert_int_equal(et_rdmacm_reject(H[1].cm, e->id, NULL, 0, now), 0);
	et_rdmacm_release(H[1].cm, e->id, now);
	run(a_has_event, now + 10000000000ull);
	e = expect(&H[0], ET_CM_EV_SIDR_REPLY);
	assert_int_equal(e->reason, ET_CM_SIDR_REJECT);
	et_rdmacm_release(H[0].cm, id, now);
	/* nobody on that port (nor on the TCP one: port spaces apart) */
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT + 1, &H[1]), 0);
	id = et_rdmacm_sidr(H[0].cm, H[1].nic.ip, PORT + 1, 0xc003, NULL, 0, &H[0], now, &err);
	run(a_has_event, now + 10000000000ull);
	e = expect(&H[0], ET_CM_EV_SIDR_REPLY);
	assert_int_equal(e->reason, ET_CM_SIDR_UNSUPPORTED);
	et_rdmacm_release(H[0].cm, id, now);
	no_event(&H[1]);
	assert_int_equal(et_rdmacm_unlisten(H[1].cm, ET_RDMA_PS_UDP, PORT), 0);
	assert_int_equal(et_rdmacm_unlisten(H[1].cm, ET_RDMA_PS_UDP, PORT), -ENOENT);
	et_nic_qp_destroy(&H[0].nic, qa);
	et_nic_qp_destroy(&H[1].nic, qb);
	hosts_down();
}

static void
test_connect(void **state)
{
	struct et_rdmacm_event *e;
	struct et_wc wc;

	(void)state;
	hosts_up();
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, &H[1]), 0);
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, &H[1]), -EADDRINUSE);
	H[1].auto_accept = true;
	a_connects(PORT);
	run(both_established, now + 10000000000ull);
	e = expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	assert_ptr_equal(e->ctx, &H[1]);
	assert_int_equal(e->port, PORT);
	assert_int_equal(e->peer_ip, H[0].nic.ip);
	assert_int_equal(e->peer_qpn, et_qp_qpn(H[0].qp));
	assert_int_equal(e->peer_psn, 0x1000);
	assert_int_equal(e->mtu, 1024);
	assert_memory_equal(e->pdata, "hi", 2);
	e = expect(&H[0], ET_CM_EV_ESTABLISHED);
	assert_ptr_equal(e->ctx, &H[0]);
	assert_ptr_equal(e->id, H[0].id);
	assert_int_equal(e->peer_qpn, et_qp_qpn(H[1].qp));
	assert_int_equal(e->peer_psn, 0x2000);
	assert_memory_equal(e->pdata, "rep", 3);
	expect(&H[1], ET_CM_EV_ESTABLISHED);
	/* A did not know B's MAC: its REQ waited for ARP */
	assert_int_equal(et_rdmacm_stats(H[0].cm)->tx_parked, 1);
	assert_int_equal(H[0].arp.st.tx_request, 1);
	/* the QPs took each other's QPN, the PSN each expects, and the MTU */
	assert_int_equal(H[0].qp->a.dest_qpn, et_qp_qpn(H[1].qp));
	assert_int_equal(H[0].qp->epsn, 0x1000);
	assert_int_equal(H[0].qp->snd_nxt, 0x2000);
	assert_int_equal(H[1].qp->epsn, 0x2000);
	assert_int_equal(H[1].qp->snd_nxt, 0x1000);
	assert_int_equal(H[1].qp->a.mtu, 1024);
	assert_memory_equal(&H[0].qp->a.dest_mac, &H[1].nic.mac, 6);
	exchange(5000);

	/* B closes: both hear it, their QPs are flushed */
	assert_int_equal(et_rdmacm_disconnect(H[1].cm, H[1].id, now), 0);
	run(both_disconnected, now + 10000000000ull);
	expect(&H[0], ET_CM_EV_DISCONNECTED);
	expect(&H[1], ET_CM_EV_DISCONNECTED);
	struct et_send_wr wr = {.opcode = ET_WR_SEND, .local_addr = H[0].mem, .length = 1,
				.lkey = H[0].mr->key};
	assert_int_equal(et_nic_post_send(&H[0].nic, H[0].qp, &wr), 0);
	assert_int_equal(et_cq_poll(&H[0].scq, &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_WR_FLUSH_ERR);
	/* every MAD on the wire: REQ, RTU and DREP from A; REP and DREQ from B */
	assert_int_equal(H[0].nic.st.gsi_tx, 3);
	assert_int_equal(H[1].nic.st.gsi_tx, 2);
	assert_int_equal(H[0].nic.st.rx_gsi, 2);
	assert_int_equal(H[1].nic.st.rx_gsi, 3);
	assert_int_equal(et_rdmacm_cm_stats(H[0].cm)->tx_retries, 0);
	for (int i = 0; i < 2; i++) {
		et_rdmacm_release(H[i].cm, H[i].id, now);
		et_nic_qp_destroy(&H[i].nic, H[i].qp);
		no_event(&H[i]);
	}
	hosts_down();
}

/* 30 % of what each NIC receives lost, MADs and data alike: the CM's
 * retries and the QPs' retransmissions still connect, move the data and
 * close. */
static void
test_lossy(void **state)
{
	(void)state;
	hosts_up();
	for (int i = 0; i < 2; i++) {
		H[i].nic.rx_loss_ppm = 300000;
		H[i].nic.rx_rng = 0x42 + (uint64_t)i;
	}
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, NULL), 0);
	H[1].auto_accept = true;
	a_connects(PORT);
	run(both_established, now + 100000000000ull);
	expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	expect(&H[0], ET_CM_EV_ESTABLISHED);
	expect(&H[1], ET_CM_EV_ESTABLISHED);
	exchange(20000);
	assert_int_equal(et_rdmacm_disconnect(H[0].cm, H[0].id, now), 0);
	run(both_disconnected, now + 100000000000ull);
	expect(&H[0], ET_CM_EV_DISCONNECTED);
	expect(&H[1], ET_CM_EV_DISCONNECTED);
	assert_true(H[0].nic.st.rx_fault_drops + H[1].nic.st.rx_fault_drops > 0);
	assert_true(et_rdmacm_cm_stats(H[0].cm)->tx_retries + et_rdmacm_cm_stats(H[1].cm)->tx_retries +
		    et_rdmacm_cm_stats(H[0].cm)->rx_dups + et_rdmacm_cm_stats(H[1].cm)->rx_dups > 0);
	for (int i = 0; i < 2; i++) {
		et_rdmacm_release(H[i].cm, H[i].id, now);
		et_nic_qp_destroy(&H[i].nic, H[i].qp);
	}
	hosts_down();
}

static void
test_reject(void **state)
{
	struct et_rdmacm_event *e;

	(void)state;
	hosts_up();
	/* nobody listens */
	a_connects(PORT);
	run(NULL, now + 1000000000ull);
	e = expect(&H[0], ET_CM_EV_REJECTED);
	assert_int_equal(e->reason, ET_CM_REJ_INVALID_SERVICE_ID);
	et_rdmacm_release(H[0].cm, H[0].id, now);
	et_nic_qp_destroy(&H[0].nic, H[0].qp);
	/* B's consumer says no, with a reason of its own */
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, NULL), 0);
	a_connects(PORT);
	run(NULL, now + 1000000000ull);
	e = expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	assert_int_equal(et_rdmacm_reject(H[1].cm, e->id, "busy", 4, now), 0);
	assert_int_equal(et_rdmacm_reject(H[1].cm, e->id, "busy", 4, now), -EINVAL);
	et_rdmacm_release(H[1].cm, e->id, now);
	run(NULL, now + 1000000000ull);
	e = expect(&H[0], ET_CM_EV_REJECTED);
	assert_int_equal(e->reason, ET_CM_REJ_CONSUMER);
	assert_memory_equal(e->pdata, "busy", 4);
	et_rdmacm_release(H[0].cm, H[0].id, now);
	et_nic_qp_destroy(&H[0].nic, H[0].qp);
	no_event(&H[0]);
	no_event(&H[1]);
	hosts_down();
}

/* A frame for B's QP 1 from A's address, as A's NIC would send it. */
static void
inject(uint8_t opcode, uint32_t qkey, const uint8_t *payload, uint32_t len)
{
	struct et_roce_hdr h = {
		.dst_mac = H[1].nic.mac, .src_mac = H[0].nic.mac, .src_ip = H[0].nic.ip,
		.dst_ip = H[1].nic.ip, .ttl = 64, .opcode = opcode, .pkey = ET_PKEY_DEFAULT,
		.dest_qp = ET_QPN_GSI, .deth_qkey = qkey, .deth_src_qp = ET_QPN_GSI};
	int err;
	struct rte_mbuf *m = et_roce_build_mbuf(pool, &h, payload, len, &err);

	assert_non_null(m);
	assert_int_equal(et_port_tx(&PA, &m, 1), 1);
}

static void
inject_mad(const struct et_cm_msg *m)
{
	uint8_t mad[ET_MAD_LEN];

	assert_int_equal(et_cm_build(mad, m), ET_MAD_LEN);
	inject(ET_OP_UD_SEND_ONLY, ET_GSI_QKEY, mad, sizeof(mad));
}

/* Hostile frames for QP 1, each a clear REJ, a DREP or a counted drop; the
 * established connection beside them moves its data as before. */
static void
test_hostile(void **state)
{
	const struct et_cm_stats *cs;
	const struct et_rdmacm_stats *rs;
	struct et_cm_msg m;
	uint8_t pdata[ET_CM_REQ_PDATA], mad[ET_MAD_LEN];
	uint64_t sent;

	(void)state;
	hosts_up();
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, NULL), 0);
	H[1].auto_accept = true;
	a_connects(PORT);
	run(both_established, now + 10000000000ull);
	expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	expect(&H[0], ET_CM_EV_ESTABLISHED);
	expect(&H[1], ET_CM_EV_ESTABLISHED);
	sent = H[1].nic.st.gsi_tx;
	cs = et_rdmacm_cm_stats(H[1].cm);
	rs = et_rdmacm_stats(H[1].cm);

	/* a REQ with garbage private data: REJ, consumer reject */
	et_cm_msg_init(&m, ET_CM_REQ, 77);
	m.u.req.local_comm_id = 0xbad;
	m.u.req.service_id = et_rdma_service_id(ET_RDMA_PS_TCP, PORT);
	m.u.req.local_qpn = 0x555;
	m.u.req.path_mtu = 3;
	et_gid_from_ipv4(H[1].nic.ip, m.u.req.primary.remote_gid);
	memset(pdata, 0xee, sizeof(pdata));
	m.pdata = pdata;
	m.pdata_len = sizeof(pdata);
	inject_mad(&m);
	/* a DREQ for no connection: a DREP, as Linux */
	et_cm_msg_init(&m, ET_CM_DREQ, 78);
	m.u.ids.local_comm_id = 0x1111;
	m.u.ids.remote_comm_id = 0x2222;
	inject_mad(&m);
	/* a REP for no REQ: REJ invalid communication ID */
	et_cm_msg_init(&m, ET_CM_REP, 79);
	m.u.rep.local_comm_id = 0x3333;
	m.u.rep.remote_comm_id = 0x4444;
	inject_mad(&m);
	/* a truncated MAD, a MAD of another class, and of another version */
	et_cm_msg_init(&m, ET_CM_RTU, 80);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	inject(ET_OP_UD_SEND_ONLY, ET_GSI_QKEY, mad, 100);
	mad[1] = 0x04;
	inject(ET_OP_UD_SEND_ONLY, ET_GSI_QKEY, mad, sizeof(mad));
	mad[1] = 0x07;
	mad[2] = 3;
	inject(ET_OP_UD_SEND_ONLY, ET_GSI_QKEY, mad, sizeof(mad));
	/* not the GSI's Q_Key; not a UD SEND */
	mad[2] = 2;
	inject(ET_OP_UD_SEND_ONLY, 0x12345678, mad, sizeof(mad));
	inject(ET_OP_SEND_ONLY, 0, mad, sizeof(mad));
	run(NULL, now + 100000000ull);

	assert_int_equal(cs->req_bad_pdata, 1);
	assert_int_equal(cs->dreq_unknown, 1);
	assert_int_equal(cs->rep_unknown, 1);
	assert_int_equal(cs->rx_bad[ET_MAD_E_TRUNC], 1);
	assert_int_equal(cs->rx_bad[ET_MAD_E_CLASS], 1);
	assert_int_equal(cs->rx_bad[ET_MAD_E_CLASS_VERSION], 1);
	assert_int_equal(rs->rx_bad_mad, 3);
	assert_int_equal(rs->rx_bad_qkey, 1);
	assert_int_equal(rs->rx_bad_opcode, 1);
	/* the answers: REJ, DREP, REJ; at A they find nothing (counted) */
	assert_int_equal(H[1].nic.st.gsi_tx - sent, 3);
	assert_int_equal(et_rdmacm_cm_stats(H[0].cm)->stray, 3);
	assert_int_equal(H[1].nic.st.rx_gsi, 2 + 8); /* REQ, RTU; the 8 injected */
	no_event(&H[0]);
	no_event(&H[1]);
	assert_int_equal(et_rdmacm_id_state(H[0].id), ET_CMS_ESTABLISHED);
	assert_int_equal(et_rdmacm_id_state(H[1].id), ET_CMS_ESTABLISHED);
	exchange(3000);
	for (int i = 0; i < 2; i++) {
		et_rdmacm_release(H[i].cm, H[i].id, now);
		et_nic_qp_destroy(&H[i].nic, H[i].qp);
	}
	hosts_down();
}

static bool
b_disconnected(void)
{
	return H[1].nev && H[1].ev[H[1].nev - 1].type == ET_CM_EV_DISCONNECTED;
}

/* A lets go of an established connection: its DREQ goes out, and the
 * DREP that comes back finds the connection (in time wait), not the id
 * that is gone. */
static void
test_release_established(void **state)
{
	(void)state;
	hosts_up();
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, &H[1]), 0);
	H[1].auto_accept = true;
	a_connects(PORT);
	run(both_established, now + 10000000000ull);
	et_rdmacm_release(H[0].cm, H[0].id, now);
	et_nic_qp_destroy(&H[0].nic, H[0].qp);
	run(b_disconnected, now + 10000000000ull);
	expect(&H[1], ET_CM_EV_CONNECT_REQUEST);
	expect(&H[1], ET_CM_EV_ESTABLISHED);
	expect(&H[1], ET_CM_EV_DISCONNECTED);
	run(NULL, now + 100000000ull); /* the DREP home */
	assert_int_equal(et_rdmacm_cm_stats(H[0].cm)->disconnected, 1);
	assert_int_equal(et_rdmacm_cm_stats(H[0].cm)->tx_retries, 0);
	expect(&H[0], ET_CM_EV_ESTABLISHED);
	no_event(&H[0]);
	et_rdmacm_release(H[1].cm, H[1].id, now);
	et_nic_qp_destroy(&H[1].nic, H[1].qp);
	hosts_down();
}

#define MANY 1000

static bool
many_established(void)
{
	return H[0].count[ET_CM_EV_ESTABLISHED] == MANY && H[1].count[ET_CM_EV_ESTABLISHED] == MANY;
}

static bool
many_received(void)
{
	return et_cq_count(&H[1].rcq) == MANY && et_cq_count(&H[0].scq) == MANY;
}

static bool
many_disconnected(void)
{
	return H[0].count[ET_CM_EV_DISCONNECTED] == MANY &&
	       H[1].count[ET_CM_EV_DISCONNECTED] == MANY;
}

/* A thousand connections asked for at once, before A knows B's MAC: every
 * REQ waits for ARP (none given up), each connection established without
 * a retry, a SEND on each, all closed by A. */
static void
test_many(void **state)
{
	struct et_rdmacm_conn_param p = {.psn = 0x1000, .mtu = 1024, .retry_count = 6,
					 .rnr_retry_count = 7};
	struct et_wc wc;
	int err;

	(void)state;
	nic_qps = MANY + 1;
	hosts_up();
	for (int i = 0; i < 2; i++) {
		H[i].counting = true;
		H[i].qps = calloc(MANY, sizeof(*H[i].qps));
		H[i].ids = calloc(MANY, sizeof(*H[i].ids));
		assert_true(H[i].qps && H[i].ids);
	}
	assert_int_equal(et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, &H[1]), 0);
	for (uint32_t k = 0; k < MANY; k++) {
		H[0].qps[k] = qp_for(&H[0], H[1].nic.ip, 1024);
		H[0].ids[k] = et_rdmacm_connect(H[0].cm, H[1].nic.ip, PORT, H[0].qps[k], &p,
						 (void *)(uintptr_t)(k + 1), now, &err);
		assert_non_null(H[0].ids[k]);
	}
	assert_int_equal(et_rdmacm_stats(H[0].cm)->tx_parked, MANY);
	run(many_established, now + 10000000000ull);
	assert_true(many_established());
	assert_int_equal(H[1].count[ET_CM_EV_CONNECT_REQUEST], MANY);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(et_rdmacm_stats(H[i].cm)->tx_unresolved, 0);
		assert_int_equal(et_rdmacm_stats(H[i].cm)->bind_fail, 0);
		assert_int_equal(et_rdmacm_cm_stats(H[i].cm)->tx_retries, 0);
		assert_int_equal(et_rdmacm_cm_stats(H[i].cm)->events_lost, 0);
	}
	for (uint32_t k = 0; k < MANY; k++) {
		struct et_send_wr wr = {.wr_id = k, .opcode = ET_WR_SEND, .local_addr = H[0].mem,
					.length = 8, .lkey = H[0].mr->key};

		assert_int_equal(et_nic_post_send(&H[0].nic, H[0].qps[k], &wr), 0);
	}
	run(many_received, now + 10000000000ull);
	for (uint32_t k = 0; k < MANY; k++) {
		assert_int_equal(et_cq_poll(&H[1].rcq, &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
		assert_int_equal(wc.byte_len, 8);
		assert_int_equal(et_cq_poll(&H[0].scq, &wc, 1), 1);
		assert_int_equal(wc.status, ET_WC_SUCCESS);
	}
	for (uint32_t k = 0; k < MANY; k++)
		assert_int_equal(et_rdmacm_disconnect(H[0].cm, H[0].ids[k], now), 0);
	run(many_disconnected, now + 10000000000ull);
	assert_true(many_disconnected());
	for (int i = 0; i < 2; i++) {
		assert_int_equal(et_rdmacm_cm_stats(H[i].cm)->unreachable, 0);
		for (uint32_t k = 0; k < MANY; k++) {
			et_rdmacm_release(H[i].cm, H[i].ids[k], now);
			et_nic_qp_destroy(&H[i].nic, H[i].qps[k]);
		}
		free(H[i].qps);
		free(H[i].ids);
	}
	hosts_down();
	nic_qps = 64;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_sidr),
		cmocka_unit_test(test_lossy),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_release_established),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
