/* SPDX-License-Identifier: BSD-3-Clause
 * libibverbs of our own (libibverbs.so.1, the symbol versions of
 * rdma-core's as Debian 12 ships it: verbs.h is the ABI): one device,
 * "ethereal0", a RoCEv2 NIC in userspace on the process runtime
 * (host/et_process: the slot, EAL, the port, the NIC model, the keeper),
 * its QPs lib/transport's, their paths the conf's policy's.  No kernel,
 * no sysfs, no /dev: the environment says what the device is (ETHEREAL_*,
 * as scripts/ethereal-run sets it).  What its parts share:
 *
 *   device.c  the device list, open and close, queries, async events, the
 *             strings, rdma-core's helpers a program may call
 *   mem.c     protection domains and memory regions
 *   cq.c      completion queues, completion channels (an eventfd a
 *             program may poll), poll_cq, the events progress raises
 *   qp.c      queue pairs (RC and UD): create, the state machine of
 *             modify_qp, query, post_send and post_recv over
 *             lib/transport's QP
 *   ah.c      address handles: a UD destination and its path
 *   srq.c     shared receive queues
 *   stubs.c   what a real device would refuse, and the driver ABI
 *             (IBVERBS_PRIVATE_34) that Debian's libmlx5 and libefa bind
 *             to at load: present, finding no device of theirs
 *
 * Every call that touches the NIC holds the process's lock
 * (et_process_lock): any thread may call any verb.
 */
#ifndef ET_VB_H
#define ET_VB_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "host/et_process.h"
#include "transport/et_mr.h"
#include "transport/et_qp.h"

#define ET_VB_DEVICE_NAME "ethereal0"
#define ET_VB_MAX_QP 16384u        /* the NIC's QP table */
#define ET_VB_QPN_BASE 0x100u
#define ET_VB_MAX_QP_WR 16384u     /* a send or receive queue: a power of 2 at most */
#define ET_VB_MAX_CQE 65536u
#define ET_VB_MAX_MR 65536u
#define ET_VB_MAX_INLINE 256u      /* bytes a send may carry inline */
#define ET_VB_MAX_SEND_SGE ET_MAX_SGE /* a send gathers: the transport's list */
#define ET_VB_MAX_RECV_SGE ET_MAX_SGE /* a receive scatters: the transport's list */
#define ET_VB_MAX_RD_ATOMIC 16u
#define ET_VB_WC_SL_ROCE_V2_IPV4 0xau /* a datagram's ibv_wc.sl: mlx5's packet type */
#define ET_VB_GIDS 2u              /* 0: fe80::EUI-64 of the MAC; 1: ::ffff:IPv4 (as rxe) */

/* rdma-core's driver ABI (driver.h, not shipped by Debian): a GID's type
 * as ibv_query_gid_type says it, and the calls rdma-core exports to
 * programs outside verbs.h. */
enum et_vb_gid_type_sysfs {
	ET_VB_GID_SYSFS_ROCE_V1 = 0,
	ET_VB_GID_SYSFS_ROCE_V2 = 1,
};
int ibv_query_gid_type(struct ibv_context *c, uint8_t port, unsigned int index,
		       enum et_vb_gid_type_sysfs *type);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
const char *ibv_get_sysfs_path(void);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* The environment of a process on the device (scripts/ethereal-run). */
struct et_vb_env {
	const char *dev, *conf, *lb, *eal, *rundir, *mac, *ip, *fault;
	int slot;
	bool yield;
	int stats;
};

/* The device: rdma-core's verbs_device has its ibv_device first and its
 * driver's ops pointer right after, which Debian's libmlx5 and libefa read
 * (mlx5dv_is_supported): ours is NULL, no driver's. */
struct et_vb_device {
	struct ibv_device dev;
	const void *driver;
};

struct et_vb_qp;
struct et_vb_cq;
struct et_vb_srq;

struct et_vb_ctx {
	struct verbs_context vctx; /* its ibv_context last, as verbs.h wants */
	int async_rd, async_wr;    /* async events: a pipe a program may poll */
	struct et_vb_qp **qps;     /* by QPN - ET_VB_QPN_BASE */
	struct et_vb_cq *armed;    /* CQs asked for their next completion's event */
	uint64_t guid;
};

struct et_vb_pd {
	struct ibv_pd pd;
	struct et_mr_table mrs;
	uint32_t local_key;        /* the whole address space, local access: inline sends */
};

struct et_vb_mr {
	struct ibv_mr mr;
};

/* An address handle: where a UD send goes (its address, MAC and path;
 * the QP and Q_Key are the request's) and what it was made from. */
