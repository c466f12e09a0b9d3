/* SPDX-License-Identifier: BSD-3-Clause
 * The host NIC model: hosts on net_ring ports, back to back and through a
 * switch, in virtual time.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "et_test.h"

#include <rte_ip.h>
#include <rte_ring.h>

#include "sim/et_net.h"
#include "host/et_nic.h"
#include "transport/et_qp_priv.h"
#include "wire/et_pfc.h"

#define MEM (4u << 20)

static struct rte_mempool *pool;

static int
setup(void **state)
{
	pool = et_test_eal_pool("test_nic", 16383);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	return et_test_eal_done(pool);
}

/* A host: its NIC, memory and completion queues. */
struct host {
	struct et_nic nic;
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	uint8_t *mem;
	const struct et_mr *mr;
};

static struct host H[2];
static struct et_qp *QP[2][64];

static void
host_init(struct host *h, const struct et_port *port, uint32_t ip, uint8_t id,
	  const struct et_link_model *lm)
{
	struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, id}};
	uint64_t seed = id;

	assert_int_equal(et_nic_init(&h->nic, port, lm, pool, &mac, ip, 0x100 * id, 64), 0);
	assert_int_equal(et_mr_table_init(&h->mrs, 4), 0);
	assert_int_equal(et_cq_init(&h->scq, 4096), 0);
	assert_int_equal(et_cq_init(&h->rcq, 4096), 0);
	h->mem = malloc(MEM);
	for (uint32_t i = 0; i < MEM; i++)
		h->mem[i] = (uint8_t)(et_test_rand(&seed) >> 11);
	h->mr = et_mr_reg(&h->mrs, h->mem, MEM, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
}

static void
host_free(struct host *h)
{
	et_nic_free(&h->nic);
	et_mr_table_free(&h->mrs);
	et_cq_free(&h->scq);
	et_cq_free(&h->rcq);
	free(h->mem);
}

/* Both hosts, then their link (the side without rings first), and no mbuf
 * may be left out of the pool. */
