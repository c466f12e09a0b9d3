/* SPDX-License-Identifier: BSD-3-Clause */
/* The event loop: every node of a fabric takes its turn in a fixed order,
 * in virtual time (deterministic) or on the TSC. */
#include <stdatomic.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "host/et_worker.h"
#include "sim/et_sim_priv.h"

/* ---- run ---- */

/* Name the node whose due event does nothing: a bug, said precisely. */
static void
stuck(struct et_fabric *f)
{
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct et_fabric_host *h = &f->h[i];
		uint64_t t = f->drv ? f->drv->next_event(f->drv_ctx, i, f->now)
				    : et_rt_next_event(&h->rt, f->now);

		if (t <= f->now) {
			et_fabric_fail(f, "no progress at %" PRIu64 " ns: host %u has an event due (egress "
			     "queue %u, in flight %u, active QPs %u, timers %u, waiting %u, pool free %u, ring %u)",
			     f->now, i, et_egress_qlen(&h->nic.eg),
			     h->nic.eg.fly_tail - h->nic.eg.fly_head, h->nic.n_active,
			     h->nic.heap_n, h->rt.n_waiting, rte_mempool_avail_count(f->pool),
			     h->nic.port.tx ? rte_ring_count(h->nic.port.tx) : 0);
			return;
		}
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		if (et_switch_next_event(&f->net.sw[i], f->now) <= f->now) {
			et_fabric_fail(f, "no progress at %" PRIu64 " ns: switch %s has an event due (pool free %u)",
			     f->now, f->net.sw[i].name, rte_mempool_avail_count(f->pool));
			return;
		}
	et_fabric_fail(f, "no progress at %" PRIu64 " ns", f->now);
}

/* The node (host, then switches by tier) at the far end of switch s's
 * port k, and that port's index there (0 for a host). */
static uint32_t
peer_node(const struct et_fabric *f, uint32_t s, uint16_t k, uint16_t *port)
{
	const struct et_net_peer *pp = &f->net.peers[s * ET_SW_MAX_PORTS + k];

	*port = pp->port;
	return pp->peer.tier == ET_TIER_HOST ? pp->peer.index
					     : f->n_hosts + f->net.first[pp->peer.tier] + pp->peer.index;
}

/* Tell each link's sender which node, and which port of a switch, its
 * frames wake. */
static void
wire_wakeups(struct et_fabric *f, struct et_agenda *a)
{
	for (uint32_t s = 0; s < f->net.n_sw; s++)
		for (uint16_t k = 0; k < f->net.sw[s].n_ports; k++) {
			struct et_egress *eg = &f->net.sw[s].ports[k].eg;
			uint16_t port;
			uint32_t node = peer_node(f, s, k, &port);

			eg->wake_node = et_agenda_bit(a, node);
			if (node >= f->n_hosts)
				eg->wake_port = et_switch_rx_hint(&f->net.sw[node - f->n_hosts], port);
		}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		uint32_t tor = et_topo_tor_of(&f->p.t, i);

		f->h[i].nic.eg.wake_node = et_agenda_bit(a, f->n_hosts + tor);
		int port = et_net_port_to(&f->net, (struct et_node){ET_TIER_TOR, tor},
					  (struct et_node){ET_TIER_HOST, i}, 0);

		f->h[i].nic.eg.wake_port = et_switch_rx_hint(&f->net.sw[tor], (uint16_t)port);
	}
}

/* One node's turn: a host (NIC, then its part of the collective) or a
 * switch; the work it did. */
static uint32_t
poll_node(struct et_fabric *f, uint32_t i)
{
	if (i < f->n_hosts && f->drv)
		return f->drv->poll(f->drv_ctx, i, f->now);
	if (i < f->n_hosts) {
		struct et_rt_host *h = &f->h[i].rt;
		bool done = h->done_ns != 0;
		uint32_t work = et_rt_poll(h, f->now);

		if (h->fail.why != ET_RT_OK) {
			char why[200];

			f->failed = true;
			if (!f->error[0])
				et_fabric_fail(f, "%s", et_rt_strerror(h, why, sizeof(why)));
		}
		f->hosts_done += !done && h->done_ns;
		return work;
	}
	return et_switch_poll(&f->net.sw[i - f->n_hosts], f->now);
}

static uint64_t
node_next_event(const struct et_fabric *f, uint32_t i)
{
	if (i < f->n_hosts)
		return f->drv ? f->drv->next_event(f->drv_ctx, i, f->now)
			      : et_rt_next_event(&f->h[i].rt, f->now);
	return et_switch_next_event(&f->net.sw[i - f->n_hosts], f->now);
}

/* Real clock with more than one lcore: the hosts (and the collective,
 * which touches both ends of every QP pair) stay on the main lcore, the
 * switches are dealt to the others.  They share only rings, each with one
 * producer and one consumer. */
struct sw_worker {
	struct et_fabric *f;
	uint32_t first, step;     /* switches first, first + step, ... */
	uint64_t base;
	_Atomic int *run;
};

