/* SPDX-License-Identifier: BSD-3-Clause
 * ethereal-fabric: a whole leaf-spine or fat-tree in one DPDK process, a
 * collective run on it through one load-balancing policy, its completion
 * time and counters as a table and as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>

#include "et_app_eal.h"
#include "et_cli.h"
#include "et_json.h"
#include "et_fabric_cli.h"
#include "sim/et_dag.h"

/* What one run, or a workload's runs summed, gives. */
struct outcome {
	uint32_t n_hosts, runs;
	uint64_t cct_ns, lower_bound_ns;
	struct et_fabric_stats st;
	uint32_t bad;
	uint64_t bytes_verified;
	char error[256];
	double wall_s;
	uint64_t passes, turns;    /* the event loop's work (sim/et_sim.c) */
	struct et_lane_speed lanes[8]; /* and each lane's (sim/et_lanes.c) */
	uint32_t n_lanes;
	uint32_t pool_mbufs;       /* the most the frame pool grew to */
	uint64_t frames_held;      /* a failed run's frames still queued or on a link */
	struct et_dag_result dag;  /* a trace's times */
};

/* Progress on stderr for a long run at a terminal: what is being done and
 * for how long, every 10 s after the first 5 (a 512-host fabric takes
 * most of a minute).  The main thread only stores; this thread only prints. */
static _Atomic uint32_t progress_step, progress_steps;
static _Atomic int progress_done;

static void *
progress_thread(void *arg)
{
	uint64_t next = 5, elapsed = 0;

	(void)arg;
	while (!atomic_load(&progress_done)) {
		sleep(1);
		if (++elapsed < next || atomic_load(&progress_done))
			continue;
		next += 10;
		if (atomic_load(&progress_steps) > 1)
			et_info("collective %u/%u, %" PRIu64 " s so far",
				atomic_load(&progress_step), atomic_load(&progress_steps), elapsed);
		else
			et_info("running, %" PRIu64 " s so far", elapsed);
	}
	return NULL;
}

/* The fabric of p; false (and out's error) when it cannot be built. */
static bool
build(struct et_fabric *f, const struct et_fabric_params *p, struct outcome *out)
{
	if (et_fabric_build(f, p) == 0)
		return true;
	snprintf(out->error, sizeof(out->error), "%s", f->error);
	et_fabric_free(f);
	return false;
}

/* What a run of f between t0 and t1 adds to out: its counters, the loop's
 * wall time and work. */
static void
add_run(struct outcome *out, const struct et_fabric *f, const struct timespec *t0,
	const struct timespec *t1)
{
	out->n_hosts = f->n_hosts;
	et_ctr_add(&et_fabric_ctrs, &out->st, &f->st);
	out->wall_s += (t1->tv_sec - t0->tv_sec) + (t1->tv_nsec - t0->tv_nsec) / 1e9;
	out->passes += f->passes;
	out->turns += f->turns;
	out->n_lanes = f->n_lanes;
	if (f->pool_mbufs > out->pool_mbufs)
		out->pool_mbufs = f->pool_mbufs;
	out->frames_held += f->frames_held;
	for (uint32_t k = 0; k < f->n_lanes; k++) {
		out->lanes[k].busy_s += f->lane_speed[k].busy_s;
		out->lanes[k].wait_s += f->lane_speed[k].wait_s;
		out->lanes[k].turns += f->lane_speed[k].turns;
	}
}

