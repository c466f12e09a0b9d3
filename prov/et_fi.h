/* SPDX-License-Identifier: BSD-3-Clause
 * The libfabric provider "ethereal" (libethereal-fi.so): what its parts
 * share.  A client of lib/, as the programs are: the host runtime's NIC
 * model (host/et_nic) on one DPDK port per process, the RC transport
 * (transport/et_qp), the load-balancing policies (lb/) and the fabric's
 * conf (app/common's reader).  libfabric's util layer is not shipped with
 * Debian's libfabric-dev, so every object here is ours.
 *
 *   prov.c    fi_prov_ini, the FI_ETHEREAL_* parameters, fi_getinfo, fabric
 *   env.c     the process: EAL, the slot rule, conf, port, NIC, progress
 *   domain.c  domain, memory regions, address vectors
 *   cq.c      completion queues, counters, event queues
 *   ep.c      endpoints: binding, enabling, names, cancel, options
 *   msg.c     messages: eager, rendezvous, matching, the unexpected queue
 *   rma.c     RMA write, write with data (and read once READ lands)
 *   conn.c    connections to peers: a control QP and data QPs each
 *   resume.c  a connection's session: sequence numbers, and new QPs (on
 *             other paths) for one whose QPs failed, what the peer has not
 *             acknowledged sent again, in order and once
 *   flow.c    large transfers: Ethereal's batch, subflows on data QPs
 *   cm.c      how a connection's QPs meet: RDMA CM (see et_fi_cm.h)
 *   enosys.c  what the objects refuse (-FI_ENOSYS), in one place
 *   wire.c    the control messages' header (et_fi_wire.h)
 *
 * Locking: one mutex for the process (et_fi_lock), taken by every entry
 * point and released by those that wait; so the provider is FI_THREAD_SAFE
 * and the NIC, shared by every domain, is polled by one thread at a time.
 */
#ifndef ET_FI_H
#define ET_FI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "base/et_ring.h"
#include "et_fi_wire.h"
#include "host/et_arp.h"
#include "host/et_nic.h"
#include "host/et_process.h"
#include "lb/et_lb.h"
#include "transport/et_mr.h"
#include "transport/et_qp.h"

#define ET_FI_NAME "ethereal"
#define ET_FI_PROV_VERSION FI_VERSION(0, 1)
#define ET_FI_API_VERSION FI_VERSION(1, 17)

extern struct fi_provider et_fi_prov;

#define ET_FI_WARN(sub, ...) FI_WARN(&et_fi_prov, sub, __VA_ARGS__)
#define ET_FI_INFO(sub, ...) FI_INFO(&et_fi_prov, sub, __VA_ARGS__)
#define ET_FI_DBG(sub, ...) FI_DBG(&et_fi_prov, sub, __VA_ARGS__)

/* ---- limits, and what fi_info says of them ---- */

#define ET_FI_EAGER_DEFAULT 8192u     /* payload bytes a SEND carries at most */
#define ET_FI_TX_SIZE 256u            /* a control QP's send queue */
#define ET_FI_RX_SIZE 1024u           /* receives an endpoint takes */
#define ET_FI_CTRL_RECVS 64u          /* buffers posted on each control QP */
#define ET_FI_DATA_RECVS 64u          /* zero-length receives on each data QP */
#define ET_FI_DATA_DEPTH 16u          /* subflows posted on one data QP at once */
#define ET_FI_MAX_DQP 32u             /* data QPs per connection */
#define ET_FI_MAX_MSG (1ull << 32)    /* max_msg_size */
#define ET_FI_SUBFLOW_MAX (1u << 30)  /* one WRITE's bytes at most */
#define ET_FI_CQ_DATA_SIZE 4u         /* an RC immediate */
#define ET_FI_MR_CAP 65536u           /* a domain's registrations, ours included */
#define ET_FI_ADDRLEN sizeof(struct sockaddr_in)
/* A READ request the reader sent again (its timer fired, the responses
 * were on their way) may reach the responder after the reader is done
 * and has said FIN; the responder executes a duplicate READ again (IBTA),
 * and a key gone by then is a remote access error that ends the QP.  So a
 * registration exposed to READs goes this long after its send completes
 * (or 4 RTOs, if longer). */
