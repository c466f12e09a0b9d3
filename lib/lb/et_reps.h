/* SPDX-License-Identifier: BSD-3-Clause
 * REPS, Recycled Entropy Packet Spraying (Bonato et al., EuroSys'26,
 * arXiv 2407.21625), for one connection: which UDP source port (entropy
 * value, EV) each data packet carries so that ECMP switches spread it.
 *
 * An ACK without ECN says its packet's EV crossed an uncongested path: the
 * EV goes into a small circular buffer and is reused, oldest first, once.
 * An ECN-marked ACK drops its EV.  With nothing cached, or for the first
 * packets of a connection, a random EV is explored.  On a timeout the
 * connection freezes: no exploration, only the cached EVs in turn, used or
 * not, until the freeze expires; then it forgets them and explores again.
 *
 * Pinned (`reps:flow`), REPS as the Ethereal paper's authors ran it in
 * their ns-3 artifact: every packet takes the oldest cached EV and keeps
 * it there, so a connection rides one path; an ECN-marked ACK or a timeout
 * drops the oldest EV (not the marked one) and the next takes over.
 *
 * Pure C, no DPDK; time is whatever clock the caller passes (ns).  See
 * docs/reps.md for the sources of every default.
 */
#ifndef ET_REPS_H
#define ET_REPS_H

#include <stdbool.h>
#include <stdint.h>

#define ET_REPS_MAX_BUF 64

struct et_reps_params {
	/* EVs cached: 8 (paper section 3.1 and Table 1; the REPS artifact's
	 * htsim/sim/buffer_reps.cpp repsBufferSize); 1..ET_REPS_MAX_BUF */
	uint32_t buffer_size;
	/* Packets a new, idle or thawed connection explores: one BDP of
	 * packets, BDP / MTU (paper section 3.1; the artifact sets _bdp / _mtu
	 * when it leaves freezing).  No topology here, so the default is the
	 * constant 16 of UEC's htsim (uec_mp.cpp, UecMpReps); set it with
	 * et_reps_bdp_pkts() */
	uint32_t explore_pkts;
	/* How long a freeze lasts: 10 ms (the artifact's exit_freeze_after,
	 * 10^10 ps; its failure micro-benchmark, Fig. 6, used 100 us) */
	uint64_t freeze_ns;
	/* A connection that has sent nothing for this long explores again, as a
	 * new one (paper section 3.1); 0: never.  Default 0: neither the paper
	 * nor the artifact gives a value, and the artifact never does it */
	uint64_t idle_ns;
	/* Freeze on timeouts (paper section 3.2; artifact repsUseFreezing) */
	bool freezing;
	/* The Ethereal artifact's REPS (docs/reps.md): EVs are not used up,
	 * a mark or a timeout drops the oldest, an ACK adds its EV only when
	 * not cached, no freezing; the buffer is ET_REPS_MAX_BUF */
	bool pinned;
};

struct et_reps {
	struct et_reps_params p;
	uint16_t ev[ET_REPS_MAX_BUF];
	bool valid[ET_REPS_MAX_BUF];
	uint32_t head;          /* next slot an ACK writes */
	uint32_t n_valid;       /* valid slots; outside a freeze, the n_valid
	                         * just before head */
	uint32_t filled;        /* slots written since the last reset */
	uint32_t frozen_next;   /* slot a frozen connection sends on next */
	uint64_t rng;           /* xorshift64 state, never 0 */
	bool frozen;
	uint64_t freeze_until;  /* frozen until strictly after this time */
	uint32_t explore_left;  /* packets still to explore */
	bool sent;              /* a packet has been sent (last_tx_ns is set) */
	uint64_t last_tx_ns;
	/* stats */
	uint64_t explored;      /* packets on a random EV */
	uint64_t recycled;      /* packets on a cached EV (frozen ones too) */
	uint64_t frozen_count;  /* freezes entered */
	uint64_t cached_acks;   /* unmarked ACKs written into the buffer */
	uint64_t ecn_discards;  /* marked ACKs whose EV was dropped */
};

void et_reps_params_default(struct et_reps_params *p);

/* BDP / MTU in whole packets (at least 1), as the artifact computes its
 * exploration window: rate in Gbit/s, base RTT in ns, MTU in bytes. */
uint32_t et_reps_bdp_pkts(uint64_t rate_gbps, uint64_t rtt_ns, uint32_t mtu);

/* A new connection; p NULL: the defaults.  buffer_size is clamped to
 * 1..ET_REPS_MAX_BUF.  The same seed gives the same EVs. */
void et_reps_init(struct et_reps *r, const struct et_reps_params *p, uint64_t seed);

/* The EV (UDP source port) of the next data packet, first transmission or
 * retransmission alike, sent at now_ns. */
uint16_t et_reps_next(struct et_reps *r, uint64_t now_ns);

/* An ACK arrived for a packet that carried `entropy` (the port the data
 * packet left with, not the byte-swapped echo the ACK wears); ecn: that
 * packet arrived CE-marked. */
void et_reps_on_ack(struct et_reps *r, uint16_t entropy, bool ecn, uint64_t now_ns);

/* A packet timer fired (retransmission timeout, or whatever the caller
 * takes as a failed path): freeze, unless freezing is off, the connection
 * is already frozen or it is still exploring. */
void et_reps_on_timeout(struct et_reps *r, uint64_t now_ns);

#endif /* ET_REPS_H */
