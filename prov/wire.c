/* SPDX-License-Identifier: BSD-3-Clause
 * The control messages' header to and from its 48 bytes (et_fi_wire.h).
 */
#include "et_fi_wire.h"

#include <string.h>

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	put_le(p, v, 8);
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void
et_fi_hdr_put(uint8_t *p, const struct et_fi_hdr *h)
{
	p[0] = h->op;
	p[1] = h->flags;
	p[2] = ET_FI_WIRE_VERSION;
	p[3] = 0;
	put_le(p + 4, h->data, 4);
	put64(p + 8, h->tag);
	put64(p + 16, h->len);
	put64(p + 24, (uint64_t)h->rid << 32 | h->sid);
	put64(p + 32, h->addr);
	put64(p + 40, (uint64_t)h->seq << 32 | h->key);
}

void
et_fi_hdr_get(const uint8_t *p, struct et_fi_hdr *h)
{
	uint64_t ids = get64(p + 24), ks = get64(p + 40);

	memset(h, 0, sizeof(*h));
	h->op = p[0];
	h->flags = p[1];
	h->version = p[2];
	h->data = (uint32_t)get64(p + 4); /* the tag's bytes above it are cut */
	h->tag = get64(p + 8);
	h->len = get64(p + 16);
	h->sid = (uint32_t)ids;
	h->rid = (uint32_t)(ids >> 32);
	h->addr = get64(p + 32);
	h->key = (uint32_t)ks;
	h->seq = (uint32_t)(ks >> 32);
}
