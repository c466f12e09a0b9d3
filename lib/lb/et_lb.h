/* SPDX-License-Identifier: BSD-3-Clause
 * Load-balancing policies, selected by name: how a host turns the flows of
 * one collective step into QPs, and which path ID each QP (or each packet)
 * takes.
 *
 *   ethereal   the batch sorted by destination ToR; Algorithm 1 per
 *              destination leaf (pod in a fat-tree) over the good paths,
 *              ordered so that a split flow's parts climb to different
 *              switches; rack-local flows go at once; random start jitter
 *              and active-list position; reroute on NAK and timeout.
 *   ecmp       one QP per flow, a random UDP source port, ECMP switches.
 *   mprdma:X   every flow in X equal subflows, each a QP with its own
 *              random source port, ECMP switches.
 *   spray      one QP per flow, every packet on a uniformly random path
 *              (multipath QP: reorder window, selective ACK, per-packet
 *              timers).
 *   reps       one QP per flow, every packet's entropy from REPS's recycled
 *              entropy buffer (multipath QP), ECMP switches.
 *
 * Each policy is an ops table in a file of its own (et_lb_<name>.c) and
 * one line in et_lb.c's registry; nothing outside lb/ asks which policy
 * runs.  Planning is pure: a plan says what to create; the host runtime
 * (host/et_runtime) creates it.  Policies decide and never send.
 */
#ifndef ET_LB_H
#define ET_LB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lb/et_lb_paths.h"
#include "transport/et_qp.h"
#include "lb/et_reps.h"
#include "topo/et_topo.h"

struct et_lb_ops;

struct et_lb_conf {
	const struct et_lb_ops *ops;      /* the policy */
	uint32_t mprdma_x;                /* subflows per flow */
	/* ethereal, defaults from the paper's artifact */
	uint64_t batch_ns;                /* sends this close are one batch: 100 */
	uint64_t jitter_ns;               /* start delay bound: 50 */
	uint64_t failed_path_timeout_ns;  /* a bad path stays bad: 100 ms */
	/* REPS, defaults from its artifact (docs/reps.md); explore_pkts 0:
	 * one BDP of the fabric's packets */
	struct et_reps_params reps;
};

void et_lb_conf_default(struct et_lb_conf *c);
/* "ethereal", "ecmp", "mprdma:X", "spray", "reps"; -1 with a message. */
int et_lb_parse(const char *spec, struct et_lb_conf *c, char *err, size_t errlen);
/* The spec back, e.g. "mprdma:4". */
const char *et_lb_name(const struct et_lb_conf *c, char *buf, size_t len);
/* Switches hash (ECMP) rather than follow the path ID. */
bool et_lb_uses_ecmp(const struct et_lb_conf *c);
/* Every packet picks its own path: the QPs run in multipath mode. */
bool et_lb_per_packet(const struct et_lb_conf *c);
/* Ethereal's flow interceptor: flows to other racks wait for the batch
 * (batch_ns) and are planned together; rack-local ones go at once. */
bool et_lb_batched(const struct et_lb_conf *c);

/* One flow of a step: len bytes to host dst. */
struct et_lb_flow {
	uint32_t dst;
	uint64_t len;
};

/* One QP to create: bytes [off, off + len) of flow `flow`. */
struct et_lb_sub {
	uint32_t flow;
	uint64_t off, len;
	uint16_t path;        /* UDP source port of its packets (first path) */
	uint64_t start_ns;    /* when to post it */
	int insert_pos;       /* active-list position; -1: the tail */
};

/* What the policies did, summed over a host's connections. */
struct et_lb_stats {
	uint64_t reps_frozen, reps_explored, reps_recycled;
};

struct et_lb_host {
	struct et_lb_conf c;
	struct et_topo t;
	uint32_t host;
	struct et_lb_paths paths;  /* every path ID of this host, good or bad */
	uint64_t rng;
	struct et_lb_stats st;
};

void et_lb_host_init(struct et_lb_host *h, const struct et_lb_conf *c,
		     const struct et_topo *t, uint32_t host, uint64_t seed);

/* One of the host's real path IDs, the one r picks (a QP of a per-packet
 * policy that keeps one path takes it); false if the host has none. */
bool et_lb_host_path(const struct et_lb_host *h, uint64_t r, uint16_t *path);
/* What the host's path state has met: timeouts that marked a path bad,
 * and QPs moved off one. */
static inline uint64_t
et_lb_host_marked_bad(const struct et_lb_host *h)
{
	return h->paths.marked_bad;
}

static inline uint64_t
et_lb_host_rerouted(const struct et_lb_host *h)
{
	return h->paths.rerouted;
}

/* Most subflows et_lb_plan() can make of n flows. */
uint32_t et_lb_plan_max(const struct et_lb_host *h, uint32_t n);

/* Plan a batch of n flows issued at now. */
uint32_t et_lb_plan(struct et_lb_host *h, const struct et_lb_flow *f, uint32_t n,
		    uint64_t now, struct et_lb_sub *out);

/* Give a new sending QP to host dst the policy's hooks; *state: what the
 * policy keeps for the connection (NULL for none), handed back to
 * et_lb_detach() when the QP goes.  0 or -ENOMEM. */
int et_lb_attach(struct et_lb_host *h, struct et_qp *qp, uint32_t dst, void **state);
void et_lb_detach(struct et_lb_host *h, void *state);

/* A subflow of ours to host dst on path id timed out at its far end (data
 * by READ: the receiver asks, its timeouts are its own): for a policy with
 * path state, the path's links are suspect here too, as if our own QP had
 * timed out on it, so that the next assignments avoid them. */
void et_lb_far_timeout(struct et_lb_host *h, uint32_t dst, uint16_t id, uint64_t now);

/* Flows to the same ToR as this host: they need no path (Ethereal sends
 * them at once, outside any batch). */
static inline bool
et_lb_rack_local(const struct et_lb_host *h, uint32_t dst)
{
	return et_topo_tor_of(&h->t, dst) == et_topo_tor_of(&h->t, h->host);
}

/* Packet spraying's hook (multipath QPs, ctx: the et_lb_host): every packet
 * on a path drawn uniformly from all of the host's paths, failed or not
 * (the baseline keeps spraying onto a dead link until the switches route
 * around it; its per-packet timers recover what is lost). */
uint16_t et_lb_spray_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now);


/* REPS's hooks (multipath QPs, ctx: the connection's et_reps): every packet
 * takes the entropy REPS gives, a packet timeout freezes, every ACK is
 * offered for recycling. */
uint16_t et_lb_reps_hook(void *ctx, struct et_qp *qp, enum et_path_event ev, uint64_t now);
void et_lb_reps_ack(void *ctx, struct et_qp *qp, uint16_t echoed_path, bool ecn, uint64_t now);

#endif /* ET_LB_H */
