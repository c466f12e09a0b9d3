/* SPDX-License-Identifier: BSD-3-Clause
 * DCTCP congestion window per QP (RFC 8257), fed by RoCEv2 CNPs: each CNP
 * stands for one CE-marked packet at the receiver.
 *
 * An observation window is one window of data: it ends when the cumulative
 * ACK passes the PSN that was next to send when it began.  At its end alpha
 * moves towards the fraction of acknowledged packets that were marked
 * (alpha = (1 - g) alpha + g F), and if nothing was marked the window grows
 * by one MTU.  The first CNP of a window cuts it to cwnd (1 - alpha / 2);
 * later CNPs of that window do not cut again.  Never below one MTU.
 */
#ifndef ET_DCTCP_H
#define ET_DCTCP_H

#include <stdbool.h>
#include <stdint.h>

struct et_dctcp_params {
	bool enabled;        /* off: the window stays at max_cwnd */
	uint32_t init_cwnd;  /* bytes; default one BDP of a 400 Gbps, 4 us RTT link */
	uint32_t max_cwnd;   /* bytes */
	double g;            /* EWMA gain, default 1/16 (the paper's code: 1/256) */
	double init_alpha;   /* RFC 8257: 1 */
};

struct et_dctcp {
	struct et_dctcp_params p;
	uint32_t mtu;
	double alpha;
	double cwnd;         /* bytes */
	uint32_t win_end;    /* PSN that ends the current observation window */
	uint32_t acked;      /* packets acknowledged in this window */
	uint32_t marked;     /* CNPs received in this window */
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

static inline uint32_t
et_dctcp_cwnd(const struct et_dctcp *d)
{
	return (uint32_t)d->cwnd;
}

#endif /* ET_DCTCP_H */
