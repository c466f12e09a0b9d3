/* SPDX-License-Identifier: BSD-3-Clause
 * Counters declared once: the descriptor tables match their structs, name
 * array elements, sum by role, add (high-water marks by max), and every
 * receive outcome of the NIC and every drop reason of a switch counts in
 * the frame accounting.
 */
#include <string.h>

#include "et_test.h"
#include "et_switch.h"
#include "host/et_nic.h"
#include "link/et_egress.h"
#include "sim/et_fabric.h"

/* Every byte of a stats struct is some counter of its table. */
static void
covers(const struct et_ctr_table *t, size_t size)
{
	size_t words = 0;

	for (unsigned int i = 0; i < t->n; i++) {
		assert_true(t->d[i].off + 8 * (t->d[i].n ? t->d[i].n : 1) <= size);
		words += t->d[i].n ? t->d[i].n : 1;
	}
	assert_int_equal(words * 8, size);
}

static void
test_tables_cover_structs(void **state)
{
	(void)state;
	covers(&et_nic_ctrs, sizeof(struct et_nic_stats));
	covers(&et_egress_ctrs, sizeof(struct et_egress_stats));
	covers(&et_sw_port_ctrs, sizeof(struct et_sw_port_stats));
	covers(&et_fabric_ctrs, sizeof(struct et_fabric_stats));
}

struct seen {
	char names[64][96];
	uint64_t v[64];
	unsigned int n;
};

static void
collect(void *ctx, const char *name, uint64_t v)
{
	struct seen *s = ctx;

	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->v[s->n++] = v;
}

static uint64_t
value_of(const struct seen *s, const char *name)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return s->v[i];
	fail_msg("no counter %s", name);
	return 0;
}

static void
test_names_and_roles(void **state)
{
	struct et_nic_stats st = {0};
	struct seen s = {0};

	(void)state;
	st.rx_pkts = 5;
	st.rx_bad[ET_WIRE_E_ICRC] = 2;
	st.rx_fault_drops = 3;
	st.rx_arp = 1;
	st.tx_pkts = 7;
	st.ctrl_tx = 1;
	st.timer_fires = 100;
	et_ctr_each(&et_nic_ctrs, &st, "nic_", collect, &s);
	assert_int_equal(value_of(&s, "nic_rx_bad_icrc"), 2);
	assert_int_equal(value_of(&s, "nic_rx_bad_trunc_eth"), 0);
	assert_int_equal(value_of(&s, "nic_rx_fault_drops"), 3);
	/* every frame taken off the link ends somewhere, ARP and faults too */
	assert_int_equal(et_ctr_sum(&et_nic_ctrs, &st, ET_CTR_ENDED), 5 + 2 + 3 + 1);
	assert_int_equal(et_ctr_sum(&et_nic_ctrs, &st, ET_CTR_BIT(MADE)), 8);
	assert_int_equal(et_ctr_sum(&et_nic_ctrs, &st, ET_CTR_LOST), 3);
}

static void
test_switch_drops_all_lost(void **state)
{
	struct et_sw_port_stats st = {0};

	(void)state;
	for (int d = 0; d < ET_SW_DROP_COUNT; d++)
		st.drops[d] = 1u << d;
	st.rx_pkts = 1000; /* forwarded: ends elsewhere */
	assert_int_equal(et_ctr_sum(&et_sw_port_ctrs, &st, ET_CTR_LOST),
			 (1u << ET_SW_DROP_COUNT) - 1);
	assert_string_equal(et_sw_drop_name(ET_SW_DROP_OVERSIZE), "oversize");
}

static void
test_add_sums_and_maxes(void **state)
{
	struct et_fabric_stats a = {0}, b = {0};

	(void)state;
	a.max_qps_per_host = 9;
	b.max_qps_per_host = 4;
	a.retransmits = 1;
	b.retransmits = 2;
	b.qps_per_host_hist[3] = 5;
	et_ctr_add(&et_fabric_ctrs, &a, &b);
	assert_int_equal(a.max_qps_per_host, 9);
	assert_int_equal(a.retransmits, 3);
	assert_int_equal(a.qps_per_host_hist[3], 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_cover_structs),
		cmocka_unit_test(test_names_and_roles),
		cmocka_unit_test(test_switch_drops_all_lost),
		cmocka_unit_test(test_add_sums_and_maxes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
