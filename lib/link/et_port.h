/* SPDX-License-Identifier: BSD-3-Clause
 * A port: rx/tx bursts of mbufs through an ethdev queue (any PMD: net_ring,
 * net_tap, memif, af_packet, a PCI NIC) or straight through an rte_ring
 * pair.  The ring backend moves the same mbufs through the same rings the
 * net_ring PMD would, minus the ethdev layer: Debian's DPDK allows only 32
 * ethdev ports per process, too few for a 16-host fabric in one process.
 */
#ifndef ET_PORT_H
#define ET_PORT_H

#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

enum et_port_kind { ET_PORT_NONE, ET_PORT_ETHDEV, ET_PORT_RING };

struct et_port {
	enum et_port_kind kind;
	uint16_t eth_port;
	uint16_t eth_queue;
	struct rte_ring *rx, *tx; /* ring backend */
	struct rte_ring *own[2];  /* rings this port created (freed on close) */
	char name[RTE_RING_NAMESIZE];
};

static inline uint16_t
et_port_rx(struct et_port *p, struct rte_mbuf **m, uint16_t n)
{
	if (p->kind == ET_PORT_RING)
		return (uint16_t)rte_ring_sc_dequeue_burst(p->rx, (void **)m, n, NULL);
	return rte_eth_rx_burst(p->eth_port, p->eth_queue, m, n);
}

/* Returns how many were taken; the caller still owns the rest. */
static inline uint16_t
et_port_tx(struct et_port *p, struct rte_mbuf **m, uint16_t n)
{
	if (p->kind == ET_PORT_RING)
		return (uint16_t)rte_ring_sp_enqueue_burst(p->tx, (void **)m, n, NULL);
	return rte_eth_tx_burst(p->eth_port, p->eth_queue, m, n);
}

/* Frames read off a port are cold when they waited long (at a fabric's
 * scale its queues far outgrow the caches): ask for every mbuf header of a
 * burst at once, and for a frame's first and last line (headers; the
 * RoCEv2 ICRC) a few frames before it is looked at. */
static inline void
et_prefetch_mbufs(struct rte_mbuf *const *m, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		rte_prefetch0(m[i]);
}

static inline void
et_prefetch_frame(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);

	rte_prefetch0(f);
	rte_prefetch0(f + rte_pktmbuf_data_len(m) - 1);
}

/* Two ring-backed ports joined back to back: what a sends, b receives. */
int et_port_ring_pair(struct et_port *a, struct et_port *b, const char *name,
		      unsigned int size, int socket);

/* The same, as two net_ring ethdev ports (rte_eth_from_rings), configured
 * and started. */
int et_port_net_ring_pair(struct et_port *a, struct et_port *b, const char *name,
			  unsigned int size, int socket, struct rte_mempool *mp);

/* An ethdev from DPDK device arguments ("net_tap0,iface=x", a PCI address,
 * or the name of a port that already exists), one rx and one tx queue,
 * started, promiscuous. */
int et_port_ethdev(struct et_port *p, const char *devargs, struct rte_mempool *mp,
		   uint16_t nb_desc);

/* Stop an ethdev and free the rings this port owns (frames in them too).
 * Of a pair, close the side without rings first: its ethdev may still
 * point at them. */
void et_port_close(struct et_port *p);

/* Free only the rings this port owns, and the frames still in them. */
void et_port_free_rings(struct et_port *p);

#endif /* ET_PORT_H */
