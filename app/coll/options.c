/* SPDX-License-Identifier: BSD-3-Clause */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "coll.h"
#include "et_cli.h"
#include "sim/et_net.h"

void
coll_usage(FILE *o)
{
	fprintf(o,
		"usage: ethereal-coll [EAL args --] --port DEV --config FILE --rank R --world N\n"
		"                     --root HOST:PORT [options]\n"
		"One host of the conf's fabric per process; rank R is host R of its topology\n"
		"(its address 10.0.TOR.H+1), N must be the topology's hosts. Rank 0 listens on\n"
		"--root's port; every rank reaches it there. Under OpenMPI's mpirun, --rank and\n"
		"--world come from OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE.\n"
		"  --port DEV           the DPDK port: a --vdev name (net_memif0, net_tap0, ..) or\n"
		"                       a PCI address\n"
		"  --config FILE        the conf ethereal-fabric reads: [topology] [link] [transport]\n"
		"                       [lb] [run] ([switch] is the switches')\n"
		"  --lb POLICY          ethereal | ecmp | mprdma:X | spray | reps | reps:flow\n"
		"  --collective KIND    allreduce | allgather | reducescatter | alltoall\n"
		"  --algo ALGO          a2a | rd | ring | dbt\n"
		"  --seed N             as ethereal-fabric: data, PSNs, path choices\n"
		"  --verify             real data, reduced and checked byte for byte every iteration\n"
		"  -b MIN -e MAX -f K   sizes MIN, MIN*K, .. MAX bytes per rank (nccl-tests' flags)\n"
		"  --size N             one size (-b N -e N); default: the conf's [run] size\n"
		"  --iters N            timed iterations per size (default 5)\n"
		"  --trace FILE         instead of sizes, one iteration of a training trace\n"
		"                       (ethereal-fabric --trace's, e.g. scripts/gpt2-trace's):\n"
		"                       its collectives over their groups, its compute as timers\n"
		"  --warmup N           untimed ones before them (default 1)\n"
		"  --timeout-s N        one collective, and the bootstrap, at most (default 60)\n"
		"  --mac MAC            the host's MAC (default: the port's)\n"
		"  --json FILE          the table and every rank's figures as JSON (rank 0)\n"
		"  --plan FILE          the first collective's subflows as this rank planned them\n"
		"                       (ethereal-fabric --plan's lines) into FILE.RANK\n"
		"  --yield              sleep when idle (many processes on few cores)\n"
		"  --switch-mode        print the [switch] mode the policy needs (source-route or\n"
		"                       ecmp) and exit: needs only --config and --lb\n"
		"  --help               this\n"
		"Exit: 0 done, 1 the run failed (a peer lost, a QP failed, wrong data), 2 a bad\n"
		"command line or conf.\n"
		ET_CLI_EAL_HELP);
}

static int
env_u32(const char *name, uint32_t *out)
{
	const char *v = getenv(name);
	uint64_t x;

	if (v == NULL)
		return 0;
	if (et_cli_u64(name, v, 0, UINT32_MAX, &x))
		return -1;
	*out = (uint32_t)x;
	return 1;
}

