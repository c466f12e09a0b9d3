/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's insides, shared by its two halves: et_cm.c (life cycle, the
 * consumer's calls, what leaves, timers) and et_cm_input.c (the MADs that
 * come in).  Private to lib/cm and its tests.
 */
#ifndef ET_CM_PRIV_H
#define ET_CM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "cm/et_cm.h"
#include "cm/et_cm_table_priv.h"

struct et_cm_conn {
	uint32_t idx;           /* its slot in the table */
	enum et_cm_state state;
	bool released;          /* the consumer let go: no more events */
	uint32_t n_events;      /* its events in the ring, not yet polled */
	uint32_t last_ev;       /* the ring position of the last of them */
	void *ctx;
	uint32_t local_id, remote_id;
	uint64_t remote_guid;
	uint32_t peer_ip;
	uint64_t service_id;
	uint64_t tid;           /* the REQ's: its REP, RTU, MRA, REJ carry it */
	uint32_t local_qpn, remote_qpn;
	uint32_t remote_psn;    /* the first PSN the peer sends */
	uint64_t timeout_ns;    /* before msg is sent again */
	uint8_t max_retries, retries_left;
	uint8_t msg[ET_MAD_LEN]; /* what we send again, or answer again */
	uint16_t msg_attr;      /* its attribute; 0: none */
};

struct et_cm {
	struct et_cm_conf conf;
	uint64_t rng;
	uint32_t id_mask;       /* local IDs are (gen << 16 | slot) ^ id_mask */
	uint32_t tid_hi;
	struct et_cm_table t;   /* connections by ID, listeners, timers */
	struct et_token_bucket answers;
	struct et_cm_out *out;
	uint32_t out_head, out_tail, out_cap;
	struct et_cm_event *ev;
	uint32_t ev_head, ev_tail, ev_cap;
	struct et_cm_stats st;
	/* REQs waiting for their listener (conf.req_hold_ns), in arrival order */
	struct et_cm_held {
		struct et_cm_msg m;
		uint32_t src_ip;
		uint64_t until;
	} held[ET_CM_HELD_MAX];
	uint32_t n_held;
	bool held_recheck;      /* a listener came: the held REQs looked at again */
};

/* The held REQs: a listener's given to it, the rest refused at their
 * time (et_cm_input.c). */
void et_cm_held_run(struct et_cm *cm, uint64_t now);

/* ---- connections: the table's look-ups ---- */

/* Ours by the ID we gave it (a MAD's remote communication ID). */
static inline struct et_cm_conn *
et_cm_find_local(const struct et_cm *cm, uint32_t id)
{
	struct et_cm_conn *c = et_cm_table_conn(&cm->t, (id ^ cm->id_mask) & 0xffff);

	return c && c->local_id == id ? c : NULL;
}

/* The one the peer knows by its ID (a REQ's local communication ID): a
 * passive side's from its REQ on, an active side's from the REP on. */
static inline struct et_cm_conn *
et_cm_find_remote(const struct et_cm *cm, uint32_t remote_id, uint64_t guid)
{
	return et_cm_table_find_remote(&cm->t, guid, remote_id);
}

/* c's peer calls it remote_id (from its CA guid) */
static inline void
et_cm_set_remote(struct et_cm *cm, struct et_cm_conn *c, uint32_t remote_id, uint64_t guid)
{
	c->remote_id = remote_id;
	c->remote_guid = guid;
	et_cm_table_set_remote(&cm->t, c->idx, guid, remote_id);
}

/* c's timer at at (UINT64_MAX: none): one per connection, in the table's heap */
static inline void
et_cm_arm(struct et_cm *cm, struct et_cm_conn *c, uint64_t at)
{
	et_cm_table_arm(&cm->t, c->idx, at);
}

static inline void
et_cm_disarm(struct et_cm *cm, struct et_cm_conn *c)
{
	et_cm_table_arm(&cm->t, c->idx, UINT64_MAX);
}

/* ---- in et_cm.c ---- */

/* A connection in a free slot, its IDs made; NULL when none is free. */
struct et_cm_conn *et_cm_conn_new(struct et_cm *cm);
void et_cm_conn_free(struct et_cm *cm, struct et_cm_conn *c);

/* A MAD for QP 1 of dst_ip to the outbox (counted in tx_mads or tx_full). */
void et_cm_out_push(struct et_cm *cm, uint32_t dst_ip, const uint8_t *mad);
/* A new event of c's of type t, for the caller to fill; NULL when there is
 * none to fill (c let go, no memory). */
struct et_cm_event *et_cm_event_new(struct et_cm *cm, struct et_cm_conn *c,
				    enum et_cm_event_type t);
/* e's private data (e may be NULL). */
void et_cm_event_pdata(struct et_cm_event *e, const uint8_t *p, uint16_t len);

/* m built into c->msg and sent: what c answers again, or sends again
 * after timeout_ns (0: no timer). */
void et_cm_send_keep(struct et_cm *cm, struct et_cm_conn *c, const struct et_cm_msg *m,
		     uint64_t now, uint64_t timeout_ns);
/* An answer to a MAD of no connection of ours, within the rate limit. */
void et_cm_answer_unknown(struct et_cm *cm, uint32_t dst_ip, const struct et_cm_msg *m,
			  uint64_t now);
void et_cm_rej_init(struct et_cm_msg *m, uint64_t tid, uint32_t local, uint32_t remote,
		    uint8_t kind, uint16_t reason);
/* The REJ that ends c (closed). */
void et_cm_conn_reject(struct et_cm *cm, struct et_cm_conn *c, uint16_t reason,
		       const void *pdata, uint16_t len, uint64_t now);
/* Closed: freed at once if the consumer let go, else when it does. */
void et_cm_conn_closed(struct et_cm *cm, struct et_cm_conn *c);
void et_cm_timewait(struct et_cm *cm, struct et_cm_conn *c, uint64_t now);
/* Established: the timer off, the event out with private data. */
void et_cm_establish(struct et_cm *cm, struct et_cm_conn *c, const uint8_t *pdata,
		     uint16_t len);

#endif /* ET_CM_PRIV_H */
