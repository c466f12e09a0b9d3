/* SPDX-License-Identifier: BSD-3-Clause
 * The out-of-band (TCP) messages of the Linux RDMA tools a lab already has,
 * so ethereal-node can sit on either end of them (docs/rxe.md):
 *
 *   ibv_rc_pingpong (rdma-core): "LID:QPN:PSN:GID" as fixed-width hex text;
 *   perftest (ib_write_bw, ib_send_bw, ib_write_lat, ib_send_lat):
 *   "LID:OUT_READS:QPN:PSN:RKEY:VADDR:GID:SRQN:" as fixed-width hex text,
 *   the GID as 16 ':'-separated bytes, one message per QP; with -R (the
 *   exchange in SENDs on a QP of rdma_cm's) the same fields binary; and the
 *   bandwidth tools' figures after the test, binary.
 *
 * Only formatting and parsing lives here (no sockets), so every message can
 * be checked byte for byte; the conversations (who writes first, what
 * follows) are in the node.  A parse error returns -1 with a reason in err.
 * GIDs are RoCEv2 IPv4-mapped (::ffff:a.b.c.d), the only kind we speak.
 */
#ifndef ET_OOB_TOOLS_H
#define ET_OOB_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include "wire/et_gid.h"

/* What a tool tells its peer about one QP. */
struct et_oob_dest {
	uint16_t lid;          /* 0 on RoCE */
	uint32_t qpn, psn;     /* 24 bits each */
	uint32_t rkey;         /* perftest only */
	uint64_t vaddr;        /* perftest only: the remote buffer */
	uint16_t out_reads;    /* perftest only: RDMA READs in flight */
	uint32_t srqn;         /* perftest only */
	uint8_t gid[16];
};

/* sizeof "0000:000000:000000:" + 32 hex digits, NUL included: the tool
 * writes and reads exactly this many bytes */
#define ET_PINGPONG_MSG_LEN 52
/* the client's last word, NUL included */
#define ET_PINGPONG_DONE_LEN 5

/* perftest's message with a GID: 7 fixed fields, 16 GID bytes, NUL */
#define ET_PERFTEST_MSG_LEN 108

/* out: ET_PINGPONG_MSG_LEN bytes, NUL-terminated. */
void et_pingpong_format(const struct et_oob_dest *d, char out[ET_PINGPONG_MSG_LEN]);
int et_pingpong_parse(const char *msg, size_t len, struct et_oob_dest *d,
		      char *err, size_t errlen);

/* out: ET_PERFTEST_MSG_LEN bytes, NUL-terminated. */
void et_perftest_format(const struct et_oob_dest *d, char out[ET_PERFTEST_MSG_LEN]);
int et_perftest_parse(const char *msg, size_t len, struct et_oob_dest *d,
		      char *err, size_t errlen);

/* perftest -R's address message, a SEND on its rdma_cm QP: its struct
 * pingpong_dest as x86-64 lays it out, every field big-endian: LID,
 * OUT_READS, QPN, PSN, RKEY (4 bytes each), 4 of padding, VADDR (8), GID
 * (16), SRQN, GID index (4 each). */
#define ET_PERFTEST_BIN_LEN 56

void et_perftest_bin_format(const struct et_oob_dest *d, uint8_t out[ET_PERFTEST_BIN_LEN]);
/* The tool reads no more than this: a message of another length is the
 * peer at another step of the exchange (named). */
int et_perftest_bin_parse(const uint8_t *msg, size_t len, struct et_oob_dest *d, char *err,
			  size_t errlen);

/* perftest's figures after a bandwidth test (xchg_bw_reports, perftest
 * >= 5.33): size and iterations as 64-bit integers, then peak MB/s,
 * average MB/s and the message rate (Mpps) as IEEE doubles, each
 * big-endian, 8 bytes each: 40 bytes, traded in five 8-byte exchanges. */
#define ET_PERFTEST_REPORT_LEN 40

struct et_perftest_report {
	uint64_t size, iters;
	double bw_peak, bw_avg, msg_rate;
};

void et_perftest_report_format(const struct et_perftest_report *r,
			       uint8_t out[ET_PERFTEST_REPORT_LEN]);
/* Strict: a size of 1 B .. 2 GiB, at most 2^40 iterations, figures finite
 * and not negative; text where the numbers belong (an address message:
 * the peer is at another step of the exchange) is named as such. */
int et_perftest_report_parse(const uint8_t msg[ET_PERFTEST_REPORT_LEN],
			     struct et_perftest_report *r, char *err, size_t errlen);

#endif /* ET_OOB_TOOLS_H */
