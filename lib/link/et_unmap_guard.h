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

/* Bursts now in flight, in every thread, by the phase they began in; a
 * wait flips the phase and waits for the old one's to end, so bursts
 * that begin meanwhile cannot keep it waiting (a switch's datapath is in a
 * burst nearly all the time: a count of all of them is seldom zero). */
extern _Atomic uint32_t et_unmap_readers[2];
extern _Atomic uint32_t et_unmap_phase;

/* The phase's count, seq_cst: seen by a wait before the PMD reads its
 * "connected" flag, which the interrupt thread cleared before it unmaps;
 * a burst that reads the phase a wait flipped comes after that clear
 * (acquire).  Returns what et_unmap_guard_leave takes. */
static inline uint32_t
et_unmap_guard_enter(void)
{
	uint32_t ph = atomic_load_explicit(&et_unmap_phase, memory_order_acquire) & 1;

	atomic_fetch_add_explicit(&et_unmap_readers[ph], 1, memory_order_seq_cst);
	return ph;
}

static inline void
et_unmap_guard_leave(uint32_t ph)
{
	atomic_fetch_sub_explicit(&et_unmap_readers[ph], 1, memory_order_release);
}

/* Returns when every burst on a shared-memory port that was in flight when
 * it was called has ended.  Never call it from inside one (between enter
 * and leave): it would wait for itself. */
void et_unmap_guard_wait(void);

#endif
