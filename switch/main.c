/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-switch: one Ethereal switch on any DPDK ports, from a conf file.
 *
 *   ethereal-switch [EAL args --] --config FILE [--duration S] [--pcap DIR]
 *
 * A port's `ip` (default for a down port: .254 of its first prefix's /24)
 * is the gateway kernel hosts behind it resolve by ARP: docs/switch.md.
 * Counters are served by rte_telemetry under /ethereal/switch/ and printed
 * at exit (stdout; messages go to stderr through et_cli's log); /ethereal/switch/fail,PORT fails a port's link at run time and
 * /ethereal/switch/restore,PORT brings it back.  Every port's link is read
 * every 10 ms, and at once on a PMD's link event: a link that goes down is
 * a failed one, routed around after the detection delay (docs/switch.md).
 *
 * Exit codes: 0, 1 when DPDK or memory fails, 2 for a bad command line or
 * conf (a port that cannot start is named by its conf key: 2 too).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "et_tel.h"
#include "base/et_conf.h"
#include "host/et_worker.h"
#include "link/et_capture.h"
#include "link/et_link_conf.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "et_switch.h"
#include "et_switch_conf.h"

#define MAX_ROUTES 64
/* how often every port's link is read (LSC events read them at once):
 * well inside the detection delay it starts */
#define LINK_POLL_NS 10000000ull

static volatile sig_atomic_t stop;
static struct et_switch sw;
static _Atomic int fail_request = -1, restore_request = -1;
/* prefix << 16 | depth << 8 | uplink; -1: none */
static _Atomic int64_t withdraw_request = -1;
static _Atomic int link_event; /* a PMD told of a link change (LSC) */

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: ethereal-switch [EAL args --] --config FILE [--duration S] [--pcap DIR] [--yield]\n"
		"                       [--fail PORT[@TIME][,...]]\n"
		"  --config FILE  switch, ports and routes (see conf/switch-example.ini)\n"
		"  --fail SPEC    fail port PORT's link at TIME after the start (default 0; like\n"
		"                 500ms, 2s), for good: as the conf's [failN] sections\n"
		"  --duration S   stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  --pcap DIR     write every port's traffic to DIR/<switch>-p<N>.pcapng\n"
		"  --yield        give the core away when idle (processes sharing cores)\n"
		"  --help         this (before or after --)\n"
		"Telemetry (dpdk-telemetry.py, Debian's dpdk-dev; scripts/switch-ctl):\n"
		"/ethereal/switch/ports, /ethereal/switch/fail,PORT, /ethereal/switch/restore,PORT\n"
		"and /ethereal/switch/withdraw,PREFIX/LEN,UPLINK (a route the far side lost: what\n"
		"goes up to PREFIX avoids that uplink, as a routing protocol would converge).\n"
		ET_CLI_EAL_HELP);
}

/* "a.b.c.d" -> host order; -1 if it is not one. */
static int
parse_ipv4(const char *s, uint32_t *ip)
{
	unsigned int a, b, cc, d;
	char tail;

	if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &cc, &d, &tail) != 4 || a > 255 || b > 255 ||
	    cc > 255 || d > 255)
		return -1;
	*ip = a << 24 | b << 16 | cc << 8 | d;
	return 0;
}

static void
format_ipv4(uint32_t ip, char *buf, size_t n)
{
	snprintf(buf, n, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 255, ip >> 8 & 255, ip & 255);
}

