/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-switch's confs: each file one switch (its ports, routes,
 * addresses, failures), and the ring ports that join switches of the
 * same process, paired by name across the files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "base/et_conf.h"
#include "link/et_link_conf.h"
#include "link/et_port.h"
#include "et_cli.h"
#include "et_switch_conf.h"
#include "sw_proc_priv.h"

/* dev = ring:NAME: a link to the port of another switch of this process
 * that names the same ring; each way an rte_ring of mbufs, no copy */
#define RING_DEV "ring:"
#define RING_SIZE 2048

/* The ring links the confs name: the first end met makes the pair and
 * keeps the far port for the second. */
struct ring_link {
	char name[64];
	struct et_port far;
	uint16_t sw[2], port[2];
	uint8_t ends;
};

struct rings {
	struct ring_link *l;
	uint32_t n, cap;
};

/* "a.b.c.d" -> host order; -1 if it is not one. */
int
sw_parse_ipv4(const char *s, uint32_t *ip)
{
	unsigned int a, b, cc, d;
	char tail;

	if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &cc, &d, &tail) != 4 || a > 255 || b > 255 ||
	    cc > 255 || d > 255)
		return -1;
	*ip = a << 24 | b << 16 | cc << 8 | d;
	return 0;
}

void
sw_format_ipv4(uint32_t ip, char *buf, size_t n)
{
	snprintf(buf, n, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 255, ip >> 8 & 255, ip & 255);
}

/* "10.0.0.0/24, 10.0.1.7/32" -> routes to port pi. */
static int
add_prefixes(struct et_switch *sw, struct et_conf *c, const char *sec, const char *list, uint16_t pi,
	     uint32_t *first, uint8_t *first_len)
{
	char buf[512], *save = NULL, *tok;
	bool any = false;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		unsigned int a, b, cc, d, len = 32;
		char tail;
		int n = sscanf(tok, "%u.%u.%u.%u/%u%c", &a, &b, &cc, &d, &len, &tail);

		if ((n != 4 && n != 5) || a > 255 || b > 255 || cc > 255 || d > 255 || len > 32)
			return et_conf_fail(c, sec, "prefix",
					    "expected IPv4 prefixes like 10.0.1.0/24, got '%s'", tok);
		if (et_switch_add_route(sw, a << 24 | b << 16 | cc << 8 | d, (uint8_t)len, pi))
			return et_conf_fail(c, sec, "prefix", "cannot add route '%s'", tok);
		if (!any) {
			*first = a << 24 | b << 16 | cc << 8 | d;
			*first_len = (uint8_t)len;
			any = true;
		}
	}
	return 0;
}

/* Port pi's address, the gateway of the hosts behind it: `ip = A.B.C.D` or
 * `none`.  By default a down port whose first prefix is a /24 or longer
 * gets .254 of that /24 (10.0.5.254 for ToR 5's hosts 10.0.5.x, the
 * fabric's addressing), unless a prefix of the switch covers it (a host's
 * address, or a whole subnet below a spine's port): then none. */
static int
port_ip(struct et_switch *sw, struct et_conf *c, uint16_t pi, uint32_t first, uint8_t first_len)
{
	const char *v;
	uint32_t ip = 0;
	char sec[32];
	int err;

	snprintf(sec, sizeof(sec), "port%u", pi);
	v = et_conf_str(c, sec, "ip", NULL);
	if (v == NULL) {
		if (sw->ports[pi].role == ET_SW_DOWN && first_len >= 24) {
			ip = (first & 0xffffff00u) | 254;
			if (et_switch_routes(sw, ip))
				ip = 0;
		}
	} else if (strcmp(v, "none") != 0 &&
		   (sw_parse_ipv4(v, &ip) || ip == 0 || ip >> 24 == 127 || ip >= 0xe0000000u)) {
		return et_conf_fail(c, sec, "ip", "expected 'none' or a unicast IPv4 address "
				    "like 10.0.0.254, got '%s'", v);
	}
	err = et_switch_set_port_ip(sw, pi, ip);
	if (err == -EEXIST)
		return et_conf_fail(c, sec, "ip", "'%s' is routed to a port as a /32 prefix: a "
				    "host's address, not the switch's", v);
	if (err)
		return et_conf_fail(c, sec, "ip", "cannot add the address '%s'", v ? v : "");
	return 0;
}

