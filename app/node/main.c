/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node: one RoCEv2 host on any DPDK port, with perftest-like modes.
 *
 *   server: ethereal-node [EAL args --] --port DEV --ip A.B.C.D --server [opts]
 *   client: ethereal-node [EAL args --] --port DEV --ip A.B.C.D --client HOST [opts]
 *
 * Like perftest, the two sides trade their parameters (MAC, IP, QPNs, PSN,
 * rkey, buffer address) over TCP on a management network first; then the
 * client runs the test over the DPDK port and the server answers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "host/et_arp.h"
#include "host/et_nic.h"
#include "host/et_worker.h"
#include "link/et_link_conf.h"
#include "topo/et_path.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "et_json.h"
#include "oob.h"

#define MAX_QPS 64
#define DEPTH 16 /* requests in flight per QP */

enum mode { MODE_WRITE_BW, MODE_SEND_BW, MODE_WRITE_LAT, MODE_PINGPONG };
static const char *const mode_names[] = {"write_bw", "send_bw", "write_lat", "pingpong", NULL};
static const char *const oob_names[] = {"ethereal", "pingpong", "perftest", NULL};

struct opts {
	const char *port, *client, *json, *save;
	uint32_t ip;
	int server;
	enum mode mode;
	enum oob_dialect oob;
	bool mode_set, size_set, mtu_set, port_set;
	uint32_t size, qps, mtu;
	uint64_t iters;
	uint64_t duration_ns; /* 0: --iters ends the run */
	uint16_t oob_port;
	uint32_t paths;
	uint32_t rto_ms;
	const char *peer;
	const char *mac;
	int yield;
	uint64_t rate_bps;
	int verify;
	struct et_link_model faults; /* what we send (--fault, --seed) */
	uint32_t rx_loss_ppm;        /* what we receive (--rx-loss-ppm) */
};

static volatile sig_atomic_t stop;

/* what telemetry reads (from its own thread: plain counters, read racily) */
static struct et_nic *tel_nic;
static struct et_qp **tel_qps;
static uint32_t tel_nqp;

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
		"usage: ethereal-node [EAL args --] --port DEV --ip ADDR (--server | --client HOST)\n"
		"         [--mode write_bw|send_bw|write_lat] [--size BYTES] [--iters N | --duration S]\n"
		"         [--qps N] [--mtu 256..4096] [--paths N] [--rate GBPS] [--oob-port N] [--verify]\n"
		"         [--json FILE] [--yield] [--rto-ms N] [--peer SPEC] [--mac MAC]\n"
		"         [--oob ethereal|pingpong|perftest] [--mode pingpong]\n"
		"         [--fault KEY=VAL,...] [--rx-loss-ppm N] [--seed N]\n"
		"  --port DEV     a DPDK device: net_memif0,role=server,socket=/run/x.sock, net_tap0,iface=t0, a PCI address\n"
		"  --ip ADDR      this host's RoCE IPv4 address\n"
		"  --client HOST  the server's management address (TCP --oob-port, default 19875)\n"
		"  --paths N      QP i takes path ID (i mod N, 0): uplink i mod N at the first switch up\n"
		"  --rate GBPS    pace the NIC with a link model (default: the wire decides)\n"
		"  --yield        give the core away when idle (processes sharing cores)\n"
		"  --rto-ms N     retransmit timeout (default 1 ms)\n"
		"  --mac MAC      this host's MAC (default: the port's; on a bridged tap give one)\n"
		"  --peer SPEC    the peer's parameters instead of the TCP exchange, as the peer\n"
		"                 prints them: mac=..,ip=..,qpn=..,psn=..,rkey=..,addr=..\n"
		"  --oob DIALECT  the TCP exchange: ethereal (ours, default), pingpong (ibv_rc_pingpong:\n"
		"                 mode pingpong, TCP 18515, size 4096, MTU 1024 as the tool), perftest\n"
		"                 (ib_write_bw / ib_send_bw: mode write_bw or send_bw, TCP 18515)\n"
		"  --mode pingpong  one SEND each way per iteration, the client first; the server\n"
		"                 echoes, the client times round trips and checks the echo (--verify)\n"
		"  --fault SPEC   lose, corrupt or duplicate what we send, to test a peer's recovery:\n"
		"                 loss-ppm=, ge-enter-ppm=, ge-exit-ppm=, ge-loss-ppm=, corrupt-ppm=,\n"
		"                 dup-ppm=, flap-period-us=, flap-down-us= (jitter-ns needs --rate)\n"
		"  --rx-loss-ppm N  drop this share of the RoCEv2 frames we receive (data and ACKs)\n"
		"  --seed N       seeds --fault and --rx-loss-ppm (default 1)\n"
		"  --save FILE    at the end, write our buffer (what the peer wrote or sent last) to FILE\n");
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct et_nic_stats *st;
	uint64_t bad = 0;

	(void)cmd;
	(void)params;
	if (tel_nic == NULL)
		return -EAGAIN;
	st = &tel_nic->st;
	for (int e = 0; e < ET_WIRE_E_COUNT; e++)
		bad += st->rx_bad[e];
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_pkts", st->rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", st->rx_bytes);
	rte_tel_data_add_dict_u64(d, "rx_bad", bad);
	rte_tel_data_add_dict_u64(d, "rx_bad_icrc", st->rx_bad[ET_WIRE_E_ICRC]);
	rte_tel_data_add_dict_u64(d, "rx_not_ours", st->rx_not_ours);
	rte_tel_data_add_dict_u64(d, "rx_unknown_qpn", st->rx_unknown_qpn);
	rte_tel_data_add_dict_u64(d, "pause_rx", st->pause_rx);
	rte_tel_data_add_dict_u64(d, "tx_pkts", st->tx_pkts);
	rte_tel_data_add_dict_u64(d, "timer_fires", st->timer_fires);
	rte_tel_data_add_dict_u64(d, "rx_arp", st->rx_arp);
	rte_tel_data_add_dict_u64(d, "ctrl_tx_drop", st->ctrl_tx_drop);
	rte_tel_data_add_dict_u64(d, "rx_fault_drops", st->rx_fault_drops);
	if (tel_nic->arp) {
		const struct et_arp_stats *as = &tel_nic->arp->st;

		rte_tel_data_add_dict_u64(d, "arp_rx_request", as->rx_request);
		rte_tel_data_add_dict_u64(d, "arp_rx_reply", as->rx_reply);
		rte_tel_data_add_dict_u64(d, "arp_rx_bad", as->rx_bad);
		rte_tel_data_add_dict_u64(d, "arp_tx_reply", as->tx_reply);
		rte_tel_data_add_dict_u64(d, "arp_tx_request", as->tx_request);
		rte_tel_data_add_dict_u64(d, "arp_tx_rate_limited", as->tx_rate_limited);
	}
	rte_tel_data_add_dict_u64(d, "qps", tel_nqp);
	return 0;
}

