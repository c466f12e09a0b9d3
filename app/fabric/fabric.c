/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "link/et_capture.h"
#include "lb/et_lb_paths.h"
#include "topo/et_path.h"
#include "base/et_rand.h"
#include "host/et_worker.h"
#include "fabric.h"

#define NO_SUB UINT32_MAX
#define HOST_MAX_QPS 4096
#define RING_SIZE 4096

void
fab_params_default(struct fab_params *p)
{
	memset(p, 0, sizeof(*p));
	et_topo_leaf_spine(&p->t, 2, 2, 2, 1);
	et_sw_params_default(&p->net.sw);
	p->net.link = (struct et_link_model){.rate_bps = 400000000000ull, .latency_ns = 500};
	p->net.ring_size = RING_SIZE;
	p->host_link = p->net.link;
	et_qp_attr_default(&p->qp);
	et_lb_conf_default(&p->lb);
	p->kind = ET_COLL_ALLREDUCE;
	p->algo = ET_ALGO_A2A;
	p->size = 1 << 20;
	p->seed = 1;
	p->time_limit_ns = 10ull * 1000000000;
}

uint32_t
fab_pool_mbufs(const struct fab_params *p)
{
	/* frames in flight: a link's worth per link, the queues' ECN depth,
	 * the hosts' windows; a QP that finds the pool empty waits (alloc_fail) */
	return p->mbufs ? p->mbufs : 16384 + et_topo_hosts(&p->t) * 1024;
}

uint64_t
fab_pool_bytes(const struct fab_params *p)
{
	return (uint64_t)fab_pool_mbufs(p) *
	       (RTE_PKTMBUF_HEADROOM + p->qp.mtu + 256 + sizeof(struct rte_mbuf) + 64);
}

/* Links a packet crosses on the fabric's longest path. */
static uint32_t
longest_path_hops(const struct et_topo *t)
{
	if (t->tors == 1)
		return 2;
	return t->kind == ET_TOPO_FAT_TREE && t->pods > 1 ? 6 : 4;
}

uint32_t
fab_bdp_bytes(const struct fab_params *p)
{
	uint32_t hops = longest_path_hops(&p->t);
	const struct et_link_model *lm = &p->net.link;
	/* data out store-and-forward, the ACK back: the base RTT */
	uint64_t rtt = 2 * hops * lm->latency_ns + hops * et_link_tx_ns(lm, p->qp.mtu + 78) +
		       hops * et_link_tx_ns(lm, 64);
	uint64_t bdp = (uint64_t)((double)p->host_link.rate_bps * rtt / 8e9);

	return (uint32_t)(bdp > p->qp.mtu ? bdp : p->qp.mtu);
}

