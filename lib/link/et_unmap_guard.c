/* SPDX-License-Identifier: BSD-3-Clause */
#include <sched.h>

#include "link/et_unmap_guard.h"

_Atomic uint32_t et_unmap_readers;

void
et_unmap_guard_wait(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	/* a burst is microseconds, unless its thread lost its core: give the
	 * core away rather than spin against it (2 cores, many processes) */
	while (atomic_load_explicit(&et_unmap_readers, memory_order_acquire) != 0)
		sched_yield();
}
