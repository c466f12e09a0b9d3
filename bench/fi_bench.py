#!/usr/bin/python3
"""The libfabric provider against the endpoint it runs on, on the same
memif link in the same run: two processes joined through one
ethereal-switch (slots 0 and 1), every process yielding when idle (the
switch shares this machine's cores):

  fi_rdm_tagged_bw, fi_rma_bw -o write and -o read at 1 MB  vs  ethereal-node write_bw 1 MB
  fi_rdm_tagged_pingpong at 8 B and 4 KB                     vs  ethereal-node pingpong

Every process floats over the machine's CPUs (the nodes and the switch on
lcore 0@(all), the provider's consumers unpinned), as the scheduler sees
fit: pinned, a node shared its CPU with the switch and lost 5x.

Each figure is a ratio to its reference (goals: bandwidth >= 0.9x,
latency <= 1.2x), both the median of ROUNDS rounds that run each pair one
after the other, so that what the machine's other work takes weighs on
both alike; latencies are mean round trips (the fabtests' usec/xfer is half
of one); fi_rma_bw moves its bytes both ways at once, its figure is one
way's.  One JSON object, every round's figures in *_all.  fabtests come from
the build (tests/check_fabtests.py builds them); without them, the provider
side is skipped, saying so.

  fi_bench.py SRC_ROOT BUILD_ROOT [ITERS] [ROUNDS]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from fi_switch import EAL, FLOAT, Switch, memif, provider_env  # noqa: E402


def node_pair(build, work, args, tag):
    """ethereal-node server (10.0.0.1, slot 0's port) and client (10.0.0.2);
    the client's JSON."""
    exe = os.path.join(build, "app", "ethereal-node")
    port = str(20000 + (os.getpid() + hash(tag)) % 20000)
    common = args + ["--oob-port", port, "--yield"]
    out = os.path.join(work, f"node-{tag}.json")
    srv = subprocess.Popen(
        [exe, *EAL, f"--file-prefix=fbs{os.getpid()}", "--lcores", FLOAT,
         f"--vdev={memif(work, 'h0', 'client', 0, zc=True)}", "--", "--port", "net_memif0",
         "--ip", "10.0.0.1", "--server"] + common,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    cli = subprocess.run(
        [exe, *EAL, f"--file-prefix=fbc{os.getpid()}", "--lcores", FLOAT,
         f"--vdev={memif(work, 'h1', 'client', 0, zc=True)}", "--", "--port", "net_memif0",
         "--ip", "10.0.0.2", "--client", "127.0.0.1", "--json", out] + common,
        capture_output=True, text=True, timeout=300)
    try:
        srv.wait(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
    if cli.returncode:
        raise RuntimeError(f"ethereal-node {tag}: {cli.stdout[-500:]} {cli.stderr[-500:]}")
    return json.load(open(out))


def fi_pair(bin_dir, build, work, test, args, ips=("10.0.0.1", "10.0.0.2"), envs=None):
    """A fabtests benchmark, server on ips[0] (slot 0) and client on ips[1]
    (slot 1; envs: the two processes' own environments); the client's
    last row (size, iterations, MB/s, usec/xfer)."""
    envs = envs or (provider_env(build, work),) * 2
    exe = os.path.join(bin_dir, test)
    srv = subprocess.Popen([exe, "-p", "ethereal", "-s", ips[0]] + args, env=envs[0],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    cli = subprocess.run([exe, "-p", "ethereal", "-s", ips[1]] + args + [ips[0]],
                         env=envs[1], capture_output=True, text=True, timeout=300)
    try:
        srv.wait(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
    rows = re.findall(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)s\s+(\S+)\s+(\S+)\s+(\S+)$", cli.stdout, re.M)
    if cli.returncode or not rows:
        raise RuntimeError(f"{test}: {cli.stdout[-500:]} {cli.stderr[-500:]}")
    r = rows[-1]
    return {"mb_per_s": float(r[4]), "usec_per_xfer": float(r[5])}


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def put_medians(out, got):
    """Each figure's median of its rounds, and every round's in *_all."""
    for k, v in got.items():
        out[k] = round(median(v), 3)
        out[k + "_all"] = [round(x, 3) for x in v]


def main():
    src, build = sys.argv[1], sys.argv[2]
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    bin_dir = os.path.join(build, "tests", "fabtests", "bin")
    have_fi = os.path.exists(os.path.join(bin_dir, "fi_rdm_tagged_bw"))
    out = {"iters": iters, "rounds": rounds}
    got = {}

    def put(k, v):
        got.setdefault(k, []).append(v)

    with tempfile.TemporaryDirectory() as work:
        sw = Switch(build, work, prefix="fbsw")
        try:
            # each reference next to what it is compared with, in rounds:
            # what the machine's other work takes weighs on both alike
            for _ in range(rounds):
                put("node_write_bw_1m_gbps", node_pair(
                    build, work, ["--mode", "write_bw", "--size", "1M", "--qps", "1",
                                  "--iters", str(iters)], "bw")["gbps"])
                for name, test, extra in (("tagged_bw", "fi_rdm_tagged_bw", []),
                                          ("rma_write_bw", "fi_rma_bw", ["-o", "write"]),
                                          ("rma_read_bw", "fi_rma_bw", ["-o", "read"])):
                    if have_fi:
                        r = fi_pair(bin_dir, build, work, test,
                                    extra + ["-S", "1048576", "-I", str(iters)])
                        put(f"fi_{name}_1m_gbps", r["mb_per_s"] * 8 / 1e3)  # MB/s: bytes/us
                for size in (8, 4096):
                    j = node_pair(build, work, ["--mode", "pingpong", "--size", str(size),
                                                "--iters", str(iters * 10)], f"pp{size}")
                    put(f"node_pingpong_{size}_rtt_us", j["seconds"] / j["messages"] * 1e6)
                    if have_fi:
                        r = fi_pair(bin_dir, build, work, "fi_rdm_tagged_pingpong",
                                    ["-S", str(size), "-I", str(iters * 10)])
                        put(f"fi_tagged_pingpong_{size}_rtt_us", 2 * r["usec_per_xfer"])
        finally:
            sw.stop()
    put_medians(out, got)
    if not have_fi:
        out["fabtests_skipped"] = f"no fabtests in {bin_dir} (meson test fabtests builds them)"
    else:
        for name in ("tagged_bw", "rma_write_bw", "rma_read_bw"):
            out[f"fi_{name}_1m_ratio"] = round(out[f"fi_{name}_1m_gbps"] /
                                               out["node_write_bw_1m_gbps"], 3)
        for size in (8, 4096):
            out[f"fi_tagged_pingpong_{size}_ratio"] = round(
                out[f"fi_tagged_pingpong_{size}_rtt_us"] / out[f"node_pingpong_{size}_rtt_us"], 3)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
