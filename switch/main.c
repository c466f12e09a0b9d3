/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-switch: Ethereal switches on any DPDK ports, one per conf file:
 * one switch, as on a lab's machine, or every switch of a fabric in one
 * process, joined by ring ports (dev = ring:NAME at both ends: mbufs
 * handed over, no copy) and polled by its lcores (lanes).
 *
 *   ethereal-switch [EAL args --] --config FILE [--config FILE...]
 *                   [--duration S] [--pcap DIR] [--yield] [--fail SPEC]
 *
 * A port's `ip` (default for a down port: .254 of its first prefix's /24)
 * is the gateway kernel hosts behind it resolve by ARP: docs/switch.md.
 * Counters are served by rte_telemetry under /ethereal/switch/ (sw_tel.c)
 * and printed at exit (stdout; messages go to stderr through et_cli's
 * log).  Every port's link is read every 10 ms, and at once on a PMD's
 * link event: a link that goes down is a failed one, routed around after
 * the detection delay (docs/switch.md); a ring port's link is down once
 * the switch at its far end was killed (/ethereal/switch/kill,SWITCH).
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
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "host/et_worker.h"
#include "link/et_capture.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "et_switch.h"
#include "sw_proc_priv.h"

/* how often every port's link is read (LSC events read them at once):
 * well inside the detection delay it starts */
#define LINK_POLL_NS 10000000ull
#define MAX_SWITCHES 1024

static volatile sig_atomic_t stop;
static struct sw_proc proc;
static _Atomic int link_event; /* a PMD told of a link change (LSC): each lane reads */
static uint64_t start, end = UINT64_MAX;
static bool yield;

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
		"usage: ethereal-switch [EAL args --] --config FILE [--config FILE...] [--duration S]\n"
		"                       [--pcap DIR] [--yield] [--fail [SWITCH:]PORT[@TIME][,...]]\n"
		"  --config FILE  a switch, its ports and routes (see conf/switch-example.ini); again\n"
		"                 for each switch the process runs: a port with dev = ring:NAME is\n"
		"                 joined to the other switch's port that names the same ring\n"
		"  --fail SPEC    fail port PORT's link at TIME after the start (default 0; like\n"
		"                 500ms, 2s), for good: as the conf's [failN] sections; SWITCH (its\n"
		"                 name) when the process runs more than one\n"
		"  --duration S   stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  --pcap DIR     write every port's traffic to DIR/<switch>-p<N>.pcapng\n"
		"  --yield        give the core away when idle (processes sharing cores)\n"
		"  --help         this (before or after --)\n"
		"Switches are spread over the EAL's lcores (-l 0-1: two lanes).\n"
		"Telemetry (dpdk-telemetry.py, Debian's dpdk-dev; scripts/switch-ctl), SWITCH, needed\n"
		"when the process runs more than one: /ethereal/switch/ports[,SWITCH],\n"
		"/ethereal/switch/fail,[SWITCH,]PORT, /ethereal/switch/restore,[SWITCH,]PORT,\n"
		"/ethereal/switch/withdraw,[SWITCH,]PREFIX/LEN,UPLINK (a route the far side lost: what\n"
		"goes up to PREFIX avoids that uplink, as a routing protocol would converge) and\n"
		"/ethereal/switch/kill,SWITCH (its ports go down as a dead machine's would).\n"
		ET_CLI_EAL_HELP);
}

/* ---- links ---- */

static int
on_link_event(uint16_t port, enum rte_eth_event_type type, void *arg, void *ret)
{
	(void)port;
	(void)type;
	(void)arg;
	(void)ret;
	atomic_store(&link_event, 1); /* from the interrupt thread: the lanes read them */
	return 0;
}

/* A port's link now: its PMD's word, or for a ring port whether the
 * switch at its far end is alive. */
static int
link_up(const struct sw_node *x, uint16_t i)
{
	int16_t peer = x->ring_peer[i];

	if (peer >= 0)
		return !atomic_load(&proc.node[peer].dead);
	return et_port_link_up(&x->sw.ports[i].port);
}

/* Every port's link (a link already up at the first reading must be
 * marked seen, or its death fails nothing); a change is a failure or a
 * restore of the link (et_switch_set_link), said once. */
