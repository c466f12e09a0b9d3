/* SPDX-License-Identifier: BSD-3-Clause */
#include "transport/et_dctcp.h"
#include "wire/et_wire.h"

void
et_dctcp_params_default(struct et_dctcp_params *p)
{
	p->enabled = true;
	p->init_cwnd = 200000; /* 400 Gbit/s x 4 us */
	p->max_cwnd = 64u << 20;
	p->g = 1.0 / 16;
	p->init_alpha = 1.0;
	p->ai = 0;
	p->rate_mode = false;
	p->line_bps = 400000000000ull;
	p->rate_ai_bps = 1000000000ull; /* the artifact's DCTCP_RATE_AI */
	p->bdp = 200000;
}

/* rate mode: a floor keeps the pace finite */
#define RATE_MIN_BPS 100000000.0

void
et_dctcp_init(struct et_dctcp *d, const struct et_dctcp_params *p, uint32_t mtu,
	      uint32_t start_psn)
{
	d->p = *p;
	d->mtu = mtu;
	d->alpha = p->init_alpha;
	d->cwnd = p->enabled && !p->rate_mode ? p->init_cwnd : p->max_cwnd;
	d->rate_bps = (double)p->line_bps;
	if (d->cwnd < mtu)
		d->cwnd = mtu;
	d->win_end = start_psn;
	d->acked = d->marked = 0;
	d->answered = 0;
	d->cut = false;
	d->windows = d->cuts = 0;
}

/* The window of data that began at the last boundary is over: alpha moves,
 * and an unmarked window grows. */
static void
window_end(struct et_dctcp *d)
{
	if (d->acked > 0) {
		double f = d->marked >= d->acked ? 1.0 : (double)d->marked / d->acked;

		d->alpha = (1 - d->p.g) * d->alpha + d->p.g * f;
	}
	if (d->marked == 0 && d->p.rate_mode) {
		d->rate_bps += (double)d->p.rate_ai_bps;
		if (d->rate_bps > (double)d->p.line_bps)
			d->rate_bps = (double)d->p.line_bps;
	} else if (d->marked == 0) {
		uint32_t ai = d->p.ai ? d->p.ai : d->mtu;

		if (d->cwnd + ai <= d->p.max_cwnd)
			d->cwnd += ai;
	}
	d->windows++;
	d->acked = d->marked = 0;
	d->answered = 0;
	d->cut = false;
}

void
et_dctcp_on_ack(struct et_dctcp *d, uint32_t acked, uint32_t una, uint32_t snd_nxt)
{
	if (!d->p.enabled)
		return;
	d->acked += acked;
	if (et_psn_diff(una, d->win_end) < 0)
		return;
	window_end(d);
	d->win_end = snd_nxt;
}

/* Window mode's rate for answers: line x cwnd / bdp. */
static double
answer_rate_bps(const struct et_dctcp *d)
{
	if (d->p.rate_mode)
		return d->rate_bps;
	return (double)d->p.line_bps * d->cwnd / (d->p.bdp ? d->p.bdp : d->mtu);
}

void
et_dctcp_on_answer(struct et_dctcp *d, uint32_t bytes)
{
	double win;

	if (!d->p.enabled)
		return;
	d->acked++;
	d->answered += bytes;
	/* a window's bytes at the present rate: one base RTT of them */
	win = d->p.rate_mode ? d->rate_bps * (d->p.bdp ? d->p.bdp : d->mtu) / d->p.line_bps
			     : d->cwnd;
	if ((double)d->answered >= (win > d->mtu ? win : d->mtu))
		window_end(d);
}

uint64_t
et_dctcp_answer_pace_ps(const struct et_dctcp *d, uint32_t len)
{
	double rate;

	if (!d->p.enabled || d->p.line_bps == 0)
		return 0;
	rate = answer_rate_bps(d);
	if (rate >= (double)d->p.line_bps)
		return 0;
	if (rate < RATE_MIN_BPS)
		rate = RATE_MIN_BPS;
	return (uint64_t)((len + ET_ETH_WIRE_EXTRA) * 8e12 / rate);
}

void
et_dctcp_on_cnp(struct et_dctcp *d)
{
	if (!d->p.enabled)
		return;
	d->marked++;
	if (d->cut)
		return;
	d->cut = true;
	d->cuts++;
	if (d->p.rate_mode) {
		d->rate_bps *= 1 - d->alpha / 2;
		if (d->rate_bps < RATE_MIN_BPS)
			d->rate_bps = RATE_MIN_BPS;
		return;
	}
	d->cwnd *= 1 - d->alpha / 2;
	if (d->cwnd < d->mtu)
		d->cwnd = d->mtu;
}
