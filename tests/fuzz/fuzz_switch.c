/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the switch pipeline: a frame (or a burst of copies)
 * enters a small leaf-spine network of switch instances at a host port and
 * the network runs in virtual time until it is idle.  Beyond "no crash":
 * every frame a host receives has a right IPv4 header checksum and, a UDP
 * datagram not fragmented, a UDP length equal to its IP payload and, UDP
 * 4791, room for a BTH and the ICRC (the switch's parse is total: what it
 * forwards is valid, the rest it drops for a reason); a RoCEv2 frame that
 * entered valid leaves valid, one that entered with a bad ICRC leaves with
 * a bad ICRC (the switch must not launder it), and every mbuf comes back
 * to the pool.  The ToRs have their gateway addresses, so ARP
 * for them is answered (corpus-switch/arp-*).
 *
 * Input: one control byte, then the frame.  Control bits:
 *   0-1 ingress host, 2-3 destination host (of 4),
 *   4   write real host addresses and a path ID the ToRs have into the
 *       frame and fix its IP checksum,
 *   5   then refill its ICRC,
 *   6   the ECMP network with faulty links and the fabric's compact route
 *       table instead of the source-routed one with PFC, a small buffer
 *       and rte_lpm,
 *   7   send 64 copies back to back (queues, ECN, PFC, buffer drops).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fuzz_eal.h"
#include "base/et_csum.h"
#include "sim/et_net.h"
#include "wire/et_pfc.h"
#include "wire/et_wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HOSTS 4
#define COPIES 64
#define MAX_FRAME 9300 /* a little past the switch's max-frame */

static struct rte_mempool *pool;
static struct et_net nets[2];
static uint64_t now[2];

static void
build(struct et_net *n, bool faulty)
{
	struct et_net_params p;
	struct et_topo t;

	memset(&p, 0, sizeof(p));
	et_sw_params_default(&p.sw);
	p.sw.queue_pkts = 256;
	p.ring_size = 1024;
	p.link.rate_bps = 100000000000ull;
	p.link.latency_ns = 1000;
	if (faulty) {
		p.sw.mode = ET_SW_ECMP;
		p.link.seed = 7;
		p.link.loss_ppm = 20000;
		p.link.dup_ppm = 20000;
		p.link.corrupt_ppm = 20000;
		p.link.jitter_ns = 3000;
		p.sw.compact_routes = true; /* the other network uses rte_lpm */
	} else {
		p.sw.pfc = true;
		p.sw.buffer_bytes = 128 << 10;
	}
	et_topo_leaf_spine(&t, 2, 2, 2, 1);
	if (et_net_build(n, &t, &p, pool, 0) != 0)
		abort();
	/* the ToRs are their hosts' gateway, 10.T.254: ARP for it is answered */
	for (uint32_t h = 0; h < HOSTS; h++) {
		uint32_t tor = et_topo_tor_of(&n->t, h);
		int port = et_net_port_to(n, (struct et_node){ET_TIER_TOR, tor},
					  (struct et_node){ET_TIER_HOST, h}, 0);

		if (port < 0 ||
		    et_switch_set_port_ip(&n->sw[n->first[ET_TIER_TOR] + tor], (uint16_t)port,
					  (et_topo_host_ip(&n->t, h) & ~0xffu) | 254))
			abort();
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_eal_init("1024");
	/* room for the copies, the PFC frames and every link's ring */
	pool = rte_pktmbuf_pool_create("fz", 8191, 0, 0, RTE_PKTMBUF_HEADROOM + MAX_FRAME, 0);
	if (!pool)
		abort();
	build(&nets[0], false);
	build(&nets[1], true);
	return 0;
}

/* How a frame fares in et_roce_parse: 0 valid, 1 bad only in its ICRC,
 * 2 not a RoCEv2 frame we can judge. */
static int
judge(const uint8_t *f, size_t len)
{
	struct et_roce_pkt p;
	int rc = et_roce_parse(f, len, &p, 0);

	if (rc == 0)
		return 0;
	return rc == -ET_WIRE_E_ICRC ? 1 : 2;
}

static void
check_delivered(const struct rte_mbuf *m, int entered)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t len = rte_pktmbuf_data_len(m);

	if (m->nb_segs != 1)
		abort();
	if (len >= ET_ETH_HLEN + 20 && et_load16(f + 12) == RTE_ETHER_TYPE_IPV4) {
		const uint8_t *ip = f + ET_ETH_HLEN;
		uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4, tot = et_load16(ip + 2);

		if (!et_ipv4_csum_ok(ip, ihl))
			abort(); /* the switch only forwards good headers and updates them right */
		if (ip[9] == IPPROTO_UDP && !(et_load16(ip + 6) & 0x3fff) &&
		    (tot < ihl + 8 || et_load16(ip + ihl + 4) != tot - ihl ||
		     (et_load16(ip + ihl + 2) == ET_ROCE_UDP_PORT &&
		      tot < ihl + 8 + ET_BTH_LEN + ET_ICRC_LEN)))
			abort(); /* lengths that disagree are malformed, not forwarded */
	}
	if (entered != 2 && judge(f, len) != entered)
		abort();
}

