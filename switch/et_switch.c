/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_jhash.h>
#include <rte_lpm.h>
#include <rte_mbuf.h>

#include "link/et_capture.h"
#include "base/et_csum.h"
#include "topo/et_path.h"
#include "wire/et_arp_frame.h"
#include "wire/et_pfc.h"
#include "et_switch.h"
#include "wire/et_wire.h"

#define BURST 32
/* the next hop of a port address's /32: the switch itself */
#define NH_LOCAL 0xffffffu

#define DROP_NAME(id, name) [ET_SW_DROP_##id] = #name,
static const char *const drop_names[ET_SW_DROP_COUNT] = {ET_SW_DROPS(DROP_NAME)};
#undef DROP_NAME

const char *
et_sw_drop_name(int d)
{
	return d >= 0 && d < ET_SW_DROP_COUNT ? drop_names[d] : "?";
}

ET_CTR_DEFINE(et_sw_port_ctrs, struct et_sw_port_stats, ET_SW_PORT_COUNTERS);

void
et_sw_params_default(struct et_sw_params *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = ET_SW_SOURCE_ROUTE;
	p->buffer_bytes = 64ull << 20;
	p->dt_alpha = 1.0;
	p->pfc = false;
	p->pfc_alpha = 1.0 / 8;
	p->detect_delay_ns = 100000000ull;
	p->queue_pkts = 1u << 15;
	p->ecmp_seed = 0x9e3779b9;
	p->max_frame = 9216; /* the usual jumbo limit of datacenter switches */
	p->arp_refill_ns = 10000000; /* as ethereal-node's responder */
	p->arp_burst = 8;
}

uint64_t
et_sw_default_ecn_k(uint64_t rate_bps)
{
	uint64_t k = rate_bps / 8 / 100000 / 7; /* bytes per 10 us, over 7 */

	return k < 20000 ? 20000 : k;
}

uint64_t
et_sw_pfc_headroom(uint64_t rate_bps, uint64_t latency_ns, uint32_t max_frame)
{
	return (uint64_t)(2.0 * (double)latency_ns * (double)rate_bps / 8e9) + 2ull * max_frame;
}

/* ---- buffer accounting and PFC ---- */

/* The poll runs a port's egress only when it is due or was changed: every
 * change outside et_egress_run() says so here. */
static inline void
touch(struct et_switch *sw, uint16_t pi)
{
	sw->eg_dirty |= 1ull << pi;
}

static void
send_pause(struct et_switch *sw, uint16_t pi, uint16_t quanta)
{
	struct et_sw_port *p = &sw->ports[pi];
	struct rte_mbuf *m = et_pfc_frame(sw->ctrl_pool, &p->mac, quanta);

	if (m == NULL || !et_egress_enqueue_ctrl(&p->eg, m)) {
		rte_pktmbuf_free(m);
		return;
	}
	touch(sw, pi);
	p->st.pause_tx++;
}

/* An ingress is paused (XOFF) when it holds more of the buffer than
 * pfc_alpha x the free buffer, and let go (XON) once it holds PFC_HYST
 * less than that. */
#define PFC_HYST (2 * 4096)

static uint64_t
pfc_xoff(const struct et_switch *sw)
{
	return (uint64_t)(sw->p.pfc_alpha * (double)(sw->p.buffer_bytes - sw->used));
}

/* A packet left an egress queue: give its buffer back to the ingress it
 * came in on.  The threshold rose for every ingress, so every paused one
 * is looked at, not only that one: an ingress paused while the buffer was
 * full, whose own frames have all left since, has nothing more to dequeue
 * and would stay paused for ever (PFC refreshes the XOFF), the switch
 * upstream filling behind it; that is what held the fat-tree in a storm
 * of timeouts (docs/reproduce.md, "Failure on the fat-tree"). */
static void
on_dequeue(void *ctx, const struct et_egress_slot *s, uint64_t now)
{
	struct et_switch *sw = ctx;
	uint32_t len = s->len;
	uint64_t t;

	sw->used -= len;
	sw->ports[s->port].in_bytes -= len;
	if (sw->xoff_ports == 0)
		return;
	t = pfc_xoff(sw);
	for (uint64_t x = sw->xoff_ports; x; x &= x - 1) {
		uint16_t pi = (uint16_t)__builtin_ctzll(x);

		if (sw->ports[pi].in_bytes + PFC_HYST < t) {
			sw->ports[pi].xoff = false;
			sw->xoff_ports &= ~(1ull << pi);
			send_pause(sw, pi, 0);
		}
	}
}

