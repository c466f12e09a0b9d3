/* SPDX-License-Identifier: BSD-3-Clause
 * Virtual time, deterministic, on one lcore or several.
 *
 * Time runs in windows as long as the shortest link latency.  A frame is
 * handed to the far end's port when its last bit leaves (one latency before
 * it arrives, see struct et_arrival_hook), so nothing sent inside a window
 * arrives inside it: inside a window every node depends only on what was
 * handed over before it, and the nodes can run apart.  They are dealt to
 * lanes, one per EAL lcore: each ToR with its hosts, and the other
 * switches in turn; a trace's DAG (whose collectives start every rank of a
 * group at once) or a plan written as it is made keeps the hosts on the
 * main lcore's lane.  Each lane runs its own agenda (sim/et_agenda.h) to
 * the window's end; then, between two barriers, each takes the arrivals
 * the other lanes handed its nodes (their letters) and the requests for
 * far ends of subflows on its hosts (sim/et_far.c), and the next window
 * starts at the earliest event of any lane.
 *
 * The answer does not depend on the number of lanes: a node's turns come
 * at the same instants and see the same frames whichever lane runs it, and
 * the run stops at the end of the window in which the last host finished.
 */
#include <stdatomic.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_pause.h>

#include "sim/et_sim_priv.h"

#define MAX_LANES 64

/* A frame handed to a node of another lane: applied after the window. */
struct letter {
	const struct et_rx_hint *hint;
	struct et_arrival a;
	uint32_t node;
};

struct mailbox {
	struct letter *v;
	uint32_t n, cap;
};

struct lanes;

struct lane {
	struct lanes *w;
	struct et_agenda a;
	uint32_t id;
	uint64_t now;
	uint64_t next;     /* after a window: its earliest event left */
	uint64_t passes, turns;
	uint64_t busy, wait; /* TSC cycles in windows and at the barriers */
	bool broken;       /* out of memory, or a node that makes no progress */
	char why[256];
	struct mailbox out[MAX_LANES];
} __rte_cache_aligned;

struct lanes {
	struct et_fabric *f;
	uint32_t n;
	uint64_t span;      /* a window: the shortest link latency */
	uint8_t *owner;     /* per node: its lane */
	struct lane *lane;
	_Atomic uint32_t arrived, sense; /* the barrier */
	_Atomic int go;     /* the workers wait for it: 1 run, -1 do not */
	bool stop;          /* lane 0's verdict after a window */
};

/* ---- between lanes ---- */

static void
barrier(struct lanes *w, uint32_t *sense)
{
	uint32_t spins = 0;

	*sense ^= 1;
	if (atomic_fetch_add(&w->arrived, 1) == w->n - 1) {
		atomic_store_explicit(&w->arrived, 0, memory_order_relaxed);
		atomic_store_explicit(&w->sense, *sense, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&w->sense, memory_order_acquire) != *sense)
		if (++spins % 1024 == 0)
			sched_yield(); /* a machine with fewer cores than lanes */
		else
			rte_pause();
}

static void
broken(struct lane *l, const char *why)
{
	if (!l->broken)
		snprintf(l->why, sizeof(l->why), "%s", why);
	l->broken = true;
}

static void
post(struct lane *l, struct mailbox *mb, const struct et_rx_hint *hint, uint32_t node,
     const struct et_arrival *a)
{
	if (mb->n == mb->cap) {
		uint32_t cap = mb->cap ? mb->cap * 2 : 256;
		struct letter *v = realloc(mb->v, cap * sizeof(*v));

		if (v == NULL) {
			broken(l, "out of memory for the letters between lanes");
			return;
		}
		mb->v = v;
		mb->cap = cap;
	}
	mb->v[mb->n++] = (struct letter){hint, *a, node};
}

/* The arrival hook of every egress in virtual time: ctx is the lane of
 * the node that sends. */
static void
arrive(void *ctx, uint32_t node, const struct et_rx_hint *hint, const struct et_arrival *a,
       uint32_t n)
{
	struct lane *l = ctx;
	uint32_t to = l->w->owner[node];

	if (to != l->id) {
		for (uint32_t i = 0; i < n; i++)
			post(l, &l->out[to], hint, node, &a[i]);
		return;
	}
	if (et_rx_hint_apply(hint, a, n))
		broken(l, "out of memory for the frames on their way");
	et_agenda_wake_by(&l->a, node, a[0].at);
}

