/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA CM on a NIC: the agent on QP 1 (MADs in from the NIC's GSI hook,
 * out as UD SEND ONLY frames on its control path) and the ids that bind
 * cm/et_cm's connections to QPs.  A QP is bound as soon as the CM's state
 * allows, right after the MAD that allowed it: the peer may send the
 * moment it has our RTU, before our consumer polls its events.
 */
#include "host/et_rdmacm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire/et_wire.h"

#define LEARNED 16               /* peers' MACs learnt from their MADs */
/* MADs waiting for ARP: a ring that starts this small and doubles up to
 * PARK_MAX (a program may connect thousands before the first ARP answer) */
#define PARK_FIRST 16u
#define PARK_MAX 4096u
#define PARK_NS 1000000000ull    /* how long they wait */
#define ARP_EVERY_NS 200000000ull
/* waiting ids looked at per poll (settle_some): what a poll costs does not
 * grow with how many connections are being set up */
#define SETTLE_BATCH 32u

struct et_rdmacm_id {
	struct et_rdmacm *cm;
	struct et_cm_conn *conn;
	struct et_qp *qp;
	int (*bind)(void *bind_ctx, const struct et_rdmacm_bind *b);
	void *bind_ctx;
	void *ctx;
	uint16_t ps, port;      /* RDMA CM's port space (TCP: RC, UDP: UD) and port */
	uint32_t peer_ip, peer_psn, mtu;
	bool active;
	bool sidr;              /* a UD id's: SIDR_REQ and SIDR_REP, no QP bound */
	/* a listener (as rdma_cm's): the CM's context of its requests, so
	 * that a connection's context is always an id; never waits */
	bool listening;
	bool bound;             /* the QP has the peer's parameters and is ready */
	bool waiting;           /* on the list of ids settle_some() looks at */
	/* every id of the CM; a listener unlistened: the next such */
	struct et_rdmacm_id *next, *prev;
	struct et_rdmacm_id *wnext, *wprev; /* the waiting ones */
};

struct parked {
	uint32_t ip;
	uint64_t since;
	uint8_t mad[ET_MAD_LEN];
};

struct et_rdmacm {
	struct et_nic *nic;
	struct et_rdmacm_conf conf;
	struct et_cm *cm;
	struct et_rdmacm_id *ids;     /* every id held */
	struct et_rdmacm_id *waiting; /* the ids whose QP is not settled yet */
	struct et_rdmacm_id *cursor;  /* the next of them settle_some() looks at */
	uint32_t n_waiting;
	struct et_rdmacm_id **ports;  /* the listeners, by port: a binary search */
	uint32_t n_ports, cap_ports;
	struct et_rdmacm_id *old_ports; /* unlistened (requests may point at them) */
	struct {
		uint32_t ip;
		uint8_t mac[6];
	} learned[LEARNED];
	uint32_t learned_next;
	struct parked *park;          /* a ring: park_head .. + n_park */
	uint32_t park_head, n_park, park_cap;
	uint64_t next_arp;
	uint32_t psn;                 /* of our UD SENDs (nobody checks it) */
	struct et_rdmacm_stats st;
};

ET_CTR_DEFINE(et_rdmacm_ctrs, struct et_rdmacm_stats, ET_RDMACM_COUNTERS);

void
et_rdmacm_conf_default(struct et_rdmacm_conf *c)
{
	memset(c, 0, sizeof(*c));
	et_cm_conf_default(&c->cm);
}

/* ---- MACs of peers ---- */

static bool
has_next_hop(const struct et_rdmacm *cm)
{
	static const struct rte_ether_addr zero;

	return memcmp(&cm->conf.next_hop, &zero, sizeof(zero)) != 0;
}

/* The MAC frames for ip go to; NULL when not known yet. */
static const uint8_t *
mac_of(const struct et_rdmacm *cm, uint32_t ip)
{
	const uint8_t *m;

	if (has_next_hop(cm))
		return cm->conf.next_hop.addr_bytes;
	if (cm->nic->arp && (m = et_arp_lookup(cm->nic->arp, ip)) != NULL)
		return m;
	for (uint32_t i = 0; i < LEARNED; i++)
		if (cm->learned[i].ip == ip)
			return cm->learned[i].mac;
	return NULL;
}

