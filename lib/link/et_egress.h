/* SPDX-License-Identifier: BSD-3-Clause
 * One egress: a queue of packets waiting for the wire, and the link model
 * that puts them on it.  With a rate, a packet starts when the previous one
 * has been serialized (bits / rate) and reaches the port, that is the far
 * end of the link, one propagation latency after its last bit left; in
 * "wire" mode (rate 0, for real NICs) packets go to the port as they come.
 * Time is whatever now_ns the caller passes: the TSC in real time or the
 * fabric's virtual clock; et_egress_next_event() says when to call again.
 */
#ifndef ET_EGRESS_H
#define ET_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "base/et_counters.h"
#include "link/et_port.h"
#include "wire/et_wire.h"

struct et_capture;

struct et_link_model {
	uint64_t rate_bps;    /* 0: wire, no model */
	uint64_t latency_ns;  /* propagation */
	uint32_t loss_ppm;    /* random loss, parts per million (seeded) */
	uint64_t seed;
	/* faults, all seeded from seed so a run replays exactly (rate > 0) */
	uint32_t ge_enter_ppm;   /* Gilbert-Elliott: good -> bad, per frame */
	uint32_t ge_exit_ppm;    /* bad -> good, per frame */
	uint32_t ge_loss_ppm;    /* loss while bad */
	uint32_t corrupt_ppm;    /* one bit flipped past the BTH: the ICRC catches it */
	uint32_t dup_ppm;        /* the frame arrives twice */
	uint64_t jitter_ns;      /* extra delay, uniform in [0, jitter]: reordering */
	uint64_t flap_period_ns; /* a flapping link: one down and one up stretch take this */
	uint64_t flap_down_ns;   /* long on average, the down ones flap_down_ns */
};

#define ET_EGRESS_COUNTERS(X, A) \
	X(tx_pkts, INFO, "frames handed to the port") \
	X(tx_bytes, INFO, "bytes handed to the port") \
	X(q_max_bytes, MAX, "deepest queue seen, bytes") \
	X(port_busy, INFO, "times the port refused a burst") \
	X(fail_drops, DROP, "dropped: the link is failed") \
	X(loss_drops, FAULT, "dropped by the random loss model") \
	X(burst_drops, FAULT, "dropped in a Gilbert-Elliott bad state") \
	X(flap_drops, FAULT, "sent while a flapping link was down") \
	X(corrupted, INFO, "bits flipped by the fault model, still delivered") \
	X(duplicated, MADE, "copies made by the fault model") \
	X(paused_ns, INFO, "time spent paused by PFC, ns")

