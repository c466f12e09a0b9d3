/* SPDX-License-Identifier: BSD-3-Clause
 * A whole fabric in one process: the switches of et_net and one host NIC
 * per host, every link a pair of rings, every packet an mbuf crossing them;
 * a collective schedule (et_coll) run on the hosts through a load-balancing
 * policy (et_lb).
 *
 * Clocks.  virtual: one lcore polls every node in a fixed order; when a
 * whole pass does no work, the clock jumps to the earliest pending
 * departure, arrival, timer or start.  Nothing reads the wall clock, so one
 * seed gives one result.  real: the TSC.
 */
#ifndef ET_FABRIC_H
#define ET_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "coll/et_coll.h"
#include "lb/et_lb.h"
#include "et_net.h"
#include "host/et_nic.h"
#include "transport/et_qp_priv.h"

struct fab_fail {
	uint8_t tier;     /* ET_TIER_TOR: ToR uplink; ET_TIER_AGG: agg uplink */
	uint32_t sw;      /* index within the tier */
	uint32_t uplink;
	uint64_t at_ns;   /* after the collective starts */
};

#define FAB_MAX_FAILS 16

struct fab_params {
	struct et_topo t;
	struct et_net_params net;
	struct et_link_model host_link;  /* each host NIC's egress */
	struct et_qp_attr qp;            /* mtu, rto, retries, DCTCP */
	struct et_lb_conf lb;
	enum et_coll_kind kind;
	enum et_coll_algo algo;
	uint64_t size;
	uint64_t chunk;                  /* dbt pipelining unit, 0: default */
	uint64_t seed;
	bool verify;                     /* real data, reduced and checked */
	bool real_clock;
	uint64_t time_limit_ns;          /* give up after this much (virtual) time */
	uint32_t n_fails;
	struct fab_fail fails[FAB_MAX_FAILS];
	char fails_from[320];       /* where they were given, for errors: "--fail" */
	const char *pcap_dir;
	uint32_t mbufs;                  /* the frame pool; 0: sized by hosts */
};

void fab_params_default(struct fab_params *p);
/* The frame pool a fabric of p needs: mbufs, and bytes of EAL memory. */
uint32_t fab_pool_mbufs(const struct fab_params *p);
uint64_t fab_pool_bytes(const struct fab_params *p);
/* One bandwidth-delay product of the fabric's longest path: the DCTCP
 * window a QP starts with unless the conf says otherwise. */
uint32_t fab_bdp_bytes(const struct fab_params *p);

/* One QP pair carrying bytes [off, off + len) of one send of a step. */
struct fab_sub {
	uint32_t src, dst;
	uint32_t send;        /* index into the source rank's sends */
	uint64_t off, len;
	uint16_t path;
	uint64_t start_ns;
	int insert_pos;
	struct et_qp *sq, *rq;
	struct et_reps *reps;     /* REPS: the connection's entropy state */
	bool posted;
	uint32_t next_free;
};

struct fab_host {
	struct et_nic nic;
	struct et_mr_table mrs;
	uint32_t data_key, staging_key;
	struct et_cq scq, rcq;
	uint8_t *data, *staging;
	struct et_lb_host lb;
	uint32_t step;            /* the step running; nsteps: done */
	uint32_t sends_left;      /* subflows of the step not yet complete */
	uint64_t *recv_left;      /* per receive of the schedule: bytes to come */
	uint32_t *waiting;        /* subflows planned, not yet posted */
	uint32_t n_waiting;
	/* Ethereal's interceptor: the flows of a step wait for the batch */
	uint64_t batch_at;        /* when the open batch closes; 0: none */
	uint32_t qps, qps_max;
	uint64_t done_ns;
};

struct fab_stats {
	uint64_t retransmits, timeouts, naks, cnps;
	uint64_t drops, ecn_marks, pause_frames, packet_hops;
	uint64_t rerouted, paths_marked_bad;
	uint64_t qps_created;
	uint32_t max_qps_per_host;
	uint64_t qps_hist[8];     /* hosts by max QPs at once: <=1,2,4..,>64 */
	uint64_t rx_bad, rx_unknown_qpn;
	uint64_t alloc_fail;      /* frames a QP could not build: the pool was empty */
	uint64_t reps_frozen, reps_explored, reps_recycled;
	uint64_t corrupted, duplicated;  /* by the link fault model */
	uint64_t fault_drops;            /* lost by the link fault model: loss, bursts, flaps */
	uint64_t frames_made, frames_accounted;  /* equal once the links drained */
	uint32_t mbufs_in_use;                   /* 0 once the links drained */
};

struct fabric {
	struct fab_params p;
	struct et_net net;
	struct rte_mempool *pool;
	uint32_t n_hosts;
	struct fab_host *h;
	struct et_coll_sched sched;
	struct fab_sub *subs;
	uint32_t n_subs, free_sub;
	uint64_t now;
	uint64_t passes;
	uint32_t hosts_done;
	bool failed;              /* a QP ended in error */
	char error[256];
	struct fab_stats st;
	struct et_capture **caps;
	uint32_t n_caps;
};

/* Build the fabric and the schedule; -1 with f->error set. */
int fab_build(struct fabric *f, const struct fab_params *p);
/* Run the collective to its end; 0, or -1 with f->error set. */
int fab_run(struct fabric *f);
/* Every rank holds what it should (verify mode); the count of bad ranks.
 * *checked: the bytes compared. */
uint32_t fab_verify(const struct fabric *f, uint64_t *checked);
/* Counters of every switch, NIC and QP, summed into f->st. */
void fab_collect(struct fabric *f);
/* The completion time of the collective. */
uint64_t fab_cct_ns(const struct fabric *f);
/* The ideal: bytes a host must send over its link, plus one path's latency. */
uint64_t fab_lower_bound_ns(const struct fabric *f);
void fab_free(struct fabric *f);

#endif /* ET_FABRIC_H */