static void
hosts_free(struct et_port *with_rings, struct et_port *other)
{
	host_free(&H[0]);
	host_free(&H[1]);
	if (other)
		et_port_close(other);
	et_port_close(with_rings);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* n connected QP pairs between host 0 and host 1. */
static void
connect_qps(int n, const struct rte_ether_addr *next_hop0,
	    const struct rte_ether_addr *next_hop1)
{
	for (int i = 0; i < n; i++) {
		struct et_qp_attr a;

		et_qp_attr_default(&a);
		a.mtu = 1024;
		a.dctcp.init_cwnd = 32 * 1024;
		a.dest_ip = H[1].nic.ip;
		a.dest_mac = *next_hop0;
		QP[0][i] = et_nic_qp_create(&H[0].nic, &a, &H[0].mrs, &H[0].scq, &H[0].rcq);
		a.dest_ip = H[0].nic.ip;
		a.dest_mac = *next_hop1;
		QP[1][i] = et_nic_qp_create(&H[1].nic, &a, &H[1].mrs, &H[1].scq, &H[1].rcq);
		assert_non_null(QP[0][i]);
		assert_non_null(QP[1][i]);
		assert_int_equal(et_qp_connect(QP[0][i], et_qp_qpn(QP[1][i])), 0);
		assert_int_equal(et_qp_connect(QP[1][i], et_qp_qpn(QP[0][i])), 0);
		assert_int_equal(et_qp_ready(QP[0][i]), 0);
		assert_int_equal(et_qp_ready(QP[1][i]), 0);
	}
}

/* A third NIC run() polls after the hosts' (a team's second). */
static struct et_nic *EXTRA;

/* Virtual time: poll everything, jump to the next event. */
static uint64_t
run(struct et_net *net, uint64_t now, bool (*done)(void), uint64_t until)
{
	for (int guard = 0; guard < 50000000; guard++) {
		uint32_t w = et_nic_poll(&H[0].nic, now) + et_nic_poll(&H[1].nic, now);
		uint64_t t;

		if (EXTRA) {
			w += et_nic_poll(EXTRA, now);
			if (et_nic_next_event(EXTRA, now) <= now)
				w++;
		}
		if (net)
			w += et_net_poll(net, now);
		if (done && done())
			return now;
		if (w)
			continue;
		t = et_nic_next_event(&H[0].nic, now);
		if (et_nic_next_event(&H[1].nic, now) < t)
			t = et_nic_next_event(&H[1].nic, now);
		if (net && et_net_next_event(net, now) < t)
			t = et_net_next_event(net, now);
		if (EXTRA && et_nic_next_event(EXTRA, now) < t)
			t = et_nic_next_event(EXTRA, now);
		if (t == UINT64_MAX || t > until)
			return now;
		now = t > now ? t : now + 1;
	}
	fail_msg("no progress");
	return now;
}

static uint32_t expect_send, expect_recv, expect_bytes;

static bool
sends_done(void)
{
	return et_cq_count(&H[0].scq) >= expect_send;
}

/* Messages of many sizes on every QP, WRITE and SEND, half of the memory. */
static void
post_transfer(int nqp)
{
	uint32_t off = 0, i = 0, nrecv = 0;

	expect_send = 0;
	while (off < MEM / 2) {
		uint32_t len = (i * 7919) % 70000;
		struct et_qp *q = QP[0][i % nqp];
		struct et_send_wr wr = {.wr_id = i, .opcode = (uint8_t)(i % 2 ? ET_WR_SEND
									  : ET_WR_RDMA_WRITE),
					.local_addr = H[0].mem + off, .length = len,
					.lkey = H[0].mr->key,
					.remote_addr = (uintptr_t)(H[1].mem + off),
					.rkey = H[1].mr->key};

		if (off + len > MEM / 2)
			break;
		if (wr.opcode == ET_WR_SEND) {
			struct et_recv_wr rw = {.wr_id = i, .addr = H[1].mem + off,
						.length = len, .lkey = H[1].mr->key};

			assert_int_equal(et_qp_post_recv(QP[1][i % nqp], &rw), 0);
			nrecv++;
		}
		if (et_nic_post_send(&H[0].nic, q, &wr) == -ENOSPC)
			break;
		expect_send++;
		off += len;
		i++;
	}
	expect_recv = nrecv;
	expect_bytes = off;
}

/* Every request and receive completed well, every byte where it belongs. */
static void
check_transfer(void)
{
	struct et_wc wc;

	assert_int_equal(et_cq_count(&H[0].scq), expect_send);
	while (et_cq_poll(&H[0].scq, &wc, 1))
		assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(et_cq_count(&H[1].rcq), expect_recv);
	while (et_cq_poll(&H[1].rcq, &wc, 1))
		assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_memory_equal(H[1].mem, H[0].mem, expect_bytes);
}

/* post_transfer, run to its end, check_transfer; the virtual time taken. */
static uint64_t
transfer(struct et_net *net, int nqp)
{
	uint64_t now;

	post_transfer(nqp);
	now = run(net, 0, sends_done, 10ull * 1000000000);
	check_transfer();
	return now;
}

static void
test_back_to_back(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000};
	struct et_port a, b;

	assert_int_equal(et_port_net_ring_pair(&a, &b, "b2b", 1024, 0, pool), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	connect_qps(4, &H[1].nic.mac, &H[0].nic.mac);
	uint64_t ns = transfer(NULL, 4);
	/* at 100 Gbit/s 2 MB takes at least 168 us */
	assert_true(ns > 160000);
	/* every frame sent arrived: nothing lost, nothing refused */
	assert_int_equal(H[0].nic.eg.st.tx_pkts, H[1].nic.st.rx_pkts);
	assert_int_equal(H[1].nic.eg.st.tx_pkts, H[0].nic.st.rx_pkts);
	assert_int_equal(H[0].nic.st.tx_pkts, H[0].nic.eg.st.tx_pkts);
	for (int i = 0; i < 4; i++)
		assert_int_equal(QP[0][i]->st.retransmits, 0);
	hosts_free(&a, &b);
}

/* Two NICs on one port, as ethereal-node's workers run them (et_nic_team):
 * host 1's NIC holds QPs 0 and 2, a second NIC QPs 1 and 3.  Whichever
 * reads a frame, it reaches the NIC of its QP exactly once; the transfer
 * completes whole, with nothing lost or unknown. */
static void
test_team(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000};
	struct et_nic_team team;
	struct et_nic t1;
	struct et_port a, b;

	assert_int_equal(et_port_net_ring_pair(&a, &b, "team", 1024, 0, pool), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	assert_int_equal(et_nic_init(&t1, &b, &lm, pool, &H[1].nic.mac, H[1].nic.ip, 0x200, 64), 0);
	assert_int_equal(et_nic_team_init(&team, 2, 256, 0), 0);
	et_nic_join(&H[1].nic, &team, 0);
	et_nic_join(&t1, &team, 1);
	for (uint32_t i = 0; i < 4; i++) {
		struct et_nic *owner = i % 2 ? &t1 : &H[1].nic;
		struct et_qp_attr at;

		et_qp_attr_default(&at);
		at.mtu = 1024;
		at.dctcp.init_cwnd = 32 * 1024;
		at.dest_ip = H[1].nic.ip;
		at.dest_mac = H[1].nic.mac;
		QP[0][i] = et_nic_qp_create(&H[0].nic, &at, &H[0].mrs, &H[0].scq, &H[0].rcq);
		at.dest_ip = H[0].nic.ip;
		at.dest_mac = H[0].nic.mac;
		at.qpn = 0x200 + i;
		QP[1][i] = et_nic_qp_create(owner, &at, &H[1].mrs, &H[1].scq, &H[1].rcq);
		assert_non_null(QP[0][i]);
		assert_non_null(QP[1][i]);
		assert_int_equal(et_nic_team_owner(&team, 0x200, et_qp_qpn(QP[1][i])), i % 2);
		assert_int_equal(et_qp_connect(QP[0][i], et_qp_qpn(QP[1][i])), 0);
		assert_int_equal(et_qp_connect(QP[1][i], et_qp_qpn(QP[0][i])), 0);
		assert_int_equal(et_qp_ready(QP[0][i]), 0);
		assert_int_equal(et_qp_ready(QP[1][i]), 0);
	}
	EXTRA = &t1;
	transfer(NULL, 4);
	EXTRA = NULL;
	/* host 1's NIC read the port first and handed the second its frames */
	assert_true(H[1].nic.st.rx_steered > 0);
	assert_true(t1.st.rx_pkts > 0 && H[1].nic.st.rx_pkts > 0);
	assert_int_equal(H[1].nic.st.rx_steer_full + t1.st.rx_steer_full, 0);
	assert_int_equal(H[1].nic.st.rx_unknown_qpn + t1.st.rx_unknown_qpn, 0);
	/* each frame sent reached its QP once; each answer came back */
	assert_int_equal(H[1].nic.st.rx_pkts + t1.st.rx_pkts, H[0].nic.eg.st.tx_pkts);
	assert_int_equal(H[0].nic.st.rx_pkts, H[1].nic.eg.st.tx_pkts + t1.eg.st.tx_pkts);
	for (int i = 0; i < 4; i++)
		assert_int_equal(QP[0][i]->st.retransmits, 0);
	et_nic_free(&t1);
	et_nic_team_free(&team);
	hosts_free(&a, &b);
}

/* rx_loss_ppm drops RoCEv2 frames on arrival, data at the receiver and
 * ACKs at the sender: counted, every frame accounted for, and the
 * transport repairs it all. */
static void
test_receive_loss(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000, .seed = 3};
	struct et_port a, b;
	uint64_t arrived;

	(void)state;
	assert_int_equal(et_port_net_ring_pair(&a, &b, "rxloss", 1024, 0, pool), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	H[0].nic.rx_loss_ppm = 20000;
	H[1].nic.rx_loss_ppm = 20000;
	connect_qps(2, &H[1].nic.mac, &H[0].nic.mac);
	transfer(NULL, 2);
	for (int h = 0; h < 2; h++) {
		arrived = H[1 - h].nic.eg.st.tx_pkts;
		assert_int_equal(H[h].nic.st.rx_pkts + H[h].nic.st.rx_fault_drops, arrived);
		assert_true(H[h].nic.st.rx_fault_drops > arrived / 50 * 0.5 &&
			    H[h].nic.st.rx_fault_drops < arrived / 50 * 1.5);
	}
	assert_true(QP[0][0]->st.retransmits + QP[0][1]->st.retransmits > 0);
	hosts_free(&a, &b);
}

static void
test_through_a_switch_with_loss(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 500,
				   .loss_ppm = 5000, .seed = 7};
	struct et_net_params p;
	struct et_topo t;
	struct et_net net;
	struct rte_ether_addr tor0, tor1;

	memset(&p, 0, sizeof(p));
	et_sw_params_default(&p.sw);
	p.sw.queue_pkts = 1024;
	p.link = lm;
	p.ethdev = true;
	p.ring_size = 1024;
	et_topo_leaf_spine(&t, 1, 1, 2, 1);
	assert_int_equal(et_net_build(&net, &t, &p, pool, 0), 0);
	host_init(&H[0], &net.host_port[0], et_topo_host_ip(&t, 0), 1, &lm);
	host_init(&H[1], &net.host_port[1], et_topo_host_ip(&t, 1), 2, &lm);
	et_net_host_mac(0, &H[0].nic.mac);
	et_net_host_mac(1, &H[1].nic.mac);
	et_net_tor_mac(&net, 0, &tor0);
	et_net_tor_mac(&net, 1, &tor1);
	connect_qps(3, &tor0, &tor1);
	transfer(&net, 3);
	/* frames were lost both at the hosts and at the switch, and repaired */
	assert_true(H[0].nic.eg.st.loss_drops > 0);
	assert_true(net.sw[0].ports[1].eg.st.loss_drops > 0);
	assert_true(QP[0][0]->st.retransmits > 0);
	host_free(&H[0]);
	host_free(&H[1]);
	et_net_free(&net);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
inject(struct et_port *from, const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	memcpy(rte_pktmbuf_append(m, (uint16_t)len), f, len);
	assert_int_equal(et_port_tx(from, &m, 1), 1);
}

/* At 1000 ns host p's egress gets a PAUSE (1000 quanta at 10 Gbit/s:
 * 51.2 us, sent by the other host); then one WRITE of len bytes, host 0 to
 * host 1 on QP 0, is posted and the hosts run to until. */
static void
paused_write(int p, uint32_t len, uint64_t until)
{
	struct rte_mbuf *pf = et_pfc_frame(pool, &H[1 - p].nic.mac, 1000);
	struct et_send_wr wr = {.wr_id = 1, .opcode = ET_WR_RDMA_WRITE, .local_addr = H[0].mem,
				.length = len, .lkey = H[0].mr->key,
				.remote_addr = (uintptr_t)H[1].mem, .rkey = H[1].mr->key};

	assert_int_equal(et_port_tx(&H[1 - p].nic.port, &pf, 1), 1);
	run(NULL, 1000, NULL, 1000);
	assert_int_equal(H[p].nic.st.pause_rx, 1);
	expect_send = 1;
	assert_int_equal(et_nic_post_send(&H[0].nic, QP[0][0], &wr), 0);
	run(NULL, 1000, NULL, until);
}

static void
test_bad_input_and_pause(void **state)
{
	struct et_link_model lm = {.rate_bps = 10000000000ull, .latency_ns = 0};
	struct et_port a, b;
	struct et_roce_hdr h;
	uint8_t f[512];
	uint64_t seed = 5, now;
	int len;

	assert_int_equal(et_port_net_ring_pair(&a, &b, "bad", 1024, 0, pool), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	connect_qps(1, &H[1].nic.mac, &H[0].nic.mac);

	/* a peer that sends garbage, a wrong QPN, a bad ICRC, a stranger's IP */
	for (int i = 0; i < 100; i++) {
		for (int k = 0; k < 80; k++)
			f[k] = (uint8_t)et_test_rand(&seed);
		inject(&H[0].nic.port, f, 80);
	}
	memset(&h, 0, sizeof(h));
	h.src_ip = H[0].nic.ip;
	h.dst_ip = H[1].nic.ip;
	h.ttl = 64;
	h.opcode = ET_OP_SEND_ONLY;
	h.dest_qp = 0x999;
	len = et_roce_build(f, sizeof(f), &h, NULL, 16);
	inject(&H[0].nic.port, f, (uint32_t)len);         /* unknown QPN */
	h.dest_qp = QP[1][0]->a.qpn;
	len = et_roce_build(f, sizeof(f), &h, NULL, 16);
	f[len - 1] ^= 1;
	inject(&H[0].nic.port, f, (uint32_t)len);         /* bad ICRC */
	h.dst_ip = RTE_IPV4(10, 9, 9, 9);
	len = et_roce_build(f, sizeof(f), &h, NULL, 16);
	inject(&H[0].nic.port, f, (uint32_t)len);         /* not ours */
	run(NULL, 0, NULL, 1000);
	struct et_nic_stats *st = &H[1].nic.st;
	uint64_t bad = 0;
	for (int e = 0; e < ET_WIRE_E_COUNT; e++)
		bad += st->rx_bad[e];
	assert_int_equal(bad, 101);
	assert_int_equal(st->rx_bad[ET_WIRE_E_ICRC], 1);
	assert_int_equal(st->rx_unknown_qpn, 1);
	assert_int_equal(st->rx_not_ours, 1);
	assert_int_equal(st->rx_pkts, 0);
	assert_int_equal(QP[1][0]->st.rx_pkts, 0);

	/* a PAUSE holds host 0's egress */
	paused_write(0, 100, 50000);
	assert_int_equal(QP[1][0]->st.rx_pkts, 0); /* held */
	now = run(NULL, 50000, sends_done, 1000000);
	assert_int_equal(et_cq_count(&H[0].scq), 1);
	assert_true(now >= 1000 + 51200);
	/* and a transfer after all this is undisturbed */
	assert_int_equal(et_cq_poll(&H[0].scq, &(struct et_wc){0}, 1), 1);
	transfer(NULL, 1);
	hosts_free(&a, &b);
}

/* acks_first: the receiver's ACKs are built as its data is read and wait
 * ahead of any data of its own; a PAUSE holds them too (they are of the
 * data's class), and once it ends the transfer completes untouched. */
static void
test_acks_first(void **state)
{
	struct et_link_model lm = {.rate_bps = 10000000000ull, .latency_ns = 1000};
	struct et_port a, b;
	uint64_t now;

	assert_int_equal(et_port_net_ring_pair(&a, &b, "acks1st", 1024, 0, pool), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	et_nic_acks_first(&H[1].nic, true);
	connect_qps(1, &H[1].nic.mac, &H[0].nic.mac);
	/* host 1's egress paused */
	paused_write(1, 8192, 40000);
	/* all 8 packets arrived; their ACKs wait in the control queue */
	assert_int_equal(QP[1][0]->st.rx_pkts, 8);
	assert_true(H[1].nic.eg.ctrl_tail - H[1].nic.eg.ctrl_head >= 1);
	assert_int_equal(QP[0][0]->st.acks_rx, 0);
	now = run(NULL, 40000, sends_done, 1000000);
	assert_int_equal(et_cq_count(&H[0].scq), 1);
	assert_true(now >= 1000 + 51200);
	assert_int_equal(QP[0][0]->st.retransmits, 0);
	assert_memory_equal(H[1].mem, H[0].mem, 8192);
	/* every frame host 1 made (its ACKs through the control queue) left */
	assert_int_equal(H[1].nic.st.tx_pkts, H[1].nic.eg.st.tx_pkts);
	assert_int_equal(et_cq_poll(&H[0].scq, &(struct et_wc){0}, 1), 1);
	transfer(NULL, 1);
	hosts_free(&a, &b);
}

/* Three busy QPs take turns, one packet each. */
static void
test_round_robin(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000};
	struct et_port a, b;
	struct rte_mbuf *m[64];
	uint32_t order[64], n = 0, k;

	assert_int_equal(et_port_ring_pair(&a, &b, "rr", 1024, 0), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	connect_qps(3, &H[1].nic.mac, &H[0].nic.mac);
	for (int i = 0; i < 3; i++) {
		struct et_send_wr wr = {.wr_id = i, .opcode = ET_WR_RDMA_WRITE,
					.local_addr = H[0].mem, .length = 20 * 1024,
					.lkey = H[0].mr->key,
					.remote_addr = (uintptr_t)H[1].mem, .rkey = H[1].mr->key};

		assert_int_equal(et_nic_post_send(&H[0].nic, QP[0][i], &wr), 0);
	}
	/* host 1 is not polled: read what host 0 puts on the wire */
	for (uint64_t now = 0; now < 10000 && n < 30; now += 50) {
		et_nic_poll(&H[0].nic, now);
		k = et_port_rx(&b, m, 64);
		for (uint32_t i = 0; i < k; i++) {
			struct et_roce_pkt p;

			assert_int_equal(et_roce_parse_mbuf(m[i], &p, 0), 0);
			if (n < 64)
				order[n++] = p.h.dest_qp;
			rte_pktmbuf_free(m[i]);
		}
	}
	assert_true(n >= 30);
	for (uint32_t i = 3; i < 30; i++)
		assert_int_equal(order[i], order[i - 3]);
	assert_true(order[0] != order[1] && order[1] != order[2] && order[0] != order[2]);
	hosts_free(&a, NULL);
}

/* Many QPs waiting on a dead link: each times out through the heap. */
static void
test_timer_heap(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000,
				   .loss_ppm = 1000000};
	struct et_port a, b;

	assert_int_equal(et_port_ring_pair(&a, &b, "th", 1024, 0), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	connect_qps(8, &H[1].nic.mac, &H[0].nic.mac);
	for (int i = 0; i < 8; i++) {
		struct et_send_wr wr = {.wr_id = i, .opcode = ET_WR_RDMA_WRITE,
					.local_addr = H[0].mem, .length = 3000,
					.lkey = H[0].mr->key,
					.remote_addr = (uintptr_t)H[1].mem, .rkey = H[1].mr->key};

		QP[0][i]->a.retry_cnt = 2;
		QP[0][i]->retries_left = 2;
		assert_int_equal(et_nic_post_send(&H[0].nic, QP[0][i], &wr), 0);
	}
	run(NULL, 0, NULL, 100000000);
	for (int i = 0; i < 8; i++)
		assert_int_equal(QP[0][i]->st.timeouts, 3);
	assert_int_equal(et_cq_count(&H[0].scq), 8);
	assert_true(H[0].nic.st.timer_fires >= 24);
	hosts_free(&a, NULL);
}

/* The QP table as a 512-host MP-RDMA-8 all-to-all fills it: 511 peers x 8
 * subflows x 2 ends = 8,176 QPs on one NIC of 65,536 QPNs, whose memory is
 * the pages its QPs are in; QPNs reused as late as possible; a full table
 * refuses; a page goes with its last QP, and a timer its QP left behind
 * finds nothing. */
#define BIG_QPS 8176

static struct et_qp *
big_qp(struct et_nic *n, struct et_mr_table *mrs, struct et_cq *cq)
{
	struct et_qp_attr a;

	et_qp_attr_default(&a);
	a.max_send_wr = a.max_recv_wr = 2;
	a.dest_ip = RTE_IPV4(10, 0, 0, 2);
	return et_nic_qp_create(n, &a, mrs, cq, cq);
}

static uint32_t
pages_held(const struct et_nic *n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < (n->max_qps + ET_NIC_QP_PAGE - 1) / ET_NIC_QP_PAGE; i++)
		k += n->pages[i] != NULL;
	return k;
}

static void
count_qp(void *ctx, struct et_qp *qp)
{
	(void)qp;
	++*(uint32_t *)ctx;
}

static void
test_large_qp_table(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000};
	struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, 1}};
	struct et_nic *n = &H[0].nic;
	struct et_mr_table mrs;
	struct et_cq cq;
	struct et_port a, b;
	static struct et_qp *q[BIG_QPS];
	struct et_qp *x;
	uint32_t seen = 0;

	assert_int_equal(et_port_ring_pair(&a, &b, "big", 1024, 0), 0);
	assert_int_equal(et_mr_table_init(&mrs, 4), 0);
	assert_int_equal(et_cq_init(&cq, 64), 0);
	assert_int_equal(et_nic_init(n, &a, &lm, pool, &mac, RTE_IPV4(10, 0, 0, 1), 0x100, 65536), 0);
	assert_int_equal(pages_held(n), 0);
	for (uint32_t i = 0; i < BIG_QPS; i++) {
		q[i] = big_qp(n, &mrs, &cq);
		assert_non_null(q[i]);
		assert_int_equal(et_qp_qpn(q[i]), 0x100 + i);
	}
	assert_int_equal(n->n_qps, BIG_QPS);
	assert_int_equal(n->st.qps_max, BIG_QPS);
	assert_int_equal(n->st.qps_made, BIG_QPS);
	assert_int_equal(pages_held(n), (BIG_QPS + ET_NIC_QP_PAGE - 1) / ET_NIC_QP_PAGE);
	et_nic_each_qp(n, count_qp, &seen);
	assert_int_equal(seen, BIG_QPS);

	/* the first page emptied: it goes; the next QPN is past the last, not
	 * the first one freed */
	for (uint32_t i = 0; i < ET_NIC_QP_PAGE; i++)
		et_nic_qp_destroy(n, q[i]);
	assert_null(n->pages[0]);
	x = big_qp(n, &mrs, &cq);
	assert_int_equal(et_qp_qpn(x), 0x100 + BIG_QPS);
	assert_int_equal(n->n_qps, BIG_QPS - ET_NIC_QP_PAGE + 1);
	assert_int_equal(n->st.qps_max, BIG_QPS);
	et_nic_qp_destroy(n, x);
	for (uint32_t i = ET_NIC_QP_PAGE; i < BIG_QPS; i++)
		et_nic_qp_destroy(n, q[i]);
	assert_int_equal(n->n_qps, 0);
	assert_int_equal(pages_held(n), 0);
	et_nic_free(n);

	/* 300 QPNs (a page and a part): the 301st is refused; a freed slot is
	 * the only one left, so it is taken again */
	assert_int_equal(et_nic_init(n, &a, &lm, pool, &mac, RTE_IPV4(10, 0, 0, 1), 0x100, 300), 0);
	for (uint32_t i = 0; i < 300; i++)
		assert_non_null(q[i] = big_qp(n, &mrs, &cq));
	assert_null(big_qp(n, &mrs, &cq));
	et_nic_qp_destroy(n, q[7]);
	assert_non_null(q[7] = big_qp(n, &mrs, &cq));
	assert_int_equal(et_qp_qpn(q[7]), 0x100 + 7);
	for (uint32_t i = 0; i < 300; i++)
		et_nic_qp_destroy(n, q[i]);
	assert_int_equal(pages_held(n), 0);

	/* a QP with its retransmission timer set goes, and its page with it:
	 * the heap's entry fires on nothing */
	x = big_qp(n, &mrs, &cq);
	assert_int_equal(et_qp_connect(x, 0x999), 0);
	assert_int_equal(et_qp_ready(x), 0);
	assert_int_equal(et_nic_post_send(n, x, &(struct et_send_wr){
		.opcode = ET_WR_RDMA_WRITE, .local_addr = NULL, .length = 0}), 0);
	et_nic_poll(n, 1);
	assert_int_equal(n->heap_n, 1);
	et_nic_qp_destroy(n, x);
	assert_int_equal(pages_held(n), 0);
	et_nic_poll(n, 1000000000);
	assert_int_equal(n->heap_n, 0);
	assert_int_equal(n->st.timer_fires, 0);
	et_nic_free(n);
	et_port_close(&b);
	et_port_close(&a);
	et_mr_table_free(&mrs);
	et_cq_free(&cq);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* Hostile frames at an endpoint, one table row each: every one is dropped
 * or answered with the right NAK, counted by its reason, and nothing is
 * written outside the one region a peer may write (host 1's window). */
enum hostile_want { W_RX_BAD, W_UNKNOWN_QPN, W_ACCESS_NAK, W_INVALID_NAK, W_SEQ, W_DUP };

static const struct hostile {
	const char *what;
	uint32_t qpn_delta;      /* added to the QP's number */
	int32_t psn_delta;       /* from the expected PSN */
	int64_t va_off;          /* RETH address, from the window's start */
	uint32_t rkey_xor;
	uint32_t dma_len, payload;
	int cut;                 /* bytes cut from the frame's end */
	int oversize;            /* bytes added to the frame's end */
	int flip_ip, flip_icrc;  /* corrupt the IP header / the ICRC */
	uint8_t opcode;
	enum hostile_want want;
	uint8_t why;             /* ET_WIRE_E_* for W_RX_BAD */
} hostile[] = {
	{"unknown QPN", 5, 0, 0, 0, 64, 64, 0, 0, 0, 0, ET_OP_WRITE_ONLY, W_UNKNOWN_QPN, 0},
	{"PSN far ahead", 0, 1 << 22, 0, 0, 64, 64, 0, 0, 0, 0, ET_OP_WRITE_ONLY, W_SEQ, 0},
	{"PSN far behind", 0, -(1 << 22), 0, 0, 64, 64, 0, 0, 0, 0, ET_OP_WRITE_ONLY, W_DUP, 0},
	{"RETH before the region", 0, 0, -64, 0, 64, 64, 0, 0, 0, 0, ET_OP_WRITE_ONLY,
	 W_ACCESS_NAK, 0},
	{"RETH past the region", 0, 0, 4096 - 32, 0, 64, 64, 0, 0, 0, 0, ET_OP_WRITE_ONLY,
	 W_ACCESS_NAK, 0},
	{"RETH wrapping the address space", 0, 0, INT64_MIN / 2, 0, 64, 64, 0, 0, 0, 0,
	 ET_OP_WRITE_ONLY, W_ACCESS_NAK, 0},
	{"wrong rkey", 0, 0, 0, 0x100, 64, 64, 0, 0, 0, 0, ET_OP_WRITE_ONLY, W_ACCESS_NAK, 0},
	{"payload longer than the RETH says", 0, 0, 0, 0, 16, 64, 0, 0, 0, 0,
	 ET_OP_WRITE_ONLY, W_INVALID_NAK, 0},
	{"payload larger than the MTU", 0, 0, 0, 0, 2048, 2048, 0, 0, 0, 0,
	 ET_OP_WRITE_ONLY, W_INVALID_NAK, 0},
	{"truncated inside the RETH", 0, 0, 0, 0, 64, 0, 14 + 20 + 8 + 12 + 4 + 8, 0, 0, 0,
	 ET_OP_WRITE_ONLY, W_RX_BAD, 0xff},
	{"truncated payload", 0, 0, 0, 0, 64, 64, 20, 0, 0, 0, ET_OP_WRITE_ONLY, W_RX_BAD, 0xff},
	{"trailing bytes past the IP length", 0, 0, 0, 0, 64, 64, 0, 300, 0, 0,
	 ET_OP_WRITE_ONLY, W_ACCESS_NAK + 100, 0},
	{"bad ICRC", 0, 0, 0, 0, 64, 64, 0, 0, 0, 1, ET_OP_WRITE_ONLY, W_RX_BAD,
	 ET_WIRE_E_ICRC},
	{"bad IP checksum", 0, 0, 0, 0, 64, 64, 0, 0, 1, 0, ET_OP_WRITE_ONLY, W_RX_BAD,
	 ET_WIRE_E_IP_CSUM},
	/* READ and atomics (issue 38) */
	{"READ past the region", 0, 0, 4096 - 32, 0, 64, 0, 0, 0, 0, 0, ET_OP_READ_REQ,
	 W_ACCESS_NAK, 0},
	{"READ with a wrong rkey", 0, 0, 0, 0x100, 64, 0, 0, 0, 0, 0, ET_OP_READ_REQ,
	 W_ACCESS_NAK, 0},
	{"READ longer than the responder allows", 0, 0, 0, 0, 0x80000001u, 0, 0, 0, 0, 0,
	 ET_OP_READ_REQ, W_INVALID_NAK, 0},
	{"misaligned COMPARE SWAP", 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, ET_OP_CMP_SWAP, W_INVALID_NAK, 0},
	{"FETCH ADD past the region", 0, 0, 4096, 0, 0, 0, 0, 0, 0, 0, ET_OP_FETCH_ADD,
	 W_ACCESS_NAK, 0},
};

static void
test_hostile_frames(void **state)
{
	struct et_link_model lm = {.rate_bps = 10000000000ull, .latency_ns = 0};
	struct et_port a, b;
	const struct et_mr *win;
	uint8_t *before = malloc(MEM), f[4096 + 512];

	(void)state;
	assert_int_equal(et_port_ring_pair(&a, &b, "hos", 1024, 0), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	connect_qps(1, &H[1].nic.mac, &H[0].nic.mac);
	/* the only memory a peer may write, read or work on: 4 KB in the
	 * middle of host 1's */
	win = et_mr_reg(&H[1].mrs, H[1].mem + MEM / 2, 4096,
			ET_ACCESS_REMOTE_WRITE | ET_ACCESS_REMOTE_READ | ET_ACCESS_REMOTE_ATOMIC);
	assert_non_null(win);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *x = &hostile[i];
		struct et_qp *qp;
		struct et_qp_stats q0;
		struct et_nic_stats n0 = H[1].nic.st;
		struct et_roce_hdr h;
		uint8_t payload[4096];
		uint64_t bad = 0, bad0 = 0;
		int len;

		/* a fresh pair each row: a responder error puts its QP in error */
		if (i) {
			et_nic_qp_destroy(&H[0].nic, QP[0][0]);
			et_nic_qp_destroy(&H[1].nic, QP[1][0]);
			connect_qps(1, &H[1].nic.mac, &H[0].nic.mac);
		}
		qp = QP[1][0];
		q0 = qp->st;
		memcpy(before, H[1].mem, MEM);
		memset(payload, 0xa5, sizeof(payload));
		memset(&h, 0, sizeof(h));
		h.dst_mac = H[1].nic.mac;
		h.src_mac = H[0].nic.mac;
		h.src_ip = H[0].nic.ip;
		h.dst_ip = H[1].nic.ip;
		h.ttl = 64;
		h.opcode = x->opcode;
		h.ackreq = true;
		h.dest_qp = qp->a.qpn + x->qpn_delta;
		h.psn = (uint32_t)(qp->epsn + x->psn_delta) & ET_PSN_MASK;
		h.reth_va = (uint64_t)(uintptr_t)(H[1].mem + MEM / 2) + (uint64_t)x->va_off;
		h.reth_rkey = win->key ^ x->rkey_xor;
		h.reth_dma_len = x->dma_len;
		len = et_roce_build(f, sizeof(f), &h, payload, x->payload);
		assert_true(len > 0);
		if (x->flip_ip)
			f[14 + 8] ^= 0x10; /* the TTL: the checksum no longer holds */
		if (x->flip_icrc)
			f[len - 1] ^= 1;
		len = len - x->cut + x->oversize;
		if (x->oversize)
			memset(f + len - x->oversize, 0x5a, (size_t)x->oversize);
		inject(&H[0].nic.port, f, (uint32_t)len);
		run(NULL, 0, NULL, 10000000);
		for (int e = 0; e < ET_WIRE_E_COUNT; e++) {
			bad += H[1].nic.st.rx_bad[e];
			bad0 += n0.rx_bad[e];
		}
		switch ((int)x->want) {
		case W_RX_BAD:
			if (bad != bad0 + 1)
				fail_msg("%s: not counted as malformed", x->what);
			if (x->why != 0xff)
				assert_int_equal(H[1].nic.st.rx_bad[x->why], n0.rx_bad[x->why] + 1);
			break;
		case W_UNKNOWN_QPN:
			assert_int_equal(H[1].nic.st.rx_unknown_qpn, n0.rx_unknown_qpn + 1);
			break;
		case W_ACCESS_NAK:
		case W_INVALID_NAK:
			if (qp->st.err_naks_tx != q0.err_naks_tx + 1)
				fail_msg("%s: no error NAK", x->what);
			break;
		case W_SEQ:
			if (qp->st.rx_out_of_order + qp->st.naks_tx <= q0.rx_out_of_order + q0.naks_tx)
				fail_msg("%s: not counted out of order", x->what);
			break;
		case W_DUP:
			if (qp->st.rx_dup != q0.rx_dup + 1)
				fail_msg("%s: not counted as a duplicate", x->what);
			break;
		default:
			/* Ethernet padding past the IP length is legal: the frame is
			 * taken as the IP length says (placed inside the window) */
			break;
		}
		/* nothing outside the window changed, ever; inside only when accepted */
		if (memcmp(before, H[1].mem, MEM / 2) != 0 ||
		    memcmp(before + MEM / 2 + 4096, H[1].mem + MEM / 2 + 4096, MEM / 2 - 4096) != 0)
			fail_msg("%s: wrote outside the registered window", x->what);
		if ((int)x->want != W_ACCESS_NAK + 100 &&
		    memcmp(before + MEM / 2, H[1].mem + MEM / 2, 4096) != 0)
			fail_msg("%s: placed data it should have refused", x->what);
	}
	free(before);
	hosts_free(&a, NULL);
}

/* Virtual time's hand-over (struct et_arrival_hook): a frame goes to the
 * port when its last bit has left, a latency before it arrives, and the
 * far end told when it arrives; the far end's timed port gives it out at that instant
 * and not before; a failure known in advance loses what would arrive
 * while the link is down, though it was handed over before. */
static struct {
	uint32_t calls, node;
	uint64_t at[8];
} told;

static void
note_arrival(void *ctx, uint32_t node, const struct et_rx_hint *hint, const struct et_arrival *a,
	     uint32_t n)
{
	(void)ctx;
	assert_int_equal(et_rx_hint_apply(hint, a, n), 0);
	told.node = node;
	for (uint32_t i = 0; i < n; i++)
		told.at[told.calls++ % 8] = a[i].at;
}

static void
test_hand_over_early(void **state)
{
	const struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 500, .seed = 3};
	uint64_t tx = et_link_tx_ns(&lm, 1000), port_next = UINT64_MAX, at[3], t;
	struct et_port a, b;
	struct et_egress e;
	struct rte_mbuf *m[4];

	(void)state;
	memset(&told, 0, sizeof(told));
	assert_int_equal(et_port_ring_pair(&a, &b, "early", 64, 0), 0);
	assert_int_equal(et_egress_init(&e, &a, &lm, 64), 0);
	e.arrive = (struct et_arrival_hook){note_arrival, NULL, 7, {&b, &port_next, NULL}};
	et_port_set_timed(&b, true);
	for (int i = 0; i < 3; i++) {
		struct rte_mbuf *f = rte_pktmbuf_alloc(pool);

		memset(rte_pktmbuf_append(f, 1000), 0, 1000);
		assert_true(et_egress_enqueue(&e, f));
		at[i] = (uint64_t)(i + 1) * tx + lm.latency_ns;
	}
	/* the third frame would arrive on a dead link, the second not */
	e.down_from = at[2];
	e.down_until = UINT64_MAX;
	et_egress_run(&e, 0);
	assert_int_equal(told.calls, 0); /* on the wire, not yet handed over */
	/* the egress wakes when the first frame's last bit leaves */
	assert_int_equal(et_egress_next_event(&e, 0), tx);
	for (t = tx; t <= 3 * tx; t = et_egress_next_event(&e, t))
		et_egress_run(&e, t);
	assert_int_equal(told.calls, 2);
	assert_int_equal(told.node, 7);
	assert_int_equal(told.at[0], at[0]);
	assert_int_equal(told.at[1], at[1]);
	assert_int_equal(port_next, at[0]);
	assert_int_equal(e.st.fail_drops, 1);
	assert_int_equal(et_egress_next_event(&e, t), UINT64_MAX);
	/* the far end: nothing before its instant, then one at a time */
	assert_int_equal(et_port_next_arrival(&b), at[0]);
	assert_int_equal(et_port_rx_at(&b, m, 4, at[0] - 1), 0);
	assert_int_equal(et_port_rx_at(&b, m, 4, at[0]), 1);
	rte_pktmbuf_free(m[0]);
	assert_int_equal(et_port_next_arrival(&b), at[1]);
	assert_int_equal(et_port_rx_at(&b, m, 4, at[1] + 1000), 1);
	rte_pktmbuf_free(m[0]);
	assert_int_equal(et_port_next_arrival(&b), UINT64_MAX);
	et_port_set_timed(&b, false);
	et_egress_free(&e);
	et_port_free_rings(&a);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* The link fault model on one egress over a ring pair: numbered UDP frames
 * in, what arrives out, against what each fault must do. */
static uint32_t
fault_run(const struct et_link_model *lm, uint32_t n, uint32_t *seq, uint32_t *bad,
	  struct et_egress_stats *st)
{
	struct et_port a, b;
	struct et_egress e;
	struct rte_mbuf *m[32];
	uint32_t got = 0, sent = 0;
	uint64_t now = 0;

	assert_int_equal(et_port_ring_pair(&a, &b, "flt", 4096, 0), 0);
	assert_int_equal(et_egress_init(&e, &a, lm, 4096), 0);
	while (got < 4 * n && now < 1000000000ull) {
		uint16_t k;

		if (sent < n && et_egress_qlen(&e) < 64) {
			struct rte_mbuf *f = rte_pktmbuf_alloc(pool);
			uint8_t *d = (uint8_t *)rte_pktmbuf_append(f, 1000);

			memset(d, 0, 1000);
			d[12] = 0x08;  /* IPv4, 20-byte header */
			d[14] = 0x45;
			memcpy(d + 44, &sent, 4); /* in the BTH: corruption starts past it */
			sent++;
			assert_true(et_egress_enqueue(&e, f));
		}
		et_egress_run(&e, now);
		while ((k = et_port_rx(&b, m, 32)) > 0)
			for (uint16_t i = 0; i < k; i++) {
				uint32_t v;
				const uint8_t *d = rte_pktmbuf_mtod(m[i], const uint8_t *);

				memcpy(&v, d + 44, 4);
				/* a corrupted frame: some byte past the BTH is no longer zero */
				for (uint32_t j = 54; j < 1000; j++)
					if (d[j]) {
						(*bad)++;
						break;
					}
				seq[got++] = v;
				rte_pktmbuf_free(m[i]);
			}
		if (sent == n && et_egress_next_event(&e, now) == UINT64_MAX)
			break;
		now += 10;
	}
	*st = e.st;
	et_egress_free(&e);
	et_port_free_rings(&a);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
	return got;
}

/* Corruption at 5 %: counted, and every corrupted frame differs past the BTH. */
static void
check_corruption(const struct et_link_model *base, uint32_t n, uint32_t *seq)
{
	struct et_link_model lm = *base;
	struct et_egress_stats st;
	uint32_t bad = 0, got;

	lm.corrupt_ppm = 50000;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got, n);
	assert_int_equal(bad, st.corrupted);
	assert_true(st.corrupted > n / 20 * 0.8 && st.corrupted < n / 20 * 1.2);
}

