/* SPDX-License-Identifier: BSD-3-Clause
 * The collective host runtime: one rank of a collective schedule (coll/)
 * run on one host NIC through one load-balancing policy (lb/).
 *
 * Step by step, a rank plans its sends with the policy (Ethereal's
 * interceptor holds the flows to other racks until the batch closes),
 * opens a QP pair per subflow when its start time comes, posts its one
 * WRITE with immediate (the immediate names the receive it fills), counts
 * the bytes that arrive, and enters the next step once everything of this
 * one has been sent and received (reducing what arrived in verify mode).
 *
 * Where the far end of a subflow comes from is the program's: in one
 * process (sim/) the peer host's QP is made directly; across processes,
 * through the ranks' exchange.  Time is whatever clock the caller passes.
 */
#ifndef ET_RUNTIME_H
#define ET_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>

#include "coll/et_coll.h"
#include "host/et_host.h"
#include "host/et_nic.h"
#include "lb/et_lb.h"
#include "transport/et_mr.h"
#include "transport/et_qp.h"

/* Subflows (requester QPs) a rank may have open or planned at once: MP-RDMA-64
 * all-to-all on 512 hosts is 511 x 64.  The NIC must hold as many again as
 * responder ends of its peers' subflows. */
#define ET_RT_MAX_QPS 32768

/* One QP pair carrying bytes [off, off + len) of one send of a step. */
struct et_rt_sub {
	uint32_t dst;         /* the fabric host (not the schedule rank) */
	uint32_t send;        /* index into the rank's sends */
	uint64_t off, len;
	uint16_t path;
	uint64_t start_ns;
	uint32_t sq_psn, rq_psn;  /* the QP pair's first PSNs, drawn with the plan */
	int insert_pos;
	struct et_qp *qp;     /* the sending end, on this host */
	uint32_t far_qpn;     /* the receiving end's QPN; 0 until it is known */
	void *lb_state;       /* what the policy keeps for the connection */
	uint32_t next_free;
};

/* The receiving end of a subflow, as the sender needs it. */
struct et_rt_remote {
	uint32_t qpn;
	uint64_t addr;        /* where the subflow's first byte goes */
	uint32_t rkey;
};

struct et_rt_host;

/* A far end that READs (data = read): its QP and its policy state. */
struct et_rt_far_lb {
	uint32_t qpn;
	void *state;
};

/* What a host keeps of its last QP to a peer, so that the next one starts
 * where it ended (DCTCP's window and alpha), as a connection that lives
 * from one collective to the next would.  cwnd 0: no QP to it yet. */
struct et_rt_peer_cc {
	double alpha;
	uint32_t cwnd;
};

struct et_rt_peer_ops {
	/* A rank's IPv4 address, host order. */
	uint32_t (*ip)(void *ctx, uint32_t rank);
	/* Make the receiving end of s for the sending QP (qpn, attributes a:
	 * its PSNs), ready and with its receive posted (et_rt_accept on the
	 * peer).  0 with out filled, -EINPROGRESS when the answer comes later
	 * (et_rt_connected, across processes), or a negative errno. */
	int (*open)(void *ctx, struct et_rt_host *h, struct et_rt_sub *s, uint32_t qpn,
		    const struct et_qp_attr *a, struct et_rt_remote *out);
	/* s is complete: its receiving end goes. */
	void (*close)(void *ctx, struct et_rt_host *h, struct et_rt_sub *s);
};

/* What every host of a run shares. */
struct et_rt_conf {
	struct et_qp_attr qp;     /* mtu, rto, retries, DCTCP; addresses aside */
	struct et_lb_conf lb;
	struct et_topo t;
	uint64_t seed;
	bool verify;              /* real data, reduced at every step */
	bool data_by_read;        /* the receiving end RDMA READs each subflow
				   * ([transport] data = read); else the
				   * sender WRITEs it */
};

struct et_rt_stats {
	uint64_t qps_created;
	struct et_qp_stats qp;    /* every QP of the rank's subflows, both ends */
};

