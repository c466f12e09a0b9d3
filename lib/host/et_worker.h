/* SPDX-License-Identifier: BSD-3-Clause
 * Poll-mode workers: each lcore runs a set of hosts (NIC models), one after
 * the other, rx -> transport -> tx, with no blocking and no system call on
 * the way; and the mbuf pool of the NUMA node an lcore sits on.
 */
#ifndef ET_WORKER_H
#define ET_WORKER_H

#include <stdatomic.h>
#include <stdint.h>

struct et_nic;
struct rte_mempool;

struct et_worker {
	struct et_nic **hosts;
	uint32_t n_hosts;
	_Atomic int *run;        /* the worker loops while *run is non-zero */
	uint64_t (*clock)(void); /* now_ns: the TSC, or a fabric's clock */
	uint64_t polls, idle_polls;
	/* the longest time between two polls: a core taken away (another
	 * process, the hypervisor) shows here, and any RTO shorter than it
	 * fires on a peer that lost nothing */
	uint64_t max_gap_ns;
	/* the time of the polls that found work: what the hosts' packets
	 * cost this core, its idle polls left out */
	uint64_t busy_ns;
};

/* rte_eal_remote_launch() entry point; arg is a struct et_worker. */
int et_worker_main(void *arg);

/* The NUMA node of an lcore: DPDK's view, or libnuma's for the CPU when
 * DPDK does not know. */
int et_lcore_numa_node(unsigned int lcore);

/* One mbuf pool per NUMA node, made on first use: room for a 4 KB-MTU frame.
 * NULL if it cannot be made. */
struct rte_mempool *et_pool_for_lcore(unsigned int lcore, unsigned int n_mbufs);

/* Nanoseconds from the TSC. */
uint64_t et_tsc_ns(void);

#endif /* ET_WORKER_H */
