/* SPDX-License-Identifier: BSD-3-Clause
 * The unmap guard (link/et_unmap_guard.h): a munmap that a shared library
 * looks up is this program's, and waits for a burst in flight; and a
 * memif port read without a pause while its peer connects and leaves
 * again and again (DPDK 22.11 unmaps the rings under the reader then).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "et_test.h"

#include "link/et_port.h"
#include "link/et_unmap_guard.h"

static _Atomic int unmapped;

static void *
unmap_page(void *page)
{
	/* as the memif PMD calls it: looked up in the process's scope */
	int (*fn)(void *, size_t) = (int (*)(void *, size_t))dlsym(RTLD_DEFAULT, "munmap");

	fn(page, 4096);
	atomic_store(&unmapped, 1);
	return NULL;
}

static void
test_munmap_waits_for_a_burst(void **state)
{
	pthread_t t;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	uint32_t ph;

	(void)state;
	assert_true(page != MAP_FAILED);
	ph = et_unmap_guard_enter();
	assert_int_equal(pthread_create(&t, NULL, unmap_page, page), 0);
	usleep(50000);
	/* still inside the burst: the page is still there */
	assert_int_equal(atomic_load(&unmapped), 0);
	((volatile char *)page)[0] = 1;
	et_unmap_guard_leave(ph);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&unmapped), 1);
}

static _Atomic int busy_reading;

/* a datapath that is in a burst nearly all the time */
static void *
burst_after_burst(void *arg)
{
	(void)arg;
	while (atomic_load(&busy_reading)) {
		uint32_t ph = et_unmap_guard_enter();
		uint64_t until = rte_get_tsc_cycles() + rte_get_tsc_hz() / 100000; /* 10 us */

		while (rte_get_tsc_cycles() < until)
			rte_pause();
		et_unmap_guard_leave(ph);
	}
	return NULL;
}

static void
test_munmap_is_not_starved_by_bursts(void **state)
{
	pthread_t t[2];

	(void)state;
	atomic_store(&busy_reading, 1);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, burst_after_burst, NULL), 0);
	usleep(10000);
	/* each wait ends once the bursts it met have: 200 of them, while two
	 * readers never stop (their bursts overlap: a count of all bursts in
	 * flight is almost never zero) */
	for (int i = 0; i < 200; i++)
		et_unmap_guard_wait();
	atomic_store(&busy_reading, 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
}

static struct rte_mempool *mp;
static struct et_port server;
static _Atomic int reading;
static _Atomic uint64_t bursts;

static void *
read_server(void *arg)
{
	struct rte_mbuf *m[32];

	(void)arg;
	while (atomic_load(&reading)) {
		uint16_t n = et_port_rx(&server, m, 32);

		rte_pktmbuf_free_bulk(m, n);
		atomic_fetch_add(&bursts, 1);
	}
	return NULL;
}

static void
test_memif_peer_comes_and_goes_under_a_reader(void **state)
{
	char dir[] = "/tmp/et-unmap-XXXXXX", sdev[256], cdev[256];
	struct et_port client;
	struct rte_mbuf *m[8];
	pthread_t t;
	int ups = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sdev, sizeof(sdev),
		 "net_memif90,role=server,socket-abstract=no,socket=%s/s.sock,id=0", dir);
	snprintf(cdev, sizeof(cdev),
		 "net_memif91,role=client,socket-abstract=no,socket=%s/s.sock,id=0", dir);
	assert_int_equal(et_port_ethdev(&server, sdev, mp, 512, 1), 0);
	assert_true(server.unmap_guard);
	atomic_store(&reading, 1);
	assert_int_equal(pthread_create(&t, NULL, read_server, NULL), 0);
	assert_int_equal(et_port_ethdev(&client, cdev, mp, 512, 1), 0);
	for (int i = 0; i < 40; i++) {
		if (et_port_await_link_up(&server, 2000, NULL) == 0)
			ups++;
		/* frames the reader takes while the rings go away */
		if (rte_pktmbuf_alloc_bulk(mp, m, 8) == 0) {
			for (int k = 0; k < 8; k++)
				rte_pktmbuf_append(m[k], 64);
			uint16_t sent = et_port_tx(&client, m, 8);

			rte_pktmbuf_free_bulk(m + sent, 8 - sent);
		}
		/* the peer leaves (DISCONNECT on the server's interrupt thread)
		 * and comes back */
		assert_int_equal(rte_eth_dev_stop(client.eth_port), 0);
		et_port_await_peer_gone(&server, 2000);
		assert_int_equal(rte_eth_dev_start(client.eth_port), 0);
	}
	atomic_store(&reading, 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	printf("# %d of 40 connections up, %lu bursts read\n", ups,
	       (unsigned long)atomic_load(&bursts));
	assert_true(ups > 0);
	et_port_close(&client);
	et_port_close(&server);
	snprintf(sdev, sizeof(sdev), "%s/s.sock", dir);
	unlink(sdev);
	rmdir(dir);
}

static int
setup(void **state)
{
	(void)state;
	if (et_test_eal_init("test-unmap-guard") < 0)
		return -1;
	mp = rte_pktmbuf_pool_create("unmap", 4096, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	return mp ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_munmap_waits_for_a_burst),
		cmocka_unit_test(test_munmap_is_not_starved_by_bursts),
		cmocka_unit_test(test_memif_peer_comes_and_goes_under_a_reader),
	};

	return cmocka_run_group_tests_name("unmap-guard", tests, setup, NULL);
}
