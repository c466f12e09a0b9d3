/* SPDX-License-Identifier: BSD-3-Clause
 * The InfiniBand Communication Manager (IBTA vol. 1 ch. 12), sans I/O: the
 * states of RC connections, both the active side (REQ, then RTU on the
 * REP) and the passive one (a listener's REQ, REP, RTU), rejects, MRA,
 * DREQ/DREP and time wait; timeouts and retries of every MAD that waits
 * for an answer, as the REQ's response timeouts and max CM retries say;
 * a duplicate answered again (a repeated REQ gets the REP again, a
 * repeated REP the RTU, a repeated DREQ the DREP).  And service ID
 * resolution (SIDR, 12.11) for UD QPs: a SIDR_REQ to a listener, its
 * SIDR_REP with the QPN and Q_Key, retried as a REQ is; the answer kept a
 * time wait for a request that comes again.  With RDMA CM's IP
 * addressing on top: service IDs of the TCP port space and the rdma_cm
 * header in a REQ's private data.
 *
 * It takes MADs (et_cm_input) and now_ns, and hands back MADs to send
 * (et_cm_pop_out: 256 bytes for QP 1 of an IPv4 address), events for the
 * consumer (et_cm_poll_event) and a deadline (et_cm_deadline, then
 * et_cm_timer).  It never touches a port, a clock or a QP: host/et_rdmacm
 * puts its MADs on the wire and binds QPs.  Nothing is global: a process
 * may hold any number of CMs, each up to ET_CM_MAX_CONNS connections; a
 * MAD, a timer or a call costs the same whether a CM holds ten or tens of
 * thousands (its tables: cm/et_cm_table_priv.h).
 */
#ifndef ET_CM_H
#define ET_CM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/et_counters.h"
#include "base/et_token_bucket.h"
#include "cm/et_mad.h"

/* Most connections one CM holds (a local communication ID carries the slot
 * in 16 bits). */
#define ET_CM_MAX_CONNS 65536u

struct et_cm_conf {
	uint32_t ip;             /* ours: GIDs and rdma_cm headers name it */
	uint64_t ca_guid;        /* ours: the REQ's and REP's local CA GUID */
	uint64_t seed;           /* communication IDs, transaction IDs */
	uint32_t max_conns;      /* 1 .. ET_CM_MAX_CONNS */
	/* How long we may take to answer (4.096 us << n): both response
	 * timeouts of our REQ; the peer resends after it. */
	uint8_t response_timeout;
	uint8_t packet_life;     /* a MAD's one-way life (4.096 us << n) */
	uint8_t max_cm_retries;  /* 0 .. 15: our REQ and DREQ, and what our REQ asks */
	uint8_t mra_timeout;     /* the service timeout our MRA asks for */
	uint64_t timewait_ns;    /* a closed connection answers its DREQs so long */
	/* what answers the unknown on its own (a REJ to a stray REP, a DREP to
	 * a stray DREQ) at most once per this many ns, bursts of answer_burst */
	uint64_t answer_gap_ns;
	uint32_t answer_burst;
	/* a REQ for a service ID nobody listens on waits so long for its
	 * listener before the REJ (0: refused at once): a program that listens
	 * just after telling its peer to connect (perftest -R's server, after
	 * the sync on its first connection) is not refused for a scheduling
	 * gap.  At most ET_CM_HELD_MAX wait at once; more are refused. */
	uint64_t req_hold_ns;
};

#define ET_CM_HELD_MAX 16

/* Defaults: as many connections as a CM holds (ET_CM_MAX_CONNS; its tables
 * grow with the connections made), response timeout 16 (268 ms), packet
 * life 12 (17 ms), 7 retries, MRA 20 (4.3 s), time wait 500 ms, 100 stray
 * answers a second, a REQ held 100 ms for its listener. */
void et_cm_conf_default(struct et_cm_conf *c);