static int
tel_qps_cb(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (uint32_t i = 0; i < tel_nqp; i++) {
		const struct et_qp *q = tel_qps[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[16], alpha[16];

		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "tx_pkts", q->st.tx_pkts);
		rte_tel_data_add_dict_u64(c, "tx_bytes", q->st.tx_bytes);
		rte_tel_data_add_dict_u64(c, "rx_pkts", q->st.rx_pkts);
		rte_tel_data_add_dict_u64(c, "rx_bytes", q->st.rx_bytes);
		rte_tel_data_add_dict_u64(c, "retransmits", q->st.retransmits);
		rte_tel_data_add_dict_u64(c, "timeouts", q->st.timeouts);
		rte_tel_data_add_dict_u64(c, "naks_rx", q->st.naks_rx);
		rte_tel_data_add_dict_u64(c, "naks_tx", q->st.naks_tx);
		rte_tel_data_add_dict_u64(c, "cnps_rx", q->st.cnps_rx);
		rte_tel_data_add_dict_u64(c, "cnps_tx", q->st.cnps_tx);
		rte_tel_data_add_dict_u64(c, "cwnd", et_dctcp_cwnd(&q->cc));
		snprintf(alpha, sizeof(alpha), "%.4f", q->cc.alpha);
		rte_tel_data_add_dict_string(c, "alpha", alpha);
		rte_tel_data_add_dict_u64(c, "path_id", q->path_id);
		rte_tel_data_add_dict_u64(c, "outstanding", et_qp_sq_outstanding(q));
		snprintf(name, sizeof(name), "qp%u", q->a.qpn);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

/* ip (host order) as a.b.c.d */
static const char *
ipv4_str(uint32_t ip, char out[INET_ADDRSTRLEN])
{
	struct in_addr a = {.s_addr = htonl(ip)};

	return inet_ntop(AF_INET, &a, out, INET_ADDRSTRLEN);
}

/* "mac=02:00:00:00:00:02,ip=10.0.0.2,qpn=0x100,psn=0x1000,rkey=0x102,
 * addr=0x7f..": the peer's parameters given by hand.  Size, MTU and QP count
 * are ours; a missing MAC is asked for by ARP (broadcast if nobody answers,
 * fine on memif and behind a switch); a given one is a static ARP entry. */
static int
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

static bool
peer_has_mac(const char *spec)
{
	return strncmp(spec, "mac=", 4) == 0 || strstr(spec, ",mac=") != NULL;
}

/* The peer's MAC: a known one (--peer mac=, or the TCP exchange) becomes a
 * static ARP entry; otherwise ask by ARP for up to 3 s, polling the NIC
 * (which also answers the peer's own requests), and fall back to
 * broadcast when nobody answers. */
static int
resolve_peer(struct et_nic *nic, struct et_arp *arp, struct peer *them, bool ask)
{
	uint64_t until = et_tsc_ns() + 3000000000ull, next = 0;
	char ip[INET_ADDRSTRLEN];
	const uint8_t *m;

	if (!ask) {
		if (et_arp_set_static(arp, them->ip, them->mac.addr_bytes))
			et_cli_error("ARP: no room for a static entry");
		return 0;
	}
	while (!stop && et_tsc_ns() < until) {
		uint64_t t = et_tsc_ns();

		if (t >= next) {
			et_nic_arp_request(nic, them->ip, t);
			next = t + 200000000ull;
		}
		et_nic_poll(nic, t);
		m = et_arp_lookup(arp, them->ip);
		if (m) {
			memcpy(them->mac.addr_bytes, m, 6);
			printf("ethereal-node: ARP: %s is at %02x:%02x:%02x:%02x:%02x:%02x\n",
			       ipv4_str(them->ip, ip), m[0], m[1], m[2], m[3], m[4], m[5]);
			fflush(stdout);
			return 0;
		}
	}
	if (stop)
		return -1;
	printf("ethereal-node: ARP: no answer from %s in 3 s, sending to broadcast\n",
	       ipv4_str(them->ip, ip));
	fflush(stdout);
	return 0;
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
	} else if (o->oob == OOB_PERFTEST && o->mode != MODE_WRITE_BW && o->mode != MODE_SEND_BW)
		return et_cli_error("--oob perftest runs --mode write_bw or send_bw");
	if (o->oob != OOB_ETHEREAL && !o->port_set)
		o->oob_port = 18515;
	if (o->oob != OOB_ETHEREAL && o->peer)
		return et_cli_error("--peer replaces the exchange: give it or --oob, not both");
	if (o->oob == OOB_PERFTEST && o->qps != 1)
		return et_cli_error("--oob perftest runs one QP (--qps 1), like perftest's default");
	if (o->oob == OOB_PERFTEST && o->mode == MODE_SEND_BW && o->duration_ns)
		return et_cli_error("--oob perftest --mode send_bw counts messages: "
				    "give --iters, not --duration (the peer expects exactly that many)");
	if (o->mode == MODE_PINGPONG && o->qps != 1)
		return et_cli_error("--mode pingpong runs one QP (--qps 1)");
	return 0;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
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
	o->rto_ms = 1;
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
			break;
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
		case 'j': o->json = optarg; break;
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
	if (o->faults.jitter_ns && !o->rate_bps)
		return et_cli_error("--fault: jitter-ns needs an emulated rate (--rate)");
	if (o->peer) {
		struct peer none = {0}, check;

		if (parse_peer(o->peer, &none, &check))
			return -1;
	}
	return 0;
}

/* ---- the test ---- */

static uint8_t
pattern(uint64_t off)
{
	return (uint8_t)(off * 131 + (off >> 9) * 7 + 1);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Everything one run holds. */
struct node {
	struct opts o;
	struct rte_mempool *mp;
	struct et_port port;
	bool port_open, nic_open;
	struct et_nic nic;
	struct et_arp arp;
	struct et_mr_table mrs;
	struct et_cq scq, rcq;
	struct et_qp *qp[MAX_QPS];
	const struct et_mr *mr;
	uint8_t *buf;
	uint64_t buf_len;
	struct peer me, them;
	struct oob oob;
	uint64_t *lat;
	uint64_t done, flushed, t0, t1;
	int bad;
};

static void
poll_port(void *ctx)
{
	struct node *n = ctx;

	et_nic_poll(&n->nic, et_tsc_ns());
}

/* A SEND lands in the receive buffer of its QP; in ping-pong, the second
 * half of the buffer (the first is what we send). */
static void
post_recv(struct node *n, uint32_t i)
{
	uint64_t off = n->o.mode == MODE_PINGPONG ? (n->o.server ? 0 : n->o.size)
						   : (uint64_t)i * n->o.size;
	struct et_recv_wr rw = {.wr_id = i, .addr = n->buf + off, .length = n->o.size,
				.lkey = n->mr->key};

	et_qp_post_recv(n->qp[i], &rw);
}

static int
create_qps(struct node *n)
{
	const struct opts *o = &n->o;

	for (uint32_t i = 0; i < o->qps; i++) {
		struct et_qp_attr a;

		et_qp_attr_default(&a);
		a.dest_qpn = n->them.qpn_base + i;
		a.dest_mac = n->them.mac;
		a.dest_ip = n->them.ip;
		a.mtu = o->mtu;
		a.sq_psn = n->me.psn;
		a.rq_psn = n->them.psn;
		a.max_send_wr = 64;
		a.max_recv_wr = 64;
		a.retry_cnt = 6; /* a test tool must end: 7 would retry forever */
		a.path_id = et_path_make((uint8_t)(i % o->paths), 0);
		a.rto_ns = (uint64_t)o->rto_ms * 1000000;
		n->qp[i] = et_nic_qp_create(&n->nic, &a, &n->mrs, &n->scq, &n->rcq);
		if (!n->qp[i] || et_qp_ready(n->qp[i]))
			return et_cli_error("cannot create QP %u", i);
		if (o->mode == MODE_SEND_BW || o->mode == MODE_PINGPONG)
			for (int k = 0; k < DEPTH; k++)
				post_recv(n, i);
	}
	tel_qps = n->qp;
	tel_nqp = o->qps;
	return 0;
}

/* One of perftest's address messages (all alike, each re-read). */
static int
perftest_key(struct node *n)
{
	char mine[ET_PERFTEST_MSG_LEN], theirs[ET_PERFTEST_MSG_LEN];
	struct peer them;

	oob_tool_format(OOB_PERFTEST, &n->me, mine);
	if (oob_xchg(&n->oob, n->o.server, mine, theirs, sizeof(theirs))) {
		if (!stop)
			et_cli_error("out-of-band exchange with the peer failed");
		return -1;
	}
	if (oob_tool_parse(OOB_PERFTEST, theirs, sizeof(theirs), &n->me, &them))
		return -1;
	/* the MAC is ours to learn (ARP), not the message's: after the first
	 * message, keep what ARP found */
	if (n->them.ip != 0)
		them.mac = n->them.mac;
	n->them = them;
	return 0;
}

/* The peer's parameters, its MAC, our QPs: by hand (--peer), in our
 * dialect, or in a tool's.  The tools' servers connect their QP before they
 * answer and the clients send as soon as they have the answer, so our QPs
 * exist before the message that lets the peer send. */
static int
connect_peer(struct node *n)
{
	const struct opts *o = &n->o;
	char msg[ET_PINGPONG_MSG_LEN]; /* perftest's go through perftest_key() */
	bool ask_arp = true;

	n->oob = (struct oob){.fd = -1, .idle = poll_port, .ctx = n, .stop = &stop,
			      .timeout_ms = 60000};
	if (o->peer) {
		if (parse_peer(o->peer, &n->me, &n->them))
			return -1;
		ask_arp = !peer_has_mac(o->peer);
	} else {
		if (oob_open(&n->oob, o->server, o->client, o->oob_port))
			return -1;
		if (o->oob == OOB_ETHEREAL) {
			if (oob_ethereal_exchange(&n->oob, &n->me, &n->them))
				goto failed;
			if (n->them.nqp != o->qps || n->them.size != o->size ||
			    n->them.mtu != o->mtu)
				return et_cli_error("the peer runs --qps %u --size %u --mtu %u; "
						    "give both the same", n->them.nqp, n->them.size,
						    n->them.mtu);
			ask_arp = false;
		} else if (o->oob == OOB_PINGPONG) {
			if (!o->server)
				oob_tool_format(OOB_PINGPONG, &n->me, msg);
			if ((!o->server && oob_write(&n->oob, msg, sizeof(msg))) ||
			    oob_read(&n->oob, msg, sizeof(msg)))
				goto failed;
			if (oob_tool_parse(OOB_PINGPONG, msg, sizeof(msg), &n->me, &n->them))
				return -1;
		} else {
			/* perftest: the MTU is negotiated (the smaller), then
			 * the first of identical address messages connects */
			if (oob_perftest_hello(&n->oob, o->server, &n->o.mtu))
				goto failed;
			n->them.mtu = n->me.mtu = o->mtu;
			if (perftest_key(n))
				return -1;
		}
	}
	if (resolve_peer(&n->nic, &n->arp, &n->them, ask_arp) || create_qps(n))
		return -1;
	if (o->oob == OOB_ETHEREAL || o->peer)
		return 0;
	if (o->oob == OOB_PERFTEST) {
		/* two more before the test; send_bw a third: the server's
		 * receives are posted */
		for (int k = o->mode == MODE_SEND_BW ? 3 : 2; k > 0; k--)
			if (perftest_key(n))
				return -1;
		return 0;
	}
	if (o->server) {
		oob_tool_format(OOB_PINGPONG, &n->me, msg);
		if (oob_write(&n->oob, msg, sizeof(msg)))
			goto failed;
	}
	/* the client's "done": it may start */
	char done[ET_PINGPONG_DONE_LEN] = "done";

	if (o->server ? oob_read(&n->oob, done, sizeof(done)) : oob_write(&n->oob, done, sizeof(done)))
		goto failed;
	return 0;
failed:
	if (!stop)
		et_cli_error("out-of-band exchange with the peer failed");
	return -1;
}

/* When --duration ends the run (never with --iters). */
static uint64_t
run_deadline(const struct node *n)
{
	return n->o.duration_ns ? n->t0 + n->o.duration_ns : UINT64_MAX;
}

/* What the client wrote (or sent) is all here. */
static void
check_written(struct node *n)
{
	for (uint64_t k = 0; k < (uint64_t)n->o.size * n->o.qps; k++)
		n->bad += n->buf[k] != pattern(k);
}

/* perftest's last words: write_bw trades an address message and the
 * client's figures (its server prints them), both a last address message
 * and "done". */
static void
perftest_finish(struct node *n)
{
	double s = (double)(n->t1 - n->t0) / 1e9;
	struct perftest_report mine = {.size = n->o.size, .iters = n->done}, theirs;

	mine.bw_avg = mine.bw_peak = s > 0 ? (double)n->done * n->o.size / s / 1048576.0 : 0;
	mine.msg_rate = s > 0 ? (double)n->done / s / 1e6 : 0;
	if (n->o.mode == MODE_WRITE_BW) {
		if (perftest_key(n) || oob_perftest_report(&n->oob, n->o.server, &mine, &theirs)) {
			n->bad++;
			return;
		}
		if (n->o.server)
			printf("perftest peer reports: %" PRIu64 " bytes x %" PRIu64 ", peak %.2f MiB/s, "
			       "average %.2f MiB/s, %.6f Mpps\n", theirs.size, theirs.iters,
			       theirs.bw_peak, theirs.bw_avg, theirs.msg_rate);
	}
	if (perftest_key(n)) {
		n->bad++;
		return;
	}
	oob_perftest_bye(&n->oob);
	/* the pattern is ours: only an ethereal-node client writes it */
	if (n->o.server && n->o.verify)
		check_written(n);
}

/* Our dialect's last words: the client says DONE, the server checks its
 * memory and says BYE.  The port is not polled meanwhile: DPDK 22.11's
 * memif unmaps its rings from the control thread when the peer leaves,
 * under a datapath that may still be reading them; so neither side polls
 * once the other may be closing. */
static void
finish(struct node *n)
{
	static volatile sig_atomic_t never;
	char line[16];

	if (n->oob.fd < 0 || n->o.oob == OOB_PINGPONG)
		return;
	n->oob.idle = NULL;
	n->oob.stop = &never; /* said even after SIGINT: the peer waits for it */
	n->oob.timeout_ms = 30000;
	if (n->o.oob == OOB_PERFTEST) {
		perftest_finish(n);
		return;
	}
	if (!n->o.server) {
		if (oob_write(&n->oob, "DONE\n", 5) || oob_read_line(&n->oob, line, sizeof(line)))
			n->bad++;
		return;
	}
	/* a server stopped by SIGINT has nothing to wait for */
	if (!stop && oob_read_line(&n->oob, line, sizeof(line)) == 0 && n->o.verify &&
	    n->o.mode != MODE_PINGPONG)
		check_written(n);
	if (oob_write(&n->oob, "BYE\n", 4))
		n->bad++;
}

/* The payload the peer placed in our memory, all QPs. */
static uint64_t
placed_bytes(const struct node *n)
{
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < n->o.qps; i++)
		bytes += n->qp[i]->st.rx_bytes;
	return bytes;
}

/* Answer until the client says it is done (or SIGINT / --duration with a
 * static peer), then check the memory it wrote. */
static void
run_server(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n);
	for (;;) {
		for (int k = 0; k < 4096; k++) {
			struct et_wc wc;

			if (et_nic_poll(&n->nic, et_tsc_ns()) == 0 && o->yield)
				sched_yield();
			while (et_cq_poll(&n->rcq, &wc, 1)) {
				n->done++;
				post_recv(n, (uint32_t)wc.wr_id);
			}
		}
		if (stop || et_tsc_ns() > deadline)
			break;
		if (n->oob.fd < 0)
			continue;
		struct pollfd p = {.fd = n->oob.fd, .events = POLLIN};

		if (poll(&p, 1, 0) > 0)
			break;
	}
	n->t1 = et_tsc_ns();
	if (o->mode != MODE_SEND_BW) /* WRITEs complete nothing here: count bytes */
		n->done = placed_bytes(n) / o->size;
	if (n->oob.fd >= 0)
		finish(n);
	else if (o->verify)
		check_written(n);
}

