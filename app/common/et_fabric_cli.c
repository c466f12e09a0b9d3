/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>


#include "base/et_conf.h"
#include "et_cli.h"
#include "link/et_link_conf.h"
#include "et_switch_conf.h"
#include "et_fabric_cli.h"

void
usage(FILE *o)
{
	fprintf(o,
		"usage: ethereal-fabric [EAL args --] --config FILE [options]\n"
		"  --config FILE        fabric conf: [topology] [link] [switch] [transport] [lb] [run]\n"
		"  --lb POLICY          ethereal | ecmp | mprdma:X | spray | reps | reps:flow\n"
		"  --collective KIND    allreduce | allgather | reducescatter | alltoall\n"
		"  --algo ALGO          a2a | rd | ring | dbt | rd-far (README: which serves which)\n"
		"  --size N[K|M|G]      bytes per rank: whole elements of --dtype (rounded down,\n"
		"                       as nccl-tests counts them); 0 runs nothing\n"
		"  --dtype TYPE         int8 | uint8 | int32 | uint32 | int64 | uint64 | half |\n"
		"                       float | double | bfloat16 (nccl-tests' -d; default float)\n"
		"  --op OP              sum | prod | max | min | avg (nccl-tests' -o; default sum)\n"
		"  --workload FILE      a sequence of collectives instead of one (see conf/gpt2.workload)\n"
		"  --trace FILE         one iteration as a DAG of compute and collectives on rank\n"
		"                       groups, on one fabric (see conf/gpt2-16.trace); --algo\n"
		"                       applies to its collectives, their kinds and sizes are its own\n"
		"  --clock CLOCK        virtual (default) | real\n"
		"  --seed N             seeds every random choice (default 1)\n"
		"  --verify             real data: reduce it and check every rank byte for byte\n"
		"  --fail SPEC          fail links: [tor:|agg:]SWITCH.UPLINK[@TIME][,...],\n"
		"                       TIME like 0, 500us, 2ms after the collective starts\n"
		"  --json FILE          results as one JSON object\n"
		"  --pcap DIR           every port's traffic as pcapng files in DIR\n"
		"  --plan FILE          every subflow as its host planned it (destination, bytes,\n"
		"                       path ID), a line each: ethereal-coll --plan writes the same\n"
		"  --fault K=V[,K=V]    link faults on every link, as the [link] keys: loss-ppm,\n"
		"                       ge-enter-ppm, ge-exit-ppm, ge-loss-ppm (Gilbert-Elliott),\n"
		"                       corrupt-ppm, dup-ppm, jitter-ns, flap-period-us, flap-down-us\n"
		"  --quiet              no table\n"
		"  --check              check the command line, conf and workload; run nothing\n"
		"  --help             this (before or after --)\n"
		"Without EAL arguments: hugepages when the machine has free ones, else\n"
		"--no-huge --no-shconf --no-pci and the memory the fabric needs.\n"
		"Exit: 0 done, 1 the run failed (or DPDK did), 2 a bad command line or conf.\n"
		ET_CLI_EAL_HELP);
}

/* Options a conf can give too ([lb] policy, [run] ...): an error names
 * where the bad value came from, the command line or the file's key. */
static const struct {
	const char *flag, *section, *key;
	size_t off;
} conf_opts[] = {
	{"--lb", "lb", "policy", offsetof(struct cli, lb)},
	{"--collective", "run", "collective", offsetof(struct cli, collective)},
	{"--algo", "run", "algo", offsetof(struct cli, algo)},
	{"--size", "run", "size", offsetof(struct cli, size)},
	{"--clock", "run", "clock", offsetof(struct cli, clock)},
	{"--fail", "run", "fail", offsetof(struct cli, fail)},
};

void
cli_free(struct cli *o)
{
	for (size_t i = 0; i < RTE_DIM(conf_opts); i++)
		if (o->from_conf & 1u << i)
			free(*(char **)((char *)o + conf_opts[i].off));
	o->from_conf = 0;
}

