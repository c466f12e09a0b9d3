/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's results: the table, the JSON (--json) and our buffer
 * (--save).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
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

/* Each worker's share (--workers): what it completed, the frames its NIC
 * took and sent, what it handed to another, and its core's busy time per
 * packet (taken in, by a server; sent, by a client). */
static json_t *
worker_figures(const struct node *n)
{
	json_t *a = json_array();

	for (uint32_t k = 0; k < n->nics_open; k++) {
		const struct lane *l = &n->lane[k];
		json_t *w = json_object();

		et_json_set_u64(w, "messages", l->done);
		et_json_set_u64(w, "rx_pkts", l->nic.st.rx_pkts);
		et_json_set_u64(w, "tx_pkts", l->nic.st.tx_pkts);
		et_json_set_u64(w, "rx_steered", l->nic.st.rx_steered);
		uint64_t pkts = n->o.server ? l->nic.st.rx_pkts : l->nic.st.tx_pkts;

		/* what a packet cost the worker's core, idle polls left out */
		json_object_set_new(w, "busy_ns_per_pkt",
				    et_json_fixed(pkts ? (double)l->busy_cyc * 1e9 /
							 (double)rte_get_tsc_hz() / (double)pkts : 0, 1));
		json_array_append_new(a, w);
	}
	return a;
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

void
report_header(void)
{
	printf("%-10s %10s %6s %12s %10s %10s %10s %10s %10s %10s %10s %8s\n", "mode", "size",
	       "qps", "messages", "seconds", "Gbit/s", "Mmsg/s", "Mpps", "p50_us", "p99_us",
	       "p99.9_us", "verify");
}

/* One row: n->done messages of n->size bytes between n->t0 and n->t1 (a
 * server of WRITEs: the bytes placed, and n->done as finish.c counted). */
static void
row(struct node *n, struct row_figures *f)
{
	const struct opts *o = &n->o;
	char l50[24], l99[24], l999[24], size[16];

	f->s = (double)(n->t1 - n->t0) / 1e9;
	f->bytes = !o->server || !passive_server(o->mode) ? n->done * n->size
		   : o->mode == MODE_ATOMIC_BW ? atomics_served(n) * ET_ATOMIC_LEN
		   : is_rd(o->mode) ? read_bytes_served(n) : placed_bytes(n);
	f->pkts = nic_packets(n) - n->pkts0;
	f->gbps = f->s > 0 ? f->bytes * 8 / f->s / 1e9 : 0;
	f->p50 = f->p99 = f->p999 = 0;
	if (n->lat && n->done && (n->nlat || !times_rounds(o->mode) || !is_perftest(o))) {
		uint64_t nl = n->nlat ? n->nlat : n->done < o->iters ? n->done : o->iters;

		qsort(n->lat, nl, sizeof(*n->lat), cmp_u64);
		f->p50 = n->lat[nl / 2];
		f->p99 = n->lat[nl * 99 / 100];
		f->p999 = n->lat[nl * 999 / 1000];
	}
	if (o->all && o->server && o->mode == MODE_WRITE_BW)
		snprintf(size, sizeof(size), "%u-%u", ALL_MIN_SIZE, ALL_MAX_SIZE);
	else
		snprintf(size, sizeof(size), "%u", n->size);
	printf("%-10s %10s %6u %12" PRIu64 " %10.3f %10.2f %10.4f %10.3f %10s %10s %10s %8s\n",
	       mode_names[o->mode], size, o->qps, n->done, f->s, f->gbps,
	       f->s > 0 ? n->done / f->s / 1e6 : 0, f->s > 0 ? f->pkts / f->s / 1e6 : 0,
	       lat_us(n, f->p50, l50, sizeof(l50)), lat_us(n, f->p99, l99, sizeof(l99)),
	       lat_us(n, f->p999, l999, sizeof(l999)),
	       !o->verify ? "off" : n->bad ? "FAILED" : "ok");
	fflush(stdout);
	if (o->json && (n->rows != NULL || (n->rows = json_array()) != NULL)) {
		json_t *r = json_object();

		json_object_set_new(r, "size", json_string(size));
		et_json_set_u64(r, "messages", n->done);
		json_object_set_new(r, "seconds", et_json_fixed(f->s, 6));
		json_object_set_new(r, "gbps", et_json_fixed(f->gbps, 3));
		json_object_set_new(r, "msg_rate_mps",
				    et_json_fixed(f->s > 0 ? n->done / f->s / 1e6 : 0, 4));
		json_object_set_new(r, "mpps", et_json_fixed(f->s > 0 ? f->pkts / f->s / 1e6 : 0, 4));
		et_json_set_u64(r, "lat_p50_ns", f->p50);
		et_json_set_u64(r, "lat_p99_ns", f->p99);
		et_json_set_u64(r, "lat_p999_ns", f->p999);
		json_array_append_new(n->rows, r);
	}
}

void
report_row(struct node *n)
{
	row(n, &n->last_row);
}

/* The table: like perftest's, Gbit/s of payload and messages per second
 * (its MsgRate), and packets per second beside them; latency only where
 * the mode measures it, from a request's post to its completion: a round
 * trip (ib_write_lat prints half of it, ib_send_lat too).  In perftest's
 * dialect the rows are out already (one per size); here the rest. */
void
report_results(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t retx = 0, tmo = 0;
	struct rte_eth_stats es;
	struct row_figures f;
	struct et_nic_stats nst;
	struct et_egress_stats est;

	nic_totals(n, &nst, &est);
	for (uint32_t i = 0; i < o->qps; i++) {
		retx += et_qp_stats(n->qp[i])->retransmits;
		tmo += et_qp_stats(n->qp[i])->timeouts;
	}
	if (!is_perftest(o)) {
		report_header();
		row(n, &f);
	} else {
		f = n->last_row;
	}
	if (n->lat && !o->server && n->done)
		printf("latency: a round trip (ib_write_lat and ib_send_lat print half)\n");
	printf("retransmits %" PRIu64 ", timeouts %" PRIu64 ", rx bad ICRC %" PRIu64
	       ", rx unknown QPN %" PRIu64 ", rx for another IP %" PRIu64 ", rx not RoCE %" PRIu64
	       "\n", retx, tmo, nst.rx_bad[ET_WIRE_E_ICRC], nst.rx_unknown_qpn,
	       nst.rx_not_ours,
	       nst.rx_bad[ET_WIRE_E_NOT_IPV4] + nst.rx_bad[ET_WIRE_E_NOT_UDP] +
		       nst.rx_bad[ET_WIRE_E_NOT_ROCE]);
	if (o->rx_loss_ppm || o->faults.loss_ppm || o->faults.ge_enter_ppm || o->faults.corrupt_ppm ||
	    o->faults.dup_ppm || o->faults.flap_period_ns) {
		const struct et_egress_stats *e = &est;

		printf("faults: sent lost %" PRIu64 ", corrupted %" PRIu64 ", duplicated %" PRIu64
		       "; received dropped %" PRIu64 "\n",
		       e->loss_drops + e->burst_drops + e->flap_drops, e->corrupted, e->duplicated,
		       nst.rx_fault_drops);
	}
	if (rte_eth_stats_get(n->port.eth_port, &es) == 0)
		printf("port: rx %" PRIu64 " (missed %" PRIu64 ", errors %" PRIu64 ", no mbuf %" PRIu64
		       "), tx %" PRIu64 " (errors %" PRIu64 ")\n",
		       es.ipackets, es.imissed, es.ierrors, es.rx_nombuf, es.opackets, es.oerrors);
	if (o->json) {
		json_t *j = json_object();

		json_object_set_new(j, "mode", json_string(mode_names[o->mode]));
		json_object_set_new(j, "role", json_string(o->server ? "server" : "client"));
		et_json_set_u64(j, "size", n->size);
		et_json_set_u64(j, "qps", o->qps);
		et_json_set_u64(j, "messages", n->done);
		json_object_set_new(j, "seconds", et_json_fixed(f.s, 6));
		json_object_set_new(j, "gbps", et_json_fixed(f.gbps, 3));
		json_object_set_new(j, "msg_rate_mps", et_json_fixed(f.s > 0 ? n->done / f.s / 1e6 : 0, 4));
		json_object_set_new(j, "mpps", et_json_fixed(f.s > 0 ? f.pkts / f.s / 1e6 : 0, 4));
		et_json_set_u64(j, "lat_p50_ns", f.p50);
		et_json_set_u64(j, "lat_p99_ns", f.p99);
		et_json_set_u64(j, "lat_p999_ns", f.p999);
		et_json_set_u64(j, "retransmits", retx);
		et_json_set_u64(j, "timeouts", tmo);
		json_object_set_new(j, "verified", et_json_verdict(o->verify, !n->bad));
		/* the table's rows (the keys above are the last one's) */
		json_object_set_new(j, "rows", n->rows ? n->rows : json_array());
		n->rows = NULL;
		/* every QP counter, summed: what a retransmission followed */
		json_object_set_new(j, "qp_counters", qp_counters(n));
		json_object_set_new(j, "workers", worker_figures(n));
		json_object_set_new(j, "nic_counters", json_object());
		et_json_set_counters(json_object_get(j, "nic_counters"), &et_nic_ctrs, &nst);
		if (n->cm)
			cm_report(n, j);
		if (et_json_write(o->json, j))
			n->bad++;
	}
}

/* For a check from outside (tests/rxe compares it with the capture). */
int
save_buffer(const struct node *n)
{
	/* where the peer's messages land: perftest's latency tests write and
	 * send into the receive area after the send area */
	uint64_t off = is_perftest(&n->o) && is_lat(n->o.mode) ? n->stride : 0;
	uint64_t len = off ? n->stride
		     : is_perftest(&n->o) ? n->buf_len : (uint64_t)n->o.size * n->o.qps;
	FILE *f = fopen(n->o.save, "wb");
	bool ok = f != NULL && fwrite(n->buf + off, 1, len, f) == len;

	if (f != NULL && fclose(f) != 0)
		ok = false;
	if (!ok)
		et_cli_error("--save: cannot write %s: %s", n->o.save, strerror(errno));
	return ok ? 0 : -1;
}
