/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's MADs: every message built and parsed back field by field, the
 * fields at the bytes IBTA vol. 1 tables 106-113 put them, every error of
 * the parser, rdma_cm's service IDs and the header of its REQs.
 */
#include "et_test.h"

#include <stdio.h>

#include "cm/et_mad.h"
#include "wire/et_gid.h"

/* The CM's byte b (after the 24-byte common header). */
#define CM(b) (ET_MAD_HDR_LEN + (b))

/* What Linux 6.1's CM (rdma_rxe, Debian 12) sent us, from the tap of a
 * tests/rxe run: ucmatose's REQ, and the REP of ib_write_bw -R's server
 * to our REQ; the MADs as QP 1 carried them. */
static const char RXE_REQ[] =
	"01070203000000000000000216945bf10010000000000000f15b9416000000000000000001061d2f"
	"505400fffe77000200000000000000000000120100000001000000a04b9992a5ffff30f0ffffffff"
	"00000000000000000000ffff0a4d000200000000000000000000ffff0a4d00032a4ab00000400098"
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000004099040000000000000000000000000a4d00020000000000000000000000000a4d0003"
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000";
static const char RXE_REP[] =
	"010702030000000003cd9681fa0abefc0013000000000000f25b9416fa0abefc0000000000001100"
	"000000008191ac00010178e0505400fffe7700020000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000";

static void
unhex(const char *h, uint8_t out[ET_MAD_LEN])
{
	assert_int_equal(strlen(h), 2 * ET_MAD_LEN);
	for (int i = 0; i < ET_MAD_LEN; i++) {
		unsigned int b;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &b), 1);
		out[i] = (uint8_t)b;
	}
}

/* Linux's REQ and REP, field by field as its cm.c set them; and built
 * again from what we parsed, byte for byte. */
static void
test_from_linux(void **state)
{
	uint8_t mad[ET_MAD_LEN], again[ET_MAD_LEN], gid[16];
	struct et_cm_msg m;
	struct et_cma_hdr h;
	const struct et_cm_req *r = &m.u.req;
	const struct et_cm_rep *p = &m.u.rep;

	(void)state;
	unhex(RXE_REQ, mad);
	assert_int_equal(et_cm_parse(mad, sizeof(mad), &m), 0);
	assert_int_equal(m.hdr.attr_id, ET_CM_REQ);
	assert_int_equal(m.hdr.tid, 0x0000000216945bf1ull);
	assert_int_equal(r->local_comm_id, 0xf15b9416);
	assert_int_equal(r->service_id, et_rdma_service_id(ET_RDMA_PS_TCP, 7471));
	assert_int_equal(r->local_ca_guid, 0x505400fffe770002ull); /* the EUI-64 of its MAC */
	assert_int_equal(r->local_qpn, 0x12);
	assert_int_equal(r->responder_resources, 1);
	assert_int_equal(r->initiator_depth, 1);
	assert_int_equal(r->remote_cm_response_timeout, 20); /* rdma_cm's 4.3 s */
	assert_int_equal(r->local_cm_response_timeout, 20);
	assert_int_equal(r->transport_type, 0);
	assert_int_equal(r->starting_psn, 0x4b9992);
	assert_int_equal(r->retry_count, 5);                 /* ucmatose's */
	assert_int_equal(r->rnr_retry_count, 0);
	assert_int_equal(r->pkey, 0xffff);
	assert_int_equal(r->path_mtu, 3);                    /* 1024: a 1500-byte link */
	assert_int_equal(r->max_cm_retries, 15);
	assert_int_equal(r->primary.local_lid, 0xffff);      /* permissive: routed */
	assert_int_equal(r->primary.remote_lid, 0xffff);
	et_gid_from_ipv4(0x0a4d0002, gid);
	assert_memory_equal(r->primary.local_gid, gid, 16);
	et_gid_from_ipv4(0x0a4d0003, gid);
	assert_memory_equal(r->primary.remote_gid, gid, 16);
	assert_int_equal(r->primary.flow_label, 0x2a4ab);
	assert_int_equal(r->primary.hop_limit, 64);
	assert_false(r->primary.subnet_local);
	assert_int_equal(r->primary.local_ack_timeout, 19);
	assert_int_equal(r->alternate.local_lid, 0);         /* no alternate path */
	assert_int_equal(et_cma_hdr_parse(m.pdata, m.pdata_len, &h, NULL), 0);
	assert_int_equal(h.src_port, 0x9904);
	assert_int_equal(h.src_ip, 0x0a4d0002);
	assert_int_equal(h.dst_ip, 0x0a4d0003);
	assert_int_equal(et_cm_build(again, &m), ET_MAD_LEN);
	assert_memory_equal(again, mad, ET_MAD_LEN);

	unhex(RXE_REP, mad);
	assert_int_equal(et_cm_parse(mad, sizeof(mad), &m), 0);
	assert_int_equal(m.hdr.attr_id, ET_CM_REP);
	assert_int_equal(m.hdr.tid, 0x03cd9681fa0abefcull); /* our REQ's */
	assert_int_equal(p->local_comm_id, 0xf25b9416);
	assert_int_equal(p->remote_comm_id, 0xfa0abefc);
	assert_int_equal(p->local_qpn, 0x11);
	assert_int_equal(p->starting_psn, 0x8191ac);
	assert_int_equal(p->responder_resources, 1);
	assert_int_equal(p->initiator_depth, 1);
	assert_int_equal(p->target_ack_delay, 15);
	assert_int_equal(p->failover, 0);
	assert_int_equal(p->rnr_retry_count, 7);
	assert_int_equal(p->local_ca_guid, 0x505400fffe770002ull);
	assert_int_equal(et_cm_build(again, &m), ET_MAD_LEN);
	assert_memory_equal(again, mad, ET_MAD_LEN);
}

