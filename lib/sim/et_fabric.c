/* SPDX-License-Identifier: BSD-3-Clause */
/* A fabric's build and teardown: switches and links (et_net), one NIC and
 * one collective rank (host/et_runtime) per host; the QP pairs of a
 * subflow made directly on both hosts. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "sim/et_sim_priv.h"

#define RING_SIZE 4096

void
et_fabric_params_default(struct et_fabric_params *p)
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
	p->dtype = ET_DT_FLOAT; /* nccl-tests' default */
	p->op = ET_OP_SUM;
	p->seed = 1;
	p->time_limit_ns = 10ull * 1000000000;
	p->reconnect_ns = 10ull * 1000000000;
}

uint32_t
et_fabric_pool_mbufs(const struct et_fabric_params *p)
{
	/* a start, not a bound: 64 frames a host (the paper's a2a 16 MB on
	 * 256 hosts never grew it under Ethereal, twice under ECMP); it grows
	 * when that is not enough (et_pool.c), so memory follows what the
	 * run holds, unless the conf fixed it (then a QP that finds it empty
	 * waits: alloc_fail).  1,024 a host made 8,192 hosts ask for 37 GB
	 * before the first frame. */
	return p->mbufs ? p->mbufs : 16384 + et_topo_hosts(&p->t) * 64;
}

/* The most the pool grows to when it was not given a size: its start,
 * and every switch's buffer full of full frames (what the fabric can hold
 * once PFC has stopped the hosts). */
