/* SPDX-License-Identifier: BSD-3-Clause
 * Traces: the parser (a good file read whole, each kind of error named
 * FILE:LINE) and their execution on a small fabric (sim/et_dag): compute
 * and communication overlap where the dependencies allow, and add up where
 * they do not.
 */
#include "et_test.h"

#include <stdio.h>

#include "coll/et_trace.h"
#include "sim/et_dag.h"
#include "sim/et_fabric.h"

/* ---- the parser ---- */

static const char good[] =
	"# a comment line\n"
	"ranks 16   # trailing comment\n"
	"group mp 4 1\n"
	"group dp 4 4\n"
	"\n"
	"compute fwd 120us\n"
	"comm ag allgather 1M mp after fwd\n"
	"compute bwd 1.5ms after ag\n"
	"comm ar allreduce 65536 dp after bwd\n"
	"comm rs reducescatter 64K mp after bwd\n"
	"compute opt 800ns after ar,rs\n";

static void
test_parse_good(void **state)
{
	struct et_trace t;
	char err[256];

	(void)state;
	assert_int_equal(et_trace_parse(&t, good, "g.trace", err, sizeof(err)), 0);
	assert_int_equal(t.ranks, 16);
	assert_int_equal(t.n_groups, 2);
	assert_string_equal(t.groups[1].name, "dp");
	assert_int_equal(t.groups[1].size, 4);
	assert_int_equal(t.groups[1].stride, 4);
	assert_int_equal(t.n_nodes, 6);
	assert_string_equal(t.nodes[0].name, "fwd");
	assert_int_equal(t.nodes[0].type, ET_TRACE_COMPUTE);
	assert_int_equal(t.nodes[0].duration_ns, 120000);
	assert_int_equal(t.nodes[0].n_deps, 0);
	assert_int_equal(t.nodes[0].line, 6);
	assert_int_equal(t.nodes[1].type, ET_TRACE_COMM);
	assert_int_equal(t.nodes[1].kind, ET_COLL_ALLGATHER);
	assert_int_equal(t.nodes[1].size, 1 << 20);
	assert_int_equal(t.nodes[1].group, 0);
	assert_int_equal(t.nodes[1].n_deps, 1);
	assert_int_equal(t.nodes[1].deps[0], 0);
	assert_int_equal(t.nodes[2].duration_ns, 1500000);
	assert_int_equal(t.nodes[3].group, 1);
	assert_int_equal(t.nodes[4].size, 65536);
	assert_int_equal(t.nodes[5].duration_ns, 800);
	assert_int_equal(t.nodes[5].n_deps, 2);
	assert_int_equal(t.nodes[5].deps[0], 3);
	assert_int_equal(t.nodes[5].deps[1], 4);
	/* successors, in the order of the nodes that name them */
	assert_int_equal(t.nodes[2].n_succ, 2);
	assert_int_equal(t.nodes[2].succ[0], 3);
	assert_int_equal(t.nodes[2].succ[1], 4);
	assert_int_equal(t.nodes[4].n_succ, 1);
	assert_int_equal(t.nodes[4].succ[0], 5);
	assert_int_equal(t.nodes[5].n_succ, 0);
	et_trace_free(&t);
	et_trace_free(&t); /* twice is safe */
}

/* The last line need not end the file; CR LF is fine. */
static void
test_parse_line_ends(void **state)
{
	struct et_trace t;
	char err[256];

	(void)state;
	assert_int_equal(et_trace_parse(&t, "ranks 2\r\ncompute a 1us\r\ncompute b 2us after a",
					"x", err, sizeof(err)), 0);
	assert_int_equal(t.n_nodes, 2);
	assert_int_equal(t.nodes[1].deps[0], 0);
	et_trace_free(&t);
}