static struct et_cm_msg
full_req(void)
{
	struct et_cm_msg m;
	struct et_cm_req *r = &m.u.req;

	et_cm_msg_init(&m, ET_CM_REQ, 0x0102030405060708ull);
	r->local_comm_id = 0x11223344;
	r->service_id = et_rdma_service_id(ET_RDMA_PS_TCP, 7471);
	r->local_ca_guid = 0x5054fffe770002ull;
	r->local_qkey = 0xabcdef01;
	r->local_qpn = 0x123456;
	r->responder_resources = 0x21;
	r->local_eecn = 0xabcdef;
	r->initiator_depth = 0x22;
	r->remote_eecn = 0x654321;
	r->remote_cm_response_timeout = 20;
	r->transport_type = 1;
	r->e2e_flow_control = true;
	r->starting_psn = 0xfedcba;
	r->local_cm_response_timeout = 19;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = 3;
	r->rdc_exists = true;
	r->rnr_retry_count = 6;
	r->max_cm_retries = 15;
	r->srq = true;
	r->ext_transport = 5;
	r->primary.local_lid = 0xffff;
	r->primary.remote_lid = 0xfffe;
	et_gid_from_ipv4(0x0a4d0003, r->primary.local_gid);
	et_gid_from_ipv4(0x0a4d0002, r->primary.remote_gid);
	r->primary.flow_label = 0xabcde;
	r->primary.packet_rate = 0x2a;
	r->primary.traffic_class = 0x68;
	r->primary.hop_limit = 64;
	r->primary.sl = 9;
	r->primary.subnet_local = true;
	r->primary.local_ack_timeout = 18;
	r->alternate.local_lid = 5;
	r->alternate.flow_label = 1;
	r->alternate.local_ack_timeout = 31;
	return m;
}

