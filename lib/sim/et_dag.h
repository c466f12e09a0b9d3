/* SPDX-License-Identifier: BSD-3-Clause
 * A trace's iteration (coll/et_trace) run on one fabric: every rank walks
 * the DAG; a compute node is a timer on the virtual clock, a communication
 * node one collective per group of its rank-group set, run by the host
 * runtime over that group's hosts.  Collectives of different groups, and
 * compute, run at once wherever the dependencies allow, all on the one
 * fabric: switch queues, each host's path state (paths marked bad) and
 * DCTCP's state (a new QP to a peer starts with the window and alpha of
 * the host's last QP to it) carry over from one collective to the next,
 * and a --fail happens once, at its time after the iteration starts.
 *
 * Times, all from the iteration's start:
 *  - iteration: until the last rank finished its last node;
 *  - communication: the union of the intervals with any collective in
 *    flight (from its start until the last rank of its group is done);
 *  - compute: one rank's compute, the sum of the compute nodes' durations
 *    (every rank runs every node).
 * Serial nodes give iteration = compute + communication; overlap, less.
 */
#ifndef ET_DAG_H
#define ET_DAG_H

#include <stdbool.h>
#include <stdint.h>

#include "coll/et_trace.h"
#include "sim/et_fabric.h"

/* One node over all ranks: when it first started and when it last ended
 * (a collective of one rank, or of no bytes, may end when it starts). */
struct et_dag_node_time {
	uint64_t start_ns, end_ns;
	bool done;
};

struct et_dag_result {
	uint64_t iteration_ns, comm_ns, compute_ns;
	uint32_t collectives;            /* group collectives run */
	struct et_dag_node_time *node;   /* per trace node; freed by et_dag_result_free */
};

/* Run t on f (built with hosts_only, t->ranks hosts, no verify), each
 * collective by algo (chunk: dbt's unit, 0: default) on elements of f's
 * dtype (its size in bytes rounded down to them), and collect the
 * fabric's counters (et_fabric_collect: not again).  0; -EINVAL when it
 * cannot start (a collective that cannot be built names its node and
 * line), -EIO when the run failed; f->error says why. */
int et_dag_run(struct et_fabric *f, const struct et_trace *t, enum et_coll_algo algo,
	       uint64_t chunk, struct et_dag_result *r);
void et_dag_result_free(struct et_dag_result *r);

#endif /* ET_DAG_H */
