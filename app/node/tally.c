/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's tally: what the run moved (placed, read, executed, the
 * NIC's packets) and whether it landed right (--verify).
 */
#include <inttypes.h>
#include <string.h>

#include "et_cli.h"
#include "node.h"

/* What the client wrote (or sent, or read from the server) is all here. */
void
check_written(struct node *n)
{
	uint64_t wrong = 0;

	for (uint32_t i = 0; i < n->o.qps; i++)
		for (uint64_t k = i * n->stride; k < i * n->stride + n->size; k++)
			wrong += n->buf[k] != test_pattern(k);
	if (wrong)
		et_cli_error("--verify: %" PRIu64 " bytes of our memory differ from %s", wrong,
			     is_rd(n->o.mode) ? "what the server holds" : "what the client wrote");
	n->bad += wrong != 0;
}

/* atomic_bw's server: each QP's counter, which started at 0, holds one for
 * every FETCH & ADD of 1 executed on it, no more. */
static void
check_counters(struct node *n)
{
	for (uint32_t i = 0; i < n->o.qps; i++) {
		uint64_t v, ran = et_qp_stats(n->qp[i])->atomics_rx;

		memcpy(&v, n->buf + (uint64_t)i * n->o.size, sizeof(v));
		if (v != ran) {
			et_cli_error("--verify: QP %u's counter is %" PRIu64 " after %" PRIu64
				     " FETCH & ADDs of 1", i, v, ran);
			n->bad++;
		}
	}
}

void
check_server_memory(struct node *n)
{
	if (n->o.mode == MODE_ATOMIC_BW)
		check_counters(n);
	else if (!is_rd(n->o.mode) && n->o.mode != MODE_PINGPONG)
		check_written(n);
}

/* The payload the peer placed through a lane's QPs. */
uint64_t
lane_placed_bytes(const struct lane *l)
{
	const struct node *n = l->n;
	uint64_t bytes = 0;

	for (uint32_t i = l->k; i < n->o.qps; i += n->o.workers)
		bytes += et_qp_stats(n->qp[i])->rx_bytes;
	return bytes;
}

/* The payload the peer placed in our memory, all QPs. */
uint64_t
placed_bytes(const struct node *n)
{
	uint64_t bytes = 0;

	for (uint32_t k = 0; k < n->nics_open; k++)
		bytes += lane_placed_bytes(&n->lane[k]);
	return bytes;
}

uint64_t
read_bytes_served(const struct node *n)
{
	uint64_t bytes = 0;

	for (uint32_t i = 0; n->qp[0] && i < n->o.qps; i++)
		bytes += et_qp_stats(n->qp[i])->read_req_bytes;
	return bytes;
}

uint64_t
atomics_served(const struct node *n)
{
	uint64_t count = 0;

	for (uint32_t i = 0; n->qp[0] && i < n->o.qps; i++)
		count += et_qp_stats(n->qp[i])->atomics_rx;
	return count;
}

void
nic_totals(const struct node *n, struct et_nic_stats *st, struct et_egress_stats *eg)
{
	memset(st, 0, sizeof(*st));
	memset(eg, 0, sizeof(*eg));
	for (uint32_t k = 0; k < n->nics_open; k++) {
		et_ctr_add(&et_nic_ctrs, st, &n->lane[k].nic.st);
		et_ctr_add(&et_egress_ctrs, eg, &n->lane[k].nic.eg.st);
	}
}

uint64_t
nic_packets(const struct node *n)
{
	struct et_nic_stats st;
	struct et_egress_stats eg;

	nic_totals(n, &st, &eg);
	/* the data's packets: by READ they go from the server to the client */
	return n->o.server != is_rd(n->o.mode) ? st.rx_pkts : st.tx_pkts;
}