static void
test_req(void **state)
{
	uint8_t mad[ET_MAD_LEN], pdata[ET_CM_REQ_PDATA];
	struct et_cm_msg m = full_req(), p;

	(void)state;
	for (int i = 0; i < ET_CM_REQ_PDATA; i++)
		pdata[i] = (uint8_t)(i + 1);
	m.pdata = pdata;
	m.pdata_len = sizeof(pdata);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	/* the common header */
	assert_memory_equal(mad, "\x01\x07\x02\x03\x00\x00\x00\x00", 8);
	assert_memory_equal(mad + 8, "\x01\x02\x03\x04\x05\x06\x07\x08\x00\x10", 10);
	/* table 106, byte by byte where fields share words */
	assert_memory_equal(mad + CM(0), "\x11\x22\x33\x44", 4);
	assert_memory_equal(mad + CM(8), "\x00\x00\x00\x00\x01\x06\x1d\x2f", 8);
	assert_memory_equal(mad + CM(32), "\x12\x34\x56\x21\xab\xcd\xef\x22", 8);
	assert_int_equal(mad[CM(43)], 20 << 3 | 1 << 1 | 1);
	assert_memory_equal(mad + CM(44), "\xfe\xdc\xba", 3);
	assert_int_equal(mad[CM(47)], 19 << 3 | 7);
	assert_int_equal(mad[CM(50)], 3 << 4 | 1 << 3 | 6);
	assert_int_equal(mad[CM(51)], 15 << 4 | 1 << 3 | 5);
	assert_memory_equal(mad + CM(52), "\xff\xff\xff\xfe", 4);
	assert_memory_equal(mad + CM(56) + 10, "\xff\xff\x0a\x4d\x00\x03", 6);
	assert_memory_equal(mad + CM(72) + 10, "\xff\xff\x0a\x4d\x00\x02", 6);
	assert_memory_equal(mad + CM(88), "\xab\xcd\xe0\x2a\x68\x40", 6);
	assert_int_equal(mad[CM(94)], 9 << 4 | 1 << 3);
	assert_int_equal(mad[CM(95)], 18 << 3);
	assert_memory_equal(mad + CM(96), "\x00\x05", 2);
	assert_int_equal(mad[CM(139)], 31 << 3);
	assert_memory_equal(mad + CM(140), pdata, ET_CM_REQ_PDATA);

	assert_int_equal(et_cm_parse(mad, sizeof(mad), &p), 0);
	assert_int_equal(p.hdr.tid, 0x0102030405060708ull);
	assert_int_equal(p.hdr.attr_id, ET_CM_REQ);
	assert_memory_equal(&p.u.req, &m.u.req, sizeof(p.u.req));
	assert_int_equal(p.pdata_len, ET_CM_REQ_PDATA);
	assert_ptr_equal(p.pdata, mad + CM(140));
}

static void
test_rep(void **state)
{
	uint8_t mad[ET_MAD_LEN], pdata[3] = {9, 8, 7};
	struct et_cm_msg m, p;
	struct et_cm_rep *r = &m.u.rep;

	(void)state;
	et_cm_msg_init(&m, ET_CM_REP, 42);
	r->local_comm_id = 0xa1a2a3a4;
	r->remote_comm_id = 0xb1b2b3b4;
	r->local_qkey = 0x01020304;
	r->local_qpn = 0x000100;
	r->local_eecn = 0x777777;
	r->starting_psn = 0x123abc;
	r->responder_resources = 16;
	r->initiator_depth = 8;
	r->target_ack_delay = 15;
	r->failover = 2;
	r->e2e_flow_control = true;
	r->rnr_retry_count = 7;
	r->srq = true;
	r->local_ca_guid = 0x0200000000000001ull;
	m.pdata = pdata;
	m.pdata_len = sizeof(pdata);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_memory_equal(mad + CM(12), "\x00\x01\x00\x00\x77\x77\x77\x00\x12\x3a\xbc\x00", 12);
	assert_memory_equal(mad + CM(24), "\x10\x08", 2);
	assert_int_equal(mad[CM(26)], 15 << 3 | 2 << 1 | 1);
	assert_int_equal(mad[CM(27)], 7 << 5 | 1 << 4);
	assert_memory_equal(mad + CM(36), "\x09\x08\x07\x00", 4);
	assert_int_equal(et_cm_parse(mad, sizeof(mad), &p), 0);
	assert_memory_equal(&p.u.rep, r, sizeof(*r));
	assert_int_equal(p.pdata_len, ET_CM_REP_PDATA);
}