static void
watch_links(struct sw_node *x, uint64_t now)
{
	struct et_switch *sw = &x->sw;
	unsigned int delay_ms = (unsigned int)(sw->p.detect_delay_ns / 1000000);

	for (uint16_t i = 0; i < sw->n_ports; i++) {
		bool seen = sw->ports[i].link_seen;
		int up = link_up(x, i);

		if (up < 0)
			continue;
		if (et_switch_set_link(sw, i, up, now))
			et_warn("%s: port%u: link %s: %s after %u ms (the detection delay)", sw->name,
				i, up ? "up again" : "down", up ? "used again" : "routed around",
				delay_ms);
		else if (up && !seen)
			et_info("%s: port%u: link up", sw->name, i);
	}
}

/* Killed: polled no more; its ethdev ports stop (a memif peer sees its
 * link go down, as when a process dies), its ring peers read their links
 * down (link_up). */
static void
kill_node(struct sw_node *x)
{
	atomic_store(&x->dead, true);
	x->killed_mono_ms = et_mono_ms();
	for (uint16_t i = 0; i < x->sw.n_ports; i++)
		if (x->sw.ports[i].port.kind == ET_PORT_ETHDEV)
			rte_eth_dev_stop(x->sw.ports[i].port.eth_port);
	et_warn("%s: killed (telemetry): its ports are down", x->sw.name);
}

/* What telemetry asked of it, and its links when due. */
static void
control(struct sw_node *x, uint64_t now, bool event)
{
	struct et_switch *sw = &x->sw;
	int64_t w;
	int req;

	if (atomic_exchange(&x->kill_request, false)) {
		kill_node(x);
		return;
	}
	if (now >= x->link_next || event) {
		watch_links(x, now);
		x->link_next = now + LINK_POLL_NS;
	}
	req = atomic_exchange(&x->fail_request, -1);
	if (req >= 0)
		et_switch_fail(sw, (uint16_t)req, now, 0);
	req = atomic_exchange(&x->restore_request, -1);
	if (req >= 0)
		et_switch_restore(sw, (uint16_t)req, now);
	w = atomic_exchange(&x->withdraw_request, -1);
	if (w >= 0 && et_switch_withdraw(sw, (uint32_t)(w >> 16), (uint8_t)(w >> 8),
					 (uint8_t)w, now))
		et_warn("%s: withdraw: the switch's table of withdrawn routes is full", sw->name);
}

/* A lane: the switches of this lcore, polled in turn until the end. */
static int
lane_main(void *arg)
{
	unsigned int lane = (unsigned int)rte_lcore_index((int)rte_lcore_id());
	uint64_t event_seen = 0;

	(void)arg;
	while (!stop) {
		uint64_t now = et_tsc_ns() - start + 1;
		uint32_t work = 0;
		bool event = false;

		if (now >= end) {
			stop = 1;
			break;
		}
		/* a link event is every lane's: each reads its ports once */
		if (atomic_load(&link_event) && now - event_seen > LINK_POLL_NS / 10) {
			event = true;
			event_seen = now;
			if (lane == 0)
				atomic_store(&link_event, 0);
		}
		for (uint16_t i = 0; i < proc.n; i++) {
			struct sw_node *x = &proc.node[i];

			if (x->lane != lane || atomic_load(&x->dead))
				continue;
			control(x, now, event);
			if (!atomic_load(&x->dead))
				work += et_switch_poll(&x->sw, now);
		}
		/* sharing cores with other processes (a testbed on one machine):
		 * give the core away when there was nothing to do */
		if (work == 0 && yield)
			sched_yield();
	}
	return 0;
}

/* ---- the command line ---- */

