#!/usr/bin/python3
"""The connection manager's MADs of an interop run, as Wireshark reads them.

check_mads.py CAPTURE NODE_IP PEER_IP

CAPTURE: everything on the guest's tap.  The frames for QP 1 (UD SEND
ONLY, the GSI) are taken out with tcpdump and decoded by tshark's
InfiniBand dissector: each must be a CM MAD (class 0x07, version 2,
method Send) of an attribute of a connection (REQ .. DREP), and no field of
any may be malformed.  Both sides must have sent some (ours and the Linux
kernel's).  Prints a count per sender and attribute.  Exit 77 (skipped)
without tshark, unless CI is set.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

ATTR = {0x10: "REQ", 0x11: "MRA", 0x12: "REJ", 0x13: "REP", 0x14: "RTU", 0x15: "DREQ",
        0x16: "DREP"}
FIELDS = ["ip.src", "infiniband.bth.destqp", "infiniband.mad.mgmtclass",
          "infiniband.mad.classversion", "infiniband.mad.method",
          "infiniband.mad.attributeid", "_ws.malformed", "_ws.expert.severity"]


def main():
    cap, node_ip, peer_ip = sys.argv[1:4]
    tshark = shutil.which("tshark")
    if not tshark:
        print("check_mads: tshark is missing")
        sys.exit(1 if os.environ.get("CI") else 77)
    with tempfile.TemporaryDirectory() as tmp:
        qp1 = os.path.join(tmp, "qp1.pcap")
        # UDP 4791, BTH destination QP (bytes 5..7 of the BTH, after the 8 of UDP) 1
        subprocess.run(["tcpdump", "-r", cap, "-w", qp1,
                        "udp dst port 4791 and (udp[12:4] & 0xffffff) = 1"],
                       check=True, capture_output=True)
        cmd = [tshark, "-n", "-r", qp1, "-T", "fields", "-E", "separator=\t",
               "-E", "occurrence=f"]
        for f in FIELDS:
            cmd += ["-e", f]
        out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print("check_mads: tshark failed:", out.stderr)
        sys.exit(1)
    count = collections.Counter()
    bad = []
    for n, line in enumerate(out.stdout.splitlines(), 1):
        v = dict(zip(FIELDS, line.split("\t")))
        num = {f: int(v[f], 0) if v.get(f) else None for f in FIELDS[1:6]}
        who = "ours" if v["ip.src"] == node_ip else "rxe's" if v["ip.src"] == peer_ip else v["ip.src"]
        attr = num["infiniband.mad.attributeid"]
        if (num["infiniband.mad.mgmtclass"], num["infiniband.mad.classversion"],
                num["infiniband.mad.method"]) != (0x07, 2, 3) or attr not in ATTR:
            bad.append(f"frame {n} from {who}: not a CM MAD of a connection: {line}")
        if v.get("_ws.malformed") or v.get("_ws.expert.severity"):
            bad.append(f"frame {n} from {who}: Wireshark flags it: {line}")
        count[(who, ATTR.get(attr, hex(attr or 0)))] += 1
    for who in ("ours", "rxe's"):
        parts = [f"{a} {count[(who, a)]}" for a in ATTR.values() if count[(who, a)]]
        print(f"CM MADs, {who}: {sum(count[(who, a)] for a in ATTR.values())} "
              f"({', '.join(parts) or 'none'})")
    for b in bad[:20]:
        print("BAD", b)
    ok = not bad and any(k[0] == "ours" for k in count) and any(k[0] == "rxe's" for k in count)
    print(f"checked {sum(count.values())} MADs with tshark: {len(bad)} malformed or not CM"
          + ("" if ok or bad else "; one side sent none"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
