/* SPDX-License-Identifier: BSD-3-Clause */
#include "lb/et_lb_assign.h"

uint32_t
et_lb_assign(uint32_t n, uint32_t s, uint64_t flow_bytes, struct et_subflow *out)
{
	uint32_t whole, r, parts, i, j, p, k = 0;

	if (s == 0)
		return 0;
	whole = n - n % s;
	r = n % s;
	/* floor(n / s) whole flows on every path */
	for (i = 0; i < whole; i++)
		out[k++] = (struct et_subflow){i, i % s, 0, flow_bytes};
	if (r == 0)
		return k;
	/* the r remaining flows in s / g equal parts each: numbering the parts
	 * 0, 1, ... and giving part t to path t mod s puts r / g parts on every
	 * path, and the parts of one flow on different paths */
	parts = s / et_gcd(r, s);
	for (j = 0; j < r; j++)
		for (p = 0; p < parts; p++) {
			uint64_t off = flow_bytes * p / parts;
			uint64_t end = flow_bytes * (p + 1) / parts;

			out[k++] = (struct et_subflow){whole + j, (j * parts + p) % s, off, end - off};
		}
	return k;
}
