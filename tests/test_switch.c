/* SPDX-License-Identifier: BSD-3-Clause
 * The switch: source routing and ECMP over leaf-spine and fat-tree networks
 * of switch instances (net_ring ethdev ports and bare rings), ECN, shared
 * buffer, PFC, link failures, malformed frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "et_test.h"

#include <rte_mbuf.h>

#include "base/et_csum.h"
#include "sim/et_net.h"
#include "topo/et_path.h"
#include "wire/et_arp_frame.h"
#include "wire/et_pfc.h"
#include "wire/et_wire.h"

static struct rte_mempool *pool;
static uint8_t payload[4096];

static int
setup(void **state)
{
	pool = et_test_eal_pool("test_switch", 8191);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	return et_test_eal_done(pool);
}

static void
net_params(struct et_net_params *p, bool ethdev, enum et_sw_mode mode)
{
	memset(p, 0, sizeof(*p));
	et_sw_params_default(&p->sw);
	p->sw.mode = mode;
	p->sw.queue_pkts = 1024;
	p->ethdev = ethdev;
	p->ring_size = 1024;
}

/* A fat-tree of 2 pods, 2 ToRs, 2 aggregation switches of 2 cores each,
 * with compact routes, as the failure and lane tests use it. */
static void
small_fat_tree(struct et_net *n, struct et_topo *t, enum et_sw_mode mode, uint32_t hosts_per_tor,
	       uint32_t lanes)
{
	struct et_net_params p;

	net_params(&p, false, mode);
	p.sw.compact_routes = true;
	et_topo_fat_tree(t, 2, 2, 2, 2, hosts_per_tor, lanes);
	assert_int_equal(et_net_build(n, t, &p, pool, 0), 0);
}

/* A RoCEv2 frame of opcode op from host src to host dst with source port
 * sport. */
static struct rte_mbuf *
frame_op(const struct et_net *n, uint32_t src, uint32_t dst, uint16_t sport,
	 uint32_t len, uint8_t ecn, uint8_t op)
{
	struct et_roce_hdr h;
	struct rte_mbuf *m;
	int err;

	memset(&h, 0, sizeof(h));
	et_net_host_mac(src, &h.src_mac);
	et_net_tor_mac(n, src, &h.dst_mac);
	h.src_ip = et_topo_host_ip(&n->t, src);
	h.dst_ip = et_topo_host_ip(&n->t, dst);
	h.ecn = ecn;
	h.ttl = 64;
	h.udp_sport = sport;
	h.opcode = op;
	h.pkey = ET_PKEY_DEFAULT;
	h.dest_qp = 0x10 + dst;
	h.psn = src;
	h.reth_dma_len = len;
	m = et_roce_build_mbuf(pool, &h, payload, len, &err);
	assert_non_null(m);
	return m;
}

/* A RoCEv2 WRITE ONLY from host src to host dst with source port sport. */
static struct rte_mbuf *
frame(const struct et_net *n, uint32_t src, uint32_t dst, uint16_t sport,
      uint32_t len, uint8_t ecn)
{
	return frame_op(n, src, dst, sport, len, ecn, ET_OP_WRITE_ONLY);
}

static void
inject(struct et_net *n, uint32_t host, struct rte_mbuf *m)
{
	assert_int_equal(et_port_tx(&n->host_port[host], &m, 1), 1);
}

/* Poll in virtual time until nothing is left to do. */
static uint64_t
drain(struct et_net *n, uint64_t now)
{
	for (int guard = 0; guard < 1000000; guard++) {
		uint64_t next;

		if (et_net_poll(n, now))
			continue;
		next = et_net_next_event(n, now);
		if (next == UINT64_MAX)
			return now;
		now = next > now ? next : now + 1;
	}
	fail_msg("network does not settle");
	return now;
}

static uint16_t
receive(struct et_net *n, uint32_t host, struct rte_mbuf **m, uint16_t max)
{
	return et_port_rx(&n->host_port[host], m, max);
}

/* tx packet counters of every switch port, flattened */
static void
snapshot(const struct et_net *n, uint64_t *c)
{
	for (uint32_t s = 0; s < n->n_sw; s++)
		for (uint16_t p = 0; p < ET_SW_MAX_PORTS; p++)
			c[s * ET_SW_MAX_PORTS + p] =
				p < n->sw[s].n_ports ? n->sw[s].ports[p].eg.st.tx_pkts : 0;
}

/* Exactly the switch hops of walk[] carried one packet since before[]. */
static void
assert_links(struct et_net *n, const uint64_t *before, const struct et_hop *walk, int nh)
{
	static uint64_t after[64 * ET_SW_MAX_PORTS];
	uint32_t moved = 0;

	snapshot(n, after);
	for (int k = 1; k < nh; k++) { /* hop 0 leaves a host, not a switch */
		int port = et_net_port_to(n, walk[k].from, walk[k].to, walk[k].lane);
		uint32_t s = n->first[walk[k].from.tier] + walk[k].from.index;

		assert_true(port >= 0);
		if (after[s * ET_SW_MAX_PORTS + port] - before[s * ET_SW_MAX_PORTS + port] != 1)
			fail_msg("hop %d: %s %u -> %s %u lane %u (port %d) carried nothing", k,
				 et_tier_name(&n->t, walk[k].from.tier), walk[k].from.index,
				 et_tier_name(&n->t, walk[k].to.tier), walk[k].to.index,
				 walk[k].lane, port);
	}
	for (uint32_t i = 0; i < n->n_sw * ET_SW_MAX_PORTS; i++)
		moved += (uint32_t)(after[i] - before[i]);
	assert_int_equal(moved, nh - 1);
}

/* Send src->dst on path id; check the route, the swaps, the frame; return
 * the ID the receiver saw. */
static uint16_t
send_and_check(struct et_net *n, uint32_t src, uint32_t dst, uint16_t id)
{
	static uint64_t before[64 * ET_SW_MAX_PORTS];
	struct et_hop walk[ET_PATH_MAX_HOPS];
	struct rte_mbuf *m;
	struct et_roce_pkt p;
	struct rte_ether_addr tor_mac, host_mac;
	int nh = et_path_walk(&n->t, src, dst, id, walk);
	const uint8_t *ip;

	assert_true(nh > 0);
	snapshot(n, before);
	inject(n, src, frame(n, src, dst, id, 100, ET_ECN_ECT0));
	drain(n, 0);
	if (receive(n, dst, &m, 1) != 1) {
		for (uint32_t s = 0; s < n->n_sw; s++)
			for (uint16_t k = 0; k < n->sw[s].n_ports; k++)
				for (int d = 0; d < ET_SW_DROP_COUNT; d++)
					if (n->sw[s].ports[k].st.drops[d])
						print_message("switch %u port %u: %s %lu\n", s, k,
							      et_sw_drop_name(d),
							      n->sw[s].ports[k].st.drops[d]);
		fail_msg("%u -> %u on path %04x: not delivered", src, dst, id);
	}
	assert_int_equal(et_roce_parse_mbuf(m, &p, 0), 0); /* ICRC and IP csum */
	assert_int_equal(p.h.udp_sport, walk[nh - 1].id);
	assert_int_equal(p.h.ttl, 64 - (nh - 1));
	ip = rte_pktmbuf_mtod(m, const uint8_t *) + ET_ETH_HLEN;
	assert_int_equal(et_csum_sum(ip, 20), 0xffff); /* checked from scratch */
	et_net_tor_mac(n, dst, &tor_mac);
	et_net_host_mac(dst, &host_mac);
	assert_memory_equal(&p.h.src_mac, &tor_mac, 6);
	assert_memory_equal(&p.h.dst_mac, &host_mac, 6);
	assert_links(n, before, walk, nh);
	rte_pktmbuf_free(m);
	assert_int_equal(receive(n, dst, &m, 1), 0);
	return p.h.udp_sport;
}

