/* SPDX-License-Identifier: BSD-3-Clause */
#include "et_app_eal.h"
#include "host/et_process.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Whether EAL arguments say where memory comes from. */
static bool
names_memory(int argc, char **argv)
{
	static const char *const opts[] = {"-m", "--socket-mem", "--no-huge", "--in-memory",
					   "--huge-dir", "--legacy-mem", "--socket-limit"};

	for (int i = 1; i < argc; i++)
		for (size_t k = 0; k < RTE_DIM(opts); k++)
			if (strncmp(argv[i], opts[k], strlen(opts[k])) == 0 &&
			    (argv[i][strlen(opts[k])] == 0 || argv[i][strlen(opts[k])] == '='))
				return true;
	return false;
}

/* The defaults: hugepages when enough are free (ordinary memory if they
 * cannot be had after all), else ordinary memory; after the EAL arguments
 * the user gave (argv[1..argc), none naming memory) or, with none, one
 * lcore, no PCI and quiet logs. */
static int
eal_defaults(const struct et_app_eal *d, char *prog, int argc, char **user)
{
	char mem[24], lcores[32];
	char **argv = calloc((size_t)argc + 16, sizeof(*argv));
	int n = 0, first_errno = 0, rc = 0;

	if (argv == NULL) {
		rte_errno = ENOMEM;
		return -1;
	}
	argv[n++] = prog;
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			argv[n++] = user[i];
	} else {
		snprintf(lcores, sizeof(lcores), "%s", d->lcores);
		argv[n++] = "-l";
		argv[n++] = lcores;
		argv[n++] = "--no-pci";
		/* DPDK's notices off, the program's messages on */
		argv[n++] = "--log-level=*:error";
		argv[n++] = "--log-level=ethereal.*:info";
		if (!d->telemetry)
			argv[n++] = "--no-telemetry";
	}
	snprintf(mem, sizeof(mem), "%" PRIu64, d->mem_mb);
	if (free_hugepage_mb() >= d->huge_mb) {
		argv[n] = "--in-memory";
		if (rte_eal_init(n + 1, argv) >= 0)
			goto out;
		first_errno = rte_errno;
	}
	argv[n++] = "--no-huge";
	argv[n++] = "--no-shconf";
	argv[n++] = "-m";
	argv[n++] = mem;
	argv[n] = NULL;
	if (rte_eal_init(n, argv) >= 0)
		goto out;
	if (first_errno && rte_errno == EALREADY) /* a failed start cannot be retried */
		rte_errno = first_errno;
	rc = -1;
out:
	free(argv);
	return rc;
}

int
et_app_eal_init(const struct et_app_eal *d, int argc, char **argv)
{
	int start = et_app_args_start(argc, argv), r;

	if (d != NULL && (start == 0 || !names_memory(start, argv))) {
		r = eal_defaults(d, argv[0], start, argv);
		if (start)
			argv[start] = argv[0]; /* as rte_eal_init leaves it */
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

void
et_app_eal_cleanup(void)
{
	char dir[PATH_MAX];
	bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (primary && dir[0])
		et_eal_runtime_dir_remove(dir);
}

struct rte_mempool *
et_app_pool(const char *name, unsigned int n, uint16_t data_room)
{
	return rte_pktmbuf_pool_create(name, n, 256, 0, data_room, (int)rte_socket_id());
}
