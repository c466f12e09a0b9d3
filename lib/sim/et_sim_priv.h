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

/* The far end of subflow s, made directly on host hd (the receiving rank
 * of the schedule, whose recv rcv s fills) for the sending QP qpn of host
 * src_host; and its end when s is complete.  The fabric's peer ops and the
 * DAG's (sim/et_dag) share them.  ctx of et_fabric_peer_ip: the fabric. */
uint32_t et_fabric_peer_ip(void *ctx, uint32_t host);
int et_fabric_peer_open(struct et_fabric *f, struct et_rt_host *hd, uint32_t src_host,
			uint32_t recv, struct et_rt_sub *s, uint32_t qpn,
			const struct et_qp_attr *a, struct et_rt_remote *out);
void et_fabric_peer_close(struct et_fabric *f, struct et_rt_host *src, struct et_rt_sub *s);

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
