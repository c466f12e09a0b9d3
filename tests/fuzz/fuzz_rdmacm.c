/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the CM agent on QP 1: two hosts on the NIC model,
 * each with its ARP and et_rdmacm (B listens on ucmatose's port, A on
 * perftest's; either accepts or rejects what it is asked, as the input
 * says), connecting to each other while frames of the fuzzer's reach
 * their QP 1 from the other's address: any MAD (with a valid ICRC, so it
 * gets past the NIC), another opcode or Q_Key.
 * Beyond "no crash": every frame the NIC gives QP 1 is counted once by
 * the agent; once every id is released and time has passed, neither agent
 * has anything to wait for, and no mbuf is lost.
 *
 * Input: a byte of op, then its operands: 0-3 a frame to host op & 1 (a
 * byte of length - 1, then the payload; op bits 0x40/0x20: an RC SEND or
 * another Q_Key instead); 4 time (a byte of 1 ms steps); 5 A connects to
 * B (op & 0x80: to a port nobody listens on); 6 act on an id (2 bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "fuzz_eal.h"
#include "host/et_arp.h"
#include "host/et_nic.h"
#include "host/et_rdmacm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PORT 7471
#define IDS 16

struct host {
	struct et_nic nic;
	struct et_arp arp;
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	struct et_rdmacm *cm;
	struct et_rdmacm_id *id[IDS];
	struct et_qp *qp[IDS];
	uint32_t n;
};

static struct rte_mempool *pool;
static struct host H[2];
static struct et_port P[2];
static uint64_t now;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pool = fuzz_eal_pool("256");
	return 0;
}

static void
host_up(struct host *h, const struct et_port *port, uint32_t ip, uint8_t n)
{
	struct et_link_model lm = {.rate_bps = 10000000000ull, .latency_ns = 2000, .seed = n};
	struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, n}};
	struct et_rdmacm_conf c;

	memset(h, 0, sizeof(*h));
	et_rdmacm_conf_default(&c);
	c.cm.seed = n;
	c.cm.max_conns = IDS;
	if (et_nic_init(&h->nic, port, &lm, pool, &mac, ip, 0x100, 2 * IDS) ||
	    et_mr_table_init(&h->mrs, 1) || et_cq_init(&h->scq, 64) || et_cq_init(&h->rcq, 64))
		abort();
	et_arp_init(&h->arp, mac.addr_bytes, ip, 1000, 4);
	h->nic.arp = &h->arp;
	h->cm = et_rdmacm_create(&h->nic, &c);
	if (h->cm == NULL)
		abort();
}

static struct et_qp *
qp_for(struct host *h, uint32_t ip, uint32_t mtu)
{
	struct et_qp_attr a;

	et_qp_attr_default(&a);
	a.dest_ip = ip;
	a.mtu = mtu;
	a.rq_psn = 0x1000;
	return et_nic_qp_create(&h->nic, &a, &h->mrs, &h->scq, &h->rcq);
}

/* An id and its QP (NULL until it has one), kept until let go. */
static void
hold(struct host *h, struct et_rdmacm_id *id, struct et_qp *qp)
{
	if (h->n < IDS) {
		h->id[h->n] = id;
		h->qp[h->n++] = qp;
		return;
	}
	et_rdmacm_release(h->cm, id, now);
	if (qp)
		et_nic_qp_destroy(&h->nic, qp);
}

static void
let_go(struct host *h, uint32_t i)
{
	et_rdmacm_release(h->cm, h->id[i], now);
	if (h->qp[i])
		et_nic_qp_destroy(&h->nic, h->qp[i]);
	h->n--;
	h->id[i] = h->id[h->n];
	h->qp[i] = h->qp[h->n];
}

/* Requests are held (an accept or reject may come from the input). */
static void
events(struct host *h)
{
	struct et_rdmacm_event e;

	while (et_rdmacm_get_event(h->cm, &e))
		if (e.type == ET_CM_EV_CONNECT_REQUEST)
			hold(h, e.id, NULL);
}

static void
step(void)
{
	for (int round = 0; round < 64; round++) {
		uint32_t w = 0;

		for (int i = 0; i < 2; i++) {
			w += et_nic_poll(&H[i].nic, now);
			et_rdmacm_poll(H[i].cm, now);
			events(&H[i]);
		}
		if (w == 0)
			break;
	}
}

/* Time on by dt, stopping at whatever either host waits for. */
static void
advance(uint64_t dt)
{
	uint64_t until = now + dt;

	for (int guard = 0; now < until && guard < 100000; guard++) {
		uint64_t t = until;

		for (int i = 0; i < 2; i++) {
			uint64_t a = et_nic_next_event(&H[i].nic, now), b = et_rdmacm_next_event(H[i].cm);

			t = a < t ? a : t;
			t = b < t ? b : t;
		}
		now = t > now ? t : now + 100000; /* the NIC's pacing: 100 us steps */
		step();
	}
}

