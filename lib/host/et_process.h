/* SPDX-License-Identifier: BSD-3-Clause
 * The process runtime: a program that is one host of a fabric on a real
 * port, whichever front ends it loads (the libfabric provider, prov/; the
 * verbs libraries, verbs/), has one of these: DPDK's EAL started once,
 * with a file prefix of its own; its slot (which host of the conf's
 * topology it is); the port and the NIC model on it, with ARP; the load
 * balancer's host state; the RDMA CM agent on QP 1; one lock; and the
 * progress every front end drives, with a keeper thread for a consumer
 * that is away.
 *
 * The slot rule.  N processes on one machine started with the same
 * environment (fabtests' server and client, mpirun's ranks) each need a
 * port and an address of their own.  Slot k is host k of the conf's
 * topology (et_topo_host_ip), and its port is the device template with
 * every %d replaced by k (a memif socket of one ethereal-switch per slot,
 * say).  A process takes:
 *   1. the conf's slot, when set;
 *   2. else the host whose address the consumer names as its source;
 *   3. else its local rank under a launcher (OMPI_COMM_WORLD_LOCAL_RANK,
 *      MPI_LOCALRANKID, SLURM_LOCALID);
 *   4. else the first slot whose lock is free.
 * Whichever way, it holds the slot's lock (a file in the run folder,
 * named by the device template) until it exits, and a slot held by
 * another process is refused.
 *
 * Front ends add their work to progress (et_process_hook), take the
 * lock around every call of theirs that touches the NIC, and say when a
 * consumer of theirs waits for an event (et_process_waiters): the keeper
 * then keeps the NIC going at once, not only after a consumer's 10 ms
 * away.  Control path, but et_process_progress, which is the fast path.
 */
#ifndef ET_PROCESS_H
#define ET_PROCESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "host/et_arp.h"
#include "host/et_nic.h"
#include "host/et_runtime.h"
#include "lb/et_lb.h"
#include "link/et_port.h"

/* A consumer is away when it has not progressed for this long: the
 * keeper runs progress for it, as a NIC answers its peers whatever its
 * host does (a consumer away for longer than the peers' retries would
 * look dead; one away for less than a round trip would stall them). */
#define ET_PROCESS_KEEPER_AWAY_NS 1000000ull
/* et_process_mac_of's wait for an ARP answer */
#define ET_PROCESS_ARP_WAIT_NS 1000000000ull
/* An endpoint going away keeps answering until nothing has come for
 * this long (its peers' last messages may be on their way), at most
 * ET_PROCESS_LINGER_MAX_NS. */
#define ET_PROCESS_LINGER_QUIET_NS 20000000ull
#define ET_PROCESS_LINGER_MAX_NS 2000000000ull
#define ET_PROCESS_MAX_HOOKS 4

/* What the first front end says the process is; the others find it so. */
struct et_process_conf {
	const char *program;   /* EAL's argv[0] and the lock files' prefix */
	const char *prefix;    /* EAL's --file-prefix, the pid after it */
	const char *eal;       /* EAL arguments; NULL: ET_PROCESS_EAL */
	const char *dev;       /* the port's DPDK device, %d: the slot; "loop": a
				* ring to itself (endpoints of one process) */
	const char *mac;       /* over the device's, %d: the slot; NULL: the device's */
	const char *ip;        /* the host's IPv4 address over the slot's (a machine
				* beside a Linux RoCE host, not a host of the
				* topology); NULL: the slot's */
	const char *rundir;    /* the slots' locks; NULL: /tmp */
	const char *fault;     /* faults on what the port sends
				* (et_link_faults_parse's spec); NULL: none */
	int slot;              /* -1: by the rule */
	bool yield;            /* a read that finds nothing gives the core away */
	struct et_rt_conf rc;  /* the topology, the QPs' attributes, the policy, the seed */
	uint64_t reconnect_ns; /* [transport] reconnect-ms: how long a connection whose
				* QPs failed asks for new ones before its peer is
				* unreachable (the provider's) */
};

/* --single-file-segments: the memory in one file, which a memif port with
 * zero-copy=yes shares with its server (DPDK 22.11's memif refuses
 * zero-copy over many files) */
#define ET_PROCESS_EAL \
	"--no-huge --no-shconf --single-file-segments --no-pci -m 512 --no-telemetry " \
	"--log-level=*:error --log-level=ethereal.*:warning"

/* Work a front end adds to progress: what it did (0: nothing). */
typedef uint32_t (*et_process_hook_fn)(void *ctx, uint64_t now);

struct et_process {
	pthread_mutex_t lock;
	bool configured;
	struct et_process_conf c;
	char *strs;            /* c's strings, owned */
	int slot;              /* -1: not chosen yet */
	int slot_fd;           /* its lock */
	uint32_t ip;           /* host order */
	bool eal_up, nic_up;
	char why[640];         /* why the port could not be opened, once */
	struct rte_mempool *mp;
	struct et_port port;
	struct et_nic nic;
	struct et_arp arp;
	struct rte_ether_addr mac;
	struct et_lb_host lb;
	uint64_t psn_rng;      /* first PSNs: a stream of their own, not the policy's */
	struct {
		et_process_hook_fn fn;
		void *ctx;
	} hooks[ET_PROCESS_MAX_HOOKS];
	uint32_t n_hooks;
	struct et_rdmacm *rdmacm; /* the CM agent on QP 1, made on first use */
	uint64_t progress_calls;
	uint64_t last_progress_ns; /* when progress last ran (the keeper reads it) */
	uint32_t last_work;        /* what the last progress did (0: idle) */
	uint32_t progressing;      /* inside et_process_progress (its hooks too) */
	uint32_t waiters;          /* consumers waiting for an event: keep it going */
	uint32_t users;        /* front ends that opened it */
	pthread_t keeper;
	bool keeper_up;
	volatile int keeper_stop;
	uint64_t keeper_runs;
	struct et_qp_stats qp_gone; /* the counters of every QP destroyed */
	uint64_t qps_made;
	uint32_t own_ip;           /* the conf's ip, parsed; 0: none */
};