/* A received PAUSE/PFC frame stops our egress on that port. */
static void
on_pause(struct et_switch *sw, uint16_t pi, const uint8_t *f, uint32_t len,
	 uint64_t now)
{
	struct et_sw_port *p = &sw->ports[pi];
	uint16_t quanta;
	int rc = et_pfc_parse(f, len, &quanta);

	if (rc < 0) {
		p->st.drops[ET_SW_DROP_MALFORMED]++;
		return;
	}
	if (rc == 0) {
		p->st.drops[ET_SW_DROP_NON_IP]++; /* MAC control, not a pause */
		return;
	}
	p->st.pause_rx++;
	et_egress_pause(&p->eg, quanta, now);
	touch(sw, pi);
}

/* ---- set-up ---- */

static uint32_t lpm_seq;

int
et_switch_init(struct et_switch *sw, const char *name, const struct et_sw_params *p,
	       struct rte_mempool *ctrl_pool, int socket)
{
	struct rte_lpm_config cfg = {.max_rules = 4096, .number_tbl8s = 256};
	char n[RTE_LPM_NAMESIZE];

	memset(sw, 0, sizeof(*sw));
	if (!rte_is_power_of_2(p->queue_pkts) ||
	    p->buffer_bytes == 0 || p->dt_alpha <= 0 || p->pfc_alpha <= 0)
		return -EINVAL;
	snprintf(sw->name, sizeof(sw->name), "%s", name);
	sw->p = *p;
	sw->ctrl_pool = ctrl_pool;
	sw->rx_next = UINT64_MAX;
	for (uint16_t i = 0; i < ET_SW_MAX_PORTS; i++)
		sw->rx_at[i] = UINT64_MAX;
	if (p->compact_routes)
		return 0;
	/* unique per process: switches of two networks may share a name */
	snprintf(n, sizeof(n), "lpm%u", lpm_seq++);
	sw->lpm = rte_lpm_create(n, socket, &cfg);
	return sw->lpm ? 0 : -rte_errno;
}

void
et_switch_free(struct et_switch *sw)
{
	uint16_t i;

	for (i = 0; i < sw->n_ports; i++)
		et_egress_free(&sw->ports[i].eg);
	rte_lpm_free(sw->lpm);
	sw->lpm = NULL;
	sw->n_ports = 0;
}

static void
update_live_uplinks(struct et_switch *sw)
{
	uint16_t u;

	sw->n_live_up = 0;
	for (u = 0; u < sw->n_uplinks; u++)
		if (!sw->ports[sw->uplink_port[u]].down)
			sw->live_up[sw->n_live_up++] = sw->uplink_port[u];
}

int
et_switch_add_port(struct et_switch *sw, const struct et_port *port,
		   enum et_sw_role role, uint8_t uplink,
		   const struct rte_ether_addr *mac, const struct rte_ether_addr *peer_mac,
		   const struct et_link_model *lm)
{
	struct et_link_model model;
	struct et_sw_port *p;
	uint16_t i = sw->n_ports;

	if (i == ET_SW_MAX_PORTS)
		return -ENOSPC;
	if (role == ET_SW_UP) {
		if (uplink != sw->n_uplinks)
			return -EINVAL; /* uplinks are numbered 0, 1, ... in order */
		sw->uplink_port[sw->n_uplinks++] = (uint8_t)i;
	}
	p = &sw->ports[i];
	memset(p, 0, sizeof(*p));
	p->port = *port;
	/* every link draws its own faults: its seed mixed with our MAC there */
	model = *lm;
	model.seed = et_link_seed(lm->seed, mac_id(mac));
	if (et_egress_init(&p->eg, &p->port, &model, sw->p.queue_pkts))
		return -ENOMEM;
	p->eg.on_dequeue = on_dequeue;
	p->eg.ctx = sw;
	p->role = role;
	p->uplink = uplink;
	p->mac = *mac;
	p->peer_mac = *peer_mac;
	et_token_bucket_init(&p->arp_tx, sw->p.arp_refill_ns, sw->p.arp_burst);
	sw->n_ports++;
	update_live_uplinks(sw);
	return i;
}

