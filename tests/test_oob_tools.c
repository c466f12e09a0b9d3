/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA tools' out-of-band messages: what ibv_rc_pingpong and perftest
 * really sent (captured from rxe-vm runs), parsed; ours formatted byte for
 * byte; and every way a message can be wrong, refused with a reason.
 */
#include "et_test.h"

#include "host/et_oob_tools.h"

static const uint8_t GID_10_77_0_2[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 2};

/* ibv_rc_pingpong's server (rdma-core 44, Debian 12) on rxe0, GID index 1,
 * as it crossed the bridge: 51 characters and the NUL */
static const char PINGPONG_RXE[ET_PINGPONG_MSG_LEN] =
	"0000:000011:558863:00000000000000000000ffff0a4d0002";

static void
test_gid(void **state)
{
	uint8_t gid[16];
	uint32_t ip = 0;

	(void)state;
	et_gid_from_ipv4(0x0a4d0002, gid);
	assert_memory_equal(gid, GID_10_77_0_2, 16);
	assert_int_equal(et_gid_to_ipv4(gid, &ip), 0);
	assert_int_equal(ip, 0x0a4d0002);
	gid[0] = 0xfe; /* link-local, the GID at index 0: not ours to speak */
	assert_int_equal(et_gid_to_ipv4(gid, &ip), -1);
}

static void
test_pingpong_from_rxe(void **state)
{
	struct et_oob_dest d;
	char err[128];

	(void)state;
	assert_int_equal(et_pingpong_parse(PINGPONG_RXE, sizeof(PINGPONG_RXE), &d, err, sizeof(err)), 0);
	assert_int_equal(d.lid, 0);
	assert_int_equal(d.qpn, 0x11);
	assert_int_equal(d.psn, 0x558863);
	assert_memory_equal(d.gid, GID_10_77_0_2, 16);
}

static void
test_pingpong_ours(void **state)
{
	struct et_oob_dest d = {.qpn = 0x100, .psn = 0x1000}, back;
	char out[ET_PINGPONG_MSG_LEN], err[128];

	(void)state;
	et_gid_from_ipv4(0x0a4d0003, d.gid);
	memset(out, 'x', sizeof(out));
	et_pingpong_format(&d, out);
	/* what rxe's ibv_rc_pingpong read from us in the same run */
	assert_memory_equal(out, "0000:000100:001000:00000000000000000000ffff0a4d0003", 52);
	assert_int_equal(et_pingpong_parse(out, sizeof(out), &back, err, sizeof(err)), 0);
	assert_int_equal(back.qpn, 0x100);
}

/* One message, bent in every way that matters; each is refused with a
 * reason, nothing read past the buffer. */
static void
test_pingpong_bad(void **state)
{
	static const struct {
		const char *what;
		size_t at;  /* byte to change; SIZE_MAX: length instead */
		char to;
		size_t len;
		const char *reason;
	} cases[] = {
		{"short read", SIZE_MAX, 0, 51, "51 bytes"},
		{"long read", SIZE_MAX, 0, 53, "53 bytes"},
		{"no NUL", 51, 'a', 52, "and a NUL"},
		{"early NUL", 20, 0, 52, "and a NUL"},
		{"LID not hex", 2, 'g', 52, "LID:QPN:PSN:GID"},
		{"separator", 4, '-', 52, "LID:QPN:PSN:GID"},
		{"QPN not hex", 7, ' ', 52, "LID:QPN:PSN:GID"},
		{"GID not hex", 40, 'z', 52, "bad GID"},
	};
	char msg[64], err[160];
	struct et_oob_dest d;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(msg, 0, sizeof(msg));
		memcpy(msg, PINGPONG_RXE, sizeof(PINGPONG_RXE));
		if (cases[i].at != SIZE_MAX)
			msg[cases[i].at] = cases[i].to;
		err[0] = '\0';
		if (et_pingpong_parse(msg, cases[i].len, &d, err, sizeof(err)) != -1 ||
		    strstr(err, cases[i].reason) == NULL)
			fail_msg("%s: accepted or wrong reason '%s'", cases[i].what, err);
	}
}

static void
test_perftest_roundtrip(void **state)
{
	struct et_oob_dest d = {.lid = 0, .out_reads = 16, .qpn = 0x100, .psn = 0xabcdef,
				.rkey = 0x2, .vaddr = 0x55a9e62e6660ull, .srqn = 0}, back;
	char out[ET_PERFTEST_MSG_LEN], err[160];

	(void)state;
	et_gid_from_ipv4(0x0a4d0003, d.gid);
	et_perftest_format(&d, out);
	assert_string_equal(out, "0000:0010:000100:abcdef:00000002:000055a9e62e6660:"
				 "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:03:00000000:");
	assert_int_equal(strlen(out), ET_PERFTEST_MSG_LEN - 1);
	assert_int_equal(et_perftest_parse(out, sizeof(out), &back, err, sizeof(err)), 0);
	assert_memory_equal(&back, &d, sizeof(d));
	out[60] = 'q';
	assert_int_equal(et_perftest_parse(out, sizeof(out), &back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad GID"));
	assert_int_equal(et_perftest_parse(out, 59, &back, err, sizeof(err)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gid),
		cmocka_unit_test(test_pingpong_from_rxe),
		cmocka_unit_test(test_pingpong_ours),
		cmocka_unit_test(test_pingpong_bad),
		cmocka_unit_test(test_perftest_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