/* Build, run, check and tear down one fabric; 2 when it cannot be built. */
static int
run_one(const struct et_fabric_params *p, struct outcome *out)
{
	struct et_fabric f;
	struct timespec t0, t1;
	int rc;

	if (!build(&f, p, out))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = et_fabric_run(&f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	et_fabric_collect(&f);
	if (rc == 0 && f.error[0])
		rc = -1; /* the accounting did not close, or mbufs leaked */
	if (rc == 0 && p->verify && et_fabric_verify(&f, &out->bytes_verified)) {
		out->bad++;
		snprintf(out->error, sizeof(out->error), "%s %s %" PRIu64 ": ranks hold wrong data",
			 et_coll_kind_name(p->kind), et_coll_algo_name(p->algo), p->size);
	}
	if (rc)
		snprintf(out->error, sizeof(out->error), "%s", f.error);
	out->runs++;
	out->cct_ns += et_fabric_cct_ns(&f);
	out->lower_bound_ns += et_fabric_lower_bound_ns(&f);
	add_run(out, &f, &t0, &t1);
	et_fabric_free(&f);
	return rc || out->bad ? 1 : 0;
}

/* Lanes that found the frame pool empty raced for its last frames: who
 * got one depended on the lcores' timing, so the answer may differ from
 * one lane's (the only case where it may). */
static bool
lanes_raced(const struct outcome *r)
{
	return r->n_lanes > 1 && r->st.alloc_fail > 0;
}

/* How fast the event loop went: wall-clock figures, so a JSON compared
 * across runs leaves this object out (as it does wall_s); and whether the
 * lanes raced. */
static json_t *
speed_json(const struct outcome *r)
{
	json_t *j = json_object();
	double hops = (double)r->st.packet_hops;

	json_object_set_new(j, "hops_per_s", et_json_fixed(r->wall_s > 0 ? hops / r->wall_s : 0, 0));
	json_object_set_new(j, "ns_per_hop", et_json_fixed(hops > 0 ? r->wall_s * 1e9 / hops : 0, 1));
	et_json_set_u64(j, "passes", r->passes);
	et_json_set_u64(j, "node_turns", r->turns);
	json_object_set_new(j, "hugepages", json_boolean(rte_eal_has_hugepages()));
	json_object_set_new(j, "lcores", json_integer(rte_lcore_count()));
	json_object_set_new(j, "same_as_one_lane", json_boolean(!lanes_raced(r)));
	/* how far the pool grew depends on the lcores' caches too */
	et_json_set_u64(j, "pool_mbufs", r->pool_mbufs);
	/* virtual time: where each lane's wall time went (the busiest one
	 * sets the pace; the others wait for it at the barriers) */
	if (r->n_lanes) {
		json_t *a = json_array();

		for (uint32_t k = 0; k < r->n_lanes; k++) {
			json_t *l = json_object();

			json_object_set_new(l, "busy_s", et_json_fixed(r->lanes[k].busy_s, 3));
			json_object_set_new(l, "wait_s", et_json_fixed(r->lanes[k].wait_s, 3));
			et_json_set_u64(l, "node_turns", r->lanes[k].turns);
			json_array_append_new(a, l);
		}
		json_object_set_new(j, "lanes", a);
	}
	return j;
}

/* Each collective of the workload; a line for each unless quiet. */
static int
run_workload(const struct workload *w, struct et_fabric_params *p, struct outcome *out,
	     bool quiet)
{
	int rc = 0;

	atomic_store(&progress_steps, w->n);
	for (uint32_t i = 0; rc == 0 && i < w->n; i++) {
		uint64_t cct = out->cct_ns, bound = out->lower_bound_ns, retx = out->st.retransmits;

		atomic_store(&progress_step, i + 1);
		p->kind = w->step[i].kind;
		p->size = w->step[i].size;
		p->seed++; /* every collective its own draws, reproducibly */
		rc = run_one(p, out);
		if (!quiet && rc != 2)
			printf("collective %u/%u: %s %" PRIu64 " bytes, seed %" PRIu64 ": cct %.2f us, "
			       "bound %.2f us, retx %" PRIu64 "%s\n",
			       i + 1, w->n, et_coll_kind_name(p->kind), p->size, p->seed,
			       (out->cct_ns - cct) / 1e3, (out->lower_bound_ns - bound) / 1e3,
			       out->st.retransmits - retx, rc ? ", FAILED" : "");
	}
	return rc;
}

/* A trace's iteration on one fabric; its nodes' times unless quiet; 2 when
 * it cannot be built. */
static int
run_trace(const struct et_trace *t, const struct et_fabric_params *p, struct outcome *out,
	  bool quiet)
{
	struct et_fabric f;
	struct timespec t0, t1;
	int rc;

	if (!build(&f, p, out))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = et_dag_run(&f, t, p->algo, p->chunk, &out->dag);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == 0 && f.error[0])
		rc = -1; /* the accounting did not close, or mbufs leaked */
	if (rc)
		snprintf(out->error, sizeof(out->error), "%s", f.error);
	out->runs = out->dag.collectives;
	/* as for a workload: the time in communication, the paper's metric */
	out->cct_ns = out->dag.comm_ns;
	add_run(out, &f, &t0, &t1); /* out is empty: a trace runs once */
	et_fabric_free(&f);
	if (!quiet && rc != -EINVAL)
		for (uint32_t k = 0; k < t->n_nodes; k++) {
			const struct et_trace_node *x = &t->nodes[k];
			const struct et_dag_node_time *nt = &out->dag.node[k];
			char what[96];

			if (x->type == ET_TRACE_COMPUTE)
				snprintf(what, sizeof(what), "compute %.2f us", x->duration_ns / 1e3);
			else
				snprintf(what, sizeof(what), "%s %" PRIu64 " bytes on %s",
					 et_coll_kind_name(x->kind), x->size, t->groups[x->group].name);
			if (nt->done)
				printf("node %-12s %-44s %12.2f .. %12.2f us\n", x->name, what,
				       nt->start_ns / 1e3, nt->end_ns / 1e3);
			else
				printf("node %-12s %-44s %12s\n", x->name, what, "not done");
		}
	return rc == -EINVAL ? 2 : rc ? 1 : 0;
}

