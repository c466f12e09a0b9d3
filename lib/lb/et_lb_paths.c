/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "lb/et_lb_paths.h"
#include "base/et_rand.h"

void
et_lb_paths_init(struct et_lb_paths *ps, const uint16_t *ids, uint32_t n,
		 uint64_t reset_ns, uint64_t seed)
{
	memset(ps, 0, sizeof(*ps));
	ps->n = n < ET_LB_MAX_PATHS ? n : ET_LB_MAX_PATHS;
	memcpy(ps->id, ids, ps->n * sizeof(ids[0]));
	ps->reset_ns = reset_ns;
	ps->rng = seed | 1;
}

static inline int
good(const struct et_lb_paths *ps, uint32_t i, uint64_t now)
{
	return ps->bad_until[i] <= now; /* 0, or the reset timer has expired */
}

uint32_t
et_lb_paths_good(const struct et_lb_paths *ps, uint64_t now, uint16_t *out)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < ps->n; i++)
		if (good(ps, i, now))
			out[k++] = ps->id[i];
	return k;
}

void
et_lb_paths_mark_bad(struct et_lb_paths *ps, uint16_t id, uint64_t now)
{
	for (uint32_t i = 0; i < ps->n; i++)
		if (ps->id[i] == id) {
			ps->bad_until[i] = now + ps->reset_ns;
			ps->marked_bad++;
			return;
		}
}

uint16_t
et_lb_paths_pick(struct et_lb_paths *ps, uint64_t now, uint16_t avoid)
{
	uint16_t cand[ET_LB_MAX_PATHS];
	uint32_t k = 0;

	for (uint32_t i = 0; i < ps->n; i++)
		if (good(ps, i, now) && ps->id[i] != avoid)
			cand[k++] = ps->id[i];
	if (k == 0) {
		/* nothing else good: stay if the current path is good, else any */
		for (uint32_t i = 0; i < ps->n; i++)
			if (ps->id[i] == avoid && good(ps, i, now))
				return avoid;
		return ps->n ? ps->id[et_rand_next(&ps->rng) % ps->n] : avoid;
	}
	return cand[et_rand_next(&ps->rng) % k];
}

uint16_t
et_lb_paths_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now)
{
	struct et_lb_paths *ps = ctx;

	if (ev == ET_PATH_FIRST)
		return et_qp_path_id(qp);
	/* a timeout says the path may have failed; a NAK only that it lost */
	if (ev == ET_PATH_TIMEOUT)
		et_lb_paths_mark_bad(ps, et_qp_path_id(qp), now);
	ps->rerouted++;
	return et_lb_paths_pick(ps, now, et_qp_path_id(qp));
}
