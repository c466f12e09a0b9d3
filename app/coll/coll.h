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
	uint64_t min, max;       /* -b, -e (unset: the conf's size, or each other) */
	bool min_set, max_set;
	uint32_t factor;         /* -f; 1: add step */
	uint64_t step;           /* -i */
	uint32_t iters, warmup;  /* -n, -w */
	uint32_t average;        /* -a: the time column, 0 rank 0's, 1 mean, 2 min, 3 max */
	uint32_t timeout_s;      /* one collective, and the bootstrap */
	bool yield;
	bool switch_mode;        /* --switch-mode: say the switches' mode for the policy */
	bool dry_run;            /* --dry-run: check everything, run nothing */
	bool all_dtypes, all_ops; /* -d all, -o all */
};

/* One collective of the sweep: a row of the table. */
struct point {
	enum et_coll_dtype dtype;
	enum et_coll_op op;
	uint64_t size;           /* as -b .. -e gave it */
};

/* One rank's figures: of one collective, as its barrier message carries
 * them; of one size, the timed iterations' (times averaged, counts summed). */
struct rank_fig {
	double us;
	double comm_us;          /* a trace: the time with any of its collectives running */
	uint64_t retransmits, timeouts, rerouted, paths_marked_bad;
	uint64_t wrong;          /* elements (-c 1) */
	uint32_t max_qps;
};

/* One size's figures: all ranks' (the slowest rank's time, its mean over
 * the iterations: the CCT; counts summed, any rank's most QPs at once, the
 * wrong elements), and each rank's, from which the table's time is taken
 * (-a). */
struct row {
	struct point at;
	uint64_t size, count;    /* whole elements of the dtype */
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
	struct point *points;    /* the sweep's collectives, checked before the start */
	uint32_t n_points;
	struct rank_fig first;   /* the first collective (warm-up or not): its plan is --plan's */
	uint64_t first_size;
	bool first_done;
	/* when its barrier let this rank go, on CLOCK_MONOTONIC (rank 0's:
	 * every rank had ended it) */
	uint64_t first_end_mono_ms;
	uint64_t link_next;      /* when the port's link is read next */
};

extern volatile sig_atomic_t coll_stop;

void coll_usage(FILE *o);
/* 0, or -1 after a one-line message. */
int coll_parse(int argc, char **argv, struct copts *o);
/* The conf, the rank's place in it, and every collective the run will
 * run checked (et_coll_check, before any rank starts); 0 or -1 after a
 * message. */
int coll_setup(struct coll *c);

int coll_open_port(struct coll *c);
void coll_close(struct coll *c);
void coll_free_trace(struct coll *c);
/* Every rank there, its port up: 0, or -1 after a message. */
int coll_start(struct coll *c);
/* One collective of the sweep: warm-up and timed iterations (last: this
 * rank leaves after them); 0, or -1 after a message. */
int coll_run_point(struct coll *c, const struct point *at, bool last, struct row *out);
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
/* nccl-tests' closing lines: wrong elements, the mean bus bandwidth. */
void coll_print_end(const struct coll *c);
void coll_print_trace(const struct coll *c);
int coll_write_json(const struct coll *c, const char *file);

#endif /* ET_COLL_APP_H */
