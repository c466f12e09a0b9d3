/* SPDX-License-Identifier: BSD-3-Clause
 * ARP for the endpoint: replies, requests, learning, static overrides,
 * the rate limit and bad frames (counted, never a crash).
 */
#include "et_test.h"

#include <errno.h>
#include <rte_ip.h>

#include "host/et_arp.h"
#include "sim/et_net.h"
#include "host/et_nic.h"

static struct rte_mempool *pool;

static const uint8_t ME[6] = {0x02, 0, 0, 0, 0, 0x03};
static const uint8_t PEER[6] = {0x52, 0x54, 0, 0x77, 0, 0x02};
static const uint8_t OTHER[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
#define MY_IP 0x0a4d0003u   /* 10.77.0.3 */
#define PEER_IP 0x0a4d0002u /* 10.77.0.2 */

/* A request or reply as a kernel sends it (42 bytes, unpadded). */
static size_t
frame(uint8_t *f, uint16_t op, const uint8_t *eth_dst, const uint8_t *sha, uint32_t spa,
      const uint8_t *tha, uint32_t tpa)
{
	memcpy(f, eth_dst, 6);
	memcpy(f + 6, sha, 6);
	f[12] = 0x08; f[13] = 0x06;
	f[14] = 0; f[15] = 1; f[16] = 0x08; f[17] = 0; f[18] = 6; f[19] = 4;
	f[20] = 0; f[21] = (uint8_t)op;
	memcpy(f + 22, sha, 6);
	f[28] = spa >> 24; f[29] = spa >> 16; f[30] = spa >> 8; f[31] = (uint8_t)spa;
	memcpy(f + 32, tha, 6);
	f[38] = tpa >> 24; f[39] = tpa >> 16; f[40] = tpa >> 8; f[41] = (uint8_t)tpa;
	return 42;
}

static const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t ZERO[6];

static void
test_reply_to_request(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN];
	size_t n = frame(in, 1, BCAST, PEER, PEER_IP, ZERO, MY_IP);
	int r;

	(void)state;
	et_arp_init(&a, ME, MY_IP, 10, 4);
	r = et_arp_input(&a, in, n, 0, out, sizeof(out));
	assert_int_equal(r, ET_ARP_FRAME_LEN);
	assert_memory_equal(out, PEER, 6);          /* unicast back */
	assert_memory_equal(out + 6, ME, 6);
	assert_int_equal(out[12], 0x08);
	assert_int_equal(out[13], 0x06);
	assert_int_equal(out[21], 2);               /* reply */
	assert_memory_equal(out + 22, ME, 6);       /* sha: us */
	assert_int_equal(out[28], 10);
	assert_int_equal(out[31], 3);               /* spa: our IP */
	assert_memory_equal(out + 32, PEER, 6);     /* tha: the asker */
	assert_int_equal(out[41], 2);               /* tpa: the asker's IP */
	for (int i = 42; i < ET_ARP_FRAME_LEN; i++)
		assert_int_equal(out[i], 0);        /* padding zeroed */
	/* the asker is learned on the way */
	assert_non_null(et_arp_lookup(&a, PEER_IP));
	assert_memory_equal(et_arp_lookup(&a, PEER_IP), PEER, 6);
	assert_int_equal(a.st.rx_request, 1);
	assert_int_equal(a.st.tx_reply, 1);
	assert_int_equal(a.st.learned, 1);
}

static void
test_request_not_for_us(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN];
	size_t n = frame(in, 1, BCAST, OTHER, 0x0a4d0009, ZERO, 0x0a4d0001);

	(void)state;
	et_arp_init(&a, ME, MY_IP, 10, 4);
	assert_int_equal(et_arp_input(&a, in, n, 0, out, sizeof(out)), 0);
	assert_null(et_arp_lookup(&a, 0x0a4d0009));  /* not for us: not added */
	assert_int_equal(a.st.rx_other, 1);
	assert_int_equal(a.st.tx_reply, 0);
}

static void
test_resolve(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN];
	size_t n;

	(void)state;
	et_arp_init(&a, ME, MY_IP, 10, 4);
	assert_null(et_arp_lookup(&a, PEER_IP));
	assert_int_equal(et_arp_request(&a, PEER_IP, 0, out, sizeof(out)), ET_ARP_FRAME_LEN);
	assert_memory_equal(out, BCAST, 6);
	assert_int_equal(out[21], 1);
	assert_memory_equal(out + 32, ZERO, 6);
	assert_int_equal(out[41], 2);
	n = frame(in, 2, ME, PEER, PEER_IP, ME, MY_IP);
	assert_int_equal(et_arp_input(&a, in, n, 1, out, sizeof(out)), 0);
	assert_memory_equal(et_arp_lookup(&a, PEER_IP), PEER, 6);
	assert_int_equal(a.st.rx_reply, 1);
	assert_int_equal(a.st.tx_request, 1);
	/* a MAC change (the peer's NIC replaced) is learned */
	n = frame(in, 2, ME, OTHER, PEER_IP, ME, MY_IP);
	et_arp_input(&a, in, n, 2, out, sizeof(out));
	assert_memory_equal(et_arp_lookup(&a, PEER_IP), OTHER, 6);
	assert_int_equal(a.st.learned, 2);
}

