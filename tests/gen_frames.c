/* SPDX-License-Identifier: BSD-3-Clause
 * gen-frames PCAP MANIFEST [PCAPNG]: writes RoCEv2 frames of every opcode
 * (several payload sizes and field values each), then the connection
 * manager's MADs to QP 1 (one of each message), to a classic pcap file (and
 * through our pcapng writer, et_capture, to PCAPNG), and what each frame
 * should decode to as tab-separated lines, for independent decoders (scapy,
 * tshark) to check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "cm/et_mad.h"
#include "link/et_capture.h"
#include "wire/et_gid.h"
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

static FILE *pcap, *man;
static struct et_capture *ng;
static struct rte_mempool *mp;

/* Frame n, and the manifest's line of it: index opcode dqpn psn sport
 * ackreq pad syndrome msn va rkey dmalen imm swap cmp orig qkey srcqp,
 * then for a CM MAD attr, local and remote communication ID, QPN, PSN
 * (0 in frames that carry none). */
static void
put_frame(uint32_t n, const uint8_t *frame, int len, const struct et_roce_hdr *h, uint32_t pad,
	  const struct et_cm_msg *mad)
{
	uint32_t attr = 0, lcid = 0, rcid = 0, qpn = 0, psn = 0;

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
	if (mad) {
		attr = mad->hdr.attr_id;
		switch (attr) {
		case ET_CM_REQ:
			lcid = mad->u.req.local_comm_id;
			qpn = mad->u.req.local_qpn;
			psn = mad->u.req.starting_psn;
			break;
		case ET_CM_REP:
			lcid = mad->u.rep.local_comm_id;
			rcid = mad->u.rep.remote_comm_id;
			qpn = mad->u.rep.local_qpn;
			psn = mad->u.rep.starting_psn;
			break;
		case ET_CM_REJ:
			lcid = mad->u.rej.local_comm_id;
			rcid = mad->u.rej.remote_comm_id;
			psn = mad->u.rej.reason; /* the column's other use */
			break;
		case ET_CM_MRA:
			lcid = mad->u.mra.local_comm_id;
			rcid = mad->u.mra.remote_comm_id;
			break;
		default:
			lcid = mad->u.ids.local_comm_id;
			rcid = mad->u.ids.remote_comm_id;
			qpn = mad->u.ids.remote_qpn;
		}
	}
	fprintf(man, "%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%u\t%llu\t%u\t%u\t%u"
		"\t%llu\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%u\n",
		n, h->opcode, h->dest_qp, h->psn, h->udp_sport, h->ackreq, pad, h->aeth_syndrome,
		h->aeth_msn, (unsigned long long)h->reth_va, h->reth_rkey, h->reth_dma_len, h->imm,
		(unsigned long long)h->atomic_swap, (unsigned long long)h->atomic_cmp,
		(unsigned long long)h->atomic_orig, h->deth_qkey, h->deth_src_qp, attr, lcid, rcid,
		qpn, psn);
}

/* One CM MAD of each message, as QP 1 sends them: UD SEND ONLY, Q_Key
 * 0x80010000, source QP 1, 256 bytes. */