static void
test_groups(void **state)
{
	struct et_trace_group mp = {"mp", 4, 1}, dp = {"dp", 4, 4}, x = {"x", 2, 3};
	uint8_t seen[16] = {0};

	(void)state;
	/* rank 9: MP group 2 ({8..11}) at 1, DP group 1 ({1,5,9,13}) at 2 */
	assert_int_equal(et_trace_group_of(&mp, 9), 2);
	assert_int_equal(et_trace_group_pos(&mp, 9), 1);
	assert_int_equal(et_trace_group_of(&dp, 9), 1);
	assert_int_equal(et_trace_group_pos(&dp, 9), 2);
	assert_int_equal(et_trace_group_member(&dp, 1, 3), 13);
	/* MP x DP: each pair of groups shares exactly one rank */
	for (uint32_t r = 0; r < 16; r++) {
		uint32_t i = et_trace_group_of(&mp, r), j = et_trace_group_of(&dp, r);

		seen[i * 4 + j]++;
		assert_int_equal(et_trace_group_member(&mp, i, et_trace_group_pos(&mp, r)), r);
		assert_int_equal(et_trace_group_member(&dp, j, et_trace_group_pos(&dp, r)), r);
	}
	for (int k = 0; k < 16; k++)
		assert_int_equal(seen[k], 1);
	/* size 2, stride 3 on 12 ranks: {0,3} {1,4} {2,5} {6,9} ... */
	assert_int_equal(et_trace_group_of(&x, 7), 4);
	assert_int_equal(et_trace_group_member(&x, 4, 0), 7);
	assert_int_equal(et_trace_group_member(&x, 4, 1), 10);
}

/* Each kind of error: the message names FILE:LINE and says what. */
static void
test_parse_errors(void **state)
{
	static const struct {
		const char *text, *want1, *want2;
	} cases[] = {
		{"compute a 1us\n", "t:1:", "'ranks N' must come first"},
		{"ranks 0\n", "t:1:", "ranks N"},
		{"ranks 4\nranks 4\n", "t:2:", "given twice"},
		{"ranks 4\nbarrier x\n", "t:2:", "unknown line 'barrier'"},
		{"ranks 4\ngroup g 3 1\n", "t:2:", "must divide the 4 ranks"},
		{"ranks 4\ngroup g 2\n", "t:2:", "group NAME SIZE STRIDE"},
		{"ranks 4\ngroup g 0 1\n", "t:2:", "group NAME SIZE STRIDE"},
		{"ranks 4\ngroup g 2 1\ngroup g 4 1\n", "t:3:", "'g' is defined twice"},
		{"ranks 4\ncompute a\n", "t:2:", "compute NAME DURATION"},
		{"ranks 4\ncompute a 10\n", "t:2:", "duration '10'"},
		{"ranks 4\ncompute a 10s\n", "t:2:", "ns, us or ms"},
		{"ranks 4\ncompute a 1us\ncompute a 2us\n", "t:3:", "'a' is defined twice"},
		{"ranks 4\ncompute a/b 1us\n", "t:2:", "node name 'a/b'"},
		{"ranks 4\ncompute a 1us after b\n", "t:2:", "'b', which is no node defined above"},
		{"ranks 4\ncompute a 1us\ncompute b 1us after a,a\n", "t:3:", "named twice"},
		{"ranks 4\ncompute a 1us\ncompute b 1us before a\n", "t:3:", "'after NODE"},
		{"ranks 4\ncompute a 1us\ncompute b 1us after\n", "t:3:", "'after NODE"},
		{"ranks 4\ngroup g 2 1\ncomm c broadcast 1M g\n", "t:3:", "collective 'broadcast'"},
		{"ranks 4\ngroup g 2 1\ncomm c allreduce lots g\n", "t:3:", "size 'lots'"},
		{"ranks 4\ngroup g 2 1\ncomm c allreduce 1M h\n", "t:3:", "no group 'h'"},
		{"ranks 4\ngroup g 2 1\ncomm c allreduce 1M\n", "t:3:", "comm NAME KIND SIZE GROUP"},
		{"ranks 4\ncompute a 1us after a b c d e f g\n", "t:2:", "too many fields"},
		{"ranks 4\n# nothing\n", "t:", "no nodes"},
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct et_trace t;

		assert_int_equal(et_trace_parse(&t, cases[i].text, "t", err, sizeof(err)), -1);
		if (!strstr(err, cases[i].want1) || !strstr(err, cases[i].want2))
			fail_msg("case %zu: '%s' lacks '%s' / '%s'", i, err, cases[i].want1,
				 cases[i].want2);
		assert_null(t.nodes);
		assert_int_equal(t.n_nodes, 0);
	}
}

/* Any size parses (0 too): whether an algorithm serves it is
 * et_coll_check's to say, with the run's algorithm and dtype. */
