/* SPDX-License-Identifier: BSD-3-Clause
 * The connection manager's MADs on the wire: management datagrams of
 * class 0x07 (CM), class version 2, method Send, as QP 1 carries them in a
 * UD SEND ONLY (IBTA vol. 1 ch. 12, 13.4 and 16.7); and what RDMA CM
 * (librdmacm, the Linux kernel's cma.c) puts in them: its service IDs,
 * the IP port spaces, and the header at the start of a REQ's private data.
 *
 * A MAD is 256 bytes: the common header (24) and the CM's 232, in which
 * every message has a fixed layout and a private data field of a fixed
 * size.  The parser is total: any byte string yields a parsed view or one
 * error saying what is wrong, and it never reads outside [buf, buf + len).
 * Pure: no I/O, no clock.
 */
#ifndef ET_MAD_H
#define ET_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ET_MAD_LEN 256
#define ET_MAD_HDR_LEN 24
#define ET_MAD_BASE_VERSION 1
#define ET_MAD_CLASS_CM 0x07
#define ET_CM_CLASS_VERSION 2
#define ET_MAD_METHOD_SEND 0x03

/* The CM's attributes (table 104); we speak the seven of a connection and
 * the two of service ID resolution (SIDR: a UD QP's peer found by service
 * ID, what RDMA CM's UDP port space runs on). */
enum et_cm_attr {
	ET_CM_REQ = 0x0010,
	ET_CM_MRA = 0x0011,
	ET_CM_REJ = 0x0012,
	ET_CM_REP = 0x0013,
	ET_CM_RTU = 0x0014,
	ET_CM_DREQ = 0x0015,
	ET_CM_DREP = 0x0016,
	ET_CM_SIDR_REQ = 0x0017,
	ET_CM_SIDR_REP = 0x0018,
};

/* The private data field of each message: its whole size (tables 106-113). */
#define ET_CM_REQ_PDATA 92
#define ET_CM_MRA_PDATA 222
#define ET_CM_REJ_PDATA 148
#define ET_CM_REP_PDATA 196
#define ET_CM_RTU_PDATA 224
#define ET_CM_DREQ_PDATA 220
#define ET_CM_DREP_PDATA 224
#define ET_CM_SIDR_REQ_PDATA 216
#define ET_CM_SIDR_REP_PDATA 136
#define ET_CM_PDATA_MAX 224
#define ET_CM_SIDR_INFO_LEN 72
#define ET_CM_REJ_ARI_LEN 72

/* What an MRA or a REJ answers (its "message MRAed / REJected"). */
enum et_cm_msg_kind { ET_CM_MSG_REQ = 0, ET_CM_MSG_REP = 1, ET_CM_MSG_OTHER = 2 };

/* REJ reasons (table 109) by number. */
#define ET_CM_REJ_REASONS(X) \
	X(1, NO_QP, "no QP") \
	X(2, NO_EEC, "no EEC") \
	X(3, NO_RESOURCES, "no resources") \
	X(4, TIMEOUT, "timeout") \
	X(5, UNSUPPORTED, "unsupported request") \
	X(6, INVALID_COMM_ID, "invalid communication ID") \
	X(7, INVALID_COMM_INSTANCE, "invalid communication instance") \
	X(8, INVALID_SERVICE_ID, "invalid service ID (no listener)") \
	X(9, INVALID_TRANSPORT, "invalid transport service type") \
	X(10, STALE_CONN, "stale connection") \
	X(11, RDC_NOT_EXIST, "RDC does not exist") \
	X(12, INVALID_GID, "invalid GID") \
	X(13, INVALID_LID, "invalid LID") \
	X(14, INVALID_SL, "invalid SL") \
	X(15, INVALID_TRAFFIC_CLASS, "invalid traffic class") \
	X(16, INVALID_HOP_LIMIT, "invalid hop limit") \
	X(17, INVALID_PACKET_RATE, "invalid packet rate") \
	X(24, PORT_CM_REDIRECT, "port and CM redirection") \
	X(25, PORT_REDIRECT, "port redirection") \
	X(26, INVALID_MTU, "invalid path MTU") \
	X(27, INSUFFICIENT_RESP_RES, "insufficient responder resources") \
	X(28, CONSUMER, "consumer reject") \
	X(29, INVALID_RNR_RETRY, "invalid RNR NAK retry count") \
	X(30, DUPLICATE_COMM_ID, "duplicate local communication ID") \
	X(31, INVALID_CLASS_VERSION, "invalid class version") \
	X(32, INVALID_FLOW_LABEL, "invalid flow label") \
	X(33, INVALID_ALT_FLOW_LABEL, "invalid alternate flow label")