static void
test_short_messages(void **state)
{
	uint8_t mad[ET_MAD_LEN];
	struct et_cm_msg m, p;

	(void)state;
	/* REJ: what it answers, the ARI and its length, the reason */
	et_cm_msg_init(&m, ET_CM_REJ, 7);
	m.u.rej.local_comm_id = 1;
	m.u.rej.remote_comm_id = 2;
	m.u.rej.msg_rejected = ET_CM_MSG_REP;
	m.u.rej.reason = ET_CM_REJ_CONSUMER;
	m.u.rej.ari_len = 8;
	memcpy(m.u.rej.ari, "GUIDguid", 8);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_int_equal(mad[CM(8)], 1 << 6);
	assert_int_equal(mad[CM(9)], 8 << 1);
	assert_memory_equal(mad + CM(10), "\x00\x1cGUIDguid", 10);
	assert_int_equal(et_cm_parse(mad, sizeof(mad), &p), 0);
	assert_memory_equal(&p.u.rej, &m.u.rej, sizeof(m.u.rej));
	assert_int_equal(p.pdata_len, ET_CM_REJ_PDATA);
	assert_ptr_equal(p.pdata, mad + CM(84));

	/* MRA */
	et_cm_msg_init(&m, ET_CM_MRA, 7);
	m.u.mra.local_comm_id = 3;
	m.u.mra.remote_comm_id = 4;
	m.u.mra.msg_mraed = ET_CM_MSG_OTHER;
	m.u.mra.service_timeout = 21;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_int_equal(mad[CM(8)], 2 << 6);
	assert_int_equal(mad[CM(9)], 21 << 3);
	assert_int_equal(et_cm_parse(mad, sizeof(mad), &p), 0);
	assert_memory_equal(&p.u.mra, &m.u.mra, sizeof(m.u.mra));
	assert_ptr_equal(p.pdata, mad + CM(10));

	/* DREQ names the peer's QP; RTU and DREP the IDs only */
	et_cm_msg_init(&m, ET_CM_DREQ, 7);
	m.u.ids.local_comm_id = 5;
	m.u.ids.remote_comm_id = 6;
	m.u.ids.remote_qpn = 0x000011;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_memory_equal(mad + CM(0), "\0\0\0\x05\0\0\0\x06\0\0\x11\0", 12);
	assert_int_equal(et_cm_parse(mad, sizeof(mad), &p), 0);
	assert_int_equal(p.u.ids.remote_qpn, 0x11);
	assert_int_equal(p.pdata_len, ET_CM_DREQ_PDATA);
	for (uint16_t a = ET_CM_RTU; a <= ET_CM_DREP; a += ET_CM_DREP - ET_CM_RTU) {
		et_cm_msg_init(&m, a, 7);
		m.u.ids.local_comm_id = 8;
		m.u.ids.remote_comm_id = 9;
		assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
		assert_int_equal(et_cm_parse(mad, sizeof(mad), &p), 0);
		assert_int_equal(p.u.ids.local_comm_id, 8);
		assert_int_equal(p.u.ids.remote_comm_id, 9);
		assert_int_equal(p.pdata_len, 224);
		assert_ptr_equal(p.pdata, mad + CM(8));
	}
}

static void
test_parse_errors(void **state)
{
	struct et_cm_msg m = full_req(), p;
	uint8_t mad[ET_MAD_LEN + 1], bad[ET_MAD_LEN];

	(void)state;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_int_equal(et_cm_parse(mad, ET_MAD_LEN - 1, &p), -ET_MAD_E_TRUNC);
	assert_int_equal(et_cm_parse(mad, 0, &p), -ET_MAD_E_TRUNC);
	assert_int_equal(et_cm_parse(mad, ET_MAD_LEN + 1, &p), -ET_MAD_E_OVERSIZE);
	struct {
		int off;
		uint8_t v;
		int err;
	} cases[] = {
		{0, 2, ET_MAD_E_BASE_VERSION},
		{1, 0x04, ET_MAD_E_CLASS},       /* the subnet administrator */
		{2, 1, ET_MAD_E_CLASS_VERSION},
		{3, 0x01, ET_MAD_E_METHOD},      /* Get */
		{17, 0x19, ET_MAD_E_ATTR},       /* LAP */
		{17, 0x01, ET_MAD_E_ATTR},       /* ClassPortInfo */
		{17, 0x1a, ET_MAD_E_ATTR},       /* APR */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, mad, ET_MAD_LEN);
		bad[cases[i].off] = cases[i].v;
		assert_int_equal(et_cm_parse(bad, ET_MAD_LEN, &p), -cases[i].err);
	}
	/* fields that cannot be: a REJ's ARI longer than its 72 bytes, an MRA
	 * or REJ answering message 3 */
	et_cm_msg_init(&m, ET_CM_REJ, 1);
	assert_int_equal(et_cm_build(bad, &m), ET_MAD_LEN);
	bad[CM(9)] = 73 << 1;
	assert_int_equal(et_cm_parse(bad, ET_MAD_LEN, &p), -ET_MAD_E_FIELD);
	bad[CM(9)] = 72 << 1;
	assert_int_equal(et_cm_parse(bad, ET_MAD_LEN, &p), 0);
	bad[CM(8)] = 3 << 6;
	assert_int_equal(et_cm_parse(bad, ET_MAD_LEN, &p), -ET_MAD_E_FIELD);
	et_cm_msg_init(&m, ET_CM_MRA, 1);
	assert_int_equal(et_cm_build(bad, &m), ET_MAD_LEN);
	bad[CM(8)] = 3 << 6;
	assert_int_equal(et_cm_parse(bad, ET_MAD_LEN, &p), -ET_MAD_E_FIELD);
	/* every error has a name and a message */
	for (int e = 0; e <= ET_MAD_E_COUNT; e++) {
		assert_non_null(et_mad_err_name(-e));
		assert_non_null(et_mad_strerror(e));
	}
	assert_string_equal(et_mad_err_name(-ET_MAD_E_CLASS), "class");
}