/* The process's one runtime. */
extern struct et_process et_process;

void et_process_lock(void);
void et_process_unlock(void);
/* The TSC clock in ns once the EAL is up; 0 before. */
uint64_t et_process_now(void);

/* The conf, from the first front end (its strings copied); a later call
 * changes nothing.  0 or -ENOMEM. */
int et_process_configure(const struct et_process_conf *c);
/* The slot, by the rule (want_ip: the source address the consumer names;
 * 0 none).  0, or -ENODATA with why (not an address of the fabric, a slot
 * held by another process, no slot free). */
int et_process_slot_choose(uint32_t want_ip, char *why, size_t len);
/* The topology's host of an IPv4 address (host order); UINT32_MAX if none. */
uint32_t et_process_host_of_ip(uint32_t ip);
/* EAL, port, NIC, ARP, the policy and the keeper (once; each front end
 * opens it, and it stays open until the last one closes).  0, or -ENODEV
 * with et_process.why.  Locked. */
int et_process_open(void);
/* The last front end's: the keeper stopped (the lock is let go
 * meanwhile), the CM agent, NIC and port closed.  Locked. */
void et_process_close(void);

/* EAL's files in dir (a primary's runtime folder: its config, memory
 * tables, sockets) and dir itself, which DPDK 22.11 leaves behind (a few
 * MB of /run each, RAM on a stock host; empty with --no-shconf, there
 * all the same); anything else keeps the folder.
 * A running process may remove its own: what it mapped stays mapped. */
void et_eal_runtime_dir_remove(const char *dir);

/* Front ends' progress, run by every et_process_progress.  0 or -ENOSPC. */
int et_process_hook(et_process_hook_fn fn, void *ctx);
void et_process_unhook(et_process_hook_fn fn, void *ctx);
/* The NIC (RX, timers, TX), the CM agent's timers, and every hook; its
 * work (0: nothing now).  Locked. */
uint32_t et_process_progress(void);
/* Progress until nothing has arrived for ET_PROCESS_LINGER_QUIET_NS.
 * Locked. */
void et_process_linger(void);
/* A read found nothing: give the core away when the conf says yield. */
void et_process_idle(void);
/* A consumer starts (+1) or stops (-1) waiting for an event (a completion
 * channel, an event queue): the keeper keeps the NIC going meanwhile. */
void et_process_waiters(int d);

/* The CM agent on the NIC's QP 1 (one per process, every front end's),
 * made on first use.  NULL: no memory, or the port is not open. */
struct et_rdmacm *et_process_rdmacm(void);
/* Whoever holds a listener or an id of that agent: the ctx handed to it
 * (et_rdmacm_listen, _connect, _id_set_ctx) points at one of these, the
 * first member of the holder's own struct, and progress hands every event
 * to its holder (a request to its listener's).  An event whose ctx is
 * NULL is nobody's: its id is released. */
struct et_rdmacm_event;
struct et_process_cm_holder {
	void (*on_event)(struct et_process_cm_holder *h, const struct et_rdmacm_event *ev,
			 uint64_t now);
};

/* A first PSN for a new QP (a seeded stream of the process's own). */
uint32_t et_process_psn(void);
/* The path a new QP to peer_host starts on: the policy's plan for one
 * flow.  A per-packet policy's plan names no path (each packet draws its
 * own): a QP of it that keeps one path (one that carries SENDs in order)
 * takes one of the host's real paths.  A peer outside the topology
 * (UINT32_MAX) gets a random path ID. */
uint16_t et_process_first_path(uint32_t peer_host, bool keeps_one);
/* The MAC frames to ip go to: any (broadcast) for a host of the
 * topology, which the ToR routes by IP; else ip's on the segment (a
 * Linux RoCE host), by ARP, progressing the process for up to a second
 * for the answer, then any.  The caller holds the lock. */
void et_process_mac_of(uint32_t ip, struct rte_ether_addr *mac);
/* A QP made or destroyed: counted (a destroyed QP's counters kept). */
void et_process_qp_made(void);
void et_process_qp_gone(struct et_qp *qp);
/* Every QP's counters, the live and the destroyed. */
void et_process_qp_stats(struct et_qp_stats *st);
/* What the process's QPs met, in one line to stderr (one write: the
 * ranks of a job share it), a front end's own fields (more: ", name N"
 * each, or "") at its end: "WHO: slot N IP POLICY: qps 2, tx_pkts ...,
 * rerouted ..." (scripts/testbed reads it). */
void et_process_print_summary(const char *who, const char *more);
/* Every counter not zero, the QPs' then the NIC's, on one line to stderr
 * ("WHO: slot N: qp.tx_pkts 12 ..."): a front end's ETHEREAL_STATS=2. */
void et_process_print_counters(const char *who);

#endif /* ET_PROCESS_H */
