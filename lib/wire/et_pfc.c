/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "base/et_csum.h"
#include "wire/et_pfc.h"

struct rte_mbuf *
et_pfc_frame(struct rte_mempool *mp, const struct rte_ether_addr *src, uint16_t quanta)
{
	static const uint8_t dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *f;

	if (m == NULL || (f = (uint8_t *)rte_pktmbuf_append(m, ET_PFC_FRAME_LEN)) == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(f, 0, ET_PFC_FRAME_LEN);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	et_store16(f + 12, ET_ETHER_TYPE_MAC_CONTROL);
	et_store16(f + 14, 0x0101);               /* PFC */
	et_store16(f + 16, 1u << ET_PFC_PRIO);    /* class-enable vector */
	et_store16(f + 18 + 2 * ET_PFC_PRIO, quanta);
	return m;
}

int
et_pfc_parse(const uint8_t *f, uint32_t len, uint16_t *quanta)
{
	if (len < 18 + 16)
		return -EBADMSG;
	switch (et_load16(f + 14)) {
	case 0x0001: /* 802.3x PAUSE: all traffic */
		*quanta = et_load16(f + 16);
		return 1;
	case 0x0101:
		if (!(et_load16(f + 16) & (1u << ET_PFC_PRIO)))
			return 0;
		*quanta = et_load16(f + 18 + 2 * ET_PFC_PRIO);
		return 1;
	default:
		return -EBADMSG;
	}
}
