/* SPDX-License-Identifier: BSD-3-Clause
 * The provider's wire: every control message between two endpoints is one
 * SEND on their connection's control QP, this header first (48 bytes,
 * little-endian), then an eager message's bytes.  Its version byte says
 * the layout: a message of another version is dropped with a warning
 * (msg.c).  Large messages move by RDMA WRITE or READ on data QPs, the
 * header's RTS, CTS, FIN and DONE around them (flow.c).
 */
#ifndef ET_FI_WIRE_H
#define ET_FI_WIRE_H

#include <stdint.h>

#define ET_FI_HDR_LEN 48u /* struct et_fi_hdr on the wire */

enum et_fi_op {
	ET_FI_OP_EAGER = 1,  /* header and the message */
	ET_FI_OP_RTS,        /* a large message: its size; wait for CTS */
	ET_FI_OP_CTS,        /* where it goes: addr, key, bytes wanted */
	ET_FI_OP_WDATA,      /* an RMA write's remote CQ data, after its bytes */
	ET_FI_OP_FIN,        /* a rendezvous by READ: the receiver has the bytes */
	ET_FI_OP_DONE,       /* a rendezvous by WRITE: its bytes (rid's) are there */
	ET_FI_OP_COUNT,
};

/* The header's layout; a message of another version is dropped.  2: seq,
 * and a rendezvous by WRITE ends with DONE (WRITEs with immediate, counted
 * by the receiver, could not be sent again once). */
#define ET_FI_WIRE_VERSION 2

#define ET_FI_HF_TAGGED (1u << 0)
#define ET_FI_HF_DATA (1u << 1)   /* data carries remote CQ data */
#define ET_FI_HF_READ (1u << 2)   /* RTS: read the bytes at addr, key */
#define ET_FI_HF_ERR (1u << 3)    /* FIN: the receiver could not read them */

/* Little-endian on the wire (et_fi_hdr_put/get). */
struct et_fi_hdr {
	uint8_t op, flags;
	uint8_t version;   /* ET_FI_WIRE_VERSION */
	uint8_t rsvd;
	uint32_t data;     /* remote CQ data */
	uint64_t tag;
	uint64_t len;      /* the message's bytes; CTS: bytes the receiver takes */
	uint32_t sid, rid; /* the sender's request; the receiver's */
	uint64_t addr;     /* CTS: where the bytes go */
	uint32_t key;      /* CTS: its key */
	uint32_t seq;      /* the sender's count of messages on the connection */
};

void et_fi_hdr_put(uint8_t *p, const struct et_fi_hdr *h);
void et_fi_hdr_get(const uint8_t *p, struct et_fi_hdr *h);

#endif
