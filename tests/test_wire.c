/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 wire format: round trips, third-party ICRC vectors, malformed input.
 */
#include <stdio.h>

#include "et_test.h"

#include <rte_mbuf.h>

#include "base/et_csum.h"
#include "base/et_token_bucket.h"
#include "wire/et_arp_frame.h"
#include "wire/et_wire.h"
#include "vectors/scapy_vectors.h"

/* A CNP captured on a Mellanox ConnectX-4 Lx, from scapy's own test suite
 * (test/contrib/roce.uts, "RoCE CNP captured on ConnectX-4 Lx"), via
 * ../shared/roce-vectors.md.  ICRC on the wire: 82 fd 00 2a. */
static const uint8_t cx4_cnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

/* A UC SEND ONLY with 2 pad bytes and a non-zero UDP checksum, same test
 * file (Mellanox MACs).  ICRC on the wire: 78 f3 53 f3. */
static const uint8_t uc_send_only[] = {
	0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22,
	0x08, 0x00, 0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11,
	0xb4, 0xd5, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0x00,
	0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2, 0x24, 0x60, 0xff, 0xff, 0x00, 0x00,
	0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10, 0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89,
	0x35, 0xd9, 0x0e, 0x9a, 0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50,
	0x00, 0x00, 0x78, 0xf3, 0x53, 0xf3,
};

static const uint8_t all_opcodes[] = {
	ET_OP_SEND_FIRST, ET_OP_SEND_MIDDLE, ET_OP_SEND_LAST,
	ET_OP_SEND_LAST_IMM, ET_OP_SEND_ONLY, ET_OP_SEND_ONLY_IMM,
	ET_OP_WRITE_FIRST, ET_OP_WRITE_MIDDLE, ET_OP_WRITE_LAST,
	ET_OP_WRITE_LAST_IMM, ET_OP_WRITE_ONLY, ET_OP_WRITE_ONLY_IMM,
	ET_OP_ACK, ET_OP_CNP, ET_OP_READ_REQ, ET_OP_READ_RESP_FIRST,
	ET_OP_READ_RESP_MIDDLE, ET_OP_READ_RESP_LAST, ET_OP_READ_RESP_ONLY,
	ET_OP_ATOMIC_ACK, ET_OP_CMP_SWAP, ET_OP_FETCH_ADD, ET_OP_UD_SEND_ONLY,
	ET_OP_UD_SEND_ONLY_IMM,
};

static uint8_t payload_src[8192];

static void
sample_hdr(struct et_roce_hdr *h, uint8_t opcode, uint64_t *seed)
{
	memset(h, 0, sizeof(*h));
	for (int i = 0; i < 6; i++) {
		h->dst_mac.addr_bytes[i] = (uint8_t)et_test_rand(seed);
		h->src_mac.addr_bytes[i] = (uint8_t)et_test_rand(seed);
	}
	h->src_ip = (uint32_t)et_test_rand(seed);
	h->dst_ip = (uint32_t)et_test_rand(seed);
	h->dscp = et_test_rand(seed) % 64;
	h->ecn = et_test_rand(seed) % 4;
	h->ttl = (uint8_t)et_test_rand(seed);
	h->ip_id = (uint16_t)et_test_rand(seed);
	h->udp_sport = (uint16_t)et_test_rand(seed);
	h->opcode = opcode;
	h->solicited = et_test_rand(seed) & 1;
	h->migreq = et_test_rand(seed) & 1;
	h->ackreq = et_test_rand(seed) & 1;
	h->fecn = et_test_rand(seed) & 1;
	h->becn = et_test_rand(seed) & 1;
	h->pkey = (uint16_t)et_test_rand(seed);
	h->dest_qp = et_test_rand(seed) & ET_QPN_MASK;
	h->psn = et_test_rand(seed) & ET_PSN_MASK;
	if (et_opcode_flags[opcode] & ET_OPF_RETH) {
		h->reth_va = et_test_rand(seed);
		h->reth_rkey = (uint32_t)et_test_rand(seed);
		h->reth_dma_len = (uint32_t)et_test_rand(seed);
	}
	if (et_opcode_flags[opcode] & ET_OPF_AETH) {
		h->aeth_syndrome = (uint8_t)et_test_rand(seed);
		h->aeth_msn = et_test_rand(seed) & 0xffffff;
	}
	if (et_opcode_flags[opcode] & ET_OPF_IMM)
		h->imm = (uint32_t)et_test_rand(seed);
	if (et_opcode_flags[opcode] & ET_OPF_ATOMIC) {
		h->reth_va = et_test_rand(seed);
		h->reth_rkey = (uint32_t)et_test_rand(seed);
		h->atomic_swap = et_test_rand(seed);
		h->atomic_cmp = et_test_rand(seed);
	}
	if (et_opcode_flags[opcode] & ET_OPF_ATOMIC_ACK)
		h->atomic_orig = et_test_rand(seed);
	if (et_opcode_flags[opcode] & ET_OPF_DETH) {
		h->deth_qkey = (uint32_t)et_test_rand(seed);
		h->deth_src_qp = et_test_rand(seed) & ET_QPN_MASK;
	}
}