static void
count_send_wc(struct node *n, const struct et_wc *wc)
{
	if (wc->status == ET_WC_WR_FLUSH_ERR) {
		n->flushed++;
	} else if (wc->status != ET_WC_SUCCESS) {
		et_cli_error("QP %u: %s", n->qp[wc->wr_id]->a.qpn, et_wc_status_str(wc->status));
		stop = 1;
		n->bad++;
	}
}

/* Post, keep DEPTH (1 for latency) requests in flight per QP, complete. */
static void
run_client(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n);
	uint64_t want = o->duration_ns ? UINT64_MAX : o->iters * o->qps;
	uint64_t *posted_at = calloc(o->qps, sizeof(*posted_at));
	uint64_t drain_until = 0, posted = 0;
	uint32_t i;

	/* on SIGINT/SIGTERM post nothing more, let what is out complete for
	 * up to a second, then flush the rest */
	while (n->done < posted || (!stop && n->done < want && et_tsc_ns() < deadline)) {
		struct et_wc wc[32];
		uint32_t k;

		if (stop && drain_until == 0)
			drain_until = et_tsc_ns() + 1000000000ull;
		if (drain_until && et_tsc_ns() > drain_until) {
			for (i = 0; i < o->qps; i++)
				et_qp_flush(n->qp[i]);
			drain_until = UINT64_MAX;
		}
		for (i = 0; !stop && i < o->qps && posted < want && et_tsc_ns() < deadline; i++) {
			uint32_t depth = o->mode == MODE_WRITE_LAT ? 1 : DEPTH;

			while (et_qp_sq_outstanding(n->qp[i]) < depth && posted < want) {
				struct et_send_wr wr = {
					.wr_id = i,
					.opcode = o->mode == MODE_SEND_BW ? ET_WR_SEND : ET_WR_RDMA_WRITE,
					.local_addr = n->buf + (uint64_t)i * o->size, .length = o->size,
					.lkey = n->mr->key,
					.remote_addr = n->them.addr + (uint64_t)i * o->size,
					.rkey = n->them.rkey};

				if (et_nic_post_send(&n->nic, n->qp[i], &wr))
					break;
				posted_at[i] = et_tsc_ns();
				posted++;
			}
		}
		if (et_nic_poll(&n->nic, et_tsc_ns()) == 0 && o->yield)
			sched_yield();
		k = et_cq_poll(&n->scq, wc, 32);
		for (uint32_t j = 0; j < k; j++) {
			count_send_wc(n, &wc[j]);
			if (n->lat && n->done < o->iters)
				n->lat[n->done] = et_tsc_ns() - posted_at[wc[j].wr_id];
			n->done++;
		}
	}
	n->t1 = et_tsc_ns();
	free(posted_at);
	if (drain_until && !n->bad)
		printf("ethereal-node: stopped: %" PRIu64 " requests completed, %" PRIu64 " flushed\n",
		       n->done - n->flushed, n->flushed);
	/* tell the server, which then checks its memory; wait until it has
	 * stopped polling before closing the port: DPDK 22.11's memif unmaps
	 * the shared rings from its control thread when the peer leaves,
	 * under a datapath that may still be reading them */
	finish(n);
}