enum et_cm_state {
	ET_CMS_IDLE,
	ET_CMS_REQ_SENT,      /* active: REQ out, waiting for REP */
	ET_CMS_MRA_REQ_RCVD,  /* active: the peer asked for more time */
	ET_CMS_REQ_RCVD,      /* passive: the consumer decides */
	ET_CMS_MRA_REQ_SENT,  /* passive: we asked for more time */
	ET_CMS_REP_SENT,      /* passive: REP out, waiting for RTU */
	ET_CMS_MRA_REP_RCVD,  /* passive: the peer asked for more time */
	ET_CMS_ESTABLISHED,
	ET_CMS_DREQ_SENT,
	ET_CMS_TIMEWAIT,      /* closed; a repeated DREQ still gets its DREP
			       * (a repeated SIDR_REQ its SIDR_REP) */
	ET_CMS_CLOSED,        /* rejected, unreachable or out of time wait */
	ET_CMS_SIDR_REQ_SENT, /* active: SIDR_REQ out, waiting for SIDR_REP */
	ET_CMS_SIDR_REQ_RCVD, /* passive: the consumer decides */
};

const char *et_cm_state_name(enum et_cm_state s);

enum et_cm_event_type {
	ET_CM_EV_CONNECT_REQUEST, /* passive: a REQ for a listener */
	ET_CM_EV_ESTABLISHED,     /* active: REP in, RTU out; passive: RTU in */
	ET_CM_EV_REJECTED,        /* the peer's REJ */
	ET_CM_EV_UNREACHABLE,     /* REQ or REP sent max CM retries + 1 times, unanswered */
	ET_CM_EV_DISCONNECTED,    /* DREQ in (DREP out), DREP in, or DREQ unanswered */
	ET_CM_EV_SIDR_REPLY,      /* active SIDR: the SIDR_REP (status in reason) */
};

const char *et_cm_event_name(enum et_cm_event_type t);

struct et_cm_conn;

/* An event; its private data is a copy (the consumer's part: after the
 * rdma_cm header in a REQ, the whole field otherwise). */
struct et_cm_event {
	enum et_cm_event_type type;
	struct et_cm_conn *conn;
	void *ctx;                /* the connection's; a request: the listener's */
	uint64_t service_id;
	uint32_t peer_ip;         /* a request: the rdma_cm header's source */
	uint16_t peer_port;       /* a request: the rdma_cm header's source port */
	/* a request and an active ESTABLISHED: the peer's QP, and its
	 * Starting PSN: what the peer's receive queue expects, so the first
	 * PSN our QP sends (Linux's CM reads it so) */
	uint32_t peer_qpn, peer_psn;
	uint32_t mtu;             /* a request: the path MTU, bytes */
	uint8_t responder_resources, initiator_depth; /* ours, from the peer's view */
	uint8_t retry_count, rnr_retry_count;
	uint16_t reason;          /* REJECTED: enum et_cm_rej_reason; SIDR_REPLY:
				   * enum et_cm_sidr_status */
	bool sidr;                /* a request: a SIDR_REQ (a UD QP is asked for) */
	uint32_t qkey;            /* SIDR_REPLY: the peer's Q_Key (peer_qpn its QP) */
	uint16_t pdata_len;
	uint8_t pdata[ET_CM_PDATA_MAX];
};

/* An active side's connection. */
struct et_cm_connect_param {
	uint32_t dst_ip;
	uint64_t service_id;      /* et_rdma_service_id(ET_RDMA_PS_TCP, port) */
	uint16_t src_port;        /* the rdma_cm header's (an IP service ID) */
	uint32_t qpn;             /* our QP */
	uint32_t psn;             /* the first PSN our QP expects: the peer sends from it */
	uint32_t mtu;             /* path MTU, bytes */
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count; /* 0 .. 7 */
	const void *pdata;        /* after the rdma_cm header: up to
				   * ET_CMA_REQ_PDATA bytes (ET_CM_REQ_PDATA
				   * for a service ID of no IP space) */
	uint16_t pdata_len;
};

