/* SPDX-License-Identifier: BSD-3-Clause
 * Ethereal's path state (paper, section 4.4).  A QP's timeout says a link
 * its path crossed (its data out, its ACKs back along the same links) may
 * have failed: each of those switch-to-switch links is suspect until a
 * reset timer expires (100 ms by default, the authors' failed-path-timeout),
 * and a path ID is good towards a destination when its path there crosses
 * no suspect link.  The timeout moves the QP to a random good path, which
 * thus shares no link with the one that failed; a NAK only moves it.  New
 * assignments use good paths only.
 *
 * The paper marks the timed-out path ID itself bad.  On a leaf-spine that
 * is the same thing (an ID is one uplink, and the spine's link down is on
 * no other ID of the host).  On a fat-tree a link lies under many IDs: a
 * ToR uplink under all 16 second bytes, a link into a ToR under paths from
 * every pod.  Marking the ID alone, the QP's next random ID and the next
 * step's flows crossed the same dead link, a 1 ms timeout each: an a2a
 * all-reduce took 5.08 ms at any size from 4 to 32 MB (docs/reproduce.md).
 */
#ifndef ET_LB_PATHS_H
#define ET_LB_PATHS_H

#include <stdint.h>

#include "topo/et_topo.h"
#include "transport/et_qp.h"

#define ET_LB_MAX_PATHS 256
/* A timeout suspects at most 4 links (a fat-tree's 6 hops less the two
 * host links); more than this many at once and the soonest to expire
 * goes. */
#define ET_LB_MAX_SUSPECT 128

struct et_lb_suspect {
	uint64_t link;  /* the link, either way (et_lb_paths.c) */
	uint64_t until; /* suspect before this time */
};

struct et_lb_paths {
	struct et_topo t;
	uint32_t host;
	uint32_t n;
	uint16_t id[ET_LB_MAX_PATHS];
	uint32_t n_suspect;
	struct et_lb_suspect suspect[ET_LB_MAX_SUSPECT];
	uint64_t reset_ns;
	uint64_t rng;                        /* the host's seeded PRNG */
	uint64_t marked_bad, rerouted;       /* timeouts that suspected; moves */
};

/* ids: the host's distinct path IDs (e.g. et_path_enumerate() towards a
 * destination in another pod or leaf) on topology t. */
void et_lb_paths_init(struct et_lb_paths *ps, const struct et_topo *t, uint32_t host,
		      const uint16_t *ids, uint32_t n, uint64_t reset_ns, uint64_t seed);

/* Where id is in the host's table of IDs (0 .. n - 1), or -1. */
int et_lb_paths_index(const struct et_lb_paths *ps, uint16_t id);

/* The IDs good towards host dst at now, in table order; returns how many. */
uint32_t et_lb_paths_good(const struct et_lb_paths *ps, uint32_t dst, uint64_t now,
			  uint16_t *out);

/* A timeout on path id towards dst: its links are suspect until the reset. */
void et_lb_paths_suspect(struct et_lb_paths *ps, uint32_t dst, uint16_t id, uint64_t now);

/* A random ID good towards dst other than avoid when there is one; avoid
 * itself when it is the only good one; a random ID at all when none is. */
uint16_t et_lb_paths_pick(struct et_lb_paths *ps, uint32_t dst, uint64_t now, uint16_t avoid);

/* What a sending QP's hook needs: its host's path state and its peer. */
struct et_lb_paths_qp {
	struct et_lb_paths *ps;
	uint32_t dst;
};

/* The QP hook (et_qp_set_path_fn, ctx = an et_lb_paths_qp): the first
 * packet keeps the path the QP was given; a NAK moves it to a random good
 * path; a timeout suspects its path's links first. */
uint16_t et_lb_paths_hook(void *ctx, struct et_qp *qp, enum et_path_event ev,
			  uint64_t now);

#endif /* ET_LB_PATHS_H */