/* ibv_rc_pingpong's data phase: one SEND each way per iteration, the
 * client first.  Like the tool, the server sends back the buffer it
 * received into, so the client checks (--verify) that its message, a new
 * pattern each iteration, came back intact: the peer's receive and send
 * paths both carried it.  The client times each round trip. */
static void
run_pingpong(struct node *n)
{
	const struct opts *o = &n->o;
	uint64_t deadline = run_deadline(n);
	uint64_t rounds = o->duration_ns ? UINT64_MAX : o->iters, sent = 0, got = 0, last = et_tsc_ns();
	uint8_t *sbuf = n->buf, *rbuf = n->buf + (o->server ? 0 : o->size);
	bool waiting_send = false, waiting_recv = o->server; /* the client sends first */
	uint64_t t_send = 0;

	while (!stop && (sent < rounds || waiting_send || waiting_recv)) {
		struct et_wc wc;
		uint64_t t = et_tsc_ns();

		if (!waiting_send && !waiting_recv) {
			if (sent == rounds || t > deadline)
				break;
			if (!o->server)
				for (uint32_t k = 0; k < o->size; k++)
					sbuf[k] = pattern(sent * o->size + k);
			struct et_send_wr wr = {.wr_id = 0, .opcode = ET_WR_SEND, .local_addr = sbuf,
						.length = o->size, .lkey = n->mr->key};

			if (et_nic_post_send(&n->nic, n->qp[0], &wr)) {
				et_cli_error("cannot post a SEND");
				n->bad++;
				break;
			}
			t_send = t;
			sent++;
			waiting_send = true;
			waiting_recv = !o->server || sent < rounds;
		}
		if (et_nic_poll(&n->nic, t) == 0 && o->yield)
			sched_yield();
		while (et_cq_poll(&n->scq, &wc, 1)) {
			count_send_wc(n, &wc);
			waiting_send = false;
			last = t;
		}
		while (et_cq_poll(&n->rcq, &wc, 1)) {
			if (wc.status != ET_WC_SUCCESS || wc.byte_len != o->size) {
				et_cli_error("receive %" PRIu64 ": %s, %u bytes (expected %u)",
					     got, et_wc_status_str(wc.status), wc.byte_len, o->size);
				n->bad++;
				stop = 1;
			} else if (!o->server && o->verify && memcmp(rbuf, sbuf, o->size) != 0) {
				et_cli_error("round %" PRIu64 ": the echo differs from what we sent",
					     got);
				n->bad++;
			}
			if (!o->server && n->lat && got < o->iters)
				n->lat[got] = et_tsc_ns() - t_send;
			got++;
			n->done++;
			post_recv(n, 0);
			waiting_recv = false;
			last = t;
		}
		if (n->bad)
			break;
		if (t - last > 10000000000ull) {
			et_cli_error("ping-pong: nothing from the peer for 10 s "
				     "(round %" PRIu64 ")", got);
			n->bad++;
			break;
		}
	}
	n->t1 = et_tsc_ns();
	if (n->oob.fd >= 0 && o->oob == OOB_ETHEREAL) {
		finish(n);
		return;
	}
	/* A tool's peer has no last word: our last ACK may be lost or its last
	 * SEND resent; answer until it has been quiet for 300 ms (at most 3 s). */
	for (uint64_t quiet = et_tsc_ns(), end = quiet + 3000000000ull, t = quiet;
	     t < end && t - quiet < 300000000ull; t = et_tsc_ns())
		if (et_nic_poll(&n->nic, t))
			quiet = t;
}