/* An active side's SIDR request. */
struct et_cm_sidr_param {
	uint32_t dst_ip;
	uint64_t service_id;      /* et_rdma_service_id(ET_RDMA_PS_UDP, port) */
	uint16_t src_port;        /* the rdma_cm header's (an IP service ID) */
	const void *pdata;        /* after the rdma_cm header: up to
				   * ET_CM_SIDR_REQ_PDATA - ET_CMA_HDR_LEN bytes */
	uint16_t pdata_len;
};

/* A passive side's answer to a request. */
struct et_cm_accept_param {
	uint32_t qpn, psn;        /* as et_cm_connect_param's (SIDR: the QPN only) */
	uint32_t qkey;            /* SIDR: our UD QP's */
	uint8_t responder_resources, initiator_depth;
	uint8_t rnr_retry_count;
	uint8_t target_ack_delay;
	const void *pdata;        /* up to ET_CM_REP_PDATA bytes (SIDR:
				   * ET_CM_SIDR_REP_PDATA) */
	uint16_t pdata_len;
};

/* Frames are counted by the NIC; these are the CM's own figures. */
#define ET_CM_COUNTERS(X, A) \
	X(rx_mads, INFO, "CM MADs taken in") \
	A(rx_bad, INFO, ET_MAD_E_COUNT, et_mad_err_name, "rx_bad_mad", "MADs refused, by parse error") \
	X(tx_mads, INFO, "CM MADs handed out to send") \
	X(tx_retries, INFO, "REQ, REP or DREQ sent again after its timeout") \
	X(tx_full, INFO, "MADs not handed out: no memory for the outbox (a retry sends them)") \
	X(rx_dups, INFO, "repeated REQ, REP, RTU or DREQ (answered again where they want one)") \
	X(mra_sent, INFO, "MRAs sent: a repeated REQ while the consumer decides") \
	X(mra_rcvd, INFO, "MRAs taken: the peer asked for more time") \
	X(req_no_listener, INFO, "REQs for a service ID nobody listens on (REJ invalid service ID)") \
	X(req_held, INFO, "REQs that waited for their listener (req_hold_ns)") \
	X(req_bad_pdata, INFO, "REQs whose rdma_cm header is garbage (REJ consumer)") \
	X(req_bad_param, INFO, "REQs we cannot take: not RC, bad MTU, not our GID (REJ)") \
	X(req_no_room, INFO, "REQs beyond max_conns (REJ no resources)") \
	X(req_stale, INFO, "REQs of a connection in time wait (REJ stale connection)") \
	X(rej_sent, INFO, "REJs sent") \
	X(rej_rcvd, INFO, "REJs taken for a connection of ours") \
	X(rep_unknown, INFO, "REPs for no REQ of ours (REJ invalid communication ID)") \
	X(dreq_unknown, INFO, "DREQs for no connection of ours (DREP, as Linux)") \
	X(dreq_bad_qpn, INFO, "DREQs naming another QP than the connection's: dropped") \
	X(sidr_unknown, INFO, "SIDR_REPs for no SIDR_REQ of ours: dropped") \
	X(stray, INFO, "MADs for no connection, or out of place in its state: dropped") \
	X(answers_limited, INFO, "answers to the unknown not sent: over the rate limit") \
	X(established, INFO, "connections established") \
	X(unreachable, INFO, "connections given up: REQ or REP unanswered") \
	X(disconnected, INFO, "connections closed by DREQ/DREP") \
	X(events_lost, INFO, "events not queued: no memory (the consumer did not poll)")

