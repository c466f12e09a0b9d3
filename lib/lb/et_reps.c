/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "base/et_rand.h"
#include "lb/et_reps.h"

void
et_reps_params_default(struct et_reps_params *p)
{
	*p = (struct et_reps_params){
		.buffer_size = 8,
		.explore_pkts = 16,
		.freeze_ns = 10 * 1000 * 1000,
		.idle_ns = 0,
		.freezing = true,
	};
}

uint32_t
et_reps_bdp_pkts(uint64_t rate_gbps, uint64_t rtt_ns, uint32_t mtu)
{
	/* Gbit/s x ns = bits; the artifact rounds down, but a window of 0
	 * would not explore at all */
	uint64_t n = mtu ? rate_gbps * rtt_ns / 8 / mtu : 0;

	return n == 0 ? 1 : n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* A random EV from the whole 16-bit set: the switches hash the port, so
 * no value is special.  The top bits, as xorshift's low bits are its
 * weakest. */
static uint16_t
explore(struct et_reps *r)
{
	r->explored++;
	return (uint16_t)(et_rand_next(&r->rng) >> 48);
}

static void
forget(struct et_reps *r)
{
	memset(r->valid, 0, sizeof(r->valid));
	r->head = 0;
	r->n_valid = 0;
	r->filled = 0;
	r->frozen_next = 0;
}

/* Explore a window, as a new connection does. */
static void
restart(struct et_reps *r)
{
	forget(r);
	r->explore_left = r->p.explore_pkts;
}

/* Leave a freeze whose time is up.  Checked on every event, so a frozen
 * connection also thaws when no ACK comes back at all. */
static void
thaw(struct et_reps *r, uint64_t now)
{
	if (!r->frozen || now <= r->freeze_until)
		return;
	r->frozen = false;
	/* EVs cached around a failure may lead back into it; the artifact
	 * drops them all and explores a BDP instead */
	restart(r);
}

void
et_reps_init(struct et_reps *r, const struct et_reps_params *p, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;

	memset(r, 0, sizeof(*r));
	if (p)
		r->p = *p;
	else
		et_reps_params_default(&r->p);
	if (r->p.pinned) /* the artifact's cache has no bound */
		r->p.buffer_size = ET_REPS_MAX_BUF;
	if (r->p.buffer_size == 0)
		r->p.buffer_size = 1;
	if (r->p.buffer_size > ET_REPS_MAX_BUF)
		r->p.buffer_size = ET_REPS_MAX_BUF;
	/* spread nearby seeds apart: xorshift from a small state starts with
	 * outputs whose top bits are all zero */
	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	r->rng = z ? z : 0x9e3779b97f4a7c15ull;
	r->explore_left = r->p.explore_pkts;
}

/* Outside a freeze the valid slots are the n_valid just before head (ACKs
 * append, packets take the oldest), so the oldest is found without a
 * search. */
static uint32_t
oldest(const struct et_reps *r)
{
	return (r->head + r->p.buffer_size - r->n_valid) % r->p.buffer_size;
}

/* Spent (a packet took it), or, pinned, a path congested or lost: the next
 * cached EV takes over. */
static void
drop_oldest(struct et_reps *r)
{
	if (r->n_valid) {
		r->valid[oldest(r)] = false;
		r->n_valid--;
	}
}

static bool
cached(const struct et_reps *r, uint16_t ev)
{
	for (uint32_t k = 1; k <= r->n_valid; k++)
		if (r->ev[(r->head + r->p.buffer_size - k) % r->p.buffer_size] == ev)
			return true;
	return false;
}

uint16_t
et_reps_next(struct et_reps *r, uint64_t now)
{
	uint32_t i;

	thaw(r, now);
	/* an idle connection's cache says where ACKs went long ago; a frozen
	 * one keeps it, as avoiding the failure matters more */
	if (r->p.idle_ns && r->sent && !r->frozen && now >= r->last_tx_ns &&
	    now - r->last_tx_ns >= r->p.idle_ns)
		restart(r);
	r->sent = true;
	r->last_tx_ns = now;

	if (r->explore_left) {
		r->explore_left--;
		return explore(r);
	}
	if (r->frozen) {
		/* nothing to fall back on: exploring is the only way to send */
		if (r->filled == 0)
			return explore(r);
		/* every slot in turn, used or not: a random EV could hit the
		 * failed link, a cached one got through not long ago */
		i = r->frozen_next % r->filled;
		r->frozen_next = (i + 1) % r->filled;
		if (r->valid[i]) {
			r->valid[i] = false;
			r->n_valid--;
		}
		r->recycled++;
		return r->ev[i];
	}
	if (r->n_valid == 0)
		return explore(r);
	i = oldest(r);
	if (!r->p.pinned) /* each good ACK pays for one packet */
		drop_oldest(r);
	r->recycled++;
	return r->ev[i];
}

void
et_reps_on_ack(struct et_reps *r, uint16_t entropy, bool ecn, uint64_t now)
{
	uint32_t size = r->p.buffer_size;

	thaw(r, now);
	if (ecn) {
		/* a congested path: not worth another packet */
		r->ecn_discards++;
		if (r->p.pinned)
			drop_oldest(r);
		return;
	}
	if (r->p.pinned && cached(r, entropy))
		return;
	/* a full buffer overwrites its oldest entry: the newest ACKs say the
	 * most about the paths now.  Frozen connections cache too, so the
	 * cycle follows paths that still deliver. */
	if (!r->valid[r->head])
		r->n_valid++;
	r->ev[r->head] = entropy;
	r->valid[r->head] = true;
	r->head = (r->head + 1) % size;
	if (r->filled < size)
		r->filled++;
	r->cached_acks++;
}

void
et_reps_on_timeout(struct et_reps *r, uint64_t now)
{
	thaw(r, now);
	if (r->p.pinned) {
		drop_oldest(r);
		return;
	}
	/* a timeout while exploring is what exploring risks, not a failure
	 * of the paths it knows, and would freeze each thaw again (the
	 * artifact's rule) */
	if (!r->p.freezing || r->frozen || r->explore_left)
		return;
	r->frozen = true;
	r->freeze_until = now + r->p.freeze_ns;
	r->frozen_count++;
	/* start the cycle at the oldest slot written */
	r->frozen_next = r->filled == r->p.buffer_size ? r->head : 0;
}