static void
check_all_paths(struct et_net *n)
{
	uint32_t hosts = et_topo_hosts(&n->t);
	uint16_t ids[256];

	for (uint32_t s = 0; s < hosts; s++)
		for (uint32_t d = 0; d < hosts; d++) {
			uint32_t np;

			if (s == d)
				continue;
			np = et_path_enumerate(&n->t, s, d, ids, 256);
			for (uint32_t i = 0; i < np; i++) {
				uint16_t got = send_and_check(n, s, d, ids[i]);
				struct et_hop data[ET_PATH_MAX_HOPS], ack[ET_PATH_MAX_HOPS];
				int nd = et_path_walk(&n->t, s, d, ids[i], data);
				int na = et_path_walk(&n->t, d, s, et_path_echo(got), ack);

				/* the echoed ID brings the ACK back over the same links */
				assert_int_equal(na, nd);
				for (int k = 1; k < nd; k++) {
					assert_int_equal(ack[k].from.tier, data[nd - 1 - k].to.tier);
					assert_int_equal(ack[k].from.index, data[nd - 1 - k].to.index);
				}
				send_and_check(n, d, s, et_path_echo(got));
			}
		}
}

static void
test_leaf_spine_net_ring(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;

	net_params(&p, true, ET_SW_SOURCE_ROUTE);
	et_topo_leaf_spine(&t, 2, 2, 2, 1); /* the smoke fabric: 16 ethdev ports */
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	assert_int_equal(n.sw[0].ports[0].port.kind, ET_PORT_ETHDEV);
	check_all_paths(&n);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_leaf_spine_parallel_links(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;

	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	et_topo_leaf_spine(&t, 2, 2, 1, 2);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	check_all_paths(&n);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_fat_tree(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;

	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	et_topo_fat_tree(&t, 2, 2, 2, 2, 1, 1);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	check_all_paths(&n);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* 12 pods of 6 ToRs: 72 ToRs, past what a core could hold as a route a
 * ToR (64); each pod's ToRs are a few aligned blocks, a route each, and
 * every host is reached from host 0 across the cores (a 1,024-host
 * fat-tree of 128 ToRs could not be built before). */
static void
test_fat_tree_many_tors(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;
	char err[256];

	(void)state;
	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	p.sw.compact_routes = true;
	et_topo_fat_tree(&t, 12, 6, 1, 1, 1, 1);
	assert_int_equal(et_net_check(&t, err, sizeof(err)), 0);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	for (uint32_t d = 1; d < et_topo_hosts(&t); d++) {
		struct rte_mbuf *m;
		uint16_t id;

		assert_int_equal(et_path_enumerate(&t, 0, d, &id, 1), 1);
		inject(&n, 0, frame(&n, 0, d, id, 100, 0));
		drain(&n, 0);
		assert_int_equal(receive(&n, d, &m, 1), 1);
		rte_pktmbuf_free(m);
	}
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
	/* 64 pods of 3: 128 blocks, refused with why */
	et_topo_fat_tree(&t, 64, 3, 1, 1, 1, 1);
	assert_int_equal(et_net_check(&t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "128 routes"));
}

static void
test_ecmp_spreads_flows(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;
	struct rte_mbuf *m[64];
	uint64_t seed = 3, count[4] = {0}, total = 0, before[4];
	const int flows = 4000;

	net_params(&p, false, ET_SW_ECMP);
	et_topo_leaf_spine(&t, 2, 4, 1, 1);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	for (int f = 0; f < flows; f++) {
		inject(&n, 0, frame(&n, 0, 1, (uint16_t)et_test_rand(&seed), 64, 0));
		drain(&n, 0);
		assert_int_equal(receive(&n, 1, m, 64), 1);
		rte_pktmbuf_free(m[0]);
	}
	for (int u = 0; u < 4; u++) {
		count[u] = n.sw[0].ports[1 + u].eg.st.tx_pkts; /* port 0: the host */
		total += count[u];
	}
	assert_int_equal(total, flows);
	for (int u = 0; u < 4; u++)
		assert_true(count[u] > flows * 0.2 && count[u] < flows * 0.3);
	/* one flow stays on one path */
	for (int u = 0; u < 4; u++)
		before[u] = n.sw[0].ports[1 + u].eg.st.tx_pkts;
	for (int k = 0; k < 100; k++) {
		inject(&n, 0, frame(&n, 0, 1, 0xbeef, 64, 0));
		drain(&n, 0);
		assert_int_equal(receive(&n, 1, m, 64), 1);
		rte_pktmbuf_free(m[0]);
	}
	int used = 0;
	for (int u = 0; u < 4; u++)
		used += n.sw[0].ports[1 + u].eg.st.tx_pkts != before[u];
	assert_int_equal(used, 1);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* Hosts 0 and 1 flood host 2 through one ToR whose egress to host 2 runs
 * at 10 Gbit/s: the queue builds, ECN marks from K, drops at the dynamic
 * threshold of the shared buffer. */
static void
test_ecn_and_buffer(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;
	struct et_sw_port *out;
	struct rte_mbuf *m[512];
	uint32_t got = 0, marked_first = 0, k, i;
	const uint32_t pkt = 1000, each = 150;
	const uint32_t flen = (uint32_t)et_roce_frame_len(ET_OP_WRITE_ONLY, pkt);

	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	p.link.rate_bps = 10000000000ull;
	p.link.latency_ns = 500;
	p.sw.buffer_bytes = 200000;
	p.sw.ecn_k_bytes = 20000;
	et_topo_leaf_spine(&t, 1, 1, 3, 1);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	for (i = 0; i < each; i++) {
		inject(&n, 0, frame(&n, 0, 2, 0, pkt, ET_ECN_ECT0));
		inject(&n, 1, frame(&n, 1, 2, 0, pkt, ET_ECN_ECT0));
		et_net_poll(&n, 0);
	}
	drain(&n, 0);
	out = &n.sw[0].ports[2];
	while ((k = receive(&n, 2, m, 512)) > 0)
		for (i = 0; i < k; i++, got++) {
			struct et_roce_pkt pp;

			assert_int_equal(et_roce_parse_mbuf(m[i], &pp, 0), 0);
			if (pp.h.ecn == ET_ECN_CE && marked_first == 0)
				marked_first = got + 1;
			rte_pktmbuf_free(m[i]);
		}
	/* marks start once more than K bytes wait (the first one is on the wire) */
	assert_true(marked_first >= 20000 / flen && marked_first <= 20000 / flen + 3);
	assert_true(out->st.ecn_marks > 0);
	/* drops start when the queue reaches alpha x free buffer: ~half of it */
	assert_true(out->st.drops[ET_SW_DROP_BUFFER] > 0);
	assert_int_equal(got + out->st.drops[ET_SW_DROP_BUFFER], 2 * each);
	assert_true(out->eg.st.q_max_bytes <= 100000 + flen);
	assert_int_equal(n.sw[0].used, 0);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static uint32_t
count_pauses(struct et_net *n, uint32_t host, uint16_t *last_quanta)
{
	struct rte_mbuf *m[64];
	uint32_t pauses = 0, k, i;

	while ((k = receive(n, host, m, 64)) > 0)
		for (i = 0; i < k; i++) {
			const uint8_t *f = rte_pktmbuf_mtod(m[i], const uint8_t *);

			if (et_load16(f + 12) == 0x8808 && et_load16(f + 14) == 0x0101) {
				pauses++;
				*last_quanta = et_load16(f + 18 + 2 * ET_PFC_PRIO);
			}
			rte_pktmbuf_free(m[i]);
		}
	return pauses;
}

static void
test_pfc(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;
	struct rte_mbuf *m[512];
	uint16_t quanta = 1;
	uint32_t i, k, got = 0;

	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	p.link.rate_bps = 10000000000ull;
	p.sw.buffer_bytes = 200000;
	p.sw.pfc = true;
	et_topo_leaf_spine(&t, 1, 1, 3, 1);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	/* the same flood as above, well within the buffer: paused, not dropped */
	for (i = 0; i < 75; i++) {
		inject(&n, 0, frame(&n, 0, 2, 0, 1000, ET_ECN_ECT0));
		inject(&n, 1, frame(&n, 1, 2, 0, 1000, ET_ECN_ECT0));
		et_net_poll(&n, 0);
	}
	et_net_poll(&n, 0);
	assert_true(n.sw[0].ports[0].st.pause_tx >= 1);
	assert_true(n.sw[0].ports[1].st.pause_tx >= 1);
	uint64_t t_end = drain(&n, 0);
	for (i = 0; i < ET_SW_DROP_COUNT; i++)
		assert_int_equal(n.sw[0].ports[2].st.drops[i], 0);
	while ((k = receive(&n, 2, m, 512)) > 0) {
		got += k;
		rte_pktmbuf_free_bulk(m, k);
	}
	assert_int_equal(got, 150);
	/* XOFF first, XON (quanta 0) once drained */
	assert_true(count_pauses(&n, 0, &quanta) >= 2);
	assert_int_equal(quanta, 0);

	/* a PAUSE received on the port to host 2 holds that egress */
	struct rte_mbuf *pf = rte_pktmbuf_alloc(pool);
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(pf, 60);
	memset(f, 0, 60);
	et_store16(f + 12, 0x8808);
	et_store16(f + 14, 0x0101);
	et_store16(f + 16, 1u << ET_PFC_PRIO);
	et_store16(f + 18 + 2 * ET_PFC_PRIO, 1000); /* 1000 x 512 bit = 51.2 us */
	inject(&n, 2, pf);
	et_net_poll(&n, t_end);
	assert_int_equal(n.sw[0].ports[2].st.pause_rx, 1);
	inject(&n, 0, frame(&n, 0, 2, 0, 1000, ET_ECN_ECT0));
	et_net_poll(&n, t_end);
	et_net_poll(&n, t_end + 50000);
	assert_int_equal(receive(&n, 2, m, 1), 0);
	drain(&n, t_end + 52000);
	assert_int_equal(receive(&n, 2, m, 1), 1);
	rte_pktmbuf_free(m[0]);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* acks_first: ACKs and CNPs pass a paused egress ahead of the data,
 * outside the buffer and unmarked; the data waits for the PAUSE to end. */
static void
test_acks_first(void **state)
{
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;
	struct rte_mbuf *m[8];
	struct et_roce_pkt pp;
	uint8_t *f;

	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	p.link.rate_bps = 10000000000ull;
	p.sw.pfc = true;
	p.sw.acks_first = true;
	p.sw.ecn_k_bytes = 1;
	et_topo_leaf_spine(&t, 1, 1, 3, 1);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	/* host 2 pauses the switch's port to it: 51.2 us */
	struct rte_mbuf *pf = rte_pktmbuf_alloc(pool);
	f = (uint8_t *)rte_pktmbuf_append(pf, 60);
	memset(f, 0, 60);
	et_store16(f + 12, 0x8808);
	et_store16(f + 14, 0x0101);
	et_store16(f + 16, 1u << ET_PFC_PRIO);
	et_store16(f + 18 + 2 * ET_PFC_PRIO, 1000);
	inject(&n, 2, pf);
	et_net_poll(&n, 1);
	assert_int_equal(n.sw[0].ports[2].st.pause_rx, 1);
	inject(&n, 0, frame(&n, 0, 2, 0, 1000, ET_ECN_ECT0));
	inject(&n, 0, frame(&n, 0, 2, 0, 1000, ET_ECN_ECT0));
	inject(&n, 1, frame_op(&n, 1, 2, 0, 0, ET_ECN_ECT0, ET_OP_ACK));
	inject(&n, 1, frame_op(&n, 1, 2, 0, 0, ET_ECN_ECT0, ET_OP_CNP));
	et_net_poll(&n, 1);
	/* only the data holds buffer */
	assert_int_equal(n.sw[0].used, 2 * et_roce_frame_len(ET_OP_WRITE_ONLY, 1000));
	for (uint64_t now = 2; now < 40000; now += 1000)
		et_net_poll(&n, now);
	assert_int_equal(receive(&n, 2, m, 8), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(et_roce_parse_mbuf(m[i], &pp, 0), 0);
		assert_int_equal(pp.h.opcode, i == 0 ? ET_OP_ACK : ET_OP_CNP);
		assert_int_equal(pp.h.ecn, ET_ECN_ECT0); /* a queue past K marks no ACK */
	}
	rte_pktmbuf_free_bulk(m, 2);
	drain(&n, 52000);
	assert_int_equal(receive(&n, 2, m, 8), 2);
	rte_pktmbuf_free_bulk(m, 2);
	assert_int_equal(n.sw[0].used, 0);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* One frame src -> dst on source port id at now: 1 if it arrived. */
static uint32_t
send_from(struct et_net *n, uint64_t now, uint32_t src, uint32_t dst, uint16_t id)
{
	struct rte_mbuf *m;
	uint32_t k;

	inject(n, src, frame(n, src, dst, id, 64, 0));
	for (int i = 0; i < 10 && et_net_poll(n, now); i++)
		;
	k = receive(n, dst, &m, 1);
	if (k)
		rte_pktmbuf_free(m);
	return k;
}

static uint32_t
send_at(struct et_net *n, uint64_t now, uint16_t id)
{
	return send_from(n, now, 0, 1, id);
}

/* Two ToRs of one host each under two spines, source-routed. */
static void
two_tors(struct et_net *n)
{
	struct et_net_params p;
	struct et_topo t;

	net_params(&p, false, ET_SW_SOURCE_ROUTE);
	et_topo_leaf_spine(&t, 2, 2, 1, 1);
	assert_int_equal(et_net_build(n, &t, &p, pool, 0), 0);
}

static void
test_link_failure(void **state)
{
	const uint64_t ms = 1000000;
	struct et_net n;
	struct et_sw_port *up0, *up1;

	two_tors(&n);
	up0 = &n.sw[0].ports[1];
	up1 = &n.sw[0].ports[2];
	et_switch_fail(&n.sw[0], 1, 10 * ms, 190 * ms); /* 10 ms .. 200 ms */
	assert_int_equal(send_at(&n, 1 * ms, 0x0000), 1);
	/* failed, not yet detected: still chosen, and lost */
	assert_int_equal(send_at(&n, 20 * ms, 0x0000), 0);
	assert_int_equal(up0->eg.st.fail_drops, 1);
	assert_int_equal(send_at(&n, 109 * ms, 0x0000), 0);
	/* detected: routed around, on the next live uplink */
	assert_int_equal(send_at(&n, 111 * ms, 0x0000), 1);
	assert_int_equal(up0->st.reroutes, 1);
	assert_int_equal(up1->eg.st.tx_pkts, 1);
	/* ECMP-style traffic and uplink 1 unaffected */
	assert_int_equal(send_at(&n, 112 * ms, 0x0100), 1);
	/* restored at 200 ms, noticed at 300 ms */
	assert_int_equal(send_at(&n, 250 * ms, 0x0000), 1);
	assert_int_equal(up1->eg.st.tx_pkts, 3);
	assert_int_equal(send_at(&n, 301 * ms, 0x0000), 1);
	assert_int_equal(up1->eg.st.tx_pkts, 3);
	assert_int_equal(up0->eg.st.tx_pkts, 2);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* A port's link read down (a dead peer, a pulled cable): what is sent there
 * is dropped as link_down, and once the detection delay has passed the
 * switch routes around it, as for a failure; back up, it is used again
 * after the same delay.  A link never up (its peer not there yet) fails
 * nothing. */
static void
test_link_state(void **state)
{
	const uint64_t ms = 1000000;
	struct et_net n;
	struct et_sw_port *up0, *up1;

	(void)state;
	two_tors(&n);
	up0 = &n.sw[0].ports[1];
	up1 = &n.sw[0].ports[2];
	/* down before it was ever up: dropped, not failed */
	assert_false(et_switch_set_link(&n.sw[0], 1, false, 1 * ms));
	assert_int_equal(send_at(&n, 1 * ms, 0x0000), 0);
	assert_int_equal(up0->st.drops[ET_SW_DROP_LINK_DOWN], 1);
	assert_false(et_switch_set_link(&n.sw[0], 1, true, 2 * ms));
	assert_false(et_switch_set_link(&n.sw[0], 1, true, 3 * ms));
	assert_int_equal(send_at(&n, 3 * ms, 0x0000), 1);
	/* up, then down at 10 ms: a failure from then */
	assert_true(et_switch_set_link(&n.sw[0], 1, false, 10 * ms));
	assert_false(et_switch_set_link(&n.sw[0], 1, false, 11 * ms));
	assert_int_equal(send_at(&n, 20 * ms, 0x0000), 0);
	assert_int_equal(send_at(&n, 109 * ms, 0x0000), 0);
	assert_int_equal(up0->st.drops[ET_SW_DROP_LINK_DOWN], 3);
	assert_int_equal(up0->st.drops[ET_SW_DROP_NO_ROUTE] + up0->eg.st.fail_drops, 0);
	/* detected: routed around */
	assert_int_equal(send_at(&n, 111 * ms, 0x0000), 1);
	assert_int_equal(up0->st.reroutes, 1);
	assert_int_equal(up1->eg.st.tx_pkts, 1);
	/* back at 200 ms, used again from 300 ms */
	assert_true(et_switch_set_link(&n.sw[0], 1, true, 200 * ms));
	assert_int_equal(send_at(&n, 250 * ms, 0x0000), 1);
	assert_int_equal(up1->eg.st.tx_pkts, 2);
	assert_int_equal(send_at(&n, 301 * ms, 0x0000), 1);
	assert_int_equal(up0->eg.st.tx_pkts, 2);
	assert_int_equal(up0->st.drops[ET_SW_DROP_LINK_DOWN], 3);
	/* up at its first reading (its peer was there before the switch
	 * looked): seen all the same, so its death is a failure (a testbed's
	 * spine killed was once never routed around by the leaf that had
	 * found its uplink already up) */
	assert_false(et_switch_set_link(&n.sw[0], 2, true, 400 * ms));
	assert_true(up1->link_seen);
	assert_true(et_switch_set_link(&n.sw[0], 2, false, 410 * ms));
	/* a host's link (ToR 1's port 0, towards host 1) down and up again:
	 * used at once, for nothing routes around it (a host process that
	 * restarts would otherwise lose what comes in its first 100 ms, which
	 * UD does not send again) */
	assert_true(et_switch_set_link(&n.sw[0], 2, true, 420 * ms));
	assert_false(et_switch_set_link(&n.sw[1], 0, true, 500 * ms));
	assert_int_equal(send_at(&n, 521 * ms, 0x0000), 1);
	assert_true(et_switch_set_link(&n.sw[1], 0, false, 530 * ms));
	assert_int_equal(send_at(&n, 540 * ms, 0x0000), 0);
	assert_int_equal(n.sw[1].ports[0].st.drops[ET_SW_DROP_LINK_DOWN], 1);
	assert_int_equal(send_at(&n, 640 * ms, 0x0000), 0); /* detected: no route */
	assert_true(et_switch_set_link(&n.sw[1], 0, true, 700 * ms));
	assert_int_equal(send_at(&n, 701 * ms, 0x0000), 1);
	/* host 0's port, not read up yet: a frame from host 0 says it is, so
	 * the answer gets there (a loaded switch read a new program's link
	 * late and dropped the answer to its first datagram) */
	assert_false(et_switch_set_link(&n.sw[0], 0, false, 800 * ms));
	assert_int_equal(send_from(&n, 801 * ms, 1, 0, 0x0000), 0);
	assert_int_equal(n.sw[0].ports[0].st.drops[ET_SW_DROP_LINK_DOWN], 1);
	assert_int_equal(send_from(&n, 802 * ms, 0, 1, 0x0000), 1);
	assert_int_equal(send_from(&n, 803 * ms, 1, 0, 0x0000), 1);
	assert_true(n.sw[0].ports[0].link_seen);
	/* and once failed (its program gone for good), the first frame of a
	 * program there again is taken, not dropped as from a failed link */
	assert_true(et_switch_set_link(&n.sw[0], 0, false, 810 * ms));
	assert_int_equal(send_from(&n, 950 * ms, 1, 0, 0x0000), 0);
	assert_int_equal(send_from(&n, 960 * ms, 0, 1, 0x0000), 1);
	assert_int_equal(send_from(&n, 961 * ms, 1, 0, 0x0000), 1);
	assert_int_equal(n.sw[0].ports[0].st.drops[ET_SW_DROP_FAILED], 0);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* A link that fails away from the sender: after the detection delay the
 * far side's routes are withdrawn and the sender's ToR stops using it. */
static void
remote_failure(enum et_sw_mode mode, uint16_t id)
{
	const uint64_t ms = 1000000;
	struct et_net_params p;
	struct et_net n;
	struct et_topo t;
	uint64_t up0, up1;

	net_params(&p, false, mode);
	et_topo_leaf_spine(&t, 2, 2, 1, 1);
	assert_int_equal(et_net_build(&n, &t, &p, pool, 0), 0);
	/* spine 1 - ToR 1 dies at 10 ms; host 0 sends on through spine 1 */
	assert_int_equal(et_net_fail_uplink(&n, (struct et_node){ET_TIER_TOR, 1}, 1, 10 * ms), 0);
	assert_int_equal(et_net_fail_uplink(&n, (struct et_node){ET_TIER_TOR, 9}, 0, 0), -EINVAL);
	/* ECMP: find a source port that hashes onto uplink 1 */
	while (mode == ET_SW_ECMP && n.sw[0].ports[2].eg.st.tx_pkts == 0)
		assert_int_equal(send_at(&n, 1 * ms, ++id), 1);
	up0 = n.sw[0].ports[1].eg.st.tx_pkts;
	up1 = n.sw[0].ports[2].eg.st.tx_pkts;
	assert_int_equal(send_at(&n, 2 * ms, id), 1);
	assert_int_equal(send_at(&n, 50 * ms, id), 0);
	assert_int_equal(send_at(&n, 109 * ms, id), 0);
	assert_int_equal(send_at(&n, 111 * ms, id), 1);
	/* uplink 1 until the route was withdrawn, then uplink 0 */
	assert_int_equal(n.sw[0].ports[2].eg.st.tx_pkts, up1 + 3);
	assert_int_equal(n.sw[0].ports[1].eg.st.tx_pkts, up0 + 1);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_remote_failure_withdrawn(void **state)
{
	(void)state;
	remote_failure(ET_SW_SOURCE_ROUTE, 0x0100);
	remote_failure(ET_SW_ECMP, 0);
}

/* k = 4 fat-tree, one host per ToR: pod 0 holds ToRs (hosts) 0 and 1,
 * pod 1 ToRs 2 and 3.  The link ToR 3 - aggregation switch 3 (pod 1's
 * second) dies at 10 ms.  Host 0, in the other pod, sends to host 3 over
 * its ToR's uplink 1: through aggregation switch 1 and the cores 2 and 3,
 * which come down into pod 1 only through aggregation switch 3.  Once the
 * failure is known, ToR 0 must stop using uplink 1 for ToR 3, or the
 * traffic is lost until the run ends. */
static void
fat_tree_cross_pod_failure(enum et_sw_mode mode, uint16_t id)
{
	const uint64_t ms = 1000000;
	struct et_net n;
	struct et_topo t;
	struct et_sw_port *up0, *up1;
	uint64_t tx0, tx1;

	small_fat_tree(&n, &t, mode, 1, 1);
	up0 = &n.sw[0].ports[1];
	up1 = &n.sw[0].ports[2];
	assert_int_equal(et_net_fail_uplink(&n, (struct et_node){ET_TIER_TOR, 3}, 1, 10 * ms), 0);
	/* ECMP: a source port that ToR 0 hashes onto uplink 1 */
	while (mode == ET_SW_ECMP && up1->eg.st.tx_pkts == 0)
		assert_int_equal(send_from(&n, 1 * ms, 0, 3, ++id), 1);
	tx0 = up0->eg.st.tx_pkts;
	tx1 = up1->eg.st.tx_pkts;
	assert_int_equal(send_from(&n, 2 * ms, 0, 3, id), 1);
	/* failed, not yet known: lost */
	assert_int_equal(send_from(&n, 50 * ms, 0, 3, id), 0);
	/* known: ToR 0 goes through aggregation switch 0 instead */
	assert_int_equal(send_from(&n, 111 * ms, 0, 3, id), 1);
	assert_int_equal(send_from(&n, 112 * ms, 0, 3, id), 1);
	assert_int_equal(up1->eg.st.tx_pkts, tx1 + 2);
	assert_int_equal(up0->eg.st.tx_pkts, tx0 + 2);
	/* the in-pod ToR too; and other destinations keep uplink 1 */
	assert_int_equal(send_from(&n, 113 * ms, 2, 3, et_path_make(1, 0)), 1);
	assert_int_equal(send_from(&n, 114 * ms, 0, 2, id), 1);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_fat_tree_cross_pod_failure(void **state)
{
	(void)state;
	fat_tree_cross_pod_failure(ET_SW_SOURCE_ROUTE, et_path_make(1, 0));
	fat_tree_cross_pod_failure(ET_SW_ECMP, 0);
}

/* Two lanes between every two switches: each is an uplink, every path ID
 * takes the lanes it names, up and down. */
static void
test_fat_tree_lanes(void **state)
{
	struct et_net n;
	struct et_topo t;

	(void)state;
	small_fat_tree(&n, &t, ET_SW_SOURCE_ROUTE, 1, 2);
	assert_int_equal(n.sw[0].n_uplinks, 4);
	assert_int_equal(n.sw[n.first[ET_TIER_AGG]].n_uplinks, 4);
	check_all_paths(&n);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* One lane of two between ToR 3 and aggregation switch 3 dies: the other
 * lane still joins them, so once the aggregation switch knows, it comes
 * down on the live lane; nobody else need change. */
static void
test_fat_tree_lane_failure(void **state)
{
	const uint64_t ms = 1000000;
	/* ToR 0 uplink 2: aggregation switch 1, lane 0; its uplink 0: core 2,
	 * lane 0; down into pod 1 through aggregation switch 3, to ToR 3 on
	 * lane 2 % 2 = 0, the dead one */
	const uint16_t id = et_path_make(2, 0);
	struct et_net n;
	struct et_topo t;
	struct et_switch *agg3;

	(void)state;
	small_fat_tree(&n, &t, ET_SW_SOURCE_ROUTE, 1, 2);
	agg3 = et_net_switch(&n, ET_TIER_AGG, 3);
	assert_int_equal(et_net_fail_uplink(&n, (struct et_node){ET_TIER_TOR, 3}, 2, 10 * ms), 0);
	assert_int_equal(n.sw[0].n_withdrawn, 0);
	assert_int_equal(send_from(&n, 1 * ms, 0, 3, id), 1);
	assert_int_equal(send_from(&n, 50 * ms, 0, 3, id), 0);
	assert_int_equal(send_from(&n, 111 * ms, 0, 3, id), 1);
	/* lane 1 carried it */
	assert_int_equal(agg3->ports[et_net_port_to(&n, (struct et_node){ET_TIER_AGG, 3},
						    (struct et_node){ET_TIER_TOR, 3}, 1)]
				 .eg.st.tx_pkts, 1);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_fat_tree_compact_routes(void **state)
{
	struct et_net n;
	struct et_topo t;

	(void)state;
	small_fat_tree(&n, &t, ET_SW_SOURCE_ROUTE, 2, 1);
	assert_null(n.sw[0].lpm);
	check_all_paths(&n);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_malformed_frames(void **state)
{
	struct et_net n;
	struct et_sw_port *in;
	uint64_t seed = 9;
	struct rte_mbuf *m;
	uint8_t *f;

	two_tors(&n);
	in = &n.sw[0].ports[0];

	/* random garbage of every short length */
	for (uint32_t len = 0; len < 80; len++) {
		m = rte_pktmbuf_alloc(pool);
		f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
		for (uint32_t i = 0; i < len; i++)
			f[i] = (uint8_t)et_test_rand(&seed);
		if (len >= 14)
			et_store16(f + 12, 0x0800);
		inject(&n, 0, m);
		et_net_poll(&n, 0);
	}
	/* not IPv4 (IPv6; ARP has tests of its own) */
	m = frame(&n, 0, 1, 0, 0, 0);
	et_store16(rte_pktmbuf_mtod(m, uint8_t *) + 12, 0x86dd);
	inject(&n, 0, m);
	/* bad IP checksum */
	m = frame(&n, 0, 1, 0, 0, 0);
	rte_pktmbuf_mtod(m, uint8_t *)[14 + 10] ^= 1;
	inject(&n, 0, m);
	/* TTL 1 */
	m = frame(&n, 0, 1, 0, 0, 0);
	et_ipv4_update_word(rte_pktmbuf_mtod(m, uint8_t *) + 14, 8, 0x0111);
	inject(&n, 0, m);
	/* an uplink the switch lacks */
	inject(&n, 0, frame(&n, 0, 1, et_path_make(7, 0), 0, 0));
	drain(&n, 0);

	assert_int_equal(in->st.drops[ET_SW_DROP_NON_IP], 1);
	assert_int_equal(in->st.drops[ET_SW_DROP_IP_CSUM] > 0, 1);
	assert_int_equal(in->st.drops[ET_SW_DROP_TTL], 1);
	assert_int_equal(in->st.drops[ET_SW_DROP_BAD_UPLINK], 1);
	assert_true(in->st.drops[ET_SW_DROP_MALFORMED] > 40);
	uint64_t dropped = 0;
	for (int d = 0; d < ET_SW_DROP_COUNT; d++)
		dropped += in->st.drops[d];
	/* whatever was not dropped was forwarded, nothing vanished */
	uint64_t fwd = 0;
	for (int k = 0; k < 3; k++)
		fwd += n.sw[0].ports[k].eg.st.tx_pkts;
	assert_int_equal(dropped + fwd, in->st.rx_pkts);
	for (uint32_t h = 0; h < 2; h++)
		while (receive(&n, h, &m, 1))
			rte_pktmbuf_free(m);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* ---- hostile frames at the switch, as a table ---- */

enum verdict { PASSES, PASSES_BAD_ICRC };
#define KEEP_SPORT 0x10000 /* .sport: forwarded but not as RoCEv2 */

struct hostile {
	const char *what;
	void (*spoil)(struct rte_mbuf *m, uint8_t *ip);
	int drop;           /* the reason counted, or -1: forwarded */
	enum verdict rx;    /* when forwarded: how host 1 finds it */
	uint32_t sport;     /* when forwarded: KEEP_SPORT if not routed as RoCE */
};

static void
trim_to(struct rte_mbuf *m, uint32_t len)
{
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - len));
}

static void sp_eth_trunc(struct rte_mbuf *m, uint8_t *ip) { (void)ip; trim_to(m, 10); }
static void sp_ip_trunc(struct rte_mbuf *m, uint8_t *ip) { (void)ip; trim_to(m, ET_ETH_HLEN + 12); }
static void sp_ip_long(struct rte_mbuf *m, uint8_t *ip)
{
	(void)m;
	et_ipv4_update_word(ip, 2, (uint16_t)(et_load16(ip + 2) + 100));
}
static void sp_ip_short(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_ipv4_update_word(ip, 2, 12); }
static void sp_ihl(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_ipv4_update_word(ip, 0, 0x4300 | ip[1]); }
static void sp_ihl_beyond(struct rte_mbuf *m, uint8_t *ip)
{
	trim_to(m, ET_ETH_HLEN + 40);
	et_ipv4_update_word(ip, 2, 40);
	et_ipv4_update_word(ip, 0, 0x4f00 | ip[1]); /* 60-byte header in a 40-byte packet */
}
static void sp_version(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_ipv4_update_word(ip, 0, 0x6500 | ip[1]); }
static void sp_ip_csum(struct rte_mbuf *m, uint8_t *ip) { (void)m; ip[10] ^= 0x40; }
static void sp_ttl(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_ipv4_update_word(ip, 8, 0x0100 | ip[9]); }
static void sp_ttl0(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_ipv4_update_word(ip, 8, 0x0000 | ip[9]); }
static void sp_arp(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_store16(ip - 2, 0x0806); }
static void sp_ipv6(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_store16(ip - 2, 0x86dd); }
static void sp_vlan(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_store16(ip - 2, 0x8100); }
static void sp_uplink(struct rte_mbuf *m, uint8_t *ip)
{
	(void)m;
	et_roce_set_sport(ip, et_path_make(9, 0)); /* the leaf has two uplinks */
}
static void sp_oversize(struct rte_mbuf *m, uint8_t *ip)
{
	/* a chain of segments, as a PMD delivers a giant frame */
	(void)ip;
	while (rte_pktmbuf_pkt_len(m) <= 9216) {
		struct rte_mbuf *seg = rte_pktmbuf_alloc(pool);

		assert_non_null(seg);
		assert_non_null(rte_pktmbuf_append(seg, 4000));
		assert_int_equal(rte_pktmbuf_chain(m, seg), 0);
	}
}
static void sp_icrc(struct rte_mbuf *m, uint8_t *ip)
{
	rte_pktmbuf_mtod(m, uint8_t *)[rte_pktmbuf_pkt_len(m) - 1] ^= 1;
	(void)ip;
}
static void sp_payload(struct rte_mbuf *m, uint8_t *ip)
{
	(void)m;
	ip[20 + 8 + 12 + 16 + 5] ^= 0x80; /* a flipped payload bit, ICRC unchanged */
}
/* transport-level nonsense a switch must carry untouched: the endpoint judges it */
static void bth_set32(uint8_t *ip, uint32_t off, uint32_t v)
{
	uint8_t *b = ip + 20 + 8;

	b[off] = (uint8_t)(v >> 24);
	b[off + 1] = (uint8_t)(v >> 16);
	b[off + 2] = (uint8_t)(v >> 8);
	b[off + 3] = (uint8_t)v;
	et_icrc_fill(ip, et_load16(ip + 2));
}
static void sp_qpn(struct rte_mbuf *m, uint8_t *ip) { (void)m; bth_set32(ip, 4, 0x00abcdef); }
static void sp_psn(struct rte_mbuf *m, uint8_t *ip) { (void)m; bth_set32(ip, 8, 0x80ffffff); }
static void sp_reth(struct rte_mbuf *m, uint8_t *ip)
{
	(void)m;
	bth_set32(ip, 12, 0xffffffff); /* VA high word */
	bth_set32(ip, 20, 0xdeadbeef); /* rkey */
}
static void sp_fragment(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_ipv4_update_word(ip, 6, 0x2000); }
/* UDP 4791 cut to bytes of payload, its IP and UDP lengths saying so */
static void
udp_cut(struct rte_mbuf *m, uint8_t *ip, uint16_t bytes)
{
	trim_to(m, ET_ETH_HLEN + 20 + 8 + bytes);
	et_ipv4_update_word(ip, 2, (uint16_t)(20 + 8 + bytes));
	et_store16(ip + 20 + 4, (uint16_t)(8 + bytes));
}
static void sp_roce_6(struct rte_mbuf *m, uint8_t *ip) { udp_cut(m, ip, 6); }
static void sp_roce_0(struct rte_mbuf *m, uint8_t *ip) { udp_cut(m, ip, 0); }
static void sp_udp_trunc(struct rte_mbuf *m, uint8_t *ip)
{
	trim_to(m, ET_ETH_HLEN + 20 + 4); /* ports, no length */
	et_ipv4_update_word(ip, 2, 20 + 4);
}
static void sp_udp_long(struct rte_mbuf *m, uint8_t *ip)
{
	udp_cut(m, ip, 100);
	et_store16(ip + 20 + 4, 500); /* beyond the IP payload's 108 */
}
static void sp_udp_short(struct rte_mbuf *m, uint8_t *ip)
{
	(void)m;
	et_store16(ip + 20 + 4, (uint16_t)(et_load16(ip + 20 + 4) - 4)); /* below it */
}
static void sp_frag_udp_long(struct rte_mbuf *m, uint8_t *ip)
{
	sp_udp_long(m, ip);
	et_ipv4_update_word(ip, 6, 0x2000); /* a first fragment: the datagram goes on */
}
static void sp_not_roce(struct rte_mbuf *m, uint8_t *ip) { (void)m; et_store16(ip + 20 + 2, 4792); }
static void sp_padding(struct rte_mbuf *m, uint8_t *ip)
{
	(void)ip;
	memset(rte_pktmbuf_append(m, 18), 0, 18); /* Ethernet padding past the IP packet */
}

#define DROPS(w, f, why) {w, f, why, PASSES, 0}
#define CARRIES(w, f, rx, sport) {w, f, -1, rx, sport}

static const struct hostile hostile[] = {
	DROPS("truncated in Ethernet", sp_eth_trunc, ET_SW_DROP_MALFORMED),
	DROPS("truncated in IPv4", sp_ip_trunc, ET_SW_DROP_MALFORMED),
	DROPS("IP total length beyond the frame", sp_ip_long, ET_SW_DROP_MALFORMED),
	DROPS("IP total length below its header", sp_ip_short, ET_SW_DROP_MALFORMED),
	DROPS("IHL below 5", sp_ihl, ET_SW_DROP_MALFORMED),
	DROPS("IHL beyond the packet", sp_ihl_beyond, ET_SW_DROP_MALFORMED),
	DROPS("IP version 6 under EtherType IPv4", sp_version, ET_SW_DROP_MALFORMED),
	DROPS("bad IP checksum", sp_ip_csum, ET_SW_DROP_IP_CSUM),
	DROPS("TTL 1", sp_ttl, ET_SW_DROP_TTL),
	DROPS("TTL 0", sp_ttl0, ET_SW_DROP_TTL),
	DROPS("IPv4 under EtherType ARP: a malformed ARP", sp_arp, ET_SW_DROP_MALFORMED),
	DROPS("IPv6", sp_ipv6, ET_SW_DROP_NON_IP),
	DROPS("VLAN tag", sp_vlan, ET_SW_DROP_NON_IP),
	DROPS("path ID names a missing uplink", sp_uplink, ET_SW_DROP_BAD_UPLINK),
	DROPS("oversize frame (chained)", sp_oversize, ET_SW_DROP_OVERSIZE),
	/* every frame is forwarded as valid or dropped for one reason */
	DROPS("UDP 4791 with 6 bytes: no room for a BTH", sp_roce_6, ET_SW_DROP_MALFORMED),
	DROPS("UDP 4791 without payload", sp_roce_0, ET_SW_DROP_MALFORMED),
	DROPS("UDP header cut", sp_udp_trunc, ET_SW_DROP_MALFORMED),
	DROPS("UDP length beyond the IP payload", sp_udp_long, ET_SW_DROP_MALFORMED),
	DROPS("UDP length below the IP payload", sp_udp_short, ET_SW_DROP_MALFORMED),
	CARRIES("bad ICRC: carried, still bad", sp_icrc, PASSES_BAD_ICRC, 0),
	CARRIES("corrupt payload: carried, still bad", sp_payload, PASSES_BAD_ICRC, 0),
	CARRIES("unknown QPN: carried", sp_qpn, PASSES, 0),
	CARRIES("PSN far away: carried", sp_psn, PASSES, 0),
	CARRIES("RETH outside any region, wrong rkey: carried", sp_reth, PASSES, 0),
	CARRIES("IP fragment: carried as plain IP", sp_fragment, PASSES_BAD_ICRC, KEEP_SPORT),
	CARRIES("first fragment of a longer datagram: carried as plain IP", sp_frag_udp_long,
		PASSES_BAD_ICRC, KEEP_SPORT),
	CARRIES("UDP port 4792: carried as plain UDP", sp_not_roce, PASSES_BAD_ICRC, KEEP_SPORT),
	CARRIES("Ethernet padding: carried", sp_padding, PASSES, 0),
};

static void
test_hostile_frames(void **state)
{
	const uint16_t id = et_path_make(1, 0);
	struct et_net n;

	two_tors(&n);

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *h = &hostile[i];
		struct et_sw_port_stats before = n.sw[0].ports[0].st, *after = &n.sw[0].ports[0].st;
		struct rte_mbuf *m = frame(&n, 0, 1, id, 256, 0), *got;
		uint8_t sent[512], *ip = rte_pktmbuf_mtod(m, uint8_t *) + ET_ETH_HLEN;
		uint32_t sent_len, bth = ET_ETH_HLEN + 20 + 8;
		struct et_roce_pkt pkt;
		uint16_t n_got;

		h->spoil(m, ip);
		sent_len = rte_pktmbuf_data_len(m) < sizeof(sent) ? rte_pktmbuf_data_len(m) : 0;
		memcpy(sent, rte_pktmbuf_mtod(m, uint8_t *), sent_len);
		inject(&n, 0, m);
		drain(&n, 0);
		n_got = receive(&n, 1, &got, 1);
		for (int d = 0; d < ET_SW_DROP_COUNT; d++) {
			uint64_t want = before.drops[d] + (d == h->drop);

			if (after->drops[d] != want)
				fail_msg("%s: %s drops %" PRIu64 ", want %" PRIu64, h->what,
					 et_sw_drop_name(d), after->drops[d], want);
		}
		if (h->drop >= 0) {
			if (n_got)
				fail_msg("%s: dropped and delivered", h->what);
			continue;
		}
		if (n_got != 1)
			fail_msg("%s: not delivered", h->what);
		if (rte_pktmbuf_data_len(got) != sent_len)
			fail_msg("%s: length %u, sent %u", h->what, rte_pktmbuf_data_len(got), sent_len);
		/* the switch rewrote MACs, TTL, IP checksum and (RoCEv2 only) the
		 * source port and so the ICRC; from the UDP destination port to the
		 * ICRC, nothing */
		const uint8_t *g = rte_pktmbuf_mtod(got, const uint8_t *);
		uint32_t icrc = ET_ETH_HLEN + et_load16(sent + ET_ETH_HLEN + 2) - ET_ICRC_LEN;

		if (memcmp(g + bth - 6, sent + bth - 6, icrc - bth + 6) ||
		    memcmp(g + icrc + ET_ICRC_LEN, sent + icrc + ET_ICRC_LEN,
			   sent_len - icrc - ET_ICRC_LEN))
			fail_msg("%s: the switch changed the transport headers or payload", h->what);
		uint16_t sport = et_load16(g + bth - 8);
		uint16_t want_sport = id;

		if (h->sport != KEEP_SPORT) { /* swapped at every switch hop */
			struct et_hop walk[ET_PATH_MAX_HOPS];
			int nh = et_path_walk(&n.t, 0, 1, id, walk);

			want_sport = walk[nh - 1].id;
		}
		if (sport != want_sport)
			fail_msg("%s: source port %04x, want %04x", h->what, sport, want_sport);
		int rc = et_roce_parse_mbuf(got, &pkt, 0);

		if (h->rx == PASSES && rc != 0)
			fail_msg("%s: arrives unparseable (%d)", h->what, rc);
		if (h->rx == PASSES_BAD_ICRC && rc == 0)
			fail_msg("%s: the switch laundered a bad frame into a good one", h->what);
		rte_pktmbuf_free(got);
	}
	assert_int_equal(receive(&n, 1, &(struct rte_mbuf *){NULL}, 1), 0);
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* ---- ARP: the switch as its hosts' gateway ---- */

#define GW_IP 0x0a0000feu    /* 10.0.0.254: .254 of ToR 0's hosts, 10.0.0.x */
#define OTHER_IP 0x0a000009u /* 10.0.0.9: nobody the switch is */

/* An ARP frame as a kernel sends it (42 bytes, unpadded), written byte by
 * byte here rather than by the builder under test. */
static struct rte_mbuf *
arp_frame(uint16_t op, const struct rte_ether_addr *sha, uint32_t spa, uint32_t tpa)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *f = m ? (uint8_t *)rte_pktmbuf_append(m, 42) : NULL;

	if (f == NULL) {
		fail_msg("no mbuf");
		return NULL;
	}
	memset(f, 0xff, 6);
	memcpy(f + 6, sha, 6);
	f[12] = 0x08; f[13] = 0x06;
	f[14] = 0; f[15] = 1; f[16] = 0x08; f[17] = 0; f[18] = 6; f[19] = 4;
	f[20] = 0; f[21] = (uint8_t)op;
	memcpy(f + 22, sha, 6);
	et_store32(f + 28, spa);
	memset(f + 32, 0, 6);
	et_store32(f + 38, tpa);
	return m;
}

/* Inject at host 0 and run the network to idle at now; what came back to
 * host 0 (at most one frame, else a failure), or NULL. */
static struct rte_mbuf *
arp_exchange(struct et_net *n, struct rte_mbuf *m, uint64_t now)
{
	struct rte_mbuf *got[2];
	uint16_t k;

	inject(n, 0, m);
	drain(n, now);
	k = receive(n, 0, got, 2);
	assert_true(k <= 1);
	return k ? got[0] : NULL;
}

static void
test_arp_gateway(void **state)
{
	struct rte_ether_addr host;
	struct et_sw_port *port;
	struct rte_mbuf *m, *got;
	struct et_net n;
	const uint8_t *g;
	uint32_t host_ip;

	(void)state;
	two_tors(&n);
	port = &n.sw[0].ports[0]; /* ToR 0's port to host 0 */
	et_net_host_mac(0, &host);
	host_ip = et_topo_host_ip(&n.t, 0);

	/* no address yet: a request is dropped as before, as not IPv4 */
	assert_null(arp_exchange(&n, arp_frame(1, &host, host_ip, GW_IP), 0));
	assert_int_equal(port->st.drops[ET_SW_DROP_NON_IP], 1);

	/* the address: not a host's (a /32 routed down), once per port */
	assert_int_equal(et_switch_set_port_ip(&n.sw[0], 1, host_ip), -EEXIST);
	assert_int_equal(et_switch_set_port_ip(&n.sw[0], 0, GW_IP), 0);
	assert_int_equal(et_switch_set_port_ip(&n.sw[0], 0, GW_IP), 0);
	assert_int_equal(et_switch_set_port_ip(&n.sw[0], 0, OTHER_IP), -EINVAL);
	assert_int_equal(et_switch_set_port_ip(&n.sw[0], 99, GW_IP), -EINVAL);
	assert_int_equal(et_switch_add_route(&n.sw[0], GW_IP, 32, 0), -EEXIST);
	assert_false(et_switch_routes(&n.sw[0], GW_IP));
	assert_true(et_switch_routes(&n.sw[0], host_ip));

	/* a request for it: one reply, unicast back, from the port's MAC */
	got = arp_exchange(&n, arp_frame(1, &host, host_ip, GW_IP), 1);
	assert_non_null(got);
	assert_int_equal(rte_pktmbuf_data_len(got), ET_ARP_FRAME_LEN);
	g = rte_pktmbuf_mtod(got, const uint8_t *);
	assert_memory_equal(g, &host, 6);                  /* to the asker */
	assert_memory_equal(g + 6, &port->mac, 6);         /* from the port */
	assert_int_equal(et_load16(g + 12), 0x0806);
	assert_int_equal(et_load16(g + 14), 1);            /* Ethernet */
	assert_int_equal(et_load16(g + 16), 0x0800);       /* IPv4 */
	assert_int_equal(g[18], 6);
	assert_int_equal(g[19], 4);
	assert_int_equal(et_load16(g + 20), 2);            /* reply */
	assert_memory_equal(g + 22, &port->mac, 6);        /* sha: the switch */
	assert_int_equal(et_load32(g + 28), GW_IP);        /* spa: the gateway */
	assert_memory_equal(g + 32, &host, 6);             /* tha: the asker */
	assert_int_equal(et_load32(g + 38), host_ip);      /* tpa: its address */
	for (int i = 42; i < ET_ARP_FRAME_LEN; i++)
		assert_int_equal(g[i], 0);                 /* padding zeroed */
	rte_pktmbuf_free(got);
	assert_int_equal(port->st.arp_requests, 1);
	assert_int_equal(port->st.arp_replies, 1);

	/* for another address (a neighbour host: it must route through us),
	 * a reply to us, gratuitous ARP: dropped, counted as before */
	assert_null(arp_exchange(&n, arp_frame(1, &host, host_ip, OTHER_IP), 2));
	assert_null(arp_exchange(&n, arp_frame(2, &host, host_ip, GW_IP), 3));
	assert_null(arp_exchange(&n, arp_frame(1, &host, host_ip, host_ip), 4));
	assert_int_equal(port->st.drops[ET_SW_DROP_NON_IP], 4);

	/* malformed: truncated, wrong hardware length, unknown opcode */
	m = arp_frame(1, &host, host_ip, GW_IP);
	rte_pktmbuf_trim(m, 10);
	assert_null(arp_exchange(&n, m, 5));
	m = arp_frame(1, &host, host_ip, GW_IP);
	rte_pktmbuf_mtod(m, uint8_t *)[18] = 8;
	assert_null(arp_exchange(&n, m, 6));
	assert_null(arp_exchange(&n, arp_frame(3, &host, host_ip, GW_IP), 7));
	assert_int_equal(port->st.drops[ET_SW_DROP_MALFORMED], 3);
	assert_int_equal(port->st.arp_requests, 1);

	/* IPv4 to the gateway stops there: the switch runs no IP stack */
	m = frame(&n, 0, 1, et_path_make(1, 0), 64, 0);
	{
		uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *) + ET_ETH_HLEN;

		et_ipv4_update_word(ip, 18, GW_IP & 0xffff); /* 10.0.1.x -> 10.0.0.254 */
		et_ipv4_update_word(ip, 16, GW_IP >> 16);
	}
	assert_null(arp_exchange(&n, m, 8));
	assert_int_equal(port->st.drops[ET_SW_DROP_LOCAL], 1);
	assert_int_equal(receive(&n, 1, &got, 1), 0);

	/* a flood: the burst (8) answered, the rest counted; 25 ms later two
	 * more tokens (one per 10 ms) */
	{
		const uint64_t t0 = 1000000000, burst = n.sw[0].p.arp_burst;
		uint64_t replies = port->st.arp_replies, k;
		struct rte_mbuf *back[32];

		assert_int_equal(burst, 8);
		for (k = 0; k < 20; k++)
			inject(&n, 0, arp_frame(1, &host, host_ip, GW_IP));
		drain(&n, t0);
		k = receive(&n, 0, back, 32);
		assert_int_equal(k, burst);
		rte_pktmbuf_free_bulk(back, (unsigned int)k);
		assert_int_equal(port->st.arp_replies, replies + burst);
		assert_int_equal(port->st.arp_unanswered, 20 - burst);
		for (k = 0; k < 5; k++)
			inject(&n, 0, arp_frame(1, &host, host_ip, GW_IP));
		drain(&n, t0 + 25000000);
		k = receive(&n, 0, back, 32);
		assert_int_equal(k, 2);
		rte_pktmbuf_free_bulk(back, (unsigned int)k);
		assert_int_equal(port->st.arp_unanswered, 20 - burst + 3);
		assert_int_equal(port->st.arp_requests, 1 + 20 + 5);
	}
	/* every frame in ended once: taken as a request, or dropped */
	assert_int_equal(port->st.rx_pkts,
			 et_ctr_sum(&et_sw_port_ctrs, &port->st, ET_CTR_ENDED));
	et_net_free(&n);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_spine_net_ring),
		cmocka_unit_test(test_leaf_spine_parallel_links),
		cmocka_unit_test(test_fat_tree),
		cmocka_unit_test(test_fat_tree_many_tors),
		cmocka_unit_test(test_ecmp_spreads_flows),
		cmocka_unit_test(test_ecn_and_buffer),
		cmocka_unit_test(test_pfc),
		cmocka_unit_test(test_acks_first),
		cmocka_unit_test(test_link_failure),
		cmocka_unit_test(test_malformed_frames),
		cmocka_unit_test(test_hostile_frames),
		cmocka_unit_test(test_link_state),
		cmocka_unit_test(test_remote_failure_withdrawn),
		cmocka_unit_test(test_fat_tree_compact_routes),
		cmocka_unit_test(test_arp_gateway),
		cmocka_unit_test(test_fat_tree_lanes),
		cmocka_unit_test(test_fat_tree_cross_pod_failure),
		cmocka_unit_test(test_fat_tree_lane_failure),
	};

	return cmocka_run_group_tests_name("switch", tests, setup, teardown);
}
