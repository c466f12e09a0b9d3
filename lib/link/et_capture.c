/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "link/et_capture.h"

#define SNAPLEN 65535

struct et_capture {
	FILE *f;
	uint64_t count;
};

static void
put(struct et_capture *c, const void *p, size_t n)
{
	fwrite(p, 1, n, c->f);
}

static void
put32(struct et_capture *c, uint32_t v)
{
	put(c, &v, 4); /* pcapng: the writer's byte order, told by the SHB magic */
}

/* An option: code, length, value padded to 4 bytes. */
static void
option(struct et_capture *c, uint16_t code, const void *v, uint16_t len)
{
	static const uint8_t zero[4];

	put(c, &code, 2);
	put(c, &len, 2);
	put(c, v, len);
	put(c, zero, (4 - (len & 3)) & 3);
}

static uint32_t
opt_len(size_t len)
{
	return 4 + (uint32_t)((len + 3) & ~3u);
}

struct et_capture *
et_capture_open(const char *path, const char *ifname)
{
	struct et_capture *c = calloc(1, sizeof(*c));
	static const char app[] = "ethereal-dpdk";
	uint8_t tsresol = 9; /* nanoseconds */
	uint32_t len;

	if (c == NULL)
		return NULL;
	c->f = fopen(path, "wb");
	if (c->f == NULL) {
		free(c);
		return NULL;
	}
	/* Section Header Block */
	len = 28 + opt_len(sizeof(app) - 1) + 4;
	put32(c, 0x0a0d0d0a);
	put32(c, len);
	put32(c, 0x1a2b3c4d);
	put32(c, 0x00000001); /* version 1.0 */
	put32(c, 0xffffffff); /* section length unknown */
	put32(c, 0xffffffff);
	option(c, 4, app, sizeof(app) - 1); /* shb_userappl */
	put32(c, 0);                          /* opt_endofopt */
	put32(c, len);
	/* Interface Description Block: Ethernet, name, ns timestamps */
	len = 20 + opt_len(strlen(ifname)) + opt_len(1) + 4;
	put32(c, 0x00000001);
	put32(c, len);
	put32(c, 1 | 0u << 16); /* LINKTYPE_ETHERNET, reserved */
	put32(c, SNAPLEN);
	option(c, 2, ifname, (uint16_t)strlen(ifname)); /* if_name */
	option(c, 9, &tsresol, 1);                      /* if_tsresol */
	put32(c, 0);
	put32(c, len);
	return c;
}

void
et_capture_frames(struct et_capture *c, struct rte_mbuf *const *m, uint16_t n,
		  bool out, uint64_t ts_ns)
{
	static const uint8_t zero[4];
	uint8_t buf[SNAPLEN];
	uint32_t flags = out ? 2 : 1; /* epb_flags: outbound / inbound */
	uint16_t i;

	if (c == NULL)
		return;
	for (i = 0; i < n; i++) {
		uint32_t caplen = rte_pktmbuf_pkt_len(m[i]), pad, len;
		const void *data;

		if (caplen > SNAPLEN)
			caplen = SNAPLEN;
		data = rte_pktmbuf_read(m[i], 0, caplen, buf);
		pad = (4 - (caplen & 3)) & 3;
		len = 28 + caplen + pad + opt_len(4) + 4 + 4;
		put32(c, 0x00000006); /* Enhanced Packet Block */
		put32(c, len);
		put32(c, 0);          /* interface 0 */
		put32(c, (uint32_t)(ts_ns >> 32));
		put32(c, (uint32_t)ts_ns);
		put32(c, caplen);
		put32(c, rte_pktmbuf_pkt_len(m[i]));
		put(c, data, caplen);
		put(c, zero, pad);
		option(c, 2, &flags, 4);
		put32(c, 0);
		put32(c, len);
		c->count++;
	}
}

uint64_t
et_capture_count(const struct et_capture *c)
{
	return c ? c->count : 0;
}

void
et_capture_close(struct et_capture *c)
{
	if (c == NULL)
		return;
	fclose(c->f);
	free(c);
}
