/* SPDX-License-Identifier: BSD-3-Clause
 * One collective across processes.  A subflow's far end is opened on its
 * peer by a message (MSG_OPEN), answered with the QPN, address and rkey
 * the sender's WRITE needs (MSG_OPENED); the sender says when it is done
 * with it (MSG_CLOSE), after its last ACK, so a retransmission never meets
 * a QP that is gone.  A collective ends with a barrier that carries each
 * rank's figures; a failed rank says so in it, so no peer waits for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "coll.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "host/et_worker.h"
#include "sim/et_net.h"

/* ---- the peer ops: the far end through the mesh ---- */

/* ctx: a struct coll_ref, the rank and which of its collectives */

static uint32_t
peer_ip(void *ctx, uint32_t rank)
{
	const struct coll_ref *ref = ctx;

	return et_topo_host_ip(&ref->c->p.t, rank);
}

static int
peer_open(void *ctx, struct et_rt_host *h, struct et_rt_sub *s, uint32_t qpn,
	  const struct et_qp_attr *a, struct et_rt_remote *out)
{
	const struct coll_ref *ref = ctx;
	const struct et_coll_send *snd = &h->sched->rank[h->rank].sends[s->send];
	struct msg m = {.type = MSG_OPEN, .a = et_rt_sub_id(h, s), .b = qpn, .c = a->sq_psn,
			.d = a->rq_psn, .e = snd->recv | (uint32_t)a->multipath << 31,
			.f = ref->id, .x = s->off, .y = s->len};

	(void)out;
	return mesh_send(&ref->c->mesh, s->dst, &m) ? -EIO : -EINPROGRESS;
}

static void
peer_close(void *ctx, struct et_rt_host *h, struct et_rt_sub *s)
{
	const struct coll_ref *ref = ctx;

	(void)h;
	/* a lost peer shows in mesh_recv; nothing to add here */
	mesh_send(&ref->c->mesh, s->dst,
		  &(struct msg){.type = MSG_CLOSE, .a = s->far_qpn, .f = ref->id});
}

const struct et_rt_peer_ops coll_peer_ops = {peer_ip, peer_open, peer_close};

/* The running collective id: the sizes' one, or a trace's node. */
static struct et_rt_host *
live_rt(struct coll *c, uint32_t id)
{
	if (c->trace)
		return ctrace_rt(c, id);
	return c->rt_live && id == 0 ? &c->rt : NULL;
}

/* ---- messages ---- */

static int
on_open(struct coll *c, struct et_rt_host *h, uint32_t from, const struct msg *m)
{
	struct et_qp_attr a = {.sq_psn = m->c, .rq_psn = m->d, .multipath = m->e >> 31};
	struct et_rt_remote far = {0};
	struct et_qp *rq;
	int rc = et_rt_accept(h, et_topo_host_ip(&c->p.t, from), m->e & 0x7fffffff, m->x, m->y,
			      m->b, &a, 0, &rq, &far);

	if (rc == 0 && c->trace)
		ctrace_far_end(c, m->f, 1);
	if (rc)
		et_cli_error("rank %u: cannot open the far end of rank %u's QP %u (receive %u, "
			     "%" PRIu64 " bytes at %" PRIu64 "): %s", c->o.rank, from, m->b,
			     m->e & 0x7fffffff, m->y, m->x, strerror(-rc));
	return mesh_send(&c->mesh, from, &(struct msg){.type = MSG_OPENED, .a = m->a,
						       .b = (uint32_t)-rc, .c = far.qpn,
						       .d = far.rkey, .f = m->f, .x = far.addr});
}

static void
on_close(struct coll *c, uint32_t from, const struct msg *m)
{
	struct et_qp *qp = et_nic_qp_find(&c->nic, m->a);
	struct et_rt_host *h = live_rt(c, m->f);

	if (qp == NULL) {
		et_warn("rank %u: rank %u closes QP %u, which is not there", c->o.rank, from, m->a);
		return;
	}
	/* the sizes' collective gets its far ends' closes before its barrier */
	et_rt_stats_add_qp(h ? &h->st : &c->rt.st, qp);
	et_nic_qp_destroy(&c->nic, qp);
	if (c->trace)
		ctrace_far_end(c, m->f, -1);
}