static void
test_build_errors(void **state)
{
	uint8_t mad[ET_MAD_LEN], big[ET_CM_REP_PDATA + 1] = {0};
	struct et_cm_msg m = full_req();

	(void)state;
	m.u.req.local_qpn = 1u << 24;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	m = full_req();
	m.u.req.primary.flow_label = 1u << 20;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	m = full_req();
	m.pdata = big;
	m.pdata_len = ET_CM_REQ_PDATA + 1;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	et_cm_msg_init(&m, ET_CM_REP, 1);
	m.pdata = big;
	m.pdata_len = ET_CM_REP_PDATA + 1;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	et_cm_msg_init(&m, 0x19, 1);
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_ATTR);
	et_cm_msg_init(&m, ET_CM_REJ, 1);
	m.u.rej.ari_len = 73;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	et_cm_msg_init(&m, ET_CM_DREQ, 1);
	m.u.ids.remote_qpn = 1u << 24;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
}

/* SIDR_REQ and SIDR_REP where Linux's CM puts their fields
 * (ibta_vol1_c12.h: tables 119 and 120), both ways. */
static void
test_sidr(void **state)
{
	static const uint8_t pd[] = "udaddy";
	struct et_cm_msg m, p;
	uint8_t mad[ET_MAD_LEN];
	const uint8_t *c = mad + ET_MAD_HDR_LEN;

	(void)state;
	et_cm_msg_init(&m, ET_CM_SIDR_REQ, 0x1122334455667788ull);
	m.u.sidr_req.request_id = 0xa1b2c3d4;
	m.u.sidr_req.pkey = 0xffff;
	m.u.sidr_req.service_id = et_rdma_service_id(ET_RDMA_PS_UDP, 7174);
	m.pdata = pd;
	m.pdata_len = sizeof(pd);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_memory_equal(mad + 16, "\x00\x17", 2);
	assert_memory_equal(c, "\xa1\xb2\xc3\xd4\xff\xff\x00\x00", 8);
	assert_memory_equal(c + 8, "\x00\x00\x00\x00\x01\x11\x1c\x06", 8);
	assert_memory_equal(c + 16, pd, sizeof(pd));
	assert_int_equal(et_cm_parse(mad, ET_MAD_LEN, &p), 0);
	assert_int_equal(p.u.sidr_req.request_id, 0xa1b2c3d4);
	assert_int_equal(p.u.sidr_req.pkey, 0xffff);
	assert_int_equal(p.u.sidr_req.service_id, 0x01111c06);
	assert_int_equal(p.pdata_len, ET_CM_SIDR_REQ_PDATA);
	assert_ptr_equal(p.pdata, c + 16);
	et_cm_msg_init(&m, ET_CM_SIDR_REP, 0x1122334455667788ull);
	m.u.sidr_rep.request_id = 0xa1b2c3d4;
	m.u.sidr_rep.status = ET_CM_SIDR_SUCCESS;
	m.u.sidr_rep.qpn = 0x123456;
	m.u.sidr_rep.service_id = 0x01111c06;
	m.u.sidr_rep.qkey = 0x01234567;
	m.pdata = pd;
	m.pdata_len = sizeof(pd);
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	assert_memory_equal(c, "\xa1\xb2\xc3\xd4\x00\x00\x00\x00\x12\x34\x56\x00", 12);
	assert_memory_equal(c + 12, "\x00\x00\x00\x00\x01\x11\x1c\x06\x01\x23\x45\x67", 12);
	assert_memory_equal(c + 96, pd, sizeof(pd));
	assert_int_equal(et_cm_parse(mad, ET_MAD_LEN, &p), 0);
	assert_int_equal(p.u.sidr_rep.qpn, 0x123456);
	assert_int_equal(p.u.sidr_rep.qkey, 0x01234567);
	assert_int_equal(p.u.sidr_rep.service_id, 0x01111c06);
	assert_int_equal(p.u.sidr_rep.status, 0);
	assert_int_equal(p.pdata_len, ET_CM_SIDR_REP_PDATA);
	assert_string_equal(et_cm_attr_name(ET_CM_SIDR_REP), "SIDR_REP");
	/* what cannot be: a QPN beyond 24 bits, more than 72 bytes of info */
	m.u.sidr_rep.qpn = 1u << 24;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	m.u.sidr_rep.qpn = 1;
	m.u.sidr_rep.info_len = ET_CM_SIDR_INFO_LEN + 1;
	assert_int_equal(et_cm_build(mad, &m), -ET_MAD_E_FIELD);
	m.u.sidr_rep.info_len = 0;
	assert_int_equal(et_cm_build(mad, &m), ET_MAD_LEN);
	mad[ET_MAD_HDR_LEN + 5] = ET_CM_SIDR_INFO_LEN + 1;
	assert_int_equal(et_cm_parse(mad, ET_MAD_LEN, &p), -ET_MAD_E_FIELD);
}

