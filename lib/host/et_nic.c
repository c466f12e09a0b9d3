/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "base/et_csum.h"
#include "host/et_nic.h"
#include "wire/et_pfc.h"
#include "base/et_rand.h"

#define BURST 32
#define RX_CATCH_UP 8 /* bursts more, when timers are due */
#define NONE UINT32_MAX
#define PAGE_MASK (ET_NIC_QP_PAGE - 1)
/* the timer heap's first size; it doubles as deadlines pile up */
#define HEAP_FIRST 256
/* pages of QP slots a table of max_qps needs */
#define N_PAGES(max_qps) (((max_qps) + PAGE_MASK) >> ET_NIC_QP_PAGE_SHIFT)

ET_CTR_DEFINE(et_nic_ctrs, struct et_nic_stats, ET_NIC_COUNTERS);

int
et_nic_init(struct et_nic *n, const struct et_port *port, const struct et_link_model *lm,
	    struct rte_mempool *pool, const struct rte_ether_addr *mac, uint32_t ip,
	    uint32_t qpn_base, uint32_t max_qps)
{
	struct et_link_model model;

	memset(n, 0, sizeof(*n));
	if (max_qps == 0 || qpn_base == 0 || qpn_base + (uint64_t)max_qps > ET_QPN_MASK)
		return -EINVAL;
	n->port = *port;
	n->rx_next = UINT64_MAX;
	n->pool = pool;
	n->mac = *mac;
	n->ip = ip;
	n->qpn_base = qpn_base;
	n->max_qps = max_qps;
	n->pick_qps = max_qps;
	n->rx_rng = (lm->seed ^ 0x9e3779b97f4a7c15ull) | 1;
	n->cur = NONE;
	/* with a rate, keep the queue short so the round robin stays fine
	 * grained; on a wire, hand the port whole bursts */
	n->tx_budget = lm->rate_bps ? 2 : BURST;
	n->pages = calloc(N_PAGES(max_qps), sizeof(*n->pages));
	n->heap_cap = HEAP_FIRST;
	n->heap = calloc(n->heap_cap, sizeof(*n->heap));
	model = *lm;
	model.seed = et_link_seed(lm->seed, mac_id(mac));
	if (!n->pages || !n->heap || et_egress_init(&n->eg, &n->port, &model, 64)) {
		et_nic_free(n);
		return -ENOMEM;
	}
	return 0;
}

void
et_nic_acks_first(struct et_nic *n, bool on)
{
	n->acks_first = on;
	/* its control queue then holds the acknowledgements (and ARP) */
	n->eg.ctrl_paused_too = on;
}

void
et_nic_free(struct et_nic *n)
{
	uint32_t i, k;

	for (i = 0; n->pages && i < N_PAGES(n->max_qps); i++) {
		for (k = 0; n->pages[i] && k < ET_NIC_QP_PAGE; k++)
			et_qp_destroy(n->pages[i]->q[k].qp);
		free(n->pages[i]);
	}
	et_egress_free(&n->eg);
	free(n->pages);
	free(n->heap);
	n->pages = NULL;
	n->heap = NULL;
	n->n_qps = 0;
}

int
et_nic_team_init(struct et_nic_team *t, uint32_t n, unsigned int ring_size, int socket)
{
	char name[RTE_RING_NAMESIZE];
	static unsigned int teams;

	memset(t, 0, sizeof(*t));
	if (n == 0 || n > ET_NIC_TEAM_MAX)
		return -EINVAL;
	t->n = n;
	teams++;
	for (uint32_t k = 0; k < n; k++) {
		/* any NIC of the team may write it; only its own reads it */
		snprintf(name, sizeof(name), "et_team%u_%u", teams, k);
		t->inbox[k] = rte_ring_create(name, ring_size, socket, RING_F_SC_DEQ);
		if (t->inbox[k] == NULL) {
			et_nic_team_free(t);
			return -ENOMEM;
		}
	}
	return 0;
}