static void
on_opened(struct coll *c, struct et_rt_host *h, uint32_t from, const struct msg *m)
{
	struct et_rt_remote far = {.qpn = m->c, .addr = m->x, .rkey = m->d};

	if (m->b)
		et_rt_connect_failed(h, m->a);
	else if (et_rt_connected(h, m->a, &far) && h->fail.why == ET_RT_OK)
		et_cli_error("rank %u: rank %u answers for subflow %u, which waits for no answer",
			     c->o.rank, from, m->a);
}

static int
keep_early(struct coll *c, uint32_t from, const struct msg *m)
{
	if (c->n_early == c->early_cap) {
		uint32_t cap = c->early_cap ? 2 * c->early_cap : 64;
		struct early *e = realloc(c->early, cap * sizeof(*e));

		if (e == NULL)
			return et_cli_error("out of memory");
		c->early = e;
		c->early_cap = cap;
	}
	c->early[c->n_early++] = (struct early){from, *m};
	return 0;
}

int
coll_open_early(struct coll *c, uint32_t id, struct et_rt_host *h)
{
	uint32_t kept = 0;
	int rc = 0;

	for (uint32_t i = 0; i < c->n_early; i++) {
		if (c->early[i].m.f != id || rc)
			c->early[kept++] = c->early[i];
		else
			rc = on_open(c, h, c->early[i].from, &c->early[i].m);
	}
	c->n_early = kept;
	return rc;
}

struct rank_fig
coll_fig_of(const struct msg *m)
{
	return (struct rank_fig){.us = (double)m->x / 1e3, .comm_us = (double)m->w / 1e3,
				 .retransmits = m->y, .rerouted = m->z, .timeouts = m->c,
				 .max_qps = m->d, .wrong = m->e, .paths_marked_bad = m->f};
}

/* One message; the collective runs (rt_live) or this rank is in a barrier
 * (a peer's barrier message may come while this rank still runs). */
static int
dispatch(struct coll *c, uint32_t from, const struct msg *m)
{
	struct et_rt_host *h;

	switch (m->type) {
	case MSG_OPEN:
		/* for a collective this rank has not started yet (a peer past
		 * the barrier this rank is still in; a trace's node this rank
		 * is not ready for): kept for it */
		h = live_rt(c, m->f);
		return h ? on_open(c, h, from, m) : keep_early(c, from, m);
	case MSG_OPENED:
		if ((h = live_rt(c, m->f)) != NULL)
			on_opened(c, h, from, m);
		return 0;
	case MSG_CLOSE:
		on_close(c, from, m);
		return 0;
	case MSG_BARRIER:
		if (m->a != c->seq)
			return et_cli_error("rank %u: rank %u is at barrier %u, this rank at %u",
					    c->o.rank, from, m->a, c->seq);
		c->barrier_in++;
		if (m->b & BARRIER_LAST)
			mesh_may_leave(&c->mesh, from);
		if (m->b & BARRIER_FAILED) {
			c->peer_failed = true;
			et_cli_error("rank %u: rank %u failed (its message says why)", c->o.rank,
				     from);
		}
		c->fig[from] = coll_fig_of(m);
		return 0;
	default:
		return et_cli_error("rank %u: rank %u sent a message of unknown type %u",
				    c->o.rank, from, m->type);
	}
}

int
coll_drain_mesh(struct coll *c)
{
	uint32_t from;
	struct msg m;
	int r;

	while ((r = mesh_recv(&c->mesh, &from, &m)) > 0)
		if (dispatch(c, from, &m))
			return -1;
	if (r < 0)
		return et_cli_error("%s", c->mesh.err);
	return 0;
}

void
coll_watch_link(struct coll *c, uint64_t now)
{
	int up;

	if (now < c->link_next)
		return;
	c->link_next = now + 10000000; /* 10 ms: on af_packet, a system call */
	up = et_port_link_up(&c->port);
	if (up >= 0 && et_nic_set_link(&c->nic, up))
		et_warn("rank %u: --port %s: link %s", c->o.rank, c->o.port,
			up ? "up again" : "down: what this rank sends is dropped until it is back");
}

/* Every rank at barrier seq, with this rank's figures mine (everyone's in
 * c->fig then).  The NIC is polled meanwhile: a peer's retransmission still
 * gets its ACK.  0, or -1 when a peer failed or is gone. */