static int
fail(struct fabric *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->error, sizeof(f->error), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- subflows ---- */

static uint32_t
sub_alloc(struct fabric *f)
{
	uint32_t i;

	if (f->free_sub == NO_SUB) {
		uint32_t n = f->n_subs ? f->n_subs * 2 : 1024;
		struct fab_sub *s = realloc(f->subs, n * sizeof(*s));

		if (s == NULL)
			return NO_SUB;
		for (i = f->n_subs; i < n; i++)
			s[i].next_free = i + 1 < n ? i + 1 : NO_SUB;
		f->free_sub = f->n_subs;
		f->subs = s;
		f->n_subs = n;
	}
	i = f->free_sub;
	f->free_sub = f->subs[i].next_free;
	return i;
}

static void
qp_stats_add(struct fabric *f, const struct et_qp *qp)
{
	f->st.retransmits += qp->st.retransmits;
	f->st.timeouts += qp->st.timeouts;
	f->st.naks += qp->st.naks_rx;
	f->st.cnps += qp->st.cnps_rx;
	f->st.alloc_fail += qp->st.alloc_fail;
}

static void
sub_release(struct fabric *f, uint32_t i)
{
	struct fab_sub *s = &f->subs[i];

	qp_stats_add(f, s->sq);
	qp_stats_add(f, s->rq);
	et_nic_qp_destroy(&f->h[s->src].nic, s->sq);
	et_nic_qp_destroy(&f->h[s->dst].nic, s->rq);
	f->h[s->src].qps--;
	et_lb_detach(&f->h[s->src].lb, s->lb_state);
	s->lb_state = NULL;
	s->next_free = f->free_sub;
	f->free_sub = i;
}

static uint64_t
host_rand(struct fab_host *h)
{
	return et_rand_next(&h->lb.rng);
}

/* Connect a QP pair for the subflow and post its one WRITE with immediate
 * (the immediate names the receive it fills). */
static int
sub_post(struct fabric *f, uint32_t i)
{
	struct fab_sub *s = &f->subs[i];
	struct fab_host *hs = &f->h[s->src], *hd = &f->h[s->dst];
	const struct et_coll_send *snd = &f->sched.rank[s->src].sends[s->send];
	const struct et_coll_recv *rcv = &f->sched.rank[s->dst].recvs[snd->recv];
	struct et_qp_attr a = f->p.qp, b = f->p.qp;
	uint8_t *dst = hd->staging + rcv->staging_off + s->off;
	struct et_recv_wr rw = {.wr_id = i, .addr = dst, .length = (uint32_t)s->len,
				.lkey = hd->staging_key};
	struct et_send_wr wr = {.wr_id = i, .opcode = ET_WR_RDMA_WRITE_IMM,
				.local_addr = hs->data + snd->src_off + s->off,
				.length = (uint32_t)s->len, .lkey = hs->data_key,
				.remote_addr = (uint64_t)(uintptr_t)dst, .rkey = hd->staging_key,
				.imm = snd->recv};

	/* one request each way: small queues keep QP set-up cheap */
	a.max_send_wr = a.max_recv_wr = b.max_send_wr = b.max_recv_wr = 2;
	a.multipath = b.multipath = et_lb_per_packet(&f->p.lb);
	a.dest_ip = et_net_host_ip(&f->p.t, s->dst);
	et_net_tor_mac(&f->net, s->src, &a.dest_mac);
	a.path_id = s->path;
	a.sq_psn = (uint32_t)host_rand(hs) & ET_PSN_MASK;
	a.rq_psn = (uint32_t)host_rand(hs) & ET_PSN_MASK;
	b.dest_ip = et_net_host_ip(&f->p.t, s->src);
	et_net_tor_mac(&f->net, s->dst, &b.dest_mac);
	b.sq_psn = a.rq_psn;
	b.rq_psn = a.sq_psn;
	s->sq = et_nic_qp_create(&hs->nic, &a, &hs->mrs, &hs->scq, &hs->rcq);
	s->rq = et_nic_qp_create(&hd->nic, &b, &hd->mrs, &hd->scq, &hd->rcq);
	if (s->sq == NULL || s->rq == NULL)
		return fail(f, "host %u or %u: no QP left (%u per host)", s->src, s->dst,
			    HOST_MAX_QPS);
	s->sq->a.dest_qpn = s->rq->a.qpn;
	s->rq->a.dest_qpn = s->sq->a.qpn;
	et_qp_ready(s->sq);
	et_qp_ready(s->rq);
	if (et_lb_attach(&hs->lb, s->sq, &s->lb_state))
		return fail(f, "out of memory");
	if (et_qp_post_recv(s->rq, &rw) || et_qp_post_send(s->sq, &wr))
		return fail(f, "host %u: cannot post %" PRIu64 " bytes to host %u", s->src, s->len,
			    s->dst);
	et_nic_activate(&hs->nic, s->sq, s->insert_pos);
	s->posted = true;
	f->st.qps_created++;
	if (++hs->qps > hs->qps_max)
		hs->qps_max = hs->qps;
	return 0;
}

/* ---- the steps of one rank ---- */

static int
plan(struct fabric *f, uint32_t hi, bool batched)
{
	struct fab_host *h = &f->h[hi];
	const struct et_coll_rank *r = &f->sched.rank[hi];
	const struct et_coll_step *st = &r->steps[h->step];
	struct et_lb_flow *fl = malloc((st->nsend + 1) * sizeof(*fl));
	uint32_t *map = malloc((st->nsend + 1) * sizeof(*map)), n = 0, k, i;
	struct et_lb_sub *out = NULL;
	int rc = -1;

	if (!fl || !map)
		goto out;
	for (i = 0; i < st->nsend; i++) {
		const struct et_coll_send *s = &r->sends[st->first_send + i];
		bool local = et_lb_rack_local(&h->lb, s->dst);

		/* Ethereal's interceptor: rack-local flows at once, the others
		 * when the batch closes */
		if (s->len == 0 || (et_lb_batched(&f->p.lb) && local == batched))
			continue;
		fl[n] = (struct et_lb_flow){s->dst, s->len};
		map[n++] = st->first_send + i;
	}
	out = malloc((et_lb_plan_max(&h->lb, n) + 1) * sizeof(*out));
	if (out == NULL)
		goto out;
	k = et_lb_plan(&h->lb, fl, n, f->now, out);
	if (h->n_waiting + h->qps + k > HOST_MAX_QPS) {
		free(fl);
		free(map);
		free(out);
		return fail(f, "host %u: step %u needs %u QPs, more than %u", hi, h->step,
			    h->n_waiting + h->qps + k, HOST_MAX_QPS);
	}
	for (i = 0; i < k; i++) {
		uint32_t j = sub_alloc(f);

		if (j == NO_SUB)
			goto out;
		f->subs[j] = (struct fab_sub){
			.src = hi, .dst = fl[out[i].flow].dst, .send = map[out[i].flow],
			.off = out[i].off, .len = out[i].len, .path = out[i].path,
			.start_ns = out[i].start_ns, .insert_pos = out[i].insert_pos};
		h->waiting[h->n_waiting++] = j;
		h->sends_left++;
	}
	rc = 0;
out:
	free(fl);
	free(map);
	free(out);
	if (rc)
		fail(f, "host %u: out of memory planning step %u", hi, h->step);
	return rc;
}

static int
start_step(struct fabric *f, uint32_t hi)
{
	struct fab_host *h = &f->h[hi];

	if (!et_lb_batched(&f->p.lb))
		return plan(f, hi, false);
	if (plan(f, hi, false))
		return -1;
	h->batch_at = f->now + f->p.lb.batch_ns + 1; /* 0 means none */
	return 0;
}

static bool
step_complete(const struct fabric *f, uint32_t hi)
{
	const struct fab_host *h = &f->h[hi];
	const struct et_coll_step *st = &f->sched.rank[hi].steps[h->step];

	if (h->sends_left || h->batch_at)
		return false;
	for (uint32_t i = 0; i < st->nrecv; i++)
		if (h->recv_left[st->first_recv + i])
			return false;
	return true;
}

/* Enter steps as far as the data allows; a step is entered when the one
 * before it has sent and received everything, and its receives applied. */
static int
advance(struct fabric *f, uint32_t hi, bool *started)
{
	struct fab_host *h = &f->h[hi];
	const struct et_coll_rank *r = &f->sched.rank[hi];

	while (h->step < r->nsteps) {
		const struct et_coll_step *st = &r->steps[h->step];

		if (!*started) {
			*started = true;
			if (start_step(f, hi))
				return -1;
		}
		if (!step_complete(f, hi))
			return 0;
		if (f->p.verify)
			for (uint32_t i = 0; i < st->nrecv; i++)
				et_coll_apply(&r->recvs[st->first_recv + i], h->data, h->staging,
					      ET_DT_INT32);
		h->step++;
		*started = false;
	}
	if (h->done_ns == 0) {
		h->done_ns = f->now + 1; /* +1: 0 means not done */
		f->hosts_done++;
	}
	return 0;
}

/* ---- one host's work in a pass ---- */

static uint32_t
host_progress(struct fabric *f, uint32_t hi, bool *started)
{
	struct fab_host *h = &f->h[hi];
	struct et_wc wc[32];
	uint32_t work = 0, k, i;

	while ((k = et_cq_poll(&h->rcq, wc, 32)) > 0) {
		for (i = 0; i < k; i++) {
			uint64_t *left = &h->recv_left[wc[i].imm];

			if (wc[i].status != ET_WC_SUCCESS || wc[i].imm >= f->sched.rank[hi].nrecvs ||
			    *left < wc[i].byte_len) {
				f->failed = true;
				return fail(f, "host %u: bad receive completion (%s, imm %u)", hi,
					    et_wc_status_str(wc[i].status), wc[i].imm), 0;
			}
			*left -= wc[i].byte_len;
		}
		work += k;
	}
	while ((k = et_cq_poll(&h->scq, wc, 32)) > 0) {
		for (i = 0; i < k; i++) {
			const struct fab_sub *s = &f->subs[wc[i].wr_id];

			if (wc[i].status != ET_WC_SUCCESS) {
				f->failed = true;
				return fail(f, "host %u -> host %u: QP %u: %s", s->src, s->dst,
					    wc[i].qpn, et_wc_status_str(wc[i].status)), 0;
			}
			sub_release(f, (uint32_t)wc[i].wr_id);
			h->sends_left--;
		}
		work += k;
	}
	if (h->batch_at && f->now >= h->batch_at) {
		h->batch_at = 0;
		if (plan(f, hi, true)) {
			f->failed = true;
			return 0;
		}
		work++;
	}
	for (i = 0; i < h->n_waiting;) {
		uint32_t j = h->waiting[i];

		if (f->subs[j].start_ns > f->now) {
			i++;
			continue;
		}
		h->waiting[i] = h->waiting[--h->n_waiting];
		if (sub_post(f, j)) {
			f->failed = true;
			return 0;
		}
		work++;
	}
	if (h->step < f->sched.rank[hi].nsteps || h->done_ns == 0) {
		uint32_t before = h->step;

		if (advance(f, hi, started)) {
			f->failed = true;
			return 0;
		}
		work += h->step != before;
	}
	return work;
}

static uint64_t
host_next_event(const struct fabric *f, const struct fab_host *h)
{
	uint64_t t = et_nic_next_event(&h->nic, f->now);

	if (h->batch_at && h->batch_at < t)
		t = h->batch_at;
	for (uint32_t i = 0; i < h->n_waiting; i++)
		if (f->subs[h->waiting[i]].start_ns < t)
			t = f->subs[h->waiting[i]].start_ns;
	return t;
}

/* ---- build ---- */

static int
host_init(struct fabric *f, uint32_t i, uint8_t *shared, uint64_t shared_len)
{
	struct fab_host *h = &f->h[i];
	const struct et_coll_rank *r = &f->sched.rank[i];
	struct rte_ether_addr mac;
	const struct et_mr *mr;
	uint64_t slen = r->staging_bytes ? r->staging_bytes : 1;

	et_net_host_mac(i, &mac);
	if (et_nic_init(&h->nic, &f->net.host_port[i], &f->p.host_link, f->pool, &mac,
			et_net_host_ip(&f->p.t, i), 1, HOST_MAX_QPS) ||
	    et_mr_table_init(&h->mrs, 4) || et_cq_init(&h->scq, 8192) ||
	    et_cq_init(&h->rcq, 8192))
		return fail(f, "host %u: out of memory", i);
	if (shared) {
		/* memory-light: every host sends from and writes into one region */
		h->data = h->staging = shared;
		slen = shared_len;
	} else {
		h->data = malloc(f->p.size ? f->p.size : 1);
		h->staging = calloc(1, slen);
		if (!h->data || !h->staging)
			return fail(f, "host %u: cannot allocate %" PRIu64 " + %" PRIu64 " bytes", i,
				    f->p.size, slen);
		et_coll_fill(&f->sched, i, f->p.seed, ET_DT_INT32, h->data);
	}
	mr = et_mr_reg(&h->mrs, h->data, shared ? shared_len : (f->p.size ? f->p.size : 1),
		       ET_ACCESS_LOCAL_WRITE);
	h->data_key = mr ? mr->key : 0;
	mr = et_mr_reg(&h->mrs, h->staging, slen, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	h->staging_key = mr ? mr->key : 0;
	h->recv_left = calloc(r->nrecvs + 1, sizeof(*h->recv_left));
	h->waiting = calloc(HOST_MAX_QPS, sizeof(*h->waiting));
	if (!h->recv_left || !h->waiting || !h->data_key || !h->staging_key)
		return fail(f, "host %u: out of memory", i);
	for (uint32_t k = 0; k < r->nrecvs; k++)
		h->recv_left[k] = r->recvs[k].len;
	et_lb_host_init(&h->lb, &f->p.lb, &f->p.t, i, f->p.seed);
	return 0;
}

static uint8_t *light_buf;

static int
open_captures(struct fabric *f)
{
	uint32_t n = f->n_hosts, i;
	char path[512], name[64];

	for (i = 0; i < f->net.n_sw; i++)
		n += f->net.sw[i].n_ports;
	f->caps = calloc(n, sizeof(*f->caps));
	if (f->caps == NULL)
		return fail(f, "out of memory");
	for (i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++) {
			snprintf(name, sizeof(name), "%s-p%u", f->net.sw[i].name, k);
			snprintf(path, sizeof(path), "%s/%s.pcapng", f->p.pcap_dir, name);
			if ((f->caps[f->n_caps] = et_capture_open(path, name)) == NULL)
				return fail(f, "--pcap: cannot write %s", path);
			et_switch_set_capture(&f->net.sw[i], k, f->caps[f->n_caps++]);
		}
	for (i = 0; i < f->n_hosts; i++) {
		snprintf(name, sizeof(name), "host%u", i);
		snprintf(path, sizeof(path), "%s/%s.pcapng", f->p.pcap_dir, name);
		if ((f->caps[f->n_caps] = et_capture_open(path, name)) == NULL)
			return fail(f, "--pcap: cannot write %s", path);
		f->h[i].nic.eg.cap = f->caps[f->n_caps++];
	}
	return 0;
}

int
fab_build(struct fabric *f, const struct fab_params *p)
{
	const char *why = NULL;
	uint32_t links, mbufs;
	uint64_t shared_len = 0;
	char err[256];

	memset(f, 0, sizeof(*f));
	f->p = *p;
	f->free_sub = NO_SUB;
	if (et_topo_validate(&p->t, err, sizeof(err)))
		return fail(f, "topology: %s", err);
	f->n_hosts = et_topo_hosts(&p->t);
	if (et_coll_build(&f->sched, p->kind, p->algo, f->n_hosts, p->size, p->chunk, &why))
		return fail(f, "%s", why);
	if (p->size > UINT32_MAX)
		return fail(f, "--size: at most 4G per rank (one work request per subflow)");
	if (p->qp.dctcp.init_cwnd == 0)
		f->p.qp.dctcp.init_cwnd = fab_bdp_bytes(&f->p);
	if (p->lb.reps.explore_pkts == 0)
		f->p.lb.reps.explore_pkts = fab_bdp_bytes(&f->p) / p->qp.mtu + 1;
	f->p.net.sw.mode = et_lb_uses_ecmp(&p->lb) ? ET_SW_ECMP : ET_SW_SOURCE_ROUTE;
	f->p.net.sw.ecmp_seed = (uint32_t)(p->seed * 2654435761u);
	/* net_ring ethdevs where Debian's 32-port limit allows, bare rings beyond */
	links = f->n_hosts + p->t.tors * et_topo_tor_uplinks(&p->t) +
		(p->t.kind == ET_TOPO_FAT_TREE ? p->t.pods * p->t.aggs_per_pod * p->t.cores_per_agg : 0);
	f->p.net.ethdev = 2 * links <= RTE_MAX_ETHPORTS;
	f->p.net.ring_size = RING_SIZE;
	f->p.net.sw.compact_routes = true;
	/* frames in flight: switch queues hold at most their buffer; hosts
	 * their windows.  Enough for the shipped fabrics, not a bound. */
	mbufs = fab_pool_mbufs(p);
	f->pool = rte_pktmbuf_pool_create("fabric", mbufs, 256, 0,
					  RTE_PKTMBUF_HEADROOM + p->qp.mtu + 256, (int)rte_socket_id());
	if (f->pool == NULL)
		return fail(f, "cannot create a pool of %u mbufs (%" PRIu64 " MB): %s (give EAL more "
			    "memory, -m or hugepages, or fewer with [run] mbufs)",
			    mbufs, fab_pool_bytes(p) >> 20, rte_strerror(rte_errno));
	if (et_net_build(&f->net, &p->t, &f->p.net, f->pool, (int)rte_socket_id()))
		return fail(f, "cannot build the fabric's switches and links");
	f->h = calloc(f->n_hosts, sizeof(*f->h));
	if (f->h == NULL)
		return fail(f, "out of memory");
	if (!p->verify) {
		shared_len = p->size > f->sched.staging_bytes ? p->size : f->sched.staging_bytes;
		light_buf = calloc(1, shared_len + 1);
		if (light_buf == NULL)
			return fail(f, "out of memory");
	}
	for (uint32_t i = 0; i < f->n_hosts; i++)
		if (host_init(f, i, light_buf, shared_len + 1))
			return -1;
	for (uint32_t i = 0; i < p->n_fails; i++) {
		const struct fab_fail *x = &p->fails[i];

		/* the clock starts at 1 (0 means "now" to the switch) */
		if (et_net_fail_uplink(&f->net, (struct et_node){x->tier, x->sw}, x->uplink,
				       x->at_ns + 1))
			return fail(f, "%s: no %s %u uplink %u",
				    p->fails_from[0] ? p->fails_from : "--fail",
				    x->tier == ET_TIER_TOR ? "ToR" : "aggregation switch", x->sw,
				    x->uplink);
	}
	if (p->pcap_dir && open_captures(f))
		return -1;
	return 0;
}

/* ---- run ---- */

/* Name the node whose due event does nothing: a bug, said precisely. */
static void
stuck(struct fabric *f)
{
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct fab_host *h = &f->h[i];

		if (host_next_event(f, h) <= f->now) {
			fail(f, "no progress at %" PRIu64 " ns: host %u has an event due (egress "
			     "queue %u, in flight %u, active QPs %u, timers %u, waiting %u, pool free %u, ring %u)",
			     f->now, i, et_egress_qlen(&h->nic.eg),
			     h->nic.eg.fly_tail - h->nic.eg.fly_head, h->nic.n_active,
			     h->nic.heap_n, h->n_waiting, rte_mempool_avail_count(f->pool),
			     h->nic.port.tx ? rte_ring_count(h->nic.port.tx) : 0);
			return;
		}
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		if (et_switch_next_event(&f->net.sw[i], f->now) <= f->now) {
			fail(f, "no progress at %" PRIu64 " ns: switch %s has an event due (pool free %u)",
			     f->now, f->net.sw[i].name, rte_mempool_avail_count(f->pool));
			return;
		}
	fail(f, "no progress at %" PRIu64 " ns", f->now);
}

/* Tell each link's sender which node its frames wake. */
static void
wire_wakeups(struct fabric *f, uint8_t *ready)
{
	for (uint32_t s = 0; s < f->net.n_sw; s++)
		for (uint16_t k = 0; k < f->net.sw[s].n_ports; k++) {
			const struct et_net_peer *pp = &f->net.peers[s * ET_SW_MAX_PORTS + k];

			f->net.sw[s].ports[k].eg.peer_ready =
				pp->peer.tier == ET_TIER_HOST
					? &ready[pp->peer.index]
					: &ready[f->n_hosts + f->net.first[pp->peer.tier] + pp->peer.index];
		}
	for (uint32_t i = 0; i < f->n_hosts; i++)
		f->h[i].nic.eg.peer_ready = &ready[f->n_hosts + et_topo_tor_of(&f->p.t, i)];
}

/* One node's turn: a host (NIC, then its part of the collective) or a
 * switch; the work it did. */
static uint32_t
poll_node(struct fabric *f, uint32_t i, bool *started)
{
	if (i < f->n_hosts)
		return et_nic_poll(&f->h[i].nic, f->now) + host_progress(f, i, &started[i]);
	return et_switch_poll(&f->net.sw[i - f->n_hosts], f->now);
}

static uint64_t
node_next_event(const struct fabric *f, uint32_t i)
{
	if (i < f->n_hosts)
		return host_next_event(f, &f->h[i]);
	return et_switch_next_event(&f->net.sw[i - f->n_hosts], f->now);
}

/* Real clock with more than one lcore: the hosts (and the collective,
 * which touches both ends of every QP pair) stay on the main lcore, the
 * switches are dealt to the others.  They share only rings, each with one
 * producer and one consumer. */
struct sw_worker {
	struct fabric *f;
	uint32_t first, step;     /* switches first, first + step, ... */
	uint64_t base;
	_Atomic int *run;
};

static int
switch_worker(void *arg)
{
	struct sw_worker *w = arg;

	while (atomic_load_explicit(w->run, memory_order_relaxed)) {
		uint64_t now = et_tsc_ns() - w->base + 1;

		for (uint32_t i = w->first; i < w->f->net.n_sw; i += w->step)
			et_switch_poll(&w->f->net.sw[i], now);
	}
	return 0;
}

static unsigned int
launch_switch_workers(struct fabric *f, struct sw_worker *w, _Atomic int *run, uint64_t base)
{
	unsigned int lcore, n = 0, workers = rte_lcore_count() - 1;

	if (workers == 0)
		return 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		w[n] = (struct sw_worker){f, n, workers, base, run};
		if (rte_eal_remote_launch(switch_worker, &w[n], lcore) == 0)
			n++;
	}
	return n;
}

/* Every node takes its turn in a fixed order, pass after pass.  In virtual
 * time a node is skipped when it can have nothing to do: no frame reached
 * it, it did nothing last time, and its own next event is later.  A pass
 * that does no work moves the clock to the earliest next event. */
int
fab_run(struct fabric *f)
{
	uint32_t nodes = f->n_hosts + f->net.n_sw;
	bool *started = calloc(f->n_hosts, sizeof(*started));
	uint8_t *ready = malloc(nodes);
	uint64_t *wake = calloc(nodes, sizeof(*wake));
	uint64_t base = f->p.real_clock ? et_tsc_ns() : 0, idle = 0;
	bool skip = !f->p.real_clock;
	struct sw_worker sw[RTE_MAX_LCORE];
	_Atomic int run = 1;
	unsigned int workers = 0;

	if (!started || !ready || !wake) {
		free(started);
		free(ready);
		free(wake);
		return fail(f, "out of memory");
	}
	memset(ready, 1, nodes);
	if (skip)
		wire_wakeups(f, ready);
	else if ((workers = launch_switch_workers(f, sw, &run, base)) > 0)
		nodes = f->n_hosts; /* the switches poll on their own lcores */
	f->now = 1;
	for (;;) {
		uint32_t work = 0, i, w;

		for (i = 0; i < nodes; i++) {
			if (skip && !ready[i] && wake[i] > f->now)
				continue;
			ready[i] = 0;
			w = poll_node(f, i, started);
			if (w)
				ready[i] = 1; /* busy: look again next pass */
			else if (skip)
				wake[i] = node_next_event(f, i);
			work += w;
		}
		f->passes++;
		if (f->failed || f->hosts_done == f->n_hosts)
			break;
		if (f->now > f->p.time_limit_ns) {
			fail(f, "not done after %.3f s of %s time (%u of %u hosts done)",
			     f->now / 1e9, f->p.real_clock ? "real" : "virtual", f->hosts_done,
			     f->n_hosts);
			break;
		}
		if (f->p.real_clock) {
			f->now = et_tsc_ns() - base + 1;
			continue;
		}
		if (work) {
			idle = 0;
			continue;
		}
		{
			uint64_t t = UINT64_MAX;

			for (i = 0; i < nodes; i++) {
				if (ready[i])
					t = f->now; /* a frame arrived during the pass */
				else if (wake[i] < t)
					t = wake[i];
			}
			if (t == UINT64_MAX) {
				fail(f, "stalled at %.6f s: nothing left to do, %u of %u hosts done",
				     f->now / 1e9, f->hosts_done, f->n_hosts);
				break;
			}
			if (t > f->now)
				f->now = t;
			else if (++idle > 1000) {
				stuck(f);
				break;
			}
		}
	}
	if (workers) {
		atomic_store(&run, 0);
		rte_eal_mp_wait_lcore();
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++)
			f->net.sw[i].ports[k].eg.peer_ready = NULL;
	for (uint32_t i = 0; i < f->n_hosts; i++)
		f->h[i].nic.eg.peer_ready = NULL;
	free(started);
	free(ready);
	free(wake);
	return f->error[0] ? -1 : 0;
}

uint32_t
fab_verify(const struct fabric *f, uint64_t *checked)
{
	uint8_t *want = malloc(f->p.size ? f->p.size : 1);
	uint32_t bad = 0;

	if (want == NULL)
		return f->n_hosts;
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		uint64_t off, len;

		et_coll_expect(&f->sched, i, f->p.seed, ET_DT_INT32, want);
		et_coll_checked_range(&f->sched, i, &off, &len);
		bad += memcmp(f->h[i].data + off, want + off, len) != 0;
		*checked += len;
	}
	free(want);
	return bad;
}