#define ET_FI_READ_KEY_LINGER_NS 1000000000ull

/* ---- the process: one port, one NIC (env.c) ---- */

struct et_fi_ep;

/* The parameters, read once (FI_ETHEREAL_*; prov.c defines them). */
struct et_fi_env {
	char *eal;        /* EAL arguments */
	char *dev;        /* DPDK device of the port; %d: the slot */
	int slot;         /* -1: by the rule */
	char *conf;       /* the fabric's conf; NULL: the defaults */
	char *lb;         /* the policy, over the conf's */
	size_t eager;     /* bytes a message carries in its SEND */
	char *rundir;     /* where the slots' locks are */
	char *mac;        /* the port's MAC, over the device's; %d: the slot */
	int yield;        /* a read that finds nothing gives the core away */
	bool rdv_read;    /* a rendezvous by READ (FIN) instead of WRITE (CTS) */
	int stats;        /* say the process's counters when its last endpoint goes */
	char *fault;      /* faults on what the port sends (et_link_faults_parse) */
};

/* The provider's side of the process (the process runtime, the slot, the
 * port, the NIC and its lock, is host/et_process's). */
struct et_fi_proc {
	struct et_fi_env env;
	bool env_read;
	bool conf_loaded;
	bool port_open;            /* the process runtime opened for us */
	/* every enabled endpoint, for progress */
	struct et_fi_ep *eps;
	uint16_t next_port;   /* the next port an endpoint without one gets */
	/* sessions (resume.c) */
	uint64_t reconnects;       /* connections resumed on new QPs */
	uint64_t resent;           /* control messages sent again after a resume */
	uint64_t dup_msgs;         /* control messages received twice: dropped */
	uint64_t lost_peers;       /* connections given up: the peer unreachable */
};

extern struct et_fi_proc et_fi_proc;

/* The parameters (once), the conf (once), the process runtime
 * configured with them.  0 or -FI_errno. */
int et_fi_env_load(void);
/* This process's slot (et_process_slot_choose: FI_ETHEREAL_SLOT, the
 * source address the consumer names (want_ip, 0: none), the local rank
 * of an MPI launcher, or the first whose lock is free).  0 or
 * -FI_ENODATA (want_ip is not ours, or no slot is free). */
int et_fi_slot_choose(uint32_t want_ip);
/* The process runtime opened (EAL, port, NIC, keeper) and the provider's
 * progress hooked into it (once).  0 or -FI_errno, said in the log. */
int et_fi_port_open(void);
void et_fi_port_close(void);
/* FI_ETHEREAL_STATS: one line to stderr with what the process's QPs and
 * the policy's path state met (the testbed sums them): data packets sent
 * and placed count READ responses too.  Locked. */
void et_fi_report(void);

/* ---- objects ---- */

struct et_fi_fabric {
	struct fid_fabric fab;
	uint32_t refs;
};

struct et_fi_eq;

struct et_fi_domain {
	struct fid_domain dom;
	struct et_fi_fabric *fab;
	struct et_mr_table mrs;
	uint32_t local_key;     /* the whole address space, local access: what our
				 * own sends and receives name (no FI_MR_LOCAL) */
	int mr_mode;
	enum fi_av_type av_type;
	uint64_t caps;
	uint32_t refs;
	struct et_fi_eq *eq;
};

struct et_fi_cntr;

struct et_fi_mr {
	struct fid_mr mr;
	struct et_fi_domain *d;
	uint32_t key;
	uint64_t access;
};

/* An address: IPv4 and the endpoint's port (host order). */
struct et_fi_addr {
	uint32_t ip;
	uint16_t port;
	bool used;
};

struct et_fi_av {
	struct fid_av av;
	struct et_fi_domain *d;
	enum fi_av_type type;
	struct et_fi_addr *a;
	uint32_t n, cap;
	uint64_t gen;           /* bumped by every insert and remove */
	uint32_t refs;
	struct et_fi_eq *eq;    /* FI_EVENT: inserts complete there */
};

