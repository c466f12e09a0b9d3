/* SPDX-License-Identifier: BSD-3-Clause */
/* After a run: the last frames drained, every counter summed, and every
 * frame made accounted for, per link and in total. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include <rte_mbuf.h>

#include "sim/et_sim_priv.h"

ET_CTR_DEFINE(et_fabric_ctrs, struct et_fabric_stats, ET_FABRIC_COUNTERS);

const char *
et_fabric_qps_bucket(int i)
{
	static const char *const names[ET_FABRIC_QPS_BUCKETS] = {
		"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "2048",
		"4096", "8192", "16384", "more"};

	return i >= 0 && i < ET_FABRIC_QPS_BUCKETS ? names[i] : "?";
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The value of sorted v[0..n) that pct % of them do not exceed (nearest rank). */
static uint32_t
percentile(const uint32_t *v, uint32_t n, uint32_t pct)
{
	uint64_t rank = ((uint64_t)n * pct + 99) / 100;

	return n ? v[rank ? rank - 1 : 0] : 0;
}

void
et_fabric_qps_summary(struct et_fabric_stats *s, uint32_t *per_host, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t q = per_host[i], b = 0;

		if (q > s->max_qps_per_host)
			s->max_qps_per_host = q;
		while (b < ET_FABRIC_QPS_BUCKETS - 1 && q > (1u << b))
			b++;
		s->qps_per_host_hist[b]++;
	}
	qsort(per_host, n, sizeof(*per_host), cmp_u32);
	s->qps_per_host_p50 = percentile(per_host, n, 50);
	s->qps_per_host_p99 = percentile(per_host, n, 99);
}

/* Each host's most QPs at once, as its NIC counted them (requester and
 * responder ends). */
static void
count_qps(struct et_fabric *f)
{
	uint32_t *v = malloc((f->n_hosts + 1) * sizeof(*v));

	if (v == NULL) {
		et_fabric_fail(f, "out of memory counting QPs");
		return;
	}
	for (uint32_t i = 0; i < f->n_hosts; i++)
		v[i] = (uint32_t)f->h[i].nic.st.qps_max;
	et_fabric_qps_summary(&f->st, v, f->n_hosts);
	free(v);
}

static void
add_open_qp(void *ctx, struct et_qp *qp)
{
	et_rt_stats_add_qp(ctx, qp);
}

/* Every frame a NIC took off its link, whatever became of it. */
static uint64_t
nic_rx_total(const struct et_nic *n)
{
	return et_ctr_sum(&et_nic_ctrs, &n->st, ET_CTR_ENDED);
}

/* Every counter block of the fabric, in a fixed order. */
static void
each_block(const struct et_fabric *f,
	   void (*fn)(void *ctx, const struct et_ctr_table *t, const void *st), void *ctx)
{
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		fn(ctx, &et_nic_ctrs, &f->h[i].nic.st);
		fn(ctx, &et_egress_ctrs, &f->h[i].nic.eg.st);
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++) {
			fn(ctx, &et_sw_port_ctrs, &f->net.sw[i].ports[k].st);
			fn(ctx, &et_egress_ctrs, &f->net.sw[i].ports[k].eg.st);
		}
}

struct tally {
	uint64_t made, ended, lost, faults;
};

static void
tally_block(void *ctx, const struct et_ctr_table *t, const void *st)
{
	struct tally *y = ctx;

	y->made += et_ctr_sum(t, st, ET_CTR_BIT(MADE));
	y->ended += et_ctr_sum(t, st, ET_CTR_ENDED);
	y->lost += et_ctr_sum(t, st, ET_CTR_LOST);
	y->faults += et_ctr_sum(t, st, ET_CTR_BIT(FAULT));
}

/* Per link, once it is empty: what one end handed to it, the other end took
 * off it.  Returns false (with f->error) at the first link that differs. */
static bool
links_balance(struct et_fabric *f)
{
	const struct et_net *net = &f->net;

	for (uint32_t i = 0; i < net->n_sw; i++) {
		uint8_t tier = i >= net->first[ET_TIER_CORE] ? ET_TIER_CORE
			       : i >= net->first[ET_TIER_AGG] ? ET_TIER_AGG : ET_TIER_TOR;
		struct et_node me = {tier, i - net->first[tier]};

		for (uint16_t k = 0; k < net->sw[i].n_ports; k++) {
			const struct et_net_peer *pp = &net->peers[i * ET_SW_MAX_PORTS + k];
			const struct et_sw_port *pt = &net->sw[i].ports[k];
			uint64_t sent = pt->eg.st.tx_pkts, got;

			if (!pp->used)
				continue;
			if (pp->peer.tier == ET_TIER_HOST) {
				const struct et_nic *n = &f->h[pp->peer.index].nic;

				got = nic_rx_total(n);
				if (n->eg.st.tx_pkts != pt->st.rx_pkts) {
					et_fabric_fail(f, "accounting: host %u -> %s %u: %" PRIu64 " sent, %" PRIu64
					     " received", pp->peer.index, et_tier_name(&net->t, tier),
					     me.index, n->eg.st.tx_pkts, pt->st.rx_pkts);
					return false;
				}
			} else {
				int back = et_net_port_to(net, pp->peer, me, pp->lane);
				uint32_t j = net->first[pp->peer.tier] + pp->peer.index;

				got = back < 0 ? UINT64_MAX : net->sw[j].ports[back].st.rx_pkts;
			}
			if (sent != got) {
				et_fabric_fail(f, "accounting: %s %u port %u -> %s %u: %" PRIu64 " sent, %" PRIu64
				     " received", et_tier_name(&net->t, tier), me.index, k,
				     et_tier_name(&net->t, pp->peer.tier), pp->peer.index, sent, got);
				return false;
			}
		}
	}
	return true;
}

