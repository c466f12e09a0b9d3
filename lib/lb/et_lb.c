/* SPDX-License-Identifier: BSD-3-Clause */
/* The policy registry and what every policy shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/et_lb_priv.h"
#include "base/et_rand.h"
#include "topo/et_path.h"

/* A new policy: its file, and one line here. */
static const struct et_lb_ops *const policies[] = {
	&et_lb_ethereal, &et_lb_ecmp, &et_lb_mprdma, &et_lb_spray, &et_lb_reps,
};

void
et_lb_conf_default(struct et_lb_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->ops = &et_lb_ethereal;
	c->mprdma_x = 4;
	c->batch_ns = 100;
	c->jitter_ns = 50;
	c->failed_path_timeout_ns = 100000000;
	et_reps_params_default(&c->reps);
	c->reps.explore_pkts = 0;
}

int
et_lb_parse(const char *spec, struct et_lb_conf *c, char *err, size_t errlen)
{
	for (size_t k = 0; k < sizeof(policies) / sizeof(policies[0]); k++) {
		const struct et_lb_ops *ops = policies[k];
		size_t n = strlen(ops->name);

		if (strncmp(spec, ops->name, n) != 0)
			continue;
		if (spec[n] != 0 && (spec[n] != ':' || !ops->parse_arg))
			break;
		if (ops->parse_arg && ops->parse_arg(spec[n] ? spec + n + 1 : NULL, c, err, errlen))
			return -1;
		c->ops = ops;
		return 0;
	}
	snprintf(err, errlen, "expected ethereal, ecmp, mprdma:X, spray, reps or reps:flow, got '%s'", spec);
	return -1;
}

const char *
et_lb_name(const struct et_lb_conf *c, char *buf, size_t len)
{
	if (c->ops->spec)
		c->ops->spec(c, buf, len);
	else
		snprintf(buf, len, "%s", c->ops->name);
	return buf;
}

bool
et_lb_uses_ecmp(const struct et_lb_conf *c)
{
	return c->ops->ecmp_switches;
}

bool
et_lb_per_packet(const struct et_lb_conf *c)
{
	return c->ops->per_packet;
}

bool
et_lb_batched(const struct et_lb_conf *c)
{
	return c->ops->batched;
}

/* A host in the group farthest from h: its paths are all of h's path IDs. */
static uint32_t
far_host(const struct et_topo *t, uint32_t host)
{
	uint32_t n = et_topo_hosts(t), step;

	if (t->kind == ET_TOPO_FAT_TREE && t->pods > 1)
		step = t->tors_per_pod * t->hosts_per_tor;
	else
		step = t->hosts_per_tor;
	return (host + step) % n;
}

void
et_lb_host_init(struct et_lb_host *h, const struct et_lb_conf *c, const struct et_topo *t,
		uint32_t host, uint64_t seed)
{
	uint16_t ids[ET_LB_MAX_PATHS];
	uint32_t n;

	memset(h, 0, sizeof(*h));
	h->c = *c;
	h->t = *t;
	h->host = host;
	h->rng = (seed * 0x9e3779b97f4a7c15ull) ^ (host + 1) * 0xbf58476d1ce4e5b9ull;
	h->rng |= 1;
	n = et_path_enumerate(t, host, far_host(t, host), ids, ET_LB_MAX_PATHS);
	et_lb_paths_init(&h->paths, t, host, ids, n, c->failed_path_timeout_ns, h->rng);
}

bool
et_lb_host_path(const struct et_lb_host *h, uint64_t r, uint16_t *path)
{
	if (h->paths.n == 0)
		return false;
	*path = h->paths.id[r % h->paths.n];
	return true;
}

uint32_t
et_lb_plan_max(const struct et_lb_host *h, uint32_t n)
{
	return h->c.ops->plan_max(h, n);
}

uint32_t
et_lb_plan(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
	   struct et_lb_sub *out)
{
	return h->c.ops->plan(h, f, n, now, out);
}

uint32_t
et_lb_plan_per_flow(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
		    struct et_lb_sub *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = (struct et_lb_sub){i, 0, f[i].len, (uint16_t)et_rand_next(&h->rng), now, -1};
	return n;
}

int
et_lb_attach(struct et_lb_host *h, struct et_qp *qp, uint32_t dst, void **state)
{
	*state = NULL;
	return h->c.ops->attach ? h->c.ops->attach(h, qp, dst, state) : 0;
}

void
et_lb_far_timeout(struct et_lb_host *h, uint32_t dst, uint16_t id, uint64_t now)
{
	if (h->c.ops->path_state)
		et_lb_paths_suspect(&h->paths, dst, id, now);
}

void
et_lb_detach(struct et_lb_host *h, void *state)
{
	if (h->c.ops->detach && state)
		h->c.ops->detach(h, state);
}
