/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 over IPv4 on the wire: Ethernet / IPv4 / UDP 4791 / BTH / [RETH]
 * [AETH] [ImmDt] / payload / pad / ICRC.
 *
 * The parser is total: any byte string yields a parsed view or one error
 * code saying what is wrong, and it never reads outside [buf, buf + len).
 * Building and parsing are free of I/O; mbuf helpers are thin wrappers.
 */
#ifndef ET_WIRE_H
#define ET_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>

struct rte_mbuf;
struct rte_mempool;

#define ET_ROCE_UDP_PORT 4791
#define ET_ETH_HLEN 14
#define ET_VLAN_HLEN 4
#define ET_IPV4_HLEN 20 /* without options: what we build */
#define ET_UDP_HLEN 8
#define ET_BTH_LEN 12
#define ET_RETH_LEN 16
#define ET_AETH_LEN 4
#define ET_IMMDT_LEN 4
#define ET_CNP_RSVD_LEN 16
#define ET_ATOMIC_ETH_LEN 28 /* VA 8, R_Key 4, swap or add 8, compare 8 */
#define ET_ATOMIC_ACK_ETH_LEN 8 /* the original remote data */
#define ET_DETH_LEN 8 /* Q_Key 4, reserved 1, source QP 3 */
#define ET_ICRC_LEN 4
/* what a frame costs the wire beyond its bytes: preamble and SFD 8, FCS 4,
 * interframe gap 12 */
#define ET_ETH_WIRE_EXTRA 24
/* Eth + IPv4 + UDP + BTH + AtomicETH: the largest header we build (RETH +
 * ImmDt is 20 bytes, AtomicETH 28). */
#define ET_MAX_HDR_LEN \
	(ET_ETH_HLEN + ET_IPV4_HLEN + ET_UDP_HLEN + ET_BTH_LEN + ET_ATOMIC_ETH_LEN)

#define ET_PSN_MASK 0xffffffu
#define ET_QPN_MASK 0xffffffu
/* QP 1 is the GSI: management datagrams (the connection manager's MADs)
 * arrive there as UD SENDs (IBTA vol. 1 13.5; RoCEv2 keeps it). */
#define ET_QPN_GSI 1u
#define ET_GSI_QKEY 0x80010000u
#define ET_PKEY_DEFAULT 0xffff

/* IPv4 ECN codepoints (RFC 3168). */
enum et_ecn { ET_ECN_NOT_ECT = 0, ET_ECN_ECT1 = 1, ET_ECN_ECT0 = 2, ET_ECN_CE = 3 };

/* RC opcodes (IBTA vol. 1, table 38; transport 000), the UD SENDs the GSI
 * takes (transport 011), plus RoCEv2's CNP. */
enum et_opcode {
	ET_OP_SEND_FIRST = 0x00,
	ET_OP_SEND_MIDDLE = 0x01,
	ET_OP_SEND_LAST = 0x02,
	ET_OP_SEND_LAST_IMM = 0x03,
	ET_OP_SEND_ONLY = 0x04,
	ET_OP_SEND_ONLY_IMM = 0x05,
	ET_OP_WRITE_FIRST = 0x06,
	ET_OP_WRITE_MIDDLE = 0x07,
	ET_OP_WRITE_LAST = 0x08,
	ET_OP_WRITE_LAST_IMM = 0x09,
	ET_OP_WRITE_ONLY = 0x0a,
	ET_OP_WRITE_ONLY_IMM = 0x0b,
	ET_OP_READ_REQ = 0x0c,
	ET_OP_READ_RESP_FIRST = 0x0d,
	ET_OP_READ_RESP_MIDDLE = 0x0e,
	ET_OP_READ_RESP_LAST = 0x0f,
	ET_OP_READ_RESP_ONLY = 0x10,
	ET_OP_ACK = 0x11,
	ET_OP_ATOMIC_ACK = 0x12,
	ET_OP_CMP_SWAP = 0x13,
	ET_OP_FETCH_ADD = 0x14,
	ET_OP_UD_SEND_ONLY = 0x64,
	ET_OP_UD_SEND_ONLY_IMM = 0x65,
	ET_OP_CNP = 0x81,
};