static inline uint32_t
depth_mask(uint8_t depth)
{
	return depth ? ~0u << (32 - depth) : 0;
}

static bool
route_present(const struct et_switch *sw, uint32_t prefix, uint8_t depth, uint32_t *nh)
{
	if (sw->lpm)
		return rte_lpm_is_rule_present(sw->lpm, prefix, depth, nh) == 1;
	for (uint16_t i = 0; i < sw->n_routes; i++)
		if (sw->route[i].mask == depth_mask(depth) &&
		    sw->route[i].prefix == (prefix & depth_mask(depth))) {
			*nh = sw->route[i].nh;
			return true;
		}
	return false;
}

static int
route_add(struct et_switch *sw, uint32_t prefix, uint8_t depth, uint32_t nh)
{
	uint16_t i;

	if (sw->lpm)
		return rte_lpm_add(sw->lpm, prefix, depth, nh);
	if (sw->n_routes == ET_SW_MAX_PORTS)
		return -ENOSPC;
	/* keep longer prefixes first: the first match is the longest */
	for (i = sw->n_routes; i > 0 && sw->route[i - 1].mask < depth_mask(depth); i--)
		sw->route[i] = sw->route[i - 1];
	sw->route[i].prefix = prefix & depth_mask(depth);
	sw->route[i].mask = depth_mask(depth);
	sw->route[i].nh = nh;
	sw->n_routes++;
	return 0;
}

static inline int
route_lookup(const struct et_switch *sw, uint32_t dst, uint32_t *nh)
{
	if (sw->lpm)
		return rte_lpm_lookup(sw->lpm, dst, nh);
	for (uint16_t i = 0; i < sw->n_routes; i++)
		if ((dst & sw->route[i].mask) == sw->route[i].prefix) {
			*nh = sw->route[i].nh;
			return 0;
		}
	return -ENOENT;
}

int
et_switch_add_route(struct et_switch *sw, uint32_t prefix, uint8_t depth, uint16_t port)
{
	uint32_t nh;
	struct et_sw_group *g;

	if (port >= sw->n_ports || depth > 32)
		return -EINVAL;
	if (route_present(sw, prefix, depth, &nh)) {
		if (nh == NH_LOCAL)
			return -EEXIST; /* a port's address */
		g = &sw->groups[nh];
	} else {
		if (sw->n_groups == ET_SW_MAX_PORTS)
			return -ENOSPC;
		nh = sw->n_groups;
		if (route_add(sw, prefix, depth, nh))
			return -ENOSPC;
		sw->n_groups++;
		g = &sw->groups[nh];
		g->n = 0;
	}
	if (g->n == ET_SW_MAX_PORTS)
		return -ENOSPC;
	g->port[g->n++] = (uint8_t)port;
	return 0;
}

int
et_switch_set_port_ip(struct et_switch *sw, uint16_t port, uint32_t ip)
{
	uint32_t nh;

	if (port >= sw->n_ports || (sw->ports[port].ip && ip != sw->ports[port].ip))
		return -EINVAL;
	if (ip == 0)
		return 0;
	/* a local /32: IPv4 to the address stops here instead of going up
	 * (and coming back down, until its TTL ran out) */
	if (route_present(sw, ip, 32, &nh)) {
		if (nh != NH_LOCAL)
			return -EEXIST;
	} else if (route_add(sw, ip, 32, NH_LOCAL)) {
		return -ENOSPC;
	}
	sw->ports[port].ip = ip;
	return 0;
}

bool
et_switch_routes(const struct et_switch *sw, uint32_t dst)
{
	uint32_t nh;

	return route_lookup(sw, dst, &nh) == 0 && nh != NH_LOCAL;
}

void
et_switch_fail(struct et_switch *sw, uint16_t port, uint64_t at_ns, uint64_t duration_ns)
{
	struct et_sw_port *p = &sw->ports[port];

	p->fail_at = at_ns ? at_ns : 1;
	p->restore_at = duration_ns ? p->fail_at + duration_ns : 0;
	p->eg.down_from = p->fail_at;
	p->eg.down_until = p->restore_at ? p->restore_at : UINT64_MAX;
	sw->fail_next = 0; /* look at the schedule next poll */
}

void
et_switch_restore(struct et_switch *sw, uint16_t port, uint64_t at_ns)
{
	struct et_sw_port *p = &sw->ports[port];

	p->fail_at = 0;
	p->restore_at = at_ns ? at_ns : 1;
	if (p->eg.down_until > p->restore_at)
		p->eg.down_until = p->restore_at;
	sw->fail_next = 0;
}