#define ET_CM_REJ_ENUM(n, id, msg) ET_CM_REJ_##id = n,
enum et_cm_rej_reason { ET_CM_REJ_REASONS(ET_CM_REJ_ENUM) };
#undef ET_CM_REJ_ENUM

/* "consumer reject", ...; "reason N" for one the table has not. */
const char *et_cm_rej_reason_str(uint16_t reason);

/* What the parser refuses, and the builder (field, attr).  Declared once:
 * the enum, the names counters carry (rx_bad_mad_class) and the messages
 * come from this list, as ET_WIRE_ERRORS. */
#define ET_MAD_ERRORS(X) \
	X(TRUNC, trunc, "MAD shorter than 256 bytes") \
	X(OVERSIZE, oversize, "MAD longer than 256 bytes") \
	X(BASE_VERSION, base_version, "MAD base version is not 1") \
	X(CLASS, class, "management class is not the CM's (0x07)") \
	X(CLASS_VERSION, class_version, "CM class version is not 2") \
	X(METHOD, method, "CM method is not Send (0x03)") \
	X(ATTR, attr, "CM attribute not spoken (LAP, APR, ClassPortInfo)") \
	X(FIELD, field, "CM field out of range")

#define ET_MAD_ERR_ENUM(id, name, msg) ET_MAD_E_##id,
enum et_mad_err {
	ET_MAD_OK = 0,
	ET_MAD_ERRORS(ET_MAD_ERR_ENUM)
	ET_MAD_E_COUNT
};
#undef ET_MAD_ERR_ENUM

/* "class", "trunc", ...; "ok" for 0. */
const char *et_mad_err_name(int err);
const char *et_mad_strerror(int err);

/* The common MAD header (13.4.3). */
struct et_mad_hdr {
	uint8_t base_version, mgmt_class, class_version, method;
	uint16_t status, class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/* A REQ's path (primary or alternate). */
struct et_cm_path {
	uint16_t local_lid, remote_lid;
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;   /* 20 bits */
	uint8_t packet_rate;   /* 6 bits */
	uint8_t traffic_class, hop_limit;
	uint8_t sl;            /* 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout; /* 5 bits */
};

struct et_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id, local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;              /* 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;             /* 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;            /* 24 bits */
	uint8_t remote_cm_response_timeout; /* 5 bits: 4.096 us << n */
	uint8_t transport_type;          /* 2 bits: 0 RC, 1 UC, 2 RD, 3 XRC */
	bool e2e_flow_control;
	uint32_t starting_psn;           /* 24 bits */
	uint8_t local_cm_response_timeout; /* 5 bits */
	uint8_t retry_count;             /* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;                /* 4 bits: 1 256 .. 5 4096 */
	bool rdc_exists;
	uint8_t rnr_retry_count;         /* 3 bits */
	uint8_t max_cm_retries;          /* 4 bits */
	bool srq;
	uint8_t ext_transport;           /* 3 bits */
	struct et_cm_path primary, alternate;
};

struct et_cm_mra {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t msg_mraed;       /* enum et_cm_msg_kind */
	uint8_t service_timeout; /* 5 bits */
};

struct et_cm_rej {
	uint32_t local_comm_id, remote_comm_id;
	uint8_t msg_rejected;    /* enum et_cm_msg_kind */
	uint8_t ari_len;         /* 0 .. ET_CM_REJ_ARI_LEN */
	uint16_t reason;
	uint8_t ari[ET_CM_REJ_ARI_LEN];
};

struct et_cm_rep {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn, local_eecn, starting_psn; /* 24 bits each */
	uint8_t responder_resources, initiator_depth;
	uint8_t target_ack_delay; /* 5 bits */
	uint8_t failover;         /* 2 bits */
	bool e2e_flow_control;
	uint8_t rnr_retry_count;  /* 3 bits */
	bool srq;
	uint64_t local_ca_guid;
};

/* SIDR (tables 119, 120): a request for the UD QP behind a service ID,
 * and its answer. */
struct et_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
};