int
coll_barrier(struct coll *c, const struct msg *mine)
{
	uint64_t deadline = et_tsc_ns() + (uint64_t)c->o.timeout_s * 1000000000;
	struct msg m = *mine;

	m.type = MSG_BARRIER;
	m.a = c->seq;
	for (uint32_t r = 0; r < c->mesh.world; r++)
		if (r != c->o.rank && mesh_send(&c->mesh, r, &m))
			return et_cli_error("%s", c->mesh.err);
	while (c->barrier_in < c->mesh.world - 1) {
		uint64_t now = et_tsc_ns();

		if (coll_drain_mesh(c))
			return -1;
		coll_watch_link(c, now);
		if (now > deadline || coll_stop)
			return et_cli_error("rank %u: %u of %u ranks at barrier %u %s", c->o.rank,
					    c->barrier_in + 1, c->mesh.world, c->seq,
					    coll_stop ? "before the stop" : "in time");
		if (et_nic_poll(&c->nic, now) == 0 && c->o.yield)
			sched_yield();
	}
	c->barrier_in = 0;
	c->seq++;
	return c->peer_failed || (mine->b & BARRIER_FAILED) ? -1 : 0;
}

int
coll_start(struct coll *c)
{
	char err[256];

	if (et_port_await_link_up(&c->port, 5000, &coll_stop))
		return et_cli_error("--port %s: the link is not up after 5 s", c->o.port);
	if (mesh_open(&c->mesh, c->o.rank, c->o.world, c->o.root,
		      (uint64_t)c->o.timeout_s * 1000, &coll_stop)) {
		snprintf(err, sizeof(err), "%s", c->mesh.err);
		return et_cli_error("rank %u: %s", c->o.rank, err);
	}
	return coll_barrier(c, &(struct msg){0});
}

/* ---- one collective ---- */

/* The elements of this rank's result that are wrong (all of them when
 * there is no memory to tell). */
static uint32_t
wrong_data(const struct coll *c, const struct et_coll_sched *s)
{
	uint64_t wrong;

	if (et_coll_wrong(s, c->o.rank, c->rc.seed, c->rt.data, &wrong))
		return (uint32_t)s->count;
	return (uint32_t)wrong; /* at most 2^32 - 1 elements */
}

const char *
coll_what_is_left(const struct et_rt_host *h, char *buf, size_t n)
{
	snprintf(buf, n, "step %u, %u subflows unfinished, %u waiting for their far end",
		 h->step, h->sends_left, h->connecting);
	return buf;
}

/* The collective itself, until this rank is done or fails; its figures. */
static int
run_once(struct coll *c, const struct et_coll_sched *s, struct msg *fig)
{
	struct et_rt_host *h = &c->rt;
	struct rte_ether_addr gw;
	uint64_t t0, deadline;
	char why[160];
	int rc = 0;

	memset(&gw, 0xff, sizeof(gw)); /* the ToR routes by IP; it takes any MAC */
	c->ref0 = (struct coll_ref){c, 0};
	if (et_rt_host_init_in(h, &c->rc, s, c->o.rank, &c->nic, &gw, NULL, 0, &coll_peer_ops,
			       &c->ref0, NULL, &c->lb)) {
		et_rt_host_free(h);
		return et_cli_error("rank %u: out of memory for %" PRIu64 " bytes", c->o.rank,
				    s->size);
	}
	h->peer_cc = c->peer_cc;
	if (c->plan) {
		h->on_plan = plan_write;
		h->plan_ctx = c->plan;
	}
	c->rt_live = true;
	rc = coll_open_early(c, 0, h);
	t0 = et_tsc_ns();
	deadline = t0 + (uint64_t)c->o.timeout_s * 1000000000;
	while (rc == 0 && h->done_ns == 0) {
		uint64_t now = et_tsc_ns();
		uint32_t work = et_rt_poll(h, now);

		if (c->nic.n_qps > c->max_qps)
			c->max_qps = c->nic.n_qps;
		coll_watch_link(c, now);
		if (coll_drain_mesh(c))
			rc = -1;
		else if (h->fail.why != ET_RT_OK)
			rc = et_cli_error("rank %u: %s", c->o.rank, et_rt_strerror(h, why, sizeof(why)));
		else if (c->peer_failed)
			rc = -1;
		else if (now > deadline || coll_stop)
			rc = et_cli_error("rank %u: not done %s: %s", c->o.rank,
					  coll_stop ? "before the stop" : "in time",
					  coll_what_is_left(h, why, sizeof(why)));
		else if (work == 0 && c->o.yield)
			sched_yield();
	}
	if (c->plan) { /* the first collective's plan is the one compared */
		fclose(c->plan);
		c->plan = NULL;
	}
	*fig = (struct msg){.b = rc != 0, .x = h->done_ns ? h->done_ns - 1 - t0 : 0,
			    .d = c->max_qps};
	if (rc == 0 && c->rc.verify)
		fig->e = wrong_data(c, s);
	return rc;
}