/* An entry of a CQ: what fi_cq_read gives in every format, and an error. */
struct et_fi_cqe {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err;                /* 0, or an FI_E* */
	size_t olen;
	int prov_errno;
};

struct et_fi_cq {
	struct fid_cq cq;
	struct et_fi_domain *d;
	enum fi_cq_format format;
	size_t entry_size;
	struct et_fi_cqe *ring; /* grows: FI_RM_ENABLED never loses one */
	uint32_t cap, head, tail; /* free-running */
	uint32_t refs;
	enum fi_wait_obj wait_obj;
	volatile int signaled;
	char err_data[64];
};

struct et_fi_cntr {
	struct fid_cntr cntr;
	struct et_fi_domain *d;
	uint64_t val, err;
	uint32_t refs;
	enum fi_wait_obj wait_obj;
};

struct et_fi_eqe {
	uint32_t event;
	bool err;
	size_t len;
	union {
		struct fi_eq_err_entry err_entry;
		uint8_t data[256];
	} u;
};

struct et_fi_eq {
	struct fid_eq eq;
	struct et_fi_fabric *fab;
	struct et_fi_eqe *ring;
	uint32_t cap, head, tail;
	uint32_t refs;
	enum fi_wait_obj wait_obj;
	int fd;                 /* FI_WAIT_FD: an eventfd readable while events wait */
};

/* ---- requests ---- */

/* An fi_inject* call: no completion entry ever (its counter still counts).
 * The FI_INJECT flag alone only lets the buffer go at once.  Ours: taken
 * out of the flags a consumer passes. */
#define ET_FI_SILENT (1ull << 63)

enum et_fi_req_kind {
	ET_FI_REQ_SEND,
	ET_FI_REQ_RECV,
	ET_FI_REQ_WRITE,
	ET_FI_REQ_READ,
};

struct et_fi_conn;
struct et_fi_flow;

struct et_fi_req {
	enum et_fi_req_kind kind;
	struct et_fi_ep *ep;
	void *context;
	uint64_t flags;          /* the completion's: FI_SEND|FI_MSG|FI_TAGGED|... */
	uint64_t op_flags;       /* what was asked: FI_COMPLETION, FI_INJECT, ... */
	uint64_t tag, ignore;
	uint64_t data;           /* remote CQ data sent, or received */
	fi_addr_t addr;          /* peer (FI_ADDR_UNSPEC: any) */
	uint8_t *buf;            /* one buffer: iov_limit is 1 */
	uint64_t len;            /* bytes of buf */
	uint64_t msg_len;        /* receive: the message's bytes */
	uint64_t rma_addr, rma_key;
	uint32_t peer_rid;       /* a rendezvous send: the receive its CTS named (DONE's) */
	bool cts;                /* ... which came: its next message is DONE */
	struct et_fi_conn *conn;
	uint32_t id;             /* et_fi_req_id() */
	uint32_t tmp_key;        /* a registration for the peer's access; 0: none */
	bool tmp_read;           /* ... for its READs: kept a while after (et_fi_key_retire) */
	uint32_t inflight;       /* its control messages and flows not yet done */
	bool done;               /* nothing to wait for but those */
	uint64_t got;            /* receive: bytes landed (rendezvous) */
	int err;                 /* the first error met: a positive FI_E* */
	uint8_t wc_status;       /* the transport's status behind it: prov_errno */
	uint8_t *inject;         /* FI_INJECT: our copy of the data (in inject_buf) */
	bool rdv_read;           /* receive: its rendezvous reads (FIN, not CTS) */
	TAILQ_ENTRY(et_fi_req) link; /* posted, pending, or free */
	/* kept when the request is free: the next inject's room */
	uint8_t *inject_buf;
	uint64_t inject_cap;
};
TAILQ_HEAD(et_fi_req_q, et_fi_req);

