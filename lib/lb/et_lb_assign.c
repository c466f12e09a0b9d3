/* SPDX-License-Identifier: BSD-3-Clause */
#include "lb/et_lb_assign.h"

uint32_t
et_lb_assign(uint32_t n, uint32_t s, uint64_t flow_bytes, uint32_t first,
	     struct et_subflow *out)
{
	uint32_t r, parts, i, j = 0, p, whole = 0, k = 0;

	if (s == 0 || n == 0)
		return 0;
	r = n % s;
	parts = r ? s / et_gcd(r, s) : 1;
	first %= n;
	for (i = 0; i < n; i++) {
		/* floor(n / s) whole flows on every path */
		if ((i + n - first) % n >= r) {
			out[k++] = (struct et_subflow){i, whole++ % s, 0, flow_bytes};
			continue;
		}
		/* the r others in s / g equal parts each: numbering the parts
		 * 0, 1, ... and giving part t to path t mod s puts r / g parts
		 * on every path, and the parts of one flow on different paths */
		for (p = 0; p < parts; p++) {
			uint64_t off = flow_bytes * p / parts;
			uint64_t end = flow_bytes * (p + 1) / parts;

			out[k++] = (struct et_subflow){i, (j * parts + p) % s, off, end - off};
		}
		j++;
	}
	return k;
}
