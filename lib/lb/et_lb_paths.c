/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <string.h>

#include "lb/et_lb_paths.h"
#include "base/et_rand.h"
#include "topo/et_path.h"

void
et_lb_paths_init(struct et_lb_paths *ps, const struct et_topo *t, uint32_t host,
		 const uint16_t *ids, uint32_t n, uint64_t reset_ns, uint64_t seed)
{
	memset(ps, 0, sizeof(*ps));
	ps->t = *t;
	ps->host = host;
	ps->n = n < ET_LB_MAX_PATHS ? n : ET_LB_MAX_PATHS;
	memcpy(ps->id, ids, ps->n * sizeof(ids[0]));
	ps->reset_ns = reset_ns;
	ps->rng = seed | 1;
}

static uint64_t
node_key(struct et_node n)
{
	return (uint64_t)n.tier << 24 | (n.index & 0xffffff);
}

/* A link between two switches, the same either way; 0 for a host's link,
 * which every path to or from the host crosses. */
static uint64_t
link_key(const struct et_hop *hop)
{
	uint64_t a = node_key(hop->from), b = node_key(hop->to);

	if (hop->from.tier == ET_TIER_HOST || hop->to.tier == ET_TIER_HOST)
		return 0;
	if (a > b) {
		uint64_t x = a;

		a = b;
		b = x;
	}
	return a << 34 | b << 8 | (hop->lane & 0xff);
}

static bool
suspect_at(const struct et_lb_paths *ps, uint64_t link, uint64_t now)
{
	for (uint32_t i = 0; i < ps->n_suspect; i++)
		if (ps->suspect[i].link == link && ps->suspect[i].until > now)
			return true;
	return false;
}

static bool
any_suspect(const struct et_lb_paths *ps, uint64_t now)
{
	for (uint32_t i = 0; i < ps->n_suspect; i++)
		if (ps->suspect[i].until > now)
			return true;
	return false;
}

/* Does path id from this host to dst cross no suspect link at now? */
static bool
clear(const struct et_lb_paths *ps, uint32_t dst, uint16_t id, uint64_t now)
{
	struct et_hop hops[ET_PATH_MAX_HOPS];
	int n = et_path_walk(&ps->t, ps->host, dst, id, hops);

	if (n < 0)
		return false;
	for (int i = 0; i < n; i++) {
		uint64_t link = link_key(&hops[i]);

		if (link && suspect_at(ps, link, now))
			return false;
	}
	return true;
}

int
et_lb_paths_index(const struct et_lb_paths *ps, uint16_t id)
{
	for (uint32_t i = 0; i < ps->n; i++)
		if (ps->id[i] == id)
			return (int)i;
	return -1;
}

uint32_t
et_lb_paths_good(const struct et_lb_paths *ps, uint32_t dst, uint64_t now, uint16_t *out)
{
	bool all = !any_suspect(ps, now);
	uint32_t k = 0;

	for (uint32_t i = 0; i < ps->n; i++)
		if (all || clear(ps, dst, ps->id[i], now))
			out[k++] = ps->id[i];
	return k;
}

static void
suspect_link(struct et_lb_paths *ps, uint64_t link, uint64_t until)
{
	uint32_t i, soonest = 0;

	for (i = 0; i < ps->n_suspect && ps->suspect[i].link != link; i++)
		if (ps->suspect[i].until < ps->suspect[soonest].until)
			soonest = i;
	if (i == ps->n_suspect) {
		if (ps->n_suspect < ET_LB_MAX_SUSPECT)
			ps->n_suspect++;
		else
			i = soonest;
		ps->suspect[i].link = link;
	}
	ps->suspect[i].until = until;
}

void
et_lb_paths_suspect(struct et_lb_paths *ps, uint32_t dst, uint16_t id, uint64_t now)
{
	struct et_hop hops[ET_PATH_MAX_HOPS];
	int n = et_path_walk(&ps->t, ps->host, dst, id, hops);
	uint32_t k = 0;

	/* the expired first, so that they are the ones replaced */
	for (uint32_t i = 0; i < ps->n_suspect; i++)
		if (ps->suspect[i].until > now)
			ps->suspect[k++] = ps->suspect[i];
	ps->n_suspect = k;
	for (int i = 0; i < n; i++) {
		uint64_t link = link_key(&hops[i]);

		if (link)
			suspect_link(ps, link, now + ps->reset_ns);
	}
	ps->marked_bad++;
}

uint16_t
et_lb_paths_pick(struct et_lb_paths *ps, uint32_t dst, uint64_t now, uint16_t avoid)
{
	uint16_t cand[ET_LB_MAX_PATHS];
	uint32_t k = 0, n = et_lb_paths_good(ps, dst, now, cand);

	for (uint32_t i = 0; i < n; i++)
		if (cand[i] != avoid)
			cand[k++] = cand[i];
	if (k == 0) /* nothing else good: stay if the current path is, else any */
		return n ? avoid : ps->n ? ps->id[et_rand_next(&ps->rng) % ps->n] : avoid;
	return cand[et_rand_next(&ps->rng) % k];
}

uint16_t
et_lb_paths_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	struct et_lb_paths_qp *pq = ctx;

	if (ev == ET_PATH_FIRST)
		return et_qp_path_id(qp);
	/* a timeout says a link may have failed; a NAK only that it lost */
	if (ev == ET_PATH_TIMEOUT)
		et_lb_paths_suspect(pq->ps, pq->dst, et_qp_path_id(qp), now);
	pq->ps->rerouted++;
	return et_lb_paths_pick(pq->ps, pq->dst, now, et_qp_path_id(qp));
}
