/* SPDX-License-Identifier: BSD-3-Clause */
/* ECMP: one QP per flow on a random UDP source port; the switches hash the
 * 5-tuple and nothing reroutes. */
#include "lb/et_lb_priv.h"

static uint32_t
plan_max(const struct et_lb_host *h, uint32_t n)
{
	return n;
}

const struct et_lb_ops et_lb_ecmp = {
	.name = "ecmp",
	.ecmp_switches = true,
	.plan_max = plan_max,
	.plan = et_lb_plan_per_flow,
};
