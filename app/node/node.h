/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-node in parts, one job each, and what they share: the options
 * and everything one run holds.
 *
 *   main.c       start, run, stop
 *   options.c    the command line
 *   port.c       the DPDK port, the NIC model, ARP, memory; closing them
 *   connect.c    the peer's parameters, its MAC, our QPs
 *   run.c        the test: server, client, ping-pong
 *   finish.c     the last words over TCP after the test
 *   report.c     the table, the JSON, the saved buffer
 *   telemetry.c  counters for rte_telemetry
 *   oob.c        the TCP exchange's dialects
 *   cm.c         --oob cm: connections by RDMA CM, perftest -R's exchange
 *                on a QP
 *   cm_tools.c   --oob cm: rdmacm-utils' ucmatose and rping
 */
#ifndef ET_NODE_H
#define ET_NODE_H

#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cm/et_cm.h"
#include "host/et_arp.h"
#include "host/et_host.h"
#include "host/et_nic.h"
#include "link/et_link_conf.h"
#include "oob.h"

/* QPs of a run: as many connections as one CM holds, less the exchange's
 * (perftest -R); the per-QP arrays are made for --qps */
#define MAX_QPS (ET_CM_MAX_CONNS - 1)
#define MAX_WORKERS ET_NIC_TEAM_MAX
#define DEPTH 16 /* requests in flight per QP */
/* READs and atomics we answer at once per QP (perftest's out_reads, what
 * rxe allows: the peer may have that many out) */
#define NODE_RD_ATOMIC 128

enum mode {
	MODE_WRITE_BW, MODE_SEND_BW, MODE_WRITE_LAT, MODE_PINGPONG, MODE_SEND_LAT,
	MODE_READ_BW, MODE_READ_LAT, MODE_ATOMIC_BW, MODE_UCMATOSE, MODE_RPING,
};
extern const char *const mode_names[]; /* by enum mode, NULL-terminated */

struct opts {
	const char *port, *client, *json, *save, *pcap;
	uint32_t ip;
	int server;
	enum mode mode;
	enum oob_dialect oob;
	bool mode_set, size_set, mtu_set, port_set, iters_set;
	bool all; /* --all: every size 2 .. 2^23, as perftest's -a */
	uint32_t size, qps, mtu;
	uint64_t iters;
	uint64_t duration_ns; /* 0: --iters ends the run */
	uint16_t oob_port;
	uint32_t paths;
	uint32_t workers; /* lcores, each with a queue pair and a share of the QPs */
	uint32_t rto_ms;
	const char *peer;
	const char *mac;
	int yield;
	uint64_t rate_bps;
	int verify;
	struct et_link_model faults; /* what we send (--fault, --seed) */
	uint32_t rx_loss_ppm;        /* what we receive (--rx-loss-ppm) */
};

/* What a row of the table showed (the JSON takes the last). */
struct row_figures {
	double s, gbps;
	uint64_t bytes, pkts, p50, p99, p999;
};

/* A worker's share of a run (--workers): its NIC on a queue pair of the
 * port, its CQs, and QPs k, k + workers, ...  Lane 0 runs on the main
 * lcore, and alone in every mode but write_bw and send_bw. */
struct lane {
	struct node *n;
	uint32_t k;
	struct et_nic nic;
	struct et_host host;  /* NIC, memory region, CQs, next hop */
	uint64_t done, flushed, t1;
	uint64_t busy_cyc;    /* TSC cycles in NIC polls that did work */
	int bad;
};

