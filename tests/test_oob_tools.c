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

/* ib_write_bw's figures after a 300 x 64 KiB run, as its client sent them
 * (x86: every field byte-swapped to big-endian): size, iterations, peak
 * 1234.5 MB/s, average 1200.25 MB/s, 0.5 Mpps */
static const uint8_t REPORT_WRITE_BW[ET_PERFTEST_REPORT_LEN] = {
	0, 0, 0, 0, 0, 0x01, 0, 0,   0, 0, 0, 0, 0, 0, 0x01, 0x2c,
	0x40, 0x93, 0x4a, 0, 0, 0, 0, 0,   0x40, 0x92, 0xc1, 0, 0, 0, 0, 0,
	0x3f, 0xe0, 0, 0, 0, 0, 0, 0};

static void
test_perftest_report(void **state)
{
	struct et_perftest_report r, back;
	uint8_t out[ET_PERFTEST_REPORT_LEN];
	char err[200];

	(void)state;
	assert_int_equal(et_perftest_report_parse(REPORT_WRITE_BW, &r, err, sizeof(err)), 0);
	assert_int_equal(r.size, 65536);
	assert_int_equal(r.iters, 300);
	assert_true(r.bw_peak == 1234.5 && r.bw_avg == 1200.25 && r.msg_rate == 0.5);
	et_perftest_report_format(&r, out);
	assert_memory_equal(out, REPORT_WRITE_BW, sizeof(out));
	assert_int_equal(et_perftest_report_parse(out, &back, err, sizeof(err)), 0);
}

/* ib_write_bw -q 2: the server reads the client's second address message
 * where a one-QP peer's report would be; "00000000" is 3472328296395452464
 * as a number, which an older node printed as the peer's size. */
static void
test_perftest_report_bad(void **state)
{
	struct et_perftest_report r;
	uint8_t msg[ET_PERFTEST_REPORT_LEN];
	char err[200];

	(void)state;
	memcpy(msg, "0000:0000:000012:6a0b51:00000116:000055", ET_PERFTEST_REPORT_LEN);
	assert_int_equal(et_perftest_report_parse(msg, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "address message"));
	memcpy(msg, REPORT_WRITE_BW, sizeof(msg));
	memset(msg, 0, 8); /* size 0 */
	assert_int_equal(et_perftest_report_parse(msg, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "message size 0"));
	memcpy(msg, REPORT_WRITE_BW, sizeof(msg));
	msg[8] = 0x7f; /* iterations beyond any run */
	assert_int_equal(et_perftest_report_parse(msg, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "iterations"));
	memcpy(msg, REPORT_WRITE_BW, sizeof(msg));
	memset(msg + 24, 0xff, 8); /* a NaN average */
	assert_int_equal(et_perftest_report_parse(msg, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not rates"));
}

/* ib_write_bw -q 2 on rxe: one message per QP, alike but for QPN, PSN and
 * the buffer's address (its QP 1 writes to the second half) */
static void
test_perftest_two_qps(void **state)
{
	static const char m0[ET_PERFTEST_MSG_LEN] =
		"0000:0000:000011:3a5f01:00000116:000055d3c8a10000:"
		"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:";
	static const char m1[ET_PERFTEST_MSG_LEN] =
		"0000:0000:000012:7c2e44:00000116:000055d3c8a20000:"
		"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:";
	struct et_oob_dest a, b;
	char err[160];

	(void)state;
	assert_int_equal(et_perftest_parse(m0, sizeof(m0), &a, err, sizeof(err)), 0);
	assert_int_equal(et_perftest_parse(m1, sizeof(m1), &b, err, sizeof(err)), 0);
	assert_int_equal(a.qpn, 0x11);
	assert_int_equal(b.qpn, 0x12);
	assert_int_equal(b.vaddr - a.vaddr, 0x10000);
	assert_int_equal(a.rkey, b.rkey);
}

/* perftest -R's address message: its struct pingpong_dest, big-endian
 * fields at x86-64's offsets */
static void
test_perftest_bin(void **state)
{
	struct et_oob_dest d = {.lid = 0, .out_reads = 16, .qpn = 0x000112, .psn = 0xabcdef,
				.rkey = 0x1234, .vaddr = 0x00007f0012345678ull, .srqn = 0}, back;
	uint8_t out[ET_PERFTEST_BIN_LEN];
	char err[160];

	(void)state;
	et_gid_from_ipv4(0x0a4d0002, d.gid);
	memset(out, 0x55, sizeof(out));
	et_perftest_bin_format(&d, out);
	assert_memory_equal(out, "\0\0\0\0\0\0\0\x10\0\0\x01\x12\0\xab\xcd\xef\0\0\x12\x34"
			    "\0\0\0\0\0\0\x7f\0\x12\x34\x56\x78", 32);
	assert_memory_equal(out + 32, GID_10_77_0_2, 16);
	assert_memory_equal(out + 48, "\0\0\0\0\0\0\0\0", 8);
	assert_int_equal(et_perftest_bin_parse(out, sizeof(out), &back, err, sizeof(err)), 0);
	assert_int_equal(back.qpn, 0x112);
	assert_int_equal(back.psn, 0xabcdef);
	assert_int_equal(back.rkey, 0x1234);
	assert_int_equal(back.vaddr, 0x00007f0012345678ull);
	assert_int_equal(back.out_reads, 16);
	assert_memory_equal(back.gid, GID_10_77_0_2, 16);
	/* another step's message (perftest's 16-byte version): named */
	assert_int_equal(et_perftest_bin_parse(out, 16, &back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "16 bytes"));
	out[8] = 1; /* a QPN beyond 24 bits */
	assert_int_equal(et_perftest_bin_parse(out, sizeof(out), &back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "beyond 24 bits"));
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
		cmocka_unit_test(test_perftest_report),
		cmocka_unit_test(test_perftest_report_bad),
		cmocka_unit_test(test_perftest_two_qps),
		cmocka_unit_test(test_perftest_bin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