static void
assert_hdr_equal(const struct et_roce_hdr *a, const struct et_roce_hdr *b)
{
	uint16_t opf = et_opcode_flags[a->opcode];

	assert_memory_equal(&a->dst_mac, &b->dst_mac, 6);
	assert_memory_equal(&a->src_mac, &b->src_mac, 6);
	assert_int_equal(a->src_ip, b->src_ip);
	assert_int_equal(a->dst_ip, b->dst_ip);
	assert_int_equal(a->dscp, b->dscp);
	assert_int_equal(a->ecn, b->ecn);
	assert_int_equal(a->ttl, b->ttl);
	assert_int_equal(a->ip_id, b->ip_id);
	assert_int_equal(a->udp_sport, b->udp_sport);
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->solicited, b->solicited);
	assert_int_equal(a->migreq, b->migreq);
	assert_int_equal(a->ackreq, b->ackreq);
	assert_int_equal(a->fecn, b->fecn);
	assert_int_equal(a->becn, b->becn);
	assert_int_equal(a->tver, b->tver);
	assert_int_equal(a->pkey, b->pkey);
	assert_int_equal(a->dest_qp, b->dest_qp);
	assert_int_equal(a->psn, b->psn);
	if (opf & ET_OPF_RETH) {
		assert_true(a->reth_va == b->reth_va);
		assert_int_equal(a->reth_rkey, b->reth_rkey);
		assert_int_equal(a->reth_dma_len, b->reth_dma_len);
	}
	if (opf & ET_OPF_AETH) {
		assert_int_equal(a->aeth_syndrome, b->aeth_syndrome);
		assert_int_equal(a->aeth_msn, b->aeth_msn);
	}
	if (opf & ET_OPF_IMM)
		assert_int_equal(a->imm, b->imm);
	if (opf & ET_OPF_ATOMIC) {
		assert_true(a->reth_va == b->reth_va);
		assert_int_equal(a->reth_rkey, b->reth_rkey);
		assert_true(a->atomic_swap == b->atomic_swap);
		assert_true(a->atomic_cmp == b->atomic_cmp);
	}
	if (opf & ET_OPF_ATOMIC_ACK)
		assert_true(a->atomic_orig == b->atomic_orig);
	if (opf & ET_OPF_DETH) {
		assert_int_equal(a->deth_qkey, b->deth_qkey);
		assert_int_equal(a->deth_src_qp, b->deth_src_qp);
	}
}

static void
test_roundtrip_every_opcode(void **state)
{
	static const uint32_t sizes[] = {0, 1, 2, 3, 4, 5, 255, 256, 1024, 4093, 4096};
	static uint8_t buf[8192];
	uint64_t seed = 0x1234567;
	size_t o, s;

	for (o = 0; o < sizeof(all_opcodes); o++) {
		uint8_t op = all_opcodes[o];
		uint16_t opf = et_opcode_flags[op];

		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			uint32_t plen = sizes[s];
			struct et_roce_hdr h;
			struct et_roce_pkt p;
			int len, rc;

			sample_hdr(&h, op, &seed);
			len = et_roce_build(buf, sizeof(buf), &h, payload_src, plen);
			if (!(opf & ET_OPF_PAYLOAD) && plen) {
				assert_int_equal(len, -ET_WIRE_E_INVAL);
				continue;
			}
			if (!(opf & ET_OPF_LAST) && (plen & 3)) {
				assert_int_equal(len, -ET_WIRE_E_INVAL);
				continue;
			}
			assert_true(len > 0);
			assert_int_equal(len, et_roce_frame_len(op, plen));
			rc = et_roce_parse(buf, (size_t)len, &p, 0);
			assert_int_equal(rc, ET_WIRE_OK);
			assert_hdr_equal(&h, &p.h);
			assert_int_equal(p.payload_len, plen);
			assert_int_equal(p.h.pad, (opf & ET_OPF_LAST) ? (-plen) & 3 : 0);
			assert_int_equal(p.frame_len, (uint32_t)len);
			assert_memory_equal(p.payload, payload_src, plen);
		}
	}
}

/* Frames made by scapy: we parse them, and rebuilding them from the parsed
 * fields gives the very same bytes (IPv4 checksum and ICRC included). */
static void
test_scapy_vectors(void **state)
{
	static uint8_t buf[2048];
	size_t i;

	for (i = 0; i < sizeof(scapy_vectors) / sizeof(scapy_vectors[0]); i++) {
		const struct scapy_vector *v = &scapy_vectors[i];
		struct et_roce_pkt p;
		int rc = et_roce_parse(v->frame, v->len, &p, 0);

		if (rc != ET_WIRE_OK)
			fail_msg("%s: %s", v->name, et_wire_strerror(rc));
		assert_int_equal(p.h.opcode, v->opcode);
		assert_int_equal(p.h.dest_qp, v->dqpn);
		assert_int_equal(p.h.psn, v->psn);
		assert_int_equal(p.h.udp_sport, v->sport);
		assert_int_equal(p.payload_len, v->payload_len);
		rc = et_roce_build(buf, sizeof(buf), &p.h, p.payload, p.payload_len);
		assert_int_equal(rc, v->len);
		assert_memory_equal(buf, v->frame, v->len);
	}
}