static void
report(struct node *n)
{
	const struct opts *o = &n->o;
	double s = (double)(n->t1 - n->t0) / 1e9;
	/* a server counts the payload placed here; the rest, whole messages */
	uint64_t bytes = o->server && o->mode != MODE_PINGPONG ? placed_bytes(n) : n->done * o->size;
	uint64_t pkts = o->server ? n->nic.st.rx_pkts : n->nic.st.tx_pkts;
	uint64_t p50 = 0, p99 = 0, p999 = 0, retx = 0, tmo = 0;
	struct rte_eth_stats es;
	double gbps;

	for (uint32_t i = 0; i < o->qps; i++) {
		retx += n->qp[i]->st.retransmits;
		tmo += n->qp[i]->st.timeouts;
	}
	gbps = bytes * 8 / s / 1e9;
	if (n->lat && n->done) {
		uint64_t nl = n->done < o->iters ? n->done : o->iters;

		qsort(n->lat, nl, sizeof(*n->lat), cmp_u64);
		p50 = n->lat[nl / 2];
		p99 = n->lat[nl * 99 / 100];
		p999 = n->lat[nl * 999 / 1000];
	}
	printf("%-10s %10s %6s %12s %10s %10s %10s %10s %10s %10s %8s\n", "mode", "size", "qps",
	       "messages", "seconds", "Gbit/s", "Mpps", "p50_us", "p99_us", "p99.9_us", "verify");
	printf("%-10s %10u %6u %12" PRIu64 " %10.3f %10.2f %10.3f %10.2f %10.2f %10.2f %8s\n",
	       mode_names[o->mode], o->size, o->qps, n->done, s, gbps, pkts / s / 1e6, p50 / 1e3,
	       p99 / 1e3, p999 / 1e3, !o->verify ? "off" : n->bad ? "FAILED" : "ok");
	printf("retransmits %" PRIu64 ", timeouts %" PRIu64 ", rx bad ICRC %" PRIu64
	       ", rx unknown QPN %" PRIu64 ", rx not RoCE %" PRIu64 "\n",
	       retx, tmo, n->nic.st.rx_bad[ET_WIRE_E_ICRC], n->nic.st.rx_unknown_qpn,
	       n->nic.st.rx_bad[ET_WIRE_E_NOT_IPV4] + n->nic.st.rx_bad[ET_WIRE_E_NOT_UDP] +
		       n->nic.st.rx_bad[ET_WIRE_E_NOT_ROCE]);
	if (o->rx_loss_ppm || o->faults.loss_ppm || o->faults.ge_enter_ppm || o->faults.corrupt_ppm ||
	    o->faults.dup_ppm || o->faults.flap_period_ns) {
		const struct et_egress_stats *e = &n->nic.eg.st;

		printf("faults: sent lost %" PRIu64 ", corrupted %" PRIu64 ", duplicated %" PRIu64
		       "; received dropped %" PRIu64 "\n",
		       e->loss_drops + e->burst_drops + e->flap_drops, e->corrupted, e->duplicated,
		       n->nic.st.rx_fault_drops);
	}
	if (rte_eth_stats_get(n->port.eth_port, &es) == 0)
		printf("port: rx %" PRIu64 " (missed %" PRIu64 ", errors %" PRIu64 ", no mbuf %" PRIu64
		       "), tx %" PRIu64 " (errors %" PRIu64 ")\n",
		       es.ipackets, es.imissed, es.ierrors, es.rx_nombuf, es.opackets, es.oerrors);
	if (o->json) {
		json_t *j = json_object();

		json_object_set_new(j, "mode", json_string(mode_names[o->mode]));
		json_object_set_new(j, "role", json_string(o->server ? "server" : "client"));
		et_json_set_u64(j, "size", o->size);
		et_json_set_u64(j, "qps", o->qps);
		et_json_set_u64(j, "messages", n->done);
		json_object_set_new(j, "seconds", et_json_fixed(s, 6));
		json_object_set_new(j, "gbps", et_json_fixed(gbps, 3));
		json_object_set_new(j, "mpps", et_json_fixed(pkts / s / 1e6, 4));
		et_json_set_u64(j, "lat_p50_ns", p50);
		et_json_set_u64(j, "lat_p99_ns", p99);
		et_json_set_u64(j, "lat_p999_ns", p999);
		et_json_set_u64(j, "retransmits", retx);
		et_json_set_u64(j, "timeouts", tmo);
		json_object_set_new(j, "verified", et_json_verdict(o->verify, !n->bad));
		et_json_write(o->json, j);
	}
}

