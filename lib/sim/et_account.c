/* SPDX-License-Identifier: BSD-3-Clause */
/* After a run: the last frames drained, every counter summed, and every
 * frame made accounted for, per link and in total. */
#include <inttypes.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "sim/et_sim_priv.h"

/* Every frame a NIC took off its link, whatever became of it. */
static uint64_t
nic_rx_total(const struct et_nic *n)
{
	uint64_t rx = n->st.rx_pkts + n->st.rx_not_ours + n->st.rx_unknown_qpn + n->st.pause_rx;

	for (int d = 0; d < ET_WIRE_E_COUNT; d++)
		rx += n->st.rx_bad[d];
	return rx;
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

/* Every frame made is accounted for once the links are empty: made by a
 * QP, duplicated by a link or a switch's PAUSE = received by a host (good,
 * bad, not ours, unknown QP, PAUSE) + dropped by a switch + lost on a link;
 * and on every link, sent = received.  Virtual clock only: real-clock
 * workers may still hold frames. */
static void
account(struct et_fabric *f)
{
	uint64_t made = 0, gone = 0;

	if (f->p.real_clock || f->error[0])
		return;
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct et_nic *n = &f->h[i].nic;

		made += n->st.tx_pkts + n->eg.st.duplicated;
		gone += nic_rx_total(n) + n->eg.st.loss_drops + n->eg.st.burst_drops +
			n->eg.st.flap_drops + n->eg.st.fail_drops;
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++) {
			const struct et_sw_port *pt = &f->net.sw[i].ports[k];

			made += pt->st.pause_tx + pt->eg.st.duplicated;
			gone += pt->st.pause_rx + pt->eg.st.loss_drops + pt->eg.st.burst_drops +
				pt->eg.st.flap_drops + pt->eg.st.fail_drops;
			for (int d = 0; d < ET_SW_DROP_COUNT; d++)
				gone += pt->st.drops[d];
		}
	f->st.frames_made = made;
	f->st.frames_accounted = gone;
	f->st.mbufs_in_use = rte_mempool_in_use_count(f->pool);
	if (made != gone)
		et_fabric_fail(f, "accounting: %" PRIu64 " frames made, %" PRIu64 " received or dropped", made,
		     gone);
	else if (f->st.mbufs_in_use)
		et_fabric_fail(f, "%u mbufs still in use after the links drained", f->st.mbufs_in_use);
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

void
et_fabric_collect(struct et_fabric *f)
{
	struct et_fabric_stats *s = &f->st;

	if (!f->p.real_clock && !f->error[0])
		drain(f);

	for (uint32_t i = 0; i < f->net.n_sw; i++) {
		const struct et_switch *sw = &f->net.sw[i];

		for (uint16_t k = 0; k < sw->n_ports; k++) {
			const struct et_sw_port *pt = &sw->ports[k];

			for (int d = 0; d < ET_SW_DROP_COUNT; d++)
				s->drops += pt->st.drops[d];
			s->drops += pt->eg.st.loss_drops + pt->eg.st.fail_drops +
				    pt->eg.st.burst_drops + pt->eg.st.flap_drops;
			s->fault_drops += pt->eg.st.loss_drops + pt->eg.st.burst_drops +
					  pt->eg.st.flap_drops;
			s->corrupted += pt->eg.st.corrupted;
			s->duplicated += pt->eg.st.duplicated;
			s->ecn_marks += pt->st.ecn_marks;
			s->pause_frames += pt->st.pause_tx;
			s->packet_hops += pt->eg.st.tx_pkts;
		}
	}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct et_fabric_host *h = &f->h[i];
		uint32_t q = h->rt.qps_max, b = 0;
		struct et_rt_stats rs = h->rt.st;

		s->packet_hops += h->nic.eg.st.tx_pkts;
		s->drops += h->nic.eg.st.loss_drops + h->nic.eg.st.fail_drops +
			    h->nic.eg.st.burst_drops + h->nic.eg.st.flap_drops;
		s->fault_drops += h->nic.eg.st.loss_drops + h->nic.eg.st.burst_drops +
				  h->nic.eg.st.flap_drops;
		s->corrupted += h->nic.eg.st.corrupted;
		s->duplicated += h->nic.eg.st.duplicated;
		for (int d = 0; d < ET_WIRE_E_COUNT; d++)
			s->rx_bad += h->nic.st.rx_bad[d];
		s->rx_unknown_qpn += h->nic.st.rx_unknown_qpn;
		s->rerouted += h->rt.lb.paths.rerouted;
		s->paths_marked_bad += h->rt.lb.paths.marked_bad;
		s->reps_frozen += h->rt.lb.st.reps_frozen;
		s->reps_explored += h->rt.lb.st.reps_explored;
		s->reps_recycled += h->rt.lb.st.reps_recycled;
		if (q > s->max_qps_per_host)
			s->max_qps_per_host = q;
		while (b < 7 && q > (1u << b))
			b++;
		s->qps_hist[b]++;
		/* QPs still open (a failed run) */
		for (uint32_t k = 0; h->nic.q && k < h->nic.max_qps; k++)
			if (h->nic.q[k].qp)
				et_rt_stats_add_qp(&rs, h->nic.q[k].qp);
		s->qps_created += rs.qps_created;
		s->retransmits += rs.retransmits;
		s->timeouts += rs.timeouts;
		s->naks += rs.naks;
		s->cnps += rs.cnps;
		s->alloc_fail += rs.alloc_fail;
	}
	s->drops += s->rx_bad;
	account(f);
}