static void
test_connectx_cnp(void **state)
{
	struct et_roce_pkt p;
	struct et_roce_hdr h;
	uint8_t buf[128];
	int rc = et_roce_parse(cx4_cnp, sizeof(cx4_cnp), &p, 0);

	assert_int_equal(rc, ET_WIRE_OK);
	assert_int_equal(p.h.opcode, ET_OP_CNP);
	assert_int_equal(p.h.dest_qp, 0x118);
	assert_int_equal(p.h.psn, 0);
	assert_true(p.h.becn);
	assert_int_equal(p.h.pkey, 0xffff);
	assert_int_equal(p.h.udp_sport, 0);
	assert_int_equal(p.h.dscp, 0xc2 >> 2);
	assert_int_equal(p.h.ecn, ET_ECN_ECT0);
	assert_int_equal(et_icrc_compute(cx4_cnp + 14, sizeof(cx4_cnp) - 14), 0x2a00fd82);

	/* our CNP builder makes the hardware's bytes */
	h = p.h;
	memset(&h.opcode, 0, sizeof(h) - offsetof(struct et_roce_hdr, opcode));
	et_roce_cnp_hdr(&h, 0x118);
	rc = et_roce_build(buf, sizeof(buf), &h, NULL, 0);
	assert_int_equal(rc, sizeof(cx4_cnp));
	assert_memory_equal(buf, cx4_cnp, sizeof(cx4_cnp));
}

static void
test_uc_vector_icrc(void **state)
{
	struct et_roce_pkt p;

	/* non-zero UDP checksum is masked; UC is not an opcode we speak */
	assert_int_equal(et_icrc_compute(uc_send_only + 14, sizeof(uc_send_only) - 14),
			 0xf353f378);
	assert_int_equal(et_roce_parse(uc_send_only, sizeof(uc_send_only), &p, 0),
			 -ET_WIRE_E_OPCODE);
}

static int
build_sample(uint8_t *buf, size_t cap, uint8_t op, uint32_t plen)
{
	uint64_t seed = 99 + op;
	struct et_roce_hdr h;

	sample_hdr(&h, op, &seed);
	h.ecn = ET_ECN_ECT0;
	h.ttl = 64;
	return et_roce_build(buf, cap, &h, payload_src, plen);
}

/* Every bit the ICRC covers is protected; masked fields are not. */
static void
test_icrc_covers_and_masks(void **state)
{
	static uint8_t frame[512], copy[512];
	struct et_roce_pkt p;
	int len = build_sample(frame, sizeof(frame), ET_OP_WRITE_FIRST, 100);
	size_t byte, ihl = 20;
	int bit;

	assert_true(len > 0);
	for (byte = ET_ETH_HLEN; byte < (size_t)len - ET_ICRC_LEN; byte++) {
		size_t off = byte - ET_ETH_HLEN;
		int masked = off == 1 || off == 8 || off == 10 || off == 11 ||
			     off == ihl + 6 || off == ihl + 7 ||
			     off == ihl + ET_UDP_HLEN + 4;

		for (bit = 0; bit < 8; bit++) {
			memcpy(copy, frame, (size_t)len);
			copy[byte] ^= (uint8_t)(1 << bit);
			int rc = et_roce_parse(copy, (size_t)len, &p, ET_PARSE_NO_IPCSUM);

			if (masked)
				assert_int_equal(rc, ET_WIRE_OK);
			else
				assert_int_not_equal(rc, ET_WIRE_OK);
		}
	}
	/* the trailer itself */
	for (bit = 0; bit < 32; bit++) {
		memcpy(copy, frame, (size_t)len);
		copy[len - 4 + bit / 8] ^= (uint8_t)(1 << (bit % 8));
		assert_int_equal(et_roce_parse(copy, (size_t)len, &p, 0), -ET_WIRE_E_ICRC);
	}
}

/* Switch-style edits through the incremental helpers keep the frame fully
 * valid: IPv4 checksum right, ICRC right (the UDP source port it covers is
 * fixed up incrementally; TTL, ECN and BECN are masked). */
static void
test_switch_edits_keep_frame_valid(void **state)
{
	static uint8_t frame[512];
	struct et_roce_pkt p;
	int len = build_sample(frame, sizeof(frame), ET_OP_SEND_ONLY, 33);
	uint8_t *ip = frame + ET_ETH_HLEN, *udp = ip + 20;
	int i;

	assert_true(len > 0);
	for (i = 0; i < 70; i++) {
		uint8_t ttl = et_ipv4_dec_ttl(ip);

		et_ipv4_set_ecn(ip, (uint8_t)(i & 3));
		et_roce_set_sport(ip, (uint16_t)(et_load16(udp) >> 8 | et_load16(udp) << 8 | i));
		frame[ET_ETH_HLEN + 28 + 4] ^= 0x40; /* BECN */
		assert_int_equal(et_ipv4_csum(ip, 20), et_load16(ip + 10));
		if (ttl == 0) {
			assert_int_equal(ip[8], 0);
			break;
		}
		assert_int_equal(et_roce_parse(frame, (size_t)len, &p, 0), ET_WIRE_OK);
		assert_int_equal(p.h.ttl, ttl);
		assert_int_equal(p.h.ecn, i & 3);
	}
	assert_int_equal(i, 63); /* TTL 64 reaches 0 on the 64th hop */
}

/* The incremental ICRC update equals a full recomputation, for every frame
 * length up to the IPv4 maximum and any covered 16-bit field. */
