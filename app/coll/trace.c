/* SPDX-License-Identifier: BSD-3-Clause
 * A trace's iteration across processes (ethereal-coll --trace): this rank
 * walks the DAG of coll/et_trace as sim/et_dag walks it for every host of
 * the fabric.  A compute node is a timer on the TSC.  A communication node
 * is one collective over this rank's group, started as soon as this rank
 * is ready for it; a peer's OPEN for a node this rank is not ready for yet
 * is kept until it is, so in effect a collective starts when its ranks
 * are ready, as in the fabric.  It is done here when this rank's part is
 * (sends acknowledged, receives placed); its runtime goes once every far
 * end it opened for its peers has been closed by them (after their last
 * ACK), as the sizes' collective waits for its barrier.  Collectives run
 * at once where the DAG allows, on the one NIC, in one region
 * (memory-light: no --verify, as ethereal-fabric --trace).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "et_cli.h"
#include "base/et_counters.h"
#include "host/et_worker.h"

/* This rank's part of one communication node. */
struct tpart {
	struct coll_ref ref;   /* id: the node */
	struct et_rt_host rt;
	uint32_t *members;     /* position in the group -> rank */
	uint32_t far_open;     /* far ends opened here for peers, not yet closed */
	bool live, done;
};

struct ctrace {
	const struct et_trace *t;
	struct et_coll_sched *sched;  /* per node (communication) */
	struct tpart *part;           /* per node (communication) */
	uint32_t *deps_left;          /* per node */
	uint64_t *timer;              /* per node (compute): when it ends; 0: not running */
	uint32_t nodes_left, live;    /* nodes not done; runtimes not gone */
	uint8_t *buf;
	uint64_t buf_len;
	uint64_t t0, end, comm_since, comm_ns;
	uint32_t max_qps;
	struct et_rt_stats st;        /* of the runtimes gone */
	bool failed;                  /* a node could not start (said why) */
};

struct et_rt_host *
ctrace_rt(struct coll *c, uint32_t id)
{
	struct ctrace *tr = c->tr;

	if (tr == NULL || id >= tr->t->n_nodes || !tr->part[id].live)
		return NULL;
	return &tr->part[id].rt;
}

void
ctrace_far_end(struct coll *c, uint32_t id, int delta)
{
	if (ctrace_rt(c, id))
		c->tr->part[id].far_open += (uint32_t)delta;
}

static void node_done(struct coll *c, uint32_t k, uint64_t now);

static int
part_start(struct coll *c, uint32_t k, uint64_t now)
{
	struct ctrace *tr = c->tr;
	const struct et_trace_node *x = &tr->t->nodes[k];
	const struct et_trace_group *g = &tr->t->groups[x->group];
	uint32_t gi = et_trace_group_of(g, c->o.rank);
	struct tpart *p = &tr->part[k];
	struct rte_ether_addr gw;

	memset(&gw, 0xff, sizeof(gw)); /* the ToR routes by IP; it takes any MAC */
	p->ref = (struct coll_ref){c, k};
	p->members = malloc(g->size * sizeof(*p->members));
	if (p->members == NULL)
		return et_cli_error("rank %u: out of memory", c->o.rank);
	for (uint32_t m = 0; m < g->size; m++)
		p->members[m] = et_trace_group_member(g, gi, m);
	if (et_rt_host_init_in(&p->rt, &c->rc, &tr->sched[k], et_trace_group_pos(g, c->o.rank),
			       &c->nic, &gw, tr->buf, tr->buf_len, &coll_peer_ops, &p->ref,
			       p->members, &c->lb)) {
		et_rt_host_free(&p->rt);
		return et_cli_error("rank %u: node %s: out of memory", c->o.rank, x->name);
	}
	p->rt.peer_cc = c->peer_cc;
	p->live = true;
	if (tr->live++ == 0)
		tr->comm_since = now;
	return coll_open_early(c, k, &p->rt);
}