static uint32_t update_failures(struct et_switch *sw, uint64_t now);

bool
et_switch_set_link(struct et_switch *sw, uint16_t port, bool up, uint64_t now)
{
	struct et_sw_port *p = &sw->ports[port];
	bool was_up = !p->link_down, seen = p->link_seen;

	p->link_down = !up;
	p->link_seen |= up;
	if (up == was_up || !seen)
		return false;
	if (up) {
		et_switch_restore(sw, port, now);
		/* a host's link: in use from this instant, for what it sends
		 * now and what is sent to it */
		p->restore_now = p->role == ET_SW_DOWN;
		if (p->restore_now)
			update_failures(sw, now);
	} else {
		et_switch_fail(sw, port, now, 0);
	}
	return true;
}

struct et_rx_hint
et_switch_rx_hint(struct et_switch *sw, uint16_t port)
{
	sw->rx_hints = true;
	sw->rx_ready |= 1ull << port; /* whatever came before */
	et_port_set_timed(&sw->ports[port].port, true);
	return (struct et_rx_hint){&sw->ports[port].port, &sw->rx_at[port], &sw->rx_next};
}

void
et_switch_no_rx_hints(struct et_switch *sw)
{
	sw->rx_hints = false;
	sw->rx_ready = 0;
	sw->rx_next = UINT64_MAX;
	for (uint16_t i = 0; i < ET_SW_MAX_PORTS; i++)
		sw->rx_at[i] = UINT64_MAX;
	for (uint16_t i = 0; i < sw->n_ports; i++)
		et_port_set_timed(&sw->ports[i].port, false);
}

void
et_switch_set_capture(struct et_switch *sw, uint16_t port, struct et_capture *c)
{
	sw->ports[port].cap = c;
	sw->ports[port].eg.cap = c;
}

/* The next instant update_failures() has something to do; UINT64_MAX if
 * none. */
static uint64_t
failure_next(const struct et_switch *sw)
{
	uint64_t t = UINT64_MAX;
	uint16_t i;

	for (i = 0; i < sw->n_ports; i++) {
		const struct et_sw_port *p = &sw->ports[i];

		if (p->fail_at && p->fail_at < t)
			t = p->fail_at;
		if (p->restore_at && p->restore_at < t)
			t = p->restore_at;
		if (p->down != p->failed && p->failed_since + sw->p.detect_delay_ns < t)
			t = p->failed_since + sw->p.detect_delay_ns;
	}
	return t;
}

/* Apply the failure schedule and the detection delay. */
static uint32_t
update_failures(struct et_switch *sw, uint64_t now)
{
	uint32_t changed = 0;
	uint16_t i;

	if (now < sw->fail_next)
		return 0;
	for (i = 0; i < sw->n_ports; i++) {
		struct et_sw_port *p = &sw->ports[i];

		/* the detection delay runs from the scheduled instant, not from
		 * the poll that noticed it */
		if (p->fail_at && now >= p->fail_at && !p->failed) {
			p->failed = p->eg.failed = true;
			touch(sw, i);
			p->failed_since = p->fail_at;
			p->fail_at = 0;
			changed++;
		}
		if (p->restore_at && now >= p->restore_at) {
			if (p->failed) {
				p->failed = p->eg.failed = false;
				touch(sw, i);
				p->failed_since = p->restore_at;
				if (p->restore_now) /* noticed already: no delay to run */
					p->failed_since -= RTE_MIN(p->failed_since,
								   sw->p.detect_delay_ns);
				changed++;
			}
			p->restore_at = 0;
			p->restore_now = false;
		}
		/* the switch notices either change only after the delay */
		if (p->down != p->failed && now >= p->failed_since + sw->p.detect_delay_ns) {
			p->down = p->failed;
			update_live_uplinks(sw);
			changed++;
		}
	}
	sw->fail_next = failure_next(sw);
	return changed;
}

/* ---- forwarding ---- */

static inline void
drop(struct et_sw_port *p, enum et_sw_drop why, struct rte_mbuf *m)
{
	p->st.drops[why]++;
	rte_pktmbuf_free(m);
}