/* "--lb" or "FILE: [lb] policy", whichever gave the value of flag */
static const char *
origin(const struct cli *o, const char *flag)
{
	static char buf[600];

	for (size_t i = 0; i < RTE_DIM(conf_opts); i++)
		if (strcmp(conf_opts[i].flag, flag) == 0 && (o->from_conf & 1u << i)) {
			snprintf(buf, sizeof(buf), "%s: [%s] %s", o->config, conf_opts[i].section,
				 conf_opts[i].key);
			return buf;
		}
	return flag;
}

/* A failed link must exist: say which switches and uplinks do. */
static int
check_fail(const struct et_topo *t, const struct et_fabric_fail *x, const char *what,
	   const char *tok)
{
	bool agg = x->tier == ET_TIER_AGG;
	uint32_t n_sw = agg ? t->pods * t->aggs_per_pod : t->tors;
	uint32_t n_up = agg ? et_topo_agg_uplinks(t) : et_topo_tor_uplinks(t);
	const char *kind = agg ? "aggregation switch" : "ToR";
	char range[160];

	if (agg && t->kind != ET_TOPO_FAT_TREE)
		return et_cli_bad(what, "tor:SWITCH.UPLINK (a leaf-spine has no aggregation switches)",
				  tok);
	if (x->sw < n_sw && x->uplink < n_up)
		return 0;
	snprintf(range, sizeof(range), "%s 0..%u, uplink 0..%u (%sSWITCH.UPLINK)", kind,
		 n_sw - 1, n_up - 1, agg ? "agg:" : "");
	return et_cli_bad(what, range, tok);
}

/* [tor:|agg:]SW.UPLINK[@TIME], comma separated */
static int
parse_fails(const char *spec, const char *what, struct et_fabric_params *p)
{
	char buf[512], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct et_fabric_fail x = {.tier = ET_TIER_TOR};
		char *at = strchr(tok, '@'), *s = tok, *end;
		unsigned long a, b;

		if (p->n_fails == ET_FABRIC_MAX_FAILS)
			return et_cli_bad(what, "at most 16 links", spec);
		if (at) {
			*at++ = 0;
			if (et_parse_time_ns(at, 1, &x.at_ns))
				return et_cli_bad(what, "a time like 0, 500us or 2ms after '@'", at);
		}
		if (strncmp(s, "tor:", 4) == 0)
			s += 4;
		else if (strncmp(s, "agg:", 4) == 0)
			s += 4, x.tier = ET_TIER_AGG;
		a = strtoul(s, &end, 10);
		if (end == s || *end != '.')
			return et_cli_bad(what, "[tor:|agg:]SWITCH.UPLINK[@TIME]", tok);
		s = end + 1;
		b = strtoul(s, &end, 10);
		if (end == s || *end)
			return et_cli_bad(what, "[tor:|agg:]SWITCH.UPLINK[@TIME]", tok);
		x.sw = (uint32_t)a;
		x.uplink = (uint32_t)b;
		if (check_fail(&p->t, &x, what, tok))
			return -1;
		p->fails[p->n_fails++] = x;
	}
	return 0;
}

/* Every switch of the shape must fit the switch's tables. */
static int
check_ports(struct et_conf *c, const struct et_topo *t)
{
	char err[256];

	if (et_net_check(t, err, sizeof(err)) == 0)
		return 0;
	return et_conf_fail(c, "topology", NULL, "%s", err);
}

/* What each key allows alone that still cannot run: a round trip longer
 * than the RTO (every packet times out), a buffer too small for PFC (it
 * drops all the same), a pool smaller than its own caches. */
