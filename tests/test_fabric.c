/* SPDX-License-Identifier: BSD-3-Clause
 * The fabric's QP count, as the paper counts it: per host, the QPs its NIC
 * holds at once, both ends of the QP pairs.  Small fabrics where the count
 * follows by hand, and the distribution over the hosts from given values.
 */
#include "et_test.h"

#include "sim/et_fabric.h"

static int
setup(void **state)
{
	(void)state;
	return et_test_eal_init("test_fabric") < 0 ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	rte_eal_cleanup();
	return 0;
}

/* Run a one-step all-to-all (every host sends to every other at time 0,
 * one send each) on the 4-host leaf-spine through policy lb; the fabric's
 * counters. */
static void
run_alltoall(const char *lb, struct et_fabric *f)
{
	struct et_fabric_params p;
	char err[128];

	et_fabric_params_default(&p);
	assert_int_equal(et_lb_parse(lb, &p.lb, err, sizeof(err)), 0);
	p.kind = ET_COLL_ALLTOALL;
	p.algo = ET_ALGO_A2A;
	p.size = 64 * 1024;
	p.verify = true;
	assert_int_equal(et_fabric_build(f, &p), 0);
	assert_int_equal(f->n_hosts, 4);
	assert_int_equal(et_fabric_run(f), 0);
	et_fabric_collect(f);
	assert_string_equal(f->error, "");
}

/* MP-RDMA-3: a host opens 3 peers x 3 subflows as requester, and each
 * peer opens 3 subflows to it, whose responder ends its NIC holds: all at
 * time 0, before any can finish, so 2 x 3 x 3 = 18 at once on every host;
 * counting one direction would say 9. */
static void
test_both_ends_counted(void **state)
{
	struct et_fabric f;

	(void)state;
	run_alltoall("mprdma:3", &f);
	for (uint32_t i = 0; i < f.n_hosts; i++) {
		assert_int_equal(f.h[i].nic.st.qps_max, 18);
		assert_int_equal(f.h[i].nic.st.qps_made, 18);
		assert_int_equal(f.h[i].nic.n_qps, 0); /* every subflow's pair went */
	}
	assert_int_equal(f.st.max_qps_per_host, 18);
	assert_int_equal(f.st.qps_per_host_p50, 18);
	assert_int_equal(f.st.qps_per_host_p99, 18);
	assert_int_equal(f.st.qps_per_host_hist[5], 4); /* 17 .. 32 */
	assert_int_equal(f.st.qps_created, 4 * 9);      /* pairs */
	et_fabric_free(&f);
}

/* One QP pair per flow: 2 x 3 = 6 on every host. */
static void
test_one_pair_per_flow(void **state)
{
	struct et_fabric f;

	(void)state;
	run_alltoall("ecmp", &f);
	for (uint32_t i = 0; i < f.n_hosts; i++)
		assert_int_equal(f.h[i].nic.st.qps_max, 6);
	assert_int_equal(f.st.max_qps_per_host, 6);
	assert_int_equal(f.st.qps_per_host_hist[3], 4); /* 5 .. 8 */
	assert_int_equal(f.st.qps_created, 4 * 3);
	et_fabric_free(&f);
}

/* The distribution over hosts: 100 hosts holding 1 .. 100 QPs, then the
 * paper's MP-RDMA-8 all-to-all counts. */
static void
test_summary(void **state)
{
	struct et_fabric_stats s = {0};
	uint32_t v[100], big[4] = {8176, 4080, 0, 20000};
	static const uint64_t hist[ET_FABRIC_QPS_BUCKETS] = {1, 1, 2, 4, 8, 16, 32, 36};

	(void)state;
	for (uint32_t i = 0; i < 100; i++)
		v[i] = 100 - i;
	et_fabric_qps_summary(&s, v, 100);
	assert_int_equal(s.max_qps_per_host, 100);
	assert_int_equal(s.qps_per_host_p50, 50);
	assert_int_equal(s.qps_per_host_p99, 99);
	assert_memory_equal(s.qps_per_host_hist, hist, sizeof(hist));

	memset(&s, 0, sizeof(s));
	et_fabric_qps_summary(&s, big, 4);
	assert_int_equal(s.max_qps_per_host, 20000);
	assert_int_equal(s.qps_per_host_p50, 4080); /* nearest rank: the 2nd of 4 */
	assert_int_equal(s.qps_per_host_p99, 20000);
	assert_int_equal(s.qps_per_host_hist[0], 1);  /* 0 */
	assert_int_equal(s.qps_per_host_hist[12], 1); /* 4080: 2049 .. 4096 */
	assert_int_equal(s.qps_per_host_hist[13], 1); /* 8176: 4097 .. 8192 */
	assert_int_equal(s.qps_per_host_hist[15], 1); /* more than 16384 */
	assert_string_equal(et_fabric_qps_bucket(13), "8192");
	assert_string_equal(et_fabric_qps_bucket(15), "more");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_both_ends_counted),
		cmocka_unit_test(test_one_pair_per_flow),
	};

	return cmocka_run_group_tests_name("fabric-qps", tests, setup, teardown);
}
