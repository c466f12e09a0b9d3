#!/usr/bin/python3
"""Check our frames with independent decoders.

check_frames.py scapy|tshark GEN_FRAMES WORKDIR

Runs GEN_FRAMES to write a pcap and a manifest of what each frame carries,
then decodes the pcap with scapy (scapy.contrib.roce: recomputes every ICRC,
reads BTH fields) or with tshark (Wireshark's InfiniBand dissector on UDP
4791: opcode, QPN, PSN, RETH, AETH, ImmDt; and the connection manager's
MADs to QP 1: every message's IDs, QPN, PSN, REJ reason, rdma_cm's IP
header, with no field Wireshark calls malformed).  Exit 77 (meson: skipped) when
the decoder is missing, unless CI is set: then a missing decoder fails.
"""
import os
import shutil
import subprocess
import sys

SKIP = 77


def need(ok, what):
    if ok:
        return
    if os.environ.get("CI"):
        print(f"FAIL: {what} is missing (CI must install it)")
        sys.exit(1)
    print(f"SKIP: {what} is missing")
    sys.exit(SKIP)


def manifest(path):
    keys = ("index opcode dqpn psn sport ackreq pad syndrome msn va rkey dmalen imm "
            "swap cmp orig qkey srcqp attr lcid rcid mqpn mpsn").split()
    with open(path) as f:
        return [dict(zip(keys, map(int, line.split("\t")))) for line in f]


def has(op, what):
    reth = op in (0x06, 0x0A, 0x0B, 0x0C)
    imm = op in (0x03, 0x05, 0x09, 0x0B, 0x65)
    aeth = op in (0x0D, 0x0F, 0x10, 0x11, 0x12)
    return {"reth": reth, "imm": imm, "aeth": aeth, "atomic": op in (0x13, 0x14),
            "atomicack": op == 0x12, "deth": op in (0x64, 0x65)}[what]


def check_scapy(pcap, rows):
    try:
        from scapy.all import rdpcap, Ether
        from scapy.contrib.roce import BTH
    except ImportError:
        need(False, "python3-scapy")
    pkts = rdpcap(pcap)
    assert len(pkts) == len(rows), (len(pkts), len(rows))
    bad = 0
    for pkt, row in zip(pkts, rows):
        p = Ether(bytes(pkt))
        b = p[BTH]
        got = (b.opcode, b.dqpn, b.psn, p.sport, b.ackreq, b.padcount)
        want = (row["opcode"], row["dqpn"], row["psn"], row["sport"], row["ackreq"], row["pad"])
        q = p.copy()
        del q[BTH].icrc
        if got != want or bytes(q)[-4:] != bytes(p)[-4:]:
            print("frame", row["index"], "got", got, "want", want,
                  "icrc", bytes(p)[-4:].hex(), "scapy", bytes(q)[-4:].hex())
            bad += 1
    print(f"scapy: checked {len(rows)} frames (fields and ICRC), {bad} bad")
    return bad == 0


TSHARK_FIELDS = ["infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
                 "udp.srcport", "infiniband.bth.a", "infiniband.bth.padcnt",
                 "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
                 "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.immdt",
                 "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
                 "infiniband.atomicacketh.origremdt", "infiniband.deth.q_key",
                 "infiniband.deth.srcqp"]


def tshark_fields(pcap, fields, extra=()):
    """tshark's fields of every frame of pcap, a line a frame (tab
    between fields), or None (its stderr printed) when it fails."""
    cmd = [shutil.which("tshark"), "-n", "-r", pcap, "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=f", *extra]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        return None
    return out.stdout.rstrip("\n").split("\n")


def check_tshark(pcap, rows):
    need(shutil.which("tshark"), "tshark")
    # Wireshark tries the lower UDP port first: a path ID below 4791 that is
    # some protocol's well-known port (514 syslog, 7 echo...) needs Decode As.
    decode = []
    for port in sorted({r["sport"] for r in rows if 0 < r["sport"] < 4791}):
        decode += ["-d", f"udp.port=={port},infiniband"]
    lines = tshark_fields(pcap, TSHARK_FIELDS, decode)
    if lines is None:
        return False
    assert len(lines) == len(rows), (len(lines), len(rows))
    bad = 0
    def num(s):
        return int(s, 0) if s else None

    for line, row in zip(lines, rows):
        v = line.split("\t")
        op = row["opcode"]
        want = [op, row["dqpn"], row["psn"], row["sport"]]
        got = [num(v[0]), num(v[1]), num(v[2]), num(v[3])]
        if op != 0x81:  # tshark 4.0 knows 0x80 as CNP, 0x81 only as an opcode
            want += [row["ackreq"], row["pad"]]
            got += [num(v[4]), num(v[5])]
        if has(op, "reth"):
            want += [row["va"], row["rkey"], row["dmalen"]]
            got += [num(v[6]), num(v[7]), num(v[8])]
        if has(op, "aeth"):
            want += [row["syndrome"], row["msn"]]
            got += [num(v[9]), num(v[10])]
        if has(op, "imm"):
            want += [row["imm"]]
            got += [int(v[11], 16) if v[11] else None]  # shown as bare hex
        if has(op, "atomic"):
            # AtomicETH's VA and R_Key: tshark 4.0 shows them in the
            # AtomicETH's bytes only, so only the data fields are compared
            want += [row["swap"], row["cmp"]]
            got += [num(v[12]), num(v[13])]
        if has(op, "atomicack"):
            want += [row["orig"]]
            got += [num(v[14])]
        if has(op, "deth"):
            want += [row["qkey"], row["srcqp"]]
            got += [num(v[15]), num(v[16])]
        if got != want:
            print("frame", row["index"], "tshark", got, "want", want)
            bad += 1
    print(f"tshark: checked {len(rows)} frames (opcode, QPN, PSN, RETH, AETH, ImmDt, AtomicETH, AtomicAckETH, DETH), {bad} bad")
    return bad == 0


