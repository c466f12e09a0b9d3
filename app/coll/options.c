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
		"  --algo ALGO          a2a | rd | ring | dbt | rd-far: alltoall by a2a only, dbt and\n"
		"                       rd-far allreduce only; any count, any number of ranks\n"
		"  --seed N             as ethereal-fabric: data, PSNs, path choices\n"
		"nccl-tests' options, as its all_reduce_perf takes them:\n"
		"  -b, --minbytes N     sizes from N bytes per rank (K, M, G: powers of 2) ...\n"
		"  -e, --maxbytes N     ... to N (default: -b, or the conf's [run] size)\n"
		"  -f, --stepfactor K   each size K times the last (default 1: add -i)\n"
		"  -i, --stepbytes N    each size N more than the last (default 1M)\n"
		"  --size N             one size: -b N -e N\n"
		"  -n, --iters N        timed iterations per size (default 5)\n"
		"  -w, --warmup_iters N untimed ones before them (default 1)\n"
		"  -c, --check 0|1      1: real data, reduced and checked element by element in\n"
		"                       every iteration (#wrong); 0: not (default; --verify: 1)\n"
		"  -d, --datatype TYPE  int8 | uint8 | int32 | uint32 | int64 | uint64 | half |\n"
		"                       float | double | bfloat16 | all (default float); a size\n"
		"                       is its whole elements, rounded down\n"
		"  -o, --op OP          sum | prod | max | min | avg | all (default sum)\n"
		"  -a, --average 0..3   the time column: 0 rank 0's, 1 the ranks' average\n"
		"                       (default), 2 the least, 3 the most; each rank's time is\n"
		"                       the mean of its timed iterations\n"
		"  --trace FILE         instead of sizes, one iteration of a training trace\n"
		"                       (ethereal-fabric --trace's, e.g. scripts/gpt2-trace's):\n"
		"                       its collectives over their groups, its compute as timers\n"
		"  --timeout-s N        one collective, and the bootstrap, at most (default 60)\n"
		"  --mac MAC            the host's MAC (default: the port's)\n"
		"  --json FILE          the table and every rank's figures as JSON (rank 0)\n"
		"  --plan FILE          the first collective's subflows as this rank planned them\n"
		"                       (ethereal-fabric --plan's lines) into FILE.RANK\n"
		"  --yield              sleep when idle (many processes on few cores)\n"
		"  --switch-mode        print the [switch] mode the policy needs (source-route or\n"
		"                       ecmp) and exit: needs only --config and --lb\n"
		"  --dry-run            check the command line, conf, trace and every size as a\n"
		"                       run would, then exit (0, or 2 and why): needs --config and\n"
		"                       --world, no DPDK, no port, no peer\n"
		"  --help               this\n"
		"Exit: 0 done, 1 the run failed (a peer lost, a QP failed, wrong data), 2 a bad\n"
		"command line or conf, or a collective that cannot run (said before any rank\n"
		"starts).\n"
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

/* long options without a short one */
enum {
	OPT_PORT = 256, OPT_CONFIG, OPT_RANK, OPT_WORLD, OPT_ROOT, OPT_LB, OPT_COLLECTIVE,
	OPT_ALGO, OPT_SEED, OPT_VERIFY, OPT_SIZE, OPT_TIMEOUT, OPT_MAC, OPT_JSON, OPT_YIELD,
	OPT_HELP, OPT_SWITCH_MODE, OPT_PLAN, OPT_TRACE, OPT_DRY_RUN,
};

