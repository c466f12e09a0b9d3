/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet spraying: one QP per flow, every packet on a path drawn uniformly
 * from all of the host's paths, failed or not (the baseline keeps spraying
 * onto a dead link until the switches route around it; its per-packet
 * timers recover what is lost). */
#include "lb/et_lb_priv.h"
#include "base/et_rand.h"

uint16_t
et_lb_spray_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	struct et_lb_host *h = ctx;

	(void)now;
	if (ev != ET_PATH_PACKET || h->paths.n == 0)
		return et_qp_path_id(qp);
	return h->paths.id[et_rand_next(&h->rng) % h->paths.n];
}

static int
attach(struct et_lb_host *h, struct et_qp *qp, uint32_t dst, void **state)
{
	(void)dst;
	*state = NULL;
	et_qp_set_path_fn(qp, et_lb_spray_hook, h);
	return 0;
}

static uint32_t
plan_max(const struct et_lb_host *h, uint32_t n)
{
	return n;
}

const struct et_lb_ops et_lb_spray = {
	.name = "spray",
	.per_packet = true,
	.plan_max = plan_max,
	.plan = et_lb_plan_per_flow,
	.attach = attach,
};
