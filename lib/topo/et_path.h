/* SPDX-License-Identifier: BSD-3-Clause
 * The paths of a topology: how many a host pair has, their IDs, and the
 * links a packet with a given ID crosses (the encoding: wire/et_path_id.h).
 */
#ifndef ET_PATH_H
#define ET_PATH_H

#include <stdint.h>

#include "topo/et_topo.h"
#include "wire/et_path_id.h"

/* Number of distinct paths from src to dst (1 under the same ToR). */
uint32_t et_path_count(const struct et_topo *t, uint32_t src, uint32_t dst);

/* The IDs of all paths from src to dst, at most max of them; returns the
 * number written. */
uint32_t et_path_enumerate(const struct et_topo *t, uint32_t src, uint32_t dst,
			   uint16_t *ids, uint32_t max);

/* One directed link crossing: from -> to on parallel lane, and the path ID
 * the packet carries on that link. */
struct et_hop {
	struct et_node from;
	struct et_node to;
	uint32_t lane;
	uint16_t id;
};

#define ET_PATH_MAX_HOPS 6

/* Follow a packet from host src with source port id through the switch rule
 * (up on the high byte, down by destination, swap at every switch).  Returns
 * the number of hops, or -1 if a switch would drop it (no such uplink). */
int et_path_walk(const struct et_topo *t, uint32_t src, uint32_t dst,
		 uint16_t id, struct et_hop hops[ET_PATH_MAX_HOPS]);

#endif /* ET_PATH_H */