/* Every frame a NIC took off its link, whatever became of it. */
static uint64_t
nic_rx_total(const struct et_nic *n)
{
	uint64_t rx = n->st.rx_pkts + n->st.rx_not_ours + n->st.rx_unknown_qpn + n->st.pause_rx;

	for (int d = 0; d < ET_WIRE_E_COUNT; d++)
		rx += n->st.rx_bad[d];
	return rx;
}

/* Per link, once it is empty: what one end handed to it, the other end took
 * off it.  Returns false (with f->error) at the first link that differs. */
static bool
links_balance(struct fabric *f)
{
	const struct et_net *net = &f->net;

	for (uint32_t i = 0; i < net->n_sw; i++) {
		uint8_t tier = i >= net->first[ET_TIER_CORE] ? ET_TIER_CORE
			       : i >= net->first[ET_TIER_AGG] ? ET_TIER_AGG : ET_TIER_TOR;
		struct et_node me = {tier, i - net->first[tier]};

		for (uint16_t k = 0; k < net->sw[i].n_ports; k++) {
			const struct et_net_peer *pp = &net->peers[i * ET_SW_MAX_PORTS + k];
			const struct et_sw_port *pt = &net->sw[i].ports[k];
			uint64_t sent = pt->eg.st.tx_pkts, got;

			if (!pp->used)
				continue;
			if (pp->peer.tier == ET_TIER_HOST) {
				const struct et_nic *n = &f->h[pp->peer.index].nic;

				got = nic_rx_total(n);
				if (n->eg.st.tx_pkts != pt->st.rx_pkts) {
					fail(f, "accounting: host %u -> %s %u: %" PRIu64 " sent, %" PRIu64
					     " received", pp->peer.index, et_tier_name(&net->t, tier),
					     me.index, n->eg.st.tx_pkts, pt->st.rx_pkts);
					return false;
				}
			} else {
				int back = et_net_port_to(net, pp->peer, me, pp->lane);
				uint32_t j = net->first[pp->peer.tier] + pp->peer.index;

				got = back < 0 ? UINT64_MAX : net->sw[j].ports[back].st.rx_pkts;
			}
			if (sent != got) {
				fail(f, "accounting: %s %u port %u -> %s %u: %" PRIu64 " sent, %" PRIu64
				     " received", et_tier_name(&net->t, tier), me.index, k,
				     et_tier_name(&net->t, pp->peer.tier), pp->peer.index, sent, got);
				return false;
			}
		}
	}
	return true;
}