static void
run_to_idle(struct et_net *n, uint64_t *t, int entered, bool faulty)
{
	for (int guard = 0; guard < 1000000; guard++) {
		struct rte_mbuf *m[32];
		uint64_t next;
		uint32_t work = et_net_poll(n, *t);

		for (uint32_t h = 0; h < HOSTS; h++) {
			uint16_t k, got = et_port_rx(&n->host_port[h], m, 32);

			for (k = 0; k < got; k++) {
				/* PAUSE frames come back to the sender; faulty links
				 * corrupt payloads on purpose */
				if (et_load16(rte_pktmbuf_mtod(m[k], uint8_t *) + 12) !=
				    ET_ETHER_TYPE_MAC_CONTROL)
					check_delivered(m[k], faulty ? 2 : entered);
				rte_pktmbuf_free(m[k]);
			}
			work += got;
		}
		if (work)
			continue;
		next = et_net_next_event(n, *t);
		if (next == UINT64_MAX)
			return;
		*t = next > *t ? next : *t + 1;
	}
	abort(); /* the network never settles */
}

static struct rte_mbuf *
make_frame(const struct et_net *n, const uint8_t *f, size_t len, uint8_t ctl, int *entered)
{
	uint32_t src = ctl & 3, dst = (ctl >> 2) & 3;
	struct rte_mbuf *head = rte_pktmbuf_alloc(pool), *m = head;
	uint8_t *d;

	if (!head)
		abort();
	/* big frames arrive as a chain of segments, as from a PMD */
	for (size_t off = 0; off < len;) {
		uint16_t room = rte_pktmbuf_tailroom(m), take;

		if (room == 0) {
			struct rte_mbuf *seg = rte_pktmbuf_alloc(pool);

			if (!seg)
				abort();
			if (rte_pktmbuf_chain(head, seg) != 0) {
				rte_pktmbuf_free(seg);
				break;
			}
			m = seg;
			room = rte_pktmbuf_tailroom(m);
		}
		take = (uint16_t)(len - off < room ? len - off : room);
		d = (uint8_t *)rte_pktmbuf_append(head, take);
		memcpy(d, f + off, take);
		off += take;
	}
	d = rte_pktmbuf_mtod(head, uint8_t *);
	if ((ctl & 0x10) && head->nb_segs == 1 && len >= ET_ETH_HLEN + 20) {
		uint8_t *ip = d + ET_ETH_HLEN;
		uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;
		uint32_t s = et_topo_host_ip(&n->t, src), t = et_topo_host_ip(&n->t, dst);

		et_store16(ip + 12, (uint16_t)(s >> 16));
		et_store16(ip + 14, (uint16_t)s);
		et_store16(ip + 16, (uint16_t)(t >> 16));
		et_store16(ip + 18, (uint16_t)t);
		if (ihl >= 20 && ET_ETH_HLEN + ihl + 2 <= len) {
			/* a path ID whose uplink the ToR has (it has two) */
			ip[ihl] &= 1;
			et_store16(ip + 10, 0);
			et_store16(ip + 10, et_ipv4_csum(ip, ihl));
		}
		if ((ctl & 0x20) && judge(d, len) == 1)
			et_icrc_fill(ip, et_load16(ip + 2));
	}
	*entered = head->nb_segs == 1 ? judge(d, len) : 2;
	return head;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t ctl;
	bool faulty;
	struct et_net *n;
	struct rte_mbuf *m[COPIES];
	uint32_t copies, sent = 0;
	int entered;

	if (size < 1 || size - 1 > MAX_FRAME)
		return 0;
	ctl = data[0];
	faulty = ctl & 0x40;
	n = &nets[faulty];
	copies = ctl & 0x80 ? COPIES : 1;
	for (uint32_t i = 0; i < copies; i++)
		m[i] = make_frame(n, data + 1, size - 1, ctl, &entered);
	while (sent < copies) {
		/* the host link's ring may be full: let the network take some */
		sent += et_port_tx(&n->host_port[ctl & 3], m + sent, (uint16_t)(copies - sent));
		run_to_idle(n, &now[faulty], entered, faulty);
	}
	if (rte_mempool_in_use_count(pool) != 0)
		abort(); /* an mbuf was lost on the way */
	return 0;
}
