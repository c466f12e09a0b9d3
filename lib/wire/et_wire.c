/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 frame building and total parsing.
 */
#include <netinet/in.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include "base/et_bytes.h"
#include "base/et_csum.h"
#include "wire/et_wire.h"

#define SEND_DATA (ET_OPF_VALID | ET_OPF_SEND | ET_OPF_PAYLOAD)
#define WRITE_DATA (ET_OPF_VALID | ET_OPF_WRITE | ET_OPF_PAYLOAD)
#define READ_RESP (ET_OPF_VALID | ET_OPF_READ_RESP | ET_OPF_PAYLOAD)
#define UD_SEND (ET_OPF_VALID | ET_OPF_PAYLOAD | ET_OPF_DETH | ET_OPF_FIRST | \
		 ET_OPF_LAST)

const uint16_t et_opcode_flags[256] = {
	[ET_OP_SEND_FIRST] = SEND_DATA | ET_OPF_FIRST,
	[ET_OP_SEND_MIDDLE] = SEND_DATA,
	[ET_OP_SEND_LAST] = SEND_DATA | ET_OPF_LAST,
	[ET_OP_SEND_LAST_IMM] = SEND_DATA | ET_OPF_LAST | ET_OPF_IMM,
	[ET_OP_SEND_ONLY] = SEND_DATA | ET_OPF_FIRST | ET_OPF_LAST,
	[ET_OP_SEND_ONLY_IMM] = SEND_DATA | ET_OPF_FIRST | ET_OPF_LAST | ET_OPF_IMM,
	[ET_OP_WRITE_FIRST] = WRITE_DATA | ET_OPF_FIRST | ET_OPF_RETH,
	[ET_OP_WRITE_MIDDLE] = WRITE_DATA,
	[ET_OP_WRITE_LAST] = WRITE_DATA | ET_OPF_LAST,
	[ET_OP_WRITE_LAST_IMM] = WRITE_DATA | ET_OPF_LAST | ET_OPF_IMM,
	[ET_OP_WRITE_ONLY] = WRITE_DATA | ET_OPF_FIRST | ET_OPF_LAST | ET_OPF_RETH,
	[ET_OP_WRITE_ONLY_IMM] =
		WRITE_DATA | ET_OPF_FIRST | ET_OPF_LAST | ET_OPF_RETH | ET_OPF_IMM,
	[ET_OP_READ_REQ] = ET_OPF_VALID | ET_OPF_READ_REQ | ET_OPF_RETH,
	[ET_OP_READ_RESP_FIRST] = READ_RESP | ET_OPF_FIRST | ET_OPF_AETH,
	[ET_OP_READ_RESP_MIDDLE] = READ_RESP,
	[ET_OP_READ_RESP_LAST] = READ_RESP | ET_OPF_LAST | ET_OPF_AETH,
	[ET_OP_READ_RESP_ONLY] = READ_RESP | ET_OPF_FIRST | ET_OPF_LAST | ET_OPF_AETH,
	[ET_OP_ACK] = ET_OPF_VALID | ET_OPF_AETH,
	[ET_OP_ATOMIC_ACK] = ET_OPF_VALID | ET_OPF_AETH | ET_OPF_ATOMIC_ACK,
	[ET_OP_CMP_SWAP] = ET_OPF_VALID | ET_OPF_ATOMIC,
	[ET_OP_FETCH_ADD] = ET_OPF_VALID | ET_OPF_ATOMIC,
	[ET_OP_UD_SEND_ONLY] = UD_SEND,
	[ET_OP_UD_SEND_ONLY_IMM] = UD_SEND | ET_OPF_IMM,
	[ET_OP_CNP] = ET_OPF_VALID | ET_OPF_CNP,
};

