/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "link/et_capture.h"
#include "link/et_egress.h"
#include "wire/et_pfc.h"
#include "base/et_rand.h"

#define BURST 32

ET_CTR_DEFINE(et_egress_ctrs, struct et_egress_stats, ET_EGRESS_COUNTERS);

/* The queue and the flight start this small and double as they fill, up
 * to their most: a ring walks its whole array, and an array sized for the
 * deepest queue would be cold memory at every slot. */
#define FIRST_SLOTS 64
/* The most control frames an egress holds (a NIC's acknowledgements
 * while its data is paused). */
#define CTRL_MAX 4096

/* Double ring a (mask, free-running head and tail) unless it has max
 * slots; false if it cannot grow. */
static bool
grow(struct et_egress_slot **a, uint32_t *mask, uint32_t max, uint32_t head, uint32_t tail)
{
	uint32_t cap = *mask + 1, i;
	struct et_egress_slot *n;

	if (cap >= max || (n = calloc(2 * (size_t)cap, sizeof(*n))) == NULL)
		return false;
	for (i = head; i != tail; i++)
		n[i & (2 * cap - 1)] = (*a)[i & *mask];
	free(*a);
	*a = n;
	*mask = 2 * cap - 1;
	return true;
}

/* Room on the wire for one more frame (growing the flight if need be). */
static inline bool
fly_room(struct et_egress *e)
{
	return e->fly_tail - e->fly_head <= e->fly_mask ||
	       grow(&e->fly, &e->fly_mask, e->fly_max, e->fly_head, e->fly_tail);
}

int
et_egress_init(struct et_egress *e, struct et_port *port,
	       const struct et_link_model *lm, uint32_t qcap)
{
	uint64_t fly;

	memset(e, 0, sizeof(*e));
	if (!rte_is_power_of_2(qcap))
		return -EINVAL;
	e->port = port;
	e->lm = *lm;
	e->rng = lm->seed | 1;
	e->faults = lm->loss_ppm || lm->ge_enter_ppm || lm->corrupt_ppm || lm->dup_ppm ||
		    lm->jitter_ns || lm->flap_period_ns;
	e->flap_is_down = true; /* the first draw brings it up for a while */
	e->q_max = qcap;
	e->q_mask = (qcap < FIRST_SLOTS ? qcap : FIRST_SLOTS) - 1;
	e->q = calloc(e->q_mask + 1, sizeof(*e->q));
	/* room for a link's worth of the smallest frames (ACKs: a 500 ns,
	 * 400 Gbit/s link holds some 280), and at least the queue twice */
	fly = qcap * 2;
	if (lm->rate_bps) {
		uint64_t tx = et_link_tx_ns(lm, 60);

		while (fly < qcap * 2 + lm->latency_ns / (tx ? tx : 1) + 1)
			fly *= 2;
	}
	e->fly_max = (uint32_t)fly;
	e->fly_mask = (fly < FIRST_SLOTS ? (uint32_t)fly : FIRST_SLOTS) - 1;
	e->fly = calloc(e->fly_mask + 1, sizeof(*e->fly));
	/* PAUSE, ARP replies and, on a NIC, the acknowledgements: a few at a
	 * time unless the data is paused for long */
	e->ctrl_max = CTRL_MAX;
	e->ctrl_mask = 8 - 1;
	e->ctrl = calloc(e->ctrl_mask + 1, sizeof(*e->ctrl));
	if (!e->q || !e->fly || !e->ctrl) {
		et_egress_free(e);
		return -ENOMEM;
	}
	return 0;
}

void
et_egress_free(struct et_egress *e)
{
	uint32_t i;

	if (e->q)
		for (i = e->q_head; i != e->q_tail; i++)
			rte_pktmbuf_free(e->q[i & e->q_mask].m);
	if (e->fly)
		for (i = e->fly_head; i != e->fly_tail; i++)
			rte_pktmbuf_free(e->fly[i & e->fly_mask].m);
	if (e->ctrl)
		for (i = e->ctrl_head; i != e->ctrl_tail; i++)
			rte_pktmbuf_free(e->ctrl[i & e->ctrl_mask].m);
	for (i = 0; i < e->pend_n; i++)
		rte_pktmbuf_free(e->pend[i]);
	e->pend_n = 0;
	free(e->q);
	free(e->fly);
	free(e->ctrl);
	e->q = NULL;
	e->fly = NULL;
	e->ctrl = NULL;
}

