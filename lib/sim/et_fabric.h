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
#include "host/et_runtime.h"
#include "link/et_capture.h"
#include "lb/et_lb.h"
#include "et_net.h"
#include "host/et_nic.h"
#include "transport/et_qp.h"

struct et_fabric_fail {
	uint8_t tier;     /* ET_TIER_TOR: ToR uplink; ET_TIER_AGG: agg uplink */
	uint32_t sw;      /* index within the tier */
	uint32_t uplink;
	uint64_t at_ns;   /* after the collective starts */
};

#define ET_FABRIC_MAX_FAILS 16

struct et_fabric_params {
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
	struct et_fabric_fail fails[ET_FABRIC_MAX_FAILS];
	char fails_from[320];       /* where they were given, for errors: "--fail" */
	const char *pcap_dir;
	uint32_t mbufs;                  /* the frame pool; 0: sized by hosts */
};

void et_fabric_params_default(struct et_fabric_params *p);
/* The frame pool a fabric of p needs: mbufs, and bytes of EAL memory. */
uint32_t et_fabric_pool_mbufs(const struct et_fabric_params *p);
uint64_t et_fabric_pool_bytes(const struct et_fabric_params *p);
/* One bandwidth-delay product of the fabric's longest path: the DCTCP
 * window a QP starts with unless the conf says otherwise. */
uint32_t et_fabric_bdp_bytes(const struct et_fabric_params *p);

/* One host: its NIC and the rank of the collective it runs. */
struct et_fabric_host {
	struct et_nic nic;
	struct et_rt_host rt;
};

struct et_fabric_stats {
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

struct et_fabric {
	struct et_fabric_params p;
	struct et_net net;
	struct rte_mempool *pool;
	uint32_t n_hosts;
	struct et_fabric_host *h;
	struct et_coll_sched sched;
	struct et_rt_conf rc;     /* what every host's runtime shares */
	uint8_t *light_buf;       /* memory-light: the one region of every host */
	uint64_t now;
	uint64_t passes;
	uint32_t hosts_done;
	bool failed;              /* a QP ended in error */
	char error[256];
	struct et_fabric_stats st;
	struct et_capture **caps;
	uint32_t n_caps;
};

/* Build the fabric and the schedule; 0, or a negative errno with f->error
 * saying why. */
int et_fabric_build(struct et_fabric *f, const struct et_fabric_params *p);
/* Run the collective to its end; 0, or -EIO with f->error saying why. */
int et_fabric_run(struct et_fabric *f);
/* Every rank holds what it should (verify mode); the count of bad ranks.
 * *checked: the bytes compared. */
uint32_t et_fabric_verify(const struct et_fabric *f, uint64_t *checked);
/* Counters of every switch, NIC and QP, summed into f->st. */
void et_fabric_collect(struct et_fabric *f);
/* The completion time of the collective. */
uint64_t et_fabric_cct_ns(const struct et_fabric *f);
/* The ideal: bytes a host must send over its link, plus one path's latency. */
uint64_t et_fabric_lower_bound_ns(const struct et_fabric *f);
void et_fabric_free(struct et_fabric *f);

#endif /* ET_FABRIC_H */