/* Duplication at 5 %: every duplicate arrives, right after its original. */
static void
check_duplication(const struct et_link_model *base, uint32_t n, uint32_t *seq)
{
	struct et_link_model lm = *base;
	struct et_egress_stats st;
	uint32_t bad = 0, got, dup = 0;

	lm.dup_ppm = 50000;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got, n + st.duplicated);
	assert_true(st.duplicated > n / 20 * 0.8 && st.duplicated < n / 20 * 1.2);
	for (uint32_t i = 1; i < got; i++)
		dup += seq[i] == seq[i - 1];
	assert_int_equal(dup, st.duplicated);
}

static void
test_link_faults(void **state)
{
	const struct et_link_model base = {.rate_bps = 100000000000ull, .latency_ns = 500, .seed = 3};
	struct et_link_model lm;
	struct et_egress_stats st;
	static uint32_t seq[40000], seq2[40000];
	uint32_t n = 10000, got, got2, bad, bad2, inversions = 0;

	(void)state;
	/* clean: all, in order */
	lm = base;
	bad = 0;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(seq[i], i);
	check_corruption(&base, n, seq);
	check_duplication(&base, n, seq);
	/* jitter: everything arrives, some out of order */
	lm = base;
	lm.jitter_ns = 2000;
	bad = 0;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got, n);
	for (uint32_t i = 1; i < got; i++)
		inversions += seq[i] < seq[i - 1];
	assert_true(inversions > 100);
	/* Gilbert-Elliott: losses come in bursts (runs longer than random loss) */
	lm = base;
	lm.ge_enter_ppm = 10000;
	lm.ge_exit_ppm = 200000;
	lm.ge_loss_ppm = 1000000;
	bad = 0;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got + st.burst_drops, n);
	assert_true(st.burst_drops > 200);
	{
		uint32_t gaps = 0;

		for (uint32_t i = 1; i < got; i++)
			gaps += seq[i] != seq[i - 1] + 1;
		/* mean burst = 1 / exit = 5 frames: far fewer gaps than drops */
		assert_true(gaps * 3 < st.burst_drops);
	}
	/* flapping: some stretches lost, the rest delivered */
	lm = base;
	lm.flap_period_ns = 20000;
	lm.flap_down_ns = 2000;
	bad = 0;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got + st.flap_drops, n);
	assert_true(st.flap_drops > n / 40 && st.flap_drops < n / 4);
	/* every fault at once replays exactly with the same seed, not another */
	lm = base;
	lm.loss_ppm = 10000;
	lm.corrupt_ppm = 10000;
	lm.dup_ppm = 10000;
	lm.jitter_ns = 500;
	bad = bad2 = 0;
	got = fault_run(&lm, n, seq, &bad, &st);
	got2 = fault_run(&lm, n, seq2, &bad2, &st);
	assert_int_equal(got, got2);
	assert_memory_equal(seq, seq2, got * sizeof(seq[0]));
	lm.seed = 4;
	got2 = fault_run(&lm, n, seq2, &bad2, &st);
	assert_true(got != got2 || memcmp(seq, seq2, got * sizeof(seq[0])) != 0);
}