static int
parse_rate(struct et_conf *c, const char *sec, uint64_t *bps)
{
	const char *v = et_conf_str(c, sec, "rate", "wire");
	char *end;
	double g;

	if (strcmp(v, "wire") == 0) {
		*bps = 0;
		return 0;
	}
	g = strtod(v, &end);
	if (end == v || (strcmp(end, "G") && strcmp(end, "Gbps")) || !(g > 0 && g <= 100000))
		return et_conf_fail(c, sec, "rate",
				    "expected 'wire' or a rate like 400G, got '%s'", v);
	*bps = (uint64_t)(g * 1e9);
	return 0;
}

/* This end (switch self, port pi) of ring link NAME: its port, made or
 * taken from the end met first. */
static int
ring_end(struct rings *r, struct et_conf *c, const char *sec, const char *name, uint16_t self,
	 uint16_t pi, struct et_port *port)
{
	struct ring_link *l = NULL;
	char rname[RTE_RING_NAMESIZE];
	uint32_t k;
	int err;

	if (*name == '\0' || strlen(name) >= sizeof(l->name))
		return et_conf_fail(c, sec, "dev", "expected ring:NAME (NAME 1 to %zu characters), "
				    "got 'ring:%s'", sizeof(l->name) - 1, name);
	for (k = 0; k < r->n && l == NULL; k++)
		if (strcmp(r->l[k].name, name) == 0)
			l = &r->l[k];
	if (l && (l->ends == 2 || l->sw[0] == self))
		return et_conf_fail(c, sec, "dev", "ring:%s: %s", name, l->ends == 2
				    ? "a third end (a ring link joins two switches' ports)"
				    : "both ends on this switch");
	if (l) {
		*port = l->far;
		l->sw[1] = self;
		l->port[1] = pi;
		l->ends = 2;
		return 0;
	}
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 16;
		struct ring_link *g = realloc(r->l, cap * sizeof(*g));

		if (g == NULL)
			return et_conf_fail(c, sec, "dev", "no memory");
		r->l = g;
		r->cap = cap;
	}
	l = &r->l[r->n];
	memset(l, 0, sizeof(*l));
	snprintf(rname, sizeof(rname), "swr%u", r->n); /* rte_ring names are short */
	err = et_port_ring_pair(port, &l->far, rname, RING_SIZE, (int)rte_socket_id());
	if (err)
		return et_conf_fail(c, sec, "dev", "ring:%s: cannot make its rings: %s", name,
				    strerror(-err));
	snprintf(l->name, sizeof(l->name), "%s", name);
	snprintf(port->name, sizeof(port->name), "ring:%.*s", (int)sizeof(port->name) - 6, name);
	snprintf(l->far.name, sizeof(l->far.name), "%s", port->name);
	l->sw[0] = self;
	l->port[0] = pi;
	l->ends = 1;
	r->n++;
	return 0;
}


static int
load(struct sw_node *node, struct rings *rings, uint16_t self, bool compact,
     struct rte_mempool *mp)
{
	struct et_switch *sw = &node->sw;
	static const char *const sw_keys[] = {"name", "mode", ET_SW_CONF_KEYS, NULL};
	static const char *const port_keys[] = {
		"dev", "role", "uplink", "prefix", "ip", "peer-mac", "rate", "latency-ns",
		"fault-seed", ET_LINK_FAULT_KEYS, NULL};
	static const char *const fail_keys[] = {"port", "at-ms", "duration-ms", NULL};
	static const char *const modes[] = {"source-route", "ecmp", NULL};
	static const char *const roles[] = {"down", "up", NULL};
	static const char *const sections[] = {"switch", "port#", "fail#", NULL};
	uint32_t first[ET_SW_MAX_PORTS] = {0};
	uint8_t first_len[ET_SW_MAX_PORTS] = {0};
	struct et_sw_params p;
	struct et_conf c;
	char sec[32];
	uint32_t ms, i, u, seed;
	int mode, n_port_secs, n_fail_secs, rc = -1;