static inline uint32_t
flow_hash(const struct et_switch *sw, const uint8_t *ip, const uint8_t *l4, bool ports)
{
	uint32_t pp = ports ? (uint32_t)et_load16(l4) << 16 | et_load16(l4 + 2) : 0;

	return rte_jhash_3words(et_load16(ip + 12) << 16 | et_load16(ip + 14),
				et_load16(ip + 16) << 16 | et_load16(ip + 18),
				pp ^ ip[9], sw->p.ecmp_seed);
}

/* Pick a live member of a group of parallel links, starting at want. */
static inline int
pick_live(const struct et_switch *sw, const uint8_t *ports, uint32_t n, uint32_t want)
{
	uint32_t k;

	for (k = 0; k < n; k++) {
		uint8_t pi = ports[(want + k) % n];

		if (!sw->ports[pi].down)
			return pi;
	}
	return -1;
}

int
et_switch_withdraw(struct et_switch *sw, uint32_t prefix, uint8_t depth, uint8_t uplink,
		   uint64_t at_ns)
{
	uint32_t mask = depth_mask(depth);

	if (sw->n_withdrawn == ET_SW_MAX_WITHDRAWN)
		return -ENOSPC;
	sw->withdrawn[sw->n_withdrawn].prefix = prefix & mask;
	sw->withdrawn[sw->n_withdrawn].mask = mask;
	sw->withdrawn[sw->n_withdrawn].uplink = uplink;
	sw->withdrawn[sw->n_withdrawn++].at = at_ns;
	return 0;
}

/* The live uplinks still announced for dst, in uplink order. */
static uint32_t
announced_uplinks(const struct et_switch *sw, uint32_t dst, uint64_t now, uint8_t *out)
{
	uint32_t n = 0;

	for (uint16_t u = 0; u < sw->n_uplinks; u++) {
		uint16_t w;

		if (sw->ports[sw->uplink_port[u]].down)
			continue;
		for (w = 0; w < sw->n_withdrawn; w++)
			if (sw->withdrawn[w].uplink == u && now >= sw->withdrawn[w].at &&
			    (dst & sw->withdrawn[w].mask) == sw->withdrawn[w].prefix)
				break;
		if (w == sw->n_withdrawn)
			out[n++] = sw->uplink_port[u];
	}
	return n;
}

/* acks_first: an acknowledgement (ACK, NAK, CNP) takes the control queue,
 * outside the buffer; false when that queue is full (then it queues as
 * data). */
static bool
enqueue_ack(struct et_switch *sw, uint16_t in, uint16_t out, struct rte_mbuf *m)
{
	m->port = in;
	if (!et_egress_enqueue_ctrl(&sw->ports[out].eg, m))
		return false;
	touch(sw, out);
	return true;
}

static void
enqueue(struct et_switch *sw, uint16_t in, uint16_t out, struct rte_mbuf *m,
	uint8_t *ip, uint64_t now)
{
	struct et_sw_port *o = &sw->ports[out];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint64_t k = sw->p.ecn_k_bytes ? sw->p.ecn_k_bytes
				       : et_sw_default_ecn_k(o->eg.lm.rate_bps);
	uint64_t freebuf = sw->p.buffer_bytes - sw->used;

	if (len > freebuf ||
	    (!sw->p.pfc && o->eg.q_bytes + len > sw->p.dt_alpha * (double)freebuf)) {
		drop(o, ET_SW_DROP_BUFFER, m);
		return;
	}
	if (o->eg.q_bytes > k && (et_ipv4_ecn(ip) == ET_ECN_ECT0 ||
				  et_ipv4_ecn(ip) == ET_ECN_ECT1)) {
		et_ipv4_set_ecn(ip, ET_ECN_CE);
		o->st.ecn_marks++;
	}
	m->port = in;
	if (!et_egress_enqueue(&o->eg, m)) {
		drop(o, ET_SW_DROP_QUEUE, m);
		return;
	}
	touch(sw, out);
	sw->used += len;
	if (sw->used > sw->used_max)
		sw->used_max = sw->used;
	sw->ports[in].in_bytes += len;
	if (sw->p.pfc && !sw->ports[in].xoff && sw->ports[in].in_bytes > pfc_xoff(sw)) {
		sw->ports[in].xoff = true;
		sw->xoff_ports |= 1ull << in;
		sw->ports[in].xoff_sent_at = now;
		send_pause(sw, in, ET_PFC_QUANTA_MAX);
	}
}

