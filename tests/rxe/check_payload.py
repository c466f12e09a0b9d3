#!/usr/bin/python3
"""Is what the peer sent last what landed in our memory?

check_payload.py CAPTURE SAVED NODE_IP [QPN]

CAPTURE: the RoCEv2 frames to NODE_IP, as the kernel saw them on the link
(tcpdump on the veth); SAVED: ethereal-node's buffer after the run (--save).
The last complete message of SENDs or RDMA WRITEs, or the last READ's
responses (by PSN; a retransmitted PSN counts once, its last copy) is
rebuilt from the frames and must equal the start of SAVED byte for byte; with QPN, only the frames to that QP
count (several QPs interleave their PSNs).  Independent of our receive path: plain
header arithmetic from the RoCEv2 spec, no code of ours.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vm"))
from pcap_frames import records, roce  # noqa: E402

FIRST, MIDDLE, LAST, ONLY = "first", "middle", "last", "only"
# RC opcodes carrying payload: SEND first/middle/last/only (+imm), WRITE
# first/middle/last/only (+imm), READ response first/middle/last/only; RETH
# on WRITE first/only, ImmDt on *_IMM, AETH on READ response first/last/only
KIND = {0x00: (FIRST, 0), 0x01: (MIDDLE, 0), 0x02: (LAST, 0), 0x03: (LAST, 4),
        0x04: (ONLY, 0), 0x05: (ONLY, 4), 0x06: (FIRST, 16), 0x07: (MIDDLE, 0),
        0x08: (LAST, 0), 0x09: (LAST, 4), 0x0a: (ONLY, 16), 0x0b: (ONLY, 20),
        0x0d: (FIRST, 4), 0x0e: (MIDDLE, 0), 0x0f: (LAST, 4), 0x10: (ONLY, 4)}


def frames(path):
    for data, orig in records(path):
        if len(data) != orig:
            sys.exit(f"FAIL: capture truncated a frame ({len(data)} of {orig} bytes): use -s 0")
        yield data


def payloads(path, node_ip, qpn=None):
    """(psn, kind, payload) of each data frame to node_ip (and qpn), in
    capture order."""
    want = bytes(int(x) for x in node_ip.split("."))
    for f in frames(path):
        hdrs = roce(f)
        if hdrs is None or hdrs[1] != want:
            continue
        bth = hdrs[2]
        op = bth[0]
        if op not in KIND:
            continue  # ACKs and the like
        if qpn is not None and struct.unpack(">I", b"\0" + bth[5:8])[0] != qpn:
            continue
        kind, ext = KIND[op]
        pad = (bth[1] >> 4) & 3
        psn = struct.unpack(">I", b"\0" + bth[9:12])[0]
        body = bth[12 + ext:len(bth) - 4]
        yield psn, kind, body[:len(body) - pad]


def last_message(path, node_ip, qpn=None):
    seen = {}
    base = None
    for psn, kind, body in payloads(path, node_ip, qpn):
        if base is None:
            base = psn
        rel = (psn - base) & 0xffffff
        # a resend replaces; but a READ asked for again from one of its
        # middle PSNs is answered from there as FIRST: a PSN once a MIDDLE
        # or LAST does not start the message
        if rel in seen and seen[rel][0] not in (FIRST, ONLY) and kind == FIRST:
            kind = MIDDLE
        elif rel in seen and seen[rel][0] not in (FIRST, ONLY) and kind == ONLY:
            kind = LAST
        seen[rel] = (kind, body)
    if not seen:
        sys.exit("FAIL: no data frames to us in the capture")
    # from the newest end of a message back to its start, every PSN present
    top = max(seen)
    while top >= 0 and (top not in seen or seen[top][0] not in (LAST, ONLY)):
        top -= 1
    parts, p = [], top
    while p >= 0 and p in seen:
        kind, body = seen[p]
        parts.append(body)
        if kind in (FIRST, ONLY):
            return b"".join(reversed(parts)), top - p + 1
        p -= 1
    sys.exit(f"FAIL: the capture lacks PSN {p + base if p >= 0 else '?'} of the last message")


def main():
    cap, saved, node_ip = sys.argv[1:4]
    qpn = int(sys.argv[4], 0) if len(sys.argv) > 4 else None
    msg, npkts = last_message(cap, node_ip, qpn)
    mem = open(saved, "rb").read()
    if len(msg) > len(mem):
        sys.exit(f"FAIL: the last message has {len(msg)} bytes, our buffer {len(mem)}")
    if mem[:len(msg)] != msg:
        bad = next(i for i in range(len(msg)) if mem[i] != msg[i])
        sys.exit(f"FAIL: our memory differs from the wire at byte {bad} of {len(msg)}")
    print(f"ok: the last message ({len(msg)} bytes, {npkts} packets) is in our memory byte for byte")


if __name__ == "__main__":
    main()
