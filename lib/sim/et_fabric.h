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

#include <rte_spinlock.h>

#include "base/et_counters.h"
#include "coll/et_coll.h"
#include "host/et_runtime.h"
#include "link/et_capture.h"
#include "lb/et_lb.h"
#include "sim/et_net.h"
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
	bool acks_first;                 /* NICs: ACK/NAK/CNP ahead of data, unpaused */
	struct et_lb_conf lb;
	enum et_coll_kind kind;
	enum et_coll_algo algo;
	uint64_t size;                   /* bytes per rank: whole elements of dtype count */
	enum et_coll_dtype dtype;
	enum et_coll_op op;
	uint64_t chunk;                  /* dbt pipelining unit, 0: default */
	uint64_t seed;
	bool verify;                     /* real data, reduced and checked */
	bool data_by_read;               /* [transport] data = read: receivers READ */
	/* [transport] reconnect-ms: how long a connection whose QPs failed
	 * asks for new ones (other paths) before its peer is unreachable;
	 * for programs that connect over the wire (the libfabric provider) */
	uint64_t reconnect_ns;
	bool real_clock;
	uint64_t time_limit_ns;          /* give up after this much (virtual) time */
	uint32_t lanes;                  /* virtual time on at most this many lcores (0: all) */
	uint32_t n_fails;
	struct et_fabric_fail fails[ET_FABRIC_MAX_FAILS];
	char fails_from[320];       /* where they were given, for errors: "--fail" */
	const char *pcap_dir;
	uint32_t mbufs;                  /* the frame pool; 0: sized by hosts */
	et_rt_plan_fn on_plan;           /* each host's subflows as planned; NULL: none */
	void *plan_ctx;
	bool hosts_only;                 /* no collective of its own: a driver runs the
					  * hosts (sim/et_dag); kind, algo, size unused */
};

void et_fabric_params_default(struct et_fabric_params *p);
/* The fewest mbufs a fixed frame pool ([run] mbufs) may have: the pool's
 * per-lcore cache must fit in it one and a half times over. */
#define ET_FABRIC_MIN_MBUFS 384u
/* The frame pool a fabric of p needs: mbufs, and bytes of EAL memory. */
uint32_t et_fabric_pool_mbufs(const struct et_fabric_params *p);
uint64_t et_fabric_pool_bytes(const struct et_fabric_params *p);
/* The least memory a run of p takes: its payload buffers (*payload: one
 * region shared by every host, or each host's own with verify) and the
 * frame pool as it starts.  Control path: builds the schedule to size it. */
uint64_t et_fabric_mem_bytes(const struct et_fabric_params *p, uint64_t *payload);
/* One bandwidth-delay product of the fabric's longest path: the DCTCP
 * window a QP starts with unless the conf says otherwise. */
uint32_t et_fabric_bdp_bytes(const struct et_fabric_params *p);
/* The round trip of that path without queues (a full frame out, its ACK
 * back), and the longest link latency whose round trip stays below the
 * QPs' RTO (beyond it every packet times out); 0 if none does. */
uint64_t et_fabric_base_rtt_ns(const struct et_fabric_params *p);
uint64_t et_fabric_max_latency_ns(const struct et_fabric_params *p);
/* What every host's runtime of a run of p shares (a window of one round
 * trip where p gives none): for the fabric, and for a process per host. */
void et_fabric_rt_conf(const struct et_fabric_params *p, struct et_rt_conf *rc);

/* One host: its NIC and the rank of the collective it runs. */
struct et_fabric_host {
	struct et_nic nic;
	struct et_rt_host rt;
};

/* What a run reports (JSON, tables), summed over every switch port, NIC,
 * QP and policy of the fabric; declared once. */
/* QPs are counted as the paper counts them: per host, the QPs its NIC holds
 * at once, both ends of the QP pairs (requester of its own subflows,
 * responder of its peers'); each host's high-water mark, then their
 * distribution over the hosts.  A workload's percentiles are the largest
 * of its collectives'. */