static const char *const opcode_names[256] = {
	[ET_OP_SEND_FIRST] = "SEND_FIRST",
	[ET_OP_SEND_MIDDLE] = "SEND_MIDDLE",
	[ET_OP_SEND_LAST] = "SEND_LAST",
	[ET_OP_SEND_LAST_IMM] = "SEND_LAST_WITH_IMMEDIATE",
	[ET_OP_SEND_ONLY] = "SEND_ONLY",
	[ET_OP_SEND_ONLY_IMM] = "SEND_ONLY_WITH_IMMEDIATE",
	[ET_OP_WRITE_FIRST] = "RDMA_WRITE_FIRST",
	[ET_OP_WRITE_MIDDLE] = "RDMA_WRITE_MIDDLE",
	[ET_OP_WRITE_LAST] = "RDMA_WRITE_LAST",
	[ET_OP_WRITE_LAST_IMM] = "RDMA_WRITE_LAST_WITH_IMMEDIATE",
	[ET_OP_WRITE_ONLY] = "RDMA_WRITE_ONLY",
	[ET_OP_WRITE_ONLY_IMM] = "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	[ET_OP_READ_REQ] = "RDMA_READ_REQUEST",
	[ET_OP_READ_RESP_FIRST] = "RDMA_READ_RESPONSE_FIRST",
	[ET_OP_READ_RESP_MIDDLE] = "RDMA_READ_RESPONSE_MIDDLE",
	[ET_OP_READ_RESP_LAST] = "RDMA_READ_RESPONSE_LAST",
	[ET_OP_READ_RESP_ONLY] = "RDMA_READ_RESPONSE_ONLY",
	[ET_OP_ACK] = "ACKNOWLEDGE",
	[ET_OP_ATOMIC_ACK] = "ATOMIC_ACKNOWLEDGE",
	[ET_OP_CMP_SWAP] = "COMPARE_SWAP",
	[ET_OP_FETCH_ADD] = "FETCH_ADD",
	[ET_OP_UD_SEND_ONLY] = "UD_SEND_ONLY",
	[ET_OP_UD_SEND_ONLY_IMM] = "UD_SEND_ONLY_WITH_IMMEDIATE",
	[ET_OP_CNP] = "CNP",
};

const char *
et_opcode_name(uint8_t op)
{
	return opcode_names[op] ? opcode_names[op] : "UNKNOWN";
}

#define MSG(id, name, msg) [ET_WIRE_E_##id] = msg,
#define NAME(id, name, msg) [ET_WIRE_E_##id] = #name,
static const char *const err_msgs[ET_WIRE_E_COUNT] = {[ET_WIRE_OK] = "ok", ET_WIRE_ERRORS(MSG)};
static const char *const err_names[ET_WIRE_E_COUNT] = {[ET_WIRE_OK] = "ok", ET_WIRE_ERRORS(NAME)};
#undef MSG
#undef NAME

static const char *
lookup(const char *const *table, int err)
{
	if (err < 0)
		err = -err;
	return err < ET_WIRE_E_COUNT ? table[err] : "unknown error";
}

const char *
et_wire_strerror(int err)
{
	return lookup(err_msgs, err);
}

const char *
et_wire_err_name(int err)
{
	return lookup(err_names, err);
}

static inline uint32_t
load24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline void
store24(uint8_t *p, uint32_t v)
{
	p[0] = (v >> 16) & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = v & 0xff;
}

static inline uint64_t
load64(const uint8_t *p)
{
	return (uint64_t)et_load32(p) << 32 | et_load32(p + 4);
}

static inline void
store64(uint8_t *p, uint64_t v)
{
	et_store32(p, v >> 32);
	et_store32(p + 4, (uint32_t)v);
}

/* Bytes of extension headers after the BTH. */
static inline size_t
ext_len(uint16_t opf)
{
	return ((opf & ET_OPF_DETH) ? ET_DETH_LEN : 0) +
	       ((opf & ET_OPF_RETH) ? ET_RETH_LEN : 0) +
	       ((opf & ET_OPF_ATOMIC) ? ET_ATOMIC_ETH_LEN : 0) +
	       ((opf & ET_OPF_AETH) ? ET_AETH_LEN : 0) +
	       ((opf & ET_OPF_ATOMIC_ACK) ? ET_ATOMIC_ACK_ETH_LEN : 0) +
	       ((opf & ET_OPF_IMM) ? ET_IMMDT_LEN : 0) +
	       ((opf & ET_OPF_CNP) ? ET_CNP_RSVD_LEN : 0);
}

size_t
et_roce_hdr_len(uint8_t opcode)
{
	return ET_ETH_HLEN + ET_IPV4_HLEN + ET_UDP_HLEN + ET_BTH_LEN +
	       ext_len(et_opcode_flags[opcode]);
}

size_t
et_roce_frame_len(uint8_t opcode, uint32_t payload_len)
{
	uint32_t pad = (et_opcode_flags[opcode] & ET_OPF_LAST) ? (-payload_len) & 3 : 0;

	return et_roce_hdr_len(opcode) + payload_len + pad + ET_ICRC_LEN;
}

void
et_roce_cnp_hdr(struct et_roce_hdr *h, uint32_t dest_qp)
{
	h->opcode = ET_OP_CNP;
	h->solicited = h->migreq = h->ackreq = h->fecn = false;
	h->becn = true;
	h->tver = 0;
	h->pkey = ET_PKEY_DEFAULT;
	h->dest_qp = dest_qp;
	h->psn = 0;
}