static int
check_ranges(struct et_conf *c, const struct et_fabric_params *p)
{
	const struct et_link_model *up = p->net.uplink.rate_bps ? &p->net.uplink : &p->net.link;
	uint64_t lat = p->net.link.latency_ns, max = et_fabric_max_latency_ns(p);
	uint64_t rate = RTE_MAX(p->net.link.rate_bps, up->rate_bps);
	uint32_t ports = et_topo_max_ports(&p->t);
	uint64_t room = et_sw_pfc_headroom(rate, lat, p->qp.mtu + 78);

	if (lat > max)
		return et_conf_fail(c, "link", "latency-ns",
				    "%" PRIu64 ": a round trip over the fabric's longest path takes %.1f us, "
				    "not less than [transport] rto-us = %" PRIu64 ", so every packet "
				    "would time out; at most %" PRIu64 " with this RTO",
				    lat, et_fabric_base_rtt_ns(p) / 1e3, p->qp.rto_ns / 1000, max);
	if (p->net.sw.pfc && p->net.sw.buffer_bytes < ports * room)
		return et_conf_fail(c, "switch", "buffer",
				    "%" PRIu64 " bytes with pfc = on: a switch of this fabric has %u ports, "
				    "each taking up to %" PRIu64 " bytes after its PAUSE (a round trip of "
				    "its link and two frames); at least %" PRIu64 " (%" PRIu64 "K)",
				    p->net.sw.buffer_bytes, ports, room, ports * room,
				    (ports * room + 1023) >> 10);
	if (p->mbufs && p->mbufs < ET_FABRIC_MIN_MBUFS)
		return et_conf_fail(c, "run", "mbufs", "%u: at least %u (or 0: sized by the fabric)",
				    p->mbufs, ET_FABRIC_MIN_MBUFS);
	return 0;
}