static void
test_icrc_incremental(void **state)
{
	static uint8_t frame[65536 + 64];
	uint64_t seed = 77;
	int i;

	for (i = 0; i < 3000; i++) {
		uint32_t plen = i < 2000 ? (uint32_t)(et_test_rand(&seed) % 9000)
					 : (uint32_t)(et_test_rand(&seed) % 65400);
		uint8_t op = plen > 65400 - 40 ? ET_OP_SEND_LAST : ET_OP_WRITE_LAST;
		struct et_roce_hdr h;
		uint8_t *ip = frame + ET_ETH_HLEN;
		size_t l3, off;
		uint16_t old, new = (uint16_t)et_test_rand(&seed);
		int len;

		sample_hdr(&h, op, &seed);
		len = et_roce_build(frame, sizeof(frame), &h, NULL, plen);
		if (len < 0)
			continue; /* over 65535 bytes of IPv4 */
		l3 = (size_t)len - ET_ETH_HLEN;
		if (i % 2) {
			et_roce_set_sport(ip, new);
		} else {
			/* any even offset in the covered, unmasked part */
			off = 12 + 2 * (et_test_rand(&seed) % ((l3 - 4 - 12) / 2));
			if (off == 26 || off == 32 || off == 10)
				continue; /* UDP checksum, BTH resv8a, IP checksum */
			old = et_load16(ip + off);
			et_store16(ip + off, new);
			et_icrc_update16(ip, l3, off, old, new);
		}
		uint32_t want = et_icrc_compute(ip, l3);
		const uint8_t *t = ip + l3 - 4;
		assert_int_equal(want, (uint32_t)t[0] | (uint32_t)t[1] << 8 |
					       (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24);
	}
}

/* UDP checksum of a frame, computed from scratch with the pseudo-header. */
static uint16_t
udp_csum_full(const uint8_t *ip)
{
	const uint8_t *udp = ip + 20;
	uint16_t ulen = et_load16(udp + 4);
	uint8_t pseudo[12 + 2048];
	uint16_t c;

	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 17;
	et_store16(pseudo + 10, ulen);
	memcpy(pseudo + 12, udp, ulen);
	pseudo[12 + 6] = pseudo[12 + 7] = 0;
	c = (uint16_t)~et_csum_sum(pseudo, 12u + ulen);
	return c == 0 ? 0xffff : c;
}

static void
test_udp_csum_incremental(void **state)
{
	static uint8_t frame[512];
	uint8_t *ip = frame + ET_ETH_HLEN, *udp = ip + 20;
	uint64_t seed = 5;
	int len = build_sample(frame, sizeof(frame), ET_OP_SEND_LAST, 77), i;

	assert_true(len > 0);
	et_store16(udp + 6, udp_csum_full(ip));
	/* RoCEv2 senders leave it 0; 0 must stay 0 */
	for (i = 0; i < 1000; i++) {
		et_udp_set_sport(udp, (uint16_t)et_test_rand(&seed));
		assert_int_equal(et_load16(udp + 6), udp_csum_full(ip));
	}
	et_store16(udp + 6, 0);
	et_udp_set_sport(udp, 0x1234);
	assert_int_equal(et_load16(udp + 6), 0);
}

struct mutation {
	const char *what;
	uint8_t op;
	uint32_t plen;
	void (*mutate)(uint8_t *f, size_t *len);
	int err;
};

static void
fix_ip(uint8_t *f)
{
	et_store16(f + 14 + 10, et_ipv4_csum(f + 14, (size_t)(f[14] & 0xf) * 4));
}

/* Shorten the RoCE part to n bytes after UDP, keeping lengths consistent. */
static void
shrink_l4(uint8_t *f, size_t *len, size_t n)
{
	et_store16(f + 16, (uint16_t)(20 + 8 + n));
	et_store16(f + 34 + 4, (uint16_t)(8 + n));
	*len = 14 + 20 + 8 + n;
	fix_ip(f);
}

static void m_ipv6(uint8_t *f, size_t *l) { et_store16(f + 12, 0x86dd); }
static void m_short_ip(uint8_t *f, size_t *l) { *l = 14 + 19; }
static void m_version(uint8_t *f, size_t *l) { f[14] = 0x65; }
static void m_ihl4(uint8_t *f, size_t *l) { f[14] = 0x44; }
static void m_ihl_big(uint8_t *f, size_t *l) { f[14] = 0x4f; *l = 14 + 40; }
static void m_totlen_big(uint8_t *f, size_t *l) { et_store16(f + 16, (uint16_t)(*l - 14 + 1)); fix_ip(f); }
static void m_totlen_small(uint8_t *f, size_t *l) { et_store16(f + 16, 27); fix_ip(f); }
static void m_csum(uint8_t *f, size_t *l) { f[14 + 11] ^= 1; }
static void m_frag(uint8_t *f, size_t *l) { f[14 + 6] |= 0x20; fix_ip(f); }
static void m_fragoff(uint8_t *f, size_t *l) { f[14 + 7] = 8; fix_ip(f); }
static void m_tcp(uint8_t *f, size_t *l) { f[14 + 9] = 6; fix_ip(f); }
static void m_udplen(uint8_t *f, size_t *l) { f[34 + 5]--; }
static void m_dport(uint8_t *f, size_t *l) { et_store16(f + 36, 4792); }
static void m_short_bth(uint8_t *f, size_t *l) { shrink_l4(f, l, 15); }
static void m_opcode_inv(uint8_t *f, size_t *l) { f[42] = 0x17; }
static void m_opcode_uc(uint8_t *f, size_t *l) { f[42] = 0x24; }
/* a WRITE ONLY with 8 bytes: RETH 16 + 8 = 24 bytes after the BTH, a READ
 * request's RETH and 8 bytes it may not carry, and short of an AtomicETH */
static void m_opcode_read(uint8_t *f, size_t *l) { f[42] = ET_OP_READ_REQ; }
static void m_opcode_cmp_swap(uint8_t *f, size_t *l) { f[42] = ET_OP_CMP_SWAP; }
/* an ACK's 4 bytes after the BTH: short of AETH + AtomicAckETH, and of a DETH */
static void m_opcode_atomic_ack(uint8_t *f, size_t *l) { f[42] = ET_OP_ATOMIC_ACK; }
static void m_opcode_ud_send(uint8_t *f, size_t *l) { f[42] = ET_OP_UD_SEND_ONLY; }
static void m_tver(uint8_t *f, size_t *l) { f[43] |= 1; }
static void m_short_aeth(uint8_t *f, size_t *l) { shrink_l4(f, l, 12 + 3 + 4); }
static void m_short_reth(uint8_t *f, size_t *l) { shrink_l4(f, l, 12 + 15 + 4); }
static void m_short_cnp(uint8_t *f, size_t *l) { shrink_l4(f, l, 12 + 15 + 4); }
static void m_pad_middle(uint8_t *f, size_t *l) { f[43] |= 0x10; }
static void m_pad_big(uint8_t *f, size_t *l) { f[43] |= 0x30; shrink_l4(f, l, 12 + 1 + 4); }
static void m_ack_payload(uint8_t *f, size_t *l) { shrink_l4(f, l, 12 + 4 + 4 + 4); }
static void m_icrc(uint8_t *f, size_t *l) { f[*l - 1] ^= 0x80; }
static void m_vlan(uint8_t *f, size_t *l)
{
	memmove(f + 16, f + 12, *l - 12);
	et_store16(f + 12, 0x8100);
	et_store16(f + 14, 0x0005);
	*l += 4;
}
static void m_trailer(uint8_t *f, size_t *l) { *l += 6; } /* Ethernet padding */

static void
test_malformed_table(void **state)
{
	static const struct mutation table[] = {
		{"EtherType IPv6", ET_OP_SEND_ONLY, 8, m_ipv6, ET_WIRE_E_NOT_IPV4},
		{"19-byte IP header", ET_OP_SEND_ONLY, 8, m_short_ip, ET_WIRE_E_TRUNC_IP},
		{"IP version 6", ET_OP_SEND_ONLY, 8, m_version, ET_WIRE_E_IP_VERSION},
		{"IHL 4", ET_OP_SEND_ONLY, 8, m_ihl4, ET_WIRE_E_IP_IHL},
		{"IHL beyond frame", ET_OP_SEND_ONLY, 8, m_ihl_big, ET_WIRE_E_IP_IHL},
		{"total length > frame", ET_OP_SEND_ONLY, 8, m_totlen_big, ET_WIRE_E_IP_LEN},
		{"total length < IP+UDP", ET_OP_SEND_ONLY, 8, m_totlen_small, ET_WIRE_E_IP_LEN},
		{"IP checksum", ET_OP_SEND_ONLY, 8, m_csum, ET_WIRE_E_IP_CSUM},
		{"more fragments", ET_OP_SEND_ONLY, 8, m_frag, ET_WIRE_E_IP_FRAG},
		{"fragment offset", ET_OP_SEND_ONLY, 8, m_fragoff, ET_WIRE_E_IP_FRAG},
		{"TCP", ET_OP_SEND_ONLY, 8, m_tcp, ET_WIRE_E_NOT_UDP},
		{"UDP length", ET_OP_SEND_ONLY, 8, m_udplen, ET_WIRE_E_UDP_LEN},
		{"UDP port 4792", ET_OP_SEND_ONLY, 8, m_dport, ET_WIRE_E_NOT_ROCE},
		{"BTH+ICRC cut", ET_OP_SEND_ONLY, 8, m_short_bth, ET_WIRE_E_TRUNC_BTH},
		{"SEND ONLY with invalidate", ET_OP_SEND_ONLY, 8, m_opcode_inv, ET_WIRE_E_OPCODE},
		{"RDMA READ request cut", ET_OP_SEND_ONLY, 8, m_opcode_read, ET_WIRE_E_TRUNC_EXT},
		{"RDMA READ request with payload", ET_OP_WRITE_ONLY, 8, m_opcode_read,
		 ET_WIRE_E_LENGTH},
		{"AtomicETH cut", ET_OP_WRITE_ONLY, 8, m_opcode_cmp_swap, ET_WIRE_E_TRUNC_EXT},
		{"AtomicAckETH cut", ET_OP_ACK, 0, m_opcode_atomic_ack, ET_WIRE_E_TRUNC_EXT},
		{"DETH cut", ET_OP_ACK, 0, m_opcode_ud_send, ET_WIRE_E_TRUNC_EXT},
		{"UC opcode", ET_OP_SEND_ONLY, 8, m_opcode_uc, ET_WIRE_E_OPCODE},
		{"TVer 1", ET_OP_SEND_ONLY, 8, m_tver, ET_WIRE_E_TVER},
		{"AETH cut", ET_OP_ACK, 0, m_short_aeth, ET_WIRE_E_TRUNC_EXT},
		{"RETH cut", ET_OP_WRITE_FIRST, 256, m_short_reth, ET_WIRE_E_TRUNC_EXT},
		{"CNP body cut", ET_OP_CNP, 0, m_short_cnp, ET_WIRE_E_TRUNC_EXT},
		{"pad on MIDDLE", ET_OP_WRITE_MIDDLE, 256, m_pad_middle, ET_WIRE_E_PAD},
		{"pad > payload", ET_OP_SEND_LAST, 4, m_pad_big, ET_WIRE_E_PAD},
		{"ACK with payload", ET_OP_ACK, 0, m_ack_payload, ET_WIRE_E_LENGTH},
		{"ICRC", ET_OP_WRITE_ONLY, 100, m_icrc, ET_WIRE_E_ICRC},
		{"VLAN tag", ET_OP_WRITE_ONLY, 100, m_vlan, ET_WIRE_OK},
		{"Ethernet trailer", ET_OP_ACK, 0, m_trailer, ET_WIRE_OK},
	};
	static uint8_t frame[1024];
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct mutation *t = &table[i];
		struct et_roce_pkt p;
		size_t len = (size_t)build_sample(frame, sizeof(frame) - 16, t->op, t->plen);
		uint8_t *exact;
		int rc;

		t->mutate(frame, &len);
		/* exact-size copy: ASan catches any read past the end */
		exact = malloc(len);
		assert_non_null(exact);
		memcpy(exact, frame, len);
		rc = et_roce_parse(exact, len, &p, 0);
		/* the NIC team's peek (headers only): the parser's QPN, or none
		 * for what is not RoCEv2 at all */
		int32_t peek = et_roce_peek_dest_qp(exact, len);

		free(exact);
		if (rc == 0)
			assert_int_equal(peek, (int32_t)p.h.dest_qp);
		if (t->err == ET_WIRE_E_NOT_IPV4 || t->err == ET_WIRE_E_NOT_UDP ||
		    t->err == ET_WIRE_E_NOT_ROCE)
			assert_int_equal(peek, -1);
		if (rc != -t->err)
			fail_msg("%s: got '%s', expected '%s'", t->what,
				 et_wire_strerror(rc), et_wire_strerror(t->err));
	}
}

