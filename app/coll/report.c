/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-coll's table (as nccl-tests': a row per size) and JSON.
 */
#include <inttypes.h>

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
	       c->p.verify ? ", verified" : "");
	printf("#%11s %10s %8s %8s %8s %8s %8s %7s %6s\n", "size(B)", "time(us)", "algbw",
	       "busbw", "retrans", "timeouts", "rerouted", "maxQPs", "wrong");
	printf("#%11s %10s %8s %8s\n", "per rank", "slowest", "(GB/s)", "(GB/s)");
	fflush(stdout); /* a watcher (scripts/testbed --fail) waits for the header */
}

void
coll_print_row(const struct coll *c, const struct row *r)
{
	const struct rank_fig *a = &r->all;
	double algbw = a->us > 0 ? (double)r->size / a->us / 1e3 : 0;

	printf("%12" PRIu64 " %10.1f %8.3f %8.3f %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7u %6s\n",
	       r->size, a->us, algbw, algbw * bus_factor(c), a->retransmits, a->timeouts,
	       a->rerouted, a->max_qps, c->p.verify ? (a->wrong ? "WRONG" : "0") : "N/A");
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
	rows = json_array();
	for (uint32_t i = 0; i < c->n_rows; i++) {
		const struct row *r = &c->rows[i];
		json_t *x = fig_json(&r->all, "cct_ns"), *ranks = json_array();

		et_json_set_u64(x, "size", r->size);
		for (uint32_t k = 0; k < c->o.world; k++)
			json_array_append_new(ranks, fig_json(&r->rank[k], "time_ns"));
		json_object_set_new(x, "per_rank", ranks);
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "sizes", rows);
	/* what may have changed the plans of --plan after its first step */
	json_t *first = fig_json(&c->first, "cct_ns");

	et_json_set_u64(first, "size", c->first_size);
	json_object_set_new(o, "first_collective", first);
	return et_json_write(file, o);
}