static void
test_parse_any_size(void **state)
{
	struct et_trace t;
	char err[256];

	(void)state;
	assert_int_equal(et_trace_parse(&t, "ranks 6\ngroup g 3 1\ncomm a allreduce 0 g\n"
					"comm b alltoall 1001 g\ncomm c allgather 7 g\n",
					"t", err, sizeof(err)), 0);
	assert_int_equal(t.nodes[0].size, 0);
	assert_int_equal(t.nodes[1].size, 1001);
	assert_int_equal(t.nodes[2].size, 7);
	et_trace_free(&t);
}

/* A line too long for the parser's buffer is an error, not a cut. */
static void
test_parse_long_line(void **state)
{
	char *text = malloc(9000), err[256];
	struct et_trace t;

	(void)state;
	assert_non_null(text);
	strcpy(text, "ranks 4\ncompute a 1us #");
	memset(text + strlen(text), 'x', 6000);
	text[strlen("ranks 4\ncompute a 1us #") + 6000] = 0;
	assert_int_equal(et_trace_parse(&t, text, "t", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t:2: line longer than"));
	free(text);
}

/* ---- execution on a small fabric: 2 leaves x 2 spines x 4 hosts ---- */

/* text on 2 leaves x 2 spines x hpl hosts, its collectives by algo */
static int
run_on(const char *text, uint32_t hpl, enum et_coll_algo algo, struct et_dag_result *r)
{
	struct et_fabric_params p;
	struct et_fabric f;
	struct et_trace t;
	char err[256];
	int rc;

	if (et_trace_parse(&t, text, "run", err, sizeof(err)))
		fail_msg("%s", err);
	et_fabric_params_default(&p);
	et_topo_leaf_spine(&p.t, 2, 2, hpl, 1);
	p.hosts_only = true;
	p.mbufs = 8192;
	p.size = 0;
	if (et_fabric_build(&f, &p))
		fail_msg("%s", f.error);
	rc = et_dag_run(&f, &t, algo, 0, r);
	if (rc)
		fail_msg("%s", f.error);
	/* every frame accounted for, every QP pair made was closed */
	assert_int_equal(f.st.frames_made, f.st.frames_accounted);
	assert_int_equal(f.st.mbufs_in_use, 0);
	assert_true(f.st.qps_created > 0 || r->comm_ns == 0);
	for (uint32_t k = 0; k < t.n_nodes; k++)
		assert_true(r->node[k].done);
	et_fabric_free(&f);
	et_trace_free(&t);
	return rc;
}

static int
run(const char *text, struct et_dag_result *r)
{
	return run_on(text, 4, ET_ALGO_A2A, r);
}

/* compute, then a collective over all ranks, then compute: nothing can
 * overlap, so the iteration is exactly the sum. */
static void
test_serial_adds_up(void **state)
{
	struct et_dag_result r;

	(void)state;
	run("ranks 8\ngroup all 8 1\n"
	    "compute a 20us\n"
	    "comm x allreduce 256K all after a\n"
	    "compute b 30us after x\n"
	    "comm y allgather 256K all after b\n",
	    &r);
	assert_int_equal(r.compute_ns, 50000);
	assert_int_equal(r.collectives, 2);
	assert_true(r.comm_ns > 0);
	assert_int_equal(r.iteration_ns, r.compute_ns + r.comm_ns);
	/* the nodes in order, each after the one it waits for */
	assert_int_equal(r.node[0].start_ns, 0);
	assert_int_equal(r.node[0].end_ns, 20000);
	assert_int_equal(r.node[1].start_ns, 20000);
	assert_true(r.node[2].start_ns >= r.node[1].start_ns);
	assert_int_equal(r.node[3].start_ns, r.node[2].end_ns);
	assert_int_equal(r.node[3].end_ns, r.iteration_ns);
	et_dag_result_free(&r);
}

/* A collective independent of a compute node runs while it does; two
 * groups' collectives run at once. */
static void
test_overlap(void **state)
{
	struct et_dag_result r, alone;

	(void)state;
	run("ranks 8\ngroup mp 2 1\ngroup dp 4 2\n"
	    "compute a 20us\n"
	    "comm x allreduce 256K dp after a\n"
	    "compute b 40us after a\n"
	    "comm y allgather 64K mp after a\n",
	    &r);
	assert_int_equal(r.compute_ns, 60000);
	assert_int_equal(r.collectives, 4 + 2);
	assert_true(r.iteration_ns < r.compute_ns + r.comm_ns);
	/* x, y and b all start when a ends */
	assert_int_equal(r.node[1].start_ns, 20000);
	assert_int_equal(r.node[2].start_ns, 20000);
	assert_int_equal(r.node[3].start_ns, 20000);
	assert_true(r.iteration_ns >= 60000);
	/* the same collective with nothing beside it */
	run("ranks 8\ngroup dp 4 2\ncomm x allreduce 256K dp\n", &alone);
	assert_true(alone.comm_ns > 0);
	assert_int_equal(alone.iteration_ns, alone.comm_ns);
	et_dag_result_free(&alone);
	et_dag_result_free(&r);
}

/* Groups of 3 on 6 hosts, sizes no rank count divides, rd folding a rank
 * in and out: every node done; a group of one rank, and a size of 0, are
 * collectives that end as they start (done, not "not done"). */
static void
test_any_group(void **state)
{
	struct et_dag_result r;

	(void)state;
	run_on("ranks 6\ngroup tri 3 1\ngroup all 6 1\n"
	       "comm a allreduce 1000 tri\n"
	       "comm b reducescatter 4098 all after a\n"
	       "comm c allgather 777 tri after b\n", 3, ET_ALGO_RD, &r);
	assert_int_equal(r.collectives, 2 + 1 + 2);
	assert_true(r.comm_ns > 0 && r.iteration_ns == r.comm_ns);
	et_dag_result_free(&r);
	run_on("ranks 8\ngroup one 1 1\ncomm a allreduce 64K one\n", 4, ET_ALGO_RD, &r);
	assert_int_equal(r.collectives, 8);
	assert_true(r.node[0].done);
	assert_int_equal(r.node[0].end_ns, 0);
	assert_int_equal(r.iteration_ns, 0);
	et_dag_result_free(&r);
	run_on("ranks 8\ngroup all 8 1\ncompute f 3us\ncomm a alltoall 0 all after f\n", 4,
	       ET_ALGO_A2A, &r);
	assert_true(r.node[1].done);
	assert_int_equal(r.node[1].start_ns, 3000);
	assert_int_equal(r.node[1].end_ns, 3000);
	et_dag_result_free(&r);
}

/* A trace for another fabric, or a collective --algo cannot build, is
 * refused before anything runs. */
static void
test_refused(void **state)
{
	struct et_fabric_params p;
	struct et_fabric f;
	struct et_trace t;
	struct et_dag_result r;
	char err[256];

	(void)state;
	et_fabric_params_default(&p);
	et_topo_leaf_spine(&p.t, 2, 2, 4, 1);
	p.hosts_only = true;
	p.mbufs = 8192;
	assert_int_equal(et_fabric_build(&f, &p), 0);
	assert_int_equal(et_trace_parse(&t, "ranks 16\ncompute a 1us\n", "t", err, sizeof(err)), 0);
	assert_int_equal(et_dag_run(&f, &t, ET_ALGO_A2A, 0, &r), -EINVAL);
	assert_non_null(strstr(f.error, "16 ranks, the fabric has 8 hosts"));
	et_dag_result_free(&r);
	et_trace_free(&t);
	f.error[0] = 0;
	assert_int_equal(et_trace_parse(&t, "ranks 8\ngroup g 8 1\ncompute a 1us\n"
					"comm c allgather 1M g after a\n",
					"t", err, sizeof(err)), 0);
	assert_int_equal(et_dag_run(&f, &t, ET_ALGO_DBT, 0, &r), -EINVAL);
	assert_non_null(strstr(f.error, "node c (line 4)"));
	et_dag_result_free(&r);
	et_trace_free(&t);
	et_fabric_free(&f);
}

static int
setup(void **state)
{
	(void)state;
	return et_test_eal_init("test_trace") < 0 ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	rte_eal_cleanup();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_line_ends),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_any_size),
		cmocka_unit_test(test_parse_long_line),
		cmocka_unit_test(test_serial_adds_up),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_any_group),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests_name("trace", tests, setup, teardown);
}