/* A message that arrived before its receive. */
struct et_fi_unexp {
	struct et_fi_hdr h;
	struct et_fi_conn *conn;
	uint8_t *payload;        /* eager: its bytes (h.len), in payload_buf; else NULL */
	void *claim_ctx;         /* FI_CLAIM: the context that holds it */
	TAILQ_ENTRY(et_fi_unexp) link; /* waiting, or free */
	/* kept when the entry is free: the next payload's room */
	uint8_t *payload_buf;
	uint64_t payload_cap;
};
TAILQ_HEAD(et_fi_ux_q, et_fi_unexp);

/* ---- connections (conn.c) ---- */

enum et_fi_qp_kind { ET_FI_QP_CTRL, ET_FI_QP_DATA };

struct et_fi_rslot;

/* One of a connection's QPs. */
struct et_fi_qp {
	struct et_qp *qp;
	struct et_fi_conn *conn;
	uint8_t kind;            /* enum et_fi_qp_kind */
	uint8_t slot;
	bool ready;              /* connected: may post */
	bool dead;               /* its connection gave it up: flushed, freed once
				  * its completions are all back (resume.c) */
	bool lb_attached;
	void *lb_state;
	uint32_t posted;         /* requests on it not yet complete */
	uint32_t recvs;          /* receives on it not yet complete */
	struct et_fi_sub *wait_head, *wait_tail; /* subflows waiting for it */
	void *cm;                /* the connection manager's handle */
	struct et_fi_rslot *rslots; /* control: its receive buffers, by wr_id */
	uint8_t *rbuf;           /* ... and their bytes */
	struct et_fi_qp *next_dead;
};

/* A receive buffer of a control QP, by its wr_id. */
struct et_fi_rslot {
	struct et_fi_qp *q;
	uint8_t *buf;
};

/* A send from a control QP, by its wr_id; kept, with its bytes, until the
 * peer acknowledged it (a connection resumed sends it again). */
struct et_fi_tslot {
	struct et_fi_req *req;   /* NULL: a control message with no request */
	struct et_fi_qp *q;
	uint8_t *buf;
	uint32_t len;            /* its bytes in buf */
	uint32_t seq;
	struct et_fi_tslot *next;
};

/* RESUMING: its QPs failed (or the peer's did); new ones are asked for
 * (the active side) or awaited (the passive side) until the conf's
 * [transport] reconnect-ms has passed, then FAILED (resume.c). */
enum et_fi_conn_state {
	ET_FI_CONN_CONNECTING,
	ET_FI_CONN_READY,
	ET_FI_CONN_RESUMING,
	ET_FI_CONN_FAILED,
};

struct et_fi_conn {
	struct et_fi_ep *ep;
	uint32_t peer_ip;
	uint16_t peer_port;      /* the peer endpoint's own port (its name) */
	bool active;             /* ours: our messages to it go here */
	enum et_fi_conn_state state;
	int err;                 /* why it failed */
	bool told;               /* its failure was said to an operation */
	uint32_t peer_host;      /* the topology's host; UINT32_MAX: not in it */
	struct et_fi_qp *ctrl;   /* NULL between two of them */
	struct et_fi_qp *data[ET_FI_MAX_DQP];
	uint32_t n_data;
	/* messages waiting for READY or for room on the control QP, in order */
	struct et_fi_req_q pend;
	fi_addr_t av_addr;       /* the peer in the endpoint's AV */
	uint64_t av_gen;
	/* the session: what outlives its QPs (resume.c) */
	uint64_t peer_instance;  /* the peer endpoint's (a new process: another) */
	uint32_t tx_seq;         /* the seq of our next control message */
	uint32_t rx_seq;         /* the seq we take next from the peer */
	uint32_t peer_rx_seq;    /* the peer's rx_seq, said as it resumed */
	struct et_fi_tslot *resend_head, *resend_tail; /* unacknowledged, in seq order */
	struct et_fi_qp *dead;   /* QPs given up, until their completions are back */
	uint64_t resume_until;   /* RESUMING: when it gives up */
	uint64_t resume_at;      /* RESUMING, active: when it asks again */
	bool ctrl_up;            /* RESUMING: the new control QP is connected */
	struct et_fi_conn *next;
};

/* ---- large transfers (flow.c) ---- */

/* A transfer the interceptor plans: bytes between local memory and one
 * peer's, by WRITE (with immediate imm, or none) or by READ. */