static uint32_t
pool_ceiling(const struct et_fabric_params *p, uint32_t start)
{
	const struct et_topo *t = &p->t;
	uint64_t sw = t->tors + (t->kind == ET_TOPO_LEAF_SPINE
					 ? t->spines
					 : t->pods * t->aggs_per_pod + t->aggs_per_pod * t->cores_per_agg);
	uint64_t n = start + sw * p->net.sw.buffer_bytes / (p->qp.mtu + 64);

	return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

uint64_t
et_fabric_pool_bytes(const struct et_fabric_params *p)
{
	return (uint64_t)et_fabric_pool_mbufs(p) *
	       (RTE_PKTMBUF_HEADROOM + p->qp.mtu + 256 + sizeof(struct rte_mbuf) + 64);
}

uint64_t
et_fabric_mem_bytes(const struct et_fabric_params *p, uint64_t *payload)
{
	uint32_t hosts = et_topo_hosts(&p->t);
	struct et_coll_spec c = et_coll_spec_of(p->kind, p->algo, hosts, p->size, p->dtype, p->op,
						p->chunk);
	uint64_t staging = 0;
	struct et_coll_sched s;
	const char *why;

	if (!p->hosts_only && et_coll_build(&s, &c, &why) == 0) {
		staging = s.staging_bytes;
		et_coll_free(&s);
	}
	/* as et_fabric_build sizes them: one shared region memory-light, each
	 * host its data and staging with --verify */
	*payload = p->hosts_only ? 0
		   : p->verify	  ? hosts * (p->size + staging)
				  : (p->size > staging ? p->size : staging);
	return *payload + et_fabric_pool_bytes(p);
}

/* Links a packet crosses on the fabric's longest path. */
uint32_t
et_fabric_longest_path_hops(const struct et_topo *t)
{
	if (t->tors == 1)
		return 2;
	return t->kind == ET_TOPO_FAT_TREE && t->pods > 1 ? 6 : 4;
}

/* The base RTT without the links' latency: a full frame out store-and-
 * forward, the ACK back. */
static uint64_t
rtt_serialization_ns(const struct et_fabric_params *p)
{
	const struct et_link_model *lm = &p->net.link;

	return et_fabric_longest_path_hops(&p->t) *
	       (et_link_tx_ns(lm, p->qp.mtu + 78) + et_link_tx_ns(lm, 64));
}

uint64_t
et_fabric_base_rtt_ns(const struct et_fabric_params *p)
{
	return 2 * et_fabric_longest_path_hops(&p->t) * p->net.link.latency_ns +
	       rtt_serialization_ns(p);
}

uint64_t
et_fabric_max_latency_ns(const struct et_fabric_params *p)
{
	uint64_t fixed = rtt_serialization_ns(p);

	if (p->qp.rto_ns <= fixed + 1)
		return 0;
	return (p->qp.rto_ns - fixed - 1) / (2 * et_fabric_longest_path_hops(&p->t));
}

uint32_t
et_fabric_bdp_bytes(const struct et_fabric_params *p)
{
	uint64_t bdp = (uint64_t)((double)p->host_link.rate_bps * et_fabric_base_rtt_ns(p) / 8e9);

	return (uint32_t)(bdp > p->qp.mtu ? bdp : p->qp.mtu);
}

int
et_fabric_fail(struct et_fabric *f, const char *fmt, ...)
{
	va_list ap;

	rte_spinlock_lock(&f->error_lock);
	va_start(ap, fmt);
	vsnprintf(f->error, sizeof(f->error), fmt, ap);
	va_end(ap);
	rte_spinlock_unlock(&f->error_lock);
	return -EIO;
}

/* ---- the far end of a subflow: the peer host's QP, made here ---- */

uint32_t
et_fabric_peer_ip(void *ctx, uint32_t rank)
{
	const struct et_fabric *f = ctx;

	return et_topo_host_ip(&f->p.t, rank);
}

static int
peer_open(void *ctx, struct et_rt_host *src, struct et_rt_sub *s, uint32_t qpn,
	  const struct et_qp_attr *a, struct et_rt_remote *out)
{
	struct et_fabric *f = ctx;
	const struct et_coll_send *snd = &f->sched.rank[src->rank].sends[s->send];

	return et_far_open(f, src, src->rank, s, &f->h[s->dst].rt, snd->recv, qpn, a, out);
}

static void
peer_close(void *ctx, struct et_rt_host *src, struct et_rt_sub *s)
{
	struct et_fabric *f = ctx;

	et_far_close(f, src, src->rank, s, &f->h[s->dst].rt, false);
}

static const struct et_rt_peer_ops peer_ops = {et_fabric_peer_ip, peer_open, peer_close};

/* A host's first QPN: QP 0 and 1 are InfiniBand's SMI and GSI (Wireshark
 * decodes QP 1's frames as management datagrams); ethereal-node starts at
 * 0x100 too. */
#define FABRIC_QPN_BASE 0x100

static int
host_init(struct et_fabric *f, uint32_t i, uint64_t shared_len)
{
	struct et_fabric_host *h = &f->h[i];
	struct rte_ether_addr mac, gw;

	et_net_host_mac(i, &mac);
	et_net_tor_mac(&f->net, i, &gw);
	if (et_nic_init(&h->nic, &f->net.host_port[i], &f->p.host_link, f->pool, &mac,
			et_topo_host_ip(&f->p.t, i), FABRIC_QPN_BASE,
			ET_FAR_PICKED + f->n_hosts * ET_FAR_PER_PEER) ||
	    et_rt_host_init(&h->rt, &f->rc, &f->sched, i, &h->nic, &gw, f->light_buf, shared_len,
			    &peer_ops, f))
		return et_fabric_fail(f, "host %u: out of memory", i);
	/* past those, each peer's own QPNs here (sim/et_far.c) */
	et_nic_reserve_qpns(&h->nic, ET_FAR_PICKED);
	et_nic_acks_first(&h->nic, f->p.acks_first);
	h->rt.on_plan = f->p.on_plan;
	h->rt.plan_ctx = f->p.plan_ctx;
	return 0;
}

static int
open_captures(struct et_fabric *f)
{
	uint32_t n = f->n_hosts, i;
	char path[512], name[64];

	for (i = 0; i < f->net.n_sw; i++)
		n += f->net.sw[i].n_ports;
	f->caps = calloc(n, sizeof(*f->caps));
	if (f->caps == NULL)
		return et_fabric_fail(f, "out of memory");
	for (i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++) {
			snprintf(name, sizeof(name), "%s-p%u", f->net.sw[i].name, k);
			snprintf(path, sizeof(path), "%s/%s.pcapng", f->p.pcap_dir, name);
			if ((f->caps[f->n_caps] = et_capture_open(path, name)) == NULL)
				return et_fabric_fail(f, "--pcap: cannot write %s", path);
			et_switch_set_capture(&f->net.sw[i], k, f->caps[f->n_caps++]);
		}
	for (i = 0; i < f->n_hosts; i++) {
		snprintf(name, sizeof(name), "host%u", i);
		snprintf(path, sizeof(path), "%s/%s.pcapng", f->p.pcap_dir, name);
		if ((f->caps[f->n_caps] = et_capture_open(path, name)) == NULL)
			return et_fabric_fail(f, "--pcap: cannot write %s", path);
		f->h[i].nic.eg.cap = f->caps[f->n_caps++];
	}
	return 0;
}

void
et_fabric_rt_conf(const struct et_fabric_params *p, struct et_rt_conf *rc)
{
	*rc = (struct et_rt_conf){.qp = p->qp, .lb = p->lb, .t = p->t, .seed = p->seed,
				  .verify = p->verify, .data_by_read = p->data_by_read};
	/* the base round trip: window-mode DCTCP paces READ answers by it */
	rc->qp.dctcp.bdp = et_fabric_bdp_bytes(p);
	/* a window of one round trip unless the conf says otherwise */
	if (rc->qp.dctcp.init_cwnd == 0)
		rc->qp.dctcp.init_cwnd = et_fabric_bdp_bytes(p);
	if (rc->lb.reps.explore_pkts == 0)
		rc->lb.reps.explore_pkts = et_fabric_bdp_bytes(p) / p->qp.mtu + 1;
}

int
et_fabric_build(struct et_fabric *f, const struct et_fabric_params *p)
{
	const char *why = NULL;
	uint32_t links, mbufs;
	uint64_t shared_len = 0;
	char err[256];
	int rc;

	memset(f, 0, sizeof(*f));
	f->p = *p;
	if (et_topo_validate(&p->t, err, sizeof(err)) || et_net_check(&p->t, err, sizeof(err)))
		return et_fabric_fail(f, "topology: %s", err);
	/* virtual time hands a frame to the far end one latency before it
	 * arrives (sim/et_lanes.c): a link needs one */
	if (!p->real_clock && (p->net.link.latency_ns == 0 || p->host_link.latency_ns == 0 ||
			       (p->net.uplink.rate_bps && p->net.uplink.latency_ns == 0)))
		return et_fabric_fail(f, "a link of latency 0: virtual time needs 1 ns or more");
	f->n_hosts = et_topo_hosts(&p->t);
	if (p->hosts_only) {
		/* every host's own rank has nothing to do: a driver runs them */
		f->sched.nranks = f->n_hosts;
		f->sched.rank = calloc(f->n_hosts, sizeof(*f->sched.rank));
		if (f->sched.rank == NULL)
			return et_fabric_fail(f, "out of memory");
	} else {
		struct et_coll_spec c = et_coll_spec_of(p->kind, p->algo, f->n_hosts, p->size,
							p->dtype, p->op, p->chunk);

		if (et_coll_build(&f->sched, &c, &why))
			return et_fabric_fail(f, "%s", why);
	}
	et_fabric_rt_conf(&f->p, &f->rc);
	f->p.qp = f->rc.qp;
	f->p.lb = f->rc.lb;
	f->p.net.sw.mode = et_lb_uses_ecmp(&p->lb) ? ET_SW_ECMP : ET_SW_SOURCE_ROUTE;
	f->p.net.sw.ecmp_seed = (uint32_t)(p->seed * 2654435761u);
	/* net_ring ethdevs where Debian's 32-port limit allows, bare rings beyond */
	links = f->n_hosts + p->t.tors * et_topo_tor_uplinks(&p->t) +
		p->t.pods * p->t.aggs_per_pod * et_topo_agg_uplinks(&p->t);
	f->p.net.ethdev = 2 * links <= RTE_MAX_ETHPORTS;
	f->p.net.ring_size = RING_SIZE;
	f->p.net.sw.compact_routes = true;
	/* frames in flight: switch queues hold at most their buffer; hosts
	 * their windows.  Enough for the shipped fabrics, not a bound. */
	mbufs = et_fabric_pool_mbufs(p);
	f->pool = et_pool_create("fabric", mbufs, p->mbufs ? mbufs : pool_ceiling(p, mbufs),
				 RTE_PKTMBUF_HEADROOM + p->qp.mtu + 256, (int)rte_socket_id());
	if (f->pool == NULL && rte_errno == ENOMEM)
		return et_fabric_fail(f, "cannot create a pool of %u mbufs (%" PRIu64 " MB): %s (give EAL more "
			    "memory, -m or hugepages, or fewer with [run] mbufs)",
			    mbufs, et_fabric_pool_bytes(p) >> 20, rte_strerror(rte_errno));
	if (f->pool == NULL)
		return et_fabric_fail(f, "cannot create a pool of %u mbufs: %s (at least %u: "
				      "[run] mbufs)", mbufs, rte_strerror(rte_errno), ET_FABRIC_MIN_MBUFS);
	rc = et_net_build(&f->net, &p->t, &f->p.net, f->pool, (int)rte_socket_id());
	if (rc)
		return et_fabric_fail(f, "cannot build the fabric's switches and links: %s%s",
				      strerror(-rc), rc == -ENOMEM ? " (give EAL more memory, -m)" : "");
	f->h = calloc(f->n_hosts, sizeof(*f->h));
	if (f->h == NULL)
		return et_fabric_fail(f, "out of memory");
	if (!p->verify) {
		shared_len = p->size > f->sched.staging_bytes ? p->size : f->sched.staging_bytes;
		if (p->hosts_only)
			shared_len = 0; /* the driver has buffers of its own */
		/* memory-light: every host sends from and writes into one region */
		f->light_buf = calloc(1, shared_len + 1);
		if (f->light_buf == NULL)
			return et_fabric_fail(f, "out of memory");
	}
	for (uint32_t i = 0; i < f->n_hosts; i++)
		if (host_init(f, i, shared_len + 1))
			return -EIO;
	if (et_far_init(f))
		return et_fabric_fail(f, "out of memory");
	for (uint32_t i = 0; i < p->n_fails; i++) {
		const struct et_fabric_fail *x = &p->fails[i];

		/* the clock starts at 1 (0 means "now" to the switch) */
		if (et_net_fail_uplink(&f->net, (struct et_node){x->tier, x->sw}, x->uplink,
				       x->at_ns + 1))
			return et_fabric_fail(f, "%s: no %s %u uplink %u",
				    p->fails_from[0] ? p->fails_from : "--fail",
				    x->tier == ET_TIER_TOR ? "ToR" : "aggregation switch", x->sw,
				    x->uplink);
	}
	if (p->pcap_dir && open_captures(f))
		return -EIO;
	return 0;
}

uint32_t
et_fabric_verify(const struct et_fabric *f, uint64_t *checked)
{
	const uint8_t **data = calloc(f->n_hosts, sizeof(*data));
	uint64_t *wrong = calloc(f->n_hosts, sizeof(*wrong));
	uint32_t bad = 0;

	for (uint32_t i = 0; data && i < f->n_hosts; i++)
		data[i] = f->h[i].rt.data;
	if (!data || !wrong || et_coll_wrong_all(&f->sched, f->p.seed, data, wrong))
		bad = f->n_hosts;
	for (uint32_t i = 0; !bad && i < f->n_hosts; i++) {
		uint64_t off, len;

		et_coll_checked_range(&f->sched, i, &off, &len);
		bad += wrong[i] != 0;
		*checked += len;
	}
	free(data);
	free(wrong);
	return bad;
}

uint64_t
et_fabric_cct_ns(const struct et_fabric *f)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < f->n_hosts; i++)
		if (f->h[i].rt.done_ns > t)
			t = f->h[i].rt.done_ns;
	return t > 2 ? t - 2 : 0; /* both the clock and done_ns start at 1 */
}