struct et_cm_stats {
	ET_CM_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_cm_ctrs;

/* A MAD to send: to QP 1 of dst_ip. */
struct et_cm_out {
	uint32_t dst_ip;
	uint8_t mad[ET_MAD_LEN];
};

struct et_cm;

/* NULL on a bad conf or no memory. */
struct et_cm *et_cm_create(const struct et_cm_conf *c);
void et_cm_destroy(struct et_cm *cm);

/* Take REQs for service_id (connect requests go to ctx's events).
 * 0, -EADDRINUSE or -ENOMEM. */
int et_cm_listen(struct et_cm *cm, uint64_t service_id, void *ctx);
/* Pending requests stay; new ones are rejected.  0 or -ENOENT. */
int et_cm_unlisten(struct et_cm *cm, uint64_t service_id);

/* Send a REQ.  NULL with *err: -EINVAL (a parameter), -ENOSPC (no slot). */
struct et_cm_conn *et_cm_connect(struct et_cm *cm, const struct et_cm_connect_param *p,
				 void *ctx, uint64_t now, int *err);

/* Send a SIDR_REQ: a SIDR_REPLY event follows (or UNREACHABLE when its
 * retries run out).  NULL with *err: -EINVAL (a parameter), -ENOSPC. */
struct et_cm_conn *et_cm_sidr_request(struct et_cm *cm, const struct et_cm_sidr_param *p,
				      void *ctx, uint64_t now, int *err);

/* A request (CONNECT_REQUEST) answered: REP, or REJ (consumer reject, with
 * private data of up to ET_CM_REJ_PDATA bytes); a SIDR request: its
 * SIDR_REP, success or reject.  0, -EINVAL (not a pending request, a
 * parameter). */
int et_cm_accept(struct et_cm *cm, struct et_cm_conn *c, const struct et_cm_accept_param *p,
		 uint64_t now);
int et_cm_reject(struct et_cm *cm, struct et_cm_conn *c, const void *pdata, uint16_t len,
		 uint64_t now);

/* DREQ for an established connection.  0 or -EINVAL. */
int et_cm_disconnect(struct et_cm *cm, struct et_cm_conn *c, uint64_t now);

/* The passive side's QP took a packet before the RTU came: the
 * connection is established (IBTA's communication established event);
 * ignored in other states. */
void et_cm_notify_established(struct et_cm *cm, struct et_cm_conn *c, uint64_t now);

/* The consumer is done with c: what is still open is closed as the spec
 * wants (a pending request rejected, an attempt ended with REJ timeout,
 * an established connection disconnected, with no event; its events not
 * yet polled are dropped), and its slot freed after time wait.  c is not
 * to be used again. */
void et_cm_release(struct et_cm *cm, struct et_cm_conn *c, uint64_t now);

/* A MAD that came to QP 1 from src_ip: 0, or -enum et_mad_err (counted). */
int et_cm_input(struct et_cm *cm, uint32_t src_ip, const uint8_t *mad, size_t len, uint64_t now);

/* Retransmit what timed out, give up what ran out of retries, end time waits. */
void et_cm_timer(struct et_cm *cm, uint64_t now);
/* When et_cm_timer has work; UINT64_MAX if never. */
uint64_t et_cm_deadline(struct et_cm *cm);

/* The next MAD to send / event; false when there is none. */
bool et_cm_pop_out(struct et_cm *cm, struct et_cm_out *o);
bool et_cm_poll_event(struct et_cm *cm, struct et_cm_event *ev);

/* ---- what a connection shows ---- */
/* The connection whose local communication ID is id (what a MAD from the
 * peer names as its remote ID), NULL if none: a look-up, not a walk. */
struct et_cm_conn *et_cm_conn_find(const struct et_cm *cm, uint32_t id);
enum et_cm_state et_cm_conn_state(const struct et_cm_conn *c);
void *et_cm_conn_ctx(const struct et_cm_conn *c);
void et_cm_conn_set_ctx(struct et_cm_conn *c, void *ctx);
uint32_t et_cm_conn_local_id(const struct et_cm_conn *c);
uint32_t et_cm_conn_peer_ip(const struct et_cm_conn *c);
/* The peer's QP and its Starting PSN (the first our QP sends), once its
 * REQ or REP said them (0 before). */
uint32_t et_cm_conn_peer_qpn(const struct et_cm_conn *c);
uint32_t et_cm_conn_peer_psn(const struct et_cm_conn *c);
const struct et_cm_stats *et_cm_stats(const struct et_cm *cm);

#endif /* ET_CM_H */
