/* SPDX-License-Identifier: BSD-3-Clause
 * What the files of our librdmacm share (cma.c: the device, events, ids
 * and what the agent tells; cma_conn.c: QPs and connections; cma_ep.c:
 * synchronous endpoints, devices and rdma_getaddrinfo).  Private: the
 * library's map exports rdma_cma.h's calls only.
 */
#ifndef ET_VB_CMA_PRIV_H
#define ET_VB_CMA_PRIV_H

#include <arpa/inet.h>
#include <errno.h>

#include <rdma/rdma_cma.h>

#include "et_vb.h"
#include "host/et_rdmacm.h"

/* what rdma_cm gives the UD QPs of its UDP port space (RDMA_UDP_QKEY) */
#define CMA_UDP_QKEY 0x01234567u

struct cma_id;

struct cma_channel {
	struct rdma_event_channel ch; /* first: the program's pointer */
	int wr;                       /* the pipe's write end */
	struct cma_event *head, *tail;
	/* threads inside rdma_get_cm_event: a channel destroyed under them
	 * (rping's main thread while its event thread waits) is freed by
	 * the last to leave, never under one */
	uint32_t readers;
	bool dead;
};

struct cma_event {
	struct rdma_cm_event ev;      /* first: rdma_ack_cm_event's pointer */
	struct cma_event *next;
	struct cma_id *owner;         /* whose unacknowledged event it is */
	uint8_t pdata[ET_CM_PDATA_MAX];
};

struct cma_id {
	struct rdma_cm_id id;         /* first: the program's pointer */
	struct et_process_cm_holder holder;
	struct et_rdmacm_id *rid;     /* the agent's connection; NULL: none yet or released */
	bool listening;
	uint32_t psn;                 /* the first PSN our QP expects */
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	uint8_t timeout;              /* the QP's ACK timeout (rdma_set_option) */
	uint32_t unacked;             /* events the program has not acknowledged */
	bool sync;                    /* its channel its own: each call waits */
	struct ibv_qp_init_attr *ep_attr; /* a passive endpoint's: its requests' QPs */
	struct ibv_sa_path_rec path;  /* route.path_rec: the GIDs and the MTU */
};

/* the device of every id, and their one PD (cma.c) */
extern struct ibv_context *cma_verbs;
extern struct ibv_pd *cma_pd;

static inline struct cma_id *
cma(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static inline int
fail(int e)
{
	errno = e;
	return -1;
}

static inline uint32_t
addr_ip(const struct sockaddr *a)
{
	return ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);
}

static inline uint16_t
addr_port(const struct sockaddr *a)
{
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

/* Our device open (the process runtime with it): 0, or -1 with errno. */
int cma_init(void);
/* The id is on our device now (bound, resolved, or a request's). */
void cma_on_device(struct rdma_cm_id *id);
/* The route's addresses set, its one path record with them. */
void cma_set_route(struct cma_id *c, uint32_t src_ip, uint16_t src_port, uint32_t dst_ip,
		   uint16_t dst_port);
/* The agent's calls: the connection made (the QP to RTR and RTS), and
 * what it tells of an id's connection (its event for the program). */
int cma_bind(void *ctx, const struct et_rdmacm_bind *b);
void cma_on_event(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev,
		  uint64_t now);
void cma_qp_to_error(struct cma_id *c);
/* A synchronous id's call waits for its event: 0, or -1 with errno. */
int cma_complete(struct rdma_cm_id *id);

#endif
