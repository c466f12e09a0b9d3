/* SPDX-License-Identifier: BSD-3-Clause
 * The Ethereal software switch: one instance per switch, polled by whatever
 * runs it (ethereal-switch on real ports, ethereal-fabric in a fabric).
 *
 * Per packet: parse Ethernet/IPv4; down by longest-prefix match when the
 * destination is below; else up, on the uplink the path ID's high byte
 * names (source-route mode) or on hash(5-tuple) over the live uplinks
 * (ECMP mode); byte-swap the RoCEv2 path ID (keeping the ICRC right),
 * decrement TTL, rewrite MACs; queue on the egress in a shared buffer with a
 * dynamic threshold, ECN step marking above K, optional PFC.  A failed link
 * drops everything; the switch keeps using it until the detection delay has
 * passed, then routes around it.
 *
 * A port may have an IPv4 address (et_switch_set_port_ip): the gateway a
 * kernel host behind it resolves by ARP.  The switch answers ARP requests
 * for it (rate-limited per port) and drops IPv4 sent to it (it runs no IP
 * stack).  Frames that are not IPv4 (PAUSE, ARP, the rest) leave the
 * forwarding path at its first test, for one cold function.
 */
#ifndef ET_SWITCH_H
#define ET_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "base/et_counters.h"
#include "base/et_token_bucket.h"
#include "link/et_egress.h"
#include "link/et_port.h"

#define ET_SW_MAX_PORTS 64
#define ET_SW_MAX_UPLINKS 256
#define ET_SW_MAX_WITHDRAWN 64

enum et_sw_role {
	ET_SW_DOWN, /* towards hosts or lower switches: reached by prefix */
	ET_SW_UP,   /* uplink i */
};

enum et_sw_mode { ET_SW_SOURCE_ROUTE, ET_SW_ECMP };

/* Why a packet was dropped: every drop is counted by one reason.  A new
 * reason is one line here; its counter, name and accounting follow. */
#define ET_SW_DROPS(X) \
	X(MALFORMED, malformed)     /* truncated or inconsistent headers */ \
	X(NON_IP, non_ip)           /* not IPv4, PFC or an ARP request for the port */ \
	X(IP_CSUM, ip_checksum) \
	X(TTL, ttl) \
	X(NO_ROUTE, no_route)       /* no prefix and no live uplink */ \
	X(BAD_UPLINK, bad_uplink)   /* the path ID names an uplink we lack */ \
	X(BUFFER, buffer)           /* shared buffer or dynamic threshold */ \
	X(QUEUE, queue_full)        /* egress queue array full */ \
	X(FAILED, link_failed)      /* sent to or received from a failed link */ \
	X(LINK_DOWN, link_down)     /* sent to a port whose link reads down */ \
	X(OVERSIZE, oversize)       /* longer than the switch's largest frame */ \
	X(LOCAL, local)             /* IPv4 to a port address: no IP stack here */

#define ET_SW_DROP_ENUM(id, name) ET_SW_DROP_##id,
enum et_sw_drop { ET_SW_DROPS(ET_SW_DROP_ENUM) ET_SW_DROP_COUNT };
#undef ET_SW_DROP_ENUM

const char *et_sw_drop_name(int d);

/* A port's counters (its egress has its own: link/et_egress.h).  Frames
 * taken in are forwarded, so they end only by a drop or as PAUSE. */
#define ET_SW_PORT_COUNTERS(X, A) \
	X(rx_pkts, INFO, "frames taken off the link") \
	X(rx_bytes, INFO, "bytes taken off the link") \
	A(drops, DROP, ET_SW_DROP_COUNT, et_sw_drop_name, "drop", "frames dropped, by reason") \
	X(ecn_marks, INFO, "frames marked CE") \
	X(pause_tx, MADE, "PAUSE frames sent") \
	X(pause_rx, GONE, "PAUSE frames taken in") \
	X(reroutes, INFO, "source-routed frames moved off this uplink") \
	X(arp_requests, GONE, "ARP requests for the port's address, taken in") \
	X(arp_replies, MADE, "ARP replies sent") \
	X(arp_unanswered, INFO, "ARP requests for the port's address not answered: " \
	  "rate limit or no room in the control queue")

