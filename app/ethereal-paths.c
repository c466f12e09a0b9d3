/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-paths: print the paths between two hosts of a fabric described
 * in a conf file, with the path ID each link sees and the ACK's way back.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/et_conf.h"
#include "topo/et_path.h"
#include "topo/et_topo.h"
#include "et_cli.h"

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s --config FILE [--src HOST] [--dst HOST]\n"
		"  Print every path from HOST src (default 0) to HOST dst (default the\n"
		"  last host), the path ID on each link, and the acknowledgement's path.\n"
		"  Path IDs are in decimal, as Wireshark shows a UDP port.\n",
		prog);
}

static int
parse_host(const char *opt, const char *v, uint32_t *out)
{
	uint64_t x;

	if (et_parse_u64(v, &x) || x > UINT32_MAX)
		return et_cli_bad(opt, "a host number", v);
	*out = (uint32_t)x;
	return 0;
}

static void
print_hops(const struct et_topo *t, const char *what, const struct et_hop *h,
	   int n)
{
	int i;

	printf("    %s:", what);
	for (i = 0; i < n; i++) {
		printf(" %s%" PRIu32 "->%s%" PRIu32, et_tier_name(t, h[i].from.tier),
		       h[i].from.index, et_tier_name(t, h[i].to.tier), h[i].to.index);
		if (h[i].lane)
			printf("~%" PRIu32, h[i].lane);
		printf("[%u]", h[i].id);
	}
	printf("\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"src", required_argument, NULL, 's'},
		{"dst", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *file = NULL;
	uint32_t src = 0, dst = UINT32_MAX, n, i, hosts;
	int have_dst = 0, opt, rc = 0;
	struct et_conf c;
	struct et_topo t;
	uint16_t *ids;

	et_cli_program("ethereal-paths");
	while ((opt = getopt_long(argc, argv, "c:s:d:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			file = optarg;
			break;
		case 's':
			if (parse_host("--src", optarg, &src))
				return 2;
			break;
		case 'd':
			if (parse_host("--dst", optarg, &dst))
				return 2;
			have_dst = 1;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (file == NULL || optind != argc) {
		et_cli_error("%s", file ? "unexpected argument" : "--config FILE is required");
		usage(stderr, argv[0]);
		return 2;
	}
	if (et_cli_conf_close(&c, et_conf_open(&c, file) || et_topo_load(&c, &t)))
		return ET_EXIT_USAGE;

	hosts = et_topo_hosts(&t);
	if (!have_dst)
		dst = hosts - 1;
	if (src >= hosts || dst >= hosts || src == dst) {
		et_cli_error("--src/--dst: expected two different hosts in 0..%u", hosts - 1);
		return 2;
	}
	if (t.kind == ET_TOPO_LEAF_SPINE)
		printf("leaf-spine: %u leaves x %u spines x %u hosts per leaf, %u link(s) per pair: %u hosts\n",
		       t.tors, t.spines, t.hosts_per_tor, t.links_per_pair, hosts);
	else
		printf("fat-tree: %u pods x (%u ToRs, %u aggs), %u cores per agg, %u hosts per ToR, %u link(s) per pair: %u hosts\n",
		       t.pods, t.tors_per_pod, t.aggs_per_pod, t.cores_per_agg,
		       t.hosts_per_tor, t.links_per_pair, hosts);

	n = et_path_count(&t, src, dst);
	ids = calloc(n, sizeof(*ids));
	if (ids == NULL)
		return 1;
	et_path_enumerate(&t, src, dst, ids, n);
	printf("host %u -> host %u: %u path(s); [id] is the UDP source port on each link, as\n"
	       "Wireshark shows it (in hex: the high byte picks the uplink), ~N: on parallel lane N\n",
	       src, dst, n);
	for (i = 0; i < n; i++) {
		struct et_hop data[ET_PATH_MAX_HOPS], ack[ET_PATH_MAX_HOPS];
		int nd = et_path_walk(&t, src, dst, ids[i], data), na;

		printf("  path %u (0x%04x)\n", ids[i], ids[i]);
		if (nd < 0) {
			printf("    dropped: no such uplink\n");
			rc = 1;
			continue;
		}
		print_hops(&t, "data", data, nd);
		na = et_path_walk(&t, dst, src, et_path_echo(data[nd - 1].id), ack);
		if (na < 0) {
			printf("    ack dropped: no such uplink\n");
			rc = 1;
			continue;
		}
		print_hops(&t, "ack ", ack, na);
	}
	free(ids);
	return rc;
}
