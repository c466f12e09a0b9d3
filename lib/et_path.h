/* SPDX-License-Identifier: BSD-3-Clause
 * 16-bit path IDs carried in the UDP source port (paper, section 4.2).
 *
 * High byte: the uplink index the next switch that goes up will take; low
 * byte: the one after.  Every switch, up or down, byte-swaps the ID, so the
 * byte it reads is always the high one.  A receiver byte-swaps the ID it got
 * and sends it in its ACK/NAK/CNP, and the acknowledgement retraces the data
 * path's links in reverse.
 */
#ifndef ET_PATH_H
#define ET_PATH_H

#include <stdint.h>

#include "et_topo.h"

static inline uint16_t
et_path_make(uint8_t first_uplink, uint8_t second_uplink)
{
	return (uint16_t)(first_uplink << 8 | second_uplink);
}

static inline uint8_t
et_path_uplink(uint16_t id)
{
	return id >> 8;
}

static inline uint16_t
et_path_swap(uint16_t id)
{
	return (uint16_t)(id >> 8 | id << 8);
}

/* The source port a receiver puts on its acknowledgement. */
static inline uint16_t
et_path_echo(uint16_t received)
{
	return et_path_swap(received);
}

/* Where a switch forwards a packet going down to a group of n parallel
 * links: by the low byte of the ID it received, i.e. the uplink index the
 * previous switch took, so that data and ACK share a lane. */
static inline uint32_t
et_path_down_lane(uint16_t id_received, uint32_t n)
{
	return (id_received & 0xff) % n;
}

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
