/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-coll's table (as nccl-tests': a row per size) and JSON.
 */
#include <inttypes.h>

#include <rte_common.h>

#include "coll.h"
#include "et_json.h"

/* nccl-tests' bus bandwidth: what each rank's link carried, so that the
 * figure is comparable across rank counts. */
static double
bus_factor(const struct coll *c)
{
	double n = c->o.world;

	if (c->p.kind == ET_COLL_ALLREDUCE)
		return 2 * (n - 1) / n;
	return (n - 1) / n;
}

static const char *const average_names[] = {"rank 0's", "the ranks' average", "the least",
					     "the most"};

void
coll_print_header(const struct coll *c)
{
	char lb[32];

	if (c->trace) {
		printf("# ethereal-coll: trace %s (%u nodes), collectives by %s, %u ranks, --lb %s, "
		       "seed %" PRIu64 "\n", c->o.f.trace, c->trace->n_nodes,
		       et_coll_algo_name(c->p.algo), c->o.world, et_lb_name(&c->p.lb, lb, sizeof(lb)),
		       c->p.seed);
		printf("#%12s %12s %12s %8s %8s %8s %8s %7s\n", "iteration", "comm", "compute",
		       "retrans", "timeouts", "rerouted", "badpaths", "maxQPs");
		printf("#%12s %12s %12s\n", "(us)", "(us)", "(us)");
		fflush(stdout);
		return;
	}
	printf("# ethereal-coll: %s by %s, %u ranks, --lb %s, seed %" PRIu64 "%s\n",
	       et_coll_kind_name(c->p.kind), et_coll_algo_name(c->p.algo), c->o.world,
	       et_lb_name(&c->p.lb, lb, sizeof(lb)), c->p.seed,
	       c->p.verify ? ", checked" : "");
	printf("#  -b %" PRIu64 " -e %" PRIu64 " -f %u -i %" PRIu64 " -n %u -w %u -c %d -d %s -o %s "
	       "-a %u: time is each rank's mean over the iterations, %s\n", c->o.min, c->o.max,
	       c->o.factor, c->o.step, c->o.iters, c->o.warmup, c->p.verify,
	       c->o.all_dtypes ? "all" : et_coll_dtype_name(c->p.dtype),
	       c->o.all_ops ? "all" : et_coll_op_name(c->p.op), c->o.average,
	       average_names[c->o.average]);
	printf("#\n");
	printf("# %10s  %12s  %8s  %6s  %6s  %30s\n", "", "", "", "", "", "in-place");
	printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s %8s %8s %8s %7s\n", "size", "count",
	       "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "retrans", "timeouts",
	       "rerouted", "maxQPs");
	printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
	       "(us)", "(GB/s)", "(GB/s)");
	fflush(stdout); /* a watcher (scripts/testbed --fail) waits for the header */
}

/* The table's time of r, as -a asks: of the ranks' means over the
 * iterations, rank 0's, their average, the least or the most. */
static double
row_time_us(const struct coll *c, const struct row *r)
{
	double t = r->rank[0].us;

	for (uint32_t k = 1; k < c->o.world; k++) {
		double x = r->rank[k].us;

		t = c->o.average == 1 ? t + x : c->o.average == 2 ? RTE_MIN(t, x)
		    : c->o.average == 3 ? RTE_MAX(t, x) : t;
	}
	return c->o.average == 1 ? t / c->o.world : t;
}

/* nccl-tests' redop column: none for a collective that moves data */
static const char *
op_name(const struct coll *c, const struct row *r)
{
	return et_coll_reduces(c->p.kind) ? et_coll_op_name(r->at.op) : "none";
}

static double
algbw_gbps(const struct row *r, double us)
{
	return us > 0 ? (double)r->size / us / 1e3 : 0;
}

