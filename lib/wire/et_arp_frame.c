/* SPDX-License-Identifier: BSD-3-Clause
 * ARP frames: see et_arp_frame.h. */
#include "wire/et_arp_frame.h"

#include <string.h>

#include "base/et_bytes.h"

#define ETH_HDR 14
#define ARP_HTYPE_ETHER 1
#define ARP_PTYPE_IPV4 0x0800

int
et_arp_parse(const uint8_t *f, size_t len, struct et_arp_msg *m)
{
	const uint8_t *p = f + ETH_HDR;

	if (len < ET_ARP_MIN_LEN || et_load16(f + 12) != ET_ETHER_TYPE_ARP ||
	    et_load16(p) != ARP_HTYPE_ETHER || et_load16(p + 2) != ARP_PTYPE_IPV4 ||
	    p[4] != 6 || p[5] != 4)
		return -1;
	m->op = et_load16(p + 6);
	if (m->op != ET_ARP_OP_REQUEST && m->op != ET_ARP_OP_REPLY)
		return -1;
	memcpy(m->sha, p + 8, 6);
	m->spa = et_load32(p + 14);
	memcpy(m->tha, p + 18, 6);
	m->tpa = et_load32(p + 24);
	return 0;
}

int
et_arp_build(uint8_t *out, size_t cap, const uint8_t eth_dst[6], const uint8_t eth_src[6],
	     const struct et_arp_msg *m)
{
	uint8_t *p = out + ETH_HDR;

	if (cap < ET_ARP_FRAME_LEN)
		return 0;
	memset(out, 0, ET_ARP_FRAME_LEN);
	memcpy(out, eth_dst, 6);
	memcpy(out + 6, eth_src, 6);
	et_store16(out + 12, ET_ETHER_TYPE_ARP);
	et_store16(p, ARP_HTYPE_ETHER);
	et_store16(p + 2, ARP_PTYPE_IPV4);
	p[4] = 6;
	p[5] = 4;
	et_store16(p + 6, m->op);
	memcpy(p + 8, m->sha, 6);
	et_store32(p + 14, m->spa);
	memcpy(p + 18, m->tha, 6);
	et_store32(p + 24, m->tpa);
	return ET_ARP_FRAME_LEN;
}

int
et_arp_build_reply(uint8_t *out, size_t cap, const struct et_arp_msg *req,
		   const uint8_t mac[6], uint32_t ip)
{
	struct et_arp_msg r = {.op = ET_ARP_OP_REPLY, .spa = ip, .tpa = req->spa};

	memcpy(r.sha, mac, 6);
	memcpy(r.tha, req->sha, 6);
	return et_arp_build(out, cap, req->sha, mac, &r);
}