/* A real NIC's wire (rate 0): no time model, but loss, corruption and
 * duplication still apply, seeded. */
static void
test_wire_link_faults(void **state)
{
	const struct et_link_model base = {.rate_bps = 0, .seed = 5};
	struct et_link_model lm;
	struct et_egress_stats st;
	static uint32_t seq[40000];
	uint32_t n = 10000, got, bad = 0;

	(void)state;
	lm = base;
	lm.loss_ppm = 20000;
	got = fault_run(&lm, n, seq, &bad, &st);
	assert_int_equal(got + st.loss_drops, n);
	assert_true(st.loss_drops > n / 50 * 0.7 && st.loss_drops < n / 50 * 1.3);
	for (uint32_t i = 1; i < got; i++)
		assert_true(seq[i] > seq[i - 1]); /* a wire keeps order */
	check_corruption(&base, n, seq);
	check_duplication(&base, n, seq);
}

/* ---- the end of an RNR wait (issue 21) ---- */

static sigjmp_buf poll_hung;

static void
poll_alarm(int sig)
{
	(void)sig;
	siglongjmp(poll_hung, 1);
}

/* One et_nic_poll at now, which must return within 2 s (issue 21's NIC
 * spun in one call for ever); the timers it fired. */
static uint64_t
poll_once(struct et_nic *nic, uint64_t now)
{
	struct sigaction sa = {.sa_handler = poll_alarm}, old;
	uint64_t fires = nic->st.timer_fires;

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	if (sigsetjmp(poll_hung, 1)) {
		sigaction(SIGALRM, &old, NULL);
		fail_msg("et_nic_poll at %" PRIu64 " ns did not return in 2 s: %" PRIu64
			 " timer fires", now, nic->st.timer_fires - fires);
	}
	alarm(2);
	et_nic_poll(nic, now);
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	return nic->st.timer_fires - fires;
}