int
coll_parse(int argc, char **argv, struct copts *o)
{
	static const struct option lo[] = {
		{"port", required_argument, NULL, OPT_PORT},
		{"config", required_argument, NULL, OPT_CONFIG},
		{"rank", required_argument, NULL, OPT_RANK},
		{"world", required_argument, NULL, OPT_WORLD},
		{"root", required_argument, NULL, OPT_ROOT}, {"lb", required_argument, NULL, OPT_LB},
		{"collective", required_argument, NULL, OPT_COLLECTIVE},
		{"algo", required_argument, NULL, OPT_ALGO},
		{"seed", required_argument, NULL, OPT_SEED},
		{"verify", no_argument, NULL, OPT_VERIFY}, {"size", required_argument, NULL, OPT_SIZE},
		{"timeout-s", required_argument, NULL, OPT_TIMEOUT},
		{"mac", required_argument, NULL, OPT_MAC}, {"json", required_argument, NULL, OPT_JSON},
		{"yield", no_argument, NULL, OPT_YIELD}, {"help", no_argument, NULL, OPT_HELP},
		{"switch-mode", no_argument, NULL, OPT_SWITCH_MODE},
		{"plan", required_argument, NULL, OPT_PLAN},
		{"trace", required_argument, NULL, OPT_TRACE},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		/* nccl-tests' names */
		{"minbytes", required_argument, NULL, 'b'}, {"maxbytes", required_argument, NULL, 'e'},
		{"stepfactor", required_argument, NULL, 'f'},
		{"stepbytes", required_argument, NULL, 'i'}, {"iters", required_argument, NULL, 'n'},
		{"warmup_iters", required_argument, NULL, 'w'},
		{"warmup", required_argument, NULL, 'w'}, {"check", required_argument, NULL, 'c'},
		{"datatype", required_argument, NULL, 'd'}, {"dtype", required_argument, NULL, 'd'},
		{"op", required_argument, NULL, 'o'}, {"average", required_argument, NULL, 'a'},
		{NULL, 0, NULL, 0}};
	uint64_t x;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->factor = 1;
	o->step = 1 << 20;
	o->iters = 5;
	o->warmup = 1;
	o->average = 1;
	o->timeout_s = 60;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:e:f:i:n:w:c:d:o:a:", lo, NULL)) != -1) {
		switch (c) {
		case OPT_PORT: o->port = optarg; break;
		case OPT_CONFIG: o->f.config = optarg; break;
		case OPT_ROOT: o->root = optarg; break;
		case OPT_LB: o->f.lb = optarg; break;
		case OPT_COLLECTIVE: o->f.collective = optarg; break;
		case OPT_ALGO: o->f.algo = optarg; break;
		case OPT_VERIFY: o->f.verify = true; break;
		case OPT_MAC: o->mac = optarg; break;
		case OPT_JSON: o->f.json = optarg; break;
		case OPT_YIELD: o->yield = true; break;
		case OPT_SWITCH_MODE: o->switch_mode = true; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_PLAN: o->f.plan = optarg; break;
		case OPT_TRACE: o->f.trace = optarg; break;
		case 'd':
			o->all_dtypes = strcmp(optarg, "all") == 0;
			o->f.dtype = o->all_dtypes ? NULL : optarg;
			break;
		case 'o':
			o->all_ops = strcmp(optarg, "all") == 0;
			o->f.op = o->all_ops ? NULL : optarg;
			break;
		case OPT_RANK:
		case OPT_WORLD:
			if (et_cli_u64(c == OPT_RANK ? "--rank" : "--world", optarg, c == OPT_WORLD,
				       65535, &x))
				return -1;
			*(c == OPT_RANK ? &o->rank : &o->world) = (uint32_t)x;
			*(c == OPT_RANK ? &o->rank_set : &o->world_set) = true;
			break;
		case OPT_SEED:
			if (et_cli_u64("--seed", optarg, 0, UINT32_MAX, &o->f.seed))
				return -1;
			o->f.seed_set = true;
			break;
		case OPT_SIZE:
			if (et_cli_bytes("--size", optarg, 0, UINT32_MAX, &o->min))
				return -1;
			o->max = o->min;
			o->min_set = o->max_set = true;
			break;
		case 'b':
		case 'e':
			if (et_cli_bytes(c == 'b' ? "-b" : "-e", optarg, 0, UINT32_MAX,
					 c == 'b' ? &o->min : &o->max))
				return -1;
			*(c == 'b' ? &o->min_set : &o->max_set) = true;
			break;
		case 'f':
			if (et_cli_u64("-f", optarg, 1, 1024, &x))
				return -1;
			o->factor = (uint32_t)x;
			break;
		case 'i':
			if (et_cli_bytes("-i", optarg, 1, UINT32_MAX, &o->step))
				return -1;
			break;
		case 'n':
		case 'w':
			if (et_cli_u64(c == 'n' ? "-n" : "-w", optarg, c == 'n', 1000000, &x))
				return -1;
			*(c == 'n' ? &o->iters : &o->warmup) = (uint32_t)x;
			break;
		case 'c':
			if (et_cli_u64("-c", optarg, 0, 1000000, &x))
				return -1;
			o->f.verify = x != 0;
			break;
		case 'a':
			if (et_cli_u64("-a", optarg, 0, 3, &x))
				return -1;
			o->average = (uint32_t)x;
			break;
		case OPT_TIMEOUT:
			if (et_cli_u64("--timeout-s", optarg, 1, 86400, &x))
				return -1;
			o->timeout_s = (uint32_t)x;
			break;
		case OPT_HELP: coll_usage(stdout); exit(0);
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
	if (o->dry_run) {
		if (!o->f.config || !o->world_set)
			return et_cli_error("--dry-run: --config and --world are required");
	} else if (!o->port || !o->f.config || !o->root || !o->rank_set || !o->world_set) {
		return et_cli_error("--port, --config, --root, --rank and --world are required "
				    "(--rank and --world from mpirun's environment too; see --help)");
	}
	if (o->root) {
		const char *colon = strrchr(o->root, ':');
		uint64_t port;

		if (!colon || colon == o->root || et_parse_u64(colon + 1, &port) || port == 0 ||
		    port > 65535)
			return et_cli_bad("--root", "HOST:PORT, the port 1..65535", o->root);
	}
	if (o->rank >= o->world)
		return et_cli_error("--rank %u: expected 0..%u (--world %u)", o->rank, o->world - 1,
				    o->world);
	if (o->min_set && o->max_set && o->min > o->max)
		return et_cli_error("-b %lu is more than -e %lu", (unsigned long)o->min,
				    (unsigned long)o->max);
	if (o->f.json && et_cli_out_file("--json", o->f.json))
		return -1;
	return 0;
}

/* The size after size in -b, -e, -f, -i, as nccl-tests steps them; 0
 * after -e. */
static uint64_t
next_size(const struct copts *o, uint64_t size)
{
	uint64_t next = o->factor > 1 ? size * o->factor : size + o->step;

	return next > size && next <= o->max ? next : 0;
}

/* Collectives a run may have: a table, not a flood. */
#define COLL_MAX_POINTS 16384

/* The run's collectives, each dtype (-d all: every one) x op (-o all, of
 * a collective that reduces) x size, in c->points, each checked as it will
 * be built, before any rank starts: 0, or -1 after a message. */
static int
plan_points(struct coll *c)
{
	const struct copts *o = &c->o;
	uint32_t dt0 = o->all_dtypes ? 0 : c->p.dtype, dt1 = o->all_dtypes ? ET_DT_COUNT : dt0 + 1;
	uint32_t op0 = o->all_ops ? 0 : c->p.op, op1 = o->all_ops ? ET_OP_COUNT : op0 + 1;
	uint64_t sizes = 0;

	if (o->min == 0 && o->factor > 1 && o->max > 0)
		return et_cli_error("-b 0 -f %u: the sizes would never grow (-b 1 or more, or -f 1 "
				    "with -i)", o->factor);
	if (!et_coll_reduces(c->p.kind))
		op1 = op0 + 1; /* moving data: the op is none */
	for (uint64_t s = o->min; sizes <= COLL_MAX_POINTS; s = next_size(o, s)) {
		sizes++;
		if (next_size(o, s) == 0)
			break;
	}
	if (sizes * (dt1 - dt0) * (op1 - op0) > COLL_MAX_POINTS)
		return et_cli_error("-b %lu -e %lu%s%s: more than %u collectives (a larger -f or -i)",
				    (unsigned long)o->min, (unsigned long)o->max,
				    o->all_dtypes ? " -d all" : "", o->all_ops ? " -o all" : "",
				    COLL_MAX_POINTS);
	c->points = calloc(sizes * (dt1 - dt0) * (op1 - op0), sizeof(*c->points));
	if (c->points == NULL)
		return et_cli_error("out of memory");
	for (uint32_t dt = dt0; dt < dt1; dt++)
		for (uint32_t op = op0; op < op1; op++)
			for (uint64_t s = o->min;; s = next_size(o, s)) {
				struct et_fabric_params p = c->p;

				p.dtype = (enum et_coll_dtype)dt;
				p.op = (enum et_coll_op)op;
				if (check_collective(NULL, &p, p.kind, o->world, s))
					return -1;
				c->points[c->n_points++] = (struct point){p.dtype, p.op, s};
				if (next_size(o, s) == 0)
					break;
			}
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
	if (!o->min_set)
		o->min = o->max_set ? o->max : c->p.size;
	if (!o->max_set)
		o->max = o->min;
	if (o->min > o->max)
		return et_cli_error("-b %lu is more than -e %lu", (unsigned long)o->min,
				    (unsigned long)o->max);
	et_fabric_rt_conf(&c->p, &c->rc);
	if (o->f.trace) { /* finish_params refused --verify with it */
		if (o->f.plan)
			return et_cli_error("--plan is for the sizes' collectives, not --trace");
		if ((c->trace = calloc(1, sizeof(*c->trace))) == NULL)
			return et_cli_error("out of memory");
		if (load_trace(o->f.trace, &c->p, c->trace))
			return -1;
	} else if (plan_points(c)) {
		return -1;
	}
	return 0;
}