bool
et_egress_enqueue(struct et_egress *e, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (e->q_tail - e->q_head > e->q_mask &&
	    !grow(&e->q, &e->q_mask, e->q_max, e->q_head, e->q_tail))
		return false;
	e->q[e->q_tail++ & e->q_mask] =
		(struct et_egress_slot){m, rte_pktmbuf_mtod(m, const uint8_t *), 0, len, m->port};
	e->q_bytes += len;
	if (e->q_bytes > e->st.q_max_bytes)
		e->st.q_max_bytes = e->q_bytes;
	return true;
}

bool
et_egress_enqueue_ctrl(struct et_egress *e, struct rte_mbuf *m)
{
	if (e->ctrl_tail - e->ctrl_head > e->ctrl_mask &&
	    !grow(&e->ctrl, &e->ctrl_mask, e->ctrl_max, e->ctrl_head, e->ctrl_tail))
		return false;
	e->ctrl[e->ctrl_tail++ & e->ctrl_mask] = (struct et_egress_slot){
		m, rte_pktmbuf_mtod(m, const uint8_t *), 0, rte_pktmbuf_pkt_len(m), m->port};
	return true;
}

void
et_egress_pause(struct et_egress *e, uint16_t quanta, uint64_t now)
{
	if (e->paused_until > now)
		e->st.paused_ns -= e->paused_until - now;
	e->paused_until = quanta ? now + et_pfc_pause_ns(quanta, e->lm.rate_bps) : 0;
	if (quanta)
		e->st.paused_ns += e->paused_until - now;
}

/* Take the next frame to serialize into *s: control first, then data;
 * under PAUSE only control, and none if ctrl_paused_too.  False if none. */
static bool
next_frame(struct et_egress *e, uint64_t now, struct et_egress_slot *s)
{
	if (now < e->paused_until && (e->ctrl_paused_too || e->ctrl_head == e->ctrl_tail))
		return false;
	if (e->ctrl_head != e->ctrl_tail) {
		*s = e->ctrl[e->ctrl_head++ & e->ctrl_mask];
		return true;
	}
	if (e->q_head == e->q_tail)
		return false;
	*s = e->q[e->q_head++ & e->q_mask];
	e->q_bytes -= s->len;
	if (e->on_dequeue)
		e->on_dequeue(e->ctx, s, now);
	return true;
}

/* A seeded generator decides every fault, so a run replays. */
static inline uint64_t
draw(struct et_egress *e)
{
	return et_rand_next(&e->rng);
}

static inline bool
chance(struct et_egress *e, uint32_t ppm)
{
	return et_rand_ppm(&e->rng, ppm);
}

/* A flapping link goes down and up for random stretches (uniform around
 * their means): strictly periodic flaps would lock onto a fixed RTO and
 * lose every retransmission of a packet they once caught. */
static bool
flapped_down(struct et_egress *e, uint64_t now)
{
	const struct et_link_model *lm = &e->lm;

	while (now >= e->flap_next) {
		uint64_t mean = e->flap_is_down ? lm->flap_period_ns - lm->flap_down_ns
						: lm->flap_down_ns;

		e->flap_is_down = !e->flap_is_down;
		e->flap_next += 1 + (mean ? draw(e) % (2 * mean) : 0);
	}
	return e->flap_is_down;
}

/* Lost on the wire (random, bursty, or a flapping link down)?  Freed and
 * counted if so. */
static bool
lost(struct et_egress *e, struct rte_mbuf *m, uint64_t now)
{
	const struct et_link_model *lm = &e->lm;
	uint64_t *why = NULL;

	if (lm->flap_period_ns && flapped_down(e, now))
		why = &e->st.flap_drops;
	else if (chance(e, lm->loss_ppm))
		why = &e->st.loss_drops;
	else if (lm->ge_enter_ppm) {
		if (e->ge_bad ? chance(e, lm->ge_exit_ppm) : chance(e, lm->ge_enter_ppm))
			e->ge_bad = !e->ge_bad;
		if (e->ge_bad && chance(e, lm->ge_loss_ppm))
			why = &e->st.burst_drops;
	}
	if (why == NULL)
		return false;
	rte_pktmbuf_free(m);
	(*why)++;
	return true;
}

