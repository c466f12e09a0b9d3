/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include <numa.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "host/et_nic.h"
#include "host/et_worker.h"

int
et_worker_main(void *arg)
{
	struct et_worker *w = arg;
	uint64_t last = w->clock();
	uint32_t work = 0, i;

	while (atomic_load_explicit(w->run, memory_order_relaxed)) {
		uint64_t now = w->clock();

		if (now - last > w->max_gap_ns)
			w->max_gap_ns = now - last;
		if (work)
			w->busy_ns += now - last;
		last = now;
		work = 0;
		for (i = 0; i < w->n_hosts; i++)
			work += et_nic_poll(w->hosts[i], now);
		w->polls++;
		w->idle_polls += work == 0;
	}
	return 0;
}

int
et_lcore_numa_node(unsigned int lcore)
{
	unsigned int socket = rte_lcore_to_socket_id(lcore);

	if (socket != (unsigned int)SOCKET_ID_ANY)
		return (int)socket;
	if (numa_available() < 0)
		return 0;
	return numa_node_of_cpu((int)rte_lcore_to_cpu_id((int)lcore));
}

struct rte_mempool *
et_pool_for_lcore(unsigned int lcore, unsigned int n_mbufs)
{
	int node = et_lcore_numa_node(lcore);
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_mempool *mp;

	snprintf(name, sizeof(name), "et_pool_n%d", node);
	mp = rte_mempool_lookup(name);
	if (mp)
		return mp;
	return rte_pktmbuf_pool_create(name, n_mbufs, 256, 0,
				       RTE_PKTMBUF_HEADROOM + 4096 + 256, node);
}

uint64_t
et_tsc_ns(void)
{
	static double ns_per_tsc;

	if (ns_per_tsc == 0)
		ns_per_tsc = 1e9 / (double)rte_get_tsc_hz();
	return (uint64_t)((double)rte_rdtsc() * ns_per_tsc);
}
