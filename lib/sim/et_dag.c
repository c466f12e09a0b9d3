/* SPDX-License-Identifier: BSD-3-Clause */
/* A trace's DAG on a fabric: per rank, dependency counts and compute
 * timers; per communication node and group, one collective whose ranks are
 * host runtimes made on the group's hosts when the last of them is ready,
 * and freed when the last is done.  Per host, one policy state (the
 * fabric host's own) and per peer the DCTCP state of its last QP there,
 * shared by every collective it runs.  The fabric's event loop polls each host
 * through this driver: its NIC once, then each collective rank it runs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/et_dag.h"
#include "sim/et_sim_priv.h"

/* One collective of a communication node on one group. */
struct dag_coll {
	struct dag *d;
	uint32_t node, group;
	uint32_t ready;             /* ranks of the group ready for it */
	uint32_t left;              /* ranks started and not yet done */
	uint64_t start;
	uint32_t *members;          /* position -> host */
	struct et_rt_host *rt;      /* per position, while it runs */
};

struct dag_timer {
	uint64_t at;
	uint32_t node;
};

/* A collective rank this host runs: the collective and its position. */
struct dag_part {
	struct dag_coll *c;
	uint32_t pos;
};

struct dag_rank {
	uint32_t *deps_left;        /* per node */
	uint32_t nodes_left;
	struct dag_timer *timers;
	uint32_t n_timers, cap_timers;
	struct dag_part *parts;
	uint32_t n_parts, cap_parts;
};

struct dag {
	struct et_fabric *f;
	const struct et_trace *t;
	struct et_coll_sched *sched;  /* per node (comm nodes) */
	struct dag_coll **coll;       /* per node: one per group (comm nodes) */
	struct dag_rank *rank;
	struct et_rt_peer_cc *cc;     /* per host, per peer host: DCTCP carried over */
	uint8_t *buf;                 /* memory-light: every rank's one region */
	uint64_t buf_len;
	uint32_t in_flight;           /* collectives running */
	uint64_t comm_since;
	struct et_dag_result *r;
	bool out_of_memory;
};

static void node_done(struct dag *d, uint32_t rank, uint32_t node, uint64_t now);

static bool
grow(void **arr, uint32_t *cap, uint32_t n, size_t elem)
{
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*arr, (size_t)(*cap ? *cap * 2 : 8) * elem);
	if (p == NULL)
		return false;
	*arr = p;
	*cap = *cap ? *cap * 2 : 8;
	return true;
}

static void
no_memory(struct dag *d)
{
	d->out_of_memory = true;
	d->f->failed = true;
	et_fabric_fail(d->f, "trace: out of memory");
}

/* ---- the far end of a subflow, on a host of the same collective ---- */

static uint32_t
coll_ip(void *ctx, uint32_t host)
{
	return et_fabric_peer_ip(((struct dag_coll *)ctx)->d->f, host);
}

static int
coll_open(void *ctx, struct et_rt_host *src, struct et_rt_sub *s, uint32_t qpn,
	  const struct et_qp_attr *a, struct et_rt_remote *out)
{
	struct dag_coll *c = ctx;
	const struct et_trace_group *g = &c->d->t->groups[c->group];
	const struct et_coll_sched *sc = &c->d->sched[c->node];
	uint32_t pos = et_trace_group_pos(g, s->dst);
	const struct et_coll_send *snd = &sc->rank[src->rank].sends[s->send];

	return et_far_open(c->d->f, src, c->members[src->rank], s, &c->rt[pos], snd->recv, qpn, a,
			   out);
}

/* At once: the last rank done frees every rank's CQs, which the far end
 * would use until its lane closed it. */
static void
coll_close(void *ctx, struct et_rt_host *src, struct et_rt_sub *s)
{
	struct dag_coll *c = ctx;
	uint32_t pos = et_trace_group_pos(&c->d->t->groups[c->group], s->dst);

	et_far_close(c->d->f, src, c->members[src->rank], s, &c->rt[pos], true);
}

static const struct et_rt_peer_ops coll_ops = {coll_ip, coll_open, coll_close};

/* ---- collectives ---- */