static void
learn(struct et_rdmacm *cm, uint32_t ip, const uint8_t mac[6])
{
	uint32_t i;

	for (i = 0; i < LEARNED && cm->learned[i].ip != ip; i++)
		;
	if (i == LEARNED)
		i = cm->learned_next++ % LEARNED;
	cm->learned[i].ip = ip;
	memcpy(cm->learned[i].mac, mac, 6);
}

/* ---- MADs out ---- */

static void
send_mad(struct et_rdmacm *cm, uint32_t ip, const uint8_t *mac, const uint8_t *mad)
{
	struct et_nic *n = cm->nic;
	struct et_roce_hdr h = {
		.src_mac = n->mac, .src_ip = n->ip, .dst_ip = ip, .dscp = cm->conf.dscp, .ttl = 64,
		.udp_sport = cm->conf.path_id, .opcode = ET_OP_UD_SEND_ONLY,
		.pkey = ET_PKEY_DEFAULT, .dest_qp = ET_QPN_GSI, .psn = cm->psn++ & ET_PSN_MASK,
		.deth_qkey = ET_GSI_QKEY, .deth_src_qp = ET_QPN_GSI};
	uint8_t f[ET_ETH_HLEN + ET_IPV4_HLEN + ET_UDP_HLEN + ET_BTH_LEN + ET_DETH_LEN +
		  ET_MAD_LEN + ET_ICRC_LEN];
	int len;

	memcpy(h.dst_mac.addr_bytes, mac, 6);
	len = et_roce_build(f, sizeof(f), &h, mad, ET_MAD_LEN);
	if (len > 0 && et_nic_gsi_send(n, f, len) == 0)
		cm->st.tx_mads++;
	else
		cm->st.tx_nic_drop++;
}

static struct parked *
parked(struct et_rdmacm *cm, uint32_t k)
{
	return &cm->park[(cm->park_head + k) % cm->park_cap];
}

/* A full ring twice as big (up to PARK_MAX), its MADs from 0 on; false
 * when it may not grow. */
static bool
park_grow(struct et_rdmacm *cm)
{
	uint32_t cap = cm->park_cap ? 2 * cm->park_cap : PARK_FIRST;
	struct parked *p;

	if (cap > PARK_MAX || (p = malloc(cap * sizeof(*p))) == NULL)
		return false;
	for (uint32_t k = 0; k < cm->n_park; k++)
		p[k] = *parked(cm, k);
	free(cm->park);
	cm->park = p;
	cm->park_cap = cap;
	cm->park_head = 0;
	return true;
}

/* A MAD for ip: out now, or held until ARP answers. */
static void
out_mad(struct et_rdmacm *cm, uint32_t ip, const uint8_t *mad, uint64_t now)
{
	const uint8_t *mac = mac_of(cm, ip);
	struct parked *p;

	if (mac) {
		send_mad(cm, ip, mac, mad);
		return;
	}
	if (cm->n_park == cm->park_cap && !park_grow(cm)) {
		if (cm->n_park == 0)
			return; /* no memory for the first: the CM sends it again */
		/* the oldest goes: the CM sends it again */
		cm->park_head = (cm->park_head + 1) % cm->park_cap;
		cm->n_park--;
		cm->st.tx_unresolved++;
	}
	p = parked(cm, cm->n_park++);
	*p = (struct parked){.ip = ip, .since = now};
	memcpy(p->mad, mad, ET_MAD_LEN);
	cm->st.tx_parked++;
	if (now >= cm->next_arp) {
		et_nic_arp_request(cm->nic, ip, now);
		cm->next_arp = now + ARP_EVERY_NS;
	}
}

static void
drain_out(struct et_rdmacm *cm, uint64_t now)
{
	struct et_cm_out o;

	while (et_cm_pop_out(cm->cm, &o))
		out_mad(cm, o.dst_ip, o.mad, now);
}

/* What ARP answered for leaves, what waited too long is given up; the
 * rest keeps its order. */