/* Why a rank stopped: set once, with the rank and the QP concerned. */
enum et_rt_error {
	ET_RT_OK,
	ET_RT_NO_MEMORY,
	ET_RT_TOO_MANY_QPS,   /* a step needs more than ET_RT_MAX_QPS */
	ET_RT_NO_QP,          /* the NIC has no QP left */
	ET_RT_POST,           /* a work request was refused */
	ET_RT_BAD_RECV,       /* a receive completion in error or out of place */
	ET_RT_SEND_FAILED,    /* a send completion in error */
	ET_RT_PEER_REFUSED,   /* the peer could not open a subflow's far end */
};

struct et_rt_failure {
	enum et_rt_error why;
	uint32_t peer, qpn, imm, step, qps;
	uint64_t len;
	enum et_wc_status status;
};

/* Told of each subflow as it is planned (path as planned, before any
 * reroute): the QP plan a run can be compared by, across programs. */
typedef void (*et_rt_plan_fn)(void *ctx, const struct et_rt_host *h, const struct et_rt_sub *s);

struct et_rt_host {
	struct et_host host;      /* NIC, memory regions, CQs, next hop */
	uint32_t data_key, staging_key;
	uint8_t *data, *staging;  /* not owned when the run shares one region */
	bool own_buffers;
	struct et_lb_host lb;
	struct et_lb_host *lbh;   /* what it plans with: lb, or its host's shared one */
	const uint32_t *members;  /* schedule rank -> fabric host; NULL: the same */
	struct et_rt_peer_cc *peer_cc; /* per fabric host; NULL: every QP starts afresh */
	const struct et_rt_conf *c;
	const struct et_coll_sched *sched;
	uint32_t rank;
	const struct et_rt_peer_ops *peer_ops;
	void *peer_ctx;
	struct et_rt_sub *subs;
	uint32_t n_subs, free_sub;
	uint32_t step;            /* the step running; nsteps: done */
	bool step_started;
	uint32_t sends_left;      /* subflows of the step not yet complete */
	uint64_t *recv_left;      /* per receive of the schedule: bytes to come */
	uint32_t *waiting;        /* subflows planned, not yet posted */
	uint32_t n_waiting, waiting_cap;
	uint64_t batch_at;        /* when the interceptor's batch closes; 0: none */
	uint32_t qps;             /* subflows open: requester QPs on this NIC */
	uint32_t connecting;      /* subflows whose far end is still being opened */
	uint64_t done_ns;         /* when the rank finished, + 1; 0: not yet */
	struct et_rt_stats st;
	struct et_rt_failure fail;
	et_rt_plan_fn on_plan;    /* NULL: nobody asks */
	void *plan_ctx;
	/* data by READ: the far ends it reads with, and their policy state */
	struct et_rt_far_lb *far_lb;
	uint32_t n_far_lb, far_lb_cap;
};

/* Rank `rank` of sched on nic.  shared: one region every host of the run
 * sends from and writes into (memory-light: no verification), NULL for
 * buffers of its own, filled with the rank's data.  0 or a negative errno. */
int et_rt_host_init(struct et_rt_host *h, const struct et_rt_conf *c,
		    const struct et_coll_sched *sched, uint32_t rank, struct et_nic *nic,
		    const struct rte_ether_addr *gw_mac, uint8_t *shared, uint64_t shared_len,
		    const struct et_rt_peer_ops *ops, void *ctx);
/* The same for a schedule over a group of the fabric's hosts: members[k]
 * is the host of schedule rank k (rank is this host's position); lb, the
 * host's policy state shared by every collective it runs (paths marked
 * bad stay bad from one to the next), NULL for one of its own. */
int et_rt_host_init_in(struct et_rt_host *h, const struct et_rt_conf *c,
		       const struct et_coll_sched *sched, uint32_t rank, struct et_nic *nic,
		       const struct rte_ether_addr *gw_mac, uint8_t *shared, uint64_t shared_len,
		       const struct et_rt_peer_ops *ops, void *ctx, const uint32_t *members,
		       struct et_lb_host *lb);
