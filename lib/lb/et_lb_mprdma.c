/* SPDX-License-Identifier: BSD-3-Clause */
/* MP-RDMA-x: every flow in X equal subflows, each its own QP on its own
 * random UDP source port, over ECMP switches. */
#include <stdio.h>
#include <stdlib.h>

#include "lb/et_lb_priv.h"
#include "base/et_rand.h"

static int
parse_arg(const char *arg, struct et_lb_conf *c, char *err, size_t errlen)
{
	char *end = NULL;
	unsigned long x = arg ? strtoul(arg, &end, 10) : 0;

	if (!arg || *end || end == arg || x < 1 || x > 64) {
		snprintf(err, errlen, "mprdma:X: X must be 1..64, got '%s'", arg ? arg : "");
		return -1;
	}
	c->mprdma_x = (uint32_t)x;
	return 0;
}

static void
spec(const struct et_lb_conf *c, char *buf, size_t len)
{
	snprintf(buf, len, "mprdma:%u", c->mprdma_x);
}

static uint32_t
plan_max(const struct et_lb_host *h, uint32_t n)
{
	return n * h->c.mprdma_x;
}

static uint32_t
plan(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n, uint64_t now,
     struct et_lb_sub *out)
{
	uint32_t k = 0, x = h->c.mprdma_x;

	for (uint32_t i = 0; i < n; i++) {
		/* X equal parts on dtype-free byte boundaries: the last takes the rest */
		uint64_t part = f[i].len / x;

		for (uint32_t j = 0; j < x; j++) {
			uint64_t off = part * j, len = j + 1 == x ? f[i].len - off : part;

			if (len == 0)
				continue;
			out[k++] = (struct et_lb_sub){i, off, len, (uint16_t)et_rand_next(&h->rng), now,
						      -1};
		}
	}
	return k;
}

const struct et_lb_ops et_lb_mprdma = {
	.name = "mprdma",
	.ecmp_switches = true,
	.parse_arg = parse_arg,
	.spec = spec,
	.plan_max = plan_max,
	.plan = plan,
};