static void
test_truncated_at_every_offset(void **state)
{
	static uint8_t frame[8192];
	size_t o, k;

	for (o = 0; o < sizeof(all_opcodes); o++) {
		uint8_t op = all_opcodes[o];
		uint32_t plen = (et_opcode_flags[op] & ET_OPF_PAYLOAD) ? 300 : 0;
		int len = build_sample(frame, sizeof(frame), op, plen);

		assert_true(len > 0);
		for (k = 0; k < (size_t)len; k++) {
			uint8_t *exact = malloc(k ? k : 1);
			struct et_roce_pkt p;
			int rc;

			memcpy(exact, frame, k);
			rc = et_roce_parse(exact, k, &p, 0);
			/* short of the BTH the peek has no QPN (and reads no further) */
			if (k < ET_ETH_HLEN + ET_IPV4_HLEN + ET_UDP_HLEN + ET_BTH_LEN)
				assert_int_equal(et_roce_peek_dest_qp(exact, k), -1);
			free(exact);
			assert_true(rc < 0 && -rc < ET_WIRE_E_COUNT);
			if (k < ET_ETH_HLEN)
				assert_int_equal(rc, -ET_WIRE_E_TRUNC_ETH);
			else if (k < ET_ETH_HLEN + 20)
				assert_int_equal(rc, -ET_WIRE_E_TRUNC_IP);
			else
				assert_int_equal(rc, -ET_WIRE_E_IP_LEN);
		}
	}
}

