/* SPDX-License-Identifier: BSD-3-Clause
 * The virtual clock's speed: the default experiment's fabric (16 hosts,
 * leaf-spine 4 x 4 x 4, 400 Gbit/s, the paper's link model), an all-reduce
 * a2a of 64 MB, seed 1, on this one lcore, once per policy named below.
 * A packet-hop is a frame put on a link; the cost per hop is the event
 * loop's wall time over them (building the fabric is not counted).
 *
 * The 256- and 512-host figures take gigabytes and a minute each: the
 * fabric's own JSON reports them ("speed"), and `meson test --benchmark`
 * runs the 256-host ones (bench/meson.build).
 */
#include <stdio.h>

#include "bench.h"
#include "lb/et_lb.h"
#include "sim/et_fabric.h"

static int
one(struct bench_out *o, const char *lb)
{
	struct et_fabric_params p;
	struct et_fabric f;
	char key[64], err[128];
	double t0, s;

	et_fabric_params_default(&p);
	et_topo_leaf_spine(&p.t, 4, 4, 4, 1);
	if (et_lb_parse(lb, &p.lb, err, sizeof(err)))
		return -1;
	p.size = 64u << 20;
	if (et_fabric_build(&f, &p)) {
		fprintf(stderr, "fabric %s: %s\n", lb, f.error);
		et_fabric_free(&f);
		return -1;
	}
	t0 = bench_now_s();
	if (et_fabric_run(&f)) {
		fprintf(stderr, "fabric %s: %s\n", lb, f.error);
		et_fabric_free(&f);
		return -1;
	}
	s = bench_now_s() - t0;
	et_fabric_collect(&f);
	snprintf(key, sizeof(key), "fabric_%s_mhops_per_s", lb);
	bench_num(o, key, f.st.packet_hops / s / 1e6);
	snprintf(key, sizeof(key), "fabric_%s_ns_per_hop", lb);
	bench_num(o, key, s * 1e9 / f.st.packet_hops);
	snprintf(key, sizeof(key), "fabric_%s_turns_per_hop", lb);
	bench_num(o, key, (double)f.turns / f.st.packet_hops);
	et_fabric_free(&f);
	return 0;
}

int
bench_fabric(struct bench_out *o, struct rte_mempool *mp)
{
	(void)mp; /* a fabric has its own pool */
	return one(o, "ethereal") || one(o, "spray") || one(o, "reps");
}