/* An acknowledgement (ACK or NAK: both are the ACKNOWLEDGE opcode) or a
 * CNP: what a priority class of its own carries, ahead of the data. */
static inline bool
et_bth_is_ack_or_cnp(uint8_t opcode)
{
	return opcode == ET_OP_ACK || opcode == ET_OP_CNP;
}

/* AETH syndrome: bits 7..5 select the kind, 4..0 carry credits/timer/code. */
enum et_aeth_kind {
	ET_AETH_ACK = 0x00,
	ET_AETH_RNR_NAK = 0x20,
	ET_AETH_NAK = 0x60,
};
enum et_nak_code {
	ET_NAK_PSN_SEQ = 0x00,
	ET_NAK_INVALID_REQ = 0x01,
	ET_NAK_REMOTE_ACCESS = 0x02,
	ET_NAK_REMOTE_OP = 0x03,
};
#define ET_AETH_KIND_MASK 0xe0
#define ET_AETH_VALUE_MASK 0x1f
#define ET_AETH_CREDITS_UNLIMITED 0x1f

/* Which extension headers an opcode carries, and where it sits in a message. */
enum {
	ET_OPF_RETH = 1u << 0,
	ET_OPF_AETH = 1u << 1,
	ET_OPF_IMM = 1u << 2,
	ET_OPF_CNP = 1u << 3,
	ET_OPF_FIRST = 1u << 4,
	ET_OPF_LAST = 1u << 5, /* LAST and ONLY: ends a message, may carry pad */
	ET_OPF_SEND = 1u << 6,
	ET_OPF_WRITE = 1u << 7,
	ET_OPF_PAYLOAD = 1u << 8, /* may carry payload */
	ET_OPF_READ_REQ = 1u << 9,    /* RDMA READ request (RETH) */
	ET_OPF_READ_RESP = 1u << 10,  /* RDMA READ response: FIRST/LAST/ONLY
				       * carry an AETH */
	ET_OPF_ATOMIC = 1u << 11,     /* AtomicETH: COMPARE & SWAP, FETCH & ADD */
	ET_OPF_ATOMIC_ACK = 1u << 12, /* AtomicAckETH after the AETH */
	ET_OPF_DETH = 1u << 13,       /* UD: DETH (the GSI's MADs) */
	ET_OPF_VALID = 1u << 15,
};

extern const uint16_t et_opcode_flags[256];

/* The RC transport's opcodes (BTH opcode bits 7..5 = 000); a QP takes no
 * other (the CNP is RoCEv2's, for any transport). */
static inline bool
et_opcode_is_rc(uint8_t op)
{
	return (op >> 5) == 0;
}

static inline bool
et_opcode_valid(uint8_t op)
{
	return et_opcode_flags[op] & ET_OPF_VALID;
}

const char *et_opcode_name(uint8_t op);

/* Errors of the parser and builder; negative return values are -code.
 * Declared once: the enum, the names counters carry (rx_bad_icrc) and the
 * messages come from this list. */