/* After a window: what the other lanes handed this one's nodes. */
static void
read_letters(struct lane *l)
{
	for (uint32_t s = 0; s < l->w->n; s++) {
		struct mailbox *mb = &l->w->lane[s].out[l->id];

		for (uint32_t k = 0; k < mb->n; k++) {
			if (et_rx_hint_apply(mb->v[k].hint, &mb->v[k].a, 1))
				broken(l, "out of memory for the frames on their way");
			et_agenda_wake_by(&l->a, mb->v[k].node, mb->v[k].a.at);
		}
		mb->n = 0;
	}
}

/* ---- wiring ---- */

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

/* How node's port reached by a link learns of the frames on it. */
static struct et_rx_hint
rx_hint(struct et_fabric *f, uint32_t node, uint16_t port)
{
	if (node < f->n_hosts) {
		et_port_set_timed(&f->h[node].nic.port, true);
		return (struct et_rx_hint){&f->h[node].nic.port, &f->h[node].nic.rx_next, NULL};
	}
	return et_switch_rx_hint(&f->net.sw[node - f->n_hosts], port);
}

/* Every egress hands its frames over early, told by its own lane. */
static void
wire(struct lanes *w)
{
	struct et_fabric *f = w->f;

	for (uint32_t s = 0; s < f->net.n_sw; s++)
		for (uint16_t k = 0; k < f->net.sw[s].n_ports; k++) {
			uint16_t port;
			uint32_t node = peer_node(f, s, k, &port);

			f->net.sw[s].ports[k].eg.arrive = (struct et_arrival_hook){
				arrive, &w->lane[w->owner[f->n_hosts + s]], node, rx_hint(f, node, port)};
		}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		uint32_t tor = et_topo_tor_of(&f->p.t, i);
		int port = et_net_port_to(&f->net, (struct et_node){ET_TIER_TOR, tor},
					  (struct et_node){ET_TIER_HOST, i}, 0);

		f->h[i].nic.eg.arrive = (struct et_arrival_hook){
			arrive, &w->lane[w->owner[i]], f->n_hosts + tor,
			rx_hint(f, f->n_hosts + tor, (uint16_t)port)};
	}
}

/* Back to frames delivered when they arrive (the drain after the run). */
static void
unwire(struct et_fabric *f)
{
	for (uint32_t i = 0; i < f->net.n_sw; i++) {
		et_switch_no_rx_hints(&f->net.sw[i]);
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++)
			f->net.sw[i].ports[k].eg.arrive = (struct et_arrival_hook){0};
	}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		f->h[i].nic.eg.arrive = (struct et_arrival_hook){0};
		et_port_set_timed(&f->h[i].nic.port, false);
		f->h[i].nic.rx_next = UINT64_MAX;
	}
}

/* The shortest latency of any link: the longest window that keeps every
 * arrival out of the window it was sent in. */
static uint64_t
shortest_latency(const struct et_fabric *f)
{
	uint64_t t = UINT64_MAX;

	for (uint32_t s = 0; s < f->net.n_sw; s++)
		for (uint16_t k = 0; k < f->net.sw[s].n_ports; k++)
			if (f->net.sw[s].ports[k].eg.lm.latency_ns < t)
				t = f->net.sw[s].ports[k].eg.lm.latency_ns;
	for (uint32_t i = 0; i < f->n_hosts; i++)
		if (f->h[i].nic.eg.lm.latency_ns < t)
			t = f->h[i].nic.eg.lm.latency_ns;
	return t;
}

/* ---- a lane ---- */

/* Name this lane's node whose due event does nothing: a bug, said
 * precisely. */
