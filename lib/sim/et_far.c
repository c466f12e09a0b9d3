/* SPDX-License-Identifier: BSD-3-Clause
 * The far end of a subflow: the QP on the peer that receives it.
 *
 * Host A's subflow to host B needs B's QPN at once, to start sending.  But
 * while the lanes run (sim/et_lanes.c), B may be running on another lcore:
 * A may not touch B's NIC, and B's QPNs may not depend on which lane got
 * there first.  So A picks the QPN itself, from the ones B's NIC keeps for
 * A (ET_FAR_PER_PEER of them, past the QPNs B picks for its own QPs; the
 * address and key it writes to are known in advance), starts at once, and
 * asks B's lane to make the QP between the window's two barriers: before
 * any frame of A's can arrive there, since nothing sent in a window
 * arrives in it.  Closing is a request too.  Every lane serves its
 * requests in one order (time asked, asking host, its count), so on one
 * lane or many the same QPs are made with the same QPNs.
 *
 * When all of A's QPNs on B are in use, A asks B to pick one: the answer
 * lands one window (the shortest link latency) after A asked, which is
 * never before the window's end, when the answer is made.  Without lanes
 * (the real clock) each QP is made or closed at once, on the same QPNs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/et_sim_priv.h"

enum far_kind { FAR_OPEN, FAR_CLOSE, FAR_ANSWER };

struct et_far_msg {
	uint64_t at;           /* asked (open, close); lands (answer) */
	uint32_t src, seq;     /* the asking host and its count: the order of ties */
	uint32_t dst;          /* the host of the far end */
	enum far_kind kind;
	int rc;                /* answer: et_rt_accept's */
	uint32_t sub;          /* the subflow, in rt */
	struct et_rt_host *rt; /* the sending rank */
	struct et_rt_host *hd; /* open, close: the receiving rank */
	uint32_t recv, qpn;    /* open: the receive and the sending QP; close: the far QP */
	uint32_t far_qpn;      /* open: the QPN A picked; 0: B picks and answers */
	uint64_t off, len;
	struct et_qp_attr a;
	struct et_rt_remote from; /* open, data by READ: where it reads from */
	struct et_rt_remote far; /* answer */
};

/* Messages from one lane to another, or a host's answers still to land
 * (those in order of landing, then of asking). */
struct et_far_box {
	struct et_far_msg *v;
	uint32_t n, cap;
};

struct et_far {
	struct et_fabric *f;
	uint32_t *held;            /* per host pair (A * hosts + B): A's QPNs on B in use, a bit each */
	uint8_t *next;             /* per host pair: the next of them to try */
	uint32_t *seq;             /* per host: requests asked */
	uint64_t *now;             /* per host: the instant of its turn */
	/* while the lanes run */
	uint32_t n_lanes;          /* 0: they do not */
	const uint8_t *owner;      /* per node: its lane */
	uint64_t delay;
	struct et_far_box *ask;    /* [from lane * n_lanes + to lane]: opens, closes */
	struct et_far_box *answer; /* [from lane * n_lanes + to lane] */
	struct et_far_box *sorted; /* per lane: its requests of a window, in order */
	struct et_far_box *due;    /* per host: answers to land */
};

_Static_assert(ET_FAR_PER_PEER <= 32, "a pair's QPNs are bits of a uint32_t");

static struct et_far_msg *
box_add(struct et_far_box *b)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 64;
		struct et_far_msg *v = realloc(b->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		b->v = v;
		b->cap = cap;
	}
	return &b->v[b->n++];
}

static void
boxes_free(struct et_far_box *b, size_t n)
{
	for (size_t i = 0; b && i < n; i++)
		free(b[i].v);
	free(b);
}