/* Flip one bit of a RoCEv2 frame somewhere past its BTH (headers a switch
 * checks stay intact, so the endpoint's ICRC check is what must catch it). */
static void
corrupt(struct et_egress *e, struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), from;

	if (len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
		return; /* not IPv4: PAUSE frames are spared */
	from = 14 + (uint32_t)(f[14] & 0x0f) * 4 + 8 + 12;
	if (from >= len)
		return;
	f[from + draw(e) % (len - from)] ^= (uint8_t)(1u << (draw(e) % 8));
	e->st.corrupted++;
}

/* Into the flight, kept in order of arrival (jitter reorders). */
static void
fly_insert(struct et_egress *e, const struct et_egress_slot *s, uint64_t at)
{
	uint32_t i = e->fly_tail++;

	while (i != e->fly_head && e->fly[(i - 1) & e->fly_mask].at > at) {
		e->fly[i & e->fly_mask] = e->fly[(i - 1) & e->fly_mask];
		i--;
	}
	e->fly[i & e->fly_mask] = *s;
	e->fly[i & e->fly_mask].at = at;
}

/* Hand frames to the port; what it refuses stays for the next call.
 * len: their lengths; at: in virtual time, when each arrives (NULL: now,
 * the real clock's wire). */
static uint32_t
push(struct et_egress *e, struct rte_mbuf **m, const uint32_t *len, const struct et_arrival *at,
     uint32_t n, uint64_t now)
{
	uint32_t sent = 0, i;

	if (e->failed && !at) {
		for (i = 0; i < n; i++)
			rte_pktmbuf_free(m[i]);
		e->st.fail_drops += n;
		return n;
	}
	sent = et_port_tx(e->port, m, (uint16_t)n);
	if (e->cap)
		for (i = 0; i < sent; i++)
			et_capture_frames(e->cap, m + i, 1, true, at ? at[i].at : now);
	for (i = 0; i < sent; i++)
		e->st.tx_bytes += len[i];
	e->st.tx_pkts += sent;
	if (sent && e->arrive.fn)
		e->arrive.fn(e->arrive.ctx, e->arrive.node, &e->arrive.hint, at, sent);
	if (sent < n)
		e->st.port_busy++;
	return sent;
}

static uint32_t
run_wire(struct et_egress *e, uint64_t now)
{
	struct rte_mbuf *burst[BURST];
	uint32_t len[BURST], n, sent, moved = 0;

	if (e->pend_n) {
		sent = push(e, e->pend, e->pend_len, NULL, e->pend_n, now);
		e->pend_n -= sent;
		memmove(e->pend, e->pend + sent, e->pend_n * sizeof(e->pend[0]));
		memmove(e->pend_len, e->pend_len + sent, e->pend_n * sizeof(e->pend_len[0]));
		moved += sent;
		if (e->pend_n)
			return moved;
	}
	for (;;) {
		struct et_egress_slot s;

		/* a real NIC's wire: no serialization or jitter to model, but
		 * frames can still be lost, corrupted or doubled on the way out */
		n = 0;
		while (n < BURST - 1 && next_frame(e, now, &s)) {
			if (lost(e, s.m, now))
				continue;
			if (chance(e, e->lm.corrupt_ppm))
				corrupt(e, s.m);
			len[n] = s.len;
			burst[n++] = s.m;
			if (chance(e, e->lm.dup_ppm) &&
			    (burst[n] = rte_pktmbuf_copy(s.m, s.m->pool, 0, UINT32_MAX)) != NULL) {
				len[n++] = s.len;
				e->st.duplicated++;
			}
		}
		if (n == 0)
			return moved;
		sent = push(e, burst, len, NULL, n, now);
		moved += sent;
		if (sent < n) {
			e->pend_n = n - sent;
			memcpy(e->pend, burst + sent, e->pend_n * sizeof(burst[0]));
			memcpy(e->pend_len, len + sent, e->pend_n * sizeof(len[0]));
			return moved;
		}
	}
}