static void
unpark(struct et_rdmacm *cm, uint64_t now)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < cm->n_park; i++) {
		struct parked *p = parked(cm, i);
		const uint8_t *mac = mac_of(cm, p->ip);

		if (mac)
			send_mad(cm, p->ip, mac, p->mad);
		else if (now - p->since > PARK_NS)
			cm->st.tx_unresolved++;
		else {
			if (now >= cm->next_arp) {
				et_nic_arp_request(cm->nic, p->ip, now);
				cm->next_arp = now + ARP_EVERY_NS;
			}
			if (k != i)
				*parked(cm, k) = *p;
			k++;
		}
	}
	cm->n_park = k;
}

/* ---- ids and their QPs ---- */

static struct et_rdmacm_id *
id_new(struct et_rdmacm *cm)
{
	struct et_rdmacm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->cm = cm;
	id->next = cm->ids;
	if (cm->ids)
		cm->ids->prev = id;
	cm->ids = id;
	return id;
}

/* On or off the waiting list (settle_some's cursor passes an id that
 * leaves it). */
static void
set_waiting(struct et_rdmacm *cm, struct et_rdmacm_id *id, bool on)
{
	if (id->waiting == on)
		return;
	id->waiting = on;
	if (on) {
		id->wprev = NULL;
		id->wnext = cm->waiting;
		if (cm->waiting)
			cm->waiting->wprev = id;
		cm->waiting = id;
		cm->n_waiting++;
		return;
	}
	if (cm->cursor == id)
		cm->cursor = id->wnext;
	if (id->wprev)
		id->wprev->wnext = id->wnext;
	else
		cm->waiting = id->wnext;
	if (id->wnext)
		id->wnext->wprev = id->wprev;
	cm->n_waiting--;
}

static void
id_free(struct et_rdmacm *cm, struct et_rdmacm_id *id)
{
	set_waiting(cm, id, false);
	if (id->prev)
		id->prev->next = id->next;
	else
		cm->ids = id->next;
	if (id->next)
		id->next->prev = id->prev;
	free(id);
}

/* The peer's QPN, its Starting PSN (where our sends start) and the path
 * MTU into the QP, which is then ready to send to the peer's MAC. */
static int
bind_qp(struct et_rdmacm *cm, struct et_rdmacm_id *id)
{
	const uint8_t *mac = mac_of(cm, id->peer_ip);

	if (id->bind) {
		struct rte_ether_addr m;
		struct et_rdmacm_bind b = {
			.peer_ip = id->peer_ip, .peer_qpn = et_cm_conn_peer_qpn(id->conn),
			.peer_psn = et_cm_conn_peer_psn(id->conn), .mtu = id->mtu,
			.mac = mac ? memcpy(m.addr_bytes, mac, 6), &m : NULL};

		if (id->bind(id->bind_ctx, &b))
			return -EINVAL;
		id->bound = true;
		return 0;
	}
	if (id->qp == NULL || /* the program destroyed it meanwhile */
	    et_qp_set_peer_path(id->qp, et_cm_conn_peer_psn(id->conn), id->mtu) ||
	    et_qp_connect(id->qp, et_cm_conn_peer_qpn(id->conn)))
		return -EINVAL;
	if (mac) {
		struct rte_ether_addr m;

		memcpy(m.addr_bytes, mac, 6);
		et_qp_set_dest_mac(id->qp, &m);
	}
	if (et_qp_ready(id->qp))
		return -EINVAL;
	id->bound = true;
	return 0;
}

/* What the CM's state now allows for a waiting id: an active side's QP
 * bound once the REP is in; a passive side established by the first
 * packet its QP took, should the RTU be late; off the list once settled. */
static void
settle(struct et_rdmacm *cm, struct et_rdmacm_id *id, uint64_t now)
{
	enum et_cm_state s = et_cm_conn_state(id->conn);

	if (id->active && s == ET_CMS_ESTABLISHED) {
		if (bind_qp(cm, id)) {
			cm->st.bind_fail++;
			et_cm_disconnect(cm->cm, id->conn, now);
		}
		set_waiting(cm, id, false);
	} else if (!id->active && (s == ET_CMS_REP_SENT || s == ET_CMS_MRA_REP_RCVD)) {
		if (id->qp && et_qp_stats(id->qp)->rx_pkts)
			et_cm_notify_established(cm->cm, id->conn, now);
	} else if (s != ET_CMS_REQ_SENT && s != ET_CMS_MRA_REQ_RCVD) {
		set_waiting(cm, id, false);
	}
}

