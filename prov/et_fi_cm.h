/* SPDX-License-Identifier: BSD-3-Clause
 * How the QPs of a connection meet: the active side has made its QP and
 * asks the endpoint (ip, port) for a peer QP of a kind and slot; the
 * passive side makes it (et_fi_conn_accept), binds it to the asker's and
 * answers; the active side binds its own (et_fi_conn_established).
 * conn.c asks through these calls only, so the mechanism is one file.
 */
#ifndef ET_FI_CM_H
#define ET_FI_CM_H

#include <stdint.h>

struct et_fi_ep;
struct et_fi_qp;

/* Listen as ep (its ip and port).  0 or -FI_EADDRINUSE, -FI_ENOMEM. */
int et_fi_cm_listen(struct et_fi_ep *ep);
void et_fi_cm_unlisten(struct et_fi_ep *ep);
/* Ask q's peer for its end; rq_psn is the first PSN q expects; resume:
 * a new control QP of a session the peer has (its endpoint's instance,
 * our rx_seq said; a peer that does not listen any more is not asked
 * again).  Later (from et_fi_cm_poll) one of et_fi_conn_established(q)
 * and et_fi_conn_rejected(q, err).  0 or -FI_errno. */
int et_fi_cm_connect(struct et_fi_qp *q, uint32_t rq_psn, bool resume);
/* Requests in, answers in, retries: from every progress, for every
 * endpoint of the process. */
void et_fi_cm_poll(uint64_t now);
/* q goes: forget it (its peer is told where the mechanism can). */
void et_fi_cm_drop(struct et_fi_qp *q);
/* The process's port closes. */
void et_fi_cm_close(void);

#endif /* ET_FI_CM_H */