static int
switch_worker(void *arg)
{
	struct sw_worker *w = arg;

	while (atomic_load_explicit(w->run, memory_order_relaxed)) {
		uint64_t now = et_tsc_ns() - w->base + 1;

		for (uint32_t i = w->first; i < w->f->net.n_sw; i += w->step)
			et_switch_poll(&w->f->net.sw[i], now);
	}
	return 0;
}

static unsigned int
launch_switch_workers(struct et_fabric *f, struct sw_worker *w, _Atomic int *run, uint64_t base)
{
	unsigned int lcore, n = 0, workers = rte_lcore_count() - 1;

	if (workers == 0)
		return 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		w[n] = (struct sw_worker){f, n, workers, base, run};
		if (rte_eal_remote_launch(switch_worker, &w[n], lcore) == 0)
			n++;
	}
	return n;
}

static void
unwire_wakeups(struct et_fabric *f)
{
	for (uint32_t i = 0; i < f->net.n_sw; i++) {
		et_switch_no_rx_hints(&f->net.sw[i]);
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++)
			f->net.sw[i].ports[k].eg.wake_node = f->net.sw[i].ports[k].eg.wake_port =
				(struct et_wake_bit){NULL, 0};
	}
	for (uint32_t i = 0; i < f->n_hosts; i++)
		f->h[i].nic.eg.wake_node = f->h[i].nic.eg.wake_port = (struct et_wake_bit){NULL, 0};
}

/* Count a pass; true when the run is over: every host done, a failure, or
 * the time limit (said as a failure). */
static bool
pass_ends_run(struct et_fabric *f)
{
	f->passes++;
	if (f->failed || f->hosts_done == f->n_hosts)
		return true;
	if (f->now <= f->p.time_limit_ns)
		return false;
	et_fabric_fail(f, "not done after %.3f s of %s time (%u of %u hosts done)", f->now / 1e9,
		       f->p.real_clock ? "real" : "virtual", f->hosts_done, f->n_hosts);
	return true;
}

/* Real clock: every node takes its turn in a fixed order, pass after pass,
 * the switches on the other lcores if there are any. */
static void
run_real(struct et_fabric *f)
{
	uint32_t nodes = f->n_hosts + f->net.n_sw;
	uint64_t base = et_tsc_ns();
	struct sw_worker sw[RTE_MAX_LCORE];
	_Atomic int run = 1;
	unsigned int workers = launch_switch_workers(f, sw, &run, base);

	if (workers > 0)
		nodes = f->n_hosts; /* the switches poll on their own lcores */
	for (f->now = 1;; f->now = et_tsc_ns() - base + 1) {
		for (uint32_t i = 0; i < nodes; i++)
			poll_node(f, i);
		f->turns += nodes;
		if (pass_ends_run(f))
			break;
	}
	if (workers) {
		atomic_store(&run, 0);
		rte_eal_mp_wait_lcore();
	}
}

/* Virtual time: a pass visits the nodes on the agenda in node order (see
 * sim/et_agenda.h); after its turn a node says when it next has something
 * due, and is visited again in the next pass only if that is now.  A pass
 * that does no work moves the clock to the earliest due. */
static void
run_virtual(struct et_fabric *f, struct et_agenda *a)
{
	uint32_t idle = 0;

	wire_wakeups(f, a);
	for (f->now = 1;;) {
		uint32_t work = 0, i, w;
		uint64_t t;

		et_agenda_due(a, f->now);
		for (i = et_agenda_take(a, 0); i < a->n; i = et_agenda_take(a, i + 1)) {
			w = poll_node(f, i);
			f->turns++;
			t = node_next_event(f, i);
			if (t <= f->now)
				et_agenda_mark(a, i); /* more to do now: next pass */
			else
				et_agenda_wake_at(a, i, t);
			work += w;
		}
		if (pass_ends_run(f))
			break;
		if (work) {
			idle = 0;
			continue;
		}
		t = et_agenda_next(a, f->now);
		if (t == UINT64_MAX) {
			et_fabric_fail(f, "stalled at %.6f s: nothing left to do, %u of %u hosts done",
				       f->now / 1e9, f->hosts_done, f->n_hosts);
			break;
		}
		if (t > f->now)
			f->now = t;
		else if (++idle > 1000) {
			stuck(f);
			break;
		}
	}
	unwire_wakeups(f);
}

int
et_fabric_run(struct et_fabric *f)
{
	struct et_agenda a;

	if (f->p.real_clock) {
		run_real(f);
		return f->error[0] ? -1 : 0;
	}
	if (et_agenda_init(&a, f->n_hosts + f->net.n_sw))
		return et_fabric_fail(f, "out of memory");
	f->agenda = &a;
	run_virtual(f, &a);
	f->agenda = NULL;
	et_agenda_free(&a);
	return f->error[0] ? -1 : 0;
}
