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
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "link/et_unmap_guard.h"

enum et_port_kind { ET_PORT_NONE, ET_PORT_ETHDEV, ET_PORT_RING };

/* A frame handed over ahead of time (virtual time): when it arrives, and
 * where its bytes are, so that the reader can fetch them all at once
 * without first reading the mbuf. */
struct et_arrival {
	uint64_t at;
	const uint8_t *head;
	uint32_t len;
};

struct et_port {
	enum et_port_kind kind;
	uint16_t eth_port;
	uint16_t eth_queue;
	bool unmap_guard; /* shared-memory rings (memif): see et_unmap_guard.h */
	struct rte_ring *rx, *tx; /* ring backend */
	struct rte_ring *own[2];  /* rings this port created (freed on close) */
	char name[RTE_RING_NAMESIZE];
	/* virtual time (see et_port_rx_at): each frame handed to this port,
	 * in order of arrival, tl[tl_head..tl_tail) (masked) */
	bool timed;
	struct et_arrival *tl;
	uint32_t tl_mask, tl_head, tl_tail;
};

static inline uint16_t
et_port_rx(struct et_port *p, struct rte_mbuf **m, uint16_t n)
{
	if (p->kind == ET_PORT_RING)
		return (uint16_t)rte_ring_sc_dequeue_burst(p->rx, (void **)m, n, NULL);
	if (unlikely(p->unmap_guard)) {
		uint32_t ph = et_unmap_guard_enter();

		n = rte_eth_rx_burst(p->eth_port, p->eth_queue, m, n);
		et_unmap_guard_leave(ph);
		return n;
	}
	return rte_eth_rx_burst(p->eth_port, p->eth_queue, m, n);
}

/* Virtual time on (frames are handed over early, with et_port_expect) or
 * off (what was expected is forgotten: the frames are read as they are). */
void et_port_set_timed(struct et_port *p, bool on);

/* Virtual time: n frames were handed to this timed port ahead of time
 * (they are in its ring, or are put there before anyone reads it), a[0..n)
 * in order of arrival.  The one that runs the port's node calls it.
 * -ENOMEM. */
int et_port_expect(struct et_port *p, const struct et_arrival *a, uint32_t n);

/* When the next frame arrives at a timed port; UINT64_MAX: none is on
 * its way. */
static inline uint64_t
et_port_next_arrival(const struct et_port *p)
{
	return p->tl_head != p->tl_tail ? p->tl[p->tl_head & p->tl_mask].at : UINT64_MAX;
}

/* Frames that have arrived by now: a timed port hands out only those,
 * their bytes (a frame's first and last line: headers, ICRC) and mbufs
 * asked for all at once, for at a fabric's scale every one is cold; an
 * untimed port (the real clock, or a run over) all it has. */
static inline uint16_t
et_port_rx_at(struct et_port *p, struct rte_mbuf **m, uint16_t n, uint64_t now)
{
	uint16_t k = 0, i;

	if (likely(!p->timed))
		return et_port_rx(p, m, n);
	for (; k < n && p->tl_head + k != p->tl_tail; k++) {
		const struct et_arrival *a = &p->tl[(p->tl_head + k) & p->tl_mask];

		if (a->at > now)
			break;
		rte_prefetch0(a->head);
		rte_prefetch0(a->head + a->len - 1);
	}
	k = k ? et_port_rx(p, m, k) : 0;
	for (i = 0; i < k; i++)
		rte_prefetch0(m[i]);
	p->tl_head += k;
	return k;
}

