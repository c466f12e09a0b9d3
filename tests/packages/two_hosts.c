/* SPDX-License-Identifier: BSD-3-Clause
 * A user's program against the installed libethereal: tests/check_packages.py
 * builds it with `cc two_hosts.c $(pkg-config --cflags --libs ethereal)`
 * and nothing of the source tree.  Through the public headers only:
 *   1. wire: a RoCEv2 RDMA WRITE ONLY frame built (ICRC and all), parsed
 *      back field for field, and refused once a payload byte flips;
 *   2. sim: a two-host fabric (one leaf, one spine) built and run, an
 *      all-reduce under Ethereal's policy, every byte checked.
 * Prints one line per step; exit 0 when both hold.
 */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>

#include "sim/et_fabric.h"
#include "wire/et_wire.h"

static int
frame(void)
{
	static const struct rte_ether_addr a = {{0x02, 0, 0, 0, 0, 1}}, b = {{0x02, 0, 0, 0, 0, 2}};
	struct et_roce_hdr h = {
		.dst_mac = b, .src_mac = a,
		.src_ip = 0x0a000001, .dst_ip = 0x0a000102, .ttl = 64, .ecn = ET_ECN_ECT0,
		.udp_sport = 0x1234, .opcode = ET_OP_WRITE_ONLY, .ackreq = true, .pkey = 0xffff,
		.dest_qp = 0x101, .psn = 77, .reth_va = 0x10000, .reth_rkey = 0xabc,
		.reth_dma_len = 1000,
	};
	uint8_t payload[1000], buf[1200];
	struct et_roce_pkt pkt;
	int len, err;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	len = et_roce_build(buf, sizeof(buf), &h, payload, sizeof(payload));
	if (len < 0) {
		printf("frame: build: %s\n", et_wire_strerror(-len));
		return -1;
	}
	err = et_roce_parse(buf, (size_t)len, &pkt, 0);
	if (err != 0 || pkt.h.opcode != ET_OP_WRITE_ONLY || pkt.h.dest_qp != 0x101 ||
	    pkt.h.psn != 77 || pkt.h.reth_va != 0x10000 || pkt.h.reth_rkey != 0xabc ||
	    pkt.h.udp_sport != 0x1234 || pkt.payload_len != sizeof(payload) ||
	    memcmp(pkt.payload, payload, sizeof(payload)) != 0) {
		printf("frame: parse: %s, or a field differs\n", et_wire_strerror(-err));
		return -1;
	}
	buf[len / 2] ^= 1; /* a payload byte: only the ICRC sees it */
	err = et_roce_parse(buf, (size_t)len, &pkt, 0);
	if (err != -ET_WIRE_E_ICRC) {
		printf("frame: a flipped payload bit parsed as '%s', not 'bad ICRC'\n",
		       et_wire_strerror(-err));
		return -1;
	}
	printf("frame: %s of %d bytes built, parsed back, refused when corrupted (%s)\n",
	       et_opcode_name(h.opcode), len, et_wire_err_name(-err));
	return 0;
}

static int
fabric(void)
{
	struct et_fabric_params p;
	struct et_fabric f;
	uint64_t checked = 0;
	uint32_t wrong;
	char err[128];
	bool ok;

	et_fabric_params_default(&p);
	et_topo_leaf_spine(&p.t, 1, 1, 2, 1);
	if (et_lb_parse("ethereal", &p.lb, err, sizeof(err)) != 0) {
		printf("fabric: --lb ethereal: %s\n", err);
		return -1;
	}
	p.size = 256 * 1024;
	p.verify = true;
	if (et_fabric_build(&f, &p) != 0) {
		printf("fabric: build: %s\n", f.error);
		return -1;
	}
	if (et_fabric_run(&f) != 0) {
		printf("fabric: run: %s\n", f.error);
		et_fabric_free(&f);
		return -1;
	}
	wrong = et_fabric_verify(&f, &checked);
	et_fabric_collect(&f);
	printf("fabric: %u hosts, all-reduce of %lu bytes in %lu ns, %lu bytes checked, "
	       "%u ranks wrong, %lu frames made, %lu accounted for\n", f.n_hosts,
	       (unsigned long)p.size, (unsigned long)et_fabric_cct_ns(&f), (unsigned long)checked,
	       wrong, (unsigned long)f.st.frames_made, (unsigned long)f.st.frames_accounted);
	ok = f.n_hosts == 2 && wrong == 0 && checked > 0 && f.st.frames_made > 0 &&
	     f.st.frames_made == f.st.frames_accounted;
	et_fabric_free(&f);
	return ok ? 0 : -1;
}

int
main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "--no-shconf", "--no-pci", "-m", "512", "-l", "0",
		       "--no-telemetry", "--log-level=*:error", "--file-prefix=two_hosts"};
	int bad;

	(void)argc;
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		printf("two_hosts: DPDK's EAL did not start\n");
		return 1;
	}
	bad = (frame() != 0) + (fabric() != 0);
	rte_eal_cleanup();
	return bad ? 1 : 0;
}