/* QPs per host as the paper counts them (maxqp above): the hosts' spread,
 * and the histogram's buckets that hold any. */
static void
print_qps(const struct et_fabric_stats *s, bool workload)
{
	const char *sep = "; hosts with ";

	printf("QPs per host (most its NIC held at once, requester and responder ends%s): max %" PRIu64
	       ", p99 %" PRIu64 ", p50 %" PRIu64,
	       workload ? ", largest collective" : "", s->max_qps_per_host, s->qps_per_host_p99,
	       s->qps_per_host_p50);
	for (int i = 0; i < ET_FABRIC_QPS_BUCKETS; i++) {
		if (s->qps_per_host_hist[i] == 0)
			continue;
		if (i == ET_FABRIC_QPS_BUCKETS - 1)
			printf("%s>%s: %" PRIu64, sep, et_fabric_qps_bucket(i - 1), s->qps_per_host_hist[i]);
		else
			printf("%s<=%s: %" PRIu64, sep, et_fabric_qps_bucket(i), s->qps_per_host_hist[i]);
		sep = ", ";
	}
	printf("\n");
}

/* The table and the JSON; -1 when the JSON cannot be written. */
static int
report(const struct et_fabric_params *p, const struct cli *o, const struct outcome *r)
{
	char size[24], coll[32];
	const struct et_fabric_stats *s = &r->st;
	char lb[32], topo[64];
	const char *verified = !p->verify ? "null" : r->bad || r->error[0] ? "false" : "true";

	et_lb_name(&p->lb, lb, sizeof(lb));
	/* a workload's row: its collectives summed (each has its line above) */
	if (o->workload) {
		snprintf(coll, sizeof(coll), "workload(%u)", r->runs);
		snprintf(size, sizeof(size), "-");
	} else if (o->trace) {
		snprintf(coll, sizeof(coll), "trace(%u)", r->runs);
		snprintf(size, sizeof(size), "-");
	} else {
		snprintf(coll, sizeof(coll), "%s", et_coll_kind_name(p->kind));
		snprintf(size, sizeof(size), "%" PRIu64, p->size);
	}
	if (p->t.kind == ET_TOPO_LEAF_SPINE)
		snprintf(topo, sizeof(topo), "leaf-spine %ux%ux%u", p->t.tors, p->t.spines,
			 p->t.hosts_per_tor);
	else
		snprintf(topo, sizeof(topo), "fat-tree %u pods x %u ToR x %u hosts", p->t.pods,
			 p->t.tors_per_pod, p->t.hosts_per_tor);
	if (!o->quiet) {
		printf("%-10s %-14s %-5s %10s %12s %12s %7s %6s %8s %8s %8s %10s %8s\n", "lb",
		       "collective", "algo", "size", "cct_us", "bound_us", "ratio", "maxqp",
		       "retx", "timeouts", "drops", "ecn", "verified");
		printf("%-10s %-14s %-5s %10s %12.2f %12.2f %7.3f %6" PRIu64 " %8" PRIu64
		       " %8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %8s\n",
		       lb, coll, et_coll_algo_name(p->algo), size,
		       r->cct_ns / 1e3, r->lower_bound_ns / 1e3,
		       r->lower_bound_ns ? (double)r->cct_ns / r->lower_bound_ns : 0,
		       s->max_qps_per_host, s->retransmits, s->timeouts, s->drops, s->ecn_marks,
		       !p->verify ? "off" : verified[0] == 't' ? "ok" : "FAILED");
		printf("%s, %u hosts, %.0f Gbit/s, %s clock, seed %" PRIu64 "%s, %s %s, %s: %" PRIu64
		       " packet-hops in %.2f s (%.2f M/s, %.0f ns each)\n",
		       topo, r->n_hosts, p->host_link.rate_bps / 1e9,
		       p->real_clock ? "real" : "virtual", p->seed, o->workload ? " (+1 per collective)" : "",
		       et_coll_dtype_name(p->dtype), et_coll_op_name(p->op),
		       rte_eal_has_hugepages() ? "hugepages" : "no hugepages",
		       s->packet_hops, r->wall_s, s->packet_hops / (r->wall_s > 0 ? r->wall_s : 1) / 1e6,
		       s->packet_hops ? r->wall_s * 1e9 / s->packet_hops : 0);
		if (o->trace)
			printf("iteration %.2f us: communication %.2f us (cct_us), compute %.2f us, "
			       "overlapped %.2f us\n",
			       r->dag.iteration_ns / 1e3, r->dag.comm_ns / 1e3, r->dag.compute_ns / 1e3,
			       ((double)r->dag.comm_ns + r->dag.compute_ns - r->dag.iteration_ns) / 1e3);
		print_qps(s, o->workload != NULL);
	}
	/* a NIC builds frames from host memory and never waits for buffers;
	 * the one pool here also holds every frame the switches queue */
	if (s->alloc_fail)
		et_warn("the frame pool (%u mbufs) ran dry %" PRIu64 " times: hosts waited for "
			"buffers as a NIC would not, and timers may have fired for it%s; give "
			"[run] mbufs more, and EAL the memory", r->pool_mbufs, s->alloc_fail,
			lanes_raced(r) ? "; the lanes raced for its last frames, so this answer "
					 "may differ from one lane's (\"same_as_one_lane\": false)"
				       : "");
	if (o->json) {
		json_t *j = json_object();

		json_object_set_new(j, "topology", json_string(topo));
		et_json_set_u64(j, "hosts", r->n_hosts);
		json_object_set_new(j, "link_gbps", et_json_fixed(p->host_link.rate_bps / 1e9, 3));
		json_object_set_new(j, "lb", json_string(lb));
		json_object_set_new(j, "collective",
				    json_string(o->workload ? "workload" : o->trace ? "trace" : coll));
		json_object_set_new(j, "algo", json_string(et_coll_algo_name(p->algo)));
		et_json_set_u64(j, "size_bytes", o->workload || o->trace ? 0 : p->size);
		json_object_set_new(j, "workload", json_string(o->workload ? o->workload : ""));
		et_json_set_u64(j, "collectives", r->runs);
		if (o->trace) {
			json_object_set_new(j, "trace", json_string(o->trace));
			et_json_set_u64(j, "iteration_ns", r->dag.iteration_ns);
			et_json_set_u64(j, "comm_ns", r->dag.comm_ns);
			et_json_set_u64(j, "compute_ns", r->dag.compute_ns);
		}
		json_object_set_new(j, "clock", json_string(p->real_clock ? "real" : "virtual"));
		et_json_set_u64(j, "seed", o->seed_set ? o->seed : p->seed);
		et_json_set_u64(j, "cct_ns", r->cct_ns);
		et_json_set_u64(j, "lower_bound_ns", r->lower_bound_ns);
		json_object_set_new(j, "verified", et_json_verdict(p->verify, verified[0] == 't'));
		et_json_set_counters(j, &et_fabric_ctrs, s);
		et_json_set_u64(j, "bytes_verified", r->bytes_verified);
		et_json_set_u64(j, "failed_links", p->n_fails);
		json_object_set_new(j, "error", json_string(r->error));
		json_object_set_new(j, "wall_s", et_json_fixed(r->wall_s, 3));
		json_object_set_new(j, "speed", speed_json(r));
		return et_json_write(o->json, j);
	}
	return 0;
}