/* Everything one run holds. */
struct node {
	struct opts o;
	struct rte_mempool *mp;
	struct et_port port;
	bool port_open;
	uint32_t nics_open;   /* lanes whose NIC is set up */
	struct lane lane[MAX_WORKERS];
	struct et_nic_team team; /* with more than one worker */
	_Atomic int lanes_stop; /* lane 0 tells the others the run is over */
	struct et_capture *cap; /* --pcap: what we send */
	struct et_arp arp;
	struct et_qp **qp;    /* --qps of them */
	uint32_t key;         /* of buf, local and remote */
	uint8_t *buf;
	uint64_t buf_len;
	struct peer me, them;
	struct peer_qp *them_qp; /* perftest: one address message per QP */
	uint64_t stride;      /* QP i's part of buf starts at i * stride */
	uint32_t size;        /* the size being run (--all walks them) */
	uint64_t *recv_left;  /* per QP: receives still to post; UINT64_MAX: no end */
	struct oob oob;
	uint64_t *lat;
	uint64_t nlat;        /* samples in lat (0: min(done, iters)) */
	uint64_t done, flushed, t0, t1;
	uint64_t pkts0;       /* packets at t0 (a row's share) */
	struct row_figures last_row;
	struct json_t *rows; /* --json: every row printed, one per size with --all */
	char phase[48];       /* where perftest's exchange is, for its errors */
	struct cm_node *cm;   /* --oob cm (cm.c); NULL otherwise */
	int bad;
};

/* The sizes --all runs, as perftest's -a: 2, 4, ... 2^23. */
#define ALL_MIN_SIZE 2u
#define ALL_MAX_SIZE (1u << 23)

/* perftest's ping-pong latency tests: each side sends in turn, each into
 * the other's receive area (--oob perftest). */
static inline bool
is_lat(enum mode m)
{
	return m == MODE_WRITE_LAT || m == MODE_SEND_LAT;
}

/* rdmacm-utils' tests (--oob cm): their own exchanges on their
 * connections, no perftest in them */
static inline bool
is_rdmacm_tool(enum mode m)
{
	return m == MODE_UCMATOSE || m == MODE_RPING;
}

/* perftest's exchange: over TCP, or over RDMA CM (its -R) */
static inline bool
is_perftest(const struct opts *o)
{
	return o->oob == OOB_PERFTEST || (o->oob == OOB_CM && !is_rdmacm_tool(o->mode));
}

/* rping's smallest buffer: its "rdma-ping-%d: " and a count; and the room
 * after its two buffers for its 16-byte messages (two receives, a send) */
#define RPING_MIN_SIZE 26u
#define RPING_CTL 64u

/* The client reads the server's memory or works on it (READ, atomics); the
 * server's NIC answers, the server itself does nothing. */
static inline bool
is_rd(enum mode m)
{
	return m == MODE_READ_BW || m == MODE_READ_LAT || m == MODE_ATOMIC_BW;
}

/* One request at a time, each timed: a latency table. */
static inline bool
times_rounds(enum mode m)
{
	return is_lat(m) || m == MODE_READ_LAT;
}

/* The server only answers until the client's last word (the READ and
 * atomic tests, write_bw). */
static inline bool
passive_server(enum mode m)
{
	return m == MODE_WRITE_BW || is_rd(m);
}

/* Atomics: 8 bytes, one slot per request in flight on the client (the old
 * value each FETCH_ADD returns lands in a slot of its own). */
#define ATOMIC_STRIDE (DEPTH * ET_ATOMIC_LEN)

/* SIGINT or SIGTERM: stop posting, finish what is out, report. */
extern volatile sig_atomic_t node_stop;

/* QP i's lane. */
static inline struct lane *
lane_of(struct node *n, uint32_t i)
{
	return &n->lane[i % n->o.workers];
}

/* What the client writes at offset off of its buffer (the server checks). */
static inline uint8_t
test_pattern(uint64_t off)
{
	return (uint8_t)(off * 131 + (off >> 9) * 7 + 1);
}

/* ip (host order) as a.b.c.d */
static inline const char *
ipv4_str(uint32_t ip, char out[INET_ADDRSTRLEN])
{
	struct in_addr a = {.s_addr = htonl(ip)};

	return inet_ntop(AF_INET, &a, out, INET_ADDRSTRLEN);
}

/* The files, each calling only those listed before it (no circle):
 * options, telemetry, oob (oob.h) < port, tally < exchange < cm <
 * connect, report, cm_tools < finish < run < main. */