static void
test_rdma_cm(void **state)
{
	uint8_t h[ET_CMA_HDR_LEN];
	struct et_cma_hdr x = {.src_port = 0xc0de, .src_ip = 0x0a4d0003, .dst_ip = 0x0a4d0002}, y;
	const char *why = NULL;

	(void)state;
	/* RDMA_PS_TCP, port 18515 (perftest's) */
	assert_int_equal(et_rdma_service_id(ET_RDMA_PS_TCP, 18515), 0x0000000001064853ull);
	assert_true(et_rdma_sid_is_ip(0x0000000001064853ull));
	assert_false(et_rdma_sid_is_ip(0x0002c90300000001ull));
	assert_int_equal(et_rdma_sid_ps(0x0000000001064853ull), ET_RDMA_PS_TCP);
	assert_int_equal(et_rdma_sid_port(0x0000000001064853ull), 18515);
	/* cma.c's cma_hdr: version, IP version << 4, port, then the addresses
	 * in the last 4 bytes of 16 */
	et_cma_hdr_build(h, &x);
	assert_memory_equal(h, "\x00\x40\xc0\xde", 4);
	assert_memory_equal(h + 4, "\0\0\0\0\0\0\0\0\0\0\0\0\x0a\x4d\x00\x03", 16);
	assert_memory_equal(h + 20, "\0\0\0\0\0\0\0\0\0\0\0\0\x0a\x4d\x00\x02", 16);
	assert_int_equal(et_cma_hdr_parse(h, sizeof(h), &y, &why), 0);
	assert_memory_equal(&x, &y, sizeof(x));
	assert_int_equal(et_cma_hdr_parse(h, ET_CMA_HDR_LEN - 1, &y, &why), -1);
	assert_non_null(why);
	h[1] = 0x60;
	assert_int_equal(et_cma_hdr_parse(h, sizeof(h), &y, &why), -1);
	assert_string_equal(why, "rdma_cm over IPv6 is not spoken");
	h[1] = 0x40;
	h[0] = 0x10;
	assert_int_equal(et_cma_hdr_parse(h, sizeof(h), &y, &why), -1);
	/* path MTU codes */
	assert_int_equal(et_cm_mtu_bytes(3), 1024);
	assert_int_equal(et_cm_mtu_bytes(0), 0);
	assert_int_equal(et_cm_mtu_bytes(6), 0);
	assert_int_equal(et_cm_mtu_code(4096), 5);
	assert_int_equal(et_cm_mtu_code(1000), 0);
	assert_int_equal(et_cm_timeout_ns(14), 67108864);
	assert_string_equal(et_cm_rej_reason_str(8), "invalid service ID (no listener)");
	assert_string_equal(et_cm_rej_reason_str(99), "reason 99");
	assert_string_equal(et_cm_attr_name(ET_CM_DREP), "DREP");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_linux),
		cmocka_unit_test(test_req),
		cmocka_unit_test(test_rep),
		cmocka_unit_test(test_short_messages),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_sidr),
		cmocka_unit_test(test_rdma_cm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