/* MemAvailable of /proc/meminfo, bytes; 0 when it cannot be read. */
static uint64_t
mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb = 0;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb << 10;
}

/* The least memory the run takes (its largest collective's), against what
 * the machine has: refused before anything starts, not failed halfway
 * ("host 3: out of memory").  0, or -1 after the message. */
static int
check_memory(const struct et_fabric_params *p, const struct workload *w)
{
	struct et_fabric_params q = *p;
	uint64_t need = 0, payload = 0, avail = mem_available();

	for (uint32_t i = 0; i < (w->n ? w->n : 1); i++) {
		uint64_t pl, b;

		if (w->n) {
			q.kind = w->step[i].kind;
			q.size = w->step[i].size;
		}
		b = et_fabric_mem_bytes(&q, &pl);
		if (b > need) {
			need = b;
			payload = pl;
		}
	}
	if (avail == 0 || need <= avail)
		return 0;
	return et_cli_error("the run needs at least %" PRIu64 " MB: %" PRIu64 " MB of payload%s and a "
			    "frame pool of %" PRIu64 " MB; this machine has %" PRIu64 " MB available%s",
			    need >> 20, payload >> 20,
			    p->verify ? " (--verify: every host its own)" : "",
			    (need - payload) >> 20, avail >> 20,
			    p->verify ? " (without --verify the hosts share one region)" : "");
}