uint32_t
et_egress_run(struct et_egress *e, uint64_t now)
{
	struct rte_mbuf *burst[BURST];
	uint32_t len[BURST], moved = 0, n, sent, i;
	struct et_arrival arrive[BURST];
	uint64_t at, lead;

	if (e->lm.rate_bps == 0)
		return run_wire(e, now);
	/* serialize: one frame at a time, back to back while the wire is free */
	while (e->busy_until <= now && fly_room(e)) {
		/* an idle wire starts now, a busy one when it is free */
		uint64_t start_ps = e->busy_ps > now * 1000 ? e->busy_ps : now * 1000;
		struct et_egress_slot s;

		if (!next_frame(e, now, &s))
			break;
		/* in picoseconds: whole nanoseconds per frame would run a
		 * 400 Gbit/s link half a percent slow (83.56 ns -> 84 ns) */
		e->busy_ps = start_ps + et_link_tx_ps(&e->lm, s.len);
		e->busy_until = (e->busy_ps + 999) / 1000;
		moved++;
		at = e->busy_until + e->lm.latency_ns;
		if (likely(!e->faults)) {
			fly_insert(e, &s, at);
			continue;
		}
		if (lost(e, s.m, start_ps / 1000))
			continue; /* it took its time on the wire all the same */
		if (e->lm.jitter_ns)
			at += draw(e) % (e->lm.jitter_ns + 1);
		if (chance(e, e->lm.corrupt_ppm))
			corrupt(e, s.m);
		fly_insert(e, &s, at);
		if (chance(e, e->lm.dup_ppm) && fly_room(e)) {
			struct et_egress_slot c = s;

			c.m = rte_pktmbuf_copy(s.m, s.m->pool, 0, UINT32_MAX);
			if (c.m) {
				fly_insert(e, &c, at + 1);
				e->st.duplicated++;
			}
		}
	}
	/* deliver what has crossed the link; in virtual time, hand over what
	 * has left it (see struct et_arrival_hook) */
	lead = e->arrive.fn ? e->lm.latency_ns : 0;
	while (e->fly_head != e->fly_tail) {
		struct et_egress_slot *s = &e->fly[e->fly_head & e->fly_mask];

		if (s->at > now + lead)
			break;
		if (lead && s->at >= e->down_from && s->at < e->down_until) {
			rte_pktmbuf_free(s->m); /* it would arrive on a dead link */
			s->m = NULL;
			e->fly_head++;
			e->st.fail_drops++;
			moved++;
			continue;
		}
		for (n = 0; n < BURST && e->fly_head + n != e->fly_tail; n++) {
			s = &e->fly[(e->fly_head + n) & e->fly_mask];
			if (s->at > now + lead || (lead && s->at >= e->down_from && s->at < e->down_until))
				break;
			burst[n] = s->m;
			len[n] = s->len;
			arrive[n] = (struct et_arrival){s->at, s->head, s->len};
			if (lead)
				continue;
			/* the far end reads it soon, likely in this very pass:
			 * start the misses now (lines a switch and a NIC read) */
			rte_prefetch0(s->m);
			rte_prefetch0(s->head);
			rte_prefetch0(s->head + s->len - 1);
		}
		sent = push(e, burst, len, lead ? arrive : NULL, n, now);
		for (i = 0; i < sent; i++)
			e->fly[e->fly_head++ & e->fly_mask].m = NULL;
		moved += sent;
		if (sent < n)
			break;
	}
	return moved;
}

uint64_t
et_egress_next_event(const struct et_egress *e, uint64_t now)
{
	uint64_t t = UINT64_MAX;

	if (e->pend_n)
		return now;
	if (e->fly_head != e->fly_tail)
		t = e->fly[e->fly_head & e->fly_mask].at - (e->arrive.fn ? e->lm.latency_ns : 0);
	/* a full flight starts nothing before its head arrives */
	if ((e->ctrl_head != e->ctrl_tail || e->q_head != e->q_tail) &&
	    e->fly_tail - e->fly_head < e->fly_max) {
		uint64_t start = e->busy_until;

		if ((e->ctrl_paused_too || e->ctrl_head == e->ctrl_tail) && e->paused_until > start)
			start = e->paused_until;
		if (e->lm.rate_bps == 0)
			start = now;
		if (start < t)
			t = start;
	}
	return t;
}
