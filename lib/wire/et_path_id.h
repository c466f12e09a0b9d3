/* SPDX-License-Identifier: BSD-3-Clause
 * 16-bit path IDs carried in the UDP source port (paper, section 4.2).
 *
 * High byte: the uplink index the next switch that goes up will take; low
 * byte: the one after.  Every switch, up or down, byte-swaps the ID, so the
 * byte it reads is always the high one.  A receiver byte-swaps the ID it got
 * and sends it in its ACK/NAK/CNP, and the acknowledgement retraces the data
 * path's links in reverse.  Pure arithmetic on the ID: what the paths of a
 * topology are is topo/et_path.h.
 */
#ifndef ET_PATH_ID_H
#define ET_PATH_ID_H

#include <stdint.h>

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

#endif /* ET_PATH_ID_H */