int
et_far_init(struct et_fabric *f)
{
	struct et_far *x = calloc(1, sizeof(*x));
	size_t pairs = (size_t)f->n_hosts * f->n_hosts;

	if (x == NULL)
		return -ENOMEM;
	f->far = x;
	x->f = f;
	x->held = calloc(pairs, sizeof(*x->held));
	x->next = calloc(pairs, sizeof(*x->next));
	x->seq = calloc(f->n_hosts, sizeof(*x->seq));
	x->now = calloc(f->n_hosts, sizeof(*x->now));
	return x->held && x->next && x->seq && x->now ? 0 : -ENOMEM;
}

void
et_far_lanes_end(struct et_fabric *f)
{
	struct et_far *x = f->far;
	size_t boxes = (size_t)x->n_lanes * x->n_lanes;

	boxes_free(x->ask, boxes);
	boxes_free(x->answer, boxes);
	boxes_free(x->sorted, x->n_lanes);
	boxes_free(x->due, x->n_lanes ? f->n_hosts : 0);
	x->ask = x->answer = x->sorted = x->due = NULL;
	x->n_lanes = 0;
}

int
et_far_lanes(struct et_fabric *f, uint32_t n_lanes, const uint8_t *owner, uint64_t delay)
{
	struct et_far *x = f->far;
	size_t boxes = (size_t)n_lanes * n_lanes;

	x->n_lanes = n_lanes;
	x->owner = owner;
	x->delay = delay;
	x->ask = calloc(boxes, sizeof(*x->ask));
	x->answer = calloc(boxes, sizeof(*x->answer));
	x->sorted = calloc(n_lanes, sizeof(*x->sorted));
	x->due = calloc(f->n_hosts, sizeof(*x->due));
	if (!x->ask || !x->answer || !x->sorted || !x->due) {
		et_far_lanes_end(f);
		return -ENOMEM;
	}
	return 0;
}

void
et_far_free(struct et_fabric *f)
{
	struct et_far *x = f->far;

	if (x == NULL)
		return;
	if (x->n_lanes)
		et_far_lanes_end(f);
	free(x->held);
	free(x->next);
	free(x->seq);
	free(x->now);
	free(x);
	f->far = NULL;
}

/* ---- A's QPNs on B ---- */

/* The slot on B's NIC of A's k-th QPN there. */
static uint32_t
far_slot(uint32_t a, uint32_t k)
{
	return ET_FAR_PICKED + a * ET_FAR_PER_PEER + k;
}

/* One of A's QPNs on B not in use, taken; 0 when all are. */
static uint32_t
take_qpn(struct et_far *x, uint32_t a, uint32_t b)
{
	size_t p = (size_t)a * x->f->n_hosts + b;

	/* in turn, so a QPN is used again as late as it can be */
	for (uint32_t i = 0; i < ET_FAR_PER_PEER; i++) {
		uint32_t k = (x->next[p] + i) % ET_FAR_PER_PEER;

		if (!(x->held[p] & (1u << k))) {
			x->held[p] |= 1u << k;
			x->next[p] = (uint8_t)((k + 1) % ET_FAR_PER_PEER);
			return x->f->h[b].nic.qpn_base + far_slot(a, k);
		}
	}
	return 0;
}

static void
give_back_qpn(struct et_far *x, uint32_t a, uint32_t b, uint32_t qpn)
{
	uint32_t slot = qpn - x->f->h[b].nic.qpn_base;

	if (slot >= far_slot(a, 0) && slot < far_slot(a, ET_FAR_PER_PEER))
		x->held[(size_t)a * x->f->n_hosts + b] &= ~(1u << (slot - far_slot(a, 0)));
}

/* ---- the sender's side, in its turn ---- */

/* The far end made on hd's host: it receives, or by READ it reads. */
static int
far_accept(struct et_fabric *f, struct et_rt_host *hd, uint32_t src_host, uint32_t recv,
	   uint64_t off, uint64_t len, uint32_t qpn, const struct et_qp_attr *a, uint32_t far_qpn,
	   const struct et_rt_remote *src, struct et_qp **rq, struct et_rt_remote *out)
{
	uint32_t ip = et_topo_host_ip(&f->p.t, src_host);

	if (hd->c->data_by_read)
		return et_rt_accept_read(hd, ip, src_host, recv, off, len, qpn, a, far_qpn, src, rq,
					 out);
	return et_rt_accept(hd, ip, recv, off, len, qpn, a, far_qpn, rq, out);
}

