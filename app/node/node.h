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
 */
#ifndef ET_NODE_H
#define ET_NODE_H

#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host/et_arp.h"
#include "host/et_host.h"
#include "host/et_nic.h"
#include "link/et_link_conf.h"
#include "oob.h"

#define MAX_QPS 64
#define DEPTH 16 /* requests in flight per QP */

enum mode { MODE_WRITE_BW, MODE_SEND_BW, MODE_WRITE_LAT, MODE_PINGPONG };
extern const char *const mode_names[]; /* by enum mode, NULL-terminated */

struct opts {
	const char *port, *client, *json, *save, *pcap;
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

/* Everything one run holds. */
struct node {
	struct opts o;
	struct rte_mempool *mp;
	struct et_port port;
	bool port_open, nic_open;
	struct et_nic nic;
	struct et_capture *cap; /* --pcap: what we send */
	struct et_arp arp;
	struct et_host host;  /* NIC, memory region, CQs, next hop */
	struct et_qp *qp[MAX_QPS];
	uint32_t key;         /* of buf, local and remote */
	uint8_t *buf;
	uint64_t buf_len;
	struct peer me, them;
	struct oob oob;
	uint64_t *lat;
	uint64_t done, flushed, t0, t1;
	int bad;
};

/* SIGINT or SIGTERM: stop posting, finish what is out, report. */
extern volatile sig_atomic_t node_stop;

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

/* options.c */
int parse_options(int argc, char **argv, struct opts *o);
int parse_peer(const char *spec, const struct peer *me, struct peer *p);
bool peer_has_mac(const char *spec);

/* port.c */
int node_open(struct node *n);
int wait_link_up(struct node *n);
void node_close(struct node *n);

/* connect.c */
int connect_peer(struct node *n);
void post_recv(struct node *n, uint32_t i);
int perftest_key(struct node *n, int (*ready)(struct node *n));

/* run.c */
void run_server(struct node *n);
void run_client(struct node *n);
void run_pingpong(struct node *n);
void check_written(struct node *n);
uint64_t placed_bytes(const struct node *n);

/* finish.c */
void last_words(struct node *n);

/* report.c */
/* The command line's help (options.c). */
void usage(FILE *f);
void report_results(struct node *n);
int save_buffer(const struct node *n);

/* telemetry.c: what /ethereal/node/ shows, once it exists */
void telemetry_register(void);
void telemetry_show_nic(struct et_nic *nic);
void telemetry_show_qps(struct et_qp **qps, uint32_t n);

#endif /* ET_NODE_H */
