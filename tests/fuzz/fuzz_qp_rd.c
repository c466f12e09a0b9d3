/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the READ and atomic responder (issue 38): a run of
 * frames, each parsed without its checksums and handed to a responder QP
 * (either mode, by the first byte) at a PSN near the one it expects, so
 * that new requests, duplicates, requests ahead and the kept answers all
 * meet; every answer it sends is drained and parsed back.
 * Input: a mode byte, then records of [PSN offset: 1 byte][length: 2
 * bytes, big-endian][frame].
 * Beyond "no crash": only the atomic window changes (READs read, they
 * never write); a READ answer carries bytes of our memory's windows; no
 * mbuf is lost.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fuzz_eal.h"
#include "transport/et_qp_priv.h" /* epsn: PSNs that hit the window */
#include "wire/et_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM 65536
#define RD_OFF 8192   /* readable: [RD_OFF, RD_OFF + RD_LEN) */
#define RD_LEN 16384
#define AT_OFF 32768  /* atomics: [AT_OFF, AT_OFF + AT_LEN) */
#define AT_LEN 256

static struct rte_mempool *pool;
static uint8_t *mem, *snap;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pool = fuzz_eal_pool("256");
	mem = aligned_alloc(64, MEM);
	snap = malloc(MEM);
	if (!mem || !snap)
		abort();
	for (uint32_t i = 0; i < MEM; i++)
		mem[i] = (uint8_t)(i * 7 + 3);
	return 0;
}

/* Every answer parses back; a READ response's bytes are readable ones. */
static void
drain(struct et_qp *qp)
{
	struct rte_mbuf *m;
	struct et_roce_pkt p;

	for (int i = 0; i < 256 && et_qp_tx(qp, 1ull << 30, &m, 1) == 1; i++) {
		if (et_roce_parse_mbuf(m, &p, 0) != 0)
			abort(); /* whatever we answer must be a valid frame */
		if ((et_opcode_flags[p.h.opcode] & ET_OPF_READ_RESP) && p.payload_len &&
		    memmem(mem + RD_OFF, RD_LEN, p.payload, p.payload_len) == NULL &&
		    memmem(mem + AT_OFF, AT_LEN, p.payload, p.payload_len) == NULL)
			abort(); /* answered with bytes from outside the windows */
		rte_pktmbuf_free(m);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	struct et_qp_attr a;
	struct et_qp *resp;
	const struct et_mr *rd, *at;
	size_t off = 1;

	if (size < 1)
		return 0;
	if (et_mr_table_init(&mrs, 4) || et_cq_init(&scq, 64) || et_cq_init(&rcq, 64))
		abort();
	rd = et_mr_reg(&mrs, mem + RD_OFF, RD_LEN, ET_ACCESS_REMOTE_READ);
	at = et_mr_reg(&mrs, mem + AT_OFF, AT_LEN, ET_ACCESS_REMOTE_ATOMIC | ET_ACCESS_REMOTE_READ);
	et_qp_attr_default(&a);
	a.qpn = 0x11;
	a.dest_qpn = 0x22;
	a.mtu = 256;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4; /* small: its ring wraps, requests overrun it */
	a.max_msg_size = 8192;
	a.multipath = data[0] & 1;
	resp = et_qp_create(&a, &mrs, &scq, &rcq, pool);
	if (!resp || !rd || !at)
		abort();
	et_qp_ready(resp);
	memcpy(snap, mem, MEM);
	while (off + 3 <= size) {
		uint8_t back = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
		struct et_roce_pkt p;

		off += 3;
		if (len > size - off)
			len = size - off;
		if (et_roce_parse(data + off, len, &p, ET_PARSE_NO_ICRC | ET_PARSE_NO_IPCSUM) == 0) {
			/* at the PSN expected, or a little behind it: a duplicate */
			p.h.psn = et_psn_add(resp->epsn, (uint32_t)-(int32_t)(back % 8));
			/* the keys and addresses of our windows, most of the time:
			 * the address taken modulo the window's length */
			if (back & 0x80) {
				const struct et_mr *w = (back & 0x40) ? at : rd;

				p.h.reth_rkey = w->key;
				p.h.reth_va = (uintptr_t)w->addr + p.h.reth_va % w->len;
			}
			et_qp_rx(resp, &p, 10);
			drain(resp);
		}
		off += len;
	}
	if (memcmp(snap, mem, AT_OFF) != 0 ||
	    memcmp(snap + AT_OFF + AT_LEN, mem + AT_OFF + AT_LEN, MEM - AT_OFF - AT_LEN) != 0)
		abort(); /* written outside the atomic window */
	/* the atomic window: restored, for the next input to find it whole */
	memcpy(mem + AT_OFF, snap + AT_OFF, AT_LEN);
	et_qp_destroy(resp);
	et_cq_free(&scq);
	et_cq_free(&rcq);
	et_mr_table_free(&mrs);
	if (rte_mempool_in_use_count(pool) != 0)
		abort(); /* an mbuf leaked */
	return 0;
}
