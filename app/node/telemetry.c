/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's counters for rte_telemetry: /ethereal/node/port (the
 * NIC, ARP) and /ethereal/node/qps (per QP), read from telemetry's own
 * thread: plain counters, read racily.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_telemetry.h>

#include "et_tel.h"
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
	et_tel_add_counters(d, &et_nic_ctrs, st, "");
	rte_tel_data_add_dict_u64(d, "rx_bad", bad);
	if (tel_nic->arp)
		et_tel_add_counters(d, &et_arp_ctrs, &tel_nic->arp->st, "arp_");
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
		et_tel_add_counters(c, &et_qp_ctrs, et_qp_stats(q), "");
		rte_tel_data_add_dict_u64(c, "cwnd", et_dctcp_cwnd(et_qp_dctcp(q)));
		snprintf(alpha, sizeof(alpha), "%.4f", et_qp_dctcp(q)->alpha);
		rte_tel_data_add_dict_string(c, "alpha", alpha);
		rte_tel_data_add_dict_u64(c, "path_id", et_qp_path_id(q));
		rte_tel_data_add_dict_u64(c, "outstanding", et_qp_sq_outstanding(q));
		snprintf(name, sizeof(name), "qp%u", et_qp_qpn(q));
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
