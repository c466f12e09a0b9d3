/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node's command line: the options, their checks, a tool's
 * defaults, and a peer's parameters given by hand (--peer).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "et_cli.h"
#include "node.h"

const char *const mode_names[] = {"write_bw", "send_bw", "write_lat", "pingpong", "send_lat",
				  "read_bw", "read_lat", "atomic_bw", "ucmatose", "rping", NULL};
static const char *const oob_names[] = {"ethereal", "pingpong", "perftest", "cm", NULL};

void
usage(FILE *f)
{
	fprintf(f,
		"usage: ethereal-node [EAL args --] --port DEV --ip ADDR (--server | --client HOST)\n"
		"         [--mode write_bw|send_bw|write_lat|send_lat|read_bw|read_lat|atomic_bw]\n"
		"         [--size BYTES | --all]\n"
		"         [--iters N | --duration S]\n"
		"         [--qps N] [--mtu 256..4096] [--paths N] [--rate GBPS] [--oob-port N] [--verify]\n"
		"         [--json FILE] [--yield] [--rto-ms N] [--peer SPEC] [--mac MAC] [--workers N]\n"
		"         [--oob ethereal|pingpong|perftest|cm] [--mode pingpong|ucmatose|rping]\n"
		"         [--fault KEY=VAL,...] [--rx-loss-ppm N] [--seed N] [--save FILE] [--pcap FILE]\n"
		"  --port DEV     a DPDK device: net_memif0,role=server,socket=/run/x.sock, net_tap0,iface=t0, a PCI address\n"
		"  --ip ADDR      this host's RoCE IPv4 address\n"
		"  --client HOST  the server's management address (TCP --oob-port, default 19875)\n"
		"  --paths N      QP i takes path ID (i mod N, 0): uplink i mod N at the first switch up\n"
		"  --rate GBPS    pace the NIC with a link model (default: the wire decides)\n"
		"  --yield        give the core away when idle (processes sharing cores)\n"
		"  --workers N    write_bw, send_bw: N lcores (the EAL's first N), each with a queue\n"
		"                 pair of the port and QPs k, k+N, ...; a frame on another's queue\n"
		"                 is handed to it by QPN (default 1; --rate is the port's, shared)\n"
		"  --rto-ms N     retransmit timeout (default 67 ms, the RDMA tools' timeout 14:\n"
		"                 4.096 us << 14; a process on a shared core can wait longer than\n"
		"                 the fabric's 1 ms for its core)\n"
		"  --mac MAC      this host's MAC (default: the port's; on a bridged tap give one)\n"
		"  --peer SPEC    the peer's parameters instead of the TCP exchange, as the peer\n"
		"                 prints them: mac=..,ip=..,qpn=..,psn=..,rkey=..,addr=..\n"
		"  --oob DIALECT  the TCP exchange: ethereal (ours, default), pingpong (ibv_rc_pingpong:\n"
		"                 mode pingpong, TCP 18515, size 4096, MTU 1024 as the tool), perftest\n"
		"                 (ib_write_bw, ib_send_bw, ib_write_lat, ib_send_lat: the mode of\n"
		"                 the same name, TCP 18515, the tool's -s, -n and -q defaults)\n"
		"  --oob cm       no TCP: connections by RDMA CM on the wire (MADs to QP 1), as\n"
		"                 rdma_cm makes them; --client HOST is the peer's RoCE address.\n"
		"                 The perftest modes speak perftest -R (ib_write_bw -R, ...: its\n"
		"                 exchange in SENDs on a QP of its own, rdma_cm port 18515);\n"
		"                 --mode ucmatose is rdmacm-utils' ucmatose (port 7471: --iters\n"
		"                 SENDs of --size each way, the server's first; --qps connections,\n"
		"                 up to 65535, up to 256 asked for at once);\n"
		"                 --mode rping is its rping (port 7174: --iters pings of --size, the\n"
		"                 server READs the client's buffer and WRITEs it back; --verify:\n"
		"                 the echo, or what was read, is rping's text)\n"
		"  --all          perftest's -a: every size 2 .. 8388608, a row each (--oob perftest, cm)\n"
		"  --mode send_lat  ib_send_lat's ping-pong of SENDs (--oob perftest); write_lat with\n"
		"                 --oob perftest is ib_write_lat's ping-pong of WRITEs\n"
		"  --mode read_bw, read_lat  the client RDMA READs the server's memory (ib_read_bw,\n"
		"                 ib_read_lat: one READ at a time, each timed); the server only\n"
		"                 answers; --verify: the client checks what it read\n"
		"  --mode atomic_bw  the client's FETCH & ADDs of 1 on the server's memory, 8 bytes\n"
		"                 (ib_atomic_bw); --verify: each returns the count before it, so\n"
		"                 none ran twice\n"
		"  --mode pingpong  one SEND each way per iteration, the client first; the server\n"
		"                 echoes, the client times round trips and checks the echo (--verify)\n"
		"  --fault SPEC   lose, corrupt or duplicate what we send, to test a peer's recovery:\n"
		"                 loss-ppm=, ge-enter-ppm=, ge-exit-ppm=, ge-loss-ppm=, corrupt-ppm=,\n"
		"                 dup-ppm=, flap-period-us=, flap-down-us= (jitter-ns needs --rate)\n"
		"  --rx-loss-ppm N  drop this share of the RoCEv2 frames we receive (data and ACKs)\n"
		"  --seed N       seeds --fault and --rx-loss-ppm (default 1)\n"
		"  --save FILE    at the end, write our buffer (what the peer wrote or sent last) to FILE\n"
		"  --pcap FILE    the frames this node sends, as pcapng (what it receives is in the\n"
		"                 peer's capture)\n"
		"  --size, --rate, --duration take 65536 or 64K, 100 (Gbit/s), 10 or 500ms\n"
		"  --help         this (before or after --)\n"
		"The table: Gbit/s of payload; Mmsg/s, messages (perftest's MsgRate); Mpps,\n"
		"packets; latency (write_lat, send_lat, pingpong, read_lat) is a round trip\n"
		"(ib_write_lat and ib_send_lat print half of it, ib_read_lat all).  A row per\n"
		"size (--all: 23).\n"
		"Messages go to stderr (DPDK's log, type ethereal.node), the table to stdout.\n"
		"Exit: 0 done; 1 the run failed (or DPDK did), said in one line: no messages,\n"
		"wrong sizes, the peer gone or in another mode, the exchange failed; 2 a bad\n"
		"command line.\n"
		ET_CLI_EAL_HELP);
}