/* Every frame made is accounted for once the links are empty: made by a
 * QP, duplicated by a link or a switch's PAUSE = received by a host (good,
 * bad, not ours, unknown QP, PAUSE) + dropped by a switch + lost on a link;
 * and on every link, sent = received.  Virtual clock only: real-clock
 * workers may still hold frames. */
static void
account(struct fabric *f)
{
	uint64_t made = 0, gone = 0;

	if (f->p.real_clock || f->error[0])
		return;
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct et_nic *n = &f->h[i].nic;

		made += n->st.tx_pkts + n->eg.st.duplicated;
		gone += nic_rx_total(n) + n->eg.st.loss_drops + n->eg.st.burst_drops +
			n->eg.st.flap_drops + n->eg.st.fail_drops;
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++) {
			const struct et_sw_port *pt = &f->net.sw[i].ports[k];

			made += pt->st.pause_tx + pt->eg.st.duplicated;
			gone += pt->st.pause_rx + pt->eg.st.loss_drops + pt->eg.st.burst_drops +
				pt->eg.st.flap_drops + pt->eg.st.fail_drops;
			for (int d = 0; d < ET_SW_DROP_COUNT; d++)
				gone += pt->st.drops[d];
		}
	f->st.frames_made = made;
	f->st.frames_accounted = gone;
	f->st.mbufs_in_use = rte_mempool_in_use_count(f->pool);
	if (made != gone)
		fail(f, "accounting: %" PRIu64 " frames made, %" PRIu64 " received or dropped", made,
		     gone);
	else if (f->st.mbufs_in_use)
		fail(f, "%u mbufs still in use after the links drained", f->st.mbufs_in_use);
	else
		links_balance(f);
}

