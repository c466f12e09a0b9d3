/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-fabric's inputs (ethereal-coll reads its conf with them too):
 * the command line, the conf it names, and a
 * workload file, turned into the parameters of a fabric (sim/et_fabric).
 */
#ifndef ET_FABRIC_CLI_H
#define ET_FABRIC_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "coll/et_trace.h"
#include "host/et_process.h"
#include "sim/et_fabric.h"

struct cli {
	const char *config, *lb, *collective, *algo, *size, *workload, *trace, *clock, *fail;
	const char *json, *pcap, *faults, *plan;
	const char *dtype, *op;     /* nccl-tests' names: float, sum */
	uint64_t seed;
	bool seed_set, verify, quiet, check;
	uint32_t from_conf; /* bit per conf_opts[] entry: the value came from the conf */
};

/* A workload: one collective per line, "KIND SIZE" ('#' starts a comment),
 * run one after the other with --algo; the result is their sum.  The whole
 * file is read and checked before anything runs. */
struct workload {
	uint32_t n;
	struct {
		enum et_coll_kind kind;
		uint64_t size;
	} *step;
};

void usage(FILE *o);
/* Each 0, or -1 after a one-line message. */
int parse_cli(int argc, char **argv, struct cli *o);
int load_conf(const char *file, struct et_fabric_params *p, struct cli *o);
int finish_params(struct cli *o, struct et_fabric_params *p);
/* Every line checked as check_collective() checks, FILE:LINE. */
int load_workload(const char *file, const struct et_fabric_params *p, struct workload *w);
/* Whether kind of bytes per rank can run over ranks with p's algo, dtype,
 * op and chunk (coll/et_coll_check, the one judgement): 0, or -1 after
 * "[WHERE: ]KIND by ALGO of BYTES bytes over N ranks: why". */
int check_collective(const char *where, const struct et_fabric_params *p, enum et_coll_kind kind,
		     uint32_t ranks, uint64_t bytes);
/* A trace (coll/et_trace) for the fabric of p, every collective of it
 * checked with p's algorithm before anything runs. */
int load_trace(const char *file, const struct et_fabric_params *p, struct et_trace *t);
/* --plan FILE: each subflow as its host planned it, a line each
 * (et_rt_sub_format); ethereal-coll writes the same for its rank. */
void plan_write(void *fp, const struct et_rt_host *h, const struct et_rt_sub *s);

/* The values the conf gave were copied. */
void cli_free(struct cli *o);

/* A process that is one host of the fabric on a real port (the libfabric
 * provider, the verbs libraries): the conf read as ethereal-coll reads it
 * (NULL: the defaults), then the policy lb over it (NULL: the conf's),
 * and its hosts' runtime conf and reconnect time into pc (its other
 * fields untouched).  With no conf, the RDMA tools' RTO (their
 * timeout 14: 67 ms; processes share cores) and not the emulator's 1 ms;
 * at most 6 retries either way (7, "forever", would hang a sender whose
 * peer exited).  0, or -1 after the message. */
#define ET_PROCESS_DEFAULT_RTO_NS 67108864ull
int et_fabric_conf_process(const char *conf, const char *lb, struct et_process_conf *pc);

#endif /* ET_FABRIC_CLI_H */