/* An ARP frame on port pi: a request for the port's address is answered
 * (the request's mbuf becomes the reply, ahead of the data like PAUSE);
 * anything else is dropped, counted. */
static void
arp_in(struct et_switch *sw, uint16_t pi, struct rte_mbuf *m, uint64_t now)
{
	struct et_sw_port *p = &sw->ports[pi];
	struct et_arp_msg req;
	uint8_t *out;

	if (et_arp_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &req))
		return drop(p, ET_SW_DROP_MALFORMED, m);
	/* replies, gratuitous ARP and requests for others (a host below asking
	 * for its neighbour: it must route through us) are not ours */
	if (req.op != ET_ARP_OP_REQUEST || p->ip == 0 || req.tpa != p->ip)
		return drop(p, ET_SW_DROP_NON_IP, m);
	p->st.arp_requests++;
	if (!et_token_bucket_take(&p->arp_tx, now)) {
		p->st.arp_unanswered++;
		rte_pktmbuf_free(m);
		return;
	}
	rte_pktmbuf_reset(m);
	out = (uint8_t *)rte_pktmbuf_append(m, ET_ARP_FRAME_LEN);
	if (out == NULL ||
	    !et_arp_build_reply(out, ET_ARP_FRAME_LEN, &req, p->mac.addr_bytes, p->ip) ||
	    !et_egress_enqueue_ctrl(&p->eg, m)) {
		p->st.arp_unanswered++;
		rte_pktmbuf_free(m);
		return;
	}
	touch(sw, pi);
	p->st.arp_replies++;
}

/* Whatever is not IPv4 leaves forward() at its first test and comes here,
 * off the forwarding path: PAUSE/PFC, ARP, and the rest, dropped. */
static __rte_noinline void
not_ipv4(struct et_switch *sw, uint16_t pi, struct rte_mbuf *m, uint64_t now)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t type = et_load16(f + 12);

	if (type == ET_ETHER_TYPE_MAC_CONTROL) {
		on_pause(sw, pi, f, rte_pktmbuf_data_len(m), now);
		rte_pktmbuf_free(m);
	} else if (type == ET_ETHER_TYPE_ARP) {
		arp_in(sw, pi, m, now);
	} else {
		drop(&sw->ports[pi], ET_SW_DROP_NON_IP, m);
	}
}