static void
stuck(struct lane *l)
{
	struct et_fabric *f = l->w->f;

	l->broken = true;
	for (uint32_t i = 0; i < f->n_hosts + f->net.n_sw; i++) {
		if (l->w->owner[i] != l->id || et_sim_node_next_event(f, i, l->now) > l->now)
			continue;
		if (i < f->n_hosts) {
			const struct et_fabric_host *h = &f->h[i];

			snprintf(l->why, sizeof(l->why),
				 "no progress at %" PRIu64 " ns: host %u has an event due (egress queue %u, "
				 "in flight %u, active QPs %u, timers %u, waiting %u, pool free %u)",
				 l->now, i, et_egress_qlen(&h->nic.eg), h->nic.eg.fly_tail - h->nic.eg.fly_head,
				 h->nic.n_active, h->nic.heap_n, h->rt.n_waiting,
				 rte_mempool_avail_count(f->pool));
		} else {
			snprintf(l->why, sizeof(l->why),
				 "no progress at %" PRIu64 " ns: switch %s has an event due (pool free %u)",
				 l->now, f->net.sw[i - f->n_hosts].name, rte_mempool_avail_count(f->pool));
		}
		return;
	}
	snprintf(l->why, sizeof(l->why), "no progress at %" PRIu64 " ns", l->now);
}

/* Run the lane's nodes up to (not including) end: a pass visits the nodes
 * on the agenda in node order; after its turn a node says when it next has
 * something due, and is visited again in the next pass only if that is
 * now.  A pass that does no work moves the clock to the earliest due. */
static void
run_window(struct lane *l, uint64_t end)
{
	struct et_fabric *f = l->w->f;
	struct et_agenda *a = &l->a;
	uint32_t idle = 0;

	for (;;) {
		uint32_t work = 0, i;
		uint64_t t;

		et_agenda_due(a, l->now);
		for (i = et_agenda_take(a, 0); i < a->n; i = et_agenda_take(a, i + 1)) {
			work += et_sim_poll_node(f, i, l->now);
			l->turns++;
			t = et_sim_node_next_event(f, i, l->now);
			if (t <= l->now)
				et_agenda_mark(a, i); /* more to do now: next pass */
			else
				et_agenda_wake_at(a, i, t);
		}
		l->passes++;
		if (work) {
			idle = 0;
			continue;
		}
		t = et_agenda_next(a, l->now);
		if (t >= end)
			return;
		if (t > l->now)
			l->now = t;
		else if (++idle > 1000) {
			stuck(l);
			return;
		}
	}
}

/* Lane 0, between the barriers: whether the run is over.  It alone reads
 * the hosts' state (its own nodes) and the other lanes' reasons. */
static bool
verdict(struct lanes *w, uint64_t end)
{
	struct et_fabric *f = w->f;

	for (uint32_t k = 0; k < w->n; k++)
		if (w->lane[k].broken) {
			et_fabric_fail(f, "%s", w->lane[k].why);
			return true;
		}
	return f->failed || f->hosts_done == f->n_hosts || et_sim_past_limit(f, end);
}

static int
lane_main(void *arg)
{
	struct lane *l = arg;
	struct lanes *w = l->w;
	uint64_t start = 1, end, next, t0, t1;
	uint32_t sense = 0;
	int go;

	while ((go = atomic_load_explicit(&w->go, memory_order_acquire)) == 0)
		rte_pause();
	if (go < 0)
		return 0;
	for (l->now = start;; l->now = start) {
		end = start + w->span;
		t0 = rte_rdtsc();
		run_window(l, end);
		t1 = rte_rdtsc();
		l->busy += t1 - t0;
		if (w->n > 1)
			barrier(w, &sense);
		l->wait += rte_rdtsc() - t1;
		read_letters(l);
		l->next = et_agenda_next(&l->a, end);
		if (et_far_serve(w->f, l->id, &l->a, &l->next))
			broken(l, "out of memory for the far ends of subflows");
		if (l->id == 0)
			w->stop = verdict(w, end);
		if (w->n > 1)
			barrier(w, &sense);
		if (w->stop)
			break;
		if (et_far_collect(w->f, l->id, &l->a))
			broken(l, "out of memory for the far ends of subflows");
		next = UINT64_MAX;
		for (uint32_t k = 0; k < w->n; k++)
			if (w->lane[k].next < next)
				next = w->lane[k].next;
		if (next == UINT64_MAX) {
			if (l->id == 0)
				et_fabric_fail(w->f, "stalled at %.6f s: nothing left to do, %u of %u hosts done",
					       end / 1e9, w->f->hosts_done, w->f->n_hosts);
			break;
		}
		start = next > end ? next : end;
	}
	if (l->id == 0)
		w->f->now = end;
	return 0;
}

/* ---- the run ---- */

