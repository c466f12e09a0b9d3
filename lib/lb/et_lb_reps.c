/* SPDX-License-Identifier: BSD-3-Clause */
/* REPS on ECMP switches: one QP per flow, every packet's entropy from the
 * connection's recycled-entropy state (lb/et_reps), a timeout freezes it,
 * every ACK is offered for recycling. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lb/et_lb_priv.h"
#include "base/et_rand.h"

uint16_t
et_lb_reps_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	if (ev == ET_PATH_PACKET)
		return et_reps_next(ctx, now);
	if (ev == ET_PATH_TIMEOUT)
		et_reps_on_timeout(ctx, now);
	return et_qp_path_id(qp);
}

void
et_lb_reps_ack(void *ctx, struct et_qp *qp, uint16_t echoed_path, bool ecn, uint64_t now)
{
	(void)qp;
	et_reps_on_ack(ctx, echoed_path, ecn, now);
}

static int
attach(struct et_lb_host *h, struct et_qp *qp, uint32_t dst, void **state)
{
	(void)dst;
	struct et_reps *r = malloc(sizeof(*r));

	*state = r;
	if (r == NULL)
		return -ENOMEM;
	et_reps_init(r, &h->c.reps, et_rand_next(&h->rng));
	et_qp_set_path_fn(qp, et_lb_reps_hook, r);
	et_qp_set_ack_fn(qp, et_lb_reps_ack, r);
	return 0;
}

static void
detach(struct et_lb_host *h, void *state)
{
	struct et_reps *r = state;

	h->st.reps_frozen += r->frozen_count;
	h->st.reps_explored += r->explored;
	h->st.reps_recycled += r->recycled;
	free(r);
}

static uint32_t
plan_max(const struct et_lb_host *h, uint32_t n)
{
	return n;
}

/* "reps": Bonato et al.'s REPS; "reps:flow": as the Ethereal artifact has
 * it (et_reps.h, pinned) */
static int
parse_arg(const char *arg, struct et_lb_conf *c, char *err, size_t errlen)
{
	if (arg && strcmp(arg, "flow") != 0) {
		snprintf(err, errlen, "reps:ARG: only reps:flow, got '%s'", arg);
		return -1;
	}
	c->reps.pinned = arg != NULL;
	return 0;
}

static void
spec(const struct et_lb_conf *c, char *buf, size_t len)
{
	snprintf(buf, len, c->reps.pinned ? "reps:flow" : "reps");
}

const struct et_lb_ops et_lb_reps = {
	.name = "reps",
	.parse_arg = parse_arg,
	.spec = spec,
	.ecmp_switches = true,
	.per_packet = true,
	.plan_max = plan_max,
	.plan = et_lb_plan_per_flow,
	.attach = attach,
	.detach = detach,
};
