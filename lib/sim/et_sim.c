/* SPDX-License-Identifier: BSD-3-Clause */
/* The event loop on the TSC (virtual time: sim/et_lanes.c), and a node's
 * turn in either. */
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

uint32_t
et_sim_poll_node(struct et_fabric *f, uint32_t i, uint64_t now)
{
	struct et_rt_host *h;
	uint32_t work;
	bool done;

	if (i >= f->n_hosts)
		return et_switch_poll(&f->net.sw[i - f->n_hosts], now);
	work = et_far_land(f, i, now);
	if (f->drv)
		return work + f->drv->poll(f->drv_ctx, i, now);
	h = &f->h[i].rt;
	done = h->done_ns != 0;
	work += et_rt_poll(h, now);
	if (h->fail.why != ET_RT_OK) {
		char why[200];

		f->failed = true;
		if (!f->error[0])
			et_fabric_fail(f, "%s", et_rt_strerror(h, why, sizeof(why)));
	}
	if (!done && h->done_ns)
		__atomic_fetch_add(&f->hosts_done, 1, __ATOMIC_RELAXED);
	return work;
}

uint64_t
et_sim_node_next_event(const struct et_fabric *f, uint32_t i, uint64_t now)
{
	uint64_t t, far;

	if (i >= f->n_hosts)
		return et_switch_next_event(&f->net.sw[i - f->n_hosts], now);
	t = f->drv ? f->drv->next_event(f->drv_ctx, i, now) : et_rt_next_event(&f->h[i].rt, now);
	far = et_far_next(f, i);
	return far < t ? far : t;
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

bool
et_sim_past_limit(struct et_fabric *f, uint64_t now)
{
	if (now <= f->p.time_limit_ns)
		return false;
	et_fabric_fail(f, "not done after %.3f s of %s time (%u of %u hosts done)", now / 1e9,
		       f->p.real_clock ? "real" : "virtual", f->hosts_done, f->n_hosts);
	return true;
}

/* Count a pass; true when the run is over: every host done, a failure, or
 * the time limit. */
static bool
pass_ends_run(struct et_fabric *f)
{
	f->passes++;
	return f->failed || f->hosts_done == f->n_hosts || et_sim_past_limit(f, f->now);
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
			et_sim_poll_node(f, i, f->now);
		f->turns += nodes;
		if (pass_ends_run(f))
			break;
	}
	if (workers) {
		atomic_store(&run, 0);
		rte_eal_mp_wait_lcore();
	}
}

int
et_fabric_run(struct et_fabric *f)
{
	if (f->p.real_clock)
		run_real(f);
	else
		et_lanes_run(f);
	return f->error[0] ? -1 : 0;
}
