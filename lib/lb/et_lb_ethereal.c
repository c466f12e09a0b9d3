/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethereal (paper, section 4): the batch sorted by destination ToR,
 * Algorithm 1 per destination group over the good paths in an order that
 * spreads consecutive ones over the switches above the ToR, start jitter
 * and a random active-list position per subflow, and the path state's hook
 * that reroutes on NAK and timeout. */
#include <errno.h>
#include <stdlib.h>

#include "lb/et_lb_assign.h"
#include "lb/et_lb_order.h"
#include "lb/et_lb_priv.h"
#include "base/et_rand.h"
#include "topo/et_path.h"

/* Whether a fat-tree's pod holds both h and dst (pod is true) or only one
 * of them (pod is false); never in a leaf-spine. */
static bool
fat_tree_pod(const struct et_lb_host *h, uint32_t dst, bool pod)
{
	const struct et_topo *t = &h->t;

	return t->kind == ET_TOPO_FAT_TREE &&
	       (et_topo_pod_of(t, dst) == et_topo_pod_of(t, h->host)) == pod;
}

/* Destination group of Ethereal's interceptor: the leaf, or in a fat-tree
 * the ToR within the pod and the pod beyond it. */
static uint32_t
group_of(const struct et_lb_host *h, uint32_t dst)
{
	if (fat_tree_pod(h, dst, false))
		return UINT32_MAX - et_topo_pod_of(&h->t, dst);
	return et_topo_tor_of(&h->t, dst);
}

/* The good paths towards a group, spread over the switches above the ToR
 * (et_lb_order.h): inside a fat-tree pod only the first byte (the ToR
 * uplink) matters, so one ID per first byte. */