int32_t
et_roce_peek_dest_qp(const uint8_t *buf, size_t len)
{
	size_t off = ET_ETH_HLEN;
	const uint8_t *ip;
	size_t ihl;

	if (len < ET_ETH_HLEN + ET_VLAN_HLEN)
		return -1;
	if (et_load16(buf + 12) == RTE_ETHER_TYPE_VLAN)
		off += ET_VLAN_HLEN;
	if (et_load16(buf + off - 2) != RTE_ETHER_TYPE_IPV4 || len - off < ET_IPV4_HLEN)
		return -1;
	ip = buf + off;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (ip[9] != IPPROTO_UDP || ihl < ET_IPV4_HLEN ||
	    len - off < ihl + ET_UDP_HLEN + ET_BTH_LEN ||
	    et_load16(ip + ihl + 2) != ET_ROCE_UDP_PORT)
		return -1;
	/* the BTH's destination QP: its bytes 5..7 */
	return (int32_t)(et_load32(ip + ihl + ET_UDP_HLEN + 4) & ET_QPN_MASK);
}

int
et_roce_parse(const uint8_t *buf, size_t len, struct et_roce_pkt *pkt,
	      unsigned int flags)
{
	struct et_roce_hdr *h = &pkt->h;
	const uint8_t *ip, *udp, *bth, *p;
	size_t off = ET_ETH_HLEN, ihl, tot, rem, ext;
	uint16_t type, opf;

	if (len < ET_ETH_HLEN)
		return -ET_WIRE_E_TRUNC_ETH;
	type = et_load16(buf + 12);
	pkt->has_vlan = false;
	pkt->vlan_tci = 0;
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < ET_ETH_HLEN + ET_VLAN_HLEN)
			return -ET_WIRE_E_TRUNC_ETH;
		pkt->has_vlan = true;
		pkt->vlan_tci = et_load16(buf + 14);
		type = et_load16(buf + 16);
		off += ET_VLAN_HLEN;
	}
	if (type != RTE_ETHER_TYPE_IPV4)
		return -ET_WIRE_E_NOT_IPV4;
	memcpy(&h->dst_mac, buf, RTE_ETHER_ADDR_LEN);
	memcpy(&h->src_mac, buf + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);

	if (len - off < ET_IPV4_HLEN)
		return -ET_WIRE_E_TRUNC_IP;
	ip = buf + off;
	if ((ip[0] >> 4) != 4)
		return -ET_WIRE_E_IP_VERSION;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (ihl < ET_IPV4_HLEN || ihl > len - off)
		return -ET_WIRE_E_IP_IHL;
	tot = et_load16(ip + 2);
	if (tot < ihl + ET_UDP_HLEN || tot > len - off)
		return -ET_WIRE_E_IP_LEN;
	if (!(flags & ET_PARSE_NO_IPCSUM) && !et_ipv4_csum_ok(ip, ihl))
		return -ET_WIRE_E_IP_CSUM;
	if (et_load16(ip + 6) & 0x3fff) /* MF or a fragment offset */
		return -ET_WIRE_E_IP_FRAG;
	if (ip[9] != IPPROTO_UDP)
		return -ET_WIRE_E_NOT_UDP;
	h->dscp = ip[1] >> 2;
	h->ecn = ip[1] & 3;
	h->ttl = ip[8];
	h->ip_id = et_load16(ip + 4);
	h->src_ip = et_load32(ip + 12);
	h->dst_ip = et_load32(ip + 16);

	udp = ip + ihl;
	if (et_load16(udp + 4) != tot - ihl)
		return -ET_WIRE_E_UDP_LEN;
	if (et_load16(udp + 2) != ET_ROCE_UDP_PORT)
		return -ET_WIRE_E_NOT_ROCE;
	h->udp_sport = et_load16(udp);

	rem = tot - ihl - ET_UDP_HLEN;
	if (rem < ET_BTH_LEN + ET_ICRC_LEN)
		return -ET_WIRE_E_TRUNC_BTH;
	rem -= ET_BTH_LEN + ET_ICRC_LEN;
	bth = udp + ET_UDP_HLEN;
	h->opcode = bth[0];
	opf = et_opcode_flags[h->opcode];
	if (!(opf & ET_OPF_VALID))
		return -ET_WIRE_E_OPCODE;
	h->solicited = bth[1] >> 7;
	h->migreq = (bth[1] >> 6) & 1;
	h->pad = (bth[1] >> 4) & 3;
	h->tver = bth[1] & 0xf;
	if (h->tver != 0)
		return -ET_WIRE_E_TVER;
	h->pkey = et_load16(bth + 2);
	h->fecn = bth[4] >> 7;
	h->becn = (bth[4] >> 6) & 1;
	h->resv8a = bth[4] & 0x3f;
	h->dest_qp = load24(bth + 5);
	h->ackreq = bth[8] >> 7;
	h->psn = load24(bth + 9);

	ext = ext_len(opf);
	if (rem < ext)
		return -ET_WIRE_E_TRUNC_EXT;
	rem -= ext;
	p = bth + ET_BTH_LEN;
	if (opf & ET_OPF_DETH) {
		h->deth_qkey = et_load32(p);
		h->deth_src_qp = load24(p + 5);
		p += ET_DETH_LEN;
	}
	if (opf & ET_OPF_RETH) {
		h->reth_va = load64(p);
		h->reth_rkey = et_load32(p + 8);
		h->reth_dma_len = et_load32(p + 12);
		p += ET_RETH_LEN;
	}
	if (opf & ET_OPF_ATOMIC) {
		h->reth_va = load64(p);
		h->reth_rkey = et_load32(p + 8);
		h->atomic_swap = load64(p + 12);
		h->atomic_cmp = load64(p + 20);
		p += ET_ATOMIC_ETH_LEN;
	}
	if (opf & ET_OPF_AETH) {
		h->aeth_syndrome = p[0];
		h->aeth_msn = load24(p + 1);
		p += ET_AETH_LEN;
	}
	if (opf & ET_OPF_ATOMIC_ACK) {
		h->atomic_orig = load64(p);
		p += ET_ATOMIC_ACK_ETH_LEN;
	}
	if (opf & ET_OPF_IMM) {
		h->imm = et_load32(p);
		p += ET_IMMDT_LEN;
	}
	if (opf & ET_OPF_CNP)
		p += ET_CNP_RSVD_LEN;

	if (h->pad && (!(opf & ET_OPF_LAST) || h->pad > rem))
		return -ET_WIRE_E_PAD;
	if (rem && !(opf & ET_OPF_PAYLOAD))
		return -ET_WIRE_E_LENGTH;
	pkt->payload = p;
	pkt->payload_len = (uint32_t)(rem - h->pad);
	pkt->l3_off = (uint16_t)off;
	pkt->l3 = ip;
	pkt->frame_len = (uint32_t)(off + tot);

	if (!(flags & ET_PARSE_NO_ICRC)) {
		const uint8_t *t = ip + tot - ET_ICRC_LEN;
		uint32_t wire = (uint32_t)t[0] | (uint32_t)t[1] << 8 |
				(uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;

		if (et_icrc_compute(ip, tot) != wire)
			return -ET_WIRE_E_ICRC;
	}
	return ET_WIRE_OK;
}