/* A free list's link, in the first bytes of an object done with (flow.c) */
struct et_fi_free {
	struct et_fi_free *next;
};

struct et_fi_flow {
	struct et_fi_conn *conn;
	struct et_fi_req *req;
	uint8_t *local;
	uint64_t len;
	uint64_t raddr;
	uint32_t rkey;
	bool read;               /* the peer's bytes into local */
	uint32_t subs_left;
	int err;                 /* the first error of a subflow: a positive FI_E* */
	struct et_fi_flow *next; /* in the batch */
};

/* A data QP's wr_id is its subflow's address with this bit set (a control
 * QP's is not): its completion finds the subflow. */
#define ET_FI_WR_DATA 1u

struct et_fi_sub {
	struct et_fi_flow *f;
	uint64_t off, len;
	uint16_t path;
	uint32_t slot;
	uint64_t start_ns;
	int insert_pos;
	struct et_fi_qp *q;
	struct et_fi_sub *next;  /* due, or waiting on q */
};

/* ---- endpoint ---- */

struct et_fi_ep {
	struct fid_ep ep;
	struct et_fi_domain *d;
	struct fi_info *info;
	struct et_fi_av *av;
	struct et_fi_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	struct et_fi_cntr *c_send, *c_recv, *c_read, *c_write, *c_rread, *c_rwrite;
	struct et_fi_eq *eq;
	uint64_t caps, tx_op_flags, rx_op_flags;
	bool enabled;
	uint32_t ip;
	uint16_t port;
	struct et_cq scq, rcq;   /* every QP's of this endpoint */
	struct et_mr_table *mrs;
	/* posted receives (msg, tagged) and unexpected messages, in order;
	 * requests and entries done with, kept for the next (nothing is
	 * allocated per message once the endpoint has run a while) */
	struct et_fi_req_q rx_msg, rx_tag, req_free;
	struct et_fi_ux_q ux_msg, ux_tag, ux_free;
	uint32_t rx_posted;
	/* requests by id, for the peer's CTS and immediates */
	struct et_fi_req **reqs;
	uint32_t n_reqs, free_id;
	uint16_t *gens;
	/* connections: ours to each AV address, and all */
	struct et_fi_conn **out;
	uint32_t n_out;
	struct et_fi_conn *conns;
	struct et_fi_tslot *tslots, *free_tslot;
	uint32_t n_pend;         /* requests waiting on connections' pending lists */
	uint8_t *tbuf;
	uint32_t tx_busy;
	size_t eager;
	/* the flow interceptor: flows waiting for the batch, subflows for start */
	struct et_fi_flow *batch, *batch_last;
	uint32_t n_batch;
	uint64_t batch_at;       /* 0: no batch open */
	struct et_fi_sub *due;   /* planned, waiting for their start */
	/* flows and subflows done with, kept for the next; the planner's
	 * arrays, grown to the largest batch (flow.c) */
	struct et_fi_free *flow_free, *sub_free;
	struct et_fi_flow **plan_fv;
	struct et_lb_flow *plan_fl;
	struct et_lb_sub *plan_out;
	uint32_t *plan_nth;
	uint32_t plan_cap;       /* flows the arrays hold */
	uint32_t plan_out_cap;   /* subflows plan_out holds */
	/* registrations that exposed a send to its receiver's READs, kept
	 * until a duplicate READ request can no longer come (a ring) */
	struct et_fi_retired { uint32_t key; uint64_t until; } *retired;
	uint32_t ret_head, ret_tail, ret_cap;
	void *cm;                /* the connection manager's listener */
	struct et_process_cm_holder cm_holder; /* its ctx: requests come here */
	uint64_t instance;       /* this endpoint, of this process: a peer that
				  * resumes a connection names it */
	uint32_t n_resuming;     /* its connections RESUMING */
	uint32_t n_dead;         /* dead QPs of its connections, not yet freed */
	struct et_fi_ep *next;
};

/* ---- helpers (cq.c) ---- */