struct et_egress_stats {
	ET_EGRESS_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_egress_ctrs;

/* Where the far end of a link learns that frames are on their way: its
 * port (et_port_expect), that port's next arrival and its node's (the
 * earliest of its ports'), all owned by the receiving node (node NULL:
 * one port). */
struct et_rx_hint {
	struct et_port *port;
	uint64_t *port_next;
	uint64_t *node_next;
};

static inline int
et_rx_hint_apply(const struct et_rx_hint *h, const struct et_arrival *a, uint32_t n)
{
	if (a[0].at < *h->port_next)
		*h->port_next = a[0].at;
	if (h->node_next && a[0].at < *h->node_next)
		*h->node_next = a[0].at;
	return et_port_expect(h->port, a, n);
}

/* Virtual time: frames are handed to the port when their last bit has
 * left, one latency before they arrive; fn tells the far end's scheduler
 * (node) of each of a burst (a[0..n), in order of arrival).  That the far
 * end learns of a frame a latency ahead is what lets nodes run apart, on
 * other lcores, for a window as long as the shortest latency.  fn NULL:
 * frames go to the port when they arrive (the real clock). */
struct et_arrival_hook {
	void (*fn)(void *ctx, uint32_t node, const struct et_rx_hint *hint,
		   const struct et_arrival *a, uint32_t n);
	void *ctx;
	uint32_t node;
	struct et_rx_hint hint;
};

/* A frame in the queue or on the wire, with what the link needs of it:
 * its mbuf is not touched again until the far end reads it (at a fabric's
 * scale every touch of a frame that waited is a cache miss). */
struct et_egress_slot {
	struct rte_mbuf *m;
	const uint8_t *head; /* its first byte */
	uint64_t at;   /* on the wire: when it reaches the far end */
	uint32_t len;  /* pkt_len */
	uint16_t port; /* m->port when it was queued: the switch's ingress */
};

/* Laid out for a fabric too big for the caches, where each egress is cold
 * whenever it is looked at: what every frame needs sits in its first
 * lines, the fault model and the rare arrays after. */
struct et_egress {
	/* waiting: FIFO of frames; ctrl: control frames (PFC) that jump it */
	struct et_egress_slot *q;
	uint32_t q_mask, q_head, q_tail;
	uint32_t q_max;        /* what q may grow to (it starts small) */
	uint64_t q_bytes;
	/* on the wire, in order of arrival */
	struct et_egress_slot *fly;
	uint32_t fly_mask, fly_head, fly_tail;
	uint32_t fly_max;
	uint32_t pend_n;
	/* second line */
	uint64_t busy_until;   /* the wire is serializing until then */
	uint64_t busy_ps;      /* the same, exactly */
	uint64_t paused_until; /* PFC: no new data starts before then */
	struct et_port *port;
	/* told of every data frame leaving the queue (buffer accounting) */
	void (*on_dequeue)(void *ctx, const struct et_egress_slot *s, uint64_t now);
	void *ctx;
	struct et_capture *cap;  /* records frames handed to the port */
	bool failed;           /* everything sent is lost */
	bool faults;           /* the model has any: loss, corruption, ... */
	bool ge_bad;           /* Gilbert-Elliott state */
	bool flap_is_down;     /* a flapping link: its state, until flap_next */
	struct et_arrival_hook arrive;
	/* a failure known in advance: frames arriving in [down_from,
	 * down_until) are lost (handed over early, they are judged by when
	 * they would arrive) */
	uint64_t down_from, down_until;
	struct et_link_model lm;
	struct et_egress_stats st;
	uint64_t rng;          /* fault model state */
	uint64_t flap_next;
	/* control frames: ahead of the data, outside the buffer, not
	 * paused unless ctrl_paused_too (grows like q, up to ctrl_max) */
	struct et_egress_slot *ctrl;
	uint32_t ctrl_mask, ctrl_head, ctrl_tail, ctrl_max;
	/* a PAUSE holds the control frames too: on a NIC they are its
	 * acknowledgements, of the data's own class, only served first */
	bool ctrl_paused_too;
	/* wire mode: frames the port refused, held as a full TX ring holds them
	 * (they have left the queue and its buffer) and sent first next time */
	struct rte_mbuf *pend[32];
	uint32_t pend_len[32];
};

/* qcap: packets the queue holds (power of 2). */
int et_egress_init(struct et_egress *e, struct et_port *port,
		   const struct et_link_model *lm, uint32_t qcap);
void et_egress_free(struct et_egress *e);

/* Queue a packet; false when the queue is full (the caller drops it). */
bool et_egress_enqueue(struct et_egress *e, struct rte_mbuf *m);

/* Queue a control frame ahead of the data (not paused unless
 * ctrl_paused_too); false when the control queue is full. */
bool et_egress_enqueue_ctrl(struct et_egress *e, struct rte_mbuf *m);

/* Control frames the egress still takes. */
static inline uint32_t
et_egress_ctrl_room(const struct et_egress *e)
{
	return e->ctrl_max - (e->ctrl_tail - e->ctrl_head);
}

/* A PAUSE/PFC frame arrived for this egress: no new data starts for
 * quanta x 512 bit times (0: resume now). */
void et_egress_pause(struct et_egress *e, uint16_t quanta, uint64_t now);

/* Advance to now: start serializations, deliver arrivals.  Returns the
 * number of packets that moved (0: nothing to do now). */
uint32_t et_egress_run(struct et_egress *e, uint64_t now);

/* The next time et_egress_run() has work; UINT64_MAX if none. */
uint64_t et_egress_next_event(const struct et_egress *e, uint64_t now);

/* Mix a link's identity into its model's seed: every link its own draws. */
static inline uint64_t
et_link_seed(uint64_t seed, uint64_t link)
{
	uint64_t x = seed ^ (link + 1) * 0x9e3779b97f4a7c15ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static inline uint64_t
mac_id(const struct rte_ether_addr *mac)
{
	uint64_t x = 0;

	for (int i = 0; i < RTE_ETHER_ADDR_LEN; i++)
		x = x << 8 | mac->addr_bytes[i];
	return x;
}

/* Serialization time of len bytes (with preamble, IFG and FCS, as a real
 * Ethernet wire counts them). */
static inline uint64_t
et_link_tx_ns(const struct et_link_model *lm, uint32_t len)
{
	uint64_t bits = (uint64_t)(len + ET_ETH_WIRE_EXTRA) * 8;

	return lm->rate_bps ? (bits * 1000000000ull + lm->rate_bps - 1) / lm->rate_bps : 0;
}

static inline uint64_t
et_link_tx_ps(const struct et_link_model *lm, uint32_t len)
{
	uint64_t bits = (uint64_t)(len + ET_ETH_WIRE_EXTRA) * 8;
	return lm->rate_bps ? (bits * 1000000000000ull + lm->rate_bps - 1) / lm->rate_bps : 0;
}

static inline uint32_t
et_egress_qlen(const struct et_egress *e)
{
	return e->q_tail - e->q_head;
}

/* Every frame the egress holds: queued, control, on the wire, refused by
 * the port (control path: a run's accounting). */
static inline uint32_t
et_egress_held(const struct et_egress *e)
{
	return (e->q_tail - e->q_head) + (e->ctrl_tail - e->ctrl_head) +
	       (e->fly_tail - e->fly_head) + e->pend_n;
}

#endif /* ET_EGRESS_H */
