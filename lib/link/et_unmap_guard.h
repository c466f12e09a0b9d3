/* SPDX-License-Identifier: BSD-3-Clause
 * Bursts on shared-memory ports (memif) against the unmapping of their
 * rings.  DPDK 22.11's memif, when its peer leaves, unmaps the rings on
 * EAL's interrupt thread while the datapath may be inside a burst on them:
 * the burst checks "connected" first, but a thread descheduled after that
 * check reads unmapped memory (a switch died of it under load, each time a
 * provider process ended).  A burst on such a port is counted here, and a
 * program that links et_unmap_interpose.c makes every munmap wait until no
 * burst is in flight; a burst begun after that sees the port disconnected.
 */
#ifndef ET_UNMAP_GUARD_H
#define ET_UNMAP_GUARD_H

#include <stdatomic.h>
#include <stdint.h>

/* bursts on shared-memory ports now in flight, in every thread */
extern _Atomic uint32_t et_unmap_readers;

/* seq_cst: the count must be seen before the PMD reads its "connected"
 * flag, which the interrupt thread clears before it unmaps */
static inline void
et_unmap_guard_enter(void)
{
	atomic_fetch_add_explicit(&et_unmap_readers, 1, memory_order_seq_cst);
}

static inline void
et_unmap_guard_leave(void)
{
	atomic_fetch_sub_explicit(&et_unmap_readers, 1, memory_order_release);
}

/* Returns when no burst on a shared-memory port is in flight.  Never call
 * it from inside one (between enter and leave): it would wait for itself. */
void et_unmap_guard_wait(void);

#endif
