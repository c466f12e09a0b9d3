/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target for the RoCEv2 parser.  Beyond "no crash": whatever the
 * parser accepts, the builder rebuilds into a frame that parses back to the
 * same header fields and payload.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/et_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536 + 128];
	struct et_roce_pkt p, q;
	unsigned int flags;
	int rc, n;

	/* the peek reads headers alone and never past size; what parses it
	 * must name by the same QPN */
	int32_t peek = et_roce_peek_dest_qp(data, size);

	for (flags = 0; flags < 4; flags++) {
		rc = et_roce_parse(data, size, &p, flags);
		if (rc > 0 || -rc >= ET_WIRE_E_COUNT)
			abort();
		if (rc != 0)
			continue;
		if (peek != (int32_t)p.h.dest_qp)
			abort();
		if (p.payload < data || p.payload + p.payload_len > data + size)
			abort();
		n = et_roce_build(out, sizeof(out), &p.h, p.payload, p.payload_len);
		if (n < 0)
			continue; /* e.g. FIRST/MIDDLE payload not a multiple of 4 */
		if (et_roce_parse(out, (size_t)n, &q, 0) != 0)
			abort();
		if (q.h.opcode != p.h.opcode || q.h.psn != p.h.psn ||
		    q.h.dest_qp != p.h.dest_qp || q.h.udp_sport != p.h.udp_sport ||
		    q.payload_len != p.payload_len ||
		    memcmp(q.payload, p.payload, p.payload_len) != 0)
			abort();
	}
	return 0;
}