/* Random bytes and random corruptions of valid frames: always a verdict,
 * never a crash or an out-of-bounds read (this runs under ASan in CI). */
static void
test_random_input(void **state)
{
	static uint8_t frame[2048];
	uint64_t seed = 42;
	int counts[ET_WIRE_E_COUNT] = {0};
	int i;

	for (i = 0; i < 200000; i++) {
		size_t len, k;
		uint8_t *buf;
		struct et_roce_pkt p;
		int rc;

		if (i & 1) {
			len = et_test_rand(&seed) % 200;
			buf = malloc(len ? len : 1);
			for (k = 0; k < len; k++)
				buf[k] = (uint8_t)et_test_rand(&seed);
		} else {
			uint8_t op = all_opcodes[et_test_rand(&seed) % sizeof(all_opcodes)];
			uint32_t plen = (et_opcode_flags[op] & ET_OPF_PAYLOAD)
						? (et_test_rand(&seed) % 64) * 4
						: 0;
			int n, flips = 1 + (int)(et_test_rand(&seed) % 4);

			n = build_sample(frame, sizeof(frame), op, plen);
			assert_true(n > 0);
			len = (size_t)n;
			while (flips--)
				frame[et_test_rand(&seed) % len] ^=
					(uint8_t)(1 << (et_test_rand(&seed) % 8));
			if (et_test_rand(&seed) % 4 == 0)
				len = et_test_rand(&seed) % len;
			buf = malloc(len ? len : 1);
			memcpy(buf, frame, len);
		}
		rc = et_roce_parse(buf, len, &p, et_test_rand(&seed) % 4);
		free(buf);
		assert_true(rc <= 0 && -rc < ET_WIRE_E_COUNT);
		counts[-rc]++;
		if (rc == 0)
			assert_true(p.payload_len <= len);
	}
	/* the corruptions reach deep into the parser, not only its first check */
	assert_true(counts[ET_WIRE_E_ICRC] > 1000);
	assert_true(counts[ET_WIRE_E_IP_CSUM] > 1000);
	assert_true(counts[ET_WIRE_E_TRUNC_ETH] > 1000);
}