static void
coll_start(struct dag *d, struct dag_coll *c, uint64_t now)
{
	struct et_fabric *f = d->f;
	const struct et_trace_group *g = &d->t->groups[c->group];
	struct et_rt_host *rt = calloc(g->size, sizeof(*rt));

	if (rt == NULL) {
		no_memory(d);
		return;
	}
	c->rt = rt;
	c->start = now;
	c->left = g->size;
	for (uint32_t k = 0; k < g->size; k++) {
		uint32_t h = c->members[k];
		struct et_fabric_host *fh = &f->h[h];
		struct dag_rank *rk = &d->rank[h];

		if (et_rt_host_init_in(&rt[k], &f->rc, &d->sched[c->node], k, &fh->nic,
				       &fh->rt.host.gw_mac, d->buf, d->buf_len, &coll_ops, c,
				       c->members, &fh->rt.lb) ||
		    !grow((void **)&rk->parts, &rk->cap_parts, rk->n_parts, sizeof(*rk->parts))) {
			no_memory(d);
			return;
		}
		rt[k].peer_cc = &d->cc[(size_t)h * f->n_hosts];
		rk->parts[rk->n_parts++] = (struct dag_part){c, k};
		et_fabric_wake(f, h);
	}
	if (d->in_flight++ == 0)
		d->comm_since = now;
	if (d->r->node[c->node].start_ns == UINT64_MAX)
		d->r->node[c->node].start_ns = now;
	d->r->collectives++;
}

/* Every rank of c is done: its QPs are gone (each rank's sends completed,
 * which closed their far ends); its counters go to the hosts. */
static void
coll_end(struct dag *d, struct dag_coll *c, uint64_t now)
{
	const struct et_trace_group *g = &d->t->groups[c->group];

	for (uint32_t k = 0; k < g->size; k++) {
		struct et_rt_stats *st = &d->f->h[c->members[k]].rt.st;

		st->qps_created += c->rt[k].st.qps_created;
		et_ctr_add(&et_qp_ctrs, &st->qp, &c->rt[k].st.qp);
		et_rt_host_free(&c->rt[k]);
	}
	free(c->rt);
	c->rt = NULL;
	if (--d->in_flight == 0)
		d->r->comm_ns += now - d->comm_since;
}

/* ---- nodes ---- */

static void
node_ready(struct dag *d, uint32_t r, uint32_t k, uint64_t now)
{
	const struct et_trace_node *n = &d->t->nodes[k];
	struct dag_rank *rk = &d->rank[r];

	if (n->type == ET_TRACE_COMPUTE) {
		if (d->r->node[k].start_ns == UINT64_MAX)
			d->r->node[k].start_ns = now;
		if (n->duration_ns == 0) {
			node_done(d, r, k, now);
			return;
		}
		if (!grow((void **)&rk->timers, &rk->cap_timers, rk->n_timers, sizeof(*rk->timers))) {
			no_memory(d);
			return;
		}
		rk->timers[rk->n_timers++] = (struct dag_timer){now + n->duration_ns, k};
		et_fabric_wake(d->f, r);
		return;
	}
	{
		const struct et_trace_group *g = &d->t->groups[n->group];
		struct dag_coll *c = &d->coll[k][et_trace_group_of(g, r)];

		if (++c->ready == g->size)
			coll_start(d, c, now);
	}
}

static void
node_done(struct dag *d, uint32_t r, uint32_t k, uint64_t now)
{
	struct dag_rank *rk = &d->rank[r];

	if (now > d->r->node[k].end_ns)
		d->r->node[k].end_ns = now;
	d->r->node[k].done = true;
	for (uint32_t i = 0; i < d->t->nodes[k].n_succ; i++) {
		uint32_t s = d->t->nodes[k].succ[i];

		if (--rk->deps_left[s] == 0)
			node_ready(d, r, s, now);
	}
	if (--rk->nodes_left == 0) {
		d->f->hosts_done++;
		if (now > d->r->iteration_ns)
			d->r->iteration_ns = now;
	}
}

/* ---- the driver: one host's turn ---- */