#define ET_WIRE_ERRORS(X) \
	X(TRUNC_ETH, trunc_eth, "truncated Ethernet header") \
	X(NOT_IPV4, not_ipv4, "EtherType is not IPv4") \
	X(TRUNC_IP, trunc_ip, "truncated IPv4 header") \
	X(IP_VERSION, ip_version, "IP version is not 4") \
	X(IP_IHL, ip_ihl, "bad IPv4 header length") \
	X(IP_LEN, ip_len, "bad IPv4 total length") \
	X(IP_CSUM, ip_csum, "bad IPv4 header checksum") \
	X(IP_FRAG, ip_frag, "IPv4 fragment") /* RoCEv2 is never fragmented */ \
	X(NOT_UDP, not_udp, "IP protocol is not UDP") \
	X(UDP_LEN, udp_len, "UDP length disagrees with IPv4 length") \
	X(NOT_ROCE, not_roce, "UDP destination port is not 4791") \
	X(TRUNC_BTH, trunc_bth, "truncated BTH or ICRC") \
	X(OPCODE, opcode, "unsupported BTH opcode") \
	X(TVER, tver, "BTH transport version is not 0") \
	X(TRUNC_EXT, trunc_ext, "truncated extended transport header") \
	X(PAD, pad, "bad pad count") \
	X(LENGTH, length, "payload on an opcode that carries none") \
	X(ICRC, icrc, "bad ICRC") \
	X(NOSPACE, nospace, "buffer too small") /* builder */ \
	X(INVAL, inval, "header field out of range") /* builder */ \
	X(SEGMENTED, segmented, "frame spans several mbuf segments") /* mbuf parse */

#define ET_WIRE_ERR_ENUM(id, name, msg) ET_WIRE_E_##id,
enum et_wire_err {
	ET_WIRE_OK = 0,
	ET_WIRE_ERRORS(ET_WIRE_ERR_ENUM)
	ET_WIRE_E_COUNT
};
#undef ET_WIRE_ERR_ENUM

/* "icrc", "trunc_eth", ...; "ok" for 0. */
const char *et_wire_err_name(int err);
const char *et_wire_strerror(int err);

/* Header fields of one RoCEv2 packet, in host byte order.  The builder reads
 * it, the parser fills it. */
struct et_roce_hdr {
	struct rte_ether_addr dst_mac;
	struct rte_ether_addr src_mac;
	uint32_t src_ip;
	uint32_t dst_ip;
	uint8_t dscp;
	uint8_t ecn;
	uint8_t ttl;
	uint16_t ip_id;
	uint16_t udp_sport; /* the path ID */

	uint8_t opcode;
	bool solicited;
	bool migreq;
	bool ackreq;
	bool fecn;
	bool becn;
	uint8_t resv8a; /* BTH byte 4 bits 5..0 (Resv8a beside FECN/BECN): 0..63;
			 * multipath ACKs carry the ECN echo in bit 0 */
	uint8_t pad;  /* parser: pad count seen; builder: ignored (derived) */
	uint8_t tver;
	uint16_t pkey;
	uint32_t dest_qp;
	uint32_t psn;

	uint64_t reth_va;      /* RETH, or AtomicETH: the remote address */
	uint32_t reth_rkey;    /* RETH, or AtomicETH: the R_Key */
	uint32_t reth_dma_len; /* RETH only */
	uint64_t atomic_swap;  /* AtomicETH: swap (or add) data */
	uint64_t atomic_cmp;   /* AtomicETH: compare data */
	uint64_t atomic_orig;  /* AtomicAckETH: the original remote data */
	uint8_t aeth_syndrome;
	uint32_t aeth_msn;
	uint32_t imm; /* immediate data as the 32-bit big-endian field reads */
	uint32_t deth_qkey;
	uint32_t deth_src_qp;
};

/* A parsed frame: header fields plus where things are in the buffer. */
struct et_roce_pkt {
	struct et_roce_hdr h;
	const uint8_t *payload;
	uint32_t payload_len; /* without pad */
	uint16_t l3_off;      /* IPv4 header offset (after an optional VLAN tag) */
	const uint8_t *l3;    /* the IPv4 header (a UD receive's GRH slot holds it) */
	uint16_t vlan_tci;
	bool has_vlan;
	uint32_t frame_len;   /* IPv4 total length + l3_off: trailing bytes ignored */
};

/* Parser flags. */
#define ET_PARSE_NO_ICRC (1u << 0) /* skip ICRC verification */
#define ET_PARSE_NO_IPCSUM (1u << 1) /* skip IPv4 header checksum check */

int et_roce_parse(const uint8_t *buf, size_t len, struct et_roce_pkt *pkt,
		  unsigned int flags);