static void
test_builder_errors(void **state)
{
	uint8_t buf[256];
	struct et_roce_hdr h;
	uint64_t seed = 7;

	sample_hdr(&h, ET_OP_SEND_ONLY, &seed);
	assert_int_equal(et_roce_build(buf, 10, &h, payload_src, 0), -ET_WIRE_E_NOSPACE);
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, payload_src, 300),
			 -ET_WIRE_E_NOSPACE);
	h.psn = 1u << 24;
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, NULL, 0), -ET_WIRE_E_INVAL);
	sample_hdr(&h, ET_OP_SEND_ONLY, &seed);
	h.dest_qp = 1u << 24;
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, NULL, 0), -ET_WIRE_E_INVAL);
	sample_hdr(&h, ET_OP_SEND_ONLY, &seed);
	h.dscp = 64;
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, NULL, 0), -ET_WIRE_E_INVAL);
	sample_hdr(&h, 0x17, &seed); /* SEND ONLY with invalidate: not ours */
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, NULL, 0), -ET_WIRE_E_INVAL);
	sample_hdr(&h, ET_OP_UD_SEND_ONLY, &seed);
	h.deth_src_qp = 1u << 24;
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, NULL, 0), -ET_WIRE_E_INVAL);
	sample_hdr(&h, ET_OP_CNP, &seed);
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, payload_src, 4),
			 -ET_WIRE_E_INVAL);
	sample_hdr(&h, ET_OP_WRITE_MIDDLE, &seed);
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, payload_src, 6),
			 -ET_WIRE_E_INVAL);
	assert_int_equal(et_roce_build(buf, sizeof(buf), &h, payload_src, 8),
			 (int)et_roce_frame_len(ET_OP_WRITE_MIDDLE, 8));
	assert_string_equal(et_wire_strerror(-ET_WIRE_E_ICRC), "bad ICRC");
	assert_string_equal(et_wire_strerror(-999), "unknown error");
	assert_string_equal(et_opcode_name(ET_OP_CNP), "CNP");
	assert_string_equal(et_opcode_name(ET_OP_READ_REQ), "RDMA_READ_REQUEST");
	assert_string_equal(et_opcode_name(0x17), "UNKNOWN");
}

static void
test_aeth_and_psn_helpers(void **state)
{
	assert_int_equal(et_aeth_ack(ET_AETH_CREDITS_UNLIMITED), 0x1f);
	assert_int_equal(et_aeth_nak(ET_NAK_PSN_SEQ), 0x60);
	assert_int_equal(et_aeth_nak(ET_NAK_INVALID_REQ), 0x61);
	assert_int_equal(et_aeth_nak(ET_NAK_REMOTE_ACCESS), 0x62);
	assert_int_equal(et_aeth_nak(ET_NAK_REMOTE_OP), 0x63);
	assert_int_equal(et_aeth_rnr_nak(0x0e), 0x2e);
	assert_int_equal(et_psn_add(0xffffff, 1), 0);
	assert_int_equal(et_psn_add(0xfffffe, 5), 3);
	assert_int_equal(et_psn_diff(3, 0xfffffe), 5);
	assert_int_equal(et_psn_diff(0xfffffe, 3), -5);
	assert_int_equal(et_psn_diff(0x7fffff, 0), 0x7fffff);
	assert_int_equal(et_psn_diff(0x800000, 0), -0x800000);
}

static struct rte_mempool *pool;

