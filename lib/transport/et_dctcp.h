/* SPDX-License-Identifier: BSD-3-Clause
 * DCTCP congestion window per QP (RFC 8257), fed by RoCEv2 CNPs: each CNP
 * stands for one CE-marked packet at the receiver.
 *
 * An observation window is one window of data: it ends when the cumulative
 * ACK passes the PSN that was next to send when it began.  At its end alpha
 * moves towards the fraction of acknowledged packets that were marked
 * (alpha = (1 - g) alpha + g F), and if nothing was marked the window grows
 * by one MTU (or ai bytes).  The first CNP of a window cuts it to
 * cwnd (1 - alpha / 2); later CNPs of that window do not cut again.  Never
 * below one MTU.
 *
 * Rate mode is the DCTCP of the paper's simulator (its rdma-hw.cc, CC_MODE
 * 8 with HAS_WIN 0): no window at all; the QP is paced at a rate that
 * starts at line rate, is cut to rate (1 - alpha / 2) by the first CNP of
 * an observation window and grows by rate_ai per unmarked window.
 */
#ifndef ET_DCTCP_H
#define ET_DCTCP_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/et_wire.h"

struct et_dctcp_params {
	bool enabled;        /* off: the window stays at max_cwnd */
	uint32_t init_cwnd;  /* bytes; default one BDP of a 400 Gbps, 4 us RTT link */
	uint32_t max_cwnd;   /* bytes */
	double g;            /* EWMA gain, default 1/16 (the paper's code: 1/256) */
	double init_alpha;   /* RFC 8257: 1 */
	uint32_t ai;         /* bytes added per unmarked window; 0: one MTU */
	bool rate_mode;      /* paced at a rate, no window */
	uint64_t line_bps;   /* rate mode: the first rate and the most */
	uint64_t rate_ai_bps; /* rate mode: added per unmarked window */
	uint32_t bdp;        /* bytes: line rate x the path's base RTT; window
			      * mode paces answers at line x cwnd / bdp */
};

struct et_dctcp {
	struct et_dctcp_params p;
	uint32_t mtu;
	double alpha;
	double cwnd;         /* bytes; rate mode: max_cwnd */
	double rate_bps;     /* rate mode only */
	uint32_t win_end;    /* PSN that ends the current observation window */
	uint32_t acked;      /* packets acknowledged in this window */
	uint32_t marked;     /* CNPs received in this window */
	uint64_t answered;   /* answer stream: bytes sent in this window */
	bool cut;            /* already cut in this window */
	uint64_t windows;
	uint64_t cuts;
};

void et_dctcp_params_default(struct et_dctcp_params *p);
void et_dctcp_init(struct et_dctcp *d, const struct et_dctcp_params *p,
		   uint32_t mtu, uint32_t start_psn);

/* The cumulative ACK moved to una after acked packets; snd_nxt is where
 * the next window would end. */
void et_dctcp_on_ack(struct et_dctcp *d, uint32_t acked, uint32_t una,
		     uint32_t snd_nxt);
void et_dctcp_on_cnp(struct et_dctcp *d);

/* An answer stream (a responder's READ responses and atomic ACKs): data
 * that no ACK acknowledges.  Each packet sent counts at once; a window ends
 * once a window's bytes have left (cwnd, or in rate mode the rate times the
 * base RTT), CNPs mark it as they do any window. */
void et_dctcp_on_answer(struct et_dctcp *d, uint32_t bytes);

static inline uint32_t
et_dctcp_cwnd(const struct et_dctcp *d)
{
	return (uint32_t)d->cwnd;
}

/* Picoseconds a frame of len bytes (on the wire, with preamble, IFG and
 * FCS) occupies at the QP's rate; 0 when the QP is not paced. */
static inline uint64_t
et_dctcp_pace_ps(const struct et_dctcp *d, uint32_t len)
{
	if (!d->p.enabled || !d->p.rate_mode)
		return 0;
	return (uint64_t)((len + ET_ETH_WIRE_EXTRA) * 8e12 / d->rate_bps);
}

/* Picoseconds a frame of answers occupies: at the rate in rate mode, at
 * line x cwnd / bdp in window mode (no ACK will open a window for them);
 * 0 when that is line rate or more, or DCTCP is off. */
uint64_t et_dctcp_answer_pace_ps(const struct et_dctcp *d, uint32_t len);

#endif /* ET_DCTCP_H */