/* For a check from outside (tests/rxe compares it with the capture). */
static int
save_buffer(const struct node *n)
{
	uint64_t len = (uint64_t)n->o.size * n->o.qps;
	FILE *f = fopen(n->o.save, "wb");
	bool ok = f != NULL && fwrite(n->buf, 1, len, f) == len;

	if (f != NULL && fclose(f) != 0)
		ok = false;
	if (!ok)
		et_cli_error("--save: cannot write %s: %s", n->o.save, strerror(errno));
	return ok ? 0 : -1;
}

/* Port, NIC, ARP, memory; the link up (ARP must run during the exchange). */
static int
node_open(struct node *n)
{
	const struct opts *o = &n->o;
	struct rte_ether_addr mac;
	char ip[INET_ADDRSTRLEN];
	int r;

	n->mp = et_app_pool("node", 16383, ET_APP_MBUF_4K_FRAME);
	/* ping-pong: what we send, then what we receive */
	n->buf_len = (uint64_t)o->size * (o->mode == MODE_PINGPONG ? 2 : o->qps);
	/* perftest's small writes walk its cycle buffer (a page, 64 KiB at most) */
	if (o->oob == OOB_PERFTEST && n->buf_len < 65536)
		n->buf_len = 65536;
	n->buf = calloc(1, n->buf_len);
	if (!n->mp || !n->buf || et_mr_table_init(&n->mrs, 4) || et_cq_init(&n->scq, 4096) ||
	    et_cq_init(&n->rcq, 4096))
		return et_cli_error("out of memory");
	r = et_port_ethdev(&n->port, o->port, n->mp, 1024);
	if (r)
		return et_cli_error("--port: cannot start '%s': %s", o->port, strerror(-r));
	n->port_open = true;
	/* on a kernel tap the port's MAC is also the kernel interface's, which
	 * a bridge keeps for itself: --mac gives the host one of its own */
	if (o->mac)
		rte_ether_unformat_addr(o->mac, &mac);
	else
		rte_eth_macaddr_get(n->port.eth_port, &mac);
	struct et_link_model lm = o->faults;

	lm.rate_bps = o->rate_bps;

	if (et_nic_init(&n->nic, &n->port, &lm, n->mp, &mac, o->ip, 0x100, o->qps))
		return et_cli_error("cannot set up the NIC model");
	n->nic_open = true;
	n->nic.rx_loss_ppm = o->rx_loss_ppm;
	/* ARP on the control path, so kernel hosts on the segment can reach us;
	 * at most 100 frames/s out, bursts of 8 */
	et_arp_init(&n->arp, mac.addr_bytes, o->ip, 10000000, 8);
	n->nic.arp = &n->arp;
	if (!o->server && o->mode != MODE_PINGPONG)
		for (uint64_t k = 0; k < n->buf_len; k++)
			n->buf[k] = pattern(k);
	n->mr = et_mr_reg(&n->mrs, n->buf, n->buf_len, ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	n->me = (struct peer){.mac = mac, .ip = o->ip, .qpn_base = 0x100, .nqp = o->qps,
			      .psn = 0x1000, .rkey = n->mr->key, .size = o->size, .mtu = o->mtu,
			      .addr = (uintptr_t)n->buf};
	printf("ethereal-node: %s on %s, %s, local: mac=%02x:%02x:%02x:%02x:%02x:%02x,"
	       "ip=%s,qpn=0x%x,psn=0x%x,rkey=0x%x,addr=0x%" PRIx64 "\n",
	       o->server ? "server" : "client", o->port, mode_names[o->mode], mac.addr_bytes[0],
	       mac.addr_bytes[1], mac.addr_bytes[2], mac.addr_bytes[3], mac.addr_bytes[4],
	       mac.addr_bytes[5], ipv4_str(o->ip, ip), n->me.qpn_base, n->me.psn, n->me.rkey,
	       n->me.addr);
	fflush(stdout);
	tel_nic = &n->nic;
	/* memif and tap come up a little after start: frames sent before are lost */
	for (int k = 0;; k++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(n->port.eth_port, &link) == 0 && link.link_status)
			return 0;
		if (k == 500 || stop)
			return et_cli_error("--port %s: the link is not up after 5 s", o->port);
		usleep(10000);
	}
}

