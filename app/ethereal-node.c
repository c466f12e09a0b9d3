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

#include "et_arp.h"
#include "et_nic.h"
#include "et_path.h"

#define MAX_QPS 64
#define DEPTH 16 /* requests in flight per QP */

enum mode { MODE_WRITE_BW, MODE_SEND_BW, MODE_WRITE_LAT };
static const char *const mode_names[] = {"write_bw", "send_bw", "write_lat", NULL};

struct opts {
	const char *port, *client, *json;
	uint32_t ip;
	int server;
	enum mode mode;
	uint32_t size, qps, mtu;
	uint64_t iters;
	double duration;
	uint16_t oob_port;
	uint32_t paths;
	uint32_t rto_ms;
	const char *peer;
	const char *mac;
	int yield;
	uint64_t rate_bps;
	int verify;
};

/* What one side tells the other. */
struct peer {
	struct rte_ether_addr mac;
	uint32_t ip, qpn_base, nqp, psn, rkey, size, mtu;
	uint64_t addr;
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
		"  --port DEV     a DPDK device: net_memif0,role=server,socket=/run/x.sock, net_tap0,iface=t0, a PCI address\n"
		"  --ip ADDR      this host's RoCE IPv4 address\n"
		"  --client HOST  the server's management address (TCP --oob-port, default 19875)\n"
		"  --paths N      QP i takes path ID (i mod N, 0): uplink i mod N at the first switch up\n"
		"  --rate GBPS    pace the NIC with a link model (default: the wire decides)\n"
		"  --yield        give the core away when idle (processes sharing cores)\n"
		"  --rto-ms N     retransmit timeout (default 1 ms)\n"
		"  --mac MAC      this host's MAC (default: the port's; on a bridged tap give one)\n"
		"  --peer SPEC    the peer's parameters instead of the TCP exchange, as the peer\n"
		"                 prints them: mac=..,ip=..,qpn=..,psn=..,rkey=..,addr=..\n");
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

static uint64_t
now_ns(void)
{
	static double ns_per_tsc;

	if (ns_per_tsc == 0)
		ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	return (uint64_t)((double)rte_rdtsc() * ns_per_tsc);
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
	if (p->ip == 0) {
		fprintf(stderr, "ethereal-node: --peer: ip=A.B.C.D is required\n");
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "ethereal-node: --peer: expected mac=,ip=,qpn=,psn=,rkey=,addr= "
			"(comma separated), got '%s'\n", spec);
	return -1;
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
	uint64_t until = now_ns() + 3000000000ull, next = 0;
	const uint8_t *m;

	if (!ask) {
		if (et_arp_set_static(arp, them->ip, them->mac.addr_bytes))
			fprintf(stderr, "ethereal-node: ARP: no room for a static entry\n");
		return 0;
	}
	while (!stop && now_ns() < until) {
		uint64_t t = now_ns();

		if (t >= next) {
			et_nic_arp_request(nic, them->ip, t);
			next = t + 200000000ull;
		}
		et_nic_poll(nic, t);
		m = et_arp_lookup(arp, them->ip);
		if (m) {
			memcpy(them->mac.addr_bytes, m, 6);
			printf("ethereal-node: ARP: %u.%u.%u.%u is at %02x:%02x:%02x:%02x:%02x:%02x\n",
			       them->ip >> 24, (them->ip >> 16) & 0xff, (them->ip >> 8) & 0xff,
			       them->ip & 0xff, m[0], m[1], m[2], m[3], m[4], m[5]);
			fflush(stdout);
			return 0;
		}
	}
	if (stop)
		return -1;
	printf("ethereal-node: ARP: no answer from %u.%u.%u.%u in 3 s, sending to broadcast\n",
	       them->ip >> 24, (them->ip >> 16) & 0xff, (them->ip >> 8) & 0xff, them->ip & 0xff);
	fflush(stdout);
	return 0;
}