/* A SIDR_REP's status (table 120). */
enum et_cm_sidr_status {
	ET_CM_SIDR_SUCCESS = 0,
	ET_CM_SIDR_UNSUPPORTED = 1,   /* no such service ID */
	ET_CM_SIDR_REJECT = 2,        /* the consumer said no */
	ET_CM_SIDR_NO_QP = 3,
	ET_CM_SIDR_REDIRECT = 4,
	ET_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

struct et_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;           /* enum et_cm_sidr_status */
	uint8_t info_len;         /* 0 .. ET_CM_SIDR_INFO_LEN */
	uint32_t qpn;             /* 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[ET_CM_SIDR_INFO_LEN];
};

/* RTU and DREP carry the two IDs only; DREQ the peer's QPN too. */
struct et_cm_ids {
	uint32_t local_comm_id, remote_comm_id;
	uint32_t remote_qpn; /* DREQ: 24 bits */
};

/* A CM MAD: the header, the message of its attribute, its private data. */
struct et_cm_msg {
	struct et_mad_hdr hdr;
	union {
		struct et_cm_req req;
		struct et_cm_mra mra;
		struct et_cm_rej rej;
		struct et_cm_rep rep;
		struct et_cm_ids ids; /* RTU, DREQ, DREP */
		struct et_cm_sidr_req sidr_req;
		struct et_cm_sidr_rep sidr_rep;
	} u;
	/* parser: the whole field, in the parsed buffer; builder: what goes at
	 * the start of the field (the rest is zero) */
	const uint8_t *pdata;
	uint16_t pdata_len;
};

/* The private data field's size for a CM attribute; 0 for others. */
uint16_t et_cm_pdata_size(uint16_t attr_id);

/* "REQ", "REP", ...; "attr 0x..." for others. */
const char *et_cm_attr_name(uint16_t attr_id);

/* A message of attribute attr as CM sends it: base version 1, class CM,
 * class version 2, method Send, the transaction ID tid; all else zero. */
void et_cm_msg_init(struct et_cm_msg *m, uint16_t attr, uint64_t tid);

/* buf as a CM MAD: 0, or -enum et_mad_err. */
int et_cm_parse(const uint8_t *buf, size_t len, struct et_cm_msg *m);

/* m into out (ET_MAD_LEN bytes, reserved bits zero): ET_MAD_LEN, or
 * -ET_MAD_E_ATTR (an attribute we do not speak) or -ET_MAD_E_FIELD (a
 * field beyond its bits, private data longer than its field). */
int et_cm_build(uint8_t out[ET_MAD_LEN], const struct et_cm_msg *m);

/* ---- RDMA CM over IP (librdmacm, the kernel's cma.c; IBTA annex A11) ---- */

/* Port spaces: a service ID is 0x0000_0000_01PP_pppp, PP the protocol and
 * pppp the port; rdma_cm's RDMA_PS_* are 0x01PP. */
#define ET_RDMA_PS_TCP 0x0106
#define ET_RDMA_PS_UDP 0x0111
#define ET_RDMA_PS_IB 0x013f

static inline uint64_t
et_rdma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/* A service ID of the IP port spaces (0x01PP_pppp); its space and port. */
static inline bool
et_rdma_sid_is_ip(uint64_t sid)
{
	return (sid >> 24) == 0x01;
}

static inline uint16_t
et_rdma_sid_ps(uint64_t sid)
{
	return (uint16_t)(sid >> 16);
}

static inline uint16_t
et_rdma_sid_port(uint64_t sid)
{
	return (uint16_t)sid;
}

/* The header rdma_cm puts before the consumer's private data in a REQ:
 * version 0, the IP version in the high nibble of byte 1, the active
 * side's port, then source and destination address, 16 bytes each (an
 * IPv4 address in the last 4, the rest zero). */
#define ET_CMA_HDR_LEN 36
#define ET_CMA_VERSION 0x00
/* what a consumer may put after it in a REQ */
#define ET_CMA_REQ_PDATA (ET_CM_REQ_PDATA - ET_CMA_HDR_LEN)

struct et_cma_hdr {
	uint16_t src_port;
	uint32_t src_ip, dst_ip; /* host order */
};

void et_cma_hdr_build(uint8_t out[ET_CMA_HDR_LEN], const struct et_cma_hdr *h);

/* 0, or -1 with *why: too short, another version, not IPv4 (rdma_cm over
 * IPv6 and AF_IB are not spoken). */
int et_cma_hdr_parse(const uint8_t *p, size_t len, struct et_cma_hdr *h, const char **why);

/* Path MTU in bytes (256 .. 4096) from the IBTA code (1 .. 5) and back;
 * 0 for a code or size that is none. */
uint32_t et_cm_mtu_bytes(uint8_t code);
uint8_t et_cm_mtu_code(uint32_t bytes);

/* A CM timeout field (4.096 us << n) in nanoseconds. */
static inline uint64_t
et_cm_timeout_ns(uint8_t code)
{
	return 4096ull << (code & 31);
}

#endif /* ET_MAD_H */
