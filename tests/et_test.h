/* SPDX-License-Identifier: BSD-3-Clause
 * Helpers shared by the cmocka tests.
 */
#ifndef ET_TEST_H
#define ET_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

/* Start DPDK the way every test does: no hugepages, no PCI, no shared
 * config (DPDK 22.11 refuses --in-memory together with --no-huge). */
static inline int
et_test_eal_init(const char *prog)
{
	char *argv[] = {(char *)prog, "--no-huge", "--no-shconf", "--no-pci",
			"-m", "1024", "-l", "0", "--no-telemetry",
			"--log-level=error", NULL};

	return rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
}

/* EAL as above and one mbuf pool with room for a 4 KB-MTU frame; NULL on
 * failure (a cmocka group setup returns -1 then). */
static inline struct rte_mempool *
et_test_eal_pool(const char *prog, unsigned int n)
{
	if (et_test_eal_init(prog) < 0)
		return NULL;
	return rte_pktmbuf_pool_create(prog, n, 0, 0, RTE_PKTMBUF_HEADROOM + 4096 + 256, 0);
}

static inline int
et_test_eal_done(struct rte_mempool *pool)
{
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

/* Deterministic PRNG for tests (xorshift64*). */
static inline uint64_t
et_test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

#endif /* ET_TEST_H */