static bool
rnr_naked(void)
{
	return QP[0][0]->st.rnr_naks_rx > 0;
}

/* Host 1 answers a SEND with an RNR NAK (no receive posted yet).  At the
 * end of the wait one poll of host 0 returns, fires that QP's timer once,
 * and sends the SEND again; another poll at the same now fires nothing.
 * With a receive posted meanwhile the SEND completes. */
static void
test_rnr_wait_ends(void **state)
{
	struct et_link_model lm = {.rate_bps = 100000000000ull, .latency_ns = 1000};
	struct et_send_wr wr;
	struct et_recv_wr rw;
	struct et_port a, b;
	struct et_qp *q;
	struct et_wc wc;
	uint64_t now, end;

	(void)state;
	assert_int_equal(et_port_net_ring_pair(&a, &b, "rnr", 1024, 0, pool), 0);
	host_init(&H[0], &a, RTE_IPV4(10, 0, 0, 1), 1, &lm);
	host_init(&H[1], &b, RTE_IPV4(10, 0, 0, 2), 2, &lm);
	connect_qps(1, &H[1].nic.mac, &H[0].nic.mac);
	q = QP[0][0];
	wr = (struct et_send_wr){.wr_id = 1, .opcode = ET_WR_SEND, .local_addr = H[0].mem,
				 .length = 1000, .lkey = H[0].mr->key};
	assert_int_equal(et_nic_post_send(&H[0].nic, q, &wr), 0);
	now = run(NULL, 0, rnr_naked, 1000000000);
	assert_int_equal(q->st.rnr_naks_rx, 1);
	end = et_qp_deadline(q);
	assert_int_equal(end - now, et_rnr_timer_ns(QP[1][0]->a.min_rnr_timer));
	rw = (struct et_recv_wr){.wr_id = 2, .addr = H[1].mem, .length = 1000,
				 .lkey = H[1].mr->key};
	assert_int_equal(et_qp_post_recv(QP[1][0], &rw), 0);
	/* the wait is not over: nothing fires, nothing goes */
	assert_int_equal(poll_once(&H[0].nic, end - 1), 0);
	assert_int_equal(q->st.tx_pkts, 1);
	/* it is over: one fire, and the SEND goes again */
	assert_int_equal(poll_once(&H[0].nic, end), 1);
	assert_int_equal(q->st.tx_pkts, 2);
	assert_int_equal(q->st.retransmits, 1);
	assert_int_equal(poll_once(&H[0].nic, end), 0);
	assert_int_equal(poll_once(&H[0].nic, end), 0);
	/* the QP itself moved its deadline past now: the NIC's guard unused */
	assert_int_equal(H[0].nic.st.timer_stalls, 0);
	assert_true(et_nic_next_event(&H[0].nic, end) > end);
	expect_send = 1;
	run(NULL, end, sends_done, end + 1000000000);
	assert_int_equal(et_cq_poll(&H[0].scq, &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(et_cq_poll(&H[1].rcq, &wc, 1), 1);
	assert_int_equal(wc.status, ET_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 1000);
	assert_memory_equal(H[1].mem, H[0].mem, 1000);
	hosts_free(&a, &b);
}

/* Host 0 sends post_transfer(4), polled every 100 ns, while host 1 wakes
 * every rx_every_ns and then polls up to bursts times (each taking at most
 * 32 frames) or until it has nothing to do. */
static void
run_slow_receiver(uint64_t rx_every_ns, uint32_t bursts)
{
	uint64_t now;

	post_transfer(4);
	for (now = 0; !sends_done(); now += 100) {
		assert_true(now < 1000000000ull);
		et_nic_poll(&H[0].nic, now);
		if (now % rx_every_ns == 0)
			for (uint32_t k = 0; k < bursts && et_nic_poll(&H[1].nic, now); k++)
				;
	}
	check_transfer();
}

static void
slow_receiver_hosts(struct et_port *a, struct et_port *b, const char *name, uint32_t ring,
		    int nqp)
{
	struct et_link_model wire = {0};

	assert_int_equal(et_port_net_ring_pair(a, b, name, ring, 0, pool), 0);
	host_init(&H[0], a, RTE_IPV4(10, 0, 0, 1), 1, &wire);
	host_init(&H[1], b, RTE_IPV4(10, 0, 0, 2), 2, &wire);
	connect_qps(nqp, &H[1].nic.mac, &H[0].nic.mac);
}

static uint64_t
sender_timeouts(int nqp)
{
	uint64_t n = 0;

	for (int i = 0; i < nqp; i++)
		n += QP[0][i]->st.timeouts;
	return n;
}

/* A receiver much slower than its sender (one burst of 32 frames every
 * 400 us, 0.66 Gbit/s), behind a ring of 64 frames that is full all the
 * time: a full ring holds the sender back (its egress waits), it loses
 * nothing, and not one packet is sent twice. */
static void
test_slow_receiver(void **state)
{
	struct et_port a, b;

	(void)state;
	slow_receiver_hosts(&a, &b, "slow", 64, 4);
	run_slow_receiver(400000, 1);
	assert_true(H[0].nic.eg.st.port_busy > 0); /* the ring was full */
	assert_int_equal(sender_timeouts(4), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(QP[0][i]->st.retransmits, 0);
		assert_int_equal(QP[1][i]->st.rx_dup, 0);
	}
	hosts_free(&a, &b);
}

/* The sender's core is taken away for 3 ms, past every QP's timeout, while
 * the receiver acknowledges everything: back, the sender finds 512 ACKs
 * for 64 QPs in its ring.  It reads them all before any timer fires (a
 * timer must not fire for an ACK that waits unread), so nothing times out
 * and nothing is sent twice. */
static void
test_sender_away(void **state)
{
	struct et_port a, b;
	uint64_t now;

	(void)state;
	slow_receiver_hosts(&a, &b, "away", 1024, 64);
	expect_send = 64;
	for (int i = 0; i < 64; i++) {
		struct et_send_wr wr = {.wr_id = (uint64_t)i, .opcode = ET_WR_RDMA_WRITE,
					.local_addr = H[0].mem + i * 8192, .length = 8192,
					.lkey = H[0].mr->key,
					.remote_addr = (uintptr_t)(H[1].mem + i * 8192),
					.rkey = H[1].mr->key};

		assert_int_equal(et_nic_post_send(&H[0].nic, QP[0][i], &wr), 0);
	}
	for (now = 0; now < 100000; now += 100)
		et_nic_poll(&H[0].nic, now);
	for (; now < 3000000; now += 100)
		et_nic_poll(&H[1].nic, now);
	assert_true(rte_ring_count(a.rx) > 32);
	for (; !sends_done(); now += 100) {
		assert_true(now < 100000000ull);
		et_nic_poll(&H[0].nic, now);
		et_nic_poll(&H[1].nic, now);
	}
	assert_int_equal(sender_timeouts(64), 0);
	assert_true(H[0].nic.st.rx_catch_up > 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(QP[0][i]->st.retransmits, 0);
	assert_memory_equal(H[1].mem, H[0].mem, 64 * 8192);
	hosts_free(&a, &b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_team),
		cmocka_unit_test(test_through_a_switch_with_loss),
		cmocka_unit_test(test_receive_loss),
		cmocka_unit_test(test_bad_input_and_pause),
		cmocka_unit_test(test_round_robin),
		cmocka_unit_test(test_timer_heap),
		cmocka_unit_test(test_large_qp_table),
		cmocka_unit_test(test_rnr_wait_ends),
		cmocka_unit_test(test_slow_receiver),
		cmocka_unit_test(test_acks_first),
		cmocka_unit_test(test_sender_away),
		cmocka_unit_test(test_link_faults),
		cmocka_unit_test(test_hand_over_early),
		cmocka_unit_test(test_wire_link_faults),
		cmocka_unit_test(test_hostile_frames),
	};

	return cmocka_run_group_tests_name("nic", tests, setup, teardown);
}