int
main(int argc, char **argv)
{
	struct cli o = {0};
	struct et_fabric_params p;
	struct outcome r = {0};
	struct workload w = {0};
	struct et_trace t = {0};
	struct et_app_eal eal = {.lcores = "0"};
	pthread_t progress;
	bool progress_on;
	int sep, rc;

	if (et_cli_wants_help(argc, argv)) {
		usage(stdout);
		return ET_EXIT_OK;
	}
	et_cli_program("ethereal-fabric");
	sep = et_app_args_start(argc, argv); /* the conf sizes the EAL's memory */
	et_fabric_params_default(&p);
	if (parse_cli(argc - sep, argv + sep, &o) || load_conf(o.config, &p, &o) ||
	    finish_params(&o, &p) || (o.workload && load_workload(o.workload, &p, &w)) ||
	    (o.trace && load_trace(o.trace, &p, &t)) ||
	    (!o.workload && !o.trace &&
	     check_collective(NULL, &p, p.kind, et_topo_hosts(&p.t), p.size)) ||
	    check_memory(&p, &w)) {
		free(w.step);
		et_trace_free(&t);
		cli_free(&o);
		return ET_EXIT_USAGE;
	}
	if (o.check) { /* scripts/sweep checks every point before the first runs */
		free(w.step);
		et_trace_free(&t);
		cli_free(&o);
		return ET_EXIT_OK;
	}
	/* without EAL arguments: one lcore, the frame pool and 512 MB more */
	eal.mem_mb = eal.huge_mb = (et_fabric_pool_bytes(&p) >> 20) + 512;
	if (et_app_eal_init(&eal, argc, argv) < 0) {
		free(w.step);
		et_trace_free(&t);
		cli_free(&o);
		return ET_EXIT_FAIL;
	}
	if (o.plan) {
		p.plan_ctx = fopen(o.plan, "w");
		p.on_plan = p.plan_ctx ? plan_write : NULL;
		if (p.plan_ctx == NULL)
			et_warn("--plan %s: %s: no plan written", o.plan, strerror(errno));
	}
	progress_on = isatty(STDERR_FILENO) && pthread_create(&progress, NULL, progress_thread, NULL) == 0;
	rc = o.workload ? run_workload(&w, &p, &r, o.quiet)
	     : o.trace ? run_trace(&t, &p, &r, o.quiet)
		       : run_one(&p, &r);
	if (progress_on) {
		atomic_store(&progress_done, 1);
		pthread_join(progress, NULL);
	}
	free(w.step);
	et_trace_free(&t);
	if (rc != 2) {
		if (o.workload)
			p.seed = o.seed_set ? o.seed : p.seed - r.runs;
		if (report(&p, &o, &r) && rc == 0)
			rc = ET_EXIT_FAIL;
	}
	if (rc && r.error[0])
		et_cli_error("%s", r.error);
	if (rc && r.st.frames_made) /* a failed run is not drained: where its frames are */
		et_warn("the failed run's frames: %" PRIu64 " made, %" PRIu64 " received or dropped, "
			"%" PRIu64 " still queued or on a link%s", r.st.frames_made,
			r.st.frames_accounted, r.frames_held,
			r.st.frames_made == r.st.frames_accounted + r.frames_held
				? ""
				: " (they do not add up: a frame was lost uncounted)");
	et_dag_result_free(&r.dag);
	if (p.plan_ctx && fclose(p.plan_ctx) && rc == 0)
		rc = et_cli_error("--plan %s: %s", o.plan, strerror(errno)) ? ET_EXIT_FAIL : 0;
	et_app_eal_cleanup();
	cli_free(&o);
	return rc;
}
