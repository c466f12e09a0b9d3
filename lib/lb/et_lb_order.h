/* SPDX-License-Identifier: BSD-3-Clause
 * The two orders Ethereal's planning relies on (paper, section 4.1 and 4.3).
 *
 * The interceptor sorts a batch by destination ToR, so that the flows of one
 * ToR are consecutive when Algorithm 1 hands out paths in turn and each
 * ToR's flows cover the paths evenly, downlinks to it included.
 *
 * Algorithm 1 gives consecutive path indices to the parts of one split flow
 * (and to consecutive whole flows).  The path list is therefore put in an
 * order where consecutive entries climb to different switches above the
 * ToR: one path through every aggregation switch (spine) before a second
 * through any.  Otherwise a flow split in 2 to 4 parts in a fat-tree can
 * have all of them through one aggregation switch, on one ToR uplink and one
 * downlink to the destination ToR.  Which switch an uplink reaches is
 * topo's wiring rule (et_topo_uplink_peer), parallel lanes included.
 */
#ifndef ET_LB_ORDER_H
#define ET_LB_ORDER_H

#include <stdint.h>

#include "lb/et_lb.h"

/* idx[0..n) := the indices of f sorted by destination ToR; flows of one
 * ToR keep their batch order. */
void et_lb_order_by_tor(const struct et_topo *t, const struct et_lb_flow *f, uint32_t n,
			uint32_t *idx);

/* Reorder ids[0..n), path IDs of a host under ToR tor, round-robin over
 * the switches their first uplink leads to: the first path through each
 * switch (in order of the switches' first appearance), then the second,
 * and so on; paths through one switch keep their order. */
void et_lb_spread_paths(const struct et_topo *t, uint32_t tor, uint16_t *ids, uint32_t n);

#endif /* ET_LB_ORDER_H */
