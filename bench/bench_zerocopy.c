/* SPDX-License-Identifier: BSD-3-Clause
 * Does zero-copy send pay?  The same 4 KB-payload RoCEv2 frame, made two
 * ways from registered memory:
 *   copy:      one mbuf, headers and payload copied in, ICRC over it (what
 *              the QPs do today);
 *   zero-copy: a header mbuf, the payload as an external buffer pointing into
 *              the memory region, a tail mbuf with pad and ICRC, chained.
 * And what a receiver on a ring or memif link then pays to make the chained
 * frame contiguous (rte_pktmbuf_linearize), since the parser, the switch and
 * the placement into memory want one segment.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "bench.h"
#include "wire/et_wire.h"

#define PAYLOAD 4096
#define ROUNDS 200000
#define BATCH 64

static void
noop_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque; /* the memory region owns the payload */
}

static struct rte_mbuf *
build_zc(struct rte_mempool *mp, const struct et_roce_hdr *h, uint8_t *payload,
	 rte_iova_t iova, struct rte_mbuf_ext_shared_info *shinfo)
{
	size_t hlen = et_roce_hdr_len(h->opcode);
	struct rte_mbuf *hd = rte_pktmbuf_alloc(mp), *pl = rte_pktmbuf_alloc(mp),
			*tl = rte_pktmbuf_alloc(mp);
	uint8_t tmp[ET_MAX_HDR_LEN + ET_ICRC_LEN], *ip, *t;
	uint32_t crc;
	int n;

	if (!hd || !pl || !tl)
		return NULL;
	/* headers as the builder makes them for a zero-byte payload, whose
	 * lengths are then patched: cheaper than a second header builder */
	n = et_roce_build(tmp, sizeof(tmp), h, NULL, 0);
	if (n < 0)
		return NULL;
	memcpy(rte_pktmbuf_append(hd, (uint16_t)hlen), tmp, hlen);
	ip = rte_pktmbuf_mtod(hd, uint8_t *) + ET_ETH_HLEN;
	ip[2] = (uint8_t)((hlen - ET_ETH_HLEN + PAYLOAD + ET_ICRC_LEN) >> 8);
	ip[3] = (uint8_t)(hlen - ET_ETH_HLEN + PAYLOAD + ET_ICRC_LEN);
	ip[ET_IPV4_HLEN + 4] = (uint8_t)((hlen - ET_ETH_HLEN - ET_IPV4_HLEN + PAYLOAD + ET_ICRC_LEN) >> 8);
	ip[ET_IPV4_HLEN + 5] = (uint8_t)(hlen - ET_ETH_HLEN - ET_IPV4_HLEN + PAYLOAD + ET_ICRC_LEN);
	ip[10] = ip[11] = 0; /* the checksum is masked by the ICRC; fixed below */
	{
		uint32_t sum = 0;

		for (int i = 0; i < 20; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip[10] = (uint8_t)(~sum >> 8);
		ip[11] = (uint8_t)~sum;
	}
	rte_mbuf_ext_refcnt_update(shinfo, 1);
	rte_pktmbuf_attach_extbuf(pl, payload, iova, PAYLOAD, shinfo);
	rte_pktmbuf_append(pl, PAYLOAD);
	crc = et_icrc_begin(ip);
	crc = et_icrc_continue(crc, ip + ET_IPV4_HLEN + ET_UDP_HLEN + ET_BTH_LEN,
			       hlen - ET_ETH_HLEN - ET_IPV4_HLEN - ET_UDP_HLEN - ET_BTH_LEN);
	crc = et_icrc_continue(crc, payload, PAYLOAD);
	t = (uint8_t *)rte_pktmbuf_append(tl, ET_ICRC_LEN);
	t[0] = crc & 0xff;
	t[1] = (crc >> 8) & 0xff;
	t[2] = (crc >> 16) & 0xff;
	t[3] = crc >> 24;
	rte_pktmbuf_chain(hd, pl);
	rte_pktmbuf_chain(hd, tl);
	return hd;
}

int
bench_zerocopy(struct bench_out *o, struct rte_mempool *mp)
{
	static uint8_t region[1 << 20] __rte_aligned(64);
	struct rte_mbuf_ext_shared_info shinfo = {.free_cb = noop_free};
	struct rte_mbuf *m[BATCH];
	struct et_roce_hdr h;
	uint64_t t, copy_c = 0, zc_c = 0, lin_c = 0, n = 0;
	double ghz = rte_get_tsc_hz() / 1e9;
	int err, i;

	rte_mbuf_ext_refcnt_set(&shinfo, 1);
	/* resolved once, as memory registration would (per call it is a
	 * pagemap lookup: microseconds) */
	rte_iova_t iova = rte_mem_virt2iova(region);
	memset(region, 0x3c, sizeof(region));
	memset(&h, 0, sizeof(h));
	h.src_ip = RTE_IPV4(10, 0, 0, 1);
	h.dst_ip = RTE_IPV4(10, 0, 1, 1);
	h.ttl = 64;
	h.opcode = ET_OP_WRITE_MIDDLE;
	h.pkey = ET_PKEY_DEFAULT;
	for (uint64_t r = 0; r < ROUNDS / BATCH; r++) {
		uint8_t *src = region + (r % 256) * PAYLOAD; /* walk the region */
		struct et_roce_pkt p;

		t = rte_rdtsc();
		for (i = 0; i < BATCH; i++)
			m[i] = et_roce_build_mbuf(mp, &h, src, PAYLOAD, &err);
		copy_c += rte_rdtsc() - t;
		for (i = 0; i < BATCH; i++) {
			if (m[i] == NULL || et_roce_parse_mbuf(m[i], &p, 0))
				return -1;
			rte_pktmbuf_free(m[i]);
		}
		t = rte_rdtsc();
		for (i = 0; i < BATCH; i++)
			m[i] = build_zc(mp, &h, src, iova + (rte_iova_t)(src - region), &shinfo);
		zc_c += rte_rdtsc() - t;
		t = rte_rdtsc();
		for (i = 0; i < BATCH; i++)
			if (m[i] == NULL || rte_pktmbuf_linearize(m[i]) != 0)
				return -1;
		lin_c += rte_rdtsc() - t;
		for (i = 0; i < BATCH; i++) {
			/* the chained frame, made contiguous, is the same frame */
			if (et_roce_parse_mbuf(m[i], &p, 0))
				return -1;
			rte_pktmbuf_free(m[i]);
		}
		n += BATCH;
	}
	bench_num(o, "send_copy_ns", copy_c / ghz / n);
	bench_num(o, "send_zerocopy_ns", zc_c / ghz / n);
	bench_num(o, "recv_linearize_ns", lin_c / ghz / n);
	return 0;
}
