/* SPDX-License-Identifier: BSD-3-Clause
 * What a load-balancing policy is to the rest of lb/: an ops table, one per
 * file (et_lb_<name>.c), listed once in et_lb.c.  Outside lb/, only
 * et_lb.h's entry points are used.
 */
#ifndef ET_LB_PRIV_H
#define ET_LB_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/et_lb.h"

struct et_lb_ops {
	const char *name;
	bool ecmp_switches;  /* switches hash the 5-tuple, not the path ID */
	bool per_packet;     /* multipath QPs: every packet asks for a path */
	bool batched;        /* Ethereal's interceptor holds remote flows */
	bool path_state;     /* timeouts suspect links (et_lb_paths): a far
			      * end's too (et_lb_far_timeout) */
	/* "name:ARG": the argument (NULL for the name alone); NULL when the
	 * policy takes none.  -1 with a message. */
	int (*parse_arg)(const char *arg, struct et_lb_conf *c, char *err, size_t errlen);
	/* the spec back, e.g. "mprdma:4"; NULL: the name alone */
	void (*spec)(const struct et_lb_conf *c, char *buf, size_t len);
	uint32_t (*plan_max)(const struct et_lb_host *h, uint32_t n);
	uint32_t (*plan)(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n,
			 uint64_t now, struct et_lb_sub *out);
	/* NULL: the QP keeps the path it was planned on */
	int (*attach)(struct et_lb_host *h, struct et_qp *qp, uint32_t dst, void **state);
	void (*detach)(struct et_lb_host *h, void *state);
};

extern const struct et_lb_ops et_lb_ethereal, et_lb_ecmp, et_lb_mprdma, et_lb_spray, et_lb_reps;

/* One QP per flow on a random UDP source port: ECMP's plan, and the first
 * path of spraying's and REPS's QPs. */
uint32_t et_lb_plan_per_flow(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n,
			     uint64_t now, struct et_lb_sub *out);

#endif /* ET_LB_PRIV_H */
