/* SPDX-License-Identifier: BSD-3-Clause
 * A port: rx/tx bursts of mbufs through an ethdev queue (any PMD: net_ring,
 * net_tap, memif, af_packet, a PCI NIC) or straight through an rte_ring
 * pair.  The ring backend moves the same mbufs through the same rings the
 * net_ring PMD would, minus the ethdev layer: Debian's DPDK allows only 32
 * ethdev ports per process, too few for a 16-host fabric in one process.
 */
#ifndef ET_PORT_H
#define ET_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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
	/* virtual time (see et_port_rx_at): frames read off the backend
	 * but not yet arrived, in order of arrival, st[st_head..+st_n) */
	bool timed;
	uint16_t st_head, st_n;
	struct rte_mbuf *st[32];
};

/* In virtual time a frame is handed to the far end's port one link latency
 * early, carrying the instant it arrives.  It rides in the mbuf's RX hash,
 * which no ring backend fills and which sits on the line every reader
 * touches first. */
static inline uint64_t
et_frame_arrival(const struct rte_mbuf *m)
{
	uint64_t t;

	memcpy(&t, &m->hash, sizeof(t));
	return t;
}

static inline void
et_frame_set_arrival(struct rte_mbuf *m, uint64_t t)
{
	RTE_BUILD_BUG_ON(sizeof(m->hash) < sizeof(t));
	memcpy(&m->hash, &t, sizeof(t));
}

static inline uint16_t
et_port_rx(struct et_port *p, struct rte_mbuf **m, uint16_t n)
{
	if (p->kind == ET_PORT_RING)
		return (uint16_t)rte_ring_sc_dequeue_burst(p->rx, (void **)m, n, NULL);
	return rte_eth_rx_burst(p->eth_port, p->eth_queue, m, n);
}

static inline void
et_port_stash_fill(struct et_port *p)
{
	if (p->st_n == 0) {
		p->st_head = 0;
		p->st_n = et_port_rx(p, p->st, RTE_DIM(p->st));
	}
}

/* Frames that have arrived by now.  A timed port reads its backend ahead
 * into a small stash and hands out only what has arrived; frames reach a
 * port in order of arrival, so only the stash's head need be looked at.
 * An untimed port (the real clock, or a run over) hands out all it has. */
static inline uint16_t
et_port_rx_at(struct et_port *p, struct rte_mbuf **m, uint16_t n, uint64_t now)
{
	uint16_t k = 0;

	if (likely(p->st_n == 0 && !p->timed))
		return et_port_rx(p, m, n);
	while (k < n) {
		et_port_stash_fill(p);
		if (p->st_n == 0 || (p->timed && et_frame_arrival(p->st[p->st_head]) > now))
			break;
		m[k++] = p->st[p->st_head++];
		p->st_n--;
	}
	return k;
}

/* When the next frame arrives at a timed port; UINT64_MAX: none is on
 * its way. */
static inline uint64_t
et_port_next_arrival(struct et_port *p)
{
	et_port_stash_fill(p);
	return p->st_n ? et_frame_arrival(p->st[p->st_head]) : UINT64_MAX;
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
