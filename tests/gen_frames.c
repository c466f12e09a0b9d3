/* SPDX-License-Identifier: BSD-3-Clause
 * gen-frames PCAP MANIFEST [PCAPNG]: writes RoCEv2 frames of every opcode
 * (several payload sizes and field values each) to a classic pcap file (and
 * through our pcapng writer, et_capture, to PCAPNG), and what each frame
 * should decode to as tab-separated lines, for independent decoders (scapy,
 * tshark) to check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "link/et_capture.h"
#include "wire/et_wire.h"

static void
put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f); /* pcap files are in the writer's byte order */
}

static void
put16(FILE *f, uint16_t v)
{
	fwrite(&v, 2, 1, f);
}

int
main(int argc, char **argv)
{
	static const uint8_t ops[] = {
		ET_OP_SEND_FIRST, ET_OP_SEND_MIDDLE, ET_OP_SEND_LAST,
		ET_OP_SEND_LAST_IMM, ET_OP_SEND_ONLY, ET_OP_SEND_ONLY_IMM,
		ET_OP_WRITE_FIRST, ET_OP_WRITE_MIDDLE, ET_OP_WRITE_LAST,
		ET_OP_WRITE_LAST_IMM, ET_OP_WRITE_ONLY, ET_OP_WRITE_ONLY_IMM,
		ET_OP_ACK, ET_OP_CNP, ET_OP_READ_REQ, ET_OP_READ_RESP_FIRST,
		ET_OP_READ_RESP_MIDDLE, ET_OP_READ_RESP_LAST, ET_OP_READ_RESP_ONLY,
		ET_OP_ATOMIC_ACK, ET_OP_CMP_SWAP, ET_OP_FETCH_ADD, ET_OP_UD_SEND_ONLY,
		ET_OP_UD_SEND_ONLY_IMM,
	};
	static const uint32_t sizes[] = {0, 3, 256, 1021, 4096};
	static const uint8_t syndromes[] = {0x1f, 0x00, 0x2e, 0x60, 0x61, 0x62, 0x63};
	static uint8_t payload[4096], frame[4096 + 128];
	FILE *pcap, *man;
	struct et_capture *ng = NULL;
	struct rte_mempool *mp = NULL;
	uint32_t n = 0;
	size_t o, s, k;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s PCAP MANIFEST [PCAPNG]\n", argv[0]);
		return 2;
	}
	if (argc == 4) {
		char *eal[] = {argv[0], "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
			       "--no-telemetry", "--log-level=error"};

		if (rte_eal_init(8, eal) < 0 ||
		    !(mp = rte_pktmbuf_pool_create("gen", 63, 0, 0, 8192, 0)) ||
		    !(ng = et_capture_open(argv[3], "gen-frames"))) {
			fprintf(stderr, "gen-frames: cannot set up the pcapng writer\n");
			return 1;
		}
	}
	pcap = fopen(argv[1], "wb");
	man = fopen(argv[2], "w");
	if (pcap == NULL || man == NULL) {
		perror("gen-frames");
		return 1;
	}
	for (k = 0; k < sizeof(payload); k++)
		payload[k] = (uint8_t)(k * 31 + 1);
	put32(pcap, 0xa1b2c3d4);
	put16(pcap, 2);
	put16(pcap, 4);
	put32(pcap, 0);
	put32(pcap, 0);
	put32(pcap, 65535);
	put32(pcap, 1); /* Ethernet */

	for (o = 0; o < sizeof(ops); o++) {
		uint16_t opf = et_opcode_flags[ops[o]];

		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			uint32_t plen = sizes[s];
			struct et_roce_hdr h;
			int len;

			if (plen && !(opf & ET_OPF_PAYLOAD))
				continue;
			if (!(opf & ET_OPF_LAST) && (plen & 3))
				continue;
			memset(&h, 0, sizeof(h));
			h.dst_mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x20}};
			h.src_mac = (struct rte_ether_addr){{0x02, 0, 0, 0, 0, 0x10}};
			h.src_ip = 0x0a000001 + n;
			h.dst_ip = 0x0a010001;
			h.dscp = 26;
			h.ecn = n % 4;
			h.ttl = 64;
			h.ip_id = (uint16_t)n;
			h.udp_sport = (uint16_t)(0x0100 * (n % 7) + n);
			h.opcode = ops[o];
			h.ackreq = (opf & ET_OPF_LAST) != 0;
			h.pkey = ET_PKEY_DEFAULT;
			h.dest_qp = 0x100000 + n * 3;
			h.psn = (0xfffff0 + n * 5) & ET_PSN_MASK;
			h.reth_va = 0x7f0000001000ull + n * 4096;
			h.reth_rkey = 0xabc00000 + n;
			h.reth_dma_len = plen * 3;
			h.aeth_syndrome = syndromes[n % sizeof(syndromes)];
			h.aeth_msn = n * 11;
			h.imm = 0xfeed0000 + n;
			h.atomic_swap = 0x1111222233334444ull * (n % 5 + 1);
			h.atomic_cmp = 0x0123456789abcdefull + n;
			h.atomic_orig = 0xfedcba9876543210ull - n;
			h.deth_qkey = 0x80010000u + n;
			h.deth_src_qp = n % 2 ? 1 : 0x100 + n;
			if (ops[o] == ET_OP_CNP)
				et_roce_cnp_hdr(&h, h.dest_qp);
			len = et_roce_build(frame, sizeof(frame), &h, payload, plen);
			if (len < 0) {
				fprintf(stderr, "gen-frames: %s\n", et_wire_strerror(len));
				return 1;
			}
			put32(pcap, n);
			put32(pcap, 0);
			put32(pcap, (uint32_t)len);
			put32(pcap, (uint32_t)len);
			fwrite(frame, 1, (size_t)len, pcap);
			if (ng) {
				struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

				memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, (size_t)len);
				et_capture_frames(ng, &m, 1, n & 1, 1000000000ull * n + 7);
				rte_pktmbuf_free(m);
			}
			/* index opcode dqpn psn sport ackreq pad syndrome msn va rkey
			 * dmalen imm swap cmp orig qkey srcqp */
			fprintf(man, "%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%llu\t%u\t%u\t%u"
				"\t%llu\t%llu\t%llu\t%u\t%u\n",
				n, h.opcode, h.dest_qp, h.psn, h.udp_sport, h.ackreq,
				(opf & ET_OPF_LAST) ? (-plen) & 3 : 0, h.aeth_syndrome,
				h.aeth_msn, (unsigned long long)h.reth_va, h.reth_rkey,
				h.reth_dma_len, h.imm, (unsigned long long)h.atomic_swap,
				(unsigned long long)h.atomic_cmp,
				(unsigned long long)h.atomic_orig, h.deth_qkey, h.deth_src_qp);
			n++;
		}
	}
	et_capture_close(ng);
	if (fclose(pcap) || fclose(man)) {
		perror("gen-frames");
		return 1;
	}
	printf("gen-frames: %u frames\n", n);
	return 0;
}