uint64_t
et_fabric_lower_bound_ns(const struct et_fabric *f)
{
	uint32_t n = f->n_hosts;
	double bytes = (double)f->p.size * (n - 1) / n;
	uint32_t hops = et_fabric_longest_path_hops(&f->p.t);

	if (f->p.kind == ET_COLL_ALLREDUCE)
		bytes *= 2;
	return (uint64_t)(bytes * 8e9 / (double)f->p.host_link.rate_bps) +
	       hops * f->p.net.link.latency_ns;
}

void
et_fabric_free(struct et_fabric *f)
{
	for (uint32_t i = 0; f->h && i < f->n_hosts; i++) {
		struct et_fabric_host *h = &f->h[i];

		h->nic.eg.cap = NULL;
		et_nic_free(&h->nic);
		et_rt_host_free(&h->rt);
	}
	for (uint32_t i = 0; i < f->net.n_sw; i++)
		for (uint16_t k = 0; k < f->net.sw[i].n_ports; k++)
			et_switch_set_capture(&f->net.sw[i], k, NULL);
	for (uint32_t i = 0; i < f->n_caps; i++)
		et_capture_close(f->caps[i]);
	free(f->caps);
	et_far_free(f);
	free(f->h);
	if (f->net.sw)
		et_net_free(&f->net);
	et_pool_free(f->pool);
	et_coll_free(&f->sched);
	free(f->light_buf);
	memset(f, 0, sizeof(*f));
}