/* "mac=02:00:00:00:00:02,ip=10.0.0.2,qpn=0x100,psn=0x1000,rkey=0x102,
 * addr=0x7f..": the peer's parameters given by hand.  Size, MTU and QP count
 * are ours; a missing MAC is asked for by ARP (broadcast if nobody answers,
 * fine on memif and behind a switch); a given one is a static ARP entry. */
int
parse_peer(const char *spec, const struct peer *me, struct peer *p)
{
	char buf[256], *save = NULL, *kv;
	struct in_addr a;

	*p = *me;
	memset(&p->mac, 0xff, sizeof(p->mac));
	p->ip = 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '='), *end;
		unsigned long long x;

		if (v == NULL)
			goto bad;
		*v++ = '\0';
		if (strcmp(kv, "mac") == 0) {
			if (rte_ether_unformat_addr(v, &p->mac))
				goto bad;
			continue;
		}
		if (strcmp(kv, "ip") == 0) {
			if (inet_pton(AF_INET, v, &a) != 1)
				goto bad;
			p->ip = ntohl(a.s_addr);
			continue;
		}
		errno = 0;
		x = strtoull(v, &end, 0);
		if (*end || errno)
			goto bad;
		if (strcmp(kv, "qpn") == 0 && x <= ET_QPN_MASK)
			p->qpn_base = (uint32_t)x;
		else if (strcmp(kv, "psn") == 0 && x <= ET_PSN_MASK)
			p->psn = (uint32_t)x;
		else if (strcmp(kv, "rkey") == 0 && x <= UINT32_MAX)
			p->rkey = (uint32_t)x;
		else if (strcmp(kv, "addr") == 0)
			p->addr = x;
		else
			goto bad;
	}
	if (p->ip == 0)
		return et_cli_error("--peer: ip=A.B.C.D is required");
	return 0;
bad:
	return et_cli_bad("--peer", "mac=,ip=,qpn=,psn=,rkey=,addr= (comma separated)", spec);
}

bool
peer_has_mac(const char *spec)
{
	return strncmp(spec, "mac=", 4) == 0 || strstr(spec, ",mac=") != NULL;
}