int
coll_parse(int argc, char **argv, struct copts *o)
{
	static const struct option lo[] = {
		{"port", required_argument, NULL, 'P'}, {"config", required_argument, NULL, 'c'},
		{"rank", required_argument, NULL, 'r'}, {"world", required_argument, NULL, 'w'},
		{"root", required_argument, NULL, 'R'}, {"lb", required_argument, NULL, 'l'},
		{"collective", required_argument, NULL, 'C'}, {"algo", required_argument, NULL, 'a'},
		{"seed", required_argument, NULL, 'S'}, {"verify", no_argument, NULL, 'v'},
		{"size", required_argument, NULL, 's'}, {"iters", required_argument, NULL, 'i'},
		{"warmup", required_argument, NULL, 'W'}, {"timeout-s", required_argument, NULL, 't'},
		{"mac", required_argument, NULL, 'm'}, {"json", required_argument, NULL, 'j'},
		{"yield", no_argument, NULL, 'y'}, {"help", no_argument, NULL, 'h'},
		{"switch-mode", no_argument, NULL, 'M'}, {"plan", required_argument, NULL, 'p'},
		{"trace", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0}};
	uint64_t x;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->factor = 2;
	o->iters = 5;
	o->warmup = 1;
	o->timeout_s = 60;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:e:f:", lo, NULL)) != -1) {
		switch (c) {
		case 'P': o->port = optarg; break;
		case 'c': o->f.config = optarg; break;
		case 'R': o->root = optarg; break;
		case 'l': o->f.lb = optarg; break;
		case 'C': o->f.collective = optarg; break;
		case 'a': o->f.algo = optarg; break;
		case 'v': o->f.verify = true; break;
		case 'm': o->mac = optarg; break;
		case 'j': o->f.json = optarg; break;
		case 'y': o->yield = true; break;
		case 'M': o->switch_mode = true; break;
		case 'p': o->f.plan = optarg; break;
		case 'T': o->f.trace = optarg; break;
		case 'r':
		case 'w':
			if (et_cli_u64(c == 'r' ? "--rank" : "--world", optarg, c == 'w', 65535, &x))
				return -1;
			*(c == 'r' ? &o->rank : &o->world) = (uint32_t)x;
			*(c == 'r' ? &o->rank_set : &o->world_set) = true;
			break;
		case 'S':
			if (et_cli_u64("--seed", optarg, 0, UINT32_MAX, &o->f.seed))
				return -1;
			o->f.seed_set = true;
			break;
		case 's':
			if (et_cli_bytes("--size", optarg, 1, UINT32_MAX, &o->min))
				return -1;
			o->max = o->min;
			break;
		case 'b':
		case 'e':
			if (et_cli_bytes(c == 'b' ? "-b" : "-e", optarg, 1, UINT32_MAX,
					 c == 'b' ? &o->min : &o->max))
				return -1;
			break;
		case 'f':
			if (et_cli_u64("-f", optarg, 2, 1024, &x))
				return -1;
			o->factor = (uint32_t)x;
			break;
		case 'i':
		case 'W':
			if (et_cli_u64(c == 'i' ? "--iters" : "--warmup", optarg, c == 'i', 1000000, &x))
				return -1;
			*(c == 'i' ? &o->iters : &o->warmup) = (uint32_t)x;
			break;
		case 't':
			if (et_cli_u64("--timeout-s", optarg, 1, 86400, &x))
				return -1;
			o->timeout_s = (uint32_t)x;
			break;
		case 'h': coll_usage(stdout); exit(0);
		case ':':
			return et_cli_error("%s: expected a value (see --help)", argv[optind - 1]);
		default:
			return et_cli_error("%s: unknown option (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return et_cli_bad("arguments", "options only", argv[optind]);
	/* an MPI launcher's rank and size, when the line gives none */
	if (!o->rank_set && (r = env_u32("OMPI_COMM_WORLD_RANK", &o->rank)) != 0) {
		if (r < 0)
			return -1;
		o->rank_set = true;
	}
	if (!o->world_set && (r = env_u32("OMPI_COMM_WORLD_SIZE", &o->world)) != 0) {
		if (r < 0)
			return -1;
		o->world_set = true;
	}
	if (o->switch_mode) {
		if (!o->f.config)
			return et_cli_error("--switch-mode: --config FILE is required");
		o->world = 1;
		return 0;
	}
	if (!o->port || !o->f.config || !o->root || !o->rank_set || !o->world_set)
		return et_cli_error("--port, --config, --root, --rank and --world are required "
				    "(--rank and --world from mpirun's environment too; see --help)");
	const char *colon = strrchr(o->root, ':');
	uint64_t port;

	if (!colon || colon == o->root || et_parse_u64(colon + 1, &port) || port == 0 ||
	    port > 65535)
		return et_cli_bad("--root", "HOST:PORT, the port 1..65535", o->root);
	if (o->rank >= o->world)
		return et_cli_error("--rank %u: expected 0..%u (--world %u)", o->rank, o->world - 1,
				    o->world);
	if (o->min && o->max && o->min > o->max)
		return et_cli_error("-b %lu is more than -e %lu", (unsigned long)o->min,
				    (unsigned long)o->max);
	if (o->f.json && et_cli_out_file("--json", o->f.json))
		return -1;
	return 0;
}

int
coll_setup(struct coll *c)
{
	struct copts *o = &c->o;
	uint32_t hosts;

	et_fabric_params_default(&c->p);
	if (load_conf(o->f.config, &c->p, &o->f) || finish_params(&o->f, &c->p))
		return -1;
	if (c->p.n_fails)
		return et_cli_error("--fail / [run] fail: a link is failed at its switch "
				    "(ethereal-switch --fail), not by a host");
	if (c->p.data_by_read)
		return et_cli_error("%s: [transport] data = read runs in ethereal-fabric; a rank "
				    "per process moves its data by WRITE", o->f.config);
	if (o->switch_mode) {
		printf("%s\n", et_lb_uses_ecmp(&c->p.lb) ? "ecmp" : "source-route");
		return 0;
	}
	hosts = et_topo_hosts(&c->p.t);
	if (o->world != hosts)
		return et_cli_error("--world %u: the topology of %s has %u hosts, one rank each",
				    o->world, o->f.config, hosts);
	if (!o->min)
		o->min = o->max ? o->max : c->p.size;
	if (!o->max)
		o->max = o->min;
	if (o->min > o->max)
		return et_cli_error("-b %lu is more than -e %lu", (unsigned long)o->min,
				    (unsigned long)o->max);
	c->p.size = o->max; /* the buffers of the largest */
	et_fabric_rt_conf(&c->p, &c->rc);
	if (o->f.trace) { /* finish_params refused --verify with it */
		if (o->f.plan)
			return et_cli_error("--plan is for the sizes' collectives, not --trace");
		if ((c->trace = calloc(1, sizeof(*c->trace))) == NULL)
			return et_cli_error("out of memory");
		if (load_trace(o->f.trace, &c->p, c->trace))
			return -1;
	}
	return 0;
}
