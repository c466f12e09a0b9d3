/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/et_lb.h"
#include "transport/et_qp_priv.h" /* qp->path_id; the API: et_qp_path_id() */
#include "lb/et_lb_assign.h"
#include "topo/et_path.h"
#include "base/et_rand.h"

static const char *const kind_names[] = {"ethereal", "ecmp", "mprdma", "spray", "reps"};

void
et_lb_conf_default(struct et_lb_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = ET_LB_ETHEREAL;
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
	for (unsigned int k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++) {
		size_t n = strlen(kind_names[k]);

		if (strncmp(spec, kind_names[k], n) != 0)
			continue;
		if (k == ET_LB_MPRDMA) {
			char *end;
			unsigned long x;

			if (spec[n] != ':')
				break;
			x = strtoul(spec + n + 1, &end, 10);
			if (*end || end == spec + n + 1 || x < 1 || x > 64) {
				snprintf(err, errlen, "mprdma:X: X must be 1..64, got '%s'",
					 spec + n + 1);
				return -1;
			}
			c->mprdma_x = (uint32_t)x;
		} else if (spec[n]) {
			break;
		}
		c->kind = (enum et_lb_kind)k;
		return 0;
	}
	snprintf(err, errlen, "expected ethereal, ecmp, mprdma:X, spray or reps, got '%s'", spec);
	return -1;
}

const char *
et_lb_name(const struct et_lb_conf *c, char *buf, size_t len)
{
	if (c->kind == ET_LB_MPRDMA)
		snprintf(buf, len, "mprdma:%u", c->mprdma_x);
	else
		snprintf(buf, len, "%s", kind_names[c->kind]);
	return buf;
}

bool
et_lb_uses_ecmp(const struct et_lb_conf *c)
{
	return c->kind == ET_LB_ECMP || c->kind == ET_LB_MPRDMA || c->kind == ET_LB_REPS;
}

bool
et_lb_per_packet(const struct et_lb_conf *c)
{
	return c->kind == ET_LB_SPRAY || c->kind == ET_LB_REPS;
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
	et_lb_paths_init(&h->paths, ids, n, c->failed_path_timeout_ns, h->rng);
}

uint32_t
et_lb_plan_max(const struct et_lb_host *h, uint32_t n)
{
	switch (h->c.kind) {
	case ET_LB_ETHEREAL:
		/* at most s - 1 extra subflows for each split flow */
		return n * (h->paths.n ? h->paths.n : 1);
	case ET_LB_MPRDMA:
		return n * h->c.mprdma_x;
	default:
		return n;
	}
}

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

/* The good paths towards a group: inside a fat-tree pod only the first
 * byte (the aggregation switch) matters, so one ID per first byte. */
static uint32_t
good_paths(struct et_lb_host *h, uint32_t dst, uint64_t now, uint16_t *out)
{
	uint32_t n = et_lb_paths_good(&h->paths, now, out), k = 0;

	if (n == 0) /* all bad: use them all rather than none */
		n = et_lb_paths_good(&h->paths, UINT64_MAX, out);
	if (h->t.kind != ET_TOPO_FAT_TREE ||
	    et_topo_pod_of(&h->t, dst) != et_topo_pod_of(&h->t, h->host))
		return n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j;

		for (j = 0; j < k && et_path_uplink(out[j]) != et_path_uplink(out[i]); j++)
			;
		if (j == k)
			out[k++] = out[i];
	}
	return k;
}

static uint32_t
plan_ethereal(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
	      struct et_lb_sub *out)
{
	uint32_t k = 0, *members = malloc(n * sizeof(*members));
	bool *done = calloc(n, sizeof(*done));
	struct et_subflow *subs = NULL;

	if (!members || !done)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t paths[ET_LB_MAX_PATHS];
		uint32_t m = 0, s, ns, rot;

		if (done[i])
			continue;
		if (et_lb_rack_local(h, f[i].dst)) {
			done[i] = true;
			out[k++] = (struct et_lb_sub){i, 0, f[i].len, h->paths.n ? h->paths.id[0] : 0,
						      now, -1};
			continue;
		}
		/* flows of one group and one size share the group's paths */
		for (uint32_t j = i; j < n; j++)
			if (!done[j] && f[j].len == f[i].len &&
			    group_of(h, f[j].dst) == group_of(h, f[i].dst)) {
				members[m++] = j;
				done[j] = true;
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
	free(done);
	return k;
}

uint32_t
et_lb_plan(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
	   struct et_lb_sub *out)
{
	uint32_t k = 0, x;

	switch (h->c.kind) {
	case ET_LB_ETHEREAL:
		return plan_ethereal(h, f, n, now, out);
	case ET_LB_MPRDMA:
		x = h->c.mprdma_x;
		for (uint32_t i = 0; i < n; i++) {
			/* X equal parts on dtype-free byte boundaries: the last takes the rest */
			uint64_t part = f[i].len / x;

			for (uint32_t j = 0; j < x; j++) {
				uint64_t off = part * j, len = j + 1 == x ? f[i].len - off : part;

				if (len == 0)
					continue;
				out[k++] = (struct et_lb_sub){i, off, len,
							      (uint16_t)et_rand_next(&h->rng), now, -1};
			}
		}
		return k;
	case ET_LB_SPRAY:
	case ET_LB_ECMP:
	case ET_LB_REPS:
		for (uint32_t i = 0; i < n; i++)
			out[k++] = (struct et_lb_sub){i, 0, f[i].len,
						      (uint16_t)et_rand_next(&h->rng), now, -1};
		return k;
	}
	return 0;
}

uint16_t
et_lb_spray_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	struct et_lb_host *h = ctx;

	(void)now;
	if (ev != ET_PATH_PACKET || h->paths.n == 0)
		return qp->path_id;
	return h->paths.id[et_rand_next(&h->rng) % h->paths.n];
}

uint16_t
et_lb_reps_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	if (ev == ET_PATH_PACKET)
		return et_reps_next(ctx, now);
	if (ev == ET_PATH_TIMEOUT)
		et_reps_on_timeout(ctx, now);
	return qp->path_id;
}

void
et_lb_reps_ack(void *ctx, struct et_qp *qp, uint16_t echoed_path, bool ecn, uint64_t now)
{
	(void)qp;
	et_reps_on_ack(ctx, echoed_path, ecn, now);
}
