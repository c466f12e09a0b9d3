/* SPDX-License-Identifier: BSD-3-Clause
 * How every program starts DPDK and makes its frame pool.
 *
 * The command line is [EAL args --] program args.  Without "--", a
 * program that has defaults runs on them, needing nothing of the machine:
 * hugepages when enough are free, else ordinary memory
 * (--no-huge --no-shconf -m MB; --in-memory is refused with --no-huge in
 * DPDK 22.11), no PCI probing, DPDK's own logging errors-only (the
 * program's messages at info).  EAL arguments that do not say where memory
 * comes from (say "-l 0-1 --") get the defaults' memory all the same.  A
 * program without defaults hands DPDK the whole line, as DPDK's own
 * examples do.
 */
#ifndef ET_APP_EAL_H
#define ET_APP_EAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

struct et_app_eal {
	const char *lcores;  /* -l of the defaults */
	uint64_t mem_mb;     /* -m without hugepages */
	uint64_t huge_mb;    /* use hugepages when this many MB of them are free */
	bool telemetry;      /* false: --no-telemetry */
};

/* Where the program's own arguments start: the index of "--", or 0 when
 * there is none (then they are the whole line). */
int et_app_args_start(int argc, char **argv);

/* Start the EAL (above) on defaults d, or NULL when the program has none.
 * Returns the index of the program's own
 * arguments, argv[i] being then the program's name (what getopt skips);
 * -1 after "PROGRAM: cannot initialise DPDK: why". */
int et_app_eal_init(const struct et_app_eal *d, int argc, char **argv);

/* rte_eal_cleanup(), then the EAL's runtime folder (/var/run/dpdk/PREFIX
 * for root), which DPDK 22.11 leaves behind with its files (a few MB, on
 * what is RAM on a stock host), when this process made it for itself: a
 * primary with a shared config, whose lock no other process could share.
 * Under --no-shconf the folder (possibly another process's of the same
 * prefix) stays. */
void et_app_eal_cleanup(void);

/* Room for a frame of a 4 KB MTU with its headers, after the headroom. */
#define ET_APP_MBUF_4K_FRAME (RTE_PKTMBUF_HEADROOM + 4096 + 256)

/* n mbufs of data_room bytes on this lcore's socket, a 256-mbuf cache per
 * lcore; NULL (rte_errno) when there is no memory. */
struct rte_mempool *et_app_pool(const char *name, unsigned int n, uint16_t data_room);

#endif /* ET_APP_EAL_H */