struct et_vb_ah {
	struct ibv_ah ah;
	struct et_ud_dest dest;
	struct ibv_ah_attr attr;
};

/* A completion channel: an eventfd (EFD_SEMAPHORE: a read takes one
 * event) and the CQs whose events wait, in order. */
struct et_vb_channel {
	struct ibv_comp_channel ch;
	struct et_vb_cq **ev;      /* ring */
	uint32_t ev_cap, ev_head, ev_tail;
};

struct et_vb_cq {
	struct ibv_cq cq;
	struct et_cq ecq;
	bool armed;
	uint32_t armed_tail;       /* the ring's tail when armed: a later one is news */
	struct et_vb_cq *next_armed;
	uint32_t users;            /* QPs on it */
};

/* A shared receive queue: the transport's, the QPs on it, its limit. */
struct et_vb_srq {
	struct ibv_srq srq;
	struct et_vb_pd *pd;
	struct et_rq rq;
	uint32_t max_wr;
	uint32_t limit;            /* the limit event's, armed; 0: not armed */
	uint32_t users;            /* QPs on it */
};

/* A send's own record, by the transport's wr_id: what verbs must know at
 * its completion that the transport does not carry. */
struct et_vb_swr {
	uint64_t wr_id;
	bool signaled;
};

struct et_vb_qp {
	struct ibv_qp_ex qpx;      /* its ibv_qp first */
	struct et_vb_ctx *ctx;
	struct et_vb_pd *pd;
	struct et_qp *eq;          /* lib/transport's */
	struct et_vb_cq *scq, *rcq;
	struct et_vb_srq *srq;     /* NULL: its own receive queue */
	bool sq_sig_all;
	bool ud;                   /* IBV_QPT_UD: the transport's datagram mode */
	/* what INIT, RTR and RTS said, applied at RTS */
	struct ibv_qp_attr attr;
	struct ibv_qp_cap cap;
	uint32_t dest_ip;
	uint32_t peer_host;        /* the topology's host; UINT32_MAX: not in it */
	bool lb_attached;
	void *lb_state;
	struct et_vb_swr *swr;     /* by posting order, max_send_wr of them */
	uint32_t swr_head, swr_tail;
	uint8_t *inline_buf;       /* a slot per send queue entry */
	uint32_t n_send, n_recv;   /* outstanding */
};

/* async.c: an asynchronous event for the consumer's ibv_get_async_event */
void et_vb_async(struct et_vb_ctx *ctx, const struct ibv_async_event *ev);

/* device.c */
extern struct et_vb_device et_vb_device;
/* The environment read and the process runtime configured (once): 0, or
 * -1 after a line to stderr. */
int et_vb_setup(void);
/* Ours behind a context (verbs_get_ctx, rdma-core's header inline): every
 * file's, with no call into device.c. */
static inline struct et_vb_ctx *
et_vb_ctx(struct ibv_context *c)
{
	return (struct et_vb_ctx *)verbs_get_ctx(c);
}
uint64_t et_vb_guid(void);

/* The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d). */
bool et_vb_gid_ipv4(const union ibv_gid *g, uint32_t *ip);

/* cq.c */
int et_vb_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int et_vb_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* The armed CQs with news: their events raised.  From progress. */
uint32_t et_vb_cq_events(struct et_vb_ctx *ctx);

/* srq.c */
int et_vb_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* A receive of s was taken (a completion of a QP on it): the limit event
 * if that left fewer posted than its limit.  The lock held. */
void et_vb_srq_taken(struct et_vb_ctx *ctx, struct et_vb_srq *s);

/* A power of 2, at least n and 2: a queue's ring. */
static inline uint32_t
et_vb_pow2_at_least(uint32_t n)
{
	uint32_t p = 2;

	while (p < n)
		p *= 2;
	return p;
}

/* qp.c */
/* A receive request as the transport's: 0, or EINVAL (more than one
 * buffer). */
/* w as the transport's, its list in sgl (ET_VB_MAX_RECV_SGE of them). */
int et_vb_recv_wr(const struct ibv_recv_wr *w, struct et_recv_wr *e, struct et_sge *sgl);
int et_vb_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int et_vb_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct ibv_qp *et_vb_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a);
/* ibv_modify_qp with the process's lock held (librdmacm's binding of a
 * connection's QP, from progress). */
int et_vb_modify_qp_locked(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
/* The QP of a QPN (a completion names it); NULL if none. */
struct et_vb_qp *et_vb_qp_of(struct et_vb_ctx *ctx, uint32_t qpn);
/* A send completion's record: the consumer's wr_id, whether it asked for
 * a completion. */
struct et_vb_swr et_vb_swr_take(struct et_vb_qp *q);

#endif /* ET_VB_H */