/* options.c */
int parse_options(int argc, char **argv, struct opts *o);
int parse_peer(const char *spec, const struct peer *me, struct peer *p);
bool peer_has_mac(const char *spec);
/* The command line's help. */
void usage(FILE *f);

/* telemetry.c: what /ethereal/node/ shows, once it exists */
void telemetry_register(void);
void telemetry_show_nic(struct et_nic *nic);
void telemetry_show_qps(struct et_qp **qps, uint32_t n);

/* port.c */
int node_open(struct node *n);
int wait_link_up(struct node *n);
/* The port and the NICs closed (the RDMA CM closes first: cm_close). */
void node_close(struct node *n);

/* tally.c: what the run moved, and whether it landed right */
void check_written(struct node *n);
/* A server's memory after the test (--verify): what the client wrote is
 * there, or atomic_bw's counters hold what ran. */
void check_server_memory(struct node *n);
/* The payload the peer placed through a lane's QPs, and through all. */
uint64_t lane_placed_bytes(const struct lane *l);
uint64_t placed_bytes(const struct node *n);
/* What the peer's READs and atomics asked of our memory, all QPs: bytes
 * of READ requests (duplicates not counted) and atomics executed. */
uint64_t read_bytes_served(const struct node *n);
uint64_t atomics_served(const struct node *n);
/* The NICs' counters, every lane's summed. */
void nic_totals(const struct node *n, struct et_nic_stats *st, struct et_egress_stats *eg);
/* Packets the NICs received (a server) or sent (a client), every lane's. */
uint64_t nic_packets(const struct node *n);

/* exchange.c: what connect.c's dialects and cm.c share */
void post_recv(struct node *n, uint32_t i);
void post_recvs(struct node *n, uint64_t per_qp);
/* ucmatose: QP i's --iters receives; rping: its two message slots'
 * (rping_recvs), or slot k's again (rping_recv) */
void ucmatose_recvs(struct node *n, uint32_t i);
void rping_recvs(struct node *n);
void rping_recv(struct node *n, uint32_t k);
/* rping's message slot k after the buffers: 0 and 1 received, 2 sent */
uint8_t *rping_slot(const struct node *n, uint32_t k);
void qp_attr(const struct node *n, uint32_t i, struct et_qp_attr *a);
void print_local(const struct node *n);
int exchange_failed(struct node *n, const char *step);
int perftest_keys(struct node *n, uint32_t count, int (*ready)(struct node *n));
int perftest_rounds(struct node *n, int (*ready)(struct node *n));

/* cm.c */
struct cm_node;
int cm_connect_peer(struct node *n);
/* The connection manager's timers and events: in every wait on the port. */
void cm_poll(struct node *n);
/* The port polled once, then the connection manager (a pause when idle). */
void cm_poll_once(struct node *n);
/* The test's connection i is closed (its DISCONNECTED came). */
bool cm_down(const struct node *n, uint32_t i);
/* Until the test's connections are all closed, at most ms: how many are. */
uint32_t cm_wait_down(struct node *n, uint64_t ms);
/* Our DREQ for each of the test's connections still established, a
 * window of them out at once. */
void cm_disconnect_all(struct node *n);
/* How long closing may take: 3 s, and 1 ms per 10 connections. */
uint64_t cm_close_ms(const struct node *n);
/* Our connections closed (DREQ, or the peer's answered), at most
 * cm_close_ms; the agent on QP 1 gone. */
void cm_close(struct node *n);
void cm_report(const struct node *n, struct json_t *j);

/* connect.c */
int connect_peer(struct node *n);

/* report.c */
void report_header(void);
void report_row(struct node *n);
void report_results(struct node *n);
int save_buffer(const struct node *n);

/* cm_tools.c: rdmacm-utils' tests */
void run_ucmatose(struct node *n);
void run_rping(struct node *n);

/* finish.c */
void last_words(struct node *n);

/* run.c */
void run_server(struct node *n);
void run_client(struct node *n);
void run_pingpong(struct node *n);
void run_perftest(struct node *n);

#endif /* ET_NODE_H */
