/* SPDX-License-Identifier: BSD-3-Clause
 * munmap for the programs that run a datapath on memif ports (see
 * et_unmap_guard.h): a program's own definition comes first when a shared
 * library (the memif PMD) looks munmap up, so every munmap of the process
 * waits until no burst on such a port is in flight, then is the next
 * definition's (libc's, or a sanitizer's).  Linked into the programs only,
 * never into a library: a library must not change munmap for its host
 * program.  A wait costs one atomic load when no burst is in flight.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "link/et_unmap_guard.h"

typedef int (*munmap_fn)(void *, size_t);

static munmap_fn next_munmap;

/* found once, before main: dlsym inside munmap could recurse */
__attribute__((constructor)) static void
find_next_munmap(void)
{
	next_munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
}

int
munmap(void *addr, size_t len)
{
	et_unmap_guard_wait();
	if (next_munmap == NULL) /* before the constructor, or none: the kernel's */
		return (int)syscall(SYS_munmap, addr, len);
	return next_munmap(addr, len);
}