void
coll_fig_add_counts(struct rank_fig *to, const struct rank_fig *f)
{
	to->retransmits += f->retransmits;
	to->timeouts += f->timeouts;
	to->rerouted += f->rerouted;
	to->paths_marked_bad += f->paths_marked_bad;
	to->max_qps = RTE_MAX(to->max_qps, f->max_qps);
	to->wrong += f->wrong;
}

struct rank_fig
coll_fig_all(const struct coll *c)
{
	struct rank_fig a = {0};

	for (uint32_t r = 0; r < c->o.world; r++) {
		coll_fig_add_counts(&a, &c->fig[r]);
		a.us = RTE_MAX(a.us, c->fig[r].us);
		a.comm_us = RTE_MAX(a.comm_us, c->fig[r].comm_us);
	}
	return a;
}

int
coll_run_point(struct coll *c, const struct point *at, bool last, struct row *out)
{
	uint64_t size = at->size;
	struct et_coll_spec spec = et_coll_spec_of(c->p.kind, c->p.algo, c->o.world, size,
						   at->dtype, at->op, c->p.chunk);
	struct et_coll_sched s;
	const char *why = NULL;
	int rc = 0;

	/* coll_setup checked it: only memory can fail here */
	if (et_coll_build(&s, &spec, &why))
		return et_cli_error("%s %s of %" PRIu64 " bytes over %u ranks: %s",
				    et_coll_kind_name(c->p.kind), et_coll_algo_name(c->p.algo), size,
				    c->o.world, why);
	out->at = *at;
	out->size = s.size;
	out->count = s.count;
	out->all = (struct rank_fig){0};
	memset(out->rank, 0, c->o.world * sizeof(*out->rank));
	for (uint32_t it = 0; it < c->o.warmup + c->o.iters && rc == 0; it++) {
		uint64_t bad0 = c->lb.paths.marked_bad;
		struct rank_fig sum;
		struct msg fig;

		c->max_qps = 0;
		rc = run_once(c, &s, &fig);
		/* from here a peer's OPEN is for its next collective: kept for it */
		c->rt_live = false;
		/* this rank's own counters, then everyone's at the barrier */
		struct et_qp_stats *q = &c->rt.st.qp;

		fig.y = q->retransmits;
		fig.z = q->path_changes;
		if (last && it + 1 == c->o.warmup + c->o.iters)
			fig.b |= BARRIER_LAST;
		fig.c = (uint32_t)q->timeouts;
		fig.f = (uint32_t)(c->lb.paths.marked_bad - bad0);
		c->fig[c->o.rank] = coll_fig_of(&fig);
		/* a failure is told to the peers at the barrier, unless a peer
		 * is gone: then there is no barrier to hold */
		if (!c->mesh.lost && coll_barrier(c, &fig))
			rc = -1;
		sum = coll_fig_all(c);
		/* the far ends' counters came with the peers' closes, before their barrier */
		et_rt_host_free(&c->rt);
		if (!c->first_done) {
			c->first = sum;
			c->first_size = size;
			c->first_done = true;
			c->first_end_mono_ms = et_mono_ms();
		}
		if (it < c->o.warmup) {
			/* untimed, but its data is checked all the same */
			for (uint32_t r = 0; r < c->o.world; r++)
				out->rank[r].wrong += c->fig[r].wrong;
			out->all.wrong += sum.wrong;
			continue;
		}
		for (uint32_t r = 0; r < c->o.world; r++) {
			coll_fig_add_counts(&out->rank[r], &c->fig[r]);
			out->rank[r].us += c->fig[r].us / c->o.iters;
		}
		coll_fig_add_counts(&out->all, &sum);
		out->all.us += sum.us / c->o.iters;
	}
	et_coll_free(&s);
	return rc;
}
