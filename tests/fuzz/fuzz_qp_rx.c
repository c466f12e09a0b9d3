/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the endpoint's receive path: any frame, parsed
 * without its checksums (so the fuzzer reaches the transport), handed to a
 * connected responder QP and to a requester QP with a WRITE outstanding.
 * Beyond "no crash": nothing outside the one registered window changes,
 * every frame the QPs answer with parses back, and no mbuf is lost.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fuzz_eal.h"
#include "transport/et_qp_priv.h" /* epsn, snd_una: PSNs that hit the window */
#include "wire/et_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM 65536
#define WIN_OFF 16384
#define WIN_LEN 8192

static struct rte_mempool *pool;
static uint8_t *mem, *snap;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pool = fuzz_eal_pool("256");
	mem = calloc(1, MEM);
	snap = malloc(MEM);
	if (!mem || !snap)
		abort();
	return 0;
}

static void
drain(struct et_qp *qp)
{
	struct rte_mbuf *m;
	struct et_roce_pkt p;

	for (int i = 0; i < 64 && et_qp_tx(qp, 1, &m, 1) == 1; i++) {
		if (et_roce_parse_mbuf(m, &p, 0) != 0)
			abort(); /* whatever we answer must be a valid frame */
		rte_pktmbuf_free(m);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	struct et_qp_attr a;
	struct et_qp *resp, *req;
	const struct et_mr *win, *local;
	struct et_roce_pkt p;

	if (et_mr_table_init(&mrs, 4) || et_cq_init(&scq, 64) || et_cq_init(&rcq, 64))
		abort();
	win = et_mr_reg(&mrs, mem + WIN_OFF, WIN_LEN,
			ET_ACCESS_REMOTE_WRITE | ET_ACCESS_LOCAL_WRITE);
	local = et_mr_reg(&mrs, mem, 4096, ET_ACCESS_LOCAL_WRITE);
	et_qp_attr_default(&a);
	a.qpn = 0x11;
	a.dest_qpn = 0x22;
	a.mtu = 1024;
	a.rq_psn = 100;
	a.sq_psn = 500;
	a.multipath = size && (data[0] & 1); /* both modes from one corpus */
	resp = et_qp_create(&a, &mrs, &scq, &rcq, pool);
	a.qpn = 0x12;
	req = et_qp_create(&a, &mrs, &scq, &rcq, pool);
	if (!resp || !req || !win || !local)
		abort();
	et_qp_ready(resp);
	et_qp_ready(req);
	{
		struct et_recv_wr rw = {.wr_id = 1, .addr = mem + WIN_OFF, .length = 1024,
					.lkey = win->key};
		struct et_send_wr wr = {.wr_id = 2, .opcode = ET_WR_RDMA_WRITE, .local_addr = mem,
					.length = 3000, .lkey = local->key, .remote_addr = 0x1000,
					.rkey = 7};

		et_qp_post_recv(resp, &rw);
		et_qp_post_send(req, &wr);
		drain(req); /* the WRITE is out: ACKs and NAKs now mean something */
	}
	memcpy(snap, mem, MEM);
	if (et_roce_parse(data, size, &p, ET_PARSE_NO_ICRC | ET_PARSE_NO_IPCSUM) == 0) {
		for (uint32_t psn = 0; psn < 2; psn++) {
			/* once as it came, once at the PSN each QP expects */
			struct et_roce_pkt q = p;

			et_qp_rx(resp, &q, 10);
			drain(resp);
			et_qp_rx(req, &q, 10);
			drain(req);
			q.h.psn = resp->epsn;
			et_qp_rx(resp, &q, 20);
			drain(resp);
			q.h.psn = req->snd_una;
			et_qp_rx(req, &q, 20);
			drain(req);
		}
	}
	if (memcmp(snap, mem, WIN_OFF) != 0 ||
	    memcmp(snap + WIN_OFF + WIN_LEN, mem + WIN_OFF + WIN_LEN, MEM - WIN_OFF - WIN_LEN) != 0)
		abort(); /* written outside the registered window */
	et_qp_timer(req, 1ull << 40);
	drain(req);
	et_qp_destroy(resp);
	et_qp_destroy(req);
	et_cq_free(&scq);
	et_cq_free(&rcq);
	et_mr_table_free(&mrs);
	if (rte_mempool_in_use_count(pool) != 0)
		abort(); /* an mbuf leaked */
	return 0;
}