static int
eal_setup(void **state)
{
	if (et_test_eal_init("test_wire") < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("wire", 255, 0, 0, 2048 + 128, 0);
	return pool ? 0 : -1;
}

static int
eal_teardown(void **state)
{
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

static void
test_mbuf_helpers(void **state)
{
	struct et_roce_hdr h;
	struct et_roce_pkt p;
	struct rte_mbuf *m, *m2;
	uint64_t seed = 11;
	int err;

	sample_hdr(&h, ET_OP_WRITE_ONLY_IMM, &seed);
	m = et_roce_build_mbuf(pool, &h, payload_src, 1000, &err);
	assert_non_null(m);
	assert_int_equal(err, 0);
	assert_int_equal(rte_pktmbuf_pkt_len(m), et_roce_frame_len(h.opcode, 1000));
	assert_int_equal(et_roce_parse_mbuf(m, &p, 0), ET_WIRE_OK);
	assert_hdr_equal(&h, &p.h);
	assert_memory_equal(p.payload, payload_src, 1000);

	/* too big for one mbuf */
	assert_null(et_roce_build_mbuf(pool, &h, payload_src, 4000, &err));
	assert_int_equal(err, -ET_WIRE_E_NOSPACE);

	/* a chained frame is refused, not half-read */
	m2 = rte_pktmbuf_alloc(pool);
	assert_non_null(m2);
	assert_non_null(rte_pktmbuf_append(m2, 16));
	assert_int_equal(rte_pktmbuf_chain(m, m2), 0);
	assert_int_equal(et_roce_parse_mbuf(m, &p, 0), -ET_WIRE_E_SEGMENTED);
	rte_pktmbuf_free(m);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* ARP frames: a kernel's request (hand-made) parses field by field; every
 * malformation is refused; a reply built from it is the request's mirror.
 * And the token bucket that limits what answers ARP. */
static void
test_arp_frames(void **state)
{
	static const uint8_t req[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0, 0x77, 0, 2, 0x08, 0x06,
		0, 1, 0x08, 0, 6, 4, 0, 1,
		0x52, 0x54, 0, 0x77, 0, 2, 10, 0, 0, 1,     /* sender */
		0, 0, 0, 0, 0, 0, 10, 0, 0, 254,            /* target */
	};
	static const uint8_t me[6] = {0x02, 0x01, 0, 0, 0, 0};
	struct et_arp_msg m;
	struct et_token_bucket b;
	uint8_t f[64], out[ET_ARP_FRAME_LEN];

	(void)state;
	assert_int_equal(et_arp_parse(req, sizeof(req), &m), 0);
	assert_int_equal(m.op, ET_ARP_OP_REQUEST);
	assert_memory_equal(m.sha, req + 6, 6);
	assert_int_equal(m.spa, 0x0a000001);
	assert_int_equal(m.tpa, 0x0a0000fe);
	/* truncated at every length below 42 */
	for (size_t len = 0; len < sizeof(req); len++)
		assert_int_equal(et_arp_parse(req, len, &m), -1);
	/* each header field wrong in turn: EtherType, htype, ptype, hlen, plen, op */
	static const struct { uint8_t off, val; } bad[] = {
		{13, 0x00}, {15, 6}, {16, 0x86}, {18, 8}, {19, 16}, {21, 0}, {21, 3},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(f, req, sizeof(req));
		f[bad[i].off] = bad[i].val;
		assert_int_equal(et_arp_parse(f, sizeof(req), &m), -1);
	}
	/* the reply: from us to the asker, our address for theirs, padded */
	assert_int_equal(et_arp_parse(req, sizeof(req), &m), 0);
	assert_int_equal(et_arp_build_reply(out, sizeof(out) - 1, &m, me, 0x0a0000fe), 0);
	assert_int_equal(et_arp_build_reply(out, sizeof(out), &m, me, 0x0a0000fe),
			 ET_ARP_FRAME_LEN);
	assert_memory_equal(out, req + 6, 6);
	assert_memory_equal(out + 6, me, 6);
	assert_memory_equal(out + 12, req + 12, 8);      /* type, htype, ptype, lengths */
	assert_int_equal(out[21], ET_ARP_OP_REPLY);
	assert_memory_equal(out + 22, me, 6);
	assert_memory_equal(out + 28, req + 38, 4);      /* spa: what was asked for */
	assert_memory_equal(out + 32, req + 22, 10);     /* tha, tpa: the asker */
	for (int i = 42; i < ET_ARP_FRAME_LEN; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(et_arp_parse(out, ET_ARP_FRAME_LEN, &m), 0);
	assert_int_equal(m.op, ET_ARP_OP_REPLY);

	/* the bucket: a burst of 3, then one per 100 ticks, never above 3 */
	et_token_bucket_init(&b, 100, 3);
	for (int i = 0; i < 3; i++)
		assert_true(et_token_bucket_take(&b, 0));
	assert_false(et_token_bucket_take(&b, 99));
	assert_true(et_token_bucket_take(&b, 100));
	assert_false(et_token_bucket_take(&b, 150));
	assert_true(et_token_bucket_take(&b, 1000000));
	assert_true(et_token_bucket_take(&b, 1000000));
	assert_true(et_token_bucket_take(&b, 1000000));
	assert_false(et_token_bucket_take(&b, 1000000));
}

int
main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_roundtrip_every_opcode),
		cmocka_unit_test(test_scapy_vectors),
		cmocka_unit_test(test_connectx_cnp),
		cmocka_unit_test(test_uc_vector_icrc),
		cmocka_unit_test(test_icrc_covers_and_masks),
		cmocka_unit_test(test_switch_edits_keep_frame_valid),
		cmocka_unit_test(test_udp_csum_incremental),
		cmocka_unit_test(test_icrc_incremental),
		cmocka_unit_test(test_malformed_table),
		cmocka_unit_test(test_truncated_at_every_offset),
		cmocka_unit_test(test_random_input),
		cmocka_unit_test(test_builder_errors),
		cmocka_unit_test(test_aeth_and_psn_helpers),
		cmocka_unit_test(test_arp_frames),
	};
	const struct CMUnitTest mbuf[] = {
		cmocka_unit_test(test_mbuf_helpers),
	};
	size_t i;

	for (i = 0; i < sizeof(payload_src); i++)
		payload_src[i] = (uint8_t)(i * 13 + 7);
	return cmocka_run_group_tests_name("wire", pure, NULL, NULL) |
	       cmocka_run_group_tests_name("wire-mbuf", mbuf, eal_setup, eal_teardown);
}
