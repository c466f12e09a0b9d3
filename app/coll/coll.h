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
 *   trace.c    a trace's iteration (--trace): this rank's walk of its DAG,
 *              several collectives at once, each over its group's ranks
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
	double comm_us;          /* a trace: the time with any of its collectives running */
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

struct coll;
struct ctrace;

/* What the runtime's peer ops are handed: the rank, and which of its
 * collectives (0: the sizes'; a trace's node), which every message about a
 * subflow names. */
struct coll_ref {
	struct coll *c;
	uint32_t id;
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
	struct coll_ref ref0;    /* rt's */
	struct et_trace *trace;  /* --trace: its DAG instead of the sizes */
	struct ctrace *tr;       /* while it runs */
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
	uint64_t link_next;      /* when the port's link is read next */
};

extern volatile sig_atomic_t coll_stop;

void coll_usage(FILE *o);
/* 0, or -1 after a one-line message. */
int coll_parse(int argc, char **argv, struct copts *o);
/* The conf and the rank's place in it; 0 or -1 after a message. */
int coll_setup(struct coll *c);

int coll_open_port(struct coll *c);
void coll_close(struct coll *c);
void coll_free_trace(struct coll *c);
/* Every rank there, its port up: 0, or -1 after a message. */
int coll_start(struct coll *c);
/* One size: warm-up and timed iterations (last: this rank leaves after
 * them); 0, or -1 after a message. */
int coll_run_size(struct coll *c, uint64_t size, bool last, struct row *out);
/* --trace: its iteration, once; every rank's figures in c->fig after the
 * closing barrier.  0, or -1 after a message. */
int coll_run_trace(struct coll *c);

/* Shared by run.c and trace.c. */
extern const struct et_rt_peer_ops coll_peer_ops;
/* Messages until none is waiting; -1 after a message when a peer failed,
 * is gone or said something wrong. */
int coll_drain_mesh(struct coll *c);
/* The port's link, read every few ms: while it is down, what the NIC
 * sends is dropped and counted instead of held (et_nic_set_link). */
void coll_watch_link(struct coll *c, uint64_t now);
/* A rank's figures of a collective (or a trace), as its barrier message
 * carries them. */
struct rank_fig coll_fig_of(const struct msg *m);
/* f's counts into to's: summed, but the most QPs at once. */
void coll_fig_add_counts(struct rank_fig *to, const struct rank_fig *f);
/* All ranks' figures in c->fig as one: the slowest rank's times, counts
 * as coll_fig_add_counts adds them. */
struct rank_fig coll_fig_all(const struct coll *c);
/* Every rank at the next barrier, with this rank's figures mine. */
int coll_barrier(struct coll *c, const struct msg *mine);
/* The OPENs kept for collective id, now h: served.  0 or -1. */
int coll_open_early(struct coll *c, uint32_t id, struct et_rt_host *h);
const char *coll_what_is_left(const struct et_rt_host *h, char *buf, size_t n);
/* trace.c's answers to run.c: collective id's runtime if it runs here
 * (NULL: not yet, or over); a far end opened here for it (+1) or closed (-1). */
struct et_rt_host *ctrace_rt(struct coll *c, uint32_t id);
void ctrace_far_end(struct coll *c, uint32_t id, int delta);

void coll_print_header(const struct coll *c);
void coll_print_row(const struct coll *c, const struct row *r);
void coll_print_trace(const struct coll *c);
int coll_write_json(const struct coll *c, const char *file);

#endif /* ET_COLL_APP_H */
