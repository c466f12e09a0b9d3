/* SPDX-License-Identifier: BSD-3-Clause
 * Ethereal's path assignment (paper, section 4.3 and Algorithm 1).
 *
 * A host has n equal-size flows towards one destination leaf and s good
 * paths to it.  Each path gets floor(n / s) whole flows; each of the
 * r = n mod s remaining flows is split into s / g equal subflows, with
 * g = gcd(r, s), and each path gets r / g of those.  Every path then
 * carries exactly n / s flows' worth of bytes (Theorem 1), splitting only r
 * flows and adding r (s - g) / g flows.
 */
#ifndef ET_LB_ASSIGN_H
#define ET_LB_ASSIGN_H

#include <stdint.h>

/* One (sub)flow: a byte range of flow `flow` on path `path` (an index into
 * the caller's list of good paths). */
struct et_subflow {
	uint32_t flow;
	uint32_t path;
	uint64_t offset;
	uint64_t length;
};

static inline uint32_t
et_gcd(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* How many (sub)flows et_lb_assign() makes for n flows over s paths. */
static inline uint32_t
et_lb_assign_count(uint32_t n, uint32_t s)
{
	uint32_t r = n % s;

	return n - r + (r ? r * (s / et_gcd(r, s)) : 0);
}

/* Assign n flows of flow_bytes each over s paths; out must hold
 * et_lb_assign_count(n, s) entries, and gets them in flow order.  The r
 * flows split are first, first + 1, ... (mod n): which ones the algorithm
 * leaves open, and a caller whose peers all split the same ones piles the
 * subflows onto a few receivers.  Subflow lengths differ by at most one
 * byte when flow_bytes is not a multiple of s / g.  Returns the count, or
 * 0 when s is 0. */
uint32_t et_lb_assign(uint32_t n, uint32_t s, uint64_t flow_bytes, uint32_t first,
		      struct et_subflow *out);

#endif /* ET_LB_ASSIGN_H */
