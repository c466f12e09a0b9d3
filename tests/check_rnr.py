#!/usr/bin/python3
"""Issue 21 end to end: ethereal-node as a send_bw client over af_packet on a
veth pair, against a scapy responder on the other end that answers the first
SEND with an RNR NAK and then behaves (ACKs in order, ignores what is ahead).
The node must wait the NAK's time, send again, complete every SEND and exit 0
within a bound; before the fix it spun inside one et_nic_poll, deaf to
SIGINT.  Needs root, iproute2 and scapy: otherwise skipped (exit 77).

check_rnr.py ETHEREAL_NODE WORKDIR
"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

# DPDK's at errors, ours at info: the responder reads the node's "local:"
# line (stderr) for its QPN
EAL = ["--no-huge", "--no-pci", "-m", "512", "--no-telemetry", "--log-level=*:error",
       "--log-level=ethereal.*:info"]
SKIP = 77
PEER_QPN = 0x200
RNR_CODE = 14          # 1.28 ms (IBTA table 45)
ITERS, QPS, SIZE = 200, 2, 1000
BOUND_S = 30           # the whole run; a livelocked node never gets there


def skip(why):
    print(f"skip: {why}")
    sys.exit(SKIP)


class Peer(threading.Thread):
    """The responder: reads the node's frames on iface, answers with ACKs
    and one RNR NAK, built by scapy (scapy.contrib.roce computes the ICRC)."""

    def __init__(self, iface, node_out):
        super().__init__(daemon=True)
        from scapy.all import Ether, IP, UDP, conf  # noqa: F401
        from scapy.contrib.roce import BTH, AETH
        self.mods = (Ether, IP, UDP, BTH, AETH)
        self.node_out = node_out
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.s.bind((iface, 0))
        self.s.settimeout(0.1)
        self.mac = open(f"/sys/class/net/{iface}/address").read().strip()
        self.stop = False
        self.node_qpn = None
        self.expected = {}    # our QPN -> PSN expected
        self.msn = {}
        self.rnr_sent = None  # (qpn, psn, time) of the RNR NAK
        self.resent_after = None
        self.sends = 0
        self.error = None

    def node_base(self):
        """The node's first QPN, from its 'local: ...,qpn=0x..' line."""
        try:
            text = open(self.node_out).read()
        except OSError:
            return None
        i = text.find("qpn=0x")
        return int(text[i + 4:].split(",")[0], 16) if i >= 0 else None

    def answer(self, eth, qpn, psn, syndrome):
        Ether, IP, UDP, BTH, AETH = self.mods
        f = (Ether(dst=eth.src, src=self.mac) /
             IP(src=eth[IP].dst, dst=eth[IP].src, ttl=64, flags="DF") /
             UDP(sport=eth[UDP].sport, dport=4791) /
             BTH(opcode=0x11, pkey=0xffff, dqpn=self.node_qpn + (qpn - PEER_QPN), psn=psn) /
             AETH(syndrome=syndrome, msn=self.msn.get(qpn, 0)))
        self.s.send(bytes(f))

    def run(self):
        try:
            self.loop()
        except Exception as e:  # reported by the main thread
            self.error = repr(e)

    def frames(self):
        """What has arrived: block up to 0.1 s for one, then take the rest."""
        try:
            got = [self.s.recv(4096)]
        except socket.timeout:
            return []
        self.s.setblocking(False)
        try:
            while len(got) < 256:
                got.append(self.s.recv(4096))
        except BlockingIOError:
            pass
        self.s.settimeout(0.1)
        return got

    def loop(self):
        """Batches: the RNR NAK at once, then one cumulative ACK per QP for
        each batch (building a frame with scapy takes about a millisecond)."""
        Ether, IP, UDP, BTH, AETH = self.mods
        while not self.stop:
            acks = {}
            for raw in self.frames():
                if len(raw) < 54 or raw[12:14] != b"\x08\x00" or raw[23] != 17 or \
                        struct.unpack("!H", raw[36:38])[0] != 4791 or raw[42] != 0x04:
                    continue  # not a SEND ONLY: all this test sends
                if self.node_qpn is None:
                    self.node_qpn = self.node_base()
                    if self.node_qpn is None:
                        continue  # it sends again after its RTO
                qpn = int.from_bytes(raw[47:50], "big")
                psn = int.from_bytes(raw[51:54], "big")
                exp = self.expected.setdefault(qpn, psn)
                if self.rnr_sent and (qpn, psn) == self.rnr_sent[:2] and self.resent_after is None:
                    self.resent_after = time.monotonic() - self.rnr_sent[2]
                if psn == exp and self.rnr_sent is None:
                    self.rnr_sent = (qpn, psn, time.monotonic())
                    self.answer(Ether(raw), qpn, psn, 0x20 | RNR_CODE)  # no receive yet
                elif psn == exp:
                    self.expected[qpn] = (psn + 1) & 0xffffff
                    self.msn[qpn] = (self.msn.get(qpn, 0) + 1) & 0xffffff
                    self.sends += 1
                    acks[qpn] = (raw, psn)
                elif (exp - psn) & 0xffffff < 1 << 23:  # a duplicate
                    acks[qpn] = (raw, (exp - 1) & 0xffffff)
                # ahead of the expected PSN: silence; Go-Back-N resends it
            for qpn, (raw, psn) in acks.items():
                self.answer(Ether(raw), qpn, psn, 0x1f)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, work = sys.argv[1], sys.argv[2]
    if os.getuid() != 0 or not shutil.which("ip"):
        skip("needs root and iproute2")
    try:
        import scapy.contrib.roce  # noqa: F401
    except ImportError:
        skip("needs python3-scapy")
    os.makedirs(work, exist_ok=True)
    name = f"etr{os.getpid() % 100000}"
    if subprocess.run(["ip", "link", "add", name + "a", "type", "veth", "peer", "name",
                       name + "b"], capture_output=True).returncode != 0:
        skip("cannot make a veth pair here")
    node = None
    ok = False
    try:
        for end in "ab":
            subprocess.run(["ip", "link", "set", name + end, "up"], check=True)
        for end in "ab":  # no IPv6 chatter on the link
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{name}{end}.disable_ipv6=1"],
                           capture_output=True)
        out, err = os.path.join(work, "node.out"), os.path.join(work, "node.err")
        result = os.path.join(work, "rnr.json")
        for f in (out, err, result):
            if os.path.exists(f):
                os.unlink(f)
        open(err, "w").close()
        peer = Peer(name + "b", err)
        peer.start()
        spec = f"mac={peer.mac},ip=10.0.0.2,qpn={PEER_QPN:#x},psn=0x0,rkey=0x0,addr=0x0"
        cmd = [exe] + EAL + [f"--file-prefix=etr{os.getpid()}", "-l", "0",
                             f"--vdev=net_af_packet0,iface={name}a", "--",
                             "--port", "net_af_packet0", "--ip", "10.0.0.1", "--client", "127.0.0.1",
                             "--peer", spec, "--mode", "send_bw", "--size", str(SIZE),
                             "--mtu", "1024", "--qps", str(QPS), "--iters", str(ITERS),
                             "--rto-ms", "300", "--json", result]
        with open(out, "w") as o, open(err, "w") as e:
            node = subprocess.Popen(cmd, stdout=o, stderr=e)
        t0 = time.monotonic()
        try:
            node.wait(timeout=BOUND_S)
            how = f"exited {node.returncode} in {time.monotonic() - t0:.1f} s"
        except subprocess.TimeoutExpired:
            # a stuck node must at least obey SIGINT within a bound
            node.send_signal(signal.SIGINT)
            try:
                node.wait(timeout=10)
                how = f"not done in {BOUND_S} s; stopped by SIGINT"
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
                how = f"not done in {BOUND_S} s and deaf to SIGINT for 10 s (killed)"
        peer.stop = True
        peer.join(2)
        res = json.load(open(result)) if os.path.exists(result) else {}
        waited = peer.resent_after
        ok = (node.returncode == 0 and peer.error is None and peer.rnr_sent is not None
              and waited is not None and waited >= 0.00128
              and res.get("messages") == ITERS * QPS and peer.sends >= ITERS * QPS)
        print(("ok  " if ok else "FAIL") +
              f" send_bw client answered by an RNR NAK: {how}; {res.get('messages')} "
              f"messages; peer took {peer.sends} SENDs; the NAKed SEND came again after "
              f"{'-' if waited is None else f'{waited * 1e3:.2f} ms'} (NAK's time 1.28 ms)")
        if not ok:
            print("node:", open(out).read(), open(err).read())
            if peer.error:
                print("peer:", peer.error)
    finally:
        if node is not None and node.poll() is None:
            node.kill()
            node.wait()
        subprocess.run(["ip", "link", "del", name + "a"], capture_output=True)
    print(f"{int(ok)} passed, {int(not ok)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
