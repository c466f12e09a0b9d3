/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-bench: the project's benchmarks, one JSON object on stdout.
 *
 *   ethereal-bench [EAL args --] [icrc|wire|qp|switch|endpoint|zerocopy|fabric ...]
 *
 * Without EAL arguments it uses hugepages when the machine has free ones and
 * falls back to --no-huge otherwise; the JSON says which ("hugepages").
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bench.h"
#include "et_app_eal.h"
#include "et_cli.h"
#include "et_json.h"
#include "wire/et_wire.h"

#define POOL_SIZE 8191
#define BATCH 256

void
bench_num(struct bench_out *o, const char *key, double v)
{
	json_object_set_new(o->obj, key, et_json_fixed(v, 3));
}

double
bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Run body until at least min_s seconds passed; returns ns per call. */
#define TIME_LOOP(min_s, iters_out, body)                                  \
	do {                                                               \
		double t0_ = bench_now_s(), t_;                                  \
		uint64_t n_ = 0;                                           \
		do {                                                       \
			for (int k_ = 0; k_ < 1000; k_++) {                \
				body;                                      \
			}                                                  \
			n_ += 1000;                                        \
			t_ = bench_now_s() - t0_;                                \
		} while (t_ < (min_s));                                    \
		(iters_out) = t_ * 1e9 / (double)n_;                       \
	} while (0)

static struct rte_mempool *pool;

static void
sample_hdr(struct et_roce_hdr *h, uint8_t opcode)
{
	memset(h, 0, sizeof(*h));
	h->dst_mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 2}};
	h->src_mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 1}};
	h->src_ip = RTE_IPV4(10, 0, 0, 1);
	h->dst_ip = RTE_IPV4(10, 0, 1, 1);
	h->ecn = ET_ECN_ECT0;
	h->ttl = 64;
	h->udp_sport = 0x0102;
	h->opcode = opcode;
	h->pkey = ET_PKEY_DEFAULT;
	h->dest_qp = 0x12;
	h->psn = 0x345;
	h->aeth_syndrome = et_aeth_ack(ET_AETH_CREDITS_UNLIMITED);
}

/* ICRC throughput over a 4 KB-payload frame, ISA-L. */
static int
bench_icrc(struct bench_out *o, struct rte_mempool *mp)
{
	static uint8_t frame[4096 + 128];
	static uint8_t payload[4096];
	struct et_roce_hdr h;
	volatile uint32_t sink = 0;
	double ns;
	int len;

	sample_hdr(&h, ET_OP_WRITE_MIDDLE);
	len = et_roce_build(frame, sizeof(frame), &h, payload, sizeof(payload));
	if (len < 0)
		return -1;
	TIME_LOOP(0.5, ns, sink += et_icrc_compute(frame + ET_ETH_HLEN,
						   (size_t)len - ET_ETH_HLEN));
	(void)sink;
	bench_num(o, "icrc_gbps", (len - ET_ETH_HLEN) * 8.0 / ns);
	bench_num(o, "icrc_ns_4k", ns);
	return 0;
}

/* Build and parse whole frames in mbufs: 4 KB WRITE MIDDLE and an ACK. */
static int
bench_wire_one(struct bench_out *o, struct rte_mempool *mp, uint8_t opcode, uint32_t plen,
	       const char *build_key, const char *parse_key)
{
	static uint8_t payload[4096];
	struct rte_mbuf *ms[BATCH];
	struct et_roce_hdr h;
	struct et_roce_pkt pkt;
	double t0, build_s = 0, parse_s = 0;
	uint64_t n = 0;
	int i, err;

	sample_hdr(&h, opcode);
	while (build_s + parse_s < 1.0) {
		if (rte_pktmbuf_alloc_bulk(mp, ms, BATCH) != 0)
			return -1;
		t0 = bench_now_s();
		for (i = 0; i < BATCH; i++) {
			int len = et_roce_build(rte_pktmbuf_mtod(ms[i], uint8_t *),
						rte_pktmbuf_tailroom(ms[i]), &h,
						payload, plen);
			if (len < 0)
				return -1;
			ms[i]->data_len = ms[i]->pkt_len = (uint32_t)len;
			h.psn = et_psn_add(h.psn, 1);
		}
		build_s += bench_now_s() - t0;
		t0 = bench_now_s();
		for (i = 0; i < BATCH; i++) {
			err = et_roce_parse_mbuf(ms[i], &pkt, 0);
			if (err)
				return -1;
		}
		parse_s += bench_now_s() - t0;
		rte_pktmbuf_free_bulk(ms, BATCH);
		n += BATCH;
	}
	bench_num(o, build_key, build_s * 1e9 / n);
	bench_num(o, parse_key, parse_s * 1e9 / n);
	return 0;
}