/* A tool's dialect brings the tool's defaults and its one kind of test. */
static int
tool_defaults(struct opts *o)
{
	if (o->oob == OOB_PINGPONG) {
		if (o->mode_set && o->mode != MODE_PINGPONG)
			return et_cli_error("--oob pingpong runs --mode pingpong only");
		o->mode = MODE_PINGPONG;
		o->size = o->size_set ? o->size : 4096;
		o->mtu = o->mtu_set ? o->mtu : 1024;
	} else if (o->oob == OOB_PERFTEST && (o->mode == MODE_PINGPONG || is_rdmacm_tool(o->mode))) {
		return et_cli_error("--oob perftest runs --mode write_bw, send_bw, write_lat, "
				    "send_lat, read_bw, read_lat or atomic_bw");
	} else if (o->oob == OOB_CM && o->mode == MODE_PINGPONG) {
		return et_cli_error("--oob cm runs --mode write_bw, send_bw, write_lat, send_lat, "
				    "read_bw, read_lat, atomic_bw (perftest -R), ucmatose or rping");
	} else if (is_rdmacm_tool(o->mode)) {
		if (o->oob != OOB_CM)
			return et_cli_error("--mode %s is rdmacm-utils' test: give --oob cm",
					    mode_names[o->mode]);
		/* the tools' defaults: ucmatose -C 10 -S 100, rping -S 64 (and
		 * -C 0, for ever: ours 1000) */
		o->size = o->size_set ? o->size : o->mode == MODE_UCMATOSE ? 100 : 64;
		o->iters = o->iters_set ? o->iters : o->mode == MODE_UCMATOSE ? 10 : 1000;
		if (o->mode == MODE_UCMATOSE && (o->iters == 0 || o->iters > (1u << 20)))
			return et_cli_error("--mode ucmatose: --iters 1..1048576 (its -C: every "
					    "receive is posted at once)");
		if (o->mode == MODE_RPING && (o->size < RPING_MIN_SIZE || o->qps != 1))
			return et_cli_error("--mode rping: one connection (--qps 1), --size %u or "
					    "more (its message and a count)", RPING_MIN_SIZE);
	}
	if (o->oob == OOB_CM)
		o->mtu = o->mtu_set ? o->mtu : 1024; /* rxe's on a 1500-byte link: the REQ asks it */
	if (is_perftest(o)) {
		/* the tools' defaults: 2 bytes for latency, write_bw 5000 times */
		if (!o->size_set)
			o->size = times_rounds(o->mode) ? 2 : 65536;
		if (!o->iters_set)
			o->iters = o->mode == MODE_WRITE_BW ? 5000 : 1000;
	}
	if (o->mode == MODE_ATOMIC_BW) {
		if (o->size_set && o->size != ET_ATOMIC_LEN)
			return et_cli_error("--mode atomic_bw works on %u bytes: no --size", ET_ATOMIC_LEN);
		if (o->all)
			return et_cli_error("--mode atomic_bw works on %u bytes: no --all", ET_ATOMIC_LEN);
		o->size = ET_ATOMIC_LEN;
	}
	if (o->mode == MODE_SEND_LAT && !is_perftest(o))
		return et_cli_error("--mode send_lat is ib_send_lat's test: give --oob perftest");
	if (o->all && !is_perftest(o))
		return et_cli_error("--all is perftest's -a: give --oob perftest");
	if (o->all && o->size_set)
		return et_cli_error("--all runs every size: give it or --size, not both");
	if (o->all && o->duration_ns)
		return et_cli_error("--all counts messages per size: give --iters, not --duration");
	if (o->oob != OOB_ETHEREAL && !o->port_set)
		o->oob_port = o->mode == MODE_UCMATOSE ? 7471 : o->mode == MODE_RPING ? 7174 : 18515;
	if (o->oob != OOB_ETHEREAL && o->peer)
		return et_cli_error("--peer replaces the exchange: give it or --oob, not both");
	if (is_perftest(o) && times_rounds(o->mode) && o->qps != 1)
		return et_cli_error("--oob %s --mode %s runs one QP (the tool's -q is for "
				    "bandwidth tests only)", oob_names[o->oob], mode_names[o->mode]);
	if (o->oob == OOB_CM && o->duration_ns)
		return et_cli_error("--oob cm counts messages: give --iters, not --duration");
	if (o->oob == OOB_PERFTEST && !(passive_server(o->mode) && !times_rounds(o->mode)) &&
	    o->duration_ns)
		return et_cli_error("--oob perftest --mode %s counts messages: "
				    "give --iters, not --duration (the peer expects exactly that many)",
				    mode_names[o->mode]);
	if (o->oob == OOB_CM && o->client && inet_pton(AF_INET, o->client, &(struct in_addr){0}) != 1)
		return et_cli_bad("--client", "the peer's RoCE IPv4 address (--oob cm)", o->client);
	if (o->oob == OOB_CM && o->workers > 1)
		return et_cli_error("--oob cm runs one worker (the connection manager is lane 0's)");
	if (o->mode == MODE_PINGPONG && o->qps != 1)
		return et_cli_error("--mode pingpong runs one QP (--qps 1)");
	return 0;
}