/* The nodes dealt to n lanes: the switches in turn, each host on its
 * ToR's lane (the frames between them cross no lane).  Hosts that must
 * stay together go on lane 0, the switches over the others. */
static void
deal(struct lanes *w)
{
	struct et_fabric *f = w->f;
	bool together = f->drv || f->p.on_plan;

	for (uint32_t s = 0; s < f->net.n_sw; s++)
		w->owner[f->n_hosts + s] =
			(uint8_t)(w->n == 1 ? 0 : together ? 1 + s % (w->n - 1) : s % w->n);
	for (uint32_t i = 0; i < f->n_hosts; i++)
		w->owner[i] = together ? 0
				       : w->owner[f->n_hosts + f->net.first[ET_TIER_TOR] +
						  et_topo_tor_of(&f->p.t, i)];
}

static unsigned int
lanes_wanted(const struct et_fabric *f)
{
	unsigned int n = rte_lcore_count();

	if (f->p.lanes && n > f->p.lanes)
		n = f->p.lanes;
	if (n > MAX_LANES)
		n = MAX_LANES;
	return n > 1 + f->net.n_sw ? 1 + f->net.n_sw : n;
}

static void
lanes_free(struct lanes *w)
{
	if (w->lane)
		for (uint32_t k = 0; k < w->n; k++) {
			et_agenda_free(&w->lane[k].a);
			for (uint32_t j = 0; j < w->n; j++)
				free(w->lane[k].out[j].v);
		}
	free(w->lane);
	free(w->owner);
}

void
et_lanes_run(struct et_fabric *f)
{
	uint32_t nodes = f->n_hosts + f->net.n_sw;
	struct lanes w = {.f = f};
	unsigned int lcore, k;

	w.span = shortest_latency(f); /* at least 1 ns: et_fabric_build */
	w.n = lanes_wanted(f);
	w.owner = calloc(nodes, sizeof(*w.owner));
	w.lane = aligned_alloc(RTE_CACHE_LINE_SIZE, w.n * sizeof(*w.lane));
	if (w.lane)
		memset(w.lane, 0, w.n * sizeof(*w.lane));
	if (!w.owner || !w.lane) {
		et_fabric_fail(f, "out of memory");
		lanes_free(&w);
		return;
	}
	for (k = 0; k < w.n; k++) {
		w.lane[k].w = &w;
		w.lane[k].id = k;
		if (et_agenda_init(&w.lane[k].a, nodes)) {
			w.n = k + 1;
			et_fabric_fail(f, "out of memory");
			lanes_free(&w);
			return;
		}
		/* every node starts on its own lane's agenda only */
		memset(w.lane[k].a.bits, 0, (nodes + 63) / 64 * sizeof(uint64_t));
	}
	deal(&w);
	if (et_far_lanes(f, w.n, w.owner, w.span)) {
		et_fabric_fail(f, "out of memory");
		lanes_free(&w);
		return;
	}
	for (uint32_t i = 0; i < nodes; i++)
		et_agenda_mark(&w.lane[w.owner[i]].a, i);
	wire(&w);
	f->agenda = &w.lane[0].a;
	k = 1;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (k == w.n || rte_eal_remote_launch(lane_main, &w.lane[k], lcore) != 0)
			break;
		k++;
	}
	if (k < w.n) {
		et_fabric_fail(f, "lcore %u would not take a lane (is it busy?)", lcore);
		atomic_store_explicit(&w.go, -1, memory_order_release);
	} else {
		atomic_store_explicit(&w.go, 1, memory_order_release);
		lane_main(&w.lane[0]);
	}
	rte_eal_mp_wait_lcore();
	f->agenda = NULL;
	f->n_lanes = w.n < RTE_DIM(f->lane_speed) ? w.n : RTE_DIM(f->lane_speed);
	for (k = 0; k < w.n; k++) {
		f->passes += w.lane[k].passes;
		f->turns += w.lane[k].turns;
		if (k < RTE_DIM(f->lane_speed))
			f->lane_speed[k] = (struct et_lane_speed){
				(double)w.lane[k].busy / rte_get_tsc_hz(),
				(double)w.lane[k].wait / rte_get_tsc_hz(), w.lane[k].turns};
	}
	unwire(f);
	et_far_lanes_end(f);
	lanes_free(&w);
}
