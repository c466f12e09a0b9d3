#!/usr/bin/python3
"""What a real port gives the endpoint: two ethereal-node processes, one
core each, write_bw of 1 MB messages on 4 QPs at 4 KB MTU (ICRC built and
checked), for a few seconds, over
  memif       shared memory between the processes (no root);
  veth        a kernel veth pair under DPDK's af_packet, MTU 9000 (root,
              iproute2; skipped, saying so, without them).
One JSON object: per link the client's goodput, packets, retransmissions
and timeouts, and the server's (the receiving core's) figures, with the
most a packet can cost each core (its busy-polled second over the packets);
then memif again with two workers a side (--workers 2, four lcores), each
worker's busy time per packet beside the goodput; then memif read_bw (the
client RDMA READs 1 MB messages: the server's core sends), with its ratio
to write_bw on the same link in the same run;
hugepages when the machine has free ones, as ethereal-bench does.

ports.py ETHEREAL_NODE [SECONDS]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ARGS = ["--size", "1M", "--qps", "4", "--mtu", "4096"]


def hugepages_free():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("HugePages_Free:"):
                return int(line.split()[1]) >= 512
    return False


def eal(huge):
    return ["--no-pci", "--no-telemetry", "--log-level=*:error"] + \
        ([] if huge else ["--no-huge", "-m", "1024"])


def run_pair(exe, work, name, devs, huge, seconds, port, workers=1, mode="write_bw"):
    """One server (lcore 0, receives; read_bw: sends) and one client (lcore
    1, sends; read_bw: receives); with workers > 1, each has that many on
    lcores 0..workers-1, and yields when idle (the cores are shared)."""
    res = {}
    srv_json, cli_json = (os.path.join(work, f"{name}-{r}.json") for r in ("server", "client"))
    common = ARGS + ["--mode", mode, "--duration", f"{seconds}s", "--oob-port", str(port)]
    lcores = ("0", "1")
    if workers > 1:
        common += ["--workers", str(workers), "--yield"]
        lcores = (f"0-{workers - 1}",) * 2
    srv = subprocess.Popen(
        [exe] + eal(huge) + ["-l", lcores[0], f"--file-prefix=bps{os.getpid()}", devs[0][0], "--",
                             "--port", devs[0][1], "--ip", "10.0.0.2", "--server",
                             "--json", srv_json] + common,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)  # the memif server's socket, the TCP listener
    cli = subprocess.run(
        [exe] + eal(huge) + ["-l", lcores[1], f"--file-prefix=bpc{os.getpid()}", devs[1][0], "--",
                             "--port", devs[1][1], "--ip", "10.0.0.1", "--client", "127.0.0.1",
                             "--json", cli_json] + common,
        capture_output=True, text=True, timeout=seconds + 120)
    if cli.returncode:
        srv.kill()  # it would wait for a client that is gone
    try:
        _, srv_err = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        _, srv_err = srv.communicate()
    if cli.returncode or srv.returncode:
        res[f"{name}_error"] = (cli.stderr.strip().splitlines() or ["exit %d" % cli.returncode])[-1]
        # DPDK 22.11's af_packet names its fanout group by pid XOR ifindex:
        # two processes can clash (the port does not start); new ones do not
        res["clash"] = "PACKET_FANOUT" in cli.stderr + srv_err
    for role, path in (("client", cli_json), ("server", srv_json)):
        try:
            j = json.load(open(path))
        except (OSError, ValueError):
            continue
        pre = f"{name}_" if role == "client" else f"{name}_server_"
        for k in ("gbps", "mpps", "retransmits", "timeouts"):
            if k in j:
                res[pre + k] = j[k]
        # each process polls its core all the time: a packet costs it at
        # most this, everything included (rx burst to tx burst, ICRC,
        # placing, ACKs)
        if j.get("mpps") and workers == 1:
            res[pre + "ns_per_pkt"] = round(1e3 / j["mpps"], 1)
        # each worker's core: its busy time per packet, idle polls left out
        # (what it needs of a core of its own, however the cores are shared)
        for k, w in enumerate(j.get("workers", [])):
            res[f"{pre}worker{k}_busy_ns_per_pkt"] = w.get("busy_ns_per_pkt")
    return res


def veth_pair(name):
    subprocess.run(["ip", "link", "del", name + "a"], capture_output=True)
    subprocess.run(["ip", "link", "add", name + "a", "type", "veth", "peer", "name", name + "b"],
                   check=True)
    for end in "ab":
        subprocess.run(["ip", "link", "set", name + end, "mtu", "9000", "up"], check=True)


def main():
    exe = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    huge = hugepages_free()
    out = {"hugepages": huge, "seconds": seconds, "size": 1 << 20, "qps": 4, "mtu": 4096}
    base = 20000 + os.getpid() % 20000
    with tempfile.TemporaryDirectory() as work:
        sock = os.path.join(work, "m.sock")
        got = run_pair(exe, work, "memif", (
            (f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}", "net_memif0"),
            (f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}", "net_memif0")),
            huge, seconds, base)
        got.pop("clash", None)
        out.update(got)
        # two workers a side: four lcores on this machine's cores
        got = run_pair(exe, work, "memif_2workers", (
            (f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}2", "net_memif0"),
            (f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}2", "net_memif0")),
            huge, seconds, base + 10, workers=2)
        got.pop("clash", None)
        out.update(got)
        # the same link by READ: the server's core builds the data frames
        got = run_pair(exe, work, "memif_read", (
            (f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}3", "net_memif0"),
            (f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}3", "net_memif0")),
            huge, seconds, base + 20, mode="read_bw")
        got.pop("clash", None)
        out.update(got)
        if out.get("memif_gbps") and out.get("memif_read_gbps"):
            out["memif_read_vs_write"] = round(out["memif_read_gbps"] / out["memif_gbps"], 3)
        if os.geteuid() != 0 or not shutil.which("ip"):
            out["veth_skipped"] = "needs root and ip (iproute2)"
        else:
            name = f"ebp{os.getpid() % 100000}"
            # a frame slot holds a 4 KB-MTU frame (scripts/testbed's sizes)
            af = "framesz=4384,blocksz=561152,framecnt=512,qdisc_bypass=1"
            try:
                veth_pair(name)
                for attempt in range(3):
                    got = run_pair(exe, work, "veth", (
                        (f"--vdev=net_af_packet0,iface={name}a,{af}", "net_af_packet0"),
                        (f"--vdev=net_af_packet1,iface={name}b,{af}", "net_af_packet1")),
                        huge, seconds, base + 1 + attempt)
                    if not got.pop("clash", False):
                        break
                out.update(got)
            finally:
                subprocess.run(["ip", "link", "del", name + "a"], capture_output=True)
    print(json.dumps(out, indent=1, sort_keys=True))
    return 1 if any(k.endswith("_error") for k in out) else 0


if __name__ == "__main__":
    sys.exit(main())