/* A MAD just taken moves the connection it names by our ID (a REP, an
 * RTU, a REJ ...; a REQ makes a new one, which no id waits on yet): that
 * id is settled at once, for the peer may send the moment it has our
 * RTU. */
static void
settle_named(struct et_rdmacm *cm, const uint8_t *mad, size_t len, uint64_t now)
{
	struct et_cm_msg m;
	struct et_cm_conn *c;
	struct et_rdmacm_id *id;

	if (et_cm_parse(mad, len, &m) || m.hdr.attr_id == ET_CM_REQ ||
	    m.hdr.attr_id == ET_CM_SIDR_REQ || m.hdr.attr_id == ET_CM_SIDR_REP)
		return;
	/* every CM message but the REQ starts with the two IDs (SIDR binds
	 * no QP: nothing waits on it) */
	c = et_cm_conn_find(cm->cm, m.u.ids.remote_comm_id);
	if (c && (id = et_cm_conn_ctx(c)) != NULL && id->waiting) {
		settle(cm, id, now);
		drain_out(cm, now);
	}
}

/* A few more of the waiting ids, round the list: what a timer changed, a
 * passive side's first packet, are seen within n_waiting / SETTLE_BATCH
 * polls, and a poll costs the same with ten or ten thousand waiting. */
static void
settle_some(struct et_rdmacm *cm, uint64_t now)
{
	uint32_t n = cm->n_waiting < SETTLE_BATCH ? cm->n_waiting : SETTLE_BATCH;

	while (n--) {
		struct et_rdmacm_id *id = cm->cursor ? cm->cursor : cm->waiting;

		cm->cursor = id->wnext;
		settle(cm, id, now);
	}
	drain_out(cm, now);
}

/* ---- QP 1 ---- */

static void
gsi_rx(void *ctx, const struct et_roce_pkt *p, uint64_t now)
{
	struct et_rdmacm *cm = ctx;

	if (p->h.opcode != ET_OP_UD_SEND_ONLY) {
		cm->st.rx_bad_opcode++;
		return;
	}
	if (p->h.deth_qkey != ET_GSI_QKEY) {
		cm->st.rx_bad_qkey++;
		return;
	}
	cm->st.rx_mads++;
	if (et_cm_input(cm->cm, p->h.src_ip, p->payload, p->payload_len, now)) {
		cm->st.rx_bad_mad++;
		return;
	}
	/* whoever speaks to us is reachable at the MAC it came from */
	learn(cm, p->h.src_ip, p->h.src_mac.addr_bytes);
	drain_out(cm, now);
	settle_named(cm, p->payload, p->payload_len, now);
}

/* ---- the consumer's calls ---- */

struct et_rdmacm *
et_rdmacm_create(struct et_nic *nic, const struct et_rdmacm_conf *c)
{
	struct et_rdmacm *cm = calloc(1, sizeof(*cm));
	struct et_cm_conf cc = c->cm;
	const uint8_t *m = nic->mac.addr_bytes;

	if (cm == NULL)
		return NULL;
	if (cc.ip == 0)
		cc.ip = nic->ip;
	if (cc.ca_guid == 0) /* the EUI-64 of the MAC, as rxe's node GUID */
		cc.ca_guid = (uint64_t)(m[0] ^ 2) << 56 | (uint64_t)m[1] << 48 |
			     (uint64_t)m[2] << 40 | 0xfffeull << 24 | (uint64_t)m[3] << 16 |
			     (uint64_t)m[4] << 8 | m[5];
	cm->nic = nic;
	cm->conf = *c;
	cm->conf.cm = cc;
	cm->cm = et_cm_create(&cc);
	if (cm->cm == NULL) {
		free(cm);
		return NULL;
	}
	et_nic_set_gsi(nic, gsi_rx, cm);
	return cm;
}

