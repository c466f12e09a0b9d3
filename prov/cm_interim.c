/* SPDX-License-Identifier: BSD-3-Clause
 * INTERIM, until lib/ has the RDMA CM on the wire (issue 38): the QPs of
 * a connection meet through a Unix socket of the abstract namespace named
 * by the listening endpoint's address, so only processes of one machine
 * can connect.  This file goes when et_fi_cm.h is served by the CM over
 * QP 1; nothing else of the provider knows how the QPs meet.
 *
 * REQ (kind, slot, the asker's address, QPN, PSNs) -> REP (QPN, or 0:
 * refused).  An asker retries every 100 ms for 3 s while nobody listens.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "et_fi.h"
#include "et_fi_cm.h"

#define CM_MAGIC 0x45544649u /* "ETFI" */
#define RETRY_NS 100000000ull
#define GIVE_UP_NS 3000000000ull

struct cm_req {
	uint32_t magic;
	uint8_t kind, slot;
	uint16_t port;   /* the asker's endpoint */
	uint32_t ip;
	uint32_t qpn, sq_psn, rq_psn;
};

struct cm_rep {
	uint32_t magic;
	uint32_t qpn;    /* 0: refused */
};

/* An ask in progress, or an asker's socket waiting for its REQ. */
struct cm_pend {
	int fd;
	struct et_fi_qp *q;     /* ours; NULL on the listening side */
	struct cm_req req;
	bool sent;
	uint64_t retry_at, give_up_at;
	struct cm_pend *next;
};

struct cm_ep {
	int lfd;
	struct cm_pend *pend;
	bool busy;              /* connections being made: polled at every progress */
};

/* No connection being made: a few times a millisecond (control path: a
 * system call or two each). */
#define IDLE_POLL_NS 200000ull

static void
sock_name(uint32_t ip, uint16_t port, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: the first byte of the path is 0 */
	int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "ethereal-fi-cm/%u.%u.%u.%u/%u",
			 ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, port);

	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int
et_fi_cm_listen(struct et_fi_ep *ep)
{
	struct cm_ep *cm = calloc(1, sizeof(*cm));
	struct sockaddr_un sa;
	socklen_t len;

	if (cm == NULL)
		return -FI_ENOMEM;
	cm->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sock_name(ep->ip, ep->port, &sa, &len);
	if (cm->lfd < 0 || bind(cm->lfd, (struct sockaddr *)&sa, len) || listen(cm->lfd, 64)) {
		int e = errno;

		if (cm->lfd >= 0)
			close(cm->lfd);
		free(cm);
		return e == EADDRINUSE ? -FI_EADDRINUSE : -FI_EIO;
	}
	ep->cm = cm;
	return 0;
}