static void
forward(struct et_switch *sw, uint16_t in, struct rte_mbuf *m, uint64_t now)
{
	struct et_sw_port *ip_ = &sw->ports[in];
	uint8_t *f;
	uint32_t len, nh, ihl, tot, dst;
	uint8_t *ip, *l4;
	bool roce, whole;
	int out;

	ip_->st.rx_pkts++;
	ip_->st.rx_bytes += rte_pktmbuf_pkt_len(m);
	if (ip_->failed)
		return drop(ip_, ET_SW_DROP_FAILED, m);
	if (unlikely(rte_pktmbuf_pkt_len(m) > sw->p.max_frame))
		return drop(ip_, ET_SW_DROP_OVERSIZE, m);
	/* a PMD with small buffers (memif's default 2 KB) chains big frames */
	if (unlikely(m->nb_segs != 1) && rte_pktmbuf_linearize(m) != 0)
		return drop(ip_, ET_SW_DROP_MALFORMED, m);
	f = rte_pktmbuf_mtod(m, uint8_t *);
	len = rte_pktmbuf_data_len(m);
	if (len < RTE_ETHER_HDR_LEN)
		return drop(ip_, ET_SW_DROP_MALFORMED, m);
	if (unlikely(et_load16(f + 12) != RTE_ETHER_TYPE_IPV4))
		return not_ipv4(sw, in, m, now);
	ip = f + RTE_ETHER_HDR_LEN;
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	if (len < RTE_ETHER_HDR_LEN + 20 || (ip[0] >> 4) != 4 || ihl < 20 ||
	    (tot = et_load16(ip + 2)) < ihl || tot > len - RTE_ETHER_HDR_LEN)
		return drop(ip_, ET_SW_DROP_MALFORMED, m);
	if (!et_ipv4_csum_ok(ip, ihl))
		return drop(ip_, ET_SW_DROP_IP_CSUM, m);
	if (ip[8] <= 1)
		return drop(ip_, ET_SW_DROP_TTL, m);
	l4 = ip + ihl;
	/* not a fragment; a fragment is hashed on its addresses alone (only
	 * the first has the ports), so all of a datagram's take one path */
	whole = !(et_load16(ip + 6) & 0x3fff);
	roce = false;
	if (ip[9] == IPPROTO_UDP && whole) {
		/* UDP's length is the IP payload's; RoCEv2 (UDP 4791) has room
		 * for a BTH and the ICRC */
		if (tot < ihl + 8 || et_load16(l4 + 4) != tot - ihl)
			return drop(ip_, ET_SW_DROP_MALFORMED, m);
		roce = et_load16(l4 + 2) == ET_ROCE_UDP_PORT;
		if (roce && tot < ihl + 8 + ET_BTH_LEN + ET_ICRC_LEN)
			return drop(ip_, ET_SW_DROP_MALFORMED, m);
	}

	dst = (uint32_t)et_load16(ip + 16) << 16 | et_load16(ip + 18);
	if (route_lookup(sw, dst, &nh) == 0) {
		const struct et_sw_group *g;

		if (unlikely(nh == NH_LOCAL))
			return drop(ip_, ET_SW_DROP_LOCAL, m);
		g = &sw->groups[nh];
		out = pick_live(sw, g->port, g->n,
				g->n == 1 ? 0
				: roce ? et_path_down_lane(et_load16(l4), g->n)
				       : flow_hash(sw, ip, l4, whole && ip[9] == IPPROTO_UDP) % g->n);
	} else if (roce && sw->p.mode == ET_SW_SOURCE_ROUTE) {
		uint8_t u = et_path_uplink(et_load16(l4));

		if (u >= sw->n_uplinks)
			return drop(ip_, ET_SW_DROP_BAD_UPLINK, m);
		if (unlikely(sw->n_withdrawn)) {
			uint8_t ok[ET_SW_MAX_UPLINKS];
			uint32_t n = announced_uplinks(sw, dst, now, ok), k;

			for (k = 0; k < n && ok[k] != sw->uplink_port[u]; k++)
				;
			out = k < n ? ok[k] : n ? ok[u % n] : -1;
		} else {
			out = pick_live(sw, sw->uplink_port, sw->n_uplinks, u);
		}
		if (out >= 0 && out != sw->uplink_port[u])
			sw->ports[sw->uplink_port[u]].st.reroutes++;
	} else {
		bool ports = whole && (ip[9] == IPPROTO_UDP || ip[9] == IPPROTO_TCP);
		uint32_t h = flow_hash(sw, ip, l4, ports && tot >= ihl + 4);

		if (unlikely(sw->n_withdrawn)) {
			uint8_t ok[ET_SW_MAX_UPLINKS];
			uint32_t n = announced_uplinks(sw, dst, now, ok);

			out = n ? ok[h % n] : -1;
		} else {
			out = sw->n_live_up ? sw->live_up[h % sw->n_live_up] : -1;
		}
	}
	if (out < 0)
		return drop(ip_, ET_SW_DROP_NO_ROUTE, m);
	if (unlikely(sw->ports[out].link_down))
		return drop(&sw->ports[out], ET_SW_DROP_LINK_DOWN, m);
	if (roce)
		et_roce_set_sport(ip, et_path_swap(et_load16(l4)));
	et_ipv4_dec_ttl(ip);
	memcpy(f, &sw->ports[out].peer_mac, RTE_ETHER_ADDR_LEN);
	memcpy(f + RTE_ETHER_ADDR_LEN, &sw->ports[out].mac, RTE_ETHER_ADDR_LEN);
	if (sw->p.acks_first && roce && et_bth_is_ack_or_cnp(l4[8]) &&
	    enqueue_ack(sw, in, (uint16_t)out, m))
		return;
	enqueue(sw, in, (uint16_t)out, m, ip, now);
}

/* The lowest bit of mask at or above bit from; 64 if none. */
static inline uint32_t
next_bit(uint64_t mask, uint32_t from)
{
	mask = from < 64 ? mask & (~0ull << from) : 0;
	return mask ? (uint32_t)__builtin_ctzll(mask) : 64;
}

static inline uint64_t
all_ports(const struct et_switch *sw)
{
	return sw->n_ports == 64 ? ~0ull : (1ull << sw->n_ports) - 1;
}

/* Frames looked at ahead of the one forwarded. */
#define LOOKAHEAD 2