void
et_nic_team_free(struct et_nic_team *t)
{
	struct rte_mbuf *m;

	for (uint32_t k = 0; k < ET_NIC_TEAM_MAX; k++) {
		if (t->inbox[k] == NULL)
			continue;
		while (rte_ring_dequeue(t->inbox[k], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(t->inbox[k]);
		t->inbox[k] = NULL;
	}
	t->n = 0;
}

void
et_nic_join(struct et_nic *nic, const struct et_nic_team *t, uint32_t k)
{
	nic->team = t;
	nic->team_k = k;
}

static inline uint32_t
idx_of(const struct et_nic *n, const struct et_qp *qp)
{
	return et_qp_qpn(qp) - n->qpn_base;
}

/* The slot of QPN qpn_base + idx; NULL when its page holds no QP. */
static inline struct et_nic_qp *
slot(const struct et_nic *n, uint32_t idx)
{
	struct et_nic_qp_page *p = n->pages[idx >> ET_NIC_QP_PAGE_SHIFT];

	return p ? &p->q[idx & PAGE_MASK] : NULL;
}

struct et_qp *
et_nic_qp_find(const struct et_nic *n, uint32_t qpn)
{
	const struct et_nic_qp *e;

	if (qpn < n->qpn_base || qpn - n->qpn_base >= n->max_qps)
		return NULL;
	e = slot(n, qpn - n->qpn_base);
	return e ? e->qp : NULL;
}

/* The slot of a QP that exists: its page does. */
static inline struct et_nic_qp *
live(const struct et_nic *n, uint32_t idx)
{
	return &n->pages[idx >> ET_NIC_QP_PAGE_SHIFT]->q[idx & PAGE_MASK];
}

/* ---- timers: a binary min-heap of (deadline, QP) ---- */

static void
heap_push(struct et_nic *n, uint64_t at, uint32_t idx)
{
	uint32_t i;

	if (n->heap_n == n->heap_cap) {
		struct et_nic_timer *h = realloc(n->heap, 2 * n->heap_cap * sizeof(*h));

		if (h == NULL)
			return; /* the QP's next event still fires via its next reschedule */
		n->heap = h;
		n->heap_cap *= 2;
	}
	i = n->heap_n++;
	while (i > 0 && n->heap[(i - 1) / 2].at > at) {
		n->heap[i] = n->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	n->heap[i] = (struct et_nic_timer){at, idx};
}

static struct et_nic_timer
heap_pop(struct et_nic *n)
{
	struct et_nic_timer top = n->heap[0], last = n->heap[--n->heap_n];
	uint32_t i = 0, c;

	while ((c = 2 * i + 1) < n->heap_n) {
		if (c + 1 < n->heap_n && n->heap[c + 1].at < n->heap[c].at)
			c++;
		if (n->heap[c].at >= last.at)
			break;
		n->heap[i] = n->heap[c];
		i = c;
	}
	if (n->heap_n)
		n->heap[i] = last;
	return top;
}

/* Keep the heap holding the QP's earliest deadline, not before not_before.
 * A deadline that moved later leaves an early entry behind: it fires, finds
 * nothing due, and the QP is scheduled again at its real deadline. */
static void
schedule_from(struct et_nic *n, uint32_t idx, uint64_t not_before)
{
	struct et_nic_qp *e = live(n, idx);
	uint64_t d = et_qp_deadline(e->qp);

	if (d == UINT64_MAX)
		return;
	if (d < not_before) {
		n->st.timer_stalls++;
		d = not_before;
	}
	if (e->timer_at && e->timer_at <= d)
		return;
	e->timer_at = d;
	heap_push(n, d, idx);
}

static void
schedule(struct et_nic *n, uint32_t idx)
{
	schedule_from(n, idx, 0);
}

/* ---- the active list ---- */

void
et_nic_activate(struct et_nic *n, struct et_qp *qp, int pos)
{
	uint32_t idx = idx_of(n, qp), at;
	struct et_nic_qp *e = live(n, idx);

	if (e->active)
		return;
	e->active = true;
	n->n_active++;
	if (n->cur == NONE) {
		e->next = e->prev = idx;
		n->cur = idx;
		return;
	}
	/* insert before `at`: the tail is just before the one served next */
	at = n->cur;
	if (pos >= 0) {
		for (int k = 0; k <= pos % (int)n->n_active; k++)
			at = live(n, at)->next;
	}
	e->next = at;
	e->prev = live(n, at)->prev;
	live(n, e->prev)->next = idx;
	live(n, at)->prev = idx;
	if (pos == 0)
		n->cur = idx;
}

static void
deactivate(struct et_nic *n, uint32_t idx)
{
	struct et_nic_qp *e = live(n, idx);

	e->active = false;
	if (--n->n_active == 0) {
		n->cur = NONE;
		return;
	}
	live(n, e->prev)->next = e->next;
	live(n, e->next)->prev = e->prev;
	if (n->cur == idx)
		n->cur = e->next;
}

/* ---- QPs ---- */

struct et_qp *
et_nic_qp_create(struct et_nic *n, const struct et_qp_attr *a, struct et_mr_table *mrs,
		 struct et_cq *send_cq, struct et_cq *recv_cq)
{
	struct et_qp_attr x = *a;
	struct et_nic_qp_page **pg;
	struct et_qp *qp;
	uint32_t i = 0, k;

	if (a->qpn) {
		if (a->qpn < n->qpn_base || a->qpn - n->qpn_base >= n->max_qps ||
		    et_nic_qp_find(n, a->qpn))
			return NULL;
		i = a->qpn - n->qpn_base;
		goto take;
	}
	/* the slot after the last one taken: a QPN is reused as late as
	 * possible, so a late frame for a destroyed QP finds no successor;
	 * a page with no QP is all free, a full one is passed whole */
	for (k = 0; k < n->pick_qps;) {
		const struct et_nic_qp_page *p;

		i = (n->next_slot + k) % n->pick_qps;
		p = n->pages[i >> ET_NIC_QP_PAGE_SHIFT];
		if (p == NULL || p->q[i & PAGE_MASK].qp == NULL)
			break;
		k += p->used == ET_NIC_QP_PAGE ? ET_NIC_QP_PAGE - (i & PAGE_MASK) : 1;
	}
	if (k >= n->pick_qps)
		return NULL;
	n->next_slot = (i + 1) % n->pick_qps;
take:
	pg = &n->pages[i >> ET_NIC_QP_PAGE_SHIFT];
	if (*pg == NULL && (*pg = calloc(1, sizeof(**pg))) == NULL)
		return NULL;
	x.qpn = n->qpn_base + i;
	x.mac = n->mac;
	x.ip = n->ip;
	qp = et_qp_create(&x, mrs, send_cq, recv_cq, n->pool);
	if (qp == NULL) {
		if ((*pg)->used == 0) {
			free(*pg);
			*pg = NULL;
		}
		return NULL;
	}
	(*pg)->q[i & PAGE_MASK] = (struct et_nic_qp){.qp = qp};
	(*pg)->used++;
	n->st.qps_made++;
	if (++n->n_qps > n->st.qps_max)
		n->st.qps_max = n->n_qps;
	return qp;
}

void
et_nic_reserve_qpns(struct et_nic *n, uint32_t pick)
{
	if (pick && pick <= n->max_qps) {
		n->pick_qps = pick;
		n->next_slot %= pick;
	}
}

void
et_nic_qp_destroy(struct et_nic *n, struct et_qp *qp)
{
	uint32_t idx = idx_of(n, qp);
	struct et_nic_qp_page **pg = &n->pages[idx >> ET_NIC_QP_PAGE_SHIFT];

	if (live(n, idx)->active)
		deactivate(n, idx);
	et_qp_destroy(qp);
	/* its stale heap entries find no QP (or no page) */
	(*pg)->q[idx & PAGE_MASK] = (struct et_nic_qp){0};
	n->n_qps--;
	if (--(*pg)->used == 0) {
		free(*pg);
		*pg = NULL;
	}
}

void
et_nic_each_qp(const struct et_nic *n, void (*fn)(void *ctx, struct et_qp *qp), void *ctx)
{
	for (uint32_t i = 0; n->pages && i < N_PAGES(n->max_qps); i++)
		for (uint32_t k = 0; n->pages[i] && k < ET_NIC_QP_PAGE; k++)
			if (n->pages[i]->q[k].qp)
				fn(ctx, n->pages[i]->q[k].qp);
}

int
et_nic_post_send(struct et_nic *n, struct et_qp *qp, const struct et_send_wr *wr)
{
	int rc = et_qp_post_send(qp, wr);

	if (rc == 0)
		et_nic_activate(n, qp, -1);
	return rc;
}

/* ---- the poll loop ---- */

static void arp_rx(struct et_nic *n, const uint8_t *f, uint32_t len, uint64_t now);

/* A team's NIC: hand a frame that belongs to another NIC to its inbox.
 * true when the frame left (or was lost on a full inbox: counted). */
static bool
steer(struct et_nic *n, struct rte_mbuf *m, const uint8_t *f, uint16_t len, uint16_t type)
{
	uint32_t k = 0; /* ARP: NIC 0's responder */

	if (type != RTE_ETHER_TYPE_ARP) {
		int32_t qpn = et_roce_peek_dest_qp(f, len);

		if (qpn < 0)
			return false; /* not RoCE: ours to refuse, or a PAUSE for our egress */
		k = et_nic_team_owner(n->team, n->qpn_base, (uint32_t)qpn);
	}
	if (k == n->team_k)
		return false;
	if (rte_ring_mp_enqueue(n->team->inbox[k], m) == 0) {
		n->st.rx_steered++;
		return true;
	}
	n->st.rx_steer_full++;
	rte_pktmbuf_free(m);
	return true;
}

/* One frame, to its QP; true when m is no longer ours to free. */
static bool
rx_one(struct et_nic *n, struct rte_mbuf *m, uint64_t now, bool steered)
{
	const uint8_t *f;
	struct et_roce_pkt p;
	struct et_nic_qp *e;
	uint16_t quanta, type, len;
	uint32_t idx;
	int rc;

	/* a PMD with small buffers (memif's default 2 KB) chains big frames */
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		n->st.rx_bad[ET_WIRE_E_SEGMENTED]++;
		return false;
	}
	f = rte_pktmbuf_mtod(m, const uint8_t *);
	len = rte_pktmbuf_data_len(m);
	/* a runt has no type: the RoCE parser refuses and counts it */
	type = len >= RTE_ETHER_HDR_LEN ? et_load16(f + 12) : 0;
	if (n->team && !steered && steer(n, m, f, len, type))
		return true;
	if (type == ET_ETHER_TYPE_MAC_CONTROL) {
		rc = et_pfc_parse(f, len, &quanta);
		if (rc > 0) {
			n->st.pause_rx++;
			et_egress_pause(&n->eg, quanta, now);
		} else if (rc < 0) {
			n->st.rx_bad[ET_WIRE_E_NOT_IPV4]++;
		}
		return false;
	}
	if (type == RTE_ETHER_TYPE_ARP) {
		arp_rx(n, f, len, now);
		return false;
	}
	rc = et_roce_parse_mbuf(m, &p, 0);
	if (rc) {
		n->st.rx_bad[-rc]++;
		return false;
	}
	if (p.h.dst_ip != n->ip) {
		n->st.rx_not_ours++;
		return false;
	}
	if (et_rand_ppm(&n->rx_rng, n->rx_loss_ppm)) {
		n->st.rx_fault_drops++;
		return false;
	}
	idx = p.h.dest_qp - n->qpn_base;
	if (p.h.dest_qp < n->qpn_base || idx >= n->max_qps || !(e = slot(n, idx)) || !e->qp) {
		n->st.rx_unknown_qpn++;
		return false;
	}
	n->st.rx_pkts++;
	n->st.rx_bytes += rte_pktmbuf_pkt_len(m);
	et_qp_rx(e->qp, &p, now);
	/* (a burst's frames for one QP tend to come together) */
	if (n->acks_first && (n->n_touched == 0 || n->touched[n->n_touched - 1] != idx) &&
	    n->n_touched < RTE_DIM(n->touched))
		n->touched[n->n_touched++] = idx;
	/* it may owe an ACK, or its window may have opened */
	et_nic_activate(n, e->qp, -1);
	schedule(n, idx);
	return false;
}

/* A frame the ARP module built: ahead of the data, like PFC. */
static int
arp_send(struct et_nic *n, const uint8_t *f, int len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(n->pool);
	char *d;

	if (!m || !(d = rte_pktmbuf_append(m, (uint16_t)len))) {
		rte_pktmbuf_free(m);
		n->st.ctrl_tx_drop++;
		return -1;
	}
	memcpy(d, f, (size_t)len);
	if (!et_egress_enqueue_ctrl(&n->eg, m)) {
		rte_pktmbuf_free(m);
		n->st.ctrl_tx_drop++;
		return -1;
	}
	n->st.ctrl_tx++;
	return 0;
}

static void
arp_rx(struct et_nic *n, const uint8_t *f, uint32_t len, uint64_t now)
{
	uint8_t out[ET_ARP_FRAME_LEN];
	int k;

	if (!n->arp) {
		n->st.rx_arp_ignored++;
		return;
	}
	n->st.rx_arp++;
	k = et_arp_input(n->arp, f, len, now, out, sizeof(out));
	if (k > 0)
		arp_send(n, out, k);
}

int
et_nic_arp_request(struct et_nic *n, uint32_t ip, uint64_t now)
{
	uint8_t out[ET_ARP_FRAME_LEN];
	int k;

	if (!n->arp)
		return -1;
	k = et_arp_request(n->arp, ip, now, out, sizeof(out));
	if (k <= 0)
		return -1;
	return arp_send(n, out, k);
}

/* acks_first: what the QPs of the burst owe (ACK, NAK, CNP), ahead of the
 * data.  What finds no room stays owed and leaves with the data. */
static void
send_acks(struct et_nic *n, uint64_t now)
{
	struct rte_mbuf *m[8];

	for (uint32_t i = 0; i < n->n_touched; i++) {
		struct et_nic_qp *e = slot(n, n->touched[i]);
		uint16_t k;

		if (e == NULL || e->qp == NULL)
			continue;
		if (et_egress_ctrl_room(&n->eg) < RTE_DIM(m))
			break;
		k = et_qp_tx_acks(e->qp, now, m, RTE_DIM(m));
		for (uint16_t j = 0; j < k; j++)
			et_egress_enqueue_ctrl(&n->eg, m[j]); /* room was checked */
		n->st.tx_pkts += k;
	}
	n->n_touched = 0;
}

static void
rx_frames(struct et_nic *n, struct rte_mbuf **burst, uint16_t k, uint64_t now, bool steered)
{
	et_prefetch_mbufs(burst, k);
	if (k)
		et_prefetch_frame(burst[0]);
	for (uint16_t i = 0; i < k; i++) {
		if (i + 1 < k)
			et_prefetch_frame(burst[i + 1]);
		if (!rx_one(n, burst[i], now, steered))
			rte_pktmbuf_free(burst[i]);
	}
}

/* One burst in, each frame to its QP; in a team, then what the others
 * handed us.  How many frames were read. */
static uint16_t
rx_burst(struct et_nic *n, uint64_t now)
{
	struct rte_mbuf *burst[BURST];
	uint16_t k = et_port_rx_at(&n->port, burst, BURST, now), s = 0;

	rx_frames(n, burst, k, now, false);
	if (n->team) {
		s = (uint16_t)rte_ring_sc_dequeue_burst(n->team->inbox[n->team_k],
							(void **)burst, BURST, NULL);
		rx_frames(n, burst, s, now, true);
	}
	if (n->n_touched)
		send_acks(n, now);
	return k + s;
}

uint32_t
et_nic_poll(struct et_nic *n, uint64_t now)
{
	uint32_t work = 0, b;
	uint16_t k;

	k = rx_burst(n, now);
	work += k;
	/* a due timer may be waiting for an ACK still in the ring (a core
	 * taken away for a while comes back to a full one): read on before
	 * any fires, a bounded number of bursts so a flood cannot hold the
	 * timers back */
	for (b = 0; k == BURST && b < RX_CATCH_UP && n->heap_n && n->heap[0].at <= now; b++) {
		k = rx_burst(n, now);
		work += k;
		n->st.rx_catch_up++;
	}
	n->rx_next = n->port.timed ? et_port_next_arrival(&n->port) : UINT64_MAX;

	/* A QP whose timer ran at now is due again at now + 1 at the
	 * earliest, even if its deadline says now: a timer fires at most once
	 * per now, and this loop ends after the entries that were due */
	while (n->heap_n && n->heap[0].at <= now) {
		struct et_nic_timer t = heap_pop(n);
		struct et_nic_qp *e = slot(n, t.idx);

		if (e == NULL || e->qp == NULL || e->timer_at != t.at)
			continue; /* destroyed, or superseded by an earlier entry */
		e->timer_at = 0;
		n->st.timer_fires++;
		et_qp_timer(e->qp, now);
		et_nic_activate(n, e->qp, -1);
		schedule_from(n, t.idx, now + 1);
		work++;
	}

	/* one packet per active QP per turn, until the egress holds enough */
	while (n->cur != NONE && et_egress_qlen(&n->eg) < n->tx_budget) {
		uint32_t idx = n->cur;
		struct et_nic_qp *e = live(n, idx);
		struct rte_mbuf *m;

		if (et_qp_tx(e->qp, now, &m, 1) == 0) {
			deactivate(n, idx);
			/* an empty pool: the QP's deadline wakes it to try again */
			schedule(n, idx);
			continue;
		}
		if (!et_egress_enqueue(&n->eg, m)) {
			rte_pktmbuf_free(m); /* cannot happen below the budget */
			break;
		}
		n->st.tx_pkts++;
		n->cur = e->next;
		schedule(n, idx);
		work++;
	}
	work += et_egress_run(&n->eg, now);
	return work;
}

uint64_t
et_nic_next_event(const struct et_nic *n, uint64_t now)
{
	uint64_t t = et_egress_next_event(&n->eg, now);

	if (n->rx_next < t)
		t = n->rx_next;
	if (n->heap_n && n->heap[0].at < t)
		t = n->heap[0].at;
	/* an active QP may be able to send once the egress has room */
	if (n->cur != NONE && et_egress_qlen(&n->eg) < n->tx_budget)
		t = now;
	return t;
}

bool
et_nic_set_link(struct et_nic *n, bool up)
{
	if (n->eg.failed == !up)
		return false;
	n->eg.failed = !up;
	return true;
}
