/* SPDX-License-Identifier: BSD-3-Clause
 * Two QPs joined by an in-memory link that a test scripts, on a fake clock.
 *
 * Every frame a QP sends is parsed (ICRC checked), shown to the script
 * (deliver, drop, duplicate, delay, CE-mark), and delivered after the link
 * latency through et_qp_rx().  When nothing happens the clock jumps to the
 * next delivery or QP deadline, as the fabric's virtual clock does.
 */
#ifndef ET_QP_LINK_H
#define ET_QP_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "base/et_csum.h"
#include "transport/et_qp.h"
#include "wire/et_wire.h"

enum qp_verdict { QP_DELIVER, QP_DROP, QP_DUP, QP_MARK };

struct qp_link;
/* dir 0: A -> B, 1: B -> A.  *delay may be raised (reordering). */
typedef enum qp_verdict (*qp_script_fn)(struct qp_link *l, int dir,
					const struct et_roce_pkt *p, uint64_t *delay);
/* Called after side `side` took in a frame: invariants that must hold
 * after every packet, not only once a whole step is over. */
typedef void (*qp_after_rx_fn)(struct qp_link *l, int side);

struct qp_flight {
	uint64_t at, seq;
	struct rte_mbuf *m;
};

struct qp_link {
	struct et_qp *qp[2];
	struct rte_mempool *pool;
	uint64_t now, latency_ns, seq;
	struct qp_flight *q[2];
	uint32_t n[2], cap;
	qp_script_fn script;
	qp_after_rx_fn after_rx;
	void *ctx;
	uint64_t sent[2], dropped[2], delivered[2];
	/* benchmark: TSC cycles each side spends in et_qp_tx (building,
	 * copying, ICRC), parsing what it receives (ICRC checked) and in
	 * et_qp_rx (placing, state, completions) */
	uint64_t tx_cyc[2], parse_cyc[2], rx_cyc[2];
	bool time_it;
	/* frames each side may send in one pass: a NIC's burst; the tests'
	 * 256 lets a pass run far ahead, so a frame is parsed long after it
	 * was built, out of the caches */
	uint32_t burst;
};

static inline void
qp_link_init(struct qp_link *l, struct et_qp *a, struct et_qp *b,
	     struct rte_mempool *pool, uint64_t latency_ns)
{
	memset(l, 0, sizeof(*l));
	l->qp[0] = a;
	l->qp[1] = b;
	l->pool = pool;
	l->latency_ns = latency_ns;
	l->burst = 256;
	l->cap = 1u << 16;
	l->q[0] = calloc(l->cap, sizeof(struct qp_flight));
	l->q[1] = calloc(l->cap, sizeof(struct qp_flight));
}

static inline void
qp_link_free(struct qp_link *l)
{
	for (int d = 0; d < 2; d++) {
		for (uint32_t i = 0; i < l->n[d]; i++)
			rte_pktmbuf_free(l->q[d][i].m);
		free(l->q[d]);
	}
}

static inline uint64_t
qp_link_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keep each direction ordered by (at, seq): usually an append. */
static inline int
qp_link_put(struct qp_link *l, int d, struct rte_mbuf *m, uint64_t at)
{
	uint32_t i = l->n[d];

	if (i == l->cap)
		return -1;
	while (i > 0 && l->q[d][i - 1].at > at) {
		l->q[d][i] = l->q[d][i - 1];
		i--;
	}
	l->q[d][i] = (struct qp_flight){at, l->seq++, m};
	l->n[d]++;
	return 0;
}