static void
pend_free(struct cm_pend *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

void
et_fi_cm_unlisten(struct et_fi_ep *ep)
{
	struct cm_ep *cm = ep->cm;
	struct cm_pend *p, *n;

	if (cm == NULL)
		return;
	for (p = cm->pend; p; p = n) {
		n = p->next;
		if (p->q)
			p->q->cm = NULL;
		pend_free(p);
	}
	close(cm->lfd);
	free(cm);
	ep->cm = NULL;
}

int
et_fi_cm_connect(struct et_fi_qp *q, uint32_t sq_psn, uint32_t rq_psn)
{
	struct et_fi_ep *ep = q->conn->ep;
	struct cm_ep *cm = ep->cm;
	struct cm_pend *p = calloc(1, sizeof(*p));
	uint64_t now = et_fi_now();

	if (p == NULL)
		return -FI_ENOMEM;
	p->fd = -1;
	p->q = q;
	p->req = (struct cm_req){CM_MAGIC, q->kind, q->slot, ep->port, ep->ip,
				 et_qp_qpn(q->qp), sq_psn, rq_psn};
	p->give_up_at = now + GIVE_UP_NS;
	p->next = cm->pend;
	cm->pend = p;
	q->cm = p;
	cm->busy = true;
	return 0;
}

void
et_fi_cm_drop(struct et_fi_qp *q)
{
	struct cm_pend *p = q->cm;

	if (p) {
		p->q = NULL; /* its socket goes at the next poll */
		q->cm = NULL;
	}
}

/* The asker's side: connect, send, wait for the answer.  true: done. */
static bool
ask(struct cm_pend *p, uint64_t now)
{
	struct et_fi_qp *q = p->q;
	struct sockaddr_un sa;
	socklen_t len;
	struct cm_rep rep;
	ssize_t n;

	if (q == NULL)
		return true;
	if (p->fd < 0) {
		if (now < p->retry_at)
			return false;
		p->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		sock_name(q->conn->peer_ip, q->conn->peer_port, &sa, &len);
		if (p->fd < 0 || connect(p->fd, (struct sockaddr *)&sa, len)) {
			if (p->fd >= 0)
				close(p->fd);
			p->fd = -1;
			if (now >= p->give_up_at) {
				q->cm = NULL;
				et_fi_conn_rejected(q, -FI_ECONNREFUSED);
				return true;
			}
			p->retry_at = now + RETRY_NS;
			return false;
		}
	}
	if (!p->sent) {
		if (send(p->fd, &p->req, sizeof(p->req), MSG_NOSIGNAL) != sizeof(p->req))
			return false;
		p->sent = true;
	}
	n = recv(p->fd, &rep, sizeof(rep), 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;
	q->cm = NULL;
	if (n != sizeof(rep) || rep.magic != CM_MAGIC || rep.qpn == 0)
		et_fi_conn_rejected(q, -FI_ECONNREFUSED);
	else if (et_qp_connect(q->qp, rep.qpn) || et_qp_ready(q->qp))
		et_fi_conn_rejected(q, -FI_EIO);
	else
		et_fi_conn_established(q);
	return true;
}

/* The listener's side: an asker's REQ, answered.  true: done. */
static bool
answer(struct et_fi_ep *ep, struct cm_pend *p)
{
	struct cm_req req;
	struct cm_rep rep = {CM_MAGIC, 0};
	struct et_fi_qp *q;
	ssize_t n = recv(p->fd, &req, sizeof(req), 0);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;
	if (n == sizeof(req) && req.magic == CM_MAGIC &&
	    (req.kind == ET_FI_QP_CTRL || req.kind == ET_FI_QP_DATA)) {
		q = et_fi_conn_accept(ep, req.ip, req.port, req.kind, req.slot, req.rq_psn,
				      req.sq_psn);
		if (q && (et_qp_connect(q->qp, req.qpn) || et_qp_ready(q->qp))) {
			et_fi_conn_refused(q);
			q = NULL;
		}
		if (q) {
			et_fi_conn_accepted(q);
			rep.qpn = et_qp_qpn(q->qp);
		}
	}
	if (send(p->fd, &rep, sizeof(rep), MSG_NOSIGNAL) != sizeof(rep))
		ET_FI_WARN(FI_LOG_EP_CTRL, "the asker left before its answer\n");
	return true;
}

static void
poll_ep(struct et_fi_ep *ep, uint64_t now)
{
	struct cm_ep *cm = ep->cm;
	struct cm_pend **pp, *p;
	int fd;

	while ((fd = accept4(cm->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		p = calloc(1, sizeof(*p));
		if (p == NULL) {
			close(fd);
			break;
		}
		p->fd = fd;
		p->next = cm->pend;
		cm->pend = p;
	}
	cm->busy = false;
	for (pp = &cm->pend; (p = *pp) != NULL;) {
		bool done = p->req.magic ? ask(p, now) : answer(ep, p);

		if (done) {
			*pp = p->next;
			pend_free(p);
		} else {
			pp = &p->next;
			cm->busy = true;
		}
	}
}

void
et_fi_cm_close(void)
{
	/* every listener went with its endpoint */
}

void
et_fi_cm_poll(uint64_t now)
{
	static uint64_t last;
	bool idle_turn = now - last >= IDLE_POLL_NS;

	if (idle_turn)
		last = now;
	for (struct et_fi_ep *ep = et_fi_proc.eps; ep; ep = ep->next) {
		struct cm_ep *cm = ep->cm;

		if (cm && (idle_turn || cm->busy))
			poll_ep(ep, now);
	}
}