/* --workers share the QPs of a bandwidth test; the EAL must give them
 * their lcores. */
static int
workers_check(const struct opts *o)
{
	if (o->workers == 1)
		return 0;
	if (o->mode != MODE_WRITE_BW && o->mode != MODE_SEND_BW && o->mode != MODE_READ_BW &&
	    o->mode != MODE_ATOMIC_BW)
		return et_cli_error("--workers: --mode %s times one QP's round trips, on one worker",
				    mode_names[o->mode]);
	if (o->qps < o->workers)
		return et_cli_error("--workers %u needs at least as many QPs (--qps %u)", o->workers,
				    o->qps);
	if (o->pcap)
		return et_cli_error("--pcap captures one worker's frames: give --workers 1");
	if (rte_lcore_count() < o->workers)
		return et_cli_error("--workers %u needs %u lcores; the EAL has %u (give -l 0-%u)",
				    o->workers, o->workers, rte_lcore_count(), o->workers - 1);
	return 0;
}

int
parse_options(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"port", required_argument, NULL, 'p'}, {"ip", required_argument, NULL, 'i'},
		{"server", no_argument, NULL, 's'}, {"client", required_argument, NULL, 'c'},
		{"mode", required_argument, NULL, 'm'}, {"size", required_argument, NULL, 'z'},
		{"iters", required_argument, NULL, 'n'}, {"duration", required_argument, NULL, 'D'},
		{"qps", required_argument, NULL, 'q'}, {"mtu", required_argument, NULL, 'M'},
		{"rate", required_argument, NULL, 'r'}, {"oob-port", required_argument, NULL, 'o'},
		{"verify", no_argument, NULL, 'v'}, {"json", required_argument, NULL, 'j'},
		{"paths", required_argument, NULL, 'P'}, {"yield", no_argument, NULL, 'y'},
		{"rto-ms", required_argument, NULL, 'R'}, {"peer", required_argument, NULL, 'e'},
		{"mac", required_argument, NULL, 'A'}, {"oob", required_argument, NULL, 'O'},
		{"fault", required_argument, NULL, 'F'}, {"rx-loss-ppm", required_argument, NULL, 'L'},
		{"seed", required_argument, NULL, 'S'}, {"save", required_argument, NULL, 'W'},
		{"pcap", required_argument, NULL, 'C'}, {"all", no_argument, NULL, 'a'},
		{"workers", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct in_addr a;
	int c, k;

	memset(o, 0, sizeof(*o));
	o->size = 65536;
	o->qps = 1;
	o->mtu = 4096;
	o->iters = 1000;
	o->oob_port = 19875;
	o->paths = 1;
	o->workers = 1;
	/* what perftest and ibv_rc_pingpong give a NIC: at 1 ms, a peer whose
	 * core the OS took for 7 ms (seen on 2 shared cores) ends the QP,
	 * retry counter exceeded, having lost nothing */
	o->rto_ms = 67;
	o->faults.seed = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'p': o->port = optarg; break;
		case 'i':
			if (inet_pton(AF_INET, optarg, &a) != 1)
				return et_cli_bad("--ip", "an IPv4 address", optarg);
			o->ip = ntohl(a.s_addr);
			break;
		case 's': o->server = 1; break;
		case 'c': o->client = optarg; break;
		case 'm':
			if ((k = et_cli_choice("--mode", mode_names, optarg)) < 0)
				return -1;
			o->mode = (enum mode)k;
			o->mode_set = true;
			break;
		case 'O':
			if ((k = et_cli_choice("--oob", oob_names, optarg)) < 0)
				return -1;
			o->oob = (enum oob_dialect)k;
			break;
		case 'z':
			if (et_cli_bytes("--size", optarg, 1, 1u << 30, &v))
				return -1;
			o->size = (uint32_t)v;
			o->size_set = true;
			break;
		case 'n':
			if (et_cli_u64("--iters", optarg, 0, UINT64_MAX, &o->iters))
				return -1;
			o->iters_set = true;
			break;
		case 'a': o->all = true; break;
		case 'D':
			if (et_cli_time_ns("--duration", optarg, 1000000000,
					   "seconds > 0 (or a time like 500ms)", &o->duration_ns))
				return -1;
			break;
		case 'q':
			if (et_cli_u64("--qps", optarg, 1, MAX_QPS, &v))
				return -1;
			o->qps = (uint32_t)v;
			break;
		case 'M':
			if (et_parse_u64(optarg, &v) || v < 256 || v > 4096 || (v & (v - 1)))
				return et_cli_bad("--mtu", "256, 512, 1024, 2048 or 4096", optarg);
			o->mtu = (uint32_t)v;
			o->mtu_set = true;
			break;
		case 'r': {
			char *end;

			o->rate_bps = (uint64_t)(strtod(optarg, &end) * 1e9);
			if (*end || o->rate_bps == 0)
				return et_cli_bad("--rate", "Gbit/s > 0", optarg);
			break;
		}
		case 'o':
			if (et_cli_u64("--oob-port", optarg, 1, 65535, &v))
				return -1;
			o->oob_port = (uint16_t)v;
			o->port_set = true;
			break;
		case 'P':
			if (et_cli_u64("--paths", optarg, 1, 256, &v))
				return -1;
			o->paths = (uint32_t)v;
			break;
		case 'w':
			if (et_cli_u64("--workers", optarg, 1, MAX_WORKERS, &v))
				return -1;
			o->workers = (uint32_t)v;
			break;
		case 'v': o->verify = 1; break;
		case 'y': o->yield = 1; break;
		case 'e': o->peer = optarg; break;
		case 'A': {
			struct rte_ether_addr m;

			if (rte_ether_unformat_addr(optarg, &m))
				return et_cli_bad("--mac", "a MAC like 02:00:00:00:00:01", optarg);
			o->mac = optarg;
			break;
		}
		case 'R':
			if (et_cli_u64("--rto-ms", optarg, 1, 60000, &v))
				return -1;
			o->rto_ms = (uint32_t)v;
			break;
		case 'j':
			if (et_cli_out_file("--json", optarg))
				return -1;
			o->json = optarg;
			break;
		case 'C':
			if (et_cli_out_file("--pcap", optarg))
				return -1;
			o->pcap = optarg;
			break;
		case 'W': o->save = optarg; break;
		case 'F': {
			char err[160];

			if (et_link_faults_parse(optarg, &o->faults, err, sizeof(err)))
				return et_cli_error("--fault: %s", err);
			break;
		}
		case 'L':
			if (et_cli_u64("--rx-loss-ppm", optarg, 0, 1000000, &v))
				return -1;
			o->rx_loss_ppm = (uint32_t)v;
			break;
		case 'S':
			if (et_cli_u64("--seed", optarg, 0, UINT64_MAX, &o->faults.seed))
				return -1;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	/* a client needs the server: over TCP (--client) or by hand (--peer) */
	if (optind != argc || !o->port || !o->ip || (o->server && o->client) ||
	    (!o->server && !o->client && !o->peer)) {
		et_cli_error("%s", optind != argc ? "unexpected argument"
			     : !o->port ? "--port DEV is required" : !o->ip ? "--ip ADDR is required"
			     : "give exactly one of --server and --client HOST (or --peer)");
		usage(stderr);
		return -1;
	}
	if (tool_defaults(o))
		return -1;
	if (workers_check(o))
		return -1;
	if (o->faults.jitter_ns && !o->rate_bps)
		return et_cli_error("--fault: jitter-ns needs an emulated rate (--rate)");
	if (o->peer) {
		struct peer none = {0}, check;

		if (parse_peer(o->peer, &none, &check))
			return -1;
	}
	return 0;
}