void et_rt_host_free(struct et_rt_host *h);

/* Subflow s's number, as et_rt_connected takes it. */
static inline uint32_t
et_rt_sub_id(const struct et_rt_host *h, const struct et_rt_sub *s)
{
	return (uint32_t)(s - h->subs);
}

/* The far end of subflow sub (whose open said -EINPROGRESS) is far: the
 * subflow starts.  0, or a negative errno with h->fail set. */
int et_rt_connected(struct et_rt_host *h, uint32_t sub, const struct et_rt_remote *far);
/* The peer could not open it: the rank fails, naming the peer and QP. */
void et_rt_connect_failed(struct et_rt_host *h, uint32_t sub);

/* The receiving end of a subflow, on its receiving host hd: a QP (on QPN
 * my_qpn; 0: the NIC's pick) for the sending QP qpn of src_ip (a: the
 * sender's attributes, whose PSNs it mirrors), ready, with one receive
 * posted for bytes [off, off + len) of hd's receive recv.  0 with *rq and
 * out (what the sender needs), -EINVAL for a receive or range the schedule
 * does not have, -ENOSPC. */
int et_rt_accept(struct et_rt_host *hd, uint32_t src_ip, uint32_t recv, uint64_t off,
		 uint64_t len, uint32_t qpn, const struct et_qp_attr *a, uint32_t my_qpn,
		 struct et_qp **rq, struct et_rt_remote *out);
/* The same when data goes by READ: the receiving end's QP reads the
 * subflow from src (the sender's address and key of its first byte) on the
 * sender's path, rerouted by hd's own policy towards src_host, and says so
 * with a WRITE with immediate of nothing once it is in. */
int et_rt_accept_read(struct et_rt_host *hd, uint32_t src_ip, uint32_t src_host, uint32_t recv,
		      uint64_t off, uint64_t len, uint32_t qpn, const struct et_qp_attr *a,
		      uint32_t my_qpn, const struct et_rt_remote *src, struct et_qp **rq,
		      struct et_rt_remote *out);
/* Where subflow s of sender h starts in h's memory, for a reading far end. */
void et_rt_sub_source(const struct et_rt_host *h, const struct et_rt_sub *s,
		      struct et_rt_remote *out);
/* A receiving end made by et_rt_accept(_read) on hd goes: its counters to
 * st, its policy state (a reading one's) back. */
void et_rt_far_close(struct et_rt_host *hd, struct et_rt_stats *st, uint32_t qpn);
/* Where that receiving end puts its bytes: out's address and key (its
 * QPN 0), known before the QP is made.  -EINVAL as et_rt_accept. */
int et_rt_far_place(const struct et_rt_host *hd, uint32_t recv, uint64_t off, uint64_t len,
		    struct et_rt_remote *out);

/* The NIC's turn, then the rank's: completions, the batch, due subflows,
 * the steps.  The work done; 0 with h->fail.why set when the rank failed. */
uint32_t et_rt_poll(struct et_rt_host *h, uint64_t now);
/* The rank's part alone, for several ranks on one NIC that is polled once. */
uint32_t et_rt_progress(struct et_rt_host *h, uint64_t now);

/* The earliest time the host (NIC or rank) has something to do. */
uint64_t et_rt_next_event(const struct et_rt_host *h, uint64_t now);

/* A QP's counters into st (every QP of a run is counted once, when it goes
 * or when the run ends). */
void et_rt_stats_add_qp(struct et_rt_stats *st, const struct et_qp *qp);

/* A planned subflow as one line of text (no newline): "host H step S dst
 * D send N off O len L path P", the fabric hosts' numbers. */
void et_rt_sub_format(const struct et_rt_host *h, const struct et_rt_sub *s, char *buf,
		      size_t len);

/* The failure in words, e.g. "host 3 -> host 9: QP 12: retry exceeded". */
const char *et_rt_strerror(const struct et_rt_host *h, char *buf, size_t len);

#endif /* ET_RUNTIME_H */
