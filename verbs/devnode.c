/* SPDX-License-Identifier: BSD-3-Clause
 * A device node for programs that check one before they use a device.
 *
 * UCX's uct_ib (uct_ib_device_is_accessible) skips an ibv_device unless
 * /dev/infiniband/<dev_name> is a character device it may read and write.
 * Ours (device.c: "uverbs-ethereal0") has no node: nothing of it is in
 * the kernel.  ethereal-run preloads this library, which answers stat()
 * and access() for those paths as for /dev/null (a character device
 * anyone may open) and passes every other path through untouched.  The
 * node is never opened: our libibverbs does not use it.
 */
/* stat and stat64 both defined here: neither may be renamed to the other */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUR_NODES "/dev/infiniband/uverbs-ethereal"

static const char *
node_of(const char *path)
{
	return path && strncmp(path, OUR_NODES, sizeof(OUR_NODES) - 1) == 0 ? "/dev/null" : path;
}

/* The next definition of name: libc's. */
static void *
next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

int
stat(const char *restrict path, struct stat *restrict st)
{
	static int (*real)(const char *restrict, struct stat *restrict);

	if (real == NULL)
		real = (int (*)(const char *restrict, struct stat *restrict))next("stat");
	return real(node_of(path), st);
}

int
stat64(const char *restrict path, struct stat64 *restrict st)
{
	static int (*real)(const char *restrict, struct stat64 *restrict);

	if (real == NULL)
		real = (int (*)(const char *restrict, struct stat64 *restrict))next("stat64");
	return real(node_of(path), st);
}

int
access(const char *path, int mode)
{
	static int (*real)(const char *, int);

	if (real == NULL)
		real = (int (*)(const char *, int))next("access");
	return real(node_of(path), mode);
}
