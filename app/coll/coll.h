/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-coll: one host of a fabric per process, on any DPDK port,
 * running the collectives with the host runtime ethereal-fabric runs
 * (lib/host/et_runtime): the same conf, policy, schedule and seed.
 *
 *   main.c     start, the sizes, stop
 *   options.c  the command line (the fabric's conf and options, and ours)
 *   mesh.c     the ranks' TCP connections: bootstrap, messages
 *   run.c      one collective: the far ends of subflows opened on request
 *              of their senders, the barrier that ends it
 *   report.c   the table and the JSON
 */
#ifndef ET_COLL_APP_H
#define ET_COLL_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host/et_arp.h"
#include "host/et_nic.h"
#include "host/et_runtime.h"
#include "link/et_port.h"
#include "et_fabric_cli.h"
#include "mesh.h"

struct copts {
	struct cli f;            /* what ethereal-fabric takes too */
	const char *port, *root, *mac;
	uint32_t rank, world;
	bool rank_set, world_set;
	uint64_t min, max;       /* -b, -e; 0: the conf's or --size */
	uint32_t factor;         /* -f */
	uint32_t iters, warmup;
	uint32_t timeout_s;      /* one collective, and the bootstrap */
	bool yield;
	bool switch_mode;        /* --switch-mode: say the switches' mode for the policy */
};

/* One rank's figures: of one collective, as its barrier message carries
 * them; of one size, the timed iterations' (times averaged, counts summed). */
struct rank_fig {
	double us;
	uint64_t retransmits, timeouts, rerouted, paths_marked_bad;
	uint32_t max_qps, wrong;
};

/* One size's figures: all ranks' as the table shows them (the slowest
 * rank's time, counts summed, any rank's most QPs at once, the ranks whose
 * data was wrong), and each rank's. */
struct row {
	uint64_t size;
	struct rank_fig all;
	struct rank_fig *rank;   /* world of them */
};

/* A message that came before its collective (a peer already in the next). */
struct early {
	uint32_t from;
	struct msg m;
};

struct coll {
	struct copts o;
	struct et_fabric_params p;
	struct et_rt_conf rc;
	struct rte_mempool *mp;
	struct et_port port;
	bool port_open, nic_open;
	struct et_nic nic;
	struct et_arp arp;
	struct et_lb_host lb;    /* paths marked bad stay bad from one collective to the next */
	struct et_rt_peer_cc *peer_cc;
	struct et_rt_host rt;
	bool rt_live;
	struct mesh mesh;
	FILE *plan;              /* --plan: until the first collective is planned */
	uint32_t seq;            /* barriers passed */
	uint32_t barrier_in;     /* peers at barrier seq */
	struct rank_fig *fig;    /* by rank: the collective's figures, a peer's from its barrier */
	bool peer_failed;
	uint32_t max_qps;
	struct early *early;
	uint32_t n_early, early_cap;
	struct row *rows;
	uint32_t n_rows, n_rows_cap;
	struct rank_fig first;   /* the first collective (warm-up or not): its plan is --plan's */
	uint64_t first_size;
	bool first_done;
};

extern volatile sig_atomic_t coll_stop;

void coll_usage(FILE *o);
/* 0, or -1 after a one-line message. */
int coll_parse(int argc, char **argv, struct copts *o);
/* The conf and the rank's place in it; 0 or -1 after a message. */
int coll_setup(struct coll *c);

int coll_open_port(struct coll *c);
void coll_close(struct coll *c);
/* Every rank there, its port up: 0, or -1 after a message. */
int coll_start(struct coll *c);
/* One size: warm-up and timed iterations (last: this rank leaves after
 * them); 0, or -1 after a message. */
int coll_run_size(struct coll *c, uint64_t size, bool last, struct row *out);

void coll_print_header(const struct coll *c);
void coll_print_row(const struct coll *c, const struct row *r);
int coll_write_json(const struct coll *c, const char *file);

#endif /* ET_COLL_APP_H */