static void
test_static_wins(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN];
	size_t n = frame(in, 2, ME, OTHER, PEER_IP, ME, MY_IP);

	(void)state;
	et_arp_init(&a, ME, MY_IP, 10, 4);
	assert_int_equal(et_arp_set_static(&a, PEER_IP, PEER), 0);
	et_arp_input(&a, in, n, 0, out, sizeof(out));
	assert_memory_equal(et_arp_lookup(&a, PEER_IP), PEER, 6);
	assert_int_equal(a.st.static_conflict, 1);
	assert_int_equal(et_arp_set_static(&a, 0, PEER), -EINVAL);
}

static void
test_cache_eviction(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN], mac[6] = {2, 0, 0, 0, 1, 0};

	(void)state;
	et_arp_init(&a, ME, MY_IP, 1, 1000);
	assert_int_equal(et_arp_set_static(&a, PEER_IP, PEER), 0);
	for (uint32_t i = 0; i < ET_ARP_CACHE + 3; i++) {
		mac[5] = (uint8_t)i;
		et_arp_input(&a, in, frame(in, 1, BCAST, mac, 0x0a4e0000 + i, ZERO, MY_IP),
			     100 + i, out, sizeof(out));
	}
	assert_int_equal(a.st.cache_full, 4);  /* 1 static + 15 slots, 19 senders */
	assert_memory_equal(et_arp_lookup(&a, PEER_IP), PEER, 6);  /* never evicted */
	assert_null(et_arp_lookup(&a, 0x0a4e0000));                 /* oldest gone */
	assert_non_null(et_arp_lookup(&a, 0x0a4e0000 + ET_ARP_CACHE + 2));
}

static void
test_rate_limit(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN];
	size_t n = frame(in, 1, BCAST, PEER, PEER_IP, ZERO, MY_IP);
	int sent = 0;

	(void)state;
	et_arp_init(&a, ME, MY_IP, 100, 3);  /* one per 100 ticks, burst 3 */
	for (int i = 0; i < 50; i++)
		sent += et_arp_input(&a, in, n, 10, out, sizeof(out)) > 0;
	assert_int_equal(sent, 3);
	assert_int_equal(a.st.tx_rate_limited, 47);
	assert_int_equal(a.st.rx_request, 50);
	/* requests share the bucket */
	assert_int_equal(et_arp_request(&a, PEER_IP, 20, out, sizeof(out)), 0);
	/* 250 ticks later: two tokens back */
	assert_int_equal(et_arp_request(&a, PEER_IP, 260, out, sizeof(out)), ET_ARP_FRAME_LEN);
	assert_int_equal(et_arp_input(&a, in, n, 260, out, sizeof(out)), ET_ARP_FRAME_LEN);
	assert_int_equal(et_arp_input(&a, in, n, 260, out, sizeof(out)), 0);
	/* a long silence refills to the burst, no more */
	sent = 0;
	for (int i = 0; i < 10; i++)
		sent += et_arp_input(&a, in, n, 1000000, out, sizeof(out)) > 0;
	assert_int_equal(sent, 3);
}