/* "10.0.0.0/24, 10.0.1.7/32" -> routes to port pi. */
static int
add_prefixes(struct et_conf *c, const char *sec, const char *list, uint16_t pi,
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
		if (et_switch_add_route(&sw, a << 24 | b << 16 | cc << 8 | d, (uint8_t)len, pi))
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
port_ip(struct et_conf *c, uint16_t pi, uint32_t first, uint8_t first_len)
{
	const char *v;
	uint32_t ip = 0;
	char sec[32];
	int err;

	snprintf(sec, sizeof(sec), "port%u", pi);
	v = et_conf_str(c, sec, "ip", NULL);
	if (v == NULL) {
		if (sw.ports[pi].role == ET_SW_DOWN && first_len >= 24) {
			ip = (first & 0xffffff00u) | 254;
			if (et_switch_routes(&sw, ip))
				ip = 0;
		}
	} else if (strcmp(v, "none") != 0 &&
		   (parse_ipv4(v, &ip) || ip == 0 || ip >> 24 == 127 || ip >= 0xe0000000u)) {
		return et_conf_fail(c, sec, "ip", "expected 'none' or a unicast IPv4 address "
				    "like 10.0.0.254, got '%s'", v);
	}
	err = et_switch_set_port_ip(&sw, pi, ip);
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

static int
load(const char *file, struct rte_mempool *mp)
{
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

	if (et_conf_open(&c, file))
		goto out;
	et_sw_params_default(&p);
	if ((n_port_secs = et_conf_check_sections(&c, sections, "port#")) < 0 ||
	    (n_fail_secs = et_conf_check_sections(&c, sections, "fail#")) < 0 ||
	    et_conf_need_section(&c, "switch") || et_conf_check_keys(&c, "switch", sw_keys) ||
	    et_conf_enum(&c, "switch", "mode", modes, false, ET_SW_SOURCE_ROUTE, &mode) ||
	    et_sw_params_load(&c, "switch", &p))
		goto out;
	p.mode = (enum et_sw_mode)mode;
	if (et_switch_init(&sw, et_conf_str(&c, "switch", "name", "switch"), &p, mp,
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
		err = et_port_ethdev(&port, dev, mp, 1024, 1);
		if (err) {
			et_conf_fail(&c, sec, "dev", "cannot start '%s': %s", dev, strerror(-err));
			goto out;
		}
		rte_eth_macaddr_get(port.eth_port, &mac);
		u = 0;
		if (role == ET_SW_UP &&
		    et_conf_u32(&c, sec, "uplink", 0, ET_SW_MAX_UPLINKS - 1, true, 0, &u))
			goto out;
		err = et_switch_add_port(&sw, &port, (enum et_sw_role)role, (uint8_t)u, &mac,
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
			if (add_prefixes(&c, sec, pf, (uint16_t)err, &first[err], &first_len[err]))
				goto out;
		}
	}
	if (sw.n_ports == 0) {
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
	for (i = 0; i < sw.n_ports; i++)
		if (port_ip(&c, (uint16_t)i, first[i], first_len[i]))
			goto out;
	for (i = 0;; i++) {
		uint32_t port, at, dur;

		snprintf(sec, sizeof(sec), "fail%u", i);
		if (!et_conf_has_section(&c, sec))
			break;
		if (et_conf_check_keys(&c, sec, fail_keys) ||
		    et_conf_u32(&c, sec, "port", 0, sw.n_ports - 1, true, 0, &port) ||
		    et_conf_u32(&c, sec, "at-ms", 0, 86400000, true, 0, &at) ||
		    et_conf_u32(&c, sec, "duration-ms", 0, 86400000, false, 0, &dur))
			goto out;
		/* times count from the start of the poll loop, as now_ns does */
		et_switch_fail(&sw, (uint16_t)port, (uint64_t)at * 1000000 + 1,
			       (uint64_t)dur * 1000000);
	}
	if ((int)i < n_fail_secs) {
		et_conf_fail(&c, sec, NULL, "missing: failures are [fail0], [fail1]... without gaps");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		et_cli_error("%s", c.err);
	et_conf_close(&c);
	return rc;
}

/* ---- links ---- */

static int
on_link_event(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	(void)port;
	(void)type;
	(void)arg;
	(void)ret;
	atomic_store(&link_event, 1); /* from the interrupt thread: the loop reads them */
	return 0;
}

/* Every port's link as its PMD reports it, every reading (a link already
 * up at the first must be marked seen, or its death fails nothing); a
 * change is a failure or a restore of the link (et_switch_set_link), said
 * once. */
static void
watch_links(uint64_t now)
{
	unsigned int delay_ms = (unsigned int)(sw.p.detect_delay_ns / 1000000);

	for (uint16_t i = 0; i < sw.n_ports; i++) {
		struct et_sw_port *p = &sw.ports[i];
		bool seen = p->link_seen;
		int up = et_port_link_up(&p->port);

		if (up < 0)
			continue;
		if (et_switch_set_link(&sw, i, up, now))
			et_warn("port%u: link %s: %s after %u ms (the detection delay)", i,
				up ? "up again" : "down", up ? "used again" : "routed around",
				delay_ms);
		else if (up && !seen)
			et_info("port%u: link up", i);
	}
}

/* ---- telemetry ---- */

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint16_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sw.n_ports; i++) {
		const struct et_sw_port *p = &sw.ports[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[16], ip[16];

		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		et_tel_add_counters(c, &et_sw_port_ctrs, &p->st, "");
		et_tel_add_counters(c, &et_egress_ctrs, &p->eg.st, "");
		rte_tel_data_add_dict_u64(c, "failed", p->failed);
		rte_tel_data_add_dict_string(c, "link", p->link_down ? "down" : "up");
		format_ipv4(p->ip, ip, sizeof(ip));
		rte_tel_data_add_dict_string(c, "ip", p->ip ? ip : "none");
		snprintf(name, sizeof(name), "port%u", i);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

static int
tel_port_request(const char *params, _Atomic int *req, struct rte_tel_data *d)
{
	char *end;
	long port;

	char msg[96];

	/* an error as a message: a bare -EINVAL reads as null in the client */
	if (params == NULL || *params == '\0')
		port = -1, end = "";
	else
		port = strtol(params, &end, 10);
	if (*end != '\0' || port < 0 || port >= sw.n_ports) {
		snprintf(msg, sizeof(msg), "error: expected a port index 0..%u, got '%s'",
			 sw.n_ports - 1u, params ? params : "");
		rte_tel_data_string(d, msg);
		return 0;
	}
	atomic_store(req, (int)port); /* the poll loop applies it */
	rte_tel_data_string(d, "ok");
	return 0;
}

static int
tel_fail(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_port_request(params, &fail_request, d);
}

static int
tel_restore(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_port_request(params, &restore_request, d);
}

static int
tel_withdraw(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int a, b, cc, dd, len, up;
	char tail, msg[128];

	(void)cmd;
	if (params == NULL ||
	    sscanf(params, "%u.%u.%u.%u/%u,%u%c", &a, &b, &cc, &dd, &len, &up, &tail) != 6 ||
	    a > 255 || b > 255 || cc > 255 || dd > 255 || len > 32 || up >= sw.n_uplinks) {
		snprintf(msg, sizeof(msg),
			 "error: expected PREFIX/LEN,UPLINK like 10.0.1.0/24,1 (uplinks 0..%d), got '%s'",
			 (int)sw.n_uplinks - 1, params ? params : "");
		rte_tel_data_string(d, msg);
		return 0;
	}
	atomic_store(&withdraw_request,
		     (int64_t)(a << 24 | b << 16 | cc << 8 | dd) << 16 | len << 8 | up);
	rte_tel_data_string(d, "ok");
	return 0;
}

/* PORT[@TIME],... : each port's link fails at TIME after the start */
static int
parse_fail(const char *spec)
{
	char buf[512], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *at = strchr(tok, '@'), *end;
		uint64_t t = 0;
		long port;

		if (at)
			*at++ = 0;
		port = strtol(tok, &end, 10);
		if (*end || end == tok || port < 0 || port >= sw.n_ports) {
			char range[48];

			snprintf(range, sizeof(range), "a port index 0..%u", sw.n_ports - 1u);
			return et_cli_bad("--fail", range, tok);
		}
		if (at && et_cli_time_ns("--fail", at, 1000000000, "a time like 500ms or 2s", &t))
			return -1;
		/* times count from the start of the poll loop, as now does */
		et_switch_fail(&sw, (uint16_t)port, t + 1, 0);
	}
	return 0;
}

static void
dump_counters(FILE *f)
{
	uint16_t i;
	int k;

	fprintf(f, "%-6s %12s %12s %10s %8s %8s %12s %8s %8s  drops\n", "port", "rx_pkts",
		"tx_pkts", "ecn_marks", "pause_tx", "pause_rx", "q_max_bytes", "arp_req", "arp_rep");
	for (i = 0; i < sw.n_ports; i++) {
		const struct et_sw_port *p = &sw.ports[i];

		fprintf(f, "%-6u %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %8" PRIu64
			   " %8" PRIu64 " %12" PRIu64 " %8" PRIu64 " %8" PRIu64 " ",
			i, p->st.rx_pkts, p->eg.st.tx_pkts, p->st.ecn_marks, p->st.pause_tx,
			p->st.pause_rx, p->eg.st.q_max_bytes, p->st.arp_requests, p->st.arp_replies);
		for (k = 0; k < ET_SW_DROP_COUNT; k++)
			if (p->st.drops[k])
				fprintf(f, " %s=%" PRIu64, et_sw_drop_name(k), p->st.drops[k]);
		if (p->eg.st.fail_drops)
			fprintf(f, " failed_link=%" PRIu64, p->eg.st.fail_drops);
		if (p->st.arp_unanswered)
			fprintf(f, " arp_unanswered=%" PRIu64, p->st.arp_unanswered);
		fprintf(f, "\n");
	}
}

/* When each port that is down now was routed around, on the machine's
 * CLOCK_MONOTONIC (the switch's own clock starts at start_mono_ms): what
 * another process's moments can be set against (scripts/testbed
 * --kill-spine asks whether its leaves stopped sending into a dead spine
 * before the first collective ended). */
static void
note_routed_around(uint64_t start_mono_ms)
{
	for (uint16_t i = 0; i < sw.n_ports; i++) {
		const struct et_sw_port *p = &sw.ports[i];

		if (p->down)
			et_info("port%u: routed around from %" PRIu64 " ms (CLOCK_MONOTONIC)", i,
				start_mono_ms + (p->failed_since + sw.p.detect_delay_ns) / 1000000);
	}
}

/* A bare net_ring device is a ring of this process alone: nothing arrives
 * on it (conf/switch-example.ini's ports, until replaced); say so rather
 * than let empty counters and captures puzzle. */
static void
note_rings(void)
{
	char list[128] = "";
	size_t n = 0;

	for (uint16_t i = 0; i < sw.n_ports && n < sizeof(list); i++)
		if (strncmp(sw.ports[i].port.name, "net_ring", 8) == 0)
			n += (size_t)snprintf(list + n, sizeof(list) - n, " %u", i);
	if (n)
		et_warn("port(s)%s: net_ring devices inside this process, which nothing outside "
			"reaches: no traffic (the conf's comments show tap, memif, af_packet and "
			"PCI ports)", list);
}

/* The addresses the switch answers ARP for, one line: "port0 10.0.0.254, ..." */
static void
note_addresses(void)
{
	char list[512] = "", ip[16];
	size_t n = 0;

	for (uint16_t i = 0; i < sw.n_ports && n < sizeof(list); i++)
		if (sw.ports[i].ip) {
			format_ipv4(sw.ports[i].ip, ip, sizeof(ip));
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%sport%u %s",
					      n ? ", " : "", i, ip);
		}
	if (n)
		et_info("answers ARP for: %s", list);
	else
		et_info("no port has an address (ip =): ARP is dropped");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"duration", required_argument, NULL, 'd'},
		{"pcap", required_argument, NULL, 'p'},
		{"yield", no_argument, NULL, 'y'},
		{"fail", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *file = NULL, *pcap_dir = NULL, *fail = NULL;
	struct et_capture *cap[ET_SW_MAX_PORTS] = {0};
	struct rte_mempool *mp;
	uint64_t start, start_mono_ms = 0, now, end = UINT64_MAX, link_next = 0;
	int n, opt, rc = 0, yield = 0;
	uint16_t i;

	et_cli_program("ethereal-switch");
	if (et_cli_wants_help(argc, argv)) {
		usage(stdout);
		return ET_EXIT_OK;
	}
	n = et_app_eal_init(NULL, argc, argv); /* no defaults: the line is DPDK's up to "--" */
	if (n < 0)
		return ET_EXIT_FAIL;
	argc -= n;
	argv += n;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, ":c:d:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			file = optarg;
			break;
		case 'd':
			if (et_cli_time_ns("--duration", optarg, 1000000000,
					   "seconds > 0 (or a time like 500ms)", &end)) {
				rc = ET_EXIT_USAGE;
				goto done;
			}
			break;
		case 'p':
			pcap_dir = optarg;
			break;
		case 'y':
			yield = 1;
			break;
		case 'f':
			fail = optarg;
			break;
		case 'h':
			usage(stdout);
			goto done;
		case ':':
			et_cli_error("%s: expected a value (see --help)", argv[optind - 1]);
			rc = ET_EXIT_USAGE;
			goto done;
		default:
			et_cli_error("%s: unknown option (see --help)", argv[optind - 1]);
			rc = ET_EXIT_USAGE;
			goto done;
		}
	}
	if (file == NULL || optind != argc) {
		if (file)
			et_cli_error("unexpected argument '%s' (see --help)", argv[optind]);
		else
			et_cli_error("--config FILE is required (see --help)");
		rc = ET_EXIT_USAGE;
		goto done;
	}
	if (pcap_dir && et_cli_out_dir("--pcap", pcap_dir)) {
		rc = ET_EXIT_USAGE;
		goto done;
	}
	mp = et_app_pool("switch", 32767, ET_APP_MBUF_4K_FRAME);
	if (mp == NULL) {
		et_cli_error("cannot create the mbuf pool: %s", rte_strerror(rte_errno));
		rc = ET_EXIT_FAIL;
		goto done;
	}
	if (load(file, mp) || (fail && parse_fail(fail))) {
		rc = ET_EXIT_USAGE;
		goto done;
	}
	if (pcap_dir) {
		for (i = 0; i < sw.n_ports; i++) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s-p%u.pcapng", pcap_dir, sw.name, i);
			errno = 0;
			cap[i] = et_capture_open(path, sw.ports[i].port.name);
			if (cap[i] == NULL) {
				et_cli_error("--pcap: cannot write %s: %s", path,
					     errno ? strerror(errno) : "no memory");
				rc = ET_EXIT_FAIL;
				goto done;
			}
			et_switch_set_capture(&sw, i, cap[i]);
		}
	}
	rte_telemetry_register_cmd("/ethereal/switch/ports", tel_ports,
				   "Per-port counters of the switch");
	rte_telemetry_register_cmd("/ethereal/switch/fail", tel_fail,
				   "Fail a port's link now. Parameter: port index");
	rte_telemetry_register_cmd("/ethereal/switch/restore", tel_restore,
				   "Bring a failed port's link back. Parameter: port index");
	rte_telemetry_register_cmd("/ethereal/switch/withdraw", tel_withdraw,
				   "Traffic up to a prefix avoids an uplink. Parameters: PREFIX/LEN,UPLINK");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	for (i = 0; i < sw.n_ports; i++)
		et_port_watch_link(&sw.ports[i].port, on_link_event, NULL); /* else polled */
	start = et_tsc_ns();
	start_mono_ms = et_mono_ms();
	et_info("%s: %u ports, %u uplinks, %s mode%s", sw.name, sw.n_ports, sw.n_uplinks,
		sw.p.mode == ET_SW_ECMP ? "ECMP" : "source-route", sw.p.pfc ? ", PFC on" : "");
	note_addresses();
	note_rings();
	while (!stop) {
		int req;

		now = et_tsc_ns() - start + 1;
		if (now >= end)
			break;
		if (now >= link_next || atomic_exchange(&link_event, 0)) {
			watch_links(now);
			link_next = now + LINK_POLL_NS;
		}
		req = atomic_exchange(&fail_request, -1);
		if (req >= 0)
			et_switch_fail(&sw, (uint16_t)req, now, 0);
		req = atomic_exchange(&restore_request, -1);
		if (req >= 0)
			et_switch_restore(&sw, (uint16_t)req, now);
		int64_t w = atomic_exchange(&withdraw_request, -1);

		if (w >= 0 && et_switch_withdraw(&sw, (uint32_t)(w >> 16), (uint8_t)(w >> 8),
						 (uint8_t)w, now))
			et_warn("withdraw: the switch's table of withdrawn routes is full");
		/* sharing cores with other processes (a testbed on one machine):
		 * give the core away when there was nothing to do */
		if (et_switch_poll(&sw, now) == 0 && yield)
			sched_yield();
	}
	dump_counters(stdout);
	note_routed_around(start_mono_ms);
	for (i = 0; i < sw.n_ports; i++)
		if (cap[i])
			et_info("%s/%s-p%u.pcapng: %" PRIu64 " frames", pcap_dir, sw.name, i,
				et_capture_count(cap[i]));
done:
	for (i = 0; i < ET_SW_MAX_PORTS; i++)
		et_capture_close(cap[i]);
	for (i = 0; i < sw.n_ports; i++)
		et_port_close(&sw.ports[i].port);
	et_switch_free(&sw);
	et_app_eal_cleanup();
	return rc;
}