/* A completion to a CQ (and its counter); ep's CQ for the side. */
void et_fi_cq_push(struct et_fi_cq *cq, const struct et_fi_cqe *e);
void et_fi_cntr_inc(struct et_fi_cntr *c, bool err);
/* The completion of req (err: 0 or a positive FI_E*): its CQ entry unless
 * the CQ is selective and it asked for none, its counter; then req is
 * freed. */
void et_fi_req_complete(struct et_fi_req *req, int err, uint64_t olen);
/* req completes if nothing of it is in flight and it is done or failed. */
void et_fi_req_check(struct et_fi_req *req);
/* req failed with err (positive): kept as its first error, then checked. */
void et_fi_req_fail(struct et_fi_req *req, int err);
int et_fi_eq_push(struct et_fi_eq *eq, uint32_t event, const void *buf, size_t len, bool err);

/* ---- the parts' entry points ---- */

/* enosys.c: what the objects refuse (-FI_ENOSYS) */
int et_fi_no_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
			 void *context);
int et_fi_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		       struct fid_poll **pollset);
int et_fi_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
		     void *context);
int et_fi_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		     void *context);
int et_fi_no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
			  struct fi_atomic_attr *attr, uint64_t flags);
int et_fi_no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			      struct fi_collective_attr *attr, uint64_t flags);
int et_fi_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
		    void *context);
int et_fi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep,
		    void *context);
int et_fi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		    void *context);
int et_fi_no_setname(fid_t fid, void *addr, size_t addrlen);
int et_fi_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int et_fi_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen);
int et_fi_no_listen(struct fid_pep *pep);
int et_fi_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int et_fi_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen);
int et_fi_no_shutdown(struct fid_ep *ep, uint64_t flags);
int et_fi_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		  void *context);
int et_fi_no_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
			void *context);
int et_fi_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		       struct fid_wait **waitset);
int et_fi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int et_fi_no_control(struct fid *fid, int command, void *arg);
int et_fi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context);

/* prov.c */
int et_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		  const struct fi_info *hints, struct fi_info **info);
int et_fi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
int et_fi_parse_addr(const char *node, const char *service, uint32_t *ip, uint16_t *port);

/* domain.c */
int et_fi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		      void *context);
/* fi_addr to an address; NULL if it names none. */
const struct et_fi_addr *et_fi_av_get(const struct et_fi_av *av, fi_addr_t a);
/* An address to its fi_addr; FI_ADDR_NOTAVAIL if it is not in the AV. */
fi_addr_t et_fi_av_find(const struct et_fi_av *av, uint32_t ip, uint16_t port);
int et_fi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		  void *context);

/* cq.c */
int et_fi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		  void *context);
int et_fi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		    struct fid_cntr **cntr, void *context);
int et_fi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		  void *context);

/* ep.c */
int et_fi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		  void *context);
struct et_fi_req *et_fi_req_new(struct et_fi_ep *ep, enum et_fi_req_kind kind);
void et_fi_req_free(struct et_fi_req *req);
/* *buf (of *cap bytes, kept from one use to the next) made room for n:
 * 0, or -FI_ENOMEM (as it was). */
static inline int
et_fi_room(uint8_t **buf, uint64_t *cap, uint64_t n)
{
	uint8_t *b;

	if (*cap >= n)
		return 0;
	if ((b = realloc(*buf, n)) == NULL)
		return -FI_ENOMEM;
	*buf = b;
	*cap = n;
	return 0;
}

/* FI_INJECT: buf's len bytes copied into the request (its buf then): the
 * consumer's buffer is its own again.  0, or -FI_ENOMEM. */
int et_fi_req_inject(struct et_fi_req *req, const void *buf, uint64_t len);
/* A request of ours to dest (locked): its connection (made on first use)
 * and the fields every one has; NULL with *err (-FI_EOPBADSTATE, an
 * address error, -FI_EAGAIN). */
struct et_fi_req *et_fi_tx_req(struct et_fi_ep *ep, enum et_fi_req_kind kind, fi_addr_t dest,
			       void *buf, uint64_t len, void *context, uint64_t op_flags,
			       uint64_t flags, int *err);