static uint32_t
dag_poll(void *ctx, uint32_t host, uint64_t now)
{
	struct dag *d = ctx;
	struct et_fabric *f = d->f;
	struct dag_rank *rk = &d->rank[host];
	uint32_t work = et_nic_poll(&f->h[host].nic, now), i;

	for (i = 0; i < rk->n_parts;) {
		struct dag_part p = rk->parts[i];
		struct et_rt_host *rt = &p.c->rt[p.pos];

		work += et_rt_progress(rt, now);
		if (rt->fail.why != ET_RT_OK) {
			char why[200];

			f->failed = true;
			if (!f->error[0])
				et_fabric_fail(f, "%s: %s", d->t->nodes[p.c->node].name,
					       et_rt_strerror(rt, why, sizeof(why)));
			return work;
		}
		if (rt->done_ns == 0) {
			i++;
			continue;
		}
		rk->parts[i] = rk->parts[--rk->n_parts];
		work++;
		if (--p.c->left == 0)
			coll_end(d, p.c, now);
		node_done(d, host, p.c->node, now);
	}
	for (i = 0; i < rk->n_timers;) {
		struct dag_timer tm = rk->timers[i];

		if (tm.at > now) {
			i++;
			continue;
		}
		rk->timers[i] = rk->timers[--rk->n_timers];
		work++;
		node_done(d, host, tm.node, now);
	}
	return d->out_of_memory ? 0 : work;
}

static uint64_t
dag_next_event(void *ctx, uint32_t host, uint64_t now)
{
	struct dag *d = ctx;
	const struct dag_rank *rk = &d->rank[host];
	uint64_t t = et_nic_next_event(&d->f->h[host].nic, now);

	for (uint32_t i = 0; i < rk->n_parts; i++) {
		uint64_t e = et_rt_next_event(&rk->parts[i].c->rt[rk->parts[i].pos], now);

		if (e < t)
			t = e;
	}
	for (uint32_t i = 0; i < rk->n_timers; i++)
		if (rk->timers[i].at < t)
			t = rk->timers[i].at;
	return t;
}

static const struct et_fabric_driver dag_driver = {dag_poll, dag_next_event};

/* ---- set-up ---- */

static int
dag_build(struct dag *d, enum et_coll_algo algo, uint64_t chunk)
{
	const struct et_trace *t = d->t;
	struct et_fabric *f = d->f;
	uint32_t n = t->n_nodes;

	d->sched = calloc(n, sizeof(*d->sched));
	d->coll = calloc(n, sizeof(*d->coll));
	d->rank = calloc(t->ranks, sizeof(*d->rank));
	d->r->node = malloc(n * sizeof(*d->r->node));
	if (!d->sched || !d->coll || !d->rank || !d->r->node)
		return et_fabric_fail(f, "trace: out of memory");
	d->buf_len = 1;
	d->r->compute_ns = et_trace_compute_ns(t);
	for (uint32_t k = 0; k < n; k++) {
		const struct et_trace_node *x = &t->nodes[k];
		const struct et_trace_group *g;
		const char *why = NULL;
		struct et_coll_spec spec;
		uint32_t groups;

		d->r->node[k] = (struct et_dag_node_time){UINT64_MAX, 0, false};
		if (x->type == ET_TRACE_COMPUTE)
			continue;
		g = &t->groups[x->group];
		spec = et_coll_spec_of(x->kind, algo, g->size, x->size, f->p.dtype, f->p.op, chunk);
		if (et_coll_build(&d->sched[k], &spec, &why))
			return et_fabric_fail(f, "node %s (line %u): %s %s over %u ranks: %s", x->name,
					      x->line, et_coll_kind_name(x->kind),
					      et_coll_algo_name(algo), g->size, why);
		if (d->sched[k].size + 1 > d->buf_len)
			d->buf_len = d->sched[k].size + 1;
		if (d->sched[k].staging_bytes + 1 > d->buf_len)
			d->buf_len = d->sched[k].staging_bytes + 1;
		groups = et_trace_group_count(t, g);
		d->coll[k] = calloc(groups, sizeof(**d->coll));
		if (d->coll[k] == NULL)
			return et_fabric_fail(f, "trace: out of memory");
		for (uint32_t i = 0; i < groups; i++) {
			struct dag_coll *c = &d->coll[k][i];

			*c = (struct dag_coll){.d = d, .node = k, .group = x->group};
			c->members = malloc(g->size * sizeof(*c->members));
			if (c->members == NULL)
				return et_fabric_fail(f, "trace: out of memory");
			for (uint32_t m = 0; m < g->size; m++)
				c->members[m] = et_trace_group_member(g, i, m);
		}
	}
	d->cc = calloc((size_t)t->ranks * t->ranks, sizeof(*d->cc));
	if (d->cc == NULL)
		return et_fabric_fail(f, "trace: out of memory");
	d->buf = calloc(1, d->buf_len);
	if (d->buf == NULL)
		return et_fabric_fail(f, "trace: out of memory (%" PRIu64 " bytes)", d->buf_len);
	for (uint32_t r = 0; r < t->ranks; r++) {
		struct dag_rank *rk = &d->rank[r];

		rk->deps_left = malloc(n * sizeof(*rk->deps_left));
		if (rk->deps_left == NULL)
			return et_fabric_fail(f, "trace: out of memory");
		for (uint32_t k = 0; k < n; k++)
			rk->deps_left[k] = t->nodes[k].n_deps;
		rk->nodes_left = n;
	}
	return 0;
}