/* Receive on the ports where frames have arrived (all of them without
 * hints), then forward in port order.  All bursts are read first so that their
 * cold headers are fetched together, not one miss after another. */
static uint32_t
poll_rx(struct et_switch *sw, uint64_t now)
{
	struct rte_mbuf *burst[ET_SW_MAX_PORTS * BURST];
	uint8_t from[ET_SW_MAX_PORTS * BURST];
	uint64_t todo = sw->rx_hints ? sw->rx_ready : all_ports(sw);
	bool timed = sw->rx_next <= now; /* a frame has arrived somewhere */
	uint32_t n = 0, i, k;
	uint16_t got;

	if (timed) /* the ports where frames have arrived by now */
		for (i = 0; i < sw->n_ports; i++)
			todo |= (uint64_t)(sw->rx_at[i] <= now) << i;
	sw->rx_ready = 0;
	for (i = next_bit(todo, 0); i < sw->n_ports; i = next_bit(todo, i + 1)) {
		got = et_port_rx_at(&sw->ports[i].port, burst + n, BURST, now);
		if (got == BURST)
			sw->rx_ready |= 1ull << i; /* there may be more */
		if (timed)
			sw->rx_at[i] = et_port_next_arrival(&sw->ports[i].port);
		if (got && sw->ports[i].cap)
			et_capture_frames(sw->ports[i].cap, burst + n, got, false, now);
		/* a frame from it proves its link up before the next reading of
		 * the link says so: the answer to it must not be dropped */
		if (got && sw->ports[i].link_down)
			et_switch_set_link(sw, (uint16_t)i, true, now);
		et_prefetch_mbufs(burst + n, got);
		memset(from + n, (int)i, got);
		n += got;
	}
	if (timed) {
		sw->rx_next = UINT64_MAX;
		for (i = 0; i < sw->n_ports; i++)
			if (sw->rx_at[i] < sw->rx_next)
				sw->rx_next = sw->rx_at[i];
	}
	for (k = 0; k < n && k < LOOKAHEAD; k++)
		et_prefetch_frame(burst[k]);
	for (k = 0; k < n; k++) {
		if (k + LOOKAHEAD < n)
			et_prefetch_frame(burst[k + LOOKAHEAD]);
		forward(sw, from[k], burst[k], now);
	}
	return n;
}

/* Run the egresses that are due, were changed, or hold a peer off, in
 * port order; one egress's dequeue can change another's (XON), so the
 * set is read again at each step. */
static uint32_t
poll_egress(struct et_switch *sw, uint64_t now)
{
	uint64_t due = 0;
	uint32_t work = 0, i;

	for (i = 0; i < sw->n_ports; i++)
		due |= (uint64_t)(sw->eg_next[i] <= now) << i;
	for (i = next_bit(due | sw->eg_dirty | sw->xoff_ports, 0); i < sw->n_ports;
	     i = next_bit(due | sw->eg_dirty | sw->xoff_ports, i + 1)) {
		struct et_sw_port *p = &sw->ports[i];
		uint64_t hold;

		/* a pause that lasts: say XOFF again before the last one expires */
		if (p->xoff && p->eg.lm.rate_bps) {
			hold = et_pfc_pause_ns(ET_PFC_QUANTA_MAX, p->eg.lm.rate_bps) / 2;
			if (now >= p->xoff_sent_at + hold) {
				send_pause(sw, (uint16_t)i, ET_PFC_QUANTA_MAX);
				p->xoff_sent_at = now;
			}
		}
		work += et_egress_run(&p->eg, now);
		sw->eg_dirty &= ~(1ull << i);
		sw->eg_next[i] = et_egress_next_event(&p->eg, now);
	}
	return work;
}

uint32_t
et_switch_poll(struct et_switch *sw, uint64_t now)
{
	uint32_t work = update_failures(sw, now);

	work += poll_rx(sw, now);
	return work + poll_egress(sw, now);
}

uint64_t
et_switch_next_event(const struct et_switch *sw, uint64_t now)
{
	uint64_t t = sw->fail_next < sw->rx_next ? sw->fail_next : sw->rx_next;
	uint16_t i;

	if (sw->eg_dirty || (sw->rx_hints && sw->rx_ready))
		return now;
	for (i = 0; i < sw->n_ports; i++)
		if (sw->eg_next[i] < t)
			t = sw->eg_next[i];
	return t;
}