	if (et_conf_open(&c, node->file))
		goto out;
	et_sw_params_default(&p);
	if ((n_port_secs = et_conf_check_sections(&c, sections, "port#")) < 0 ||
	    (n_fail_secs = et_conf_check_sections(&c, sections, "fail#")) < 0 ||
	    et_conf_need_section(&c, "switch") || et_conf_check_keys(&c, "switch", sw_keys) ||
	    et_conf_enum(&c, "switch", "mode", modes, false, ET_SW_SOURCE_ROUTE, &mode) ||
	    et_sw_params_load(&c, "switch", &p))
		goto out;
	p.mode = (enum et_sw_mode)mode;
	/* rte_lpm's 64 MB a switch are too many for a fabric's in one process */
	p.compact_routes = compact;
	if (et_switch_init(sw, et_conf_str(&c, "switch", "name", "switch"), &p, mp,
			   (int)rte_socket_id())) {
		et_conf_fail(&c, "switch", NULL, "cannot create the switch");
		goto out;
	}
	for (i = 0; i < ET_SW_MAX_PORTS; i++) {
		struct et_link_model lm = {0};
		struct rte_ether_addr mac, peer;
		const char *dev, *pm;
		struct et_port port;
		int role, err;

		snprintf(sec, sizeof(sec), "port%u", i);
		if (!et_conf_has_section(&c, sec))
			break;
		if (et_conf_check_keys(&c, sec, port_keys) ||
		    et_conf_enum(&c, sec, "role", roles, true, 0, &role) ||
		    parse_rate(&c, sec, &lm.rate_bps) ||
		    et_conf_u32(&c, sec, "latency-ns", 0, 1000000000, false, 0, &ms) ||
		    et_link_faults_load(&c, sec, &lm) ||
		    et_conf_u32(&c, sec, "fault-seed", 0, UINT32_MAX, false, i + 1, &seed))
			goto out;
		lm.latency_ns = ms;
		lm.seed = seed;
		if (lm.rate_bps == 0 && lm.jitter_ns) {
			et_conf_fail(&c, sec, "jitter-ns", "needs an emulated rate (rate = 100G...), "
				     "not 'wire'");
			goto out;
		}
		dev = et_conf_str(&c, sec, "dev", NULL);
		if (dev == NULL) {
			et_conf_fail(&c, sec, "dev", "missing (expected a DPDK device, e.g. net_tap0,iface=sw0)");
			goto out;
		}
		pm = et_conf_str(&c, sec, "peer-mac", "ff:ff:ff:ff:ff:ff");
		if (rte_ether_unformat_addr(pm, &peer)) {
			et_conf_fail(&c, sec, "peer-mac", "expected a MAC like 02:00:00:00:00:01, got '%s'", pm);
			goto out;
		}
		if (strncmp(dev, RING_DEV, strlen(RING_DEV)) == 0) {
			if (ring_end(rings, &c, sec, dev + strlen(RING_DEV), self, (uint16_t)i,
				     &port))
				goto out;
			/* a ring has no MAC: a made-up local one, by switch and port */
			mac = (struct rte_ether_addr){{0x02, 0x5e, (uint8_t)(self >> 8), (uint8_t)self,
						       0, (uint8_t)i}};
		} else if ((err = et_port_ethdev(&port, dev, mp, 1024, 1))) {
			et_conf_fail(&c, sec, "dev", "cannot start '%s': %s", dev, strerror(-err));
			goto out;
		} else {
			rte_eth_macaddr_get(port.eth_port, &mac);
		}
		u = 0;
		if (role == ET_SW_UP &&
		    et_conf_u32(&c, sec, "uplink", 0, ET_SW_MAX_UPLINKS - 1, true, 0, &u))
			goto out;
		err = et_switch_add_port(sw, &port, (enum et_sw_role)role, (uint8_t)u, &mac,
					 &peer, &lm);
		if (err < 0) {
			et_conf_fail(&c, sec, role == ET_SW_UP ? "uplink" : NULL,
				     err == -EINVAL ? "uplinks must be numbered 0, 1, 2... in port order"
						    : "cannot add the port");
			goto out;
		}
		if (role == ET_SW_DOWN) {
			const char *pf = et_conf_str(&c, sec, "prefix", NULL);

			if (pf == NULL) {
				et_conf_fail(&c, sec, "prefix", "missing: a down port needs the prefixes below it");
				goto out;
			}
			if (add_prefixes(sw, &c, sec, pf, (uint16_t)err, &first[err], &first_len[err]))
				goto out;
		}
	}
	if (sw->n_ports == 0) {
		et_conf_fail(&c, "port0", NULL, "section is missing: a switch needs ports");
		goto out;
	}
	if ((int)i < n_port_secs) {
		snprintf(sec, sizeof(sec), "port%u", i);
		et_conf_fail(&c, sec, NULL, "missing or one too many: ports are [port0], [port1]... "
			     "without gaps, at most %d", ET_SW_MAX_PORTS);
		goto out;
	}
	/* once every prefix is known: a default address must not be a host's */
	for (i = 0; i < sw->n_ports; i++)
		if (port_ip(sw, &c, (uint16_t)i, first[i], first_len[i]))
			goto out;
	for (i = 0;; i++) {
		uint32_t port, at, dur;

		snprintf(sec, sizeof(sec), "fail%u", i);
		if (!et_conf_has_section(&c, sec))
			break;
		if (et_conf_check_keys(&c, sec, fail_keys) ||
		    et_conf_u32(&c, sec, "port", 0, sw->n_ports - 1, true, 0, &port) ||
		    et_conf_u32(&c, sec, "at-ms", 0, 86400000, true, 0, &at) ||
		    et_conf_u32(&c, sec, "duration-ms", 0, 86400000, false, 0, &dur))
			goto out;
		/* times count from the start of the poll loop, as now_ns does */
		et_switch_fail(sw, (uint16_t)port, (uint64_t)at * 1000000 + 1,
			       (uint64_t)dur * 1000000);
	}
	if ((int)i < n_fail_secs) {
		et_conf_fail(&c, sec, NULL, "missing: failures are [fail0], [fail1]... without gaps");
		goto out;
	}
	rc = 0;
out:
	return et_cli_conf_close(&c, rc);
}


