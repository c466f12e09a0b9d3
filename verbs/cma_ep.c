/* SPDX-License-Identifier: BSD-3-Clause
 * Our librdmacm's synchronous endpoints (rdma_create_ep,
 * rdma_get_request), its device list and rdma_getaddrinfo (names through
 * libc's resolver).  The library as a whole: cma.c.
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"

/* ---- endpoints: synchronous ids with their QP ---- */

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	struct cma_id *c;

	if (id == NULL || res == NULL)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &cm_id, NULL,
			   res->ai_port_space ? (enum rdma_port_space)res->ai_port_space
					      : RDMA_PS_TCP))
		return -1;
	c = cma(cm_id);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm_id, res->ai_src_addr))
			goto err;
		if (pd)
			cm_id->pd = pd;
		if (qp_init_attr) {
			if ((c->ep_attr = malloc(sizeof(*qp_init_attr))) == NULL) {
				errno = ENOMEM;
				goto err;
			}
			*c->ep_attr = *qp_init_attr;
			c->ep_attr->qp_type = res->ai_qp_type;
		}
		*id = cm_id;
		return 0;
	}
	if (rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000) ||
	    rdma_resolve_route(cm_id, 2000))
		goto err;
	if (qp_init_attr) /* the address's QP type, as librdmacm sets it */
		qp_init_attr->qp_type = res->ai_qp_type;
	if (qp_init_attr && rdma_create_qp(cm_id, pd, qp_init_attr))
		goto err;
	*id = cm_id;
	return 0;
err:
	rdma_destroy_ep(cm_id);
	return -1;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	int e = errno; /* the caller's error, when it cleans up after one */

	rdma_destroy_qp(id);
	free(cma(id)->ep_attr);
	rdma_destroy_id(id);
	errno = e;
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = cma(listen);
	struct rdma_cm_event *e;

	if (!l->sync || id == NULL)
		return fail(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &e))
		return -1;
	if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		listen->event = e;
		return fail(e->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED : EINVAL);
	}
	if (l->ep_attr) {
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(e->id, listen->pd, &a)) {
			listen->event = e;
			return -1;
		}
	}
	*id = e->id;
	e->id->event = e;
	return 0;
}

/* ---- devices ---- */

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **l;

	if (cma_init()) {
		if (num_devices)
			*num_devices = 0;
		return NULL;
	}
	if ((l = calloc(2, sizeof(*l))) == NULL)
		return NULL;
	l[0] = cma_verbs;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- rdma_getaddrinfo: names through libc's resolver ---- */

static int
copy_sockaddr(struct sockaddr **to, socklen_t *len, const struct sockaddr *from, socklen_t n)
{
	if ((*to = malloc(n)) == NULL)
		return -1;
	memcpy(*to, from, n);
	*len = n;
	return 0;
}

int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	struct rdma_addrinfo *r;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int e;

	if (res == NULL || (node == NULL && service == NULL))
		return fail(EINVAL);
	if (hints && hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET)
		return fail(EAFNOSUPPORT);
	if (hints && hints->ai_flags & RAI_NUMERICHOST)
		h.ai_flags |= AI_NUMERICHOST;
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	if ((e = getaddrinfo(node, service, &h, &ai)) != 0)
		return fail(e == EAI_SYSTEM ? errno : EADDRNOTAVAIL);
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		freeaddrinfo(ai);
		return fail(ENOMEM);
	}
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = AF_INET;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	e = passive ? copy_sockaddr(&r->ai_src_addr, &r->ai_src_len, ai->ai_addr, ai->ai_addrlen)
		    : copy_sockaddr(&r->ai_dst_addr, &r->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
	if (e == 0 && !passive && hints && hints->ai_src_addr)
		e = copy_sockaddr(&r->ai_src_addr, &r->ai_src_len, hints->ai_src_addr,
				  hints->ai_src_len);
	freeaddrinfo(ai);
	if (e) {
		rdma_freeaddrinfo(r);
		return fail(ENOMEM);
	}
	*res = r;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
