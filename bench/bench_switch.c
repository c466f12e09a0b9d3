/* SPDX-License-Identifier: BSD-3-Clause
 * Switch forwarding rate on one core, against a bare ring-to-ring loop
 * measured in the same run on the same rings (this machine's limit).
 *
 * A leaf switch with a host port and an uplink, both net_ring ethdev ports.
 * RoCEv2 frames to a host behind another leaf enter on the host port and
 * leave on uplink 0, path ID swapped, ICRC fixed, TTL decremented.  Only the
 * cycles inside et_switch_poll() (or the bare loop) are counted; refilling
 * the input ring is not.
 */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "bench.h"
#include "base/et_csum.h"
#include "et_switch.h"
#include "wire/et_wire.h"

#define NB_FRAMES 2048
#define BURST 32

struct rig {
	struct et_switch sw;
	struct et_port host_end, up_end; /* the far ends of the two links */
	struct rte_mbuf *frames[NB_FRAMES];
};

static int
rig_init(struct rig *r, struct rte_mempool *mp, uint32_t payload, uint64_t rate_bps)
{
	static uint8_t data[4096];
	struct rte_ether_addr mac = {{0x02, 0, 0, 0, 0, 0x10}}, peer = {{0x02, 0, 0, 0, 0, 0x20}};
	struct et_link_model lm = {.rate_bps = rate_bps, .latency_ns = 0};
	struct et_sw_params p;
	struct et_port down, up;
	struct et_roce_hdr h;
	static int rigs;
	char hn[16], un[16];
	int i, err;

	/* ethdev and ring names must be new for every rig */
	snprintf(hn, sizeof(hn), "bsw%dh", rigs);
	snprintf(un, sizeof(un), "bsw%du", rigs++);
	memset(r, 0, sizeof(*r));
	et_sw_params_default(&p);
	p.queue_pkts = 4096;
	if (et_switch_init(&r->sw, "bench", &p, mp, (int)rte_socket_id()) ||
	    et_port_net_ring_pair(&down, &r->host_end, hn, 4096, (int)rte_socket_id(), mp) ||
	    et_port_net_ring_pair(&up, &r->up_end, un, 4096, (int)rte_socket_id(), mp) ||
	    et_switch_add_port(&r->sw, &down, ET_SW_DOWN, 0, &mac, &peer, &lm) != 0 ||
	    et_switch_add_port(&r->sw, &up, ET_SW_UP, 0, &mac, &peer, &lm) != 1 ||
	    et_switch_add_route(&r->sw, RTE_IPV4(10, 0, 0, 1), 32, 0))
		return -1;
	memset(&h, 0, sizeof(h));
	h.src_ip = RTE_IPV4(10, 0, 0, 1);
	h.dst_ip = RTE_IPV4(10, 0, 1, 1);
	h.ecn = ET_ECN_ECT0;
	h.ttl = 64;
	h.opcode = ET_OP_WRITE_MIDDLE;
	h.pkey = ET_PKEY_DEFAULT;
	h.dest_qp = 7;
	for (i = 0; i < NB_FRAMES; i++) {
		h.psn = (uint32_t)i;
		r->frames[i] = et_roce_build_mbuf(mp, &h, data, payload, &err);
		if (r->frames[i] == NULL)
			return -1;
	}
	return 0;
}

static void
rig_free(struct rig *r)
{
	struct rte_mbuf *m[BURST];
	uint16_t n;

	while ((n = et_port_rx(&r->up_end, m, BURST)) > 0)
		rte_pktmbuf_free_bulk(m, n);
	et_port_close(&r->host_end);
	et_port_close(&r->up_end);
	for (uint16_t i = 0; i < r->sw.n_ports; i++)
		et_port_close(&r->sw.ports[i].port);
	et_switch_free(&r->sw);
}

/* Frames back from the uplink's far end get TTL 64 again and re-enter. */
static void
recycle(struct rig *r, struct rte_mbuf **m, uint16_t n)
{
	uint16_t i, sent;

	for (i = 0; i < n; i++) {
		uint8_t *ip = rte_pktmbuf_mtod(m[i], uint8_t *) + ET_ETH_HLEN;

		et_ipv4_update_word(ip, 8, (uint16_t)(64 << 8 | ip[9]));
	}
	sent = et_port_tx(&r->host_end, m, n);
	if (sent < n)
		rte_pktmbuf_free_bulk(m + sent, n - sent);
}

