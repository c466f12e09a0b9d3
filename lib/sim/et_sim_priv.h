/* SPDX-License-Identifier: BSD-3-Clause
 * What the files of sim/ share and nothing else sees.
 */
#ifndef ET_SIM_PRIV_H
#define ET_SIM_PRIV_H

#include "sim/et_agenda.h"
#include "sim/et_fabric.h"

/* Set f->error (the first failure stays) and return -EIO. */
int et_fabric_fail(struct et_fabric *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Links a packet crosses on the fabric's longest path. */
uint32_t et_fabric_longest_path_hops(const struct et_topo *t);

/* The peer ops' address of a host; ctx: the fabric. */
uint32_t et_fabric_peer_ip(void *ctx, uint32_t host);

/* The far ends of subflows (sim/et_far.c): host A's QPs on host B, made
 * at once, or by request while the lanes run (made and closed by B's lane
 * between a window's barriers, an answer landing at A delay after it
 * asked).  B's NIC picks its own QPNs from the first ET_FAR_PICKED; then
 * come ET_FAR_PER_PEER for each host of the fabric, that host picks. */
#define ET_FAR_PICKED (2 * ET_RT_MAX_QPS)
#define ET_FAR_PER_PEER 16u
int et_far_init(struct et_fabric *f);
void et_far_free(struct et_fabric *f);
/* The lanes start (owner: each node's lane) and end. */
int et_far_lanes(struct et_fabric *f, uint32_t n_lanes, const uint8_t *owner, uint64_t delay);
void et_far_lanes_end(struct et_fabric *f);
/* The peer ops' open and close, from the sending rank src's turn (on host
 * src_host; hd the receiving rank on s->dst): open is 0 with out filled,
 * -EINPROGRESS (the answer lands later, through et_rt_connected), or a
 * negative errno; close at once (now) or by request. */
int et_far_open(struct et_fabric *f, struct et_rt_host *src, uint32_t src_host,
		struct et_rt_sub *s, struct et_rt_host *hd, uint32_t recv, uint32_t qpn,
		const struct et_qp_attr *a, struct et_rt_remote *out);
void et_far_close(struct et_fabric *f, struct et_rt_host *src, uint32_t src_host,
		  struct et_rt_sub *s, struct et_rt_host *hd, bool now);
/* Lane `lane` between the barriers: the requests to its hosts, in one
 * order; *next lowered to the earliest answer.  0 or a negative errno. */
int et_far_serve(struct et_fabric *f, uint32_t lane, struct et_agenda *a, uint64_t *next);
/* Lane `lane` after the barriers: the answers to its hosts, each host woken
 * on a when its answer lands.  0 or -ENOMEM. */
int et_far_collect(struct et_fabric *f, uint32_t lane, struct et_agenda *a);
/* At the start of host's turn: the answers landed by now; how many. */
uint32_t et_far_land(struct et_fabric *f, uint32_t host, uint64_t now);
/* When host's next answer lands; UINT64_MAX: none. */
uint64_t et_far_next(const struct et_fabric *f, uint32_t host);

/* The frame pool (sim/et_pool.c): n mbufs of data_room, and when it runs
 * dry more, made then, up to max in all. */
struct rte_mempool *et_pool_create(const char *name, uint32_t n, uint32_t max,
				   uint16_t data_room, int socket);
void et_pool_free(struct rte_mempool *mp);
/* Its mbufs now, and those out of it. */
uint32_t et_pool_size(const struct rte_mempool *mp);
uint32_t et_pool_in_use(const struct rte_mempool *mp);

/* Node i's turn (a host, then the switches by tier): the work it did. */
uint32_t et_sim_poll_node(struct et_fabric *f, uint32_t i, uint64_t now);
/* When node i next has something to do (now: at once). */
uint64_t et_sim_node_next_event(const struct et_fabric *f, uint32_t i, uint64_t now);
/* Past the run's time limit: said as a failure, true. */
bool et_sim_past_limit(struct et_fabric *f, uint64_t now);

/* Run in virtual time, the nodes dealt to the EAL lcores (sim/et_lanes.c). */
void et_lanes_run(struct et_fabric *f);

/* Host i has something new to do (a driver started work on it from
 * another host's turn): poll it in this pass. */
static inline void
et_fabric_wake(struct et_fabric *f, uint32_t i)
{
	if (f->agenda)
		et_agenda_mark(f->agenda, i);
}

#endif /* ET_SIM_PRIV_H */
