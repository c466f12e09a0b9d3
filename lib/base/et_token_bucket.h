/* SPDX-License-Identifier: BSD-3-Clause
 * A token bucket: at most `burst` events at once, then one per `refill`
 * ticks.  What answers the wire on its own (ARP at an endpoint or at the
 * switch) takes a token before it sends, so a flood of requests cannot
 * make it flood the segment.  Pure: the caller gives the time.
 */
#ifndef ET_TOKEN_BUCKET_H
#define ET_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct et_token_bucket {
	uint64_t refill;      /* ticks per token, >= 1 */
	uint64_t last_refill; /* when the last whole token was added */
	uint32_t tokens, burst;
};

/* Full at the start; refill 0 or burst 0 are taken as 1. */
static inline void
et_token_bucket_init(struct et_token_bucket *b, uint64_t refill, uint32_t burst)
{
	b->refill = refill ? refill : 1;
	b->burst = burst ? burst : 1;
	b->tokens = b->burst;
	b->last_refill = 0;
}

/* Take one token at now; false when the bucket is empty. */
static inline bool
et_token_bucket_take(struct et_token_bucket *b, uint64_t now)
{
	if (now > b->last_refill) {
		uint64_t add = (now - b->last_refill) / b->refill;

		if (add) {
			b->tokens = add >= b->burst || b->tokens + add > b->burst
				? b->burst : b->tokens + (uint32_t)add;
			b->last_refill += add * b->refill;
		}
	}
	if (b->tokens == 0)
		return false;
	b->tokens--;
	return true;
}

#endif /* ET_TOKEN_BUCKET_H */