static int
put_mads(uint32_t n)
{
	static const uint16_t attrs[] = {ET_CM_REQ, ET_CM_MRA, ET_CM_REJ, ET_CM_REP, ET_CM_RTU,
					 ET_CM_DREQ, ET_CM_DREP};
	uint8_t mad[ET_MAD_LEN], pdata[ET_CM_REQ_PDATA], frame[512];

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++, n++) {
		struct et_roce_hdr h = {
			.dst_mac = {{0x02, 0, 0, 0, 0, 0x20}}, .src_mac = {{0x02, 0, 0, 0, 0, 0x10}},
			.src_ip = 0x0a4d0003, .dst_ip = 0x0a4d0002, .ttl = 64,
			.udp_sport = (uint16_t)(0xc000 + n), .opcode = ET_OP_UD_SEND_ONLY,
			.pkey = ET_PKEY_DEFAULT, .dest_qp = ET_QPN_GSI, .psn = n,
			.deth_qkey = ET_GSI_QKEY, .deth_src_qp = ET_QPN_GSI};
		struct et_cm_msg m;
		int len;

		et_cm_msg_init(&m, attrs[i], 0x1234567800000000ull + n);
		switch (attrs[i]) {
		case ET_CM_REQ: {
			struct et_cm_req *r = &m.u.req;

			r->local_comm_id = 0xc0ffee00 + n;
			r->service_id = et_rdma_service_id(ET_RDMA_PS_TCP, 18515);
			r->local_ca_guid = 0x020000fffe000010ull;
			r->local_qpn = 0x100 + n;
			r->responder_resources = r->initiator_depth = 1;
			r->remote_cm_response_timeout = r->local_cm_response_timeout = 16;
			r->starting_psn = 0x1000 + n;
			r->retry_count = 7;
			r->pkey = 0xffff;
			r->path_mtu = 3;
			r->rnr_retry_count = 7;
			r->max_cm_retries = 15;
			r->primary.local_lid = r->primary.remote_lid = 0xffff;
			et_gid_from_ipv4(h.src_ip, r->primary.local_gid);
			et_gid_from_ipv4(h.dst_ip, r->primary.remote_gid);
			r->primary.hop_limit = 64;
			r->primary.local_ack_timeout = 14;
			memset(pdata, 0, sizeof(pdata));
			et_cma_hdr_build(pdata, &(struct et_cma_hdr){.src_port = 0xbeef, .src_ip = h.src_ip,
								    .dst_ip = h.dst_ip});
			m.pdata = pdata;
			m.pdata_len = sizeof(pdata);
			break;
		}
		case ET_CM_REP:
			m.u.rep.local_comm_id = 0xd00d0000 + n;
			m.u.rep.remote_comm_id = 0xc0ffee00;
			m.u.rep.local_qpn = 0x11;
			m.u.rep.starting_psn = 0xabcdef;
			m.u.rep.responder_resources = m.u.rep.initiator_depth = 1;
			m.u.rep.rnr_retry_count = 7;
			m.u.rep.local_ca_guid = 0x5054fffe770002ull;
			break;
		case ET_CM_REJ:
			m.u.rej.local_comm_id = 0;
			m.u.rej.remote_comm_id = 0xc0ffee00 + n;
			m.u.rej.reason = ET_CM_REJ_INVALID_SERVICE_ID;
			break;
		case ET_CM_MRA:
			m.u.mra.local_comm_id = 0xd00d0000;
			m.u.mra.remote_comm_id = 0xc0ffee00;
			m.u.mra.service_timeout = 20;
			break;
		default:
			m.u.ids.local_comm_id = 0xd00d0000 + n;
			m.u.ids.remote_comm_id = 0xc0ffee00 + n;
			if (attrs[i] == ET_CM_DREQ)
				m.u.ids.remote_qpn = 0x100;
		}
		if (et_cm_build(mad, &m) != ET_MAD_LEN ||
		    (len = et_roce_build(frame, sizeof(frame), &h, mad, sizeof(mad))) < 0) {
			fprintf(stderr, "gen-frames: cannot build a %s\n", et_cm_attr_name(attrs[i]));
			return -1;
		}
		put_frame(n, frame, len, &h, 0, &m);
	}
	return (int)n;
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
	uint32_t n = 0;
	int k_mads;
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
			put_frame(n, frame, len, &h, (opf & ET_OPF_LAST) ? (-plen) & 3 : 0, NULL);
			n++;
		}
	}
	if ((k_mads = put_mads(n)) < 0)
		return 1;
	n = (uint32_t)k_mads;
	et_capture_close(ng);
	if (fclose(pcap) || fclose(man)) {
		perror("gen-frames");
		return 1;
	}
	printf("gen-frames: %u frames\n", n);
	return 0;
}