static int
in_range(const char *opt, unsigned long long v, unsigned long long lo, unsigned long long hi)
{
	if (v >= lo && v <= hi)
		return 0;
	fprintf(stderr, "ethereal-node: --%s: expected %llu..%llu\n", opt, lo, hi);
	return -1;
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
		{"mac", required_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct in_addr a;
	char *end;
	int c, k;

	memset(o, 0, sizeof(*o));
	o->size = 65536;
	o->qps = 1;
	o->mtu = 4096;
	o->iters = 1000;
	o->oob_port = 19875;
	o->paths = 1;
	o->rto_ms = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		unsigned long long v = 0;

		if (strchr("znqMoPR", c)) {
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (*end || errno || optarg[0] == '-') {
				for (k = 0; lo[k].val != c; k++)
					;
				fprintf(stderr, "ethereal-node: --%s: expected a number, got '%s'\n",
					lo[k].name, optarg);
				return -1;
			}
		}
		switch (c) {
		case 'p': o->port = optarg; break;
		case 'i':
			if (inet_pton(AF_INET, optarg, &a) != 1) {
				fprintf(stderr, "ethereal-node: --ip: expected an IPv4 address, got '%s'\n", optarg);
				return -1;
			}
			o->ip = ntohl(a.s_addr);
			break;
		case 's': o->server = 1; break;
		case 'c': o->client = optarg; break;
		case 'm':
			for (k = 0; mode_names[k] && strcmp(mode_names[k], optarg); k++)
				;
			if (!mode_names[k]) {
				fprintf(stderr, "ethereal-node: --mode: expected write_bw, send_bw or write_lat, got '%s'\n", optarg);
				return -1;
			}
			o->mode = (enum mode)k;
			break;
		case 'z':
			if (in_range("size", v, 1, 1u << 30))
				return -1;
			o->size = (uint32_t)v;
			break;
		case 'n': o->iters = v; break;
		case 'D':
			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0)) {
				fprintf(stderr, "ethereal-node: --duration: expected seconds > 0, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'q':
			if (in_range("qps", v, 1, MAX_QPS))
				return -1;
			o->qps = (uint32_t)v;
			break;
		case 'M':
			if (v < 256 || v > 4096 || (v & (v - 1))) {
				fprintf(stderr, "ethereal-node: --mtu: expected 256, 512, 1024, 2048 or 4096\n");
				return -1;
			}
			o->mtu = (uint32_t)v;
			break;
		case 'r':
			o->rate_bps = (uint64_t)(strtod(optarg, &end) * 1e9);
			if (*end || o->rate_bps == 0) {
				fprintf(stderr, "ethereal-node: --rate: expected Gbit/s > 0, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'o':
			if (in_range("oob-port", v, 1, 65535))
				return -1;
			o->oob_port = (uint16_t)v;
			break;
		case 'P':
			if (in_range("paths", v, 1, 256))
				return -1;
			o->paths = (uint32_t)v;
			break;
		case 'v': o->verify = 1; break;
		case 'y': o->yield = 1; break;
		case 'e': o->peer = optarg; break;
		case 'A': {
			struct rte_ether_addr m;

			if (rte_ether_unformat_addr(optarg, &m)) {
				fprintf(stderr, "ethereal-node: --mac: expected a MAC like 02:00:00:00:00:01, got '%s'\n",
					optarg);
				return -1;
			}
			o->mac = optarg;
			break;
		}
		case 'R':
			if (in_range("rto-ms", v, 1, 60000))
				return -1;
			o->rto_ms = (uint32_t)v;
			break;
		case 'j': o->json = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	/* a client needs the server: over TCP (--client) or by hand (--peer) */
	if (optind != argc || !o->port || !o->ip || (o->server && o->client) ||
	    (!o->server && !o->client && !o->peer)) {
		fprintf(stderr, "ethereal-node: %s\n", optind != argc ? "unexpected argument"
			: !o->port ? "--port DEV is required" : !o->ip ? "--ip ADDR is required"
			: "give exactly one of --server and --client HOST (or --peer)");
		usage(stderr);
		return -1;
	}
	if (o->peer) {
		struct peer none = {0}, check;

		if (parse_peer(o->peer, &none, &check))
			return -1;
	}
	return 0;
}

/* ---- out of band: one line each way over TCP ---- */

static int
oob_connect(const struct opts *o)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(o->oob_port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, tries;

	if (fd < 0)
		return -1;
	if (o->server) {
		int c;

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
			close(fd);
			return -1;
		}
		/* a peer that never comes must not hang the server; PMDs such as
		 * net_tap use signals (SIGIO), so system calls see EINTR */
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint64_t until = now_ns() + 60000000000ull;
		int r;

		do {
			r = poll(&pfd, 1, 1000);
		} while ((r == 0 || (r < 0 && errno == EINTR)) && now_ns() < until && !stop);
		if (r != 1) {
			fprintf(stderr, "ethereal-node: no peer connected to TCP %u within 60 s\n",
				o->oob_port);
			close(fd);
			return -1;
		}
		do {
			c = accept(fd, NULL, NULL);
		} while (c < 0 && errno == EINTR);
		close(fd);
		return c;
	}
	if (inet_pton(AF_INET, o->client, &sa.sin_addr) != 1) {
		close(fd);
		return -1;
	}
	for (tries = 0; tries < 100; tries++) { /* the server may not listen yet */
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		if (errno == EINTR)
			continue; /* a PMD's signal, not a refusal */
		/* a refused connect leaves the socket unusable: start afresh */
		close(fd);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		usleep(100000);
	}
	close(fd);
	return -1;
}

/* All of buf, through the signals a PMD may raise. */
static int
write_full(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
oob_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static int
oob_exchange(int fd, const struct peer *me, struct peer *them)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "ETHEREAL1 %02x:%02x:%02x:%02x:%02x:%02x %u %u %u %u %u %u %u %" PRIu64 "\n",
			 me->mac.addr_bytes[0], me->mac.addr_bytes[1], me->mac.addr_bytes[2],
			 me->mac.addr_bytes[3], me->mac.addr_bytes[4], me->mac.addr_bytes[5],
			 me->ip, me->qpn_base, me->nqp, me->psn, me->rkey, me->size, me->mtu, me->addr);
	unsigned int m[6];

	if (write_full(fd, line, (size_t)n) || oob_line(fd, line, sizeof(line)))
		return -1;
	if (sscanf(line, "ETHEREAL1 %x:%x:%x:%x:%x:%x %u %u %u %u %u %u %u %" SCNu64, &m[0], &m[1],
		   &m[2], &m[3], &m[4], &m[5], &them->ip, &them->qpn_base, &them->nqp, &them->psn,
		   &them->rkey, &them->size, &them->mtu, &them->addr) != 14)
		return -1;
	for (int i = 0; i < 6; i++)
		them->mac.addr_bytes[i] = (uint8_t)m[i];
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

int
main(int argc, char **argv)
{
	struct et_link_model lm = {0};
	struct et_mr_table mrs = {0};
	struct et_cq scq = {0}, rcq = {0};
	struct et_qp *qp[MAX_QPS];
	struct rte_mempool *mp;
	struct et_port port;
	struct et_nic nic;
	struct et_arp arp;
	struct rte_ether_addr mac;
	struct peer me, them;
	const struct et_mr *mr;
	struct opts o;
	uint8_t *buf;
	uint64_t *lat = NULL, posted = 0, done = 0, flushed = 0, t0, t1, deadline;
	uint32_t i;
	int n, fd, rc = 1, bad = 0;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "ethereal-node: cannot initialise DPDK (EAL arguments?)\n");
		return 1;
	}
	argc -= n;
	argv += n;
	if (parse_opts(argc, argv, &o)) {
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	mp = rte_pktmbuf_pool_create("node", 16383, 256, 0, RTE_PKTMBUF_HEADROOM + 4096 + 256,
				     (int)rte_socket_id());
	buf = calloc(1, (size_t)o.size * o.qps);
	if (!mp || !buf || et_mr_table_init(&mrs, 4) || et_cq_init(&scq, 4096) ||
	    et_cq_init(&rcq, 4096)) {
		fprintf(stderr, "ethereal-node: out of memory\n");
		goto out;
	}
	n = et_port_ethdev(&port, o.port, mp, 1024);
	if (n) {
		fprintf(stderr, "ethereal-node: --port: cannot start '%s': %s\n", o.port, strerror(-n));
		goto out;
	}
	/* on a kernel tap the port's MAC is also the kernel interface's, which
	 * a bridge keeps for itself: --mac gives the host one of its own */
	if (o.mac)
		rte_ether_unformat_addr(o.mac, &mac);
	else
		rte_eth_macaddr_get(port.eth_port, &mac);
	lm.rate_bps = o.rate_bps;
	if (et_nic_init(&nic, &port, &lm, mp, &mac, o.ip, 0x100, o.qps)) {
		fprintf(stderr, "ethereal-node: cannot set up the NIC model\n");
		goto out;
	}
	/* ARP on the control path, so kernel hosts on the segment can reach us;
	 * at most 100 frames/s out, bursts of 8 */
	et_arp_init(&arp, mac.addr_bytes, o.ip, 10000000, 8);
	nic.arp = &arp;
	if (!o.server)
		for (uint64_t k = 0; k < (uint64_t)o.size * o.qps; k++)
			buf[k] = pattern(k);
	mr = et_mr_reg(&mrs, buf, (uint64_t)o.size * o.qps,
		       ET_ACCESS_LOCAL_WRITE | ET_ACCESS_REMOTE_WRITE);
	me = (struct peer){.mac = mac, .ip = o.ip, .qpn_base = 0x100, .nqp = o.qps,
			   .psn = 0x1000, .rkey = mr->key, .size = o.size, .mtu = o.mtu,
			   .addr = (uintptr_t)buf};
	printf("ethereal-node: %s on %s, %s, local: mac=%02x:%02x:%02x:%02x:%02x:%02x,"
	       "ip=%u.%u.%u.%u,qpn=0x%x,psn=0x%x,rkey=0x%x,addr=0x%" PRIx64 "\n",
	       o.server ? "server" : "client", o.port, mode_names[o.mode], mac.addr_bytes[0],
	       mac.addr_bytes[1], mac.addr_bytes[2], mac.addr_bytes[3], mac.addr_bytes[4],
	       mac.addr_bytes[5], o.ip >> 24, (o.ip >> 16) & 0xff, (o.ip >> 8) & 0xff, o.ip & 0xff,
	       me.qpn_base, me.psn, me.rkey, me.addr);
	fflush(stdout);
	if (o.peer) {
		/* parameters by hand: no management network needed */
		fd = -1;
		if (parse_peer(o.peer, &me, &them))
			goto out_nic;
	} else {
		printf("ethereal-node: waiting for the peer on TCP %u\n", o.oob_port);
		fflush(stdout);
		fd = oob_connect(&o);
		if (fd < 0 || oob_exchange(fd, &me, &them)) {
			fprintf(stderr, "ethereal-node: out-of-band exchange with the peer failed\n");
			goto out_nic;
		}
	}
	if (them.nqp != o.qps || them.size != o.size || them.mtu != o.mtu) {
		fprintf(stderr, "ethereal-node: the peer runs --qps %u --size %u --mtu %u; give both the same\n",
			them.nqp, them.size, them.mtu);
		goto out_nic;
	}
	/* memif and tap come up a little after start: frames sent before are lost */
	for (int k = 0;; k++) {
		struct rte_eth_link link;

		if (rte_eth_link_get_nowait(port.eth_port, &link) == 0 && link.link_status)
			break;
		if (k == 500 || stop) {
			fprintf(stderr, "ethereal-node: --port %s: the link is not up after 5 s\n", o.port);
			goto out_nic;
		}
		usleep(10000);
	}
	if (resolve_peer(&nic, &arp, &them, o.peer && !peer_has_mac(o.peer)))
		goto out_nic;
	for (i = 0; i < o.qps; i++) {
		struct et_qp_attr a;

		et_qp_attr_default(&a);
		a.dest_qpn = them.qpn_base + i;
		a.dest_mac = them.mac;
		a.dest_ip = them.ip;
		a.mtu = o.mtu;
		a.sq_psn = me.psn;
		a.rq_psn = them.psn;
		a.max_send_wr = 64;
		a.max_recv_wr = 64;
		a.retry_cnt = 6; /* a test tool must end: 7 would retry forever */
		a.path_id = et_path_make((uint8_t)(i % o.paths), 0);
		a.rto_ns = (uint64_t)o.rto_ms * 1000000;
		qp[i] = et_nic_qp_create(&nic, &a, &mrs, &scq, &rcq);
		if (!qp[i] || et_qp_ready(qp[i])) {
			fprintf(stderr, "ethereal-node: cannot create QP %u\n", i);
			goto out_nic;
		}
		if (o.mode == MODE_SEND_BW)
			for (int k = 0; k < DEPTH; k++) {
				struct et_recv_wr rw = {.wr_id = i, .addr = buf + (uint64_t)i * o.size,
							.length = o.size, .lkey = mr->key};

				et_qp_post_recv(qp[i], &rw);
			}
	}
	if (o.mode == MODE_WRITE_LAT)
		lat = calloc(o.iters, sizeof(*lat));
	tel_qps = qp;
	tel_nqp = o.qps;
	tel_nic = &nic;
	rte_telemetry_register_cmd("/ethereal/node/port", tel_port,
				   "The host NIC's counters (rx by reason, tx, pauses, timers)");
	rte_telemetry_register_cmd("/ethereal/node/qps", tel_qps_cb,
				   "Per-QP counters: packets, bytes, retransmits, timeouts, NAKs, CNPs, cwnd, alpha, path ID");

	t0 = now_ns();
	deadline = o.duration > 0 ? t0 + (uint64_t)(o.duration * 1e9) : UINT64_MAX;
	if (o.server) {
		char line[64];

		/* answer until the client says it is done */
		struct timeval tv = {0, 0};
		fd_set rd;

		for (;;) {
			for (int k = 0; k < 4096; k++) {
				struct et_wc wc;

				if (et_nic_poll(&nic, now_ns()) == 0 && o.yield)
					sched_yield();
				while (et_cq_poll(&rcq, &wc, 1)) {
					struct et_recv_wr rw = {.wr_id = wc.wr_id,
								.addr = buf + wc.wr_id * o.size,
								.length = o.size, .lkey = mr->key};

					done++;
					et_qp_post_recv(qp[wc.wr_id], &rw);
				}
			}
			if (stop || now_ns() > deadline)
				break;
			if (fd < 0)
				continue; /* static peer: until SIGINT or --duration */
			FD_ZERO(&rd);
			FD_SET(fd, &rd);
			if (select(fd + 1, &rd, NULL, NULL, &tv) > 0)
				break;
		}
		t1 = now_ns();
		if ((fd < 0 || (!stop && oob_line(fd, line, sizeof(line)) == 0)) && o.verify)
			for (uint64_t k = 0; k < (uint64_t)o.size * o.qps; k++)
				bad += buf[k] != pattern(k);
		/* this side polls no more: the client may close its port */
		if (fd >= 0 && write_full(fd, "BYE\n", 4))
			bad++;
	} else {
		uint64_t want = o.duration > 0 ? UINT64_MAX : o.iters * o.qps;
		uint64_t *posted_at = calloc(o.qps, sizeof(*posted_at));

		uint64_t drain_until = 0;

		/* on SIGINT/SIGTERM post nothing more, let what is out complete for
		 * up to a second, then flush the rest */
		while (done < posted || (!stop && done < want && now_ns() < deadline)) {
			struct et_wc wc[32];
			uint32_t k;

			if (stop && drain_until == 0)
				drain_until = now_ns() + 1000000000ull;
			if (drain_until && now_ns() > drain_until) {
				for (i = 0; i < o.qps; i++)
					et_qp_flush(qp[i]);
				drain_until = UINT64_MAX;
			}
			for (i = 0; !stop && i < o.qps && posted < want && now_ns() < deadline; i++) {
				uint32_t depth = o.mode == MODE_WRITE_LAT ? 1 : DEPTH;

				while (et_qp_sq_outstanding(qp[i]) < depth && posted < want) {
					struct et_send_wr wr = {
						.wr_id = i, .opcode = o.mode == MODE_SEND_BW ? ET_WR_SEND
											     : ET_WR_RDMA_WRITE,
						.local_addr = buf + (uint64_t)i * o.size, .length = o.size,
						.lkey = mr->key,
						.remote_addr = them.addr + (uint64_t)i * o.size,
						.rkey = them.rkey};

					if (et_nic_post_send(&nic, qp[i], &wr))
						break;
					posted_at[i] = now_ns();
					posted++;
				}
			}
			if (et_nic_poll(&nic, now_ns()) == 0 && o.yield)
				sched_yield();
			k = et_cq_poll(&scq, wc, 32);
			for (uint32_t j = 0; j < k; j++) {
				if (wc[j].status == ET_WC_WR_FLUSH_ERR) {
					flushed++;
				} else if (wc[j].status != ET_WC_SUCCESS) {
					fprintf(stderr, "ethereal-node: QP %u: %s\n", qp[wc[j].wr_id]->a.qpn,
						et_wc_status_str(wc[j].status));
					stop = 1;
					bad++;
				}
				if (lat && done < o.iters)
					lat[done] = now_ns() - posted_at[wc[j].wr_id];
				done++;
			}
		}
		t1 = now_ns();
		free(posted_at);
		if (drain_until && !bad)
			printf("ethereal-node: stopped: %" PRIu64 " requests completed, %" PRIu64 " flushed\n",
			       done - flushed, flushed);
		/* tell the server, which then checks its memory; wait until it has
		 * stopped polling before closing the port: DPDK 22.11's memif unmaps
		 * the shared rings from its control thread when the peer leaves,
		 * under a datapath that may still be reading them */
		if (fd >= 0) {
			char line[16];
			struct timeval tv = {30, 0};

			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			if (write_full(fd, "DONE\n", 5) || oob_line(fd, line, sizeof(line)))
				bad++;
		}
	}
	if (fd >= 0)
		close(fd);

	{
		double s = (double)(t1 - t0) / 1e9;
		uint64_t bytes = done * o.size, pkts = o.server ? nic.st.rx_pkts : nic.st.tx_pkts;
		double gbps;
		uint64_t p50 = 0, p99 = 0, p999 = 0, retx = 0, tmo = 0;
		FILE *j;

		for (i = 0; i < o.qps; i++) {
			retx += qp[i]->st.retransmits;
			tmo += qp[i]->st.timeouts;
			if (o.server)
				bytes += qp[i]->st.rx_bytes; /* payload placed here */
		}
		if (o.server)
			bytes -= done * o.size;
		gbps = bytes * 8 / s / 1e9;
		if (lat && done) {
			uint64_t nl = done < o.iters ? done : o.iters;

			qsort(lat, nl, sizeof(*lat), cmp_u64);
			p50 = lat[nl / 2];
			p99 = lat[nl * 99 / 100];
			p999 = lat[nl * 999 / 1000];
		}
		printf("%-10s %10s %6s %12s %10s %10s %10s %10s %10s %10s %8s\n", "mode", "size", "qps",
		       "messages", "seconds", "Gbit/s", "Mpps", "p50_us", "p99_us", "p99.9_us", "verify");
		printf("%-10s %10u %6u %12" PRIu64 " %10.3f %10.2f %10.3f %10.2f %10.2f %10.2f %8s\n",
		       mode_names[o.mode], o.size, o.qps, done, s, gbps, pkts / s / 1e6, p50 / 1e3,
		       p99 / 1e3, p999 / 1e3, !o.verify ? "off" : bad ? "FAILED" : "ok");
		printf("retransmits %" PRIu64 ", timeouts %" PRIu64 ", rx bad ICRC %" PRIu64
		       ", rx unknown QPN %" PRIu64 ", rx not RoCE %" PRIu64 "\n",
		       retx, tmo, nic.st.rx_bad[ET_WIRE_E_ICRC], nic.st.rx_unknown_qpn,
		       nic.st.rx_bad[ET_WIRE_E_NOT_IPV4] + nic.st.rx_bad[ET_WIRE_E_NOT_UDP] +
			       nic.st.rx_bad[ET_WIRE_E_NOT_ROCE]);
		{
			struct rte_eth_stats es;

			if (rte_eth_stats_get(port.eth_port, &es) == 0)
				printf("port: rx %" PRIu64 " (missed %" PRIu64 ", errors %" PRIu64
				       ", no mbuf %" PRIu64 "), tx %" PRIu64 " (errors %" PRIu64 ")\n",
				       es.ipackets, es.imissed, es.ierrors, es.rx_nombuf, es.opackets,
				       es.oerrors);
		}
		if (o.json && (j = fopen(o.json, "w")) != NULL) {
			fprintf(j, "{\"mode\": \"%s\", \"role\": \"%s\", \"size\": %u, \"qps\": %u, "
				   "\"messages\": %" PRIu64 ", \"seconds\": %.6f, \"gbps\": %.3f, "
				   "\"mpps\": %.4f, \"lat_p50_ns\": %" PRIu64 ", \"lat_p99_ns\": %" PRIu64
				   ", \"lat_p999_ns\": %" PRIu64 ", \"retransmits\": %" PRIu64
				   ", \"timeouts\": %" PRIu64 ", \"verified\": %s}\n",
				mode_names[o.mode], o.server ? "server" : "client", o.size, o.qps, done, s,
				gbps, pkts / s / 1e6, p50, p99, p999, retx, tmo,
				!o.verify ? "null" : bad ? "false" : "true");
			fclose(j);
		}
	}
	rc = bad ? 1 : 0;
	fflush(stdout); /* the results are out even if tearing down fails */
out_nic:
	tel_nic = NULL;
	tel_nqp = 0;
	et_nic_free(&nic);
	et_port_close(&port);
out:
	et_cq_free(&scq);
	et_cq_free(&rcq);
	et_mr_table_free(&mrs);
	free(lat);
	free(buf);
	rte_eal_cleanup();
	return rc;
}
