/* SPDX-License-Identifier: BSD-3-Clause
 * Ethereal's path state (paper, section 4.4): every path ID of a host is good
 * or bad.  A QP's timeout marks its path bad until a reset timer expires
 * (100 ms by default, the authors' failed-path-timeout) and moves the QP to a
 * random good path; a NAK only moves it.  New assignments use good paths only.
 */
#ifndef ET_LB_PATHS_H
#define ET_LB_PATHS_H

#include <stdint.h>

#include "transport/et_qp.h"

#define ET_LB_MAX_PATHS 256

struct et_lb_paths {
	uint32_t n;
	uint16_t id[ET_LB_MAX_PATHS];
	uint64_t bad_until[ET_LB_MAX_PATHS]; /* 0: good */
	uint64_t reset_ns;
	uint64_t rng;                        /* the host's seeded PRNG */
	uint64_t marked_bad, rerouted;
};

/* ids: the host's distinct path IDs (e.g. et_path_enumerate() towards a
 * destination in another leaf). */
void et_lb_paths_init(struct et_lb_paths *ps, const uint16_t *ids, uint32_t n,
		      uint64_t reset_ns, uint64_t seed);

/* The good paths at now, in table order; returns how many. */
uint32_t et_lb_paths_good(const struct et_lb_paths *ps, uint64_t now, uint16_t *out);

void et_lb_paths_mark_bad(struct et_lb_paths *ps, uint16_t id, uint64_t now);

/* A random good path other than avoid when there is one; avoid itself when
 * it is the only good one; a random path at all when none is good. */
uint16_t et_lb_paths_pick(struct et_lb_paths *ps, uint64_t now, uint16_t avoid);

/* The QP hook (et_qp_set_path_fn, ctx = the et_lb_paths): the first packet
 * keeps the path the QP was given; a NAK moves it to a random good path; a
 * timeout marks its path bad first. */
uint16_t et_lb_paths_hook(void *ctx, struct et_qp *qp, enum et_path_event ev,
			  uint64_t now);

#endif /* ET_LB_PATHS_H */