static void
inject(uint32_t to, uint8_t op, const uint8_t *payload, uint32_t len)
{
	const struct host *s = &H[1 - to], *d = &H[to];
	struct et_roce_hdr h = {
		.dst_mac = d->nic.mac, .src_mac = s->nic.mac, .src_ip = s->nic.ip,
		.dst_ip = d->nic.ip, .ttl = 64, .opcode = ET_OP_UD_SEND_ONLY,
		.pkey = ET_PKEY_DEFAULT, .dest_qp = ET_QPN_GSI, .deth_qkey = ET_GSI_QKEY,
		.deth_src_qp = ET_QPN_GSI};
	int err;
	struct rte_mbuf *m;

	if (op & 0x40)
		h.opcode = ET_OP_SEND_ONLY;
	else if (op & 0x20)
		h.deth_qkey = 0x80010001;
	m = et_roce_build_mbuf(pool, &h, payload, len, &err);
	if (m && et_port_tx(&P[1 - to], &m, 1) != 1)
		rte_pktmbuf_free(m);
}

static void
act(struct host *h, uint8_t what, uint8_t which)
{
	struct et_rdmacm_conn_param p = {.psn = 0x1000, .rnr_retry_count = 7, .pdata = "ok",
					 .pdata_len = 2};
	uint32_t i;

	if (h->n == 0)
		return;
	i = which % h->n;
	switch (what % 4) {
	case 0:
		if (h->qp[i] == NULL) {
			h->qp[i] = qp_for(h, h == &H[0] ? H[1].nic.ip : H[0].nic.ip, 1024);
			if (h->qp[i])
				et_rdmacm_accept(h->cm, h->id[i], h->qp[i], &p, now);
		}
		break;
	case 1: et_rdmacm_reject(h->cm, h->id[i], "no", 2, now); break;
	case 2: et_rdmacm_disconnect(h->cm, h->id[i], now); break;
	default: let_go(h, i); break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t k = 0;

	if (et_port_ring_pair(&P[0], &P[1], "fz", 256, 0))
		abort();
	host_up(&H[0], &P[0], RTE_IPV4(10, 77, 0, 3), 1);
	host_up(&H[1], &P[1], RTE_IPV4(10, 77, 0, 2), 2);
	now = 1000;
	if (et_rdmacm_listen(H[1].cm, ET_RDMA_PS_TCP, PORT, NULL) ||
	    et_rdmacm_listen(H[0].cm, ET_RDMA_PS_TCP, 18515, NULL))
		abort();
	while (k < size) {
		uint8_t op = data[k++];

		if (op % 8 < 4) {
			uint32_t len = k < size ? data[k++] + 1u : 0;

			len = len > size - k ? (uint32_t)(size - k) : len;
			inject(op & 1, op, data + k, len);
			k += len;
		} else if (op % 8 == 4) {
			advance((k < size ? data[k++] : 1) * 1000000ull);
		} else if (op % 8 == 5) {
			struct et_rdmacm_conn_param p = {.psn = 0x1000, .mtu = 1024, .retry_count = 6,
							 .pdata = "hi", .pdata_len = 2};
			struct et_qp *qp = qp_for(&H[0], H[1].nic.ip, 1024);
			struct et_rdmacm_id *id;
			int err;

			if (qp == NULL)
				continue;
			id = et_rdmacm_connect(H[0].cm, H[1].nic.ip, op & 0x80 ? PORT + 1 : PORT, qp,
					       &p, NULL, now, &err);
			if (id)
				hold(&H[0], id, qp);
			else
				et_nic_qp_destroy(&H[0].nic, qp);
		} else if (k + 1 < size) {
			act(&H[data[k] >> 7], data[k], data[k + 1]);
			k += 2;
		}
		step();
	}
	/* every frame for QP 1 counted once by the agent */
	for (int i = 0; i < 2; i++) {
		const struct et_rdmacm_stats *st = et_rdmacm_stats(H[i].cm);

		if (H[i].nic.st.rx_gsi != st->rx_mads + st->rx_bad_opcode + st->rx_bad_qkey)
			abort();
	}
	/* all let go, time on: nothing left for either agent */
	for (int i = 0; i < 2; i++)
		while (H[i].n)
			let_go(&H[i], 0);
	for (int round = 0; round < 64; round++)
		advance(1000000000ull);
	for (int i = 0; i < 2; i++)
		if (et_rdmacm_next_event(H[i].cm) != UINT64_MAX)
			abort();
	for (int i = 0; i < 2; i++) {
		et_rdmacm_destroy(H[i].cm, now);
		et_nic_free(&H[i].nic);
		et_mr_table_free(&H[i].mrs);
		et_cq_free(&H[i].scq);
		et_cq_free(&H[i].rcq);
	}
	et_port_close(&P[0]);
	et_port_close(&P[1]);
	if (rte_mempool_in_use_count(pool) != 0)
		abort();
	return 0;
}