/* Its part done here and every far end it opened closed: the runtime goes. */
static void
part_end(struct coll *c, struct tpart *p, uint64_t now)
{
	struct ctrace *tr = c->tr;

	tr->st.qps_created += p->rt.st.qps_created;
	et_ctr_add(&et_qp_ctrs, &tr->st.qp, &p->rt.st.qp);
	et_rt_host_free(&p->rt);
	p->live = false;
	if (--tr->live == 0)
		tr->comm_ns += now - tr->comm_since;
}

static int
node_ready(struct coll *c, uint32_t k, uint64_t now)
{
	const struct et_trace_node *x = &c->tr->t->nodes[k];

	if (x->type == ET_TRACE_COMM)
		return part_start(c, k, now);
	if (x->duration_ns == 0)
		node_done(c, k, now);
	else
		c->tr->timer[k] = now + x->duration_ns;
	return 0;
}

static void
node_done(struct coll *c, uint32_t k, uint64_t now)
{
	struct ctrace *tr = c->tr;

	for (uint32_t i = 0; i < tr->t->nodes[k].n_succ; i++) {
		uint32_t s = tr->t->nodes[k].succ[i];

		/* a start that fails says so; the run loop sees it */
		if (--tr->deps_left[s] == 0 && node_ready(c, s, now))
			tr->failed = true;
	}
	if (--tr->nodes_left == 0)
		tr->end = now;
}

static int
trace_build(struct coll *c, struct ctrace *tr)
{
	const struct et_trace *t = tr->t;
	uint32_t n = t->n_nodes;

	tr->sched = calloc(n, sizeof(*tr->sched));
	tr->part = calloc(n, sizeof(*tr->part));
	tr->deps_left = calloc(n, sizeof(*tr->deps_left));
	tr->timer = calloc(n, sizeof(*tr->timer));
	if (!tr->sched || !tr->part || !tr->deps_left || !tr->timer)
		return et_cli_error("rank %u: out of memory", c->o.rank);
	tr->buf_len = 1;
	for (uint32_t k = 0; k < n; k++) {
		const struct et_trace_node *x = &t->nodes[k];
		struct et_coll_spec spec;
		const char *why = NULL;

		tr->deps_left[k] = x->n_deps;
		if (x->type != ET_TRACE_COMM)
			continue;
		spec = et_coll_spec_of(x->kind, c->p.algo, t->groups[x->group].size, x->size,
				       c->p.dtype, c->p.op, c->p.chunk);
		/* load_trace checked that each can run: only memory can fail here */
		if (et_coll_build(&tr->sched[k], &spec, &why))
			return et_cli_error("node %s (line %u): %s", x->name, x->line, why);
		tr->buf_len = RTE_MAX(tr->buf_len, tr->sched[k].size + 1);
		tr->buf_len = RTE_MAX(tr->buf_len, tr->sched[k].staging_bytes + 1);
	}
	tr->buf = calloc(1, tr->buf_len);
	if (tr->buf == NULL)
		return et_cli_error("rank %u: out of memory for %" PRIu64 " bytes", c->o.rank,
				    tr->buf_len);
	tr->nodes_left = n;
	return 0;
}

static void
trace_free(struct ctrace *tr)
{
	for (uint32_t k = 0; k < tr->t->n_nodes; k++) {
		if (tr->part && tr->part[k].live) /* a failed run */
			et_rt_host_free(&tr->part[k].rt);
		if (tr->part)
			free(tr->part[k].members);
		if (tr->sched)
			et_coll_free(&tr->sched[k]);
	}
	free(tr->sched);
	free(tr->part);
	free(tr->deps_left);
	free(tr->timer);
	free(tr->buf);
}

/* One turn: the NIC, the messages, each running collective, the timers.
 * The work done; -1 when the rank failed (said why). */