int
et_roce_build(uint8_t *buf, size_t cap, const struct et_roce_hdr *h,
	      const void *payload, uint32_t payload_len)
{
	uint16_t opf = et_opcode_flags[h->opcode];
	uint8_t *ip, *udp, *bth, *p;
	size_t total, l3_len;
	uint32_t pad;

	if (!(opf & ET_OPF_VALID) || h->dscp > 63 || h->ecn > 3 ||
	    h->tver > 15 || h->resv8a > 0x3f || h->dest_qp > ET_QPN_MASK ||
	    h->psn > ET_PSN_MASK ||
	    ((opf & ET_OPF_DETH) && h->deth_src_qp > ET_QPN_MASK) ||
	    h->aeth_msn > 0xffffff)
		return -ET_WIRE_E_INVAL;
	if (payload_len && !(opf & ET_OPF_PAYLOAD))
		return -ET_WIRE_E_INVAL;
	/* only the last packet of a message may be shorter than a multiple of 4 */
	if (!(opf & ET_OPF_LAST) && (payload_len & 3))
		return -ET_WIRE_E_INVAL;
	pad = (opf & ET_OPF_LAST) ? (-payload_len) & 3 : 0;
	total = et_roce_hdr_len(h->opcode) + payload_len + pad + ET_ICRC_LEN;
	l3_len = total - ET_ETH_HLEN;
	if (l3_len > UINT16_MAX)
		return -ET_WIRE_E_INVAL;
	if (total > cap)
		return -ET_WIRE_E_NOSPACE;

	memcpy(buf, &h->dst_mac, RTE_ETHER_ADDR_LEN);
	memcpy(buf + RTE_ETHER_ADDR_LEN, &h->src_mac, RTE_ETHER_ADDR_LEN);
	et_store16(buf + 12, RTE_ETHER_TYPE_IPV4);

	ip = buf + ET_ETH_HLEN;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(h->dscp << 2 | h->ecn);
	et_store16(ip + 2, (uint16_t)l3_len);
	et_store16(ip + 4, h->ip_id);
	et_store16(ip + 6, 0x4000); /* DF, as RoCE NICs send */
	ip[8] = h->ttl;
	ip[9] = IPPROTO_UDP;
	et_store16(ip + 10, 0);
	et_store32(ip + 12, h->src_ip);
	et_store32(ip + 16, h->dst_ip);
	et_store16(ip + 10, et_ipv4_csum(ip, ET_IPV4_HLEN));

	udp = ip + ET_IPV4_HLEN;
	et_store16(udp, h->udp_sport);
	et_store16(udp + 2, ET_ROCE_UDP_PORT);
	et_store16(udp + 4, (uint16_t)(l3_len - ET_IPV4_HLEN));
	et_store16(udp + 6, 0); /* RoCEv2 leaves the UDP checksum off */

	bth = udp + ET_UDP_HLEN;
	bth[0] = h->opcode;
	bth[1] = (uint8_t)(h->solicited << 7 | h->migreq << 6 | pad << 4 | h->tver);
	et_store16(bth + 2, h->pkey);
	bth[4] = (uint8_t)(h->fecn << 7 | h->becn << 6 | h->resv8a);
	store24(bth + 5, h->dest_qp);
	bth[8] = (uint8_t)(h->ackreq << 7);
	store24(bth + 9, h->psn);

	p = bth + ET_BTH_LEN;
	if (opf & ET_OPF_DETH) {
		et_store32(p, h->deth_qkey);
		p[4] = 0;
		store24(p + 5, h->deth_src_qp);
		p += ET_DETH_LEN;
	}
	if (opf & ET_OPF_RETH) {
		store64(p, h->reth_va);
		et_store32(p + 8, h->reth_rkey);
		et_store32(p + 12, h->reth_dma_len);
		p += ET_RETH_LEN;
	}
	if (opf & ET_OPF_ATOMIC) {
		store64(p, h->reth_va);
		et_store32(p + 8, h->reth_rkey);
		store64(p + 12, h->atomic_swap);
		store64(p + 20, h->atomic_cmp);
		p += ET_ATOMIC_ETH_LEN;
	}
	if (opf & ET_OPF_AETH) {
		p[0] = h->aeth_syndrome;
		store24(p + 1, h->aeth_msn);
		p += ET_AETH_LEN;
	}
	if (opf & ET_OPF_ATOMIC_ACK) {
		store64(p, h->atomic_orig);
		p += ET_ATOMIC_ACK_ETH_LEN;
	}
	if (opf & ET_OPF_IMM) {
		et_store32(p, h->imm);
		p += ET_IMMDT_LEN;
	}
	if (opf & ET_OPF_CNP) {
		memset(p, 0, ET_CNP_RSVD_LEN);
		p += ET_CNP_RSVD_LEN;
	}
	if (payload && payload_len)
		memcpy(p, payload, payload_len);
	memset(p + payload_len, 0, pad);

	et_icrc_fill(ip, l3_len);
	return (int)total;
}

void
et_roce_set_sport(uint8_t *ip, uint16_t sport)
{
	size_t ihl = (size_t)(ip[0] & 0xf) * 4;
	uint8_t *udp = ip + ihl;
	uint16_t old = et_load16(udp);

	et_udp_set_sport(udp, sport);
	et_icrc_update16(ip, et_load16(ip + 2), ihl, old, sport);
}

int
et_roce_parse_mbuf(const struct rte_mbuf *m, struct et_roce_pkt *pkt,
		   unsigned int flags)
{
	if (m->nb_segs != 1)
		return -ET_WIRE_E_SEGMENTED;
	return et_roce_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_data_len(m), pkt, flags);
}

struct rte_mbuf *
et_roce_build_mbuf(struct rte_mempool *mp, const struct et_roce_hdr *h,
		   const void *payload, uint32_t payload_len, int *err)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	int n;

	if (m == NULL) {
		*err = -ET_WIRE_E_NOSPACE;
		return NULL;
	}
	n = et_roce_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m),
			  h, payload, payload_len);
	if (n < 0) {
		rte_pktmbuf_free(m);
		*err = n;
		return NULL;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	*err = 0;
	return m;
}