/* [SWITCH:]PORT[@TIME],... : each port's link fails at TIME after the start */
static int
parse_fail(const char *spec)
{
	char buf[512], *save = NULL, *tok, msg[256];

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *at = strchr(tok, '@'), *colon = strchr(tok, ':'), *end_p;
		struct sw_node *x;
		uint64_t t = 0;
		long port;

		if (at)
			*at++ = 0;
		if (colon)
			*colon++ = 0;
		x = sw_find(&proc, colon ? tok : NULL, msg, sizeof(msg));
		if (x == NULL) {
			char what[300];

			snprintf(what, sizeof(what), "SWITCH:PORT, the switch %s", msg);
			return et_cli_bad("--fail", what, tok);
		}
		if (colon)
			tok = colon;
		port = strtol(tok, &end_p, 10);
		if (*end_p || end_p == tok || port < 0 || port >= x->sw.n_ports) {
			char range[64];

			snprintf(range, sizeof(range), "a port index 0..%u of %s",
				 x->sw.n_ports - 1u, x->sw.name);
			return et_cli_bad("--fail", range, tok);
		}
		if (at && et_cli_time_ns("--fail", at, 1000000000, "a time like 500ms or 2s", &t))
			return -1;
		/* times count from the start of the poll loop, as now does */
		et_switch_fail(&x->sw, (uint16_t)port, t + 1, 0);
	}
	return 0;
}

/* ---- reports ---- */