/* Registrations retired by et_fi_req_free that may go now. */
void et_fi_keys_expire(struct et_fi_ep *ep, uint64_t now);
struct et_fi_req *et_fi_req_by_id(struct et_fi_ep *ep, uint32_t id);
void et_fi_sockaddr(uint32_t ip, uint16_t port, struct sockaddr_in *sa);

/* msg.c */
extern struct fi_ops_msg et_fi_msg_ops;
extern struct fi_ops_tagged et_fi_tagged_ops;
/* A control message from conn's peer (its receive buffer, byte_len). */
void et_fi_msg_rx(struct et_fi_conn *c, const uint8_t *buf, uint32_t len);
/* The messages that waited for the connection (or for room) can go. */
void et_fi_msg_flush_pending(struct et_fi_conn *c);
/* ... on every connection of ep that has some (after sends completed). */
void et_fi_msg_flush_all(struct et_fi_ep *ep);
int et_fi_msg_cancel(struct et_fi_ep *ep, void *context);
/* An RMA write's remote CQ data (WDATA), after its bytes: 0 or -FI_errno. */
int et_fi_msg_wdata(struct et_fi_req *req);
/* A rendezvous send's bytes are acknowledged: the receiver is told (DONE),
 * and the send completes once DONE is.  0 or -FI_errno. */
int et_fi_msg_done(struct et_fi_req *req);
/* A rendezvous by READ read its bytes (err: 0 or a positive FI_E*): the
 * sender is told (FIN), the receive completes. */
void et_fi_msg_read_done(struct et_fi_req *req, int err);
void et_fi_msg_ep_free(struct et_fi_ep *ep);
/* A control message on c (a request's, or none): 0, -FI_EAGAIN. */
int et_fi_ctrl_send(struct et_fi_conn *c, struct et_fi_req *req, const struct et_fi_hdr *h,
		    const void *payload, size_t plen);

/* rma.c */
extern struct fi_ops_rma et_fi_rma_ops;

/* conn.c */
/* Our connection to fi_addr a: made (and connecting) on first use. */
struct et_fi_conn *et_fi_conn_to(struct et_fi_ep *ep, fi_addr_t a, int *err);
/* The same to the endpoint (ip, port), in the AV or not. */
struct et_fi_conn *et_fi_conn_to_addr(struct et_fi_ep *ep, uint32_t ip, uint16_t port,
				      int *err);
/* A data QP of c for slot/path, made if there is none; NULL if none can be. */
struct et_fi_qp *et_fi_conn_data_qp(struct et_fi_conn *c, uint32_t slot, uint16_t path);
/* A new control QP of c, asking the peer for its end (resume: of the
 * session c already has).  0 or -FI_errno. */
int et_fi_conn_ctrl_connect(struct et_fi_conn *c, bool resume);
/* q's QP destroyed (its peer told, where it is connected), q freed. */
void et_fi_qp_free(struct et_fi_qp *q);
void et_fi_conn_poll(struct et_fi_ep *ep);
void et_fi_conns_free(struct et_fi_ep *ep);
/* The peer's fi_addr in the endpoint's AV (cached by the AV's generation). */
fi_addr_t et_fi_conn_addr(struct et_fi_conn *c);
/* c fails for good (err: a negative FI_E*): its requests with it; with
 * -FI_EHOSTUNREACH, the endpoint's EQ has an error entry, and the next
 * operation to the peer is told (et_fi_conn_to). */
void et_fi_conn_fail(struct et_fi_conn *c, int err);
/* What the connection manager tells (et_fi_cm.h).  Active side: q's QP
 * is connected and ready (its mechanism bound it to the peer's), or the
 * peer refused or never answered. */
/* peer_instance and peer_rx_seq: what the peer's answer said (resume.c) */
void et_fi_conn_established(struct et_fi_qp *q, uint64_t peer_instance, uint32_t peer_rx_seq);
/* err: -FI_ECONNREFUSED (nobody listens, or the peer refused),
 * -FI_ECONNRESET (the peer has no such session: a new process, or the
 * endpoint closed), -FI_EHOSTUNREACH (no answer) */