/* DPDK 22.11's memif tears a link down from its control thread when the
 * peer leaves; stopping the port at the same moment crashes in the EAL
 * (seen under load).  So the client stops its port first, then closes the
 * TCP connection; the server waits for that, then until its own side has
 * seen the link go down (at most 2 s: behind a switch it stays up), and
 * only then stops. */
static void
await_client_gone(struct node *n)
{
	static volatile sig_atomic_t never;
	char c;

	n->oob.idle = NULL;
	n->oob.stop = &never;
	n->oob.timeout_ms = 10000;
	if (oob_read(&n->oob, &c, 1) == 0)
		return; /* not a close: the client is confused, nothing to wait for */
	for (int k = 0; k < 200; k++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(n->port.eth_port, &link) == 0 && !link.link_status)
			break;
		usleep(10000);
	}
	usleep(100000); /* the control thread finishes what it began */
}

static void
node_close(struct node *n)
{
	tel_nic = NULL;
	tel_nqp = 0;
	if (n->port_open && n->oob.fd >= 0 && n->o.oob == OOB_ETHEREAL && n->o.server)
		await_client_gone(n);
	if (n->nic_open)
		et_nic_free(&n->nic);
	if (n->port_open)
		et_port_close(&n->port);
	oob_close(&n->oob); /* after the port: our server waits for this */
	et_cq_free(&n->scq);
	et_cq_free(&n->rcq);
	et_mr_table_free(&n->mrs);
	free(n->lat);
	free(n->buf);
}