static struct et_far_msg *
ask(struct et_far *x, uint32_t src, uint32_t dst, enum far_kind kind)
{
	struct et_far_msg *m = box_add(&x->ask[x->owner[src] * x->n_lanes + x->owner[dst]]);

	if (m != NULL)
		*m = (struct et_far_msg){.at = x->now[src], .src = src, .seq = x->seq[src]++,
					 .dst = dst, .kind = kind};
	return m;
}

int
et_far_open(struct et_fabric *f, struct et_rt_host *src, uint32_t src_host, struct et_rt_sub *s,
	    struct et_rt_host *hd, uint32_t recv, uint32_t qpn, const struct et_qp_attr *a,
	    struct et_rt_remote *out)
{
	struct et_far *x = f->far;
	uint32_t far_qpn;
	struct et_far_msg *m;
	struct et_rt_remote from;
	struct et_qp *rq;
	int rc = et_rt_far_place(hd, recv, s->off, s->len, out);

	if (rc)
		return rc;
	et_rt_sub_source(src, s, &from);
	far_qpn = take_qpn(x, src_host, s->dst);
	if (x->n_lanes == 0) {
		rc = far_accept(f, hd, src_host, recv, s->off, s->len, qpn, a, far_qpn, &from, &rq, out);
		if (rc && far_qpn)
			give_back_qpn(x, src_host, s->dst, far_qpn);
		return rc;
	}
	if ((m = ask(x, src_host, s->dst, FAR_OPEN)) == NULL) {
		if (far_qpn)
			give_back_qpn(x, src_host, s->dst, far_qpn);
		return -ENOMEM;
	}
	m->sub = et_rt_sub_id(src, s);
	m->rt = src;
	m->hd = hd;
	m->recv = recv;
	m->qpn = qpn;
	m->far_qpn = far_qpn;
	m->off = s->off;
	m->len = s->len;
	m->a = *a;
	m->from = from;
	out->qpn = far_qpn;
	return far_qpn ? 0 : -EINPROGRESS;
}

void
et_far_close(struct et_fabric *f, struct et_rt_host *src, uint32_t src_host, struct et_rt_sub *s,
	     struct et_rt_host *hd, bool now)
{
	struct et_far *x = f->far;
	struct et_far_msg *m;

	give_back_qpn(x, src_host, s->dst, s->far_qpn);
	if (x->n_lanes == 0 || now) {
		et_rt_far_close(hd, &src->st, s->far_qpn);
		return;
	}
	if ((m = ask(x, src_host, s->dst, FAR_CLOSE)) == NULL) {
		f->failed = true;
		et_fabric_fail(f, "out of memory for the requests between hosts");
		return;
	}
	m->qpn = s->far_qpn;
	m->hd = hd;
}

/* ---- the far end's lane, between the barriers ---- */

