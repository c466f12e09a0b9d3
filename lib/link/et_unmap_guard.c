/* SPDX-License-Identifier: BSD-3-Clause */
#include <pthread.h>
#include <sched.h>

#include "link/et_unmap_guard.h"

_Atomic uint32_t et_unmap_readers[2];
_Atomic uint32_t et_unmap_phase;

void
et_unmap_guard_wait(void)
{
	/* one wait at a time: two flips would mix the phases' bursts */
	static pthread_mutex_t one = PTHREAD_MUTEX_INITIALIZER;
	uint32_t old;

	pthread_mutex_lock(&one);
	old = atomic_fetch_add_explicit(&et_unmap_phase, 1, memory_order_seq_cst) & 1;
	atomic_thread_fence(memory_order_seq_cst);
	/* a burst is microseconds, unless its thread lost its core: give the
	 * core away rather than spin against it (2 cores, many processes) */
	while (atomic_load_explicit(&et_unmap_readers[old], memory_order_acquire) != 0)
		sched_yield();
	pthread_mutex_unlock(&one);
}
