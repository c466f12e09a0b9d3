/* SPDX-License-Identifier: BSD-3-Clause
 * The virtual clock's speed: the default experiment's fabric (16 hosts,
 * leaf-spine 4 x 4 x 4, 400 Gbit/s, the paper's link model), an all-reduce
 * a2a of 64 MB, seed 1, once per policy named below: on one lcore, then on
 * two (sim/et_lanes.c) where the EAL has them, which must give the same run.
 * A packet-hop is a frame put on a link; the cost per hop is the event
 * loop's wall time over them (building the fabric is not counted).
 *
 * The 256- and 512-host figures take gigabytes and a minute each: the
 * fabric's own JSON reports them ("speed"), and `meson test --benchmark`
 * runs the 256-host ones (bench/meson.build).
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_lcore.h>

#include "bench.h"
#include "lb/et_lb.h"
#include "sim/et_fabric.h"

/* One run of policy lb on at most lanes lcores; its speed in o under
 * prefix, its hops and CCT in *hops and *cct. */
static int
one(struct bench_out *o, const char *lb, uint32_t lanes, const char *prefix, double *s_out,
    uint64_t *hops, uint64_t *cct)
{
	struct et_fabric_params p;
	struct et_fabric f;
	char key[96], err[128];
	double t0, s;

	et_fabric_params_default(&p);
	et_topo_leaf_spine(&p.t, 4, 4, 4, 1);
	if (et_lb_parse(lb, &p.lb, err, sizeof(err)))
		return -1;
	p.size = 64u << 20;
	p.lanes = lanes;
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
	snprintf(key, sizeof(key), "%s_mhops_per_s", prefix);
	bench_num(o, key, f.st.packet_hops / s / 1e6);
	snprintf(key, sizeof(key), "%s_ns_per_hop", prefix);
	bench_num(o, key, s * 1e9 / f.st.packet_hops);
	snprintf(key, sizeof(key), "%s_turns_per_hop", prefix);
	bench_num(o, key, (double)f.turns / f.st.packet_hops);
	*s_out = s;
	*hops = f.st.packet_hops;
	*cct = et_fabric_cct_ns(&f);
	et_fabric_free(&f);
	return 0;
}

/* One lane, then two where the EAL gave two lcores: the same run (hops
 * and CCT, or it is said), and how much faster. */
static int
policy(struct bench_out *o, const char *lb)
{
	char prefix[64], key[96];
	uint64_t hops1, cct1, hops2, cct2;
	double s1, s2;

	snprintf(prefix, sizeof(prefix), "fabric_%s", lb);
	if (one(o, lb, 1, prefix, &s1, &hops1, &cct1))
		return -1;
	if (rte_lcore_count() < 2)
		return 0;
	snprintf(prefix, sizeof(prefix), "fabric_%s_2_lanes", lb);
	if (one(o, lb, 2, prefix, &s2, &hops2, &cct2))
		return -1;
	if (hops1 != hops2 || cct1 != cct2) {
		fprintf(stderr, "fabric %s: two lanes ran another run (%" PRIu64 " hops, CCT %" PRIu64
			" ns; one lane: %" PRIu64 ", %" PRIu64 ")\n", lb, hops2, cct2, hops1, cct1);
		return -1;
	}
	snprintf(key, sizeof(key), "fabric_%s_2_lanes_speedup", lb);
	bench_num(o, key, s1 / s2);
	return 0;
}

int
bench_fabric(struct bench_out *o, struct rte_mempool *mp)
{
	(void)mp; /* a fabric has its own pool */
	return policy(o, "ethereal") || policy(o, "spray") || policy(o, "reps");
}