struct et_sw_port_stats {
	ET_SW_PORT_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_sw_port_ctrs;

struct et_sw_port {
	struct et_port port;
	struct et_egress eg;
	enum et_sw_role role;
	uint8_t uplink;            /* ET_SW_UP: its index */
	struct rte_ether_addr mac;
	struct rte_ether_addr peer_mac;
	/* the link as its device reports it (et_switch_set_link) */
	bool link_down;            /* frames for it are dropped: link_down */
	bool link_seen;            /* it has been up: going down is a failure */
	/* failure: scheduled and/or forced at run time */
	bool failed;
	uint64_t failed_since;
	bool down;                 /* failure detected: routed around */
	bool restore_now;          /* the restore due is used at once (no delay) */
	uint64_t fail_at, restore_at; /* schedule; 0 = none */
	/* PFC: bytes in the buffer that came in here */
	uint64_t in_bytes;
	bool xoff;
	uint64_t xoff_sent_at;
	struct et_capture *cap;
	uint32_t ip;               /* host order; 0: none, ARP is dropped */
	struct et_token_bucket arp_tx; /* ARP replies out of this port */
	struct et_sw_port_stats st;
};

struct et_sw_params {
	enum et_sw_mode mode;
	uint64_t buffer_bytes;     /* shared buffer, default 64 MB */
	double dt_alpha;           /* dynamic threshold, default 1 */
	uint64_t ecn_k_bytes;      /* 0: derived from the link rate */
	bool pfc;
	double pfc_alpha;          /* XOFF at pfc_alpha x free buffer per ingress */
	/* RoCEv2 ACK, NAK and CNP frames take the control queue: ahead of the
	 * data, never paused, outside the buffer and ECN (the paper's
	 * simulator: its highest priority class) */
	bool acks_first;
	uint64_t detect_delay_ns;  /* default 100 ms */
	uint32_t queue_pkts;       /* egress queue array size, power of 2 */
	uint32_t ecmp_seed;
	uint32_t max_frame;        /* longest frame taken, FCS excluded; default 9216 */
	/* routes in a small table searched in order, not rte_lpm: a fabric of
	 * many switches in one process cannot give each the 64 MB of rte_lpm's
	 * first-level table; a switch has at most ET_SW_MAX_PORTS routes */
	bool compact_routes;
	/* ARP replies per port: burst, then one per refill */
	uint64_t arp_refill_ns;    /* default 10 ms: 100 a second */
	uint32_t arp_burst;        /* default 8 */
};

struct et_sw_group {
	uint8_t n;
	uint8_t port[ET_SW_MAX_PORTS];
};

struct rte_lpm;

struct et_switch {
	char name[32];
	struct et_sw_params p;
	uint16_t n_ports;
	struct et_sw_port ports[ET_SW_MAX_PORTS];
	struct rte_lpm *lpm;
	struct {
		uint32_t prefix, mask, nh;
	} route[ET_SW_MAX_PORTS];      /* compact_routes: longest prefix first */
	uint16_t n_routes;
	struct et_sw_group groups[ET_SW_MAX_PORTS];
	uint16_t n_groups;
	uint8_t uplink_port[ET_SW_MAX_UPLINKS];
	uint16_t n_uplinks;
	uint8_t live_up[ET_SW_MAX_UPLINKS]; /* ports of the uplinks in use */
	uint16_t n_live_up;
	/* routes withdrawn after a remote link failure: prefix must not go up
	 * through uplink from `at` on (the routing protocol's convergence) */
	struct {
		uint32_t prefix, mask;
		uint8_t uplink;
		uint64_t at;
	} withdrawn[ET_SW_MAX_WITHDRAWN];
	uint16_t n_withdrawn;
	uint64_t used;             /* shared buffer bytes in use */
	uint64_t used_max;
	struct rte_mempool *ctrl_pool; /* PFC frames */
	/* What a poll must look at, so that its cost follows the traffic and
	 * not the port count; one bit per port (ET_SW_MAX_PORTS is 64). */
	bool rx_hints;             /* the peers say where frames come: poll only those */
	uint64_t rx_ready;         /* frames arrived on these ports */
	uint64_t rx_next;          /* virtual time: the next frame arrives then */
	uint64_t rx_at[ET_SW_MAX_PORTS]; /* and at each port (UINT64_MAX: none on its way) */
	uint64_t eg_dirty;         /* egress changed since eg_next was taken */
	uint64_t xoff_ports;       /* holding their peer off (PFC refresh) */
	uint64_t eg_next[ET_SW_MAX_PORTS]; /* each egress's next event; 0 (due) until it ran */
	uint64_t fail_next;        /* the failure schedule's next instant */
};

void et_sw_params_default(struct et_sw_params *p);

int et_switch_init(struct et_switch *sw, const char *name,
		   const struct et_sw_params *p, struct rte_mempool *ctrl_pool,
		   int socket);
void et_switch_free(struct et_switch *sw);

/* Add a port (the switch takes the et_port over); returns its index or a
 * negative errno.  lm: the link model of its egress. */
int et_switch_add_port(struct et_switch *sw, const struct et_port *port,
		       enum et_sw_role role, uint8_t uplink,
		       const struct rte_ether_addr *mac,
		       const struct rte_ether_addr *peer_mac,
		       const struct et_link_model *lm);

/* Destinations in prefix/depth are below port; the same prefix on several
 * ports makes a group (parallel links), chosen by the path ID's low byte. */
int et_switch_add_route(struct et_switch *sw, uint32_t prefix, uint8_t depth,
			uint16_t port);

/* Give port its IPv4 address ip (host order; 0: none): the switch answers
 * ARP requests for it on that port, and drops IPv4 sent to it, on any port,
 * as `local`.  Several ports may share an address (one gateway for a ToR's
 * hosts).  -EINVAL for a bad port; -EEXIST when ip/32 is routed to a port
 * (the address of a host below). */
int et_switch_set_port_ip(struct et_switch *sw, uint16_t port, uint32_t ip);

/* Whether dst matches a route of the switch (a prefix added with
 * et_switch_add_route, not a port address).  Control path. */
bool et_switch_routes(const struct et_switch *sw, uint32_t dst);

/* Virtual time: from now on, port's frames are read when they arrive,
 * and the port only when frames are on their way: the peer's egress
 * hands them over early and applies the hint this returns (through
 * whoever schedules the switch).  Without it every port is polled every
 * time and a frame is read as soon as it is there. */
struct et_rx_hint et_switch_rx_hint(struct et_switch *sw, uint16_t port);

/* Back to polling every port (the peers stopped giving hints). */
void et_switch_no_rx_hints(struct et_switch *sw);

/* Fail a port's link from at_ns (0: now), for duration_ns (0: for good). */
void et_switch_fail(struct et_switch *sw, uint16_t port, uint64_t at_ns,
		    uint64_t duration_ns);

/* From at_ns on, traffic to prefix/depth going up avoids uplink (in both
 * modes): a remote link failure that the routing protocol has announced.
 * -ENOSPC when the table is full. */
int et_switch_withdraw(struct et_switch *sw, uint32_t prefix, uint8_t depth, uint8_t uplink,
		       uint64_t at_ns);
/* Bring a port's link back at at_ns (0: now). */
void et_switch_restore(struct et_switch *sw, uint16_t port, uint64_t at_ns);

/* The port's link as its device reports it (real ports: polled, or an LSC
 * event).  Down, what the switch sends there is dropped as link_down; a
 * link that was up and goes down fails at now, as et_switch_fail(), and
 * is routed around after the detection delay; back up, it is restored at
 * now, and used again after the delay if it is an uplink, at once if it
 * leads down (a host's: nothing routes around it, so what is for the host
 * waits for nothing but its link).  A link that was never up (its peer
 * not there yet) fails nothing.  A frame taken in on a port whose link
 * reads down says it is up, ahead of the next reading.  Returns whether a
 * failure or a restore was made.  Control path. */
bool et_switch_set_link(struct et_switch *sw, uint16_t port, bool up, uint64_t now);

/* Record a port's traffic, both ways (NULL: stop). */
struct et_capture;
void et_switch_set_capture(struct et_switch *sw, uint16_t port, struct et_capture *c);

/* Receive, forward and transmit what is due; returns the work done
 * (packets moved), 0 when there was nothing to do at now. */
uint32_t et_switch_poll(struct et_switch *sw, uint64_t now);

/* The next time the switch has something to do; UINT64_MAX if nothing. */
uint64_t et_switch_next_event(const struct et_switch *sw, uint64_t now);

/* ECN threshold a link of rate_bps gets by default: C x 10 us / 7 (the
 * DCTCP rule K > C RTT / 7 for a 10 us datacenter RTT), at least 20 KB. */
uint64_t et_sw_default_ecn_k(uint64_t rate_bps);

/* What still arrives at a port after it sent XOFF, which its share of the
 * buffer must hold for PFC to lose nothing: a round trip of its link (rate,
 * latency) and a frame of max_frame bytes on the wire at either end. */
uint64_t et_sw_pfc_headroom(uint64_t rate_bps, uint64_t latency_ns, uint32_t max_frame);

#endif /* ET_SWITCH_H */