struct sw_node *
sw_find(struct sw_proc *p, const char *name, char *msg, size_t len)
{
	size_t n;

	if ((name == NULL || *name == '\0') && p->n == 1)
		return &p->node[0];
	for (uint16_t i = 0; name && i < p->n; i++)
		if (strcmp(p->node[i].sw.name, name) == 0)
			return &p->node[i];
	n = (size_t)snprintf(msg, len, "one of:");
	for (uint16_t i = 0; i < p->n && n < len; i++)
		n += (size_t)snprintf(msg + n, len - n, " %s", p->node[i].sw.name);
	return NULL;
}

int
sw_load(struct sw_proc *p, char *const *files, uint16_t n, struct rte_mempool *mp)
{
	struct rings rings = {0};
	int rc = -1;
	uint16_t i, j;

	p->node = calloc(n, sizeof(*p->node));
	if (p->node == NULL) {
		et_cli_error("no memory for %u switches", n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct sw_node *x = &p->node[i];

		x->file = files[i];
		memset(x->ring_peer, 0xff, sizeof(x->ring_peer)); /* -1: not a ring */
		atomic_init(&x->fail_request, -1);
		atomic_init(&x->restore_request, -1);
		atomic_init(&x->withdraw_request, -1);
		p->n = (uint16_t)(i + 1); /* what is freed, should this one fail */
		if (load(x, &rings, i, n > 1, mp))
			goto out;
		for (j = 0; j < i; j++)
			if (strcmp(p->node[j].sw.name, x->sw.name) == 0) {
				et_cli_error("%s: [switch] name: '%s' is %s's too: each switch of "
					     "a process has a name of its own", x->file, x->sw.name,
					     p->node[j].file);
				goto out;
			}
	}
	for (uint32_t k = 0; k < rings.n; k++) {
		const struct ring_link *l = &rings.l[k];

		if (l->ends != 2) {
			et_cli_error("%s: [port%u] dev: ring:%s: its other end is in none of the "
				     "confs given (a ring joins two switches of this process)",
				     p->node[l->sw[0]].file, l->port[0], l->name);
			goto out;
		}
		p->node[l->sw[0]].ring_peer[l->port[0]] = (int16_t)l->sw[1];
		p->node[l->sw[1]].ring_peer[l->port[1]] = (int16_t)l->sw[0];
	}
	rc = 0;
out:
	free(rings.l); /* the rings are their first ends' (et_port_close frees them) */
	return rc;
}
