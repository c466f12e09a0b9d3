/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 GIDs of IPv4 hosts: the IPv4-mapped IPv6 address ::ffff:a.b.c.d,
 * the only kind we speak.  The RDMA tools' out-of-band messages and the
 * connection manager's REQ carry them.
 */
#ifndef ET_GID_H
#define ET_GID_H

#include <stdint.h>
#include <string.h>

#include "base/et_bytes.h"

#define ET_GID_LEN 16

static inline void
et_gid_from_ipv4(uint32_t ip, uint8_t gid[ET_GID_LEN])
{
	memset(gid, 0, ET_GID_LEN);
	gid[10] = 0xff;
	gid[11] = 0xff;
	et_store32(gid + 12, ip);
}

/* The IPv4 address of an IPv4-mapped GID (host order); -1 otherwise. */
static inline int
et_gid_to_ipv4(const uint8_t gid[ET_GID_LEN], uint32_t *ip)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(gid, prefix, sizeof(prefix)) != 0)
		return -1;
	*ip = et_load32(gid + 12);
	return 0;
}

#endif /* ET_GID_H */