int
load_conf(const char *file, struct et_fabric_params *p, struct cli *o)
{
	static const char *const link_keys[] = {"rate-gbps", "uplink-rate-gbps", "latency-ns",
						"mtu", ET_LINK_FAULT_KEYS, NULL};
	static const char *const sw_keys[] = {ET_SW_CONF_KEYS, NULL};
	static const char *const tr_keys[] = {"rto-us", "retry-cnt", "ack-every", "acks-first",
					      "dctcp", "dctcp-g", "dctcp-ai", "dctcp-rate-ai-mbps",
					      "init-cwnd", "max-cwnd", "data", "reconnect-ms",
					      NULL};
	static const char *const lb_keys[] = {"policy", "batch-ns", "jitter-ns",
					      "failed-path-timeout-ms", "reps-buffer",
					      "reps-freeze-us", "reps-explore-pkts", NULL};
	static const char *const run_keys[] = {"collective", "algo", "size", "chunk", "seed",
					       "clock", "fail", "time-limit-ms", "mbufs", NULL};
	static const char *const sections[] = {"topology", "link", "switch", "transport", "lb",
					       "run", NULL};
	static const char *const onoff[] = {"off", "on", NULL};
	/* how a subflow's bytes move: the sender WRITEs, or the receiver READs */
	static const char *const data_ops[] = {"write", "read", NULL};
	/* rate: the paper's simulator's DCTCP, a paced rate and no window */
	static const char *const dctcp_modes[] = {"off", "on", "rate", NULL};
	static const char *const mtus[] = {"256", "512", "1024", "2048", "4096", NULL};
	struct et_conf c;
	double rate, uprate, g;
	uint32_t lat, rto, retry, acks, bns, jns, fpt, seed, limit, freeze_us, rate_ai, reconnect_ms;
	uint64_t icw, mcw, ai, chunk;
	int mtu, dctcp, acks_first, by_read, rc = -1;
	const char *s;

	if (et_conf_open(&c, file))
		goto out;
	if (et_conf_check_sections(&c, sections, NULL) < 0 || et_topo_load(&c, &p->t) ||
	    check_ports(&c, &p->t) || et_conf_check_keys(&c, "link", link_keys) ||
	    et_conf_check_keys(&c, "switch", sw_keys) ||
	    et_conf_check_keys(&c, "transport", tr_keys) ||
	    et_conf_check_keys(&c, "lb", lb_keys) || et_conf_check_keys(&c, "run", run_keys) ||
	    et_conf_double(&c, "link", "rate-gbps", 0.001, 100000, false, 400, &rate) ||
	    et_conf_double(&c, "link", "uplink-rate-gbps", 0, 100000, false, 0, &uprate) ||
	    et_conf_u32(&c, "link", "latency-ns", 1, 10000000, false, 500, &lat) ||
	    et_conf_enum(&c, "link", "mtu", mtus, false, 4, &mtu) ||
	    et_link_faults_load(&c, "link", &p->net.link) ||
	    et_sw_params_load(&c, "switch", &p->net.sw) ||
	    et_conf_u32(&c, "transport", "rto-us", 1, 10000000, false, 1000, &rto) ||
	    et_conf_u32(&c, "transport", "retry-cnt", 0, 7, false, 7, &retry) ||
	    et_conf_u32(&c, "transport", "reconnect-ms", 0, 3600000, false,
			(uint32_t)(p->reconnect_ns / 1000000), &reconnect_ms) ||
	    et_conf_u32(&c, "transport", "ack-every", 1, 1024, false, 1, &acks) ||
	    et_conf_enum(&c, "transport", "acks-first", onoff, false, 0, &acks_first) ||
	    et_conf_enum(&c, "transport", "data", data_ops, false, 0, &by_read) ||
	    et_conf_enum(&c, "transport", "dctcp", dctcp_modes, false, p->qp.dctcp.enabled,
			 &dctcp) ||
	    et_conf_double(&c, "transport", "dctcp-g", 1.0 / 65536, 1, false, p->qp.dctcp.g, &g) ||
	    et_conf_bytes(&c, "transport", "dctcp-ai", 0, 1ull << 20, false, 0, &ai) ||
	    et_conf_u32(&c, "transport", "dctcp-rate-ai-mbps", 1, 1000000, false, 1000, &rate_ai) ||
	    et_conf_bytes(&c, "transport", "init-cwnd", 0, 1ull << 31, false, 0, &icw) ||
	    et_conf_bytes(&c, "transport", "max-cwnd", 4096, 1ull << 31, false,
			  p->qp.dctcp.max_cwnd, &mcw) ||
	    et_conf_u32(&c, "lb", "batch-ns", 0, 1000000000, false, 100, &bns) ||
	    et_conf_u32(&c, "lb", "jitter-ns", 0, 1000000000, false, 50, &jns) ||
	    et_conf_u32(&c, "lb", "failed-path-timeout-ms", 0, 3600000, false, 100, &fpt) ||
	    et_conf_u32(&c, "lb", "reps-buffer", 1, ET_REPS_MAX_BUF, false, p->lb.reps.buffer_size,
			&p->lb.reps.buffer_size) ||
	    et_conf_u32(&c, "lb", "reps-freeze-us", 0, 100000000, false,
			(uint32_t)(p->lb.reps.freeze_ns / 1000), &freeze_us) ||
	    et_conf_u32(&c, "lb", "reps-explore-pkts", 0, 1000000, false, 0,
			&p->lb.reps.explore_pkts) ||
	    et_conf_bytes(&c, "run", "chunk", 0, 1ull << 32, false, 0, &chunk) ||
	    et_conf_u32(&c, "run", "seed", 0, UINT32_MAX, false, 1, &seed) ||
	    et_conf_u32(&c, "run", "time-limit-ms", 1, 86400000, false, 10000, &limit) ||
	    et_conf_u32(&c, "run", "mbufs", 0, 1u << 26, false, 0, &p->mbufs))
		goto out;
	p->net.link.rate_bps = (uint64_t)(rate * 1e9);
	p->net.link.latency_ns = lat;

	p->net.uplink = p->net.link;
	p->net.uplink.rate_bps = (uint64_t)(uprate * 1e9);
	p->host_link = p->net.link;
	p->qp.mtu = 256u << mtu;
	p->qp.rto_ns = (uint64_t)rto * 1000;
	p->qp.retry_cnt = (uint8_t)retry;
	p->reconnect_ns = (uint64_t)reconnect_ms * 1000000;
	p->qp.ack_every = acks;
	p->acks_first = acks_first;
	p->data_by_read = by_read;
	p->qp.dctcp.enabled = dctcp != 0;
	p->qp.dctcp.rate_mode = dctcp == 2;
	p->qp.dctcp.line_bps = p->host_link.rate_bps;
	p->qp.dctcp.rate_ai_bps = (uint64_t)rate_ai * 1000000;
	p->qp.dctcp.g = g;
	p->qp.dctcp.ai = (uint32_t)ai;
	p->qp.dctcp.init_cwnd = (uint32_t)icw;
	p->qp.dctcp.max_cwnd = (uint32_t)mcw;
	p->lb.batch_ns = bns;
	p->lb.jitter_ns = jns;
	p->lb.failed_path_timeout_ns = (uint64_t)fpt * 1000000;
	p->lb.reps.freeze_ns = (uint64_t)freeze_us * 1000;
	p->chunk = chunk;
	p->seed = seed;
	p->time_limit_ns = (uint64_t)limit * 1000000;
	if (check_ranges(&c, p))
		goto out;
	/* [run] and [lb] policy give defaults the command line overrides */
	for (size_t i = 0; i < RTE_DIM(conf_opts); i++) {
		const char **v = (const char **)((char *)o + conf_opts[i].off);

		if (!*v && (s = et_conf_str(&c, conf_opts[i].section, conf_opts[i].key, NULL))) {
			*v = strdup(s);
			o->from_conf |= 1u << i;
		}
	}
	rc = 0;
out:
	return et_cli_conf_close(&c, rc);
}