void et_fi_conn_rejected(struct et_fi_qp *q, int err);
/* The peer dropped its end of q (its QPs failed, or it closed). */
void et_fi_conn_disconnected(struct et_fi_qp *q);
/* A peer's request for a QP (et_fi_cm.h): the asker's endpoint, the
 * session it names and whether it resumes one, and what it has taken of
 * ours (rx_seq). */
struct et_fi_ask {
	uint32_t ip;
	uint16_t port;
	uint8_t kind, slot;
	bool resume;
	uint64_t instance;
	uint32_t rx_seq;
};
/* Passive side: the peer asks for a QP: our new QP (RESET, PSNs as
 * given), then, once the mechanism has bound it to the peer's and made it
 * ready, et_fi_conn_accepted(q), or if it could not, et_fi_conn_refused(q).
 * NULL: refused, *err saying why (-FI_ECONNRESET: a resume of a session we
 * do not have; -FI_ENOMEM, -FI_ENOSPC). */
struct et_fi_qp *et_fi_conn_accept(struct et_fi_ep *ep, const struct et_fi_ask *ask,
				   uint32_t sq_psn, uint32_t rq_psn, int *err);
void et_fi_conn_accepted(struct et_fi_qp *q);
void et_fi_conn_refused(struct et_fi_qp *q);

/* resume.c */
/* c's QPs failed, or the peer's (why: for the log): c keeps what the peer
 * has not acknowledged and gets new QPs, or fails once the conf's
 * reconnect-ms have passed. */
void et_fi_conn_break(struct et_fi_conn *c, const char *why);
/* q goes dead: off c's QPs, flushed (its work requests come back in
 * error), freed once they all have. */
void et_fi_qp_bury(struct et_fi_conn *c, struct et_fi_qp *q);
/* A send from c's control QP came back unacknowledged (its QP failed):
 * kept, in order, to be sent again. */
void et_fi_resend_keep(struct et_fi_conn *c, struct et_fi_tslot *ts);
/* The resuming connections of ep: dead QPs freed, new ones asked for,
 * the resumed ones' messages sent again, the hopeless failed. */
void et_fi_resume_poll(struct et_fi_ep *ep, uint64_t now);
/* A control message's seq against c's: true if it is the next (taken),
 * false for a repeat (dropped, counted) or a gap (dropped, said). */
bool et_fi_seq_take(struct et_fi_conn *c, uint32_t seq);
/* c failed for good: what waited to be sent again fails with it. */
void et_fi_resend_fail(struct et_fi_conn *c);
/* The endpoint goes: c's unacknowledged messages and dead QPs with it. */
void et_fi_session_free(struct et_fi_conn *c);
/* A control message's slot is done with (err: 0, acknowledged, or a
 * positive FI_E*): free again, its request told. */
void et_fi_tslot_done(struct et_fi_ep *ep, struct et_fi_tslot *ts, int err);
int et_fi_qp_post_send(struct et_fi_qp *q, const struct et_send_wr *wr, int insert_pos);

/* flow.c */
/* Bytes between local and the peer's (raddr, rkey), by WRITE or READ:
 * planned with the batch. */
int et_fi_flow_start(struct et_fi_conn *c, struct et_fi_req *req, uint8_t *local, uint64_t len,
		     uint64_t raddr, uint32_t rkey, bool read);
void et_fi_flow_poll(struct et_fi_ep *ep, uint64_t now);
/* A data QP's WRITE completed (wr_id: the subflow). */
void et_fi_flow_sent(struct et_fi_ep *ep, struct et_fi_sub *s, int err);
/* s came back unacknowledged from a QP that failed: it goes again, on a
 * new QP of its connection once that has resumed. */
void et_fi_flow_again(struct et_fi_ep *ep, struct et_fi_sub *s);
/* q is ready: its waiting subflows go. */
void et_fi_flow_qp_ready(struct et_fi_qp *q);
void et_fi_flow_ep_free(struct et_fi_ep *ep);
/* c failed: its flows and subflows not yet on a QP end with its error. */
void et_fi_flow_conn_fail(struct et_fi_conn *c);

#endif /* ET_FI_H */