/* After the collective: let every frame still on a link arrive (or be
 * dropped), so the pool can be counted and the accounting closed. */
static void
drain(struct fabric *f)
{
	for (uint32_t pass = 0; pass < 100000000; pass++) {
		uint32_t work = 0;
		uint64_t t;

		for (uint32_t i = 0; i < f->n_hosts; i++)
			work += et_nic_poll(&f->h[i].nic, f->now);
		work += et_net_poll(&f->net, f->now);
		if (work)
			continue;
		t = et_net_next_event(&f->net, f->now);
		for (uint32_t i = 0; i < f->n_hosts; i++) {
			uint64_t e = et_nic_next_event(&f->h[i].nic, f->now);

			if (e < t)
				t = e;
		}
		if (t == UINT64_MAX || t <= f->now)
			return;
		f->now = t;
	}
}

void
fab_collect(struct fabric *f)
{
	struct fab_stats *s = &f->st;

	if (!f->p.real_clock && !f->error[0])
		drain(f);

	for (uint32_t i = 0; i < f->net.n_sw; i++) {
		const struct et_switch *sw = &f->net.sw[i];

		for (uint16_t k = 0; k < sw->n_ports; k++) {
			const struct et_sw_port *pt = &sw->ports[k];

			for (int d = 0; d < ET_SW_DROP_COUNT; d++)
				s->drops += pt->st.drops[d];
			s->drops += pt->eg.st.loss_drops + pt->eg.st.fail_drops +
				    pt->eg.st.burst_drops + pt->eg.st.flap_drops;
			s->fault_drops += pt->eg.st.loss_drops + pt->eg.st.burst_drops +
					  pt->eg.st.flap_drops;
			s->corrupted += pt->eg.st.corrupted;
			s->duplicated += pt->eg.st.duplicated;
			s->ecn_marks += pt->st.ecn_marks;
			s->pause_frames += pt->st.pause_tx;
			s->packet_hops += pt->eg.st.tx_pkts;
		}
	}
	for (uint32_t i = 0; i < f->n_hosts; i++) {
		const struct fab_host *h = &f->h[i];
		uint32_t q = h->qps_max, b = 0;

		s->packet_hops += h->nic.eg.st.tx_pkts;
		s->drops += h->nic.eg.st.loss_drops + h->nic.eg.st.fail_drops +
			    h->nic.eg.st.burst_drops + h->nic.eg.st.flap_drops;
		s->fault_drops += h->nic.eg.st.loss_drops + h->nic.eg.st.burst_drops +
				  h->nic.eg.st.flap_drops;
		s->corrupted += h->nic.eg.st.corrupted;
		s->duplicated += h->nic.eg.st.duplicated;
		for (int d = 0; d < ET_WIRE_E_COUNT; d++)
			s->rx_bad += h->nic.st.rx_bad[d];
		s->rx_unknown_qpn += h->nic.st.rx_unknown_qpn;
		s->rerouted += h->lb.paths.rerouted;
		s->paths_marked_bad += h->lb.paths.marked_bad;
		s->reps_frozen += h->lb.st.reps_frozen;
		s->reps_explored += h->lb.st.reps_explored;
		s->reps_recycled += h->lb.st.reps_recycled;
		if (q > s->max_qps_per_host)
			s->max_qps_per_host = q;
		while (b < 7 && q > (1u << b))
			b++;
		s->qps_hist[b]++;
		/* QPs still open (a failed run) */
		for (uint32_t k = 0; h->nic.q && k < h->nic.max_qps; k++)
			if (h->nic.q[k].qp)
				qp_stats_add(f, h->nic.q[k].qp);
	}
	s->drops += s->rx_bad;
	account(f);
}

