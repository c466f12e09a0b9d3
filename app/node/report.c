/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's results: the table, the JSON (--json) and our buffer
 * (--save).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "et_cli.h"
#include "et_json.h"
#include "node.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static json_t *
qp_counters(const struct node *n)
{
	struct et_qp_stats sum = {0};
	json_t *c = json_object();

	for (uint32_t i = 0; i < n->o.qps; i++)
		et_ctr_add(&et_qp_ctrs, &sum, et_qp_stats(n->qp[i]));
	et_json_set_counters(c, &et_qp_ctrs, &sum);
	return c;
}

/* A latency column: "-" where the mode measures none. */
static const char *
lat_us(const struct node *n, uint64_t ns, char *buf, size_t cap)
{
	if (n->lat == NULL || n->o.server) /* a server answers, it times nothing */
		return "-";
	snprintf(buf, cap, "%.2f", ns / 1e3);
	return buf;
}

/* The table: like perftest's, Gbit/s of payload and messages per second
 * (its MsgRate), and packets per second beside them; latency only where
 * the mode measures it, from a request's post to its completion: a round
 * trip (ib_write_lat prints half of it, ib_send_lat too). */
void
report_results(struct node *n)
{
	const struct opts *o = &n->o;
	double s = (double)(n->t1 - n->t0) / 1e9;
	/* a server counts the payload placed here; the rest, whole messages */
	uint64_t bytes = o->server && o->mode != MODE_PINGPONG ? placed_bytes(n) : n->done * o->size;
	uint64_t pkts = o->server ? n->nic.st.rx_pkts : n->nic.st.tx_pkts;
	uint64_t p50 = 0, p99 = 0, p999 = 0, retx = 0, tmo = 0;
	struct rte_eth_stats es;
	char l50[24], l99[24], l999[24];
	double gbps;

	for (uint32_t i = 0; i < o->qps; i++) {
		retx += et_qp_stats(n->qp[i])->retransmits;
		tmo += et_qp_stats(n->qp[i])->timeouts;
	}
	gbps = bytes * 8 / s / 1e9;
	if (n->lat && n->done) {
		uint64_t nl = n->done < o->iters ? n->done : o->iters;

		qsort(n->lat, nl, sizeof(*n->lat), cmp_u64);
		p50 = n->lat[nl / 2];
		p99 = n->lat[nl * 99 / 100];
		p999 = n->lat[nl * 999 / 1000];
	}
	printf("%-10s %10s %6s %12s %10s %10s %10s %10s %10s %10s %10s %8s\n", "mode", "size",
	       "qps", "messages", "seconds", "Gbit/s", "Mmsg/s", "Mpps", "p50_us", "p99_us",
	       "p99.9_us", "verify");
	printf("%-10s %10u %6u %12" PRIu64 " %10.3f %10.2f %10.4f %10.3f %10s %10s %10s %8s\n",
	       mode_names[o->mode], o->size, o->qps, n->done, s, gbps, n->done / s / 1e6,
	       pkts / s / 1e6, lat_us(n, p50, l50, sizeof(l50)), lat_us(n, p99, l99, sizeof(l99)),
	       lat_us(n, p999, l999, sizeof(l999)), !o->verify ? "off" : n->bad ? "FAILED" : "ok");
	if (n->lat && !o->server)
		printf("latency: from post to completion, a round trip (ib_write_lat prints half)\n");
	printf("retransmits %" PRIu64 ", timeouts %" PRIu64 ", rx bad ICRC %" PRIu64
	       ", rx unknown QPN %" PRIu64 ", rx for another IP %" PRIu64 ", rx not RoCE %" PRIu64
	       "\n", retx, tmo, n->nic.st.rx_bad[ET_WIRE_E_ICRC], n->nic.st.rx_unknown_qpn,
	       n->nic.st.rx_not_ours,
	       n->nic.st.rx_bad[ET_WIRE_E_NOT_IPV4] + n->nic.st.rx_bad[ET_WIRE_E_NOT_UDP] +
		       n->nic.st.rx_bad[ET_WIRE_E_NOT_ROCE]);
	if (o->rx_loss_ppm || o->faults.loss_ppm || o->faults.ge_enter_ppm || o->faults.corrupt_ppm ||
	    o->faults.dup_ppm || o->faults.flap_period_ns) {
		const struct et_egress_stats *e = &n->nic.eg.st;

		printf("faults: sent lost %" PRIu64 ", corrupted %" PRIu64 ", duplicated %" PRIu64
		       "; received dropped %" PRIu64 "\n",
		       e->loss_drops + e->burst_drops + e->flap_drops, e->corrupted, e->duplicated,
		       n->nic.st.rx_fault_drops);
	}
	if (rte_eth_stats_get(n->port.eth_port, &es) == 0)
		printf("port: rx %" PRIu64 " (missed %" PRIu64 ", errors %" PRIu64 ", no mbuf %" PRIu64
		       "), tx %" PRIu64 " (errors %" PRIu64 ")\n",
		       es.ipackets, es.imissed, es.ierrors, es.rx_nombuf, es.opackets, es.oerrors);
	if (o->json) {
		json_t *j = json_object();

		json_object_set_new(j, "mode", json_string(mode_names[o->mode]));
		json_object_set_new(j, "role", json_string(o->server ? "server" : "client"));
		et_json_set_u64(j, "size", o->size);
		et_json_set_u64(j, "qps", o->qps);
		et_json_set_u64(j, "messages", n->done);
		json_object_set_new(j, "seconds", et_json_fixed(s, 6));
		json_object_set_new(j, "gbps", et_json_fixed(gbps, 3));
		json_object_set_new(j, "msg_rate_mps", et_json_fixed(n->done / s / 1e6, 4));
		json_object_set_new(j, "mpps", et_json_fixed(pkts / s / 1e6, 4));
		et_json_set_u64(j, "lat_p50_ns", p50);
		et_json_set_u64(j, "lat_p99_ns", p99);
		et_json_set_u64(j, "lat_p999_ns", p999);
		et_json_set_u64(j, "retransmits", retx);
		et_json_set_u64(j, "timeouts", tmo);
		json_object_set_new(j, "verified", et_json_verdict(o->verify, !n->bad));
		/* every QP counter, summed: what a retransmission followed */
		json_object_set_new(j, "qp_counters", qp_counters(n));
		json_object_set_new(j, "nic_counters", json_object());
		et_json_set_counters(json_object_get(j, "nic_counters"), &et_nic_ctrs, &n->nic.st);
		if (et_json_write(o->json, j))
			n->bad++;
	}
}

/* For a check from outside (tests/rxe compares it with the capture). */
int
save_buffer(const struct node *n)
{
	uint64_t len = (uint64_t)n->o.size * n->o.qps;
	FILE *f = fopen(n->o.save, "wb");
	bool ok = f != NULL && fwrite(n->buf, 1, len, f) == len;

	if (f != NULL && fclose(f) != 0)
		ok = false;
	if (!ok)
		et_cli_error("--save: cannot write %s: %s", n->o.save, strerror(errno));
	return ok ? 0 : -1;
}