static void
dag_free(struct dag *d)
{
	for (uint32_t k = 0; d->coll && k < d->t->n_nodes; k++) {
		const struct et_trace_node *x = &d->t->nodes[k];

		if (d->coll[k] == NULL)
			continue;
		for (uint32_t i = 0; i < et_trace_group_count(d->t, &d->t->groups[x->group]); i++) {
			struct dag_coll *c = &d->coll[k][i];

			/* a failed run: ranks still open */
			for (uint32_t m = 0; c->rt && m < d->t->groups[x->group].size; m++)
				et_rt_host_free(&c->rt[m]);
			free(c->rt);
			free(c->members);
		}
		free(d->coll[k]);
	}
	for (uint32_t k = 0; d->sched && k < d->t->n_nodes; k++)
		et_coll_free(&d->sched[k]);
	for (uint32_t r = 0; d->rank && r < d->t->ranks; r++) {
		free(d->rank[r].deps_left);
		free(d->rank[r].timers);
		free(d->rank[r].parts);
	}
	free(d->sched);
	free(d->coll);
	free(d->rank);
	free(d->cc);
	free(d->buf);
}

int
et_dag_run(struct et_fabric *f, const struct et_trace *t, enum et_coll_algo algo, uint64_t chunk,
	   struct et_dag_result *r)
{
	struct dag d = {.f = f, .t = t, .r = r};
	int rc;

	memset(r, 0, sizeof(*r));
	if (t->ranks != f->n_hosts) {
		et_fabric_fail(f, "the trace is for %u ranks, the fabric has %u hosts", t->ranks,
			       f->n_hosts);
		return -EINVAL;
	}
	if (!f->p.hosts_only || f->p.verify) {
		et_fabric_fail(f, "a trace needs a fabric of hosts only, without --verify");
		return -EINVAL;
	}
	if (dag_build(&d, algo, chunk)) {
		dag_free(&d);
		return -EINVAL;
	}
	/* the clock starts at 1: nodes without dependencies start then */
	for (uint32_t h = 0; h < t->ranks && !d.out_of_memory; h++)
		for (uint32_t k = 0; k < t->n_nodes; k++)
			if (t->nodes[k].n_deps == 0)
				node_ready(&d, h, k, 1);
	f->drv = &dag_driver;
	f->drv_ctx = &d;
	rc = d.out_of_memory ? -EIO : et_fabric_run(f);
	f->drv = NULL;
	f->drv_ctx = NULL;
	/* while the collectives still open after a failure have their ranks */
	et_fabric_collect(f);
	/* times from the iteration's start (the clock's 1) */
	r->iteration_ns = r->iteration_ns ? r->iteration_ns - 1 : 0;
	for (uint32_t k = 0; k < t->n_nodes; k++) {
		struct et_dag_node_time *nt = &r->node[k];

		nt->start_ns = nt->start_ns == UINT64_MAX ? 0 : nt->start_ns - 1;
		nt->end_ns = nt->end_ns ? nt->end_ns - 1 : 0;
	}
	dag_free(&d);
	return rc ? -EIO : 0;
}

void
et_dag_result_free(struct et_dag_result *r)
{
	free(r->node);
	r->node = NULL;
}