int
main(int argc, char **argv)
{
	static struct node n;
	int r;

	et_cli_program("ethereal-node");
	r = et_app_eal_init(NULL, argc, argv); /* no defaults: the line is DPDK's up to "--" */
	if (r < 0)
		return 1;
	if (parse_opts(argc - r, argv + r, &n.o)) {
		rte_eal_cleanup();
		return 2;
	}
	n.oob.fd = -1;
	n.bad = 1; /* until the run ends */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rte_telemetry_register_cmd("/ethereal/node/port", tel_port,
				   "The host NIC's counters (rx by reason, tx, pauses, timers)");
	rte_telemetry_register_cmd("/ethereal/node/qps", tel_qps_cb,
				   "Per-QP counters: packets, bytes, retransmits, timeouts, NAKs, CNPs, cwnd, alpha, path ID");
	if (node_open(&n) == 0 && connect_peer(&n) == 0) {
		if (n.o.mode == MODE_WRITE_LAT || n.o.mode == MODE_PINGPONG)
			n.lat = calloc(n.o.iters, sizeof(*n.lat));
		n.bad = 0;
		n.t0 = et_tsc_ns();
		if (n.o.mode == MODE_PINGPONG)
			run_pingpong(&n);
		else if (n.o.server)
			run_server(&n);
		else
			run_client(&n);
		report(&n);
		if (n.o.save && save_buffer(&n))
			n.bad++;
		fflush(stdout); /* the results are out even if tearing down fails */
	}
	node_close(&n);
	rte_eal_cleanup();
	return n.bad ? 1 : 0;
}