# a CM MAD's fields by attribute: (tshark field, manifest key)
MAD_FIELDS = {
    0x10: [("infiniband.cm.req", "lcid"), ("infiniband.cm.req.localqpn", "mqpn"),
           ("infiniband.cm.req.startpsn", "mpsn")],
    0x12: [("infiniband.cm.rej.localcommid", "lcid"), ("infiniband.cm.rej.remotecommid", "rcid"),
           ("infiniband.cm.rej.reason", "mpsn")],
    0x13: [("infiniband.cm.rep", "lcid"), ("infiniband.cm.rep.remotecommid", "rcid"),
           ("infiniband.cm.rep.localqpn", "mqpn"), ("infiniband.cm.rep.startpsn", "mpsn")],
    0x14: [("infiniband.cm.rtu.localcommid", "lcid"), ("infiniband.cm.rtu.remotecommid", "rcid")],
    0x15: [("infiniband.cm.dreq.localcommid", "lcid"), ("infiniband.cm.dreq.remotecommid", "rcid"),
           ("infiniband.cm.req.remoteqpneecn", "mqpn")],
    0x16: [("infiniband.cm.drsp.localcommid", "lcid"), ("infiniband.cm.drsp.remotecommid", "rcid")],
}


def check_tshark_mads(pcap, rows):
    """The CM's MADs: the MAD header's class, version, method and
    attribute, each message's fields (Wireshark 4.0 has none for the MRA:
    its header only), rdma_cm's header in the REQ; and nothing malformed."""
    mads = {r["index"] + 1: r for r in rows if r["attr"]}
    fields = ["frame.number", "infiniband.mad.mgmtclass", "infiniband.mad.classversion",
              "infiniband.mad.method", "infiniband.mad.attributeid",
              "infiniband.cm.req.ip_cm.ipv", "infiniband.cm.req.ip_cm.sip4",
              "infiniband.cm.req.ip_cm.dip4", "_ws.malformed", "_ws.expert.severity"]
    for attr in sorted(MAD_FIELDS):
        fields += [f for f, _ in MAD_FIELDS[attr]]
    lines = tshark_fields(pcap, fields)
    if lines is None:
        return False
    bad = 0
    seen = 0
    for line in lines:
        v = dict(zip(fields, line.split("\t")))
        row = mads.get(int(v["frame.number"]))
        if row is None:
            continue
        seen += 1
        want = {"infiniband.mad.mgmtclass": 0x07, "infiniband.mad.classversion": 2,
                "infiniband.mad.method": 3, "infiniband.mad.attributeid": row["attr"]}
        for f, key in MAD_FIELDS.get(row["attr"], []):
            want[f] = row[key]
        got = {f: int(v[f], 0) if v[f] else None for f in want}
        problems = [f"{f} {got[f]} want {want[f]}" for f in want if got[f] != want[f]]
        if row["attr"] == 0x10 and (int(v["infiniband.cm.req.ip_cm.ipv"] or "0", 0) != 4 or
                                    v["infiniband.cm.req.ip_cm.sip4"] != "10.77.0.3" or
                                    v["infiniband.cm.req.ip_cm.dip4"] != "10.77.0.2"):
            problems.append("rdma_cm header " + " ".join(v[f] for f in fields[5:8]))
        if v["_ws.malformed"] or v["_ws.expert.severity"]:
            problems.append(f"expert {v['_ws.malformed']} {v['_ws.expert.severity']}")
        if problems:
            print("MAD frame", row["index"], "attr", hex(row["attr"]), "; ".join(problems))
            bad += 1
    if seen != len(mads):
        print(f"tshark showed {seen} of the {len(mads)} MAD frames")
        bad += 1
    print(f"tshark: checked {len(mads)} CM MADs (header, IDs, QPN, PSN, REJ reason, "
          f"rdma_cm header, nothing malformed), {bad} bad")
    return bad == 0


def check_pcapng_times(ng):
    """Our pcapng writer: nanosecond timestamps and direction flags."""
    out = subprocess.run([shutil.which("tshark"), "-n", "-r", ng, "-T", "fields",
                          "-e", "frame.time_epoch", "-e", "frame.packet_flags_direction"],
                         capture_output=True, text=True)
    lines = out.stdout.strip().split("\n")
    bad = 0
    for i, line in enumerate(lines):
        t, direction = line.split("\t")
        # gen-frames stamps frame i at i s + 7 ns, odd ones outbound (2)
        if t != f"{i}.000000007" or int(direction, 16) != (2 if i & 1 else 1):
            bad += 1
    print(f"pcapng: {len(lines)} frames, {bad} with a wrong timestamp or direction")
    return out.returncode == 0 and bad == 0


def main():
    which, gen, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    pcap = os.path.join(work, f"frames-{which}.pcap")
    man = os.path.join(work, f"frames-{which}.tsv")
    if which == "tshark":
        # tshark reads the pcapng our capture writer made of the same frames
        need(shutil.which("tshark"), "tshark")
        ng = os.path.join(work, "frames.pcapng")
        subprocess.run([gen, pcap, man, ng], check=True)
        rows = manifest(man)
        ok = check_tshark(ng, rows) & check_tshark_mads(ng, rows) & check_pcapng_times(ng)
    else:
        subprocess.run([gen, pcap, man], check=True)
        ok = check_scapy(pcap, manifest(man))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