int
parse_cli(int argc, char **argv, struct cli *o)
{
	static const struct option lo[] = {
		{"config", required_argument, NULL, 'c'}, {"lb", required_argument, NULL, 'l'},
		{"collective", required_argument, NULL, 'C'}, {"algo", required_argument, NULL, 'a'},
		{"size", required_argument, NULL, 's'}, {"workload", required_argument, NULL, 'w'},
		{"trace", required_argument, NULL, 'T'},
		{"clock", required_argument, NULL, 'k'}, {"seed", required_argument, NULL, 'S'},
		{"verify", no_argument, NULL, 'v'}, {"fail", required_argument, NULL, 'f'},
		{"json", required_argument, NULL, 'j'}, {"pcap", required_argument, NULL, 'p'},
		{"plan", required_argument, NULL, 'P'},
		{"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},
		{"fault", required_argument, NULL, 'F'}, {"check", no_argument, NULL, 'K'},
		{"dtype", required_argument, NULL, 'd'}, {"op", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0}};
	int c;

	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'c': o->config = optarg; break;
		case 'l': o->lb = optarg; break;
		case 'C': o->collective = optarg; break;
		case 'a': o->algo = optarg; break;
		case 's': o->size = optarg; break;
		case 'w': o->workload = optarg; break;
		case 'T': o->trace = optarg; break;
		case 'k': o->clock = optarg; break;
		case 'S':
			o->seed = strtoull(optarg, &end, 0);
			if (*end || end == optarg || *optarg == '-')
				return et_cli_bad("--seed", "a number", optarg);
			o->seed_set = true;
			break;
		case 'v': o->verify = true; break;
		case 'f': o->fail = optarg; break;
		case 'j': o->json = optarg; break;
		case 'p': o->pcap = optarg; break;
		case 'P': o->plan = optarg; break;
		case 'q': o->quiet = true; break;
		case 'K': o->check = true; break;
		case 'F': o->faults = optarg; break;
		case 'd': o->dtype = optarg; break;
		case 'o': o->op = optarg; break;
		case 'h': usage(stdout); exit(0);
		case ':':
			et_cli_error("%s: expected a value (see --help)",
				argv[optind - 1]);
			return -1;
		default:
			et_cli_error("%s: unknown option (see --help)",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc)
		return et_cli_bad("arguments", "options only", argv[optind]);
	if (!o->config) {
		et_cli_error("--config FILE is required");
		return -1;
	}
	return 0;
}

/* The faults and the seed apply to every link: switch to switch (at its own
 * rate) and host to ToR alike. */
static void
uplink_faults(struct et_fabric_params *p)
{
	uint64_t up = p->net.uplink.rate_bps, host = p->host_link.rate_bps;

	p->net.uplink = p->net.link;
	p->net.uplink.rate_bps = up;
	p->host_link = p->net.link;
	p->host_link.rate_bps = host;
}

/* --dtype and --op, nccl-tests' -d and -o */
static int
parse_elements(const struct cli *o, struct et_fabric_params *p)
{
	if (o->dtype && et_coll_parse_dtype(o->dtype, &p->dtype))
		return et_cli_bad("--dtype (-d)", "int8, uint8, int32, uint32, int64, uint64, half, "
				  "float, double or bfloat16", o->dtype);
	if (o->op && et_coll_parse_op(o->op, &p->op))
		return et_cli_bad("--op (-o)", "sum, prod, max, min or avg", o->op);
	return 0;
}

int
check_collective(const char *where, const struct et_fabric_params *p, enum et_coll_kind kind,
		 uint32_t ranks, uint64_t bytes)
{
	struct et_coll_spec c = et_coll_spec_of(kind, p->algo, ranks, bytes, p->dtype, p->op,
						p->chunk);
	const char *why = NULL;

	if (et_coll_check(&c, &why) == 0)
		return 0;
	return et_cli_error("%s%s%s by %s of %" PRIu64 " bytes over %u ranks: %s", where ? where : "",
			    where ? ": " : "", et_coll_kind_name(kind), et_coll_algo_name(p->algo),
			    bytes, ranks, why);
}

int
finish_params(struct cli *o, struct et_fabric_params *p)
{
	char err[256];

	if (o->lb && et_lb_parse(o->lb, &p->lb, err, sizeof(err))) {
		et_cli_error("%s: %s", origin(o, "--lb"), err);
		return -1;
	}
	if (o->collective && et_coll_parse_kind(o->collective, &p->kind))
		return et_cli_bad(origin(o, "--collective"),
				  "allreduce, allgather, reducescatter or alltoall", o->collective);
	if (o->algo && et_coll_parse_algo(o->algo, &p->algo))
		return et_cli_bad(origin(o, "--algo"), "a2a, rd, ring, dbt or rd-far", o->algo);
	if (o->size && et_cli_bytes(origin(o, "--size"), o->size, 0, UINT64_MAX, &p->size))
		return -1;
	if (parse_elements(o, p))
		return -1;
	/* whole elements, as nccl-tests counts them: what runs is what is reported */
	p->size -= p->size % et_coll_dtype_size(p->dtype);
	if (o->clock && strcmp(o->clock, "virtual") && strcmp(o->clock, "real"))
		return et_cli_bad(origin(o, "--clock"), "virtual or real", o->clock);
	p->real_clock = o->clock && strcmp(o->clock, "real") == 0;
	if (o->seed_set)
		p->seed = o->seed;
	if (o->fail && parse_fails(o->fail, origin(o, "--fail"), p))
		return -1;
	snprintf(p->fails_from, sizeof(p->fails_from), "%s", origin(o, "--fail"));
	if (o->faults && et_link_faults_parse(o->faults, &p->net.link, err, sizeof(err))) {
		et_cli_error("--fault: %s", err);
		return -1;
	}
	/* every link of the fabric draws its faults from the run's seed */
	p->net.link.seed = p->seed;
	uplink_faults(p);
	p->verify = o->verify;
	p->pcap_dir = o->pcap;
	if (o->trace && o->workload) {
		et_cli_error("--trace and --workload: one or the other");
		return -1;
	}
	if (o->trace && o->verify) {
		et_cli_error("--trace: --verify checks one collective's data; a trace runs without it");
		return -1;
	}
	p->hosts_only = o->trace != NULL;
	/* the outputs before the run, not after it */
	if ((o->json && et_cli_out_file("--json", o->json)) ||
	    (o->pcap && et_cli_out_dir("--pcap", o->pcap)) ||
	    (o->plan && et_cli_out_file("--plan", o->plan)))
		return -1;
	return 0;
}

void
plan_write(void *fp, const struct et_rt_host *h, const struct et_rt_sub *s)
{
	char line[160];

	et_rt_sub_format(h, s, line, sizeof(line));
	fprintf(fp, "%s\n", line);
}

int
load_workload(const char *file, const struct et_fabric_params *p, struct workload *w)
{
	uint32_t hosts = et_topo_hosts(&p->t);
	FILE *fp = fopen(file, "r");
	char line[256], where[4200];
	unsigned int ln = 0;

	memset(w, 0, sizeof(*w));
	if (fp == NULL) {
		et_cli_error("--workload %s: %s", file, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char kind[32], size[32], extra[8];
		char *hash = strchr(line, '#');
		enum et_coll_kind k;
		uint64_t bytes;
		void *grown;
		int n;

		ln++;
		if (hash)
			*hash = 0;
		n = sscanf(line, "%31s %31s %7s", kind, size, extra);
		if (n <= 0)
			continue;
		if (n != 2 || et_coll_parse_kind(kind, &k) || et_parse_bytes(size, &bytes)) {
			et_cli_error("%s:%u: expected 'KIND SIZE' "
				"(allreduce|allgather|reducescatter|alltoall, bytes like 16M), got '%s'",
				file, ln, strtok(line, "\n"));
			goto fail;
		}
		snprintf(where, sizeof(where), "%s:%u", file, ln);
		if (check_collective(where, p, k, hosts, bytes))
			goto fail;
		grown = realloc(w->step, (w->n + 1) * sizeof(*w->step));
		if (grown == NULL) {
			et_cli_error("--workload %s: out of memory", file);
			goto fail;
		}
		w->step = grown;
		w->step[w->n].kind = k;
		w->step[w->n++].size = bytes - bytes % et_coll_dtype_size(p->dtype);
	}
	fclose(fp);
	if (w->n == 0) {
		et_cli_error("--workload %s: no collectives", file);
		return -1;
	}
	return 0;
fail:
	fclose(fp);
	free(w->step);
	w->step = NULL;
	return -1;
}


/* The whole file in memory (coll/ parses, it reads no files); NULL after
 * a message. */
static char *
read_text(const char *flag, const char *file)
{
	FILE *fp = fopen(file, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;

	if (fp == NULL) {
		et_cli_error("%s %s: %s", flag, file, strerror(errno));
		return NULL;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *grown = realloc(text, cap = cap * 2 + 8192);

			if (grown == NULL) {
				et_cli_error("%s %s: out of memory", flag, file);
				free(text);
				fclose(fp);
				return NULL;
			}
			text = grown;
		}
		n = fread(text + len, 1, 4096, fp);
		len += n;
	} while (n > 0);
	if (ferror(fp) || memchr(text, 0, len)) {
		et_cli_error("%s %s: %s", flag, file, ferror(fp) ? strerror(errno) : "not a text file");
		free(text);
		fclose(fp);
		return NULL;
	}
	text[len] = 0;
	fclose(fp);
	return text;
}

int
load_trace(const char *file, const struct et_fabric_params *p, struct et_trace *t)
{
	char *text = read_text("--trace", file), err[512];
	uint32_t hosts = et_topo_hosts(&p->t);

	memset(t, 0, sizeof(*t));
	if (text == NULL)
		return -1;
	if (et_trace_parse(t, text, file, err, sizeof(err))) {
		free(text);
		et_cli_error("%s", err);
		return -1;
	}
	free(text);
	if (t->ranks != hosts) {
		et_cli_error("%s: the trace is for %u ranks, the fabric of %s has %u hosts", file,
			     t->ranks, p->t.kind == ET_TOPO_LEAF_SPINE ? "the leaf-spine" : "the fat-tree",
			     hosts);
		goto fail;
	}
	/* every collective able to run with --algo before the fabric is built */
	for (uint32_t k = 0; k < t->n_nodes; k++) {
		const struct et_trace_node *x = &t->nodes[k];
		const struct et_trace_group *g = &t->groups[x->group];
		char where[600];

		if (x->type != ET_TRACE_COMM)
			continue;
		snprintf(where, sizeof(where), "%s:%u: %s (group %s)", file, x->line, x->name,
			 g->name);
		if (check_collective(where, p, x->kind, g->size, x->size))
			goto fail;
	}
	return 0;
fail:
	et_trace_free(t);
	return -1;
}

int
et_fabric_conf_process(const char *conf, const char *lb, struct et_process_conf *pc)
{
	struct et_fabric_params fp;
	struct cli o;
	char err[256];
	int r = 0;

	memset(&o, 0, sizeof(o));
	et_fabric_params_default(&fp);
	/* the conf, then what it named ([lb] policy, [run] seed) applied */
	if (conf && (load_conf(conf, &fp, &o) || finish_params(&o, &fp)))
		r = -1;
	cli_free(&o);
	if (r == 0 && lb && et_lb_parse(lb, &fp.lb, err, sizeof(err)))
		r = et_cli_error("policy %s: %s", lb, err);
	if (r)
		return r;
	et_fabric_rt_conf(&fp, &pc->rc);
	pc->reconnect_ns = fp.reconnect_ns;
	if (conf == NULL)
		pc->rc.qp.rto_ns = ET_PROCESS_DEFAULT_RTO_NS;
	if (pc->rc.qp.retry_cnt > 6)
		pc->rc.qp.retry_cnt = 6;
	return 0;
}
