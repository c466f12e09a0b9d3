/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's counters for rte_telemetry: /ethereal/node/port (the
 * NIC, ARP) and /ethereal/node/qps (per QP), read from telemetry's own
 * thread: plain counters, read racily.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_telemetry.h>

#include "node.h"

static struct et_nic *tel_nic;
static struct et_qp **tel_qps;
static uint32_t tel_nqp;

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct et_nic_stats *st;
	uint64_t bad = 0;

	(void)cmd;
	(void)params;
	if (tel_nic == NULL)
		return -EAGAIN;
	st = &tel_nic->st;
	for (int e = 0; e < ET_WIRE_E_COUNT; e++)
		bad += st->rx_bad[e];
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_pkts", st->rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", st->rx_bytes);
	rte_tel_data_add_dict_u64(d, "rx_bad", bad);
	rte_tel_data_add_dict_u64(d, "rx_bad_icrc", st->rx_bad[ET_WIRE_E_ICRC]);
	rte_tel_data_add_dict_u64(d, "rx_not_ours", st->rx_not_ours);
	rte_tel_data_add_dict_u64(d, "rx_unknown_qpn", st->rx_unknown_qpn);
	rte_tel_data_add_dict_u64(d, "pause_rx", st->pause_rx);
	rte_tel_data_add_dict_u64(d, "tx_pkts", st->tx_pkts);
	rte_tel_data_add_dict_u64(d, "timer_fires", st->timer_fires);
	rte_tel_data_add_dict_u64(d, "rx_arp", st->rx_arp);
	rte_tel_data_add_dict_u64(d, "ctrl_tx_drop", st->ctrl_tx_drop);
	rte_tel_data_add_dict_u64(d, "rx_fault_drops", st->rx_fault_drops);
	if (tel_nic->arp) {
		const struct et_arp_stats *as = &tel_nic->arp->st;

		rte_tel_data_add_dict_u64(d, "arp_rx_request", as->rx_request);
		rte_tel_data_add_dict_u64(d, "arp_rx_reply", as->rx_reply);
		rte_tel_data_add_dict_u64(d, "arp_rx_bad", as->rx_bad);
		rte_tel_data_add_dict_u64(d, "arp_tx_reply", as->tx_reply);
		rte_tel_data_add_dict_u64(d, "arp_tx_request", as->tx_request);
		rte_tel_data_add_dict_u64(d, "arp_tx_rate_limited", as->tx_rate_limited);
	}
	rte_tel_data_add_dict_u64(d, "qps", tel_nqp);
	return 0;
}

static int
tel_qps_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < tel_nqp; i++) {
		const struct et_qp *q = tel_qps[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[16], alpha[16];

		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "tx_pkts", q->st.tx_pkts);
		rte_tel_data_add_dict_u64(c, "tx_bytes", q->st.tx_bytes);
		rte_tel_data_add_dict_u64(c, "rx_pkts", q->st.rx_pkts);
		rte_tel_data_add_dict_u64(c, "rx_bytes", q->st.rx_bytes);
		rte_tel_data_add_dict_u64(c, "retransmits", q->st.retransmits);
		rte_tel_data_add_dict_u64(c, "timeouts", q->st.timeouts);
		rte_tel_data_add_dict_u64(c, "naks_rx", q->st.naks_rx);
		rte_tel_data_add_dict_u64(c, "naks_tx", q->st.naks_tx);
		rte_tel_data_add_dict_u64(c, "cnps_rx", q->st.cnps_rx);
		rte_tel_data_add_dict_u64(c, "cnps_tx", q->st.cnps_tx);
		rte_tel_data_add_dict_u64(c, "cwnd", et_dctcp_cwnd(&q->cc));
		snprintf(alpha, sizeof(alpha), "%.4f", q->cc.alpha);
		rte_tel_data_add_dict_string(c, "alpha", alpha);
		rte_tel_data_add_dict_u64(c, "path_id", q->path_id);
		rte_tel_data_add_dict_u64(c, "outstanding", et_qp_sq_outstanding(q));
		snprintf(name, sizeof(name), "qp%u", q->a.qpn);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

void
telemetry_register(void)
{
	rte_telemetry_register_cmd("/ethereal/node/port", tel_port,
				   "The host NIC's counters (rx by reason, tx, pauses, timers)");
	rte_telemetry_register_cmd("/ethereal/node/qps", tel_qps_cb,
				   "Per-QP counters: packets, bytes, retransmits, timeouts, NAKs, CNPs, cwnd, alpha, path ID");
}

void
telemetry_show_nic(struct et_nic *nic)
{
	tel_nic = nic;
}

void
telemetry_show_qps(struct et_qp **qps, uint32_t n)
{
	tel_qps = qps;
	tel_nqp = n;
}