/* One frame leaves side d. */
static inline int
qp_link_send(struct qp_link *l, int d, struct rte_mbuf *m)
{
	struct et_roce_pkt p;
	uint64_t delay = l->latency_ns;
	enum qp_verdict v = QP_DELIVER;

	l->sent[d]++;
	if (l->script) {
		if (et_roce_parse_mbuf(m, &p, 0) != 0)
			return -1; /* a QP built a frame that does not parse */
		v = l->script(l, d, &p, &delay);
	}
	switch (v) {
	case QP_DROP:
		l->dropped[d]++;
		rte_pktmbuf_free(m);
		return 0;
	case QP_MARK:
		if (p.h.ecn == ET_ECN_ECT0 || p.h.ecn == ET_ECN_ECT1)
			et_ipv4_set_ecn(rte_pktmbuf_mtod(m, uint8_t *) + p.l3_off, ET_ECN_CE);
		break;
	case QP_DUP: {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, l->pool, 0, UINT32_MAX);

		if (c == NULL || qp_link_put(l, d, c, l->now + delay + 1))
			return -1;
		break;
	}
	default:
		break;
	}
	return qp_link_put(l, d, m, l->now + delay);
}

/* One pass: each side sends what it may, due frames arrive, timers fire.
 * Returns the work done, or -1 on a broken frame. */
static inline int
qp_link_step(struct qp_link *l)
{
	int work = 0;

	for (int d = 0; d < 2; d++) {
		struct rte_mbuf *m;
		uint64_t t0 = l->time_it ? rte_rdtsc() : 0;
		uint32_t k;

		for (k = 0; k < l->burst && et_qp_tx(l->qp[d], l->now, &m, 1) == 1; k++) {
			if (l->time_it)
				l->tx_cyc[d] += rte_rdtsc() - t0;
			if (qp_link_send(l, d, m))
				return -1;
			work++;
			if (l->time_it)
				t0 = rte_rdtsc();
		}
	}
	for (int d = 0; d < 2; d++) {
		uint32_t i = 0;

		while (i < l->n[d] && l->q[d][i].at <= l->now) {
			struct rte_mbuf *m = l->q[d][i].m;
			struct et_roce_pkt p;
			uint64_t t0 = l->time_it ? rte_rdtsc() : 0, t1 = 0;

			if (et_roce_parse_mbuf(m, &p, 0) != 0)
				return -1;
			if (l->time_it)
				t1 = rte_rdtsc();
			et_qp_rx(l->qp[1 - d], &p, l->now);
			if (l->time_it) {
				l->parse_cyc[1 - d] += t1 - t0;
				l->rx_cyc[1 - d] += rte_rdtsc() - t1;
			}
			if (l->after_rx)
				l->after_rx(l, 1 - d);
			rte_pktmbuf_free(m);
			l->delivered[d]++;
			i++;
			work++;
		}
		if (i) {
			memmove(l->q[d], l->q[d] + i, (l->n[d] - i) * sizeof(struct qp_flight));
			l->n[d] -= i;
		}
	}
	et_qp_timer(l->qp[0], l->now);
	et_qp_timer(l->qp[1], l->now);
	return work;
}

/* Run until done(l) says so.  0: done; -1: broken frame; -2: nothing left
 * to happen but not done (a hang); -3: past until_ns. */
static inline int
qp_link_run(struct qp_link *l, bool (*done)(struct qp_link *l), uint64_t until_ns)
{
	for (;;) {
		int w = qp_link_step(l);
		uint64_t next = UINT64_MAX, t;

		if (w < 0)
			return -1;
		if (done && done(l))
			return 0;
		/* a timer that just fired may have made a QP ready: time only
		 * moves on when nothing can happen now */
		if (w > 0 || et_qp_tx_ready(l->qp[0], l->now) || et_qp_tx_ready(l->qp[1], l->now))
			continue;
		for (int d = 0; d < 2; d++) {
			if (l->n[d] && l->q[d][0].at < next)
				next = l->q[d][0].at;
			t = et_qp_deadline(l->qp[d]);
			if (t < next)
				next = t;
		}
		if (next == UINT64_MAX)
			return done ? -2 : 0;
		if (next > until_ns)
			return -3;
		l->now = next > l->now ? next : l->now + 1;
	}
}

#endif /* ET_QP_LINK_H */