#define ET_FABRIC_QPS_BUCKETS 16
#define ET_FABRIC_COUNTERS(X, A) \
	X(max_qps_per_host, MAX, "most QPs a host's NIC held at once, requester and responder ends") \
	X(qps_per_host_p50, MAX, "the median host's most QPs at once") \
	X(qps_per_host_p99, MAX, "the 99th-percentile host's most QPs at once") \
	A(qps_per_host_hist, INFO, ET_FABRIC_QPS_BUCKETS, et_fabric_qps_bucket, "qps_per_host", \
	  "hosts by their most QPs at once: <=1, 2, <=4, .., <=16384, more") \
	X(qps_created, INFO, "QP pairs made") \
	X(retransmits, INFO, "packets sent again") \
	X(timeouts, INFO, "retransmission timer expiries") \
	X(rx_dup, INFO, "data packets a responder had already: sent again though they " \
	  "arrived (their ACK lost or late), or doubled by a link") \
	X(naks, INFO, "NAKs received") \
	X(cnps, INFO, "CNPs received") \
	X(drops, INFO, "frames lost anywhere: switches, links, NICs (bad frames too)") \
	X(ecn_marks, INFO, "frames marked CE by a switch") \
	X(pause_frames, INFO, "PAUSE frames sent by switches") \
	X(packet_hops, INFO, "frames put on a link") \
	X(rerouted, INFO, "QPs moved to another path") \
	X(paths_marked_bad, INFO, "paths marked bad after a timeout") \
	X(alloc_fail, INFO, "frames a QP could not build: the pool was empty") \
	X(reps_frozen, INFO, "REPS freezes") \
	X(reps_explored, INFO, "REPS entropies explored") \
	X(reps_recycled, INFO, "REPS entropies recycled") \
	X(corrupted, INFO, "frames corrupted by the link fault model") \
	X(duplicated, INFO, "frames duplicated by the link fault model") \
	X(fault_drops, INFO, "frames lost by the link fault model: loss, bursts, flaps") \
	X(rx_bad, INFO, "frames an endpoint refused (bad ICRC, ...)") \
	X(rx_unknown_qpn, INFO, "frames for a QP that does not exist") \
	X(frames_made, INFO, "frames made: equal to frames_accounted once the links drained " \
	  "(a failed run is not drained: the rest are still queued or on a link)") \
	X(frames_accounted, INFO, "frames received or dropped") \
	X(mbufs_in_use, INFO, "mbufs still in use once the links drained: 0 (a failed run: " \
	  "those its frames hold)")

struct et_fabric_stats {
	ET_FABRIC_COUNTERS(ET_CTR_FIELD, ET_CTR_ARRAY_FIELD)
};
extern const struct et_ctr_table et_fabric_ctrs;
/* "1", "2", "4", .., "16384", "more": bucket i holds 2^(i-1) + 1 .. 2^i */
const char *et_fabric_qps_bucket(int i);
/* Into s: the hosts' most QPs at once, per_host[0..n) (sorted here): their
 * maximum, median, 99th percentile (nearest rank) and histogram. */
void et_fabric_qps_summary(struct et_fabric_stats *s, uint32_t *per_host, uint32_t n);

/* What runs on the hosts instead of the fabric's one collective (a
 * trace's DAG, sim/et_dag): a host's turn, its NIC included, the work done;
 * and its next event.  The driver counts f->hosts_done and sets f->failed. */
struct et_fabric_driver {
	uint32_t (*poll)(void *ctx, uint32_t host, uint64_t now);
	uint64_t (*next_event)(void *ctx, uint32_t host, uint64_t now);
};

struct et_agenda;
struct et_far;

struct et_fabric {
	struct et_fabric_params p;
	const struct et_fabric_driver *drv;  /* NULL: the collective of p */
	void *drv_ctx;
	struct et_agenda *agenda; /* while it runs in virtual time: who runs next */
	struct et_far *far;       /* far ends of subflows: each pair's QPNs, the lanes' requests */
	struct et_net net;
	struct rte_mempool *pool;
	uint32_t pool_mbufs;      /* its mbufs once collected: it grows when it runs dry */
	uint64_t frames_held;     /* a failed run, collected: frames still queued or on a
				   * link (made = accounted + held) */
	uint32_t n_hosts;
	struct et_fabric_host *h;
	struct et_coll_sched sched;
	struct et_rt_conf rc;     /* what every host's runtime shares */
	uint8_t *light_buf;       /* memory-light: the one region of every host */
	uint64_t now;
	uint64_t passes;          /* the event loop's, and its nodes' turns in them */
	uint64_t turns;
	/* virtual time: each lane's wall time in windows and at the barriers,
	 * and its turns (sim/et_lanes.c; a lane per lcore, 8 told at most) */
	struct et_lane_speed {
		double busy_s, wait_s;
		uint64_t turns;
	} lane_speed[8];
	uint32_t n_lanes;
	uint32_t hosts_done;      /* lanes add to it atomically */
	bool failed;              /* a QP ended in error */
	rte_spinlock_t error_lock; /* lanes may fail at once: the first says why */
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