static void
test_bad_frames(void **state)
{
	struct et_arp a;
	uint8_t in[64], out[ET_ARP_FRAME_LEN];
	size_t n = frame(in, 1, BCAST, PEER, PEER_IP, ZERO, MY_IP);
	uint64_t bad = 0;

	(void)state;
	et_arp_init(&a, ME, MY_IP, 1, 100);
	for (size_t len = 0; len < n; len++) {   /* every truncation */
		assert_int_equal(et_arp_input(&a, in, len, 0, out, sizeof(out)), -EBADMSG);
		assert_int_equal(a.st.rx_bad, ++bad);
	}
	static const struct { int off; uint8_t v; } muts[] = {
		{13, 0x00},  /* not ARP */
		{15, 6},     /* htype IEEE 802 */
		{16, 0x86},  /* ptype IPv6 */
		{18, 8},     /* hlen */
		{19, 16},    /* plen */
		{21, 3},     /* RARP request */
		{20, 1},     /* opcode 0x101 */
	};
	for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		uint8_t f[64];

		memcpy(f, in, n);
		f[muts[i].off] = muts[i].v;
		assert_int_equal(et_arp_input(&a, f, n, 0, out, sizeof(out)), -EBADMSG);
		assert_int_equal(a.st.rx_bad, ++bad);
	}
	assert_int_equal(a.st.tx_reply, 0);
	assert_null(et_arp_lookup(&a, PEER_IP));
	/* a reply that does not fit is not sent */
	assert_int_equal(et_arp_input(&a, in, n, 0, out, 10), 0);
	/* probes (sender 0.0.0.0) and multicast senders are not learned */
	et_arp_init(&a, ME, MY_IP, 1, 100);
	n = frame(in, 1, BCAST, PEER, 0, ZERO, MY_IP);
	assert_int_equal(et_arp_input(&a, in, n, 0, out, sizeof(out)), ET_ARP_FRAME_LEN);
	n = frame(in, 1, BCAST, BCAST, PEER_IP, ZERO, MY_IP);
	et_arp_input(&a, in, n, 0, out, sizeof(out));
	assert_null(et_arp_lookup(&a, PEER_IP));
	assert_null(et_arp_lookup(&a, 0));
}

/* Two NICs on a net_ring pair, each with ARP: A resolves B through the
 * NIC's control path, B answers; a RoCE-less frame costs the data path
 * nothing (the counters say where each frame went). */
static void
test_nic_resolves(void **state)
{
	struct et_link_model lm = {.rate_bps = 10000000000ull, .latency_ns = 1000};
	struct rte_ether_addr ma = {{0x02, 0, 0, 0, 0, 1}}, mb = {{0x02, 0, 0, 0, 0, 2}};
	uint32_t ipa = RTE_IPV4(10, 77, 0, 3), ipb = RTE_IPV4(10, 77, 0, 2);
	struct et_port a, b;
	struct et_nic na, nb;
	struct et_arp aa, ab;
	uint64_t now;

	(void)state;
	assert_int_equal(et_port_net_ring_pair(&a, &b, "arp", 256, 0, pool), 0);
	assert_int_equal(et_nic_init(&na, &a, &lm, pool, &ma, ipa, 0x100, 4), 0);
	assert_int_equal(et_nic_init(&nb, &b, &lm, pool, &mb, ipb, 0x200, 4), 0);
	/* B has no ARP yet: the request is counted and ignored */
	et_arp_init(&aa, ma.addr_bytes, ipa, 1000, 4);
	na.arp = &aa;
	assert_int_equal(et_nic_arp_request(&na, ipb, 0), 0);
	for (now = 0; now < 100000; now += 1000) {
		et_nic_poll(&na, now);
		et_nic_poll(&nb, now);
	}
	assert_int_equal(nb.st.rx_arp_ignored, 1);
	assert_null(et_arp_lookup(&aa, ipb));
	et_arp_init(&ab, mb.addr_bytes, ipb, 1000, 4);
	nb.arp = &ab;
	assert_int_equal(et_nic_arp_request(&na, ipb, now), 0);
	for (uint64_t end = now + 100000; now < end; now += 1000) {
		et_nic_poll(&na, now);
		et_nic_poll(&nb, now);
	}
	assert_non_null(et_arp_lookup(&aa, ipb));
	assert_memory_equal(et_arp_lookup(&aa, ipb), mb.addr_bytes, 6);
	assert_memory_equal(et_arp_lookup(&ab, ipa), ma.addr_bytes, 6);
	assert_int_equal(nb.st.rx_arp, 1);
	assert_int_equal(ab.st.tx_reply, 1);
	assert_int_equal(aa.st.rx_reply, 1);
	assert_int_equal(na.st.rx_pkts + nb.st.rx_pkts, 0);
	for (int i = 0; i < ET_WIRE_E_COUNT; i++)
		assert_int_equal(na.st.rx_bad[i] + nb.st.rx_bad[i], 0);
	/* without ARP a request cannot be made */
	na.arp = NULL;
	assert_int_equal(et_nic_arp_request(&na, ipb, now), -1);
	et_nic_free(&na);
	et_nic_free(&nb);
	et_port_close(&b);
	et_port_close(&a);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static int
setup(void **state)
{
	(void)state;
	pool = et_test_eal_pool("test_arp", 1023);
	return pool ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	return et_test_eal_done(pool);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_to_request),
		cmocka_unit_test(test_request_not_for_us),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_static_wins),
		cmocka_unit_test(test_cache_eviction),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_bad_frames),
	};
	const struct CMUnitTest nic_tests[] = {
		cmocka_unit_test(test_nic_resolves),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	return failed + cmocka_run_group_tests(nic_tests, setup, teardown);
}