/* Returns how many were taken; the caller still owns the rest. */
static inline uint16_t
et_port_tx(struct et_port *p, struct rte_mbuf **m, uint16_t n)
{
	if (p->kind == ET_PORT_RING)
		return (uint16_t)rte_ring_sp_enqueue_burst(p->tx, (void **)m, n, NULL);
	if (unlikely(p->unmap_guard)) {
		uint32_t ph = et_unmap_guard_enter();

		n = rte_eth_tx_burst(p->eth_port, p->eth_queue, m, n);
		et_unmap_guard_leave(ph);
		return n;
	}
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

/* Frames waiting in the port's receive ring (a ring port, or net_ring's
 * ring under an ethdev one); 0 for other ports. */
static inline uint32_t
et_port_rx_pending(const struct et_port *p)
{
	return p->rx ? rte_ring_count(p->rx) : 0;
}

/* Two ring-backed ports joined back to back: what a sends, b receives. */
int et_port_ring_pair(struct et_port *a, struct et_port *b, const char *name,
		      unsigned int size, int socket);

/* One ring-backed port that receives what it sends: endpoints of one
 * process (one address) reach each other through it, their frames real
 * and crossing a ring as net_ring's do. */
int et_port_loop(struct et_port *p, const char *name, unsigned int size, int socket);

/* The same, as two net_ring ethdev ports (rte_eth_from_rings), configured
 * and started. */
int et_port_net_ring_pair(struct et_port *a, struct et_port *b, const char *name,
			  unsigned int size, int socket, struct rte_mempool *mp);

/* An ethdev from DPDK device arguments ("net_tap0,iface=x", a PCI address,
 * or the name of a port that already exists), with queues rx and tx queue
 * pairs (RSS over them where the device has it), started, promiscuous;
 * p reads and writes queue 0 (et_port_queue for the others).  -E2BIG: the
 * device has fewer queues. */
int et_port_ethdev(struct et_port *p, const char *devargs, struct rte_mempool *mp,
		   uint16_t nb_desc, uint16_t queues);

/* Queue pair q of the ethdev port p: a port of its own to read and write. */
static inline struct et_port
et_port_queue(const struct et_port *p, uint16_t q)
{
	struct et_port x = {.kind = p->kind, .eth_port = p->eth_port, .eth_queue = q};

	memcpy(x.name, p->name, sizeof(x.name));
	return x;
}

/* Stop an ethdev and free the rings this port owns (frames in them too).
 * Of a pair, close the side without rings first: its ethdev may still
 * point at them. */
void et_port_close(struct et_port *p);

/* The link as the port's PMD reports it now, without waiting: 1 up, 0
 * down, a negative errno when it cannot tell; a ring port is always up.
 * A system call on some PMDs (af_packet): poll it every few ms, not every
 * burst. */
int et_port_link_up(const struct et_port *p);

/* fn(port, RTE_ETH_EVENT_INTR_LSC, arg, NULL) from DPDK's interrupt thread
 * when the link changes, where the PMD signals it (et_port_ethdev enables
 * that when it can); -ENOTSUP where it does not: poll et_port_link_up. */
int et_port_watch_link(const struct et_port *p, rte_eth_dev_cb_fn fn, void *arg);

/* After the far end went away (its process died or closed): wait, at most
 * max_ms, until the link reads down, then a little more.  DPDK 22.11's
 * memif tears its side of the link down from the EAL's interrupt thread
 * when the peer leaves; closing the port, or rte_eal_cleanup(), while that
 * thread is still at it frees its memory twice or unmaps it under it (a
 * crash, seen under load).  Behind a switch the link stays up: max_ms is
 * then all it costs.  Nothing to wait for on a ring port. */
void et_port_await_peer_gone(const struct et_port *p, unsigned int max_ms);
/* Wait at most max_ms for the link to come up, or until *stop is set
 * (a signal handler's flag; may be NULL).  0 once it is up (at once on a
 * ring port), -ETIMEDOUT, or -EINTR. */
int et_port_await_link_up(const struct et_port *p, unsigned int max_ms,
			  const volatile sig_atomic_t *stop);

/* Free only the rings this port owns, and the frames still in them. */
void et_port_free_rings(struct et_port *p);

#endif /* ET_PORT_H */