void
coll_print_row(const struct coll *c, const struct row *r)
{
	const struct rank_fig *a = &r->all;
	double us = row_time_us(c, r), algbw = algbw_gbps(r, us);
	char time[32], wrong[24];

	/* nccl-tests' widths and precision */
	snprintf(time, sizeof(time), us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
	snprintf(wrong, sizeof(wrong), c->p.verify ? "%" PRIu64 : "N/A", a->wrong);
	printf("  %10" PRIu64 "  %12" PRIu64 "  %8s  %6s  %6i  %7s  %6.2f  %6.2f  %6s %8" PRIu64
	       " %8" PRIu64 " %8" PRIu64 " %7u\n",
	       r->size, r->count, et_coll_dtype_name(r->at.dtype), op_name(c, r), -1, time, algbw,
	       algbw * bus_factor(c), wrong, a->retransmits, a->timeouts, a->rerouted, a->max_qps);
	fflush(stdout);
}

/* The wrong elements of every size, and the mean bus bandwidth of the
 * sizes (nccl-tests' "Avg bus bandwidth"). */
static void
sweep_totals(const struct coll *c, uint64_t *wrong, double *busbw)
{
	*wrong = 0;
	*busbw = 0;
	for (uint32_t i = 0; i < c->n_rows; i++) {
		*wrong += c->rows[i].all.wrong;
		*busbw += algbw_gbps(&c->rows[i], row_time_us(c, &c->rows[i])) * bus_factor(c);
	}
	if (c->n_rows)
		*busbw /= c->n_rows;
}

void
coll_print_end(const struct coll *c)
{
	uint64_t wrong;
	double busbw;

	sweep_totals(c, &wrong, &busbw);
	printf("# Out of bounds values : %" PRIu64 " %s\n", wrong, wrong ? "FAILED" : "OK");
	printf("# Avg bus bandwidth    : %g \n", busbw);
	printf("#\n");
	fflush(stdout);
}

void
coll_print_trace(const struct coll *c)
{
	struct rank_fig a = coll_fig_all(c);

	printf(" %12.1f %12.1f %12.1f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7u\n",
	       a.us, a.comm_us, et_trace_compute_ns(c->trace) / 1e3, a.retransmits, a.timeouts,
	       a.rerouted, a.paths_marked_bad, a.max_qps);
	fflush(stdout);
}

/* A rank's figures, or all ranks' (time: its name). */
static json_t *
fig_json(const struct rank_fig *f, const char *time)
{
	json_t *x = json_object();

	et_json_set_u64(x, time, (uint64_t)(f->us * 1e3));
	if (f->comm_us > 0)
		et_json_set_u64(x, "comm_ns", (uint64_t)(f->comm_us * 1e3));
	et_json_set_u64(x, "retransmits", f->retransmits);
	et_json_set_u64(x, "timeouts", f->timeouts);
	et_json_set_u64(x, "rerouted", f->rerouted);
	et_json_set_u64(x, "paths_marked_bad", f->paths_marked_bad);
	et_json_set_u64(x, "max_qps", f->max_qps);
	et_json_set_u64(x, "wrong", f->wrong);
	return x;
}

int
coll_write_json(const struct coll *c, const char *file)
{
	json_t *o = json_object(), *rows;
	char lb[32];

	json_object_set_new(o, "collective",
			    json_string(c->trace ? "trace" : et_coll_kind_name(c->p.kind)));
	json_object_set_new(o, "algo", json_string(et_coll_algo_name(c->p.algo)));
	json_object_set_new(o, "lb", json_string(et_lb_name(&c->p.lb, lb, sizeof(lb))));
	et_json_set_u64(o, "ranks", c->o.world);
	et_json_set_u64(o, "seed", c->p.seed);
	json_object_set_new(o, "verified", et_json_verdict(c->p.verify, true));
	if (c->trace) {
		/* as ethereal-fabric --trace's JSON names them */
		struct rank_fig a = coll_fig_all(c);
		json_t *x = fig_json(&a, "iteration_ns"), *ranks = json_array();

		json_object_set_new(x, "trace", json_string(c->o.f.trace));
		et_json_set_u64(x, "comm_ns", (uint64_t)(a.comm_us * 1e3));
		et_json_set_u64(x, "compute_ns", et_trace_compute_ns(c->trace));
		for (uint32_t k = 0; k < c->o.world; k++)
			json_array_append_new(ranks, fig_json(&c->fig[k], "iteration_ns"));
		json_object_set_new(x, "per_rank", ranks);
		json_object_update(o, x);
		json_decref(x);
		return et_json_write(file, o);
	}
	json_object_set_new(o, "average", json_string(average_names[c->o.average]));
	et_json_set_u64(o, "iters", c->o.iters);
	et_json_set_u64(o, "warmup_iters", c->o.warmup);
	{
		uint64_t wrong;
		double busbw;

		sweep_totals(c, &wrong, &busbw);
		et_json_set_u64(o, "out_of_bounds", wrong);
		json_object_set_new(o, "avg_busbw_gbps", et_json_fixed(busbw, 6));
	}
	rows = json_array();
	for (uint32_t i = 0; i < c->n_rows; i++) {
		const struct row *r = &c->rows[i];
		/* cct_ns: the slowest rank's (the collective's end), time_ns
		 * the table's (-a) */
		json_t *x = fig_json(&r->all, "cct_ns"), *ranks = json_array();
		double us = row_time_us(c, r);

		et_json_set_u64(x, "size", r->size);
		et_json_set_u64(x, "count", r->count);
		json_object_set_new(x, "dtype", json_string(et_coll_dtype_name(r->at.dtype)));
		json_object_set_new(x, "op", json_string(op_name(c, r)));
		et_json_set_u64(x, "time_ns", (uint64_t)(us * 1e3));
		json_object_set_new(x, "algbw_gbps", et_json_fixed(algbw_gbps(r, us), 6));
		json_object_set_new(x, "busbw_gbps",
				    et_json_fixed(algbw_gbps(r, us) * bus_factor(c), 6));
		for (uint32_t k = 0; k < c->o.world; k++)
			json_array_append_new(ranks, fig_json(&r->rank[k], "time_ns"));
		json_object_set_new(x, "per_rank", ranks);
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "sizes", rows);
	/* what may have changed the plans of --plan after its first step */
	json_t *first = fig_json(&c->first, "cct_ns");

	et_json_set_u64(first, "size", c->first_size);
	et_json_set_u64(first, "ended_mono_ms", c->first_end_mono_ms);
	json_object_set_new(o, "first_collective", first);
	return et_json_write(file, o);
}
