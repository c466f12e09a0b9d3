/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethereal (paper, section 4): the batch sorted by destination ToR,
 * Algorithm 1 per destination group over the good paths in an order that
 * spreads consecutive ones over the switches above the ToR, start jitter
 * and a random active-list position per subflow, and the path state's hook
 * that reroutes on NAK and timeout. */
#include <stdlib.h>

#include "lb/et_lb_assign.h"
#include "lb/et_lb_order.h"
#include "lb/et_lb_priv.h"
#include "base/et_rand.h"
#include "topo/et_path.h"

/* Destination group of Ethereal's interceptor: the leaf, or in a fat-tree
 * the ToR within the pod and the pod beyond it. */
static uint32_t
group_of(const struct et_lb_host *h, uint32_t dst)
{
	const struct et_topo *t = &h->t;

	if (t->kind == ET_TOPO_FAT_TREE && et_topo_pod_of(t, dst) != et_topo_pod_of(t, h->host))
		return UINT32_MAX - et_topo_pod_of(t, dst);
	return et_topo_tor_of(t, dst);
}

/* The good paths towards a group, spread over the switches above the ToR
 * (et_lb_order.h): inside a fat-tree pod only the first byte (the ToR
 * uplink) matters, so one ID per first byte. */
static uint32_t
good_paths(struct et_lb_host *h, uint32_t dst, uint64_t now, uint16_t *out)
{
	uint32_t n = et_lb_paths_good(&h->paths, now, out), k = 0;

	if (n == 0) /* all bad: use them all rather than none */
		n = et_lb_paths_good(&h->paths, UINT64_MAX, out);
	if (h->t.kind != ET_TOPO_FAT_TREE ||
	    et_topo_pod_of(&h->t, dst) != et_topo_pod_of(&h->t, h->host)) {
		et_lb_spread_paths(&h->t, et_topo_tor_of(&h->t, h->host), out, n);
		return n;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j;

		for (j = 0; j < k && et_path_uplink(out[j]) != et_path_uplink(out[i]); j++)
			;
		if (j == k)
			out[k++] = out[i];
	}
	et_lb_spread_paths(&h->t, et_topo_tor_of(&h->t, h->host), out, k);
	return k;
}

static uint32_t
plan(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
	      struct et_lb_sub *out)
{
	uint32_t k = 0, *members = malloc(n * sizeof(*members)), *order = malloc(n * sizeof(*order));
	bool *done = calloc(n, sizeof(*done));
	struct et_subflow *subs = NULL;

	if (!members || !order || !done)
		goto out;
	/* the interceptor's sort: a group's members, and the plan, in ToR order */
	et_lb_order_by_tor(&h->t, f, n, order);
	for (uint32_t oi = 0; oi < n; oi++) {
		uint16_t paths[ET_LB_MAX_PATHS];
		uint32_t m = 0, s, ns, rot, i = order[oi];

		if (done[i])
			continue;
		if (et_lb_rack_local(h, f[i].dst)) {
			done[i] = true;
			out[k++] = (struct et_lb_sub){i, 0, f[i].len, h->paths.n ? h->paths.id[0] : 0,
						      now, -1};
			continue;
		}
		/* flows of one group and one size share the group's paths */
		for (uint32_t oj = oi; oj < n; oj++) {
			uint32_t j = order[oj];

			if (!done[j] && f[j].len == f[i].len &&
			    group_of(h, f[j].dst) == group_of(h, f[i].dst)) {
				members[m++] = j;
				done[j] = true;
			}
		}
		s = good_paths(h, f[i].dst, now, paths);
		if (s == 0)
			s = 1, paths[0] = 0;
		free(subs);
		subs = malloc(et_lb_assign_count(m, s) * sizeof(*subs));
		if (subs == NULL)
			break;
		ns = et_lb_assign(m, s, f[i].len, subs);
		/* every host starts its split at a random path, or all hosts'
		 * remainder flows would pile onto the first paths */
		rot = (uint32_t)(et_rand_next(&h->rng) % s);
		for (uint32_t q = 0; q < ns; q++)
			out[k++] = (struct et_lb_sub){
				members[subs[q].flow], subs[q].offset, subs[q].length,
				paths[(subs[q].path + rot) % s], 0, 0};
	}
	for (uint32_t q = 0; q < k; q++) {
		if (out[q].insert_pos < 0)
			continue; /* rack-local: at once */
		out[q].start_ns = now + (h->c.jitter_ns ? et_rand_next(&h->rng) % (h->c.jitter_ns + 1) : 0);
		out[q].insert_pos = (int)(et_rand_next(&h->rng) % 65536);
	}
out:
	free(subs);
	free(members);
	free(order);
	free(done);
	return k;
}

static uint32_t
plan_max(const struct et_lb_host *h, uint32_t n)
{
	/* at most s - 1 extra subflows for each split flow */
	return n * (h->paths.n ? h->paths.n : 1);
}

static int
attach(struct et_lb_host *h, struct et_qp *qp, void **state)
{
	*state = NULL;
	et_qp_set_path_fn(qp, et_lb_paths_hook, &h->paths);
	return 0;
}

const struct et_lb_ops et_lb_ethereal = {
	.name = "ethereal",
	.batched = true,
	.plan_max = plan_max,
	.plan = plan,
	.attach = attach,
};