static int
bench_wire(struct bench_out *o, struct rte_mempool *mp)
{
	return bench_wire_one(o, mp, ET_OP_WRITE_MIDDLE, 4096, "build_ns", "parse_ns") ||
	       bench_wire_one(o, mp, ET_OP_ACK, 0, "build_ack_ns", "parse_ack_ns");
}

static const struct {
	const char *name;
	int (*fn)(struct bench_out *o, struct rte_mempool *mp);
} benches[] = {
	{"icrc", bench_icrc},
	{"wire", bench_wire},
	{"qp", bench_qp},
	{"switch", bench_switch},
	{"endpoint", bench_endpoint},
	{"zerocopy", bench_zerocopy},
	{"fabric", bench_fabric},
};

#define N_BENCHES (sizeof(benches) / sizeof(benches[0]))

static void
usage(FILE *f)
{
	fprintf(f, "usage: ethereal-bench [EAL args --] [BENCHMARK ...]\n"
		   "  BENCHMARK  one of:");
	for (size_t b = 0; b < N_BENCHES; b++)
		fprintf(f, " %s", benches[b].name);
	fprintf(f, "\n"
		   "  all of them without one; one JSON object on stdout (README's table\n"
		   "  says what each key measures)\n"
		   "  --help     this (before or after --)\n"
		   "Without EAL arguments: hugepages when 256 MB of them are free, else\n"
		   "--no-huge -m 1024.  Exit: 0, 1 a benchmark failed, 2 an unknown benchmark.\n"
		   ET_CLI_EAL_HELP);
}

int
main(int argc, char **argv)
{
	/* without EAL arguments: hugepages when 256 MB of them are free, else
	 * 1 GB of ordinary memory; two lcores where there are two cores (the
	 * endpoint bench's receiver) */
	struct et_app_eal eal = {.lcores = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? "0-1" : "0",
				 .mem_mb = 1024, .huge_mb = 256, .telemetry = true};
	const char *names[N_BENCHES + 1] = {NULL};
	struct bench_out o;
	int consumed, i, rc = 0;
	size_t b;

	et_cli_program("ethereal-bench");
	if (et_cli_wants_help(argc, argv)) {
		usage(stdout);
		return ET_EXIT_OK;
	}
	consumed = et_app_eal_init(&eal, argc, argv);
	if (consumed < 0)
		return ET_EXIT_FAIL;
	consumed++; /* past the program's name */
	for (b = 0; b < N_BENCHES; b++)
		names[b] = benches[b].name;
	for (i = consumed; i < argc; i++)
		if (et_cli_choice("benchmark", names, argv[i]) < 0) {
			et_app_eal_cleanup();
			return ET_EXIT_USAGE;
		}
	pool = et_app_pool("bench", POOL_SIZE, RTE_MBUF_DEFAULT_DATAROOM + 4096);
	if (pool == NULL) {
		et_cli_error("cannot create mbuf pool");
		et_app_eal_cleanup();
		return 1;
	}
	o.obj = json_object();
	json_object_set_new(o.obj, "hugepages", json_boolean(rte_eal_has_hugepages()));
	bench_num(&o, "tsc_ghz", rte_get_tsc_hz() / 1e9);
	for (b = 0; b < N_BENCHES; b++) {
		bool wanted = consumed == argc;

		for (i = consumed; i < argc; i++)
			wanted |= strcmp(argv[i], benches[b].name) == 0;
		if (wanted && benches[b].fn(&o, pool) != 0) {
			et_cli_error("%s failed", benches[b].name);
			rc = 1;
		}
	}
	et_json_print(stdout, o.obj, 2);
	rte_mempool_free(pool);
	et_app_eal_cleanup();
	return rc;
}
