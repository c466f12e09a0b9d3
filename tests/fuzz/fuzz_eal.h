/* SPDX-License-Identifier: BSD-3-Clause
 * DPDK for a fuzz target: one lcore, ordinary memory, no devices, quiet.
 */
#ifndef FUZZ_EAL_H
#define FUZZ_EAL_H

#include <stdlib.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

static inline void
fuzz_eal_init(const char *mem_mb)
{
	char *eal[] = {"fuzz", "--no-huge", "--no-shconf", "--no-pci", "-m", (char *)mem_mb,
		       "-l", "0", "--no-telemetry", "--log-level=error", NULL};

	if (rte_eal_init(10, eal) < 0)
		abort();
}

/* EAL up with mem_mb of memory and the targets' pool of frames up to
 * 4 KB of payload: 4095 mbufs (a mempool's best size is 2^n - 1). */
static inline struct rte_mempool *
fuzz_eal_pool(const char *mem_mb)
{
	struct rte_mempool *pool;

	fuzz_eal_init(mem_mb);
	pool = rte_pktmbuf_pool_create("fz", 4095, 0, 0, RTE_PKTMBUF_HEADROOM + 4096 + 256, 0);
	if (pool == NULL)
		abort();
	return pool;
}

#endif