/* Cycles per packet inside et_switch_poll(), over about a second. */
static double
run_switch(struct rig *r, uint64_t *pkts_out)
{
	struct rte_mbuf *m[BURST];
	uint64_t cycles = 0, pkts = 0, t0, hz = rte_get_tsc_hz(), start = rte_rdtsc();
	uint16_t n;
	int i;

	for (i = 0; i < NB_FRAMES; i += BURST)
		recycle(r, r->frames + i, BURST);
	while (rte_rdtsc() - start < hz) {
		uint64_t now = (rte_rdtsc() - start) * 1000000000ull / hz;
		uint64_t before = r->sw.ports[1].eg.st.tx_pkts;

		t0 = rte_rdtsc();
		et_switch_poll(&r->sw, now);
		cycles += rte_rdtsc() - t0;
		pkts += r->sw.ports[1].eg.st.tx_pkts - before;
		while ((n = et_port_rx(&r->up_end, m, BURST)) > 0)
			recycle(r, m, n);
	}
	*pkts_out = pkts;
	return pkts ? (double)cycles / pkts : 0;
}

/* The same rings, a loop that moves bursts from one port to the other. */
static double
run_bare(struct rig *r, uint64_t *pkts_out)
{
	struct et_port *in = &r->sw.ports[0].port, *out = &r->sw.ports[1].port;
	struct rte_mbuf *m[BURST];
	uint64_t cycles = 0, pkts = 0, t0, hz = rte_get_tsc_hz(), start = rte_rdtsc();
	uint16_t n, sent;

	while (rte_rdtsc() - start < hz) {
		t0 = rte_rdtsc();
		n = et_port_rx(in, m, BURST);
		sent = n ? et_port_tx(out, m, n) : 0;
		cycles += rte_rdtsc() - t0;
		if (sent < n)
			rte_pktmbuf_free_bulk(m + sent, n - sent);
		pkts += sent;
		while ((n = et_port_rx(&r->up_end, m, BURST)) > 0)
			recycle(r, m, n);
	}
	*pkts_out = pkts;
	return pkts ? (double)cycles / pkts : 0;
}

int
bench_switch(struct bench_out *o, struct rte_mempool *mp)
{
	/* WRITE MIDDLE frames of 62 and 1026 bytes (payloads are multiples of 4) */
	static const struct {
		const char *tag;
		uint32_t payload;
	} sizes[] = {{"64b", 4}, {"1kb", 968}};
	double ghz = rte_get_tsc_hz() / 1e9;
	char key[64];
	size_t s;

	for (s = 0; s < 2; s++) {
		struct rig r;
		uint64_t pkts;
		double cpp, bare_cpp;

		if (rig_init(&r, mp, sizes[s].payload, 0))
			return -1;
		cpp = run_switch(&r, &pkts);
		bare_cpp = run_bare(&r, &pkts);
		rig_free(&r);
		snprintf(key, sizeof(key), "switch_mpps_%s", sizes[s].tag);
		bench_num(o, key, cpp ? ghz * 1e3 / cpp : 0);
		snprintf(key, sizeof(key), "switch_cycles_per_pkt_%s", sizes[s].tag);
		bench_num(o, key, cpp);
		snprintf(key, sizeof(key), "bare_fwd_mpps_%s", sizes[s].tag);
		bench_num(o, key, bare_cpp ? ghz * 1e3 / bare_cpp : 0);
		snprintf(key, sizeof(key), "switch_vs_bare_%s", sizes[s].tag);
		bench_num(o, key, bare_cpp / cpp);

		/* the same with the link model on (400 Gbit/s, no latency) */
		if (rig_init(&r, mp, sizes[s].payload, 400000000000ull))
			return -1;
		cpp = run_switch(&r, &pkts);
		rig_free(&r);
		snprintf(key, sizeof(key), "switch_model_mpps_%s", sizes[s].tag);
		bench_num(o, key, cpp ? ghz * 1e3 / cpp : 0);
	}
	return 0;
}