/* Frames still in the fabric: queued or on a link at an egress, or
 * handed to a port and not yet read. */
static uint64_t
frames_held(const struct et_fabric *f)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < f->n_hosts; i++)
		n += et_egress_held(&f->h[i].nic.eg) + et_port_rx_pending(&f->h[i].nic.port);
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++)
			n += et_egress_held(&f->net.sw[i].ports[k].eg) +
			     et_port_rx_pending(&f->net.sw[i].ports[k].port);
	return n;
}

/* Every frame made is accounted for once the links are empty: every frame
 * that began (a MADE counter: built by a QP, duplicated by a link, a PAUSE)
 * ended (a GONE, DROP or FAULT counter); and on every link, sent =
 * received.  A run that failed is not drained: what it made either ended
 * or is still held somewhere (f->frames_held).  Virtual clock only:
 * real-clock workers may still hold frames. */
static void
account(struct et_fabric *f, const struct tally *y)
{
	if (f->p.real_clock)
		return;
	f->st.frames_made = y->made;
	f->st.frames_accounted = y->ended;
	f->st.mbufs_in_use = et_pool_in_use(f->pool);
	f->pool_mbufs = et_pool_size(f->pool);
	if (f->error[0]) {
		f->frames_held = frames_held(f);
		return;
	}
	if (y->made != y->ended)
		et_fabric_fail(f, "accounting: %" PRIu64 " frames made, %" PRIu64
			       " received or dropped", y->made, y->ended);
	else if (f->st.mbufs_in_use)
		et_fabric_fail(f, "%" PRIu64 " mbufs still in use after the links drained",
			       f->st.mbufs_in_use);
	else
		links_balance(f);
}

/* After the collective: let every frame still on a link arrive (or be
 * dropped), so the pool can be counted and the accounting closed. */
static void
drain(struct et_fabric *f)
{
	for (uint32_t pass = 0; pass < 100000000; pass++) {
		uint32_t work = 0;
		uint64_t t;

		for (uint32_t i = 0; i < f->n_hosts; i++)
			work += et_nic_poll(&f->h[i].nic, f->now);
		work += et_net_poll(&f->net, f->now);
		if (work)
			continue;
		t = et_net_next_event(&f->net, f->now);
		for (uint32_t i = 0; i < f->n_hosts; i++) {
			uint64_t e = et_nic_next_event(&f->h[i].nic, f->now);

			if (e < t)
				t = e;
		}
		if (t == UINT64_MAX || t <= f->now)
			return;
		f->now = t;
	}
}

static void
add_egress(struct et_fabric_stats *s, const struct et_egress_stats *e)
{
	s->packet_hops += e->tx_pkts;
	s->corrupted += e->corrupted;
	s->duplicated += e->duplicated;
}

void
et_fabric_collect(struct et_fabric *f)
{
	struct et_fabric_stats *s = &f->st;
	struct tally y = {0};

	if (!f->p.real_clock && !f->error[0])
		drain(f);

	/* lost anywhere: refused by a switch, lost on a link or at a NIC, and
	 * the frames an endpoint refused as bad (GONE at the NIC, but lost) */
	each_block(f, tally_block, &y);
	s->drops += y.lost;
	s->fault_drops += y.faults;
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++) {
			const struct et_sw_port *pt = &f->net.sw[i].ports[k];

			s->ecn_marks += pt->st.ecn_marks;
			s->pause_frames += pt->st.pause_tx;
			add_egress(s, &pt->eg.st);
		}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct et_fabric_host *h = &f->h[i];
		struct et_rt_stats rs = h->rt.st;

		add_egress(s, &h->nic.eg.st);
		for (int d = 0; d < ET_WIRE_E_COUNT; d++)
			s->rx_bad += h->nic.st.rx_bad[d];
		s->rx_unknown_qpn += h->nic.st.rx_unknown_qpn;
		s->rerouted += h->rt.lb.paths.rerouted;
		s->paths_marked_bad += h->rt.lb.paths.marked_bad;
		s->reps_frozen += h->rt.lb.st.reps_frozen;
		s->reps_explored += h->rt.lb.st.reps_explored;
		s->reps_recycled += h->rt.lb.st.reps_recycled;
		/* QPs still open (a failed run) */
		if (h->nic.pages)
			et_nic_each_qp(&h->nic, add_open_qp, &rs);
		s->qps_created += rs.qps_created;
		s->retransmits += rs.qp.retransmits;
		s->timeouts += rs.qp.timeouts;
		s->rx_dup += rs.qp.rx_dup;
		s->naks += rs.qp.naks_rx;
		s->cnps += rs.qp.cnps_rx;
		s->alloc_fail += rs.qp.alloc_fail;
	}
	s->drops += s->rx_bad;
	count_qps(f);
	account(f, &y);
}
