#!/usr/bin/python3
"""Many RDMA CM connections between two ethereal-node processes over memif
(issue 46): ucmatose's test on N connections, made on the wire by RDMA CM
(no TCP), --iters SENDs each way on every one, the server's memory checked,
all closed by DREQ/DREP.  Both sides' counters must say that every
connection was established and closed, none given up (unreachable), no
event, MAD or answer lost; the time the connections took is printed.

check_cm_scale.py ETHEREAL_NODE WORKDIR N
"""
import json
import os
import subprocess
import sys

from check_node import EAL, Bg

# what must be zero on both sides, and why
ZERO = {
    "unreachable": "a connection given up: its REQ or REP unanswered",
    "events_lost": "an event not queued",
    "tx_full": "a MAD not queued",
    "tx_unresolved": "a MAD given up waiting for ARP",
    "tx_nic_drop": "a MAD the NIC had no room for",
    "bind_fail": "a QP that could not take the peer's parameters",
    "req_no_room": "a REQ refused for want of room",
}


def main():
    exe, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    iters = 2
    os.makedirs(work, exist_ok=True)
    sock = os.path.join(work, "memif.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    port = 20000 + os.getpid() % 20000
    # N QPs sending at once share the NIC's round robin: on a busy machine a
    # QP's turn can come later than the default 67 ms RTO, and each firing
    # spends a retry (the transport's timer restarts when it fires, not when
    # the retransmission leaves); this test is about the CM
    common = ["--oob", "cm", "--mode", "ucmatose", "--qps", str(n), "--iters", str(iters),
              "--size", "64", "--verify", "--oob-port", str(port), "--rto-ms", "500"]
    out = {side: os.path.join(work, side + ".json") for side in ("server", "client")}
    for f in out.values():
        if os.path.exists(f):
            os.unlink(f)
    srv = Bg([exe] + EAL + [f"--file-prefix=ecs{os.getpid()}", "-l", "0",
                            f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}", "--",
                            "--port", "net_memif0", "--ip", "10.0.0.2", "--server",
                            "--json", out["server"]] + common, work, "server", dict(os.environ))
    # the server has made its memif socket once it has said anything
    srv.first_line()
    try:
        cli = subprocess.run(
            [exe] + EAL + [f"--file-prefix=ecc{os.getpid()}", "-l", "1",
                           f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}", "--",
                           "--port", "net_memif0", "--ip", "10.0.0.1", "--client", "10.0.0.2",
                           "--json", out["client"]] + common,
            capture_output=True, text=True, timeout=240)
        if cli.returncode != 0:
            srv.kill()
        so, se = srv.wait(120)
    finally:
        srv.kill()
    ok = cli.returncode == 0 and srv.returncode == 0
    for side, stdout in (("server", so), ("client", cli.stdout)):
        try:
            res = json.load(open(out[side]))
        except (OSError, ValueError):
            res = {}  # it failed before its report: its output says why
        ctr = res.get("cm_counters", {})
        good = " ok\n" in stdout and res.get("verified") is True \
            and res.get("messages") == n * iters \
            and ctr.get("established") == n and ctr.get("disconnected") == n
        why = [f"{k} {ctr.get(k)}: {v}" for k, v in ZERO.items() if ctr.get(k) != 0]
        good = good and not why
        print(("ok  " if good else "FAIL") + f" {side}: {n} connections established in "
              f"{res.get('connect_s')} s, {res.get('messages')} messages verified "
              f"{res.get('verified')}, closed {ctr.get('disconnected')}, MADs again after a "
              f"timeout {ctr.get('tx_retries')}")
        for w in why:
            print("     " + w)
        ok = ok and good
    if not ok:
        print("client:", cli.returncode, cli.stdout, cli.stderr)
        print("server:", srv.returncode, so, se)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