static void
dump_counters(FILE *f, const struct sw_node *x)
{
	const struct et_switch *sw = &x->sw;
	int k;

	/* one switch: its table alone, as a lab's scripts read it */
	if (proc.n > 1)
		fprintf(f, "switch %s%s\n", sw->name, atomic_load(&x->dead) ? " (killed)" : "");
	fprintf(f, "%-6s %12s %12s %10s %8s %8s %12s %8s %8s  drops\n", "port", "rx_pkts",
		"tx_pkts", "ecn_marks", "pause_tx", "pause_rx", "q_max_bytes", "arp_req", "arp_rep");
	for (uint16_t i = 0; i < sw->n_ports; i++) {
		const struct et_sw_port *p = &sw->ports[i];

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
note_routed_around(const struct sw_node *x, uint64_t start_mono_ms)
{
	const struct et_switch *sw = &x->sw;

	if (atomic_load(&x->dead)) {
		et_info("%s: killed at %" PRIu64 " ms (CLOCK_MONOTONIC)", sw->name,
			x->killed_mono_ms);
		return;
	}
	for (uint16_t i = 0; i < sw->n_ports; i++) {
		const struct et_sw_port *p = &sw->ports[i];

		if (p->down)
			et_info("%s: port%u: routed around from %" PRIu64 " ms (CLOCK_MONOTONIC)",
				sw->name, i,
				start_mono_ms + (p->failed_since + sw->p.detect_delay_ns) / 1000000);
	}
}

/* A bare net_ring device is a ring of this process alone: nothing arrives
 * on it (conf/switch-example.ini's ports, until replaced); say so rather
 * than let empty counters and captures puzzle. */
static void
note_rings(const struct et_switch *sw)
{
	char list[128] = "";
	size_t n = 0;

	for (uint16_t i = 0; i < sw->n_ports && n < sizeof(list); i++)
		if (strncmp(sw->ports[i].port.name, "net_ring", 8) == 0)
			n += (size_t)snprintf(list + n, sizeof(list) - n, " %u", i);
	if (n)
		et_warn("%s: port(s)%s: net_ring devices inside this process, which nothing outside "
			"reaches: no traffic (the conf's comments show tap, memif, af_packet and "
			"PCI ports; ring:NAME joins two switches of one process)", sw->name, list);
}

/* The addresses the switch answers ARP for, one line: "port0 10.0.0.254, ..." */
static void
note_addresses(const struct et_switch *sw)
{
	char list[512] = "", ip[16];
	size_t n = 0;

	for (uint16_t i = 0; i < sw->n_ports && n < sizeof(list); i++)
		if (sw->ports[i].ip) {
			sw_format_ipv4(sw->ports[i].ip, ip, sizeof(ip));
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%sport%u %s",
					      n ? ", " : "", i, ip);
		}
	if (n)
		et_info("%s: answers ARP for: %s", sw->name, list);
	else
		et_info("%s: no port has an address (ip =): ARP is dropped", sw->name);
}

/* Captures of every port, DIR/<switch>-p<N>.pcapng. */
static int
open_captures(struct sw_node *x, const char *dir)
{
	for (uint16_t i = 0; i < x->sw.n_ports; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s-p%u.pcapng", dir, x->sw.name, i);
		errno = 0;
		x->cap[i] = et_capture_open(path, x->sw.ports[i].port.name);
		if (x->cap[i] == NULL) {
			et_cli_error("--pcap: cannot write %s: %s", path,
				     errno ? strerror(errno) : "no memory");
			return -1;
		}
		et_switch_set_capture(&x->sw, i, x->cap[i]);
	}
	return 0;
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
	static char *files[MAX_SWITCHES];
	const char *pcap_dir = NULL, *fail = NULL;
	struct rte_mempool *mp;
	uint64_t start_mono_ms = 0;
	uint16_t n_files = 0, i;
	int n, opt, rc = 0;

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
			if (n_files == MAX_SWITCHES) {
				et_cli_error("--config: at most %d switches in one process",
					     MAX_SWITCHES);
				rc = ET_EXIT_USAGE;
				goto done;
			}
			files[n_files++] = optarg;
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
			yield = true;
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
	if (n_files == 0 || optind != argc) {
		if (n_files)
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
	/* the switches' queues and rings hold mbufs of the one pool: 8 K more
	 * for each switch after the first (a 2 x 2 leaf-spine: 48 K, 220 MB) */
	mp = et_app_pool("switch", 32767 + 8192u * (n_files - 1u), ET_APP_MBUF_4K_FRAME);
	if (mp == NULL) {
		et_cli_error("cannot create the mbuf pool: %s", rte_strerror(rte_errno));
		rc = ET_EXIT_FAIL;
		goto done;
	}
	if (sw_load(&proc, files, n_files, mp) || (fail && parse_fail(fail))) {
		rc = ET_EXIT_USAGE;
		goto done;
	}
	proc.n_lanes = (uint16_t)rte_lcore_count();
	for (i = 0; i < proc.n; i++) {
		proc.node[i].lane = i % proc.n_lanes;
		if (pcap_dir && open_captures(&proc.node[i], pcap_dir)) {
			rc = ET_EXIT_FAIL;
			goto done;
		}
	}
	sw_tel_register(&proc);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	for (i = 0; i < proc.n; i++)
		for (uint16_t k = 0; k < proc.node[i].sw.n_ports; k++)
			if (proc.node[i].ring_peer[k] < 0) /* else polled */
				et_port_watch_link(&proc.node[i].sw.ports[k].port, on_link_event,
						   NULL);
	start = et_tsc_ns();
	start_mono_ms = et_mono_ms();
	for (i = 0; i < proc.n; i++) {
		const struct et_switch *sw = &proc.node[i].sw;

		note_addresses(sw);
		note_rings(sw);
	}
	/* the lines a launcher waits for, last: every port is up by now */
	for (i = 0; i < proc.n; i++) {
		const struct et_switch *sw = &proc.node[i].sw;

		et_info("%s: %u ports, %u uplinks, %s mode%s", sw->name, sw->n_ports,
			sw->n_uplinks, sw->p.mode == ET_SW_ECMP ? "ECMP" : "source-route",
			sw->p.pfc ? ", PFC on" : "");
	}
	rte_eal_mp_remote_launch(lane_main, NULL, CALL_MAIN);
	rte_eal_mp_wait_lcore();
	for (i = 0; i < proc.n; i++)
		dump_counters(stdout, &proc.node[i]);
	for (i = 0; i < proc.n; i++) {
		const struct sw_node *x = &proc.node[i];

		note_routed_around(x, start_mono_ms);
		for (uint16_t k = 0; k < x->sw.n_ports; k++)
			if (x->cap[k])
				et_info("%s/%s-p%u.pcapng: %" PRIu64 " frames", pcap_dir, x->sw.name,
					k, et_capture_count(x->cap[k]));
	}
done:
	for (i = 0; i < proc.n; i++) {
		struct sw_node *x = &proc.node[i];

		for (uint16_t k = 0; k < ET_SW_MAX_PORTS; k++)
			et_capture_close(x->cap[k]);
		for (uint16_t k = 0; k < x->sw.n_ports; k++)
			et_port_close(&x->sw.ports[k].port);
		et_switch_free(&x->sw);
	}
	free(proc.node);
	et_app_eal_cleanup();
	return rc;
}
