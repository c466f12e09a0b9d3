/* SPDX-License-Identifier: BSD-3-Clause
 * Workload traces: one training iteration as a DAG of compute and
 * communication nodes, after MLCommons Chakra's execution traces (a
 * COMP_NODE with its duration, a COMM_COLL_NODE with its collective, size
 * and process group, data dependencies between them), written as text.
 *
 * The trace is SPMD: every rank runs every node.  A compute node is a
 * timer on the rank; a communication node is one collective per group of
 * its rank-group set (all the groups at once, each over its own ranks).
 * A node starts on a rank when all its dependencies are done there; a
 * collective starts when every rank of its group is ready for it.
 *
 *   # comment (to the end of the line)
 *   ranks 16                        the trace's rank count: the fabric's hosts
 *   group mp 4 1                    NAME SIZE STRIDE: the ranks cut into
 *   group dp 4 4                    groups of SIZE ranks STRIDE apart
 *   compute fwd0 120us              NAME DURATION (ns, us or ms)
 *   comm ag0 allgather 6M mp after fwd0
 *                                   NAME KIND SIZE GROUP [after DEP,DEP..]
 *   compute fwd1 120us after ag0
 *
 * Groups: rank r belongs to group (r / (SIZE*STRIDE)) * STRIDE + r % STRIDE,
 * whose members are base + k * STRIDE (k < SIZE); SIZE*STRIDE must divide
 * the rank count.  mp 4 1 and dp 4 4 on 16 ranks: {0,1,2,3}.. and
 * {0,4,8,12}..: disjoint model- and data-parallel groups.  A dependency
 * names a node defined above it, so the graph has no cycle.  SIZE of a
 * collective is bytes per rank as for --size (K, M, G: powers of 2), any
 * number (whole elements of the run's dtype; 0 runs nothing); whether the
 * run's algorithm serves the collective is et_coll_check()'s to say.
 *
 * Parsing is from memory (this layer reads no files); errors name
 * FILE:LINE.  Control path.
 */
#ifndef ET_TRACE_H
#define ET_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "coll/et_coll.h"

#define ET_TRACE_NAME_MAX 48

struct et_trace_group {
	char name[ET_TRACE_NAME_MAX];
	uint32_t size, stride;
};

enum et_trace_node_type { ET_TRACE_COMPUTE, ET_TRACE_COMM };

struct et_trace_node {
	char name[ET_TRACE_NAME_MAX];
	enum et_trace_node_type type;
	uint64_t duration_ns;         /* compute */
	enum et_coll_kind kind;       /* comm */
	uint64_t size;                /* comm: bytes per rank */
	uint32_t group;               /* comm: index into groups */
	uint32_t *deps;               /* indices of earlier nodes */
	uint32_t n_deps;
	uint32_t *succ;               /* the nodes that depend on this one */
	uint32_t n_succ;
	uint32_t line;
};

struct et_trace {
	uint32_t ranks;
	struct et_trace_group *groups;
	uint32_t n_groups;
	struct et_trace_node *nodes;
	uint32_t n_nodes;
};

/* Parse text (NUL-terminated); file names it in errors.  0, or -1 with
 * "FILE:LINE: what" in err (t is then empty, et_trace_free() safe). */
int et_trace_parse(struct et_trace *t, const char *text, const char *file, char *err,
		   size_t errlen);
void et_trace_free(struct et_trace *t);

/* One rank's compute: every rank runs every compute node. */
static inline uint64_t
et_trace_compute_ns(const struct et_trace *t)
{
	uint64_t ns = 0;

	for (uint32_t k = 0; k < t->n_nodes; k++)
		if (t->nodes[k].type == ET_TRACE_COMPUTE)
			ns += t->nodes[k].duration_ns;
	return ns;
}

/* Groups of g: rank count / size.  The group holding rank r, r's position
 * in it, and the rank at position k of group i. */
static inline uint32_t
et_trace_group_count(const struct et_trace *t, const struct et_trace_group *g)
{
	return t->ranks / g->size;
}

static inline uint32_t
et_trace_group_of(const struct et_trace_group *g, uint32_t r)
{
	return r / (g->size * g->stride) * g->stride + r % g->stride;
}

static inline uint32_t
et_trace_group_pos(const struct et_trace_group *g, uint32_t r)
{
	return r % (g->size * g->stride) / g->stride;
}

static inline uint32_t
et_trace_group_member(const struct et_trace_group *g, uint32_t i, uint32_t k)
{
	return i / g->stride * (g->size * g->stride) + i % g->stride + k * g->stride;
}

#endif /* ET_TRACE_H */