static int
trace_poll(struct coll *c, uint64_t now)
{
	struct ctrace *tr = c->tr;
	const struct et_trace *t = tr->t;
	uint32_t work = et_nic_poll(&c->nic, now);
	char why[200];

	coll_watch_link(c, now);
	if (coll_drain_mesh(c) || c->peer_failed)
		return -1;
	if (c->nic.n_qps > tr->max_qps)
		tr->max_qps = c->nic.n_qps;
	for (uint32_t k = 0; k < t->n_nodes; k++) {
		struct tpart *p = &tr->part[k];

		if (!p->live)
			continue;
		if (!p->done) {
			work += et_rt_progress(&p->rt, now);
			if (p->rt.fail.why != ET_RT_OK)
				return et_cli_error("rank %u: node %s: %s", c->o.rank,
						    t->nodes[k].name,
						    et_rt_strerror(&p->rt, why, sizeof(why)));
			if (p->rt.done_ns) {
				p->done = true;
				node_done(c, k, now);
				work++;
			}
		}
		if (p->done && p->far_open == 0) {
			part_end(c, p, now);
			work++;
		}
	}
	for (uint32_t k = 0; k < t->n_nodes; k++)
		if (tr->timer[k] && tr->timer[k] <= now) {
			tr->timer[k] = 0;
			node_done(c, k, now);
			work++;
		}
	return tr->failed || c->peer_failed ? -1 : (int)work;
}

static const char *
trace_left(const struct coll *c, char *buf, size_t n)
{
	const struct ctrace *tr = c->tr;
	size_t at = 0;

	at += (size_t)snprintf(buf, n, "%u nodes not done", tr->nodes_left);
	for (uint32_t k = 0; k < tr->t->n_nodes && at < n; k++)
		if (tr->part[k].live && !tr->part[k].done) {
			char left[160];

			at += (size_t)snprintf(buf + at, n - at, "; %s: %s", tr->t->nodes[k].name,
					       coll_what_is_left(&tr->part[k].rt, left,
								 sizeof(left)));
		}
	return buf;
}

int
coll_run_trace(struct coll *c)
{
	struct ctrace tr = {.t = c->trace};
	uint64_t now, deadline;
	struct msg fig = {0};
	char why[512];
	int rc;

	c->tr = &tr;
	rc = trace_build(c, &tr);
	now = tr.t0 = et_tsc_ns();
	deadline = now + (uint64_t)c->o.timeout_s * 1000000000;
	for (uint32_t k = 0; rc == 0 && k < tr.t->n_nodes; k++)
		if (tr.t->nodes[k].n_deps == 0)
			rc = node_ready(c, k, now);
	while (rc == 0 && (tr.nodes_left || tr.live)) {
		int work;

		now = et_tsc_ns();
		work = trace_poll(c, now);
		if (work < 0)
			rc = -1;
		else if (now > deadline || coll_stop)
			rc = et_cli_error("rank %u: not done %s: %s", c->o.rank,
					  coll_stop ? "before the stop" : "in time",
					  trace_left(c, why, sizeof(why)));
		else if (work == 0 && c->o.yield)
			sched_yield();
	}
	/* the figures of every runtime, those of a failed run too */
	for (uint32_t k = 0; tr.part && k < tr.t->n_nodes; k++)
		if (tr.part[k].live)
			part_end(c, &tr.part[k], now);
	fig = (struct msg){.b = rc != 0, .x = rc ? 0 : tr.end - tr.t0, .w = tr.comm_ns,
			   .y = tr.st.qp.retransmits, .z = tr.st.qp.path_changes,
			   .c = (uint32_t)tr.st.qp.timeouts, .d = tr.max_qps,
			   .f = (uint32_t)c->lb.paths.marked_bad};
	fig.b |= BARRIER_LAST;
	trace_free(&tr);
	c->tr = NULL;
	c->fig[c->o.rank] = coll_fig_of(&fig);
	if (!c->mesh.lost && coll_barrier(c, &fig))
		rc = -1;
	return rc;
}
