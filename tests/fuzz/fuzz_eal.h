/* SPDX-License-Identifier: BSD-3-Clause
 * DPDK for a fuzz target: one lcore, ordinary memory, no devices, quiet.
 */
#ifndef FUZZ_EAL_H
#define FUZZ_EAL_H

#include <stdlib.h>

#include <rte_eal.h>

static inline void
fuzz_eal_init(const char *mem_mb)
{
	char *eal[] = {"fuzz", "--no-huge", "--no-shconf", "--no-pci", "-m", (char *)mem_mb,
		       "-l", "0", "--no-telemetry", "--log-level=error", NULL};

	if (rte_eal_init(10, eal) < 0)
		abort();
}

#endif