/* The destination QPN of what looks like a RoCEv2 frame, from its headers
 * alone (no checksum, no ICRC, no length check past the BTH): to decide
 * who parses it.  -1 when it is not one. */
int32_t et_roce_peek_dest_qp(const uint8_t *buf, size_t len);

/* Bytes of headers (Ethernet..last extension header) an opcode needs. */
size_t et_roce_hdr_len(uint8_t opcode);

/* Total frame length for an opcode and payload length (pad and ICRC included). */
size_t et_roce_frame_len(uint8_t opcode, uint32_t payload_len);

/* Build a whole frame into buf: headers, payload, pad, ICRC.  Returns the
 * frame length or -et_wire_err.  payload may be NULL with payload_len > 0
 * (memory-light mode): the payload bytes are then left as they are in buf. */
int et_roce_build(uint8_t *buf, size_t cap, const struct et_roce_hdr *h,
		  const void *payload, uint32_t payload_len);

/* The RoCEv2 CNP a receiver sends for a CE-marked packet (ConnectX style:
 * P_Key 0xffff, BECN set, PSN 0, 16 zero bytes, IP length 60). */
void et_roce_cnp_hdr(struct et_roce_hdr *h, uint32_t dest_qp);

/* ICRC over an IPv4 RoCEv2 packet starting at its IPv4 header; l3_len is the
 * IPv4 total length (the ICRC trailer is excluded from the computation). */
uint32_t et_icrc_compute(const uint8_t *ip, size_t l3_len);
/* The ICRC in pieces, for a frame whose bytes are not contiguous: begin
 * with its IPv4 header (which must be followed by the UDP header and BTH),
 * continue over every byte after the BTH up to the ICRC; the result is what
 * et_icrc_compute() gives. */
uint32_t et_icrc_begin(const uint8_t *ip);
uint32_t et_icrc_continue(uint32_t crc, const void *buf, size_t len);
/* Recompute and store the ICRC trailer (after a header field changed). */
void et_icrc_fill(uint8_t *ip, size_t l3_len);

/* Fix the ICRC trailer after a covered 16-bit field at byte offset off of
 * the IPv4 packet changed from old to new (incremental: cost independent of
 * the packet length). */
void et_icrc_update16(uint8_t *ip, size_t l3_len, size_t off, uint16_t old,
		      uint16_t new);

/* Rewrite the UDP source port (the path ID) of a RoCEv2 packet in place; the
 * UDP checksum (when not 0) and the ICRC follow.  The port is covered by the
 * ICRC, so a switch that swaps the path ID must do this, not a bare store.
 * ip must be a header the caller has validated (IHL, total length). */
void et_roce_set_sport(uint8_t *ip, uint16_t sport);

/* mbuf wrappers: parse a contiguous mbuf; build into a fresh mbuf. */
int et_roce_parse_mbuf(const struct rte_mbuf *m, struct et_roce_pkt *pkt,
		       unsigned int flags);
struct rte_mbuf *et_roce_build_mbuf(struct rte_mempool *mp,
				    const struct et_roce_hdr *h,
				    const void *payload, uint32_t payload_len,
				    int *err);

static inline uint32_t
et_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ET_PSN_MASK;
}

/* Signed distance a - b in 24-bit serial arithmetic (+-2^23 window). */
static inline int32_t
et_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & ET_PSN_MASK;
	return (int32_t)(d << 8) >> 8;
}

static inline uint8_t
et_aeth_ack(uint8_t credits)
{
	return ET_AETH_ACK | (credits & ET_AETH_VALUE_MASK);
}

static inline uint8_t
et_aeth_nak(enum et_nak_code code)
{
	return ET_AETH_NAK | code;
}

static inline uint8_t
et_aeth_rnr_nak(uint8_t timer)
{
	return ET_AETH_RNR_NAK | (timer & ET_AETH_VALUE_MASK);
}

#endif /* ET_WIRE_H */