void
et_rdmacm_destroy(struct et_rdmacm *cm, uint64_t now)
{
	if (cm == NULL)
		return;
	while (cm->ids)
		et_rdmacm_release(cm, cm->ids, now);
	drain_out(cm, now); /* what the releases said, if the NIC still takes it */
	et_nic_set_gsi(cm->nic, NULL, NULL);
	for (uint32_t i = 0; i < cm->n_ports; i++)
		free(cm->ports[i]);
	free(cm->ports);
	while (cm->old_ports) {
		struct et_rdmacm_id *l = cm->old_ports;

		cm->old_ports = l->next;
		free(l);
	}
	free(cm->park);
	et_cm_destroy(cm->cm);
	free(cm);
}

/* A listener's place in ports[]: its port space, then its port. */
static uint32_t
port_key(uint16_t ps, uint16_t port)
{
	return (uint32_t)ps << 16 | port;
}

/* Where (ps, port) is in ports[], or would go. */
static uint32_t
port_at(const struct et_rdmacm *cm, uint16_t ps, uint16_t port)
{
	uint32_t lo = 0, hi = cm->n_ports, key = port_key(ps, port);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (port_key(cm->ports[mid]->ps, cm->ports[mid]->port) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool
listened(const struct et_rdmacm *cm, uint32_t i, uint16_t ps, uint16_t port)
{
	return i < cm->n_ports && cm->ports[i]->ps == ps && cm->ports[i]->port == port;
}

int
et_rdmacm_listen(struct et_rdmacm *cm, uint16_t ps, uint16_t port, void *ctx)
{
	uint32_t i = port_at(cm, ps, port);
	struct et_rdmacm_id *l;
	int rc;

	if (ps != ET_RDMA_PS_TCP && ps != ET_RDMA_PS_UDP)
		return -EINVAL;
	if (listened(cm, i, ps, port))
		return -EADDRINUSE;
	if (cm->n_ports == cm->cap_ports) {
		uint32_t cap = cm->cap_ports ? 2 * cm->cap_ports : 4;
		struct et_rdmacm_id **ports = realloc(cm->ports, cap * sizeof(*ports));

		if (ports == NULL)
			return -ENOMEM;
		cm->ports = ports;
		cm->cap_ports = cap;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -ENOMEM;
	*l = (struct et_rdmacm_id){.cm = cm, .ps = ps, .port = port, .ctx = ctx, .listening = true};
	rc = et_cm_listen(cm->cm, et_rdma_service_id(ps, port), l);
	if (rc) {
		free(l);
		return rc;
	}
	memmove(&cm->ports[i + 1], &cm->ports[i], (cm->n_ports++ - i) * sizeof(*cm->ports));
	cm->ports[i] = l;
	return 0;
}

int
et_rdmacm_unlisten(struct et_rdmacm *cm, uint16_t ps, uint16_t port)
{
	uint32_t i = port_at(cm, ps, port);
	struct et_rdmacm_id *l;

	if (!listened(cm, i, ps, port))
		return -ENOENT;
	l = cm->ports[i];
	et_cm_unlisten(cm->cm, et_rdma_service_id(ps, port));
	memmove(&cm->ports[i], &cm->ports[i + 1], (--cm->n_ports - i) * sizeof(*cm->ports));
	/* its pending requests still point at it: it stays until the end */
	l->ctx = NULL;
	l->next = cm->old_ports;
	cm->old_ports = l;
	return 0;
}

struct et_rdmacm_id *
et_rdmacm_connect(struct et_rdmacm *cm, uint32_t dst_ip, uint16_t dst_port, struct et_qp *qp,
		  const struct et_rdmacm_conn_param *p, void *ctx, uint64_t now, int *err)
{
	struct et_cm_connect_param cp = {
		.dst_ip = dst_ip, .service_id = et_rdma_service_id(ET_RDMA_PS_TCP, dst_port),
		/* rdma_cm's header names our port: an ephemeral one, from the QPN */
		.src_port = (uint16_t)(0xc000 | (et_qp_qpn(qp) & 0x3fff)),
		.qpn = et_qp_qpn(qp), .psn = p->psn, .mtu = p->mtu,
		.responder_resources = p->responder_resources, .initiator_depth = p->initiator_depth,
		.retry_count = p->retry_count, .rnr_retry_count = p->rnr_retry_count,
		.pdata = p->pdata, .pdata_len = p->pdata_len};
	struct et_rdmacm_id *id = id_new(cm);

	if (id == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	id->qp = qp;
	id->bind = p->bind;
	id->bind_ctx = p->bind_ctx;
	id->ctx = ctx;
	id->port = dst_port;
	id->peer_ip = dst_ip;
	id->mtu = p->mtu;
	id->active = true;
	id->ps = ET_RDMA_PS_TCP;
	id->conn = et_cm_connect(cm->cm, &cp, id, now, err);
	if (id->conn == NULL) {
		id_free(cm, id);
		return NULL;
	}
	set_waiting(cm, id, true);
	drain_out(cm, now);
	return id;
}

struct et_rdmacm_id *
et_rdmacm_sidr(struct et_rdmacm *cm, uint32_t dst_ip, uint16_t dst_port, uint16_t src_port,
	       const void *pdata, uint16_t pdata_len, void *ctx, uint64_t now, int *err)
{
	struct et_cm_sidr_param sp = {
		.dst_ip = dst_ip, .service_id = et_rdma_service_id(ET_RDMA_PS_UDP, dst_port),
		.src_port = src_port, .pdata = pdata, .pdata_len = pdata_len};
	struct et_rdmacm_id *id = id_new(cm);

	if (id == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	id->ctx = ctx;
	id->ps = ET_RDMA_PS_UDP;
	id->port = dst_port;
	id->peer_ip = dst_ip;
	id->active = true;
	id->sidr = true;
	id->conn = et_cm_sidr_request(cm->cm, &sp, id, now, err);
	if (id->conn == NULL) {
		id_free(cm, id);
		return NULL;
	}
	drain_out(cm, now);
	return id;
}

/* A SIDR request answered: the UD QP's number and Q_Key (no binding: a
 * UD QP has no peer of its own). */
static int
sidr_accept(struct et_rdmacm *cm, struct et_rdmacm_id *id, struct et_qp *qp,
	    const struct et_rdmacm_conn_param *p, uint64_t now)
{
	struct et_cm_accept_param ap = {.qpn = et_qp_qpn(qp), .qkey = p->qkey,
					.pdata = p->pdata, .pdata_len = p->pdata_len};
	int rc = et_cm_accept(cm->cm, id->conn, &ap, now);

	drain_out(cm, now);
	return rc;
}

int
et_rdmacm_accept(struct et_rdmacm *cm, struct et_rdmacm_id *id, struct et_qp *qp,
		 const struct et_rdmacm_conn_param *p, uint64_t now)
{
	struct et_cm_accept_param ap = {
		.qpn = et_qp_qpn(qp), .psn = p->psn, .responder_resources = p->responder_resources,
		.initiator_depth = p->initiator_depth, .rnr_retry_count = p->rnr_retry_count,
		.pdata = p->pdata, .pdata_len = p->pdata_len};
	enum et_cm_state s = et_cm_conn_state(id->conn);

	if (id->sidr && !id->active)
		return sidr_accept(cm, id, qp, p, now);
	if (id->active || id->qp || (s != ET_CMS_REQ_RCVD && s != ET_CMS_MRA_REQ_SENT) ||
	    p->psn > ET_PSN_MASK || p->rnr_retry_count > 7 || p->pdata_len > ET_CM_REP_PDATA ||
	    (p->pdata_len && p->pdata == NULL))
		return -EINVAL;
	id->qp = qp;
	id->bind = p->bind;
	id->bind_ctx = p->bind_ctx;
	/* ready before the REP leaves: the peer sends once it has it */
	if (bind_qp(cm, id) || et_cm_accept(cm->cm, id->conn, &ap, now)) {
		id->qp = NULL;
		id->bind = NULL;
		id->bound = false;
		return -EINVAL;
	}
	set_waiting(cm, id, true);
	drain_out(cm, now);
	return 0;
}

int
et_rdmacm_reject(struct et_rdmacm *cm, struct et_rdmacm_id *id, const void *pdata, uint16_t len,
		 uint64_t now)
{
	int rc = et_cm_reject(cm->cm, id->conn, pdata, len, now);

	drain_out(cm, now);
	return rc;
}

int
et_rdmacm_disconnect(struct et_rdmacm *cm, struct et_rdmacm_id *id, uint64_t now)
{
	int rc = et_cm_disconnect(cm->cm, id->conn, now);

	if (rc == 0 && id->bound)
		et_qp_flush(id->qp);
	drain_out(cm, now);
	return rc;
}

void
et_rdmacm_release(struct et_rdmacm *cm, struct et_rdmacm_id *id, uint64_t now)
{
	/* the connection may outlive the id (a DREQ out, time wait): a MAD
	 * for it must not find the id (settle_named) */
	et_cm_conn_set_ctx(id->conn, NULL);
	et_cm_release(cm->cm, id->conn, now);
	id_free(cm, id);
	drain_out(cm, now);
}

void
et_rdmacm_poll(struct et_rdmacm *cm, uint64_t now)
{
	et_cm_timer(cm->cm, now);
	drain_out(cm, now);
	if (cm->n_park)
		unpark(cm, now);
	settle_some(cm, now);
}

uint64_t
et_rdmacm_next_event(struct et_rdmacm *cm)
{
	uint64_t t = et_cm_deadline(cm->cm);

	/* MADs waiting for ARP: asked again, or given up */
	if (cm->n_park && cm->next_arp < t)
		t = cm->next_arp;
	if (cm->n_park && parked(cm, 0)->since + PARK_NS < t)
		t = parked(cm, 0)->since + PARK_NS;
	return t;
}

bool
et_rdmacm_get_event(struct et_rdmacm *cm, struct et_rdmacm_event *ev)
{
	struct et_cm_event e;
	struct et_rdmacm_id *id;

	while (et_cm_poll_event(cm->cm, &e)) {
		if (e.type == ET_CM_EV_CONNECT_REQUEST) {
			struct et_rdmacm_id *l = e.ctx; /* the listener */

			if ((id = id_new(cm)) == NULL) { /* no memory: as if nobody listened */
				et_cm_release(cm->cm, e.conn, 0);
				continue;
			}
			id->conn = e.conn;
			id->ctx = l->ctx;
			id->ps = l->ps;
			id->sidr = e.sidr;
			id->port = l->port;
			id->peer_ip = et_cm_conn_peer_ip(e.conn);
			id->peer_psn = e.peer_psn;
			id->mtu = e.mtu;
			et_cm_conn_set_ctx(e.conn, id);
		} else {
			id = e.ctx;
		}
		if (e.type == ET_CM_EV_DISCONNECTED && id->bound)
			et_qp_flush(id->qp);
		*ev = (struct et_rdmacm_event){
			.type = e.type, .id = id, .ctx = id->ctx, .port = id->port,
			.peer_ip = e.peer_ip, .peer_port = e.peer_port, .peer_qpn = e.peer_qpn,
			.peer_psn = e.peer_psn, .mtu = e.mtu,
			.responder_resources = e.responder_resources,
			.initiator_depth = e.initiator_depth, .retry_count = e.retry_count,
			.rnr_retry_count = e.rnr_retry_count, .reason = e.reason,
			.sidr = e.sidr || id->sidr, .qkey = e.qkey, .pdata_len = e.pdata_len};
		memcpy(ev->pdata, e.pdata, e.pdata_len);
		return true;
	}
	return false;
}

void
et_rdmacm_id_set_ctx(struct et_rdmacm_id *id, void *ctx)
{
	id->ctx = ctx;
}

void *
et_rdmacm_id_ctx(const struct et_rdmacm_id *id)
{
	return id->ctx;
}

void
et_rdmacm_forget_qp(struct et_rdmacm *cm, const struct et_qp *qp)
{
	for (struct et_rdmacm_id *id = cm ? cm->ids : NULL; id; id = id->next)
		if (id->qp == qp) {
			id->qp = NULL;
			id->bound = false;
		}
}

struct et_qp *
et_rdmacm_id_qp(const struct et_rdmacm_id *id)
{
	return id->qp;
}

enum et_cm_state
et_rdmacm_id_state(const struct et_rdmacm_id *id)
{
	return et_cm_conn_state(id->conn);
}

const struct et_rdmacm_stats *
et_rdmacm_stats(const struct et_rdmacm *cm)
{
	return &cm->st;
}

const struct et_cm_stats *
et_rdmacm_cm_stats(const struct et_rdmacm *cm)
{
	return et_cm_stats(cm->cm);
}
