/* SPDX-License-Identifier: BSD-3-Clause */
#include "et_app_eal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "et_cli.h"

int
et_app_args_start(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return 0;
}

static uint64_t
free_hugepage_mb(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	unsigned long n = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu", &n) != 1)
		n = 0;
	fclose(f);
	return (uint64_t)n * 2;
}

/* The defaults: hugepages when enough are free (ordinary memory if they
 * cannot be had after all), else ordinary memory. */
static int
eal_defaults(const struct et_app_eal *d, char *prog)
{
	char mem[24], lcores[32];
	/* DPDK's notices off, the program's messages on */
	char *argv[16] = {prog, "-l", lcores, "--no-pci", "--log-level=*:error",
			  "--log-level=ethereal.*:info"};
	int n = 6, first_errno = 0;

	snprintf(lcores, sizeof(lcores), "%s", d->lcores);
	snprintf(mem, sizeof(mem), "%" PRIu64, d->mem_mb);
	if (!d->telemetry)
		argv[n++] = "--no-telemetry";
	if (free_hugepage_mb() >= d->huge_mb) {
		argv[n] = "--in-memory";
		if (rte_eal_init(n + 1, argv) >= 0)
			return 0;
		first_errno = rte_errno;
	}
	argv[n++] = "--no-huge";
	argv[n++] = "--no-shconf";
	argv[n++] = "-m";
	argv[n++] = mem;
	argv[n] = NULL;
	if (rte_eal_init(n, argv) >= 0)
		return 0;
	if (first_errno && rte_errno == EALREADY) /* a failed start cannot be retried */
		rte_errno = first_errno;
	return -1;
}

int
et_app_eal_init(const struct et_app_eal *d, int argc, char **argv)
{
	int start = et_app_args_start(argc, argv), r;

	if (start == 0 && d != NULL) {
		r = eal_defaults(d, argv[0]);
	} else {
		/* DPDK reads up to "--" and puts the program's name there */
		r = rte_eal_init(argc, argv);
		if (start == 0 && r >= 0)
			start = r;
	}
	if (r < 0) {
		et_cli_error("cannot initialise DPDK: %s", rte_strerror(rte_errno));
		return -1;
	}
	return start;
}

struct rte_mempool *
et_app_pool(const char *name, unsigned int n, uint16_t data_room)
{
	return rte_pktmbuf_pool_create(name, n, 256, 0, data_room, (int)rte_socket_id());
}