static int
by_time_host_count(const void *pa, const void *pb)
{
	const struct et_far_msg *a = pa, *b = pb;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int
serve_one(struct et_far *x, uint32_t lane, const struct et_far_msg *m, struct et_agenda *a,
	  uint64_t *next)
{
	struct et_fabric *f = x->f;
	struct et_far_msg *r;
	struct et_qp *rq;
	struct et_rt_remote far;
	int rc;

	if (m->kind == FAR_CLOSE) {
		et_rt_far_close(m->hd, &f->h[m->dst].rt.st, m->qpn);
		return 0;
	}
	rc = far_accept(f, m->hd, m->src, m->recv, m->off, m->len, m->qpn, &m->a, m->far_qpn, &m->from,
		    &rq, &far);
	/* a reading far end sends first: its host wakes, as an answer lands,
	 * one window after the asking */
	if (rc == 0 && m->hd->c->data_by_read) {
		et_agenda_wake_by(a, m->dst, m->at + x->delay);
		if (m->at + x->delay < *next)
			*next = m->at + x->delay;
	}
	if (m->far_qpn) {
		if (rc == 0)
			return 0;
		/* the sender has started: nothing can tell it now */
		f->failed = true;
		et_fabric_fail(f, "host %u: no QP %u for host %u's subflow (%s)", m->dst, m->far_qpn,
			       m->src, rc == -ENOSPC ? "out of memory" : "bad range");
		return rc;
	}
	r = box_add(&x->answer[lane * x->n_lanes + x->owner[m->src]]);
	if (r == NULL) {
		if (rc == 0)
			et_nic_qp_destroy(&f->h[m->dst].nic, rq);
		return -ENOMEM;
	}
	*r = (struct et_far_msg){.at = m->at + x->delay, .src = m->src, .seq = m->seq,
				 .dst = m->dst, .kind = FAR_ANSWER, .rc = rc, .sub = m->sub,
				 .rt = m->rt, .far = far};
	if (r->at < *next)
		*next = r->at;
	return 0;
}

int
et_far_serve(struct et_fabric *f, uint32_t lane, struct et_agenda *a, uint64_t *next)
{
	struct et_far *x = f->far;
	struct et_far_box *all = &x->sorted[lane];
	int rc = 0;

	all->n = 0;
	for (uint32_t s = 0; s < x->n_lanes; s++) {
		struct et_far_box *b = &x->ask[s * x->n_lanes + lane];

		for (uint32_t k = 0; k < b->n; k++) {
			struct et_far_msg *m = box_add(all);

			if (m == NULL)
				return -ENOMEM;
			*m = b->v[k];
		}
		b->n = 0;
	}
	if (all->n > 1)
		qsort(all->v, all->n, sizeof(*all->v), by_time_host_count);
	for (uint32_t k = 0; k < all->n && rc == 0; k++)
		rc = serve_one(x, lane, &all->v[k], a, next);
	return rc;
}

/* ---- the sender's lane, after the barriers ---- */

int
et_far_collect(struct et_fabric *f, uint32_t lane, struct et_agenda *a)
{
	struct et_far *x = f->far;

	for (uint32_t s = 0; s < x->n_lanes; s++) {
		struct et_far_box *b = &x->answer[s * x->n_lanes + lane];

		for (uint32_t k = 0; k < b->n; k++) {
			const struct et_far_msg *m = &b->v[k];
			struct et_far_box *due = &x->due[m->src];
			uint32_t i;

			if (box_add(due) == NULL)
				return -ENOMEM;
			for (i = due->n - 1; i > 0; i--) {
				const struct et_far_msg *p = &due->v[i - 1];

				if (p->at < m->at || (p->at == m->at && p->seq < m->seq))
					break;
				due->v[i] = *p;
			}
			due->v[i] = *m;
			et_agenda_wake_by(a, m->src, m->at);
		}
		b->n = 0;
	}
	return 0;
}

uint32_t
et_far_land(struct et_fabric *f, uint32_t host, uint64_t now)
{
	struct et_far *x = f->far;
	struct et_far_box *due;
	uint32_t k = 0;

	x->now[host] = now;
	if (x->n_lanes == 0)
		return 0;
	due = &x->due[host];
	for (; k < due->n && due->v[k].at <= now; k++) {
		const struct et_far_msg *m = &due->v[k];

		if (m->rc)
			et_rt_connect_failed(m->rt, m->sub);
		else
			et_rt_connected(m->rt, m->sub, &m->far);
	}
	if (k) {
		memmove(due->v, due->v + k, (due->n - k) * sizeof(*due->v));
		due->n -= k;
	}
	return k;
}

uint64_t
et_far_next(const struct et_fabric *f, uint32_t host)
{
	const struct et_far *x = f->far;

	return x->n_lanes && x->due[host].n ? x->due[host].v[0].at : UINT64_MAX;
}