static uint32_t
good_paths(struct et_lb_host *h, uint32_t dst, uint64_t now, uint16_t *out)
{
	uint32_t n = et_lb_paths_good(&h->paths, dst, now, out), k = 0;

	if (n == 0) /* all bad: use them all rather than none */
		n = et_lb_paths_good(&h->paths, dst, UINT64_MAX, out);
	if (!fat_tree_pod(h, dst, true)) {
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

/* Algorithm 1's s is the number of spines, or of cores across fat-tree
 * pods (paper, 4.2): the parallel lanes of one switch pair are one path to
 * it.  Counting each lane as a path would make s = 255 once one of 256
 * lanes is marked bad, and split every remainder flow 255 ways.  The
 * subflows a switch path gets take its good lanes in turn. */
struct switch_paths {
	uint32_t s;                       /* switch paths, in the order first seen */
	uint16_t first[ET_LB_MAX_PATHS];  /* each one's first lane in lane[] */
	uint16_t count[ET_LB_MAX_PATHS];  /* and how many it has */
	uint16_t given[ET_LB_MAX_PATHS];  /* subflows given to it so far */
	uint16_t lane[ET_LB_MAX_PATHS];   /* the good path IDs, by switch path */
};

static uint32_t
lanes_per_pair(const struct et_topo *t)
{
	return t->links_per_pair ? t->links_per_pair : 1;
}

static uint32_t
switch_path_key(const struct et_topo *t, uint16_t id, bool cross_pod)
{
	uint32_t lanes = lanes_per_pair(t);
	uint32_t key = et_path_uplink(id) / lanes;

	return cross_pod ? key << 8 | (uint32_t)(id & 0xff) / lanes : key;
}

/* Where a lane combination of one switch path goes in lanes_in_turn(). */
static uint32_t
lane_rank(uint16_t id, uint32_t lanes, bool cross_pod)
{
	uint32_t a = et_path_uplink(id) % lanes, b = cross_pod ? (uint32_t)(id & 0xff) % lanes : 0;

	return (a + lanes - b) % lanes * lanes + b;
}

/* A switch path's lanes in the order its subflows take them: the k-th
 * lane of a fat-tree's cross-pod path (ToR lane a, aggregation lane b) is
 * on the diagonal a - b = k / lanes, so lanes consecutive ones from a
 * multiple of lanes on use every ToR lane and every aggregation lane once.
 * In their order as found, and with every host starting at the first,
 * cross-pod traffic took ToR lane 0 only: on the 512-host fat-tree one of
 * the four lanes to each aggregation switch carried most of it. */
static void
lanes_in_turn(const struct et_topo *t, bool cross_pod, uint16_t *id, uint32_t n)
{
	uint32_t lanes = lanes_per_pair(t);

	for (uint32_t i = 1; i < n; i++) {
		uint16_t v = id[i];
		uint32_t j = i;

		while (j > 0 && lane_rank(id[j - 1], lanes, cross_pod) > lane_rank(v, lanes, cross_pod)) {
			id[j] = id[j - 1];
			j--;
		}
		id[j] = v;
	}
}

static void
switch_paths_of(const struct et_lb_host *h, uint32_t dst, const uint16_t *ids, uint32_t n,
		struct switch_paths *sp)
{
	const struct et_topo *t = &h->t;
	bool cross_pod = fat_tree_pod(h, dst, false);
	uint32_t key[ET_LB_MAX_PATHS], of[ET_LB_MAX_PATHS], i, j;

	sp->s = 0;
	for (i = 0; i < n; i++) {
		uint32_t k = switch_path_key(t, ids[i], cross_pod);

		for (j = 0; j < sp->s && key[j] != k; j++)
			;
		if (j == sp->s) {
			key[sp->s] = k;
			sp->count[sp->s++] = 0;
		}
		of[i] = j;
		sp->count[j]++;
	}
	for (j = 0, i = 0; j < sp->s; i += sp->count[j++]) {
		sp->first[j] = (uint16_t)i;
		sp->given[j] = 0;
	}
	for (i = 0; i < n; i++)
		sp->lane[sp->first[of[i]] + sp->given[of[i]]++] = ids[i];
	for (j = 0; j < sp->s; j++) {
		lanes_in_turn(t, cross_pod, sp->lane + sp->first[j], sp->count[j]);
		/* each host from its own place: the hosts of a ToR start on
		 * the lanes in turn, not all on the same one */
		sp->given[j] = (uint16_t)(h->host % sp->count[j]);
	}
}

/* The next lane of switch path p. */
static uint16_t
switch_path_lane(struct switch_paths *sp, uint32_t p)
{
	return sp->lane[sp->first[p] + sp->given[p]++ % sp->count[p]];
}

static uint32_t
plan(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
	      struct et_lb_sub *out)
{
	uint32_t k = 0, *members = malloc(n * sizeof(*members)), *order = malloc(n * sizeof(*order));
	bool *done = calloc(n, sizeof(*done));
	struct et_subflow *subs = NULL;
	struct switch_paths sp;

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
		switch_paths_of(h, f[i].dst, paths, s, &sp);
		s = sp.s;
		free(subs);
		subs = malloc(et_lb_assign_count(m, s) * sizeof(*subs));
		if (subs == NULL)
			break;
		/* Algorithm 1 leaves open which r = m mod s flows it splits;
		 * were they the same hosts for every sender, each such host
		 * would take s - 1 extra QPs from every sender once a path is
		 * bad (4,080 a host on the paper's 256 hosts, 720 the median):
		 * each sender splits from its own place in the group */
		ns = et_lb_assign(m, s, f[i].len, m - m % s + h->host, subs);
		/* every host starts its split at a random path, or all hosts'
		 * remainder flows would pile onto the first paths */
		rot = (uint32_t)(et_rand_next(&h->rng) % s);
		for (uint32_t q = 0; q < ns; q++)
			out[k++] = (struct et_lb_sub){
				members[subs[q].flow], subs[q].offset, subs[q].length,
				switch_path_lane(&sp, (subs[q].path + rot) % s), 0, 0};
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
attach(struct et_lb_host *h, struct et_qp *qp, uint32_t dst, void **state)
{
	struct et_lb_paths_qp *pq = malloc(sizeof(*pq));

	*state = pq;
	if (pq == NULL)
		return -ENOMEM;
	*pq = (struct et_lb_paths_qp){&h->paths, dst};
	et_qp_set_path_fn(qp, et_lb_paths_hook, pq);
	return 0;
}

static void
detach(struct et_lb_host *h, void *state)
{
	(void)h;
	free(state);
}

const struct et_lb_ops et_lb_ethereal = {
	.name = "ethereal",
	.batched = true,
	.path_state = true,
	.plan_max = plan_max,
	.plan = plan,
	.attach = attach,
	.detach = detach,
};