uint64_t
fab_cct_ns(const struct fabric *f)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < f->n_hosts; i++)
		if (f->h[i].done_ns > t)
			t = f->h[i].done_ns;
	return t > 2 ? t - 2 : 0; /* both the clock and done_ns start at 1 */
}

uint64_t
fab_lower_bound_ns(const struct fabric *f)
{
	uint32_t n = f->n_hosts;
	double bytes = (double)f->p.size * (n - 1) / n;
	uint32_t hops = longest_path_hops(&f->p.t);

	if (f->p.kind == ET_COLL_ALLREDUCE)
		bytes *= 2;
	return (uint64_t)(bytes * 8e9 / (double)f->p.host_link.rate_bps) +
	       hops * f->p.net.link.latency_ns;
}

void
fab_free(struct fabric *f)
{
	for (uint32_t i = 0; f->h && i < f->n_hosts; i++) {
		struct fab_host *h = &f->h[i];

		h->nic.eg.cap = NULL;
		et_nic_free(&h->nic);
		et_mr_table_free(&h->mrs);
		et_cq_free(&h->scq);
		et_cq_free(&h->rcq);
		if (h->data != light_buf) {
			free(h->data);
			free(h->staging);
		}
		free(h->recv_left);
		free(h->waiting);
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++)
			et_switch_set_capture(&f->net.sw[i], k, NULL);
	for (uint32_t i = 0; i < f->n_caps; i++)
		et_capture_close(f->caps[i]);
	free(f->caps);
	free(f->h);
	if (f->net.sw)
		et_net_free(&f->net);
	rte_mempool_free(f->pool);
	et_coll_free(&f->sched);
	free(f->subs);
	free(light_buf);
	light_buf = NULL;
	memset(f, 0, sizeof(*f));
}
