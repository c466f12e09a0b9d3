#!/usr/bin/python3
"""The libfabric provider against the endpoint it runs on, on the same
memif link in the same run: two processes joined through one
ethereal-switch (slots 0 and 1), every process yielding when idle (the
switch shares this machine's cores):

  fi_rdm_tagged_bw, fi_rma_bw -o write and -o read at 1 MB  vs  ethereal-node write_bw 1 MB
  fi_rdm_tagged_pingpong at 8 B and 4 KB                     vs  ethereal-node pingpong

Each figure is a ratio to the reference measured just before it (goals:
bandwidth >= 0.9x, latency <= 1.2x); latencies are mean round trips (the
fabtests' usec/xfer is half of one).  One JSON object.  fabtests come from
the build (tests/check_fabtests.py builds them); without them, the provider
side is skipped, saying so.

  fi_bench.py SRC_ROOT BUILD_ROOT [ITERS]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from fi_switch import EAL, Switch, memif, provider_env  # noqa: E402


def node_pair(build, work, args, tag):
    """ethereal-node server (10.0.0.1, slot 0's port) and client (10.0.0.2);
    the client's JSON."""
    exe = os.path.join(build, "app", "ethereal-node")
    port = str(20000 + (os.getpid() + hash(tag)) % 20000)
    common = args + ["--oob-port", port, "--yield"]
    out = os.path.join(work, f"node-{tag}.json")
    srv = subprocess.Popen(
        [exe, *EAL, f"--file-prefix=fbs{os.getpid()}", "-l", "1",
         f"--vdev={memif(work, 'h0', 'client', 0)}", "--", "--port", "net_memif0",
         "--ip", "10.0.0.1", "--server"] + common,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    cli = subprocess.run(
        [exe, *EAL, f"--file-prefix=fbc{os.getpid()}", "-l", "0",
         f"--vdev={memif(work, 'h1', 'client', 0)}", "--", "--port", "net_memif0",
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


def fi_pair(bin_dir, build, work, test, args):
    """A fabtests benchmark, server on slot 0 and client on slot 1; the
    client's last row (size, iterations, MB/s, usec/xfer)."""
    env = provider_env(build, work)
    exe = os.path.join(bin_dir, test)
    srv = subprocess.Popen([exe, "-p", "ethereal", "-s", "10.0.0.1"] + args, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    cli = subprocess.run([exe, "-p", "ethereal", "-s", "10.0.0.2"] + args + ["10.0.0.1"],
                         env=env, capture_output=True, text=True, timeout=300)
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


def main():
    src, build = sys.argv[1], sys.argv[2]
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    bin_dir = os.path.join(build, "tests", "fabtests", "bin")
    out = {"iters": iters}
    with tempfile.TemporaryDirectory() as work:
        sw = Switch(build, work, prefix="fbsw")
        try:
            node_bw = node_pair(build, work, ["--mode", "write_bw", "--size", "1M", "--qps", "1",
                                              "--iters", str(iters)], "bw")
            out["node_write_bw_1m_gbps"] = node_bw["gbps"]
            ref = {}
            for size in (8, 4096):
                j = node_pair(build, work, ["--mode", "pingpong", "--size", str(size),
                                            "--iters", str(iters * 10)], f"pp{size}")
                ref[size] = j["seconds"] / j["messages"] * 1e6  # mean round trip, us
                out[f"node_pingpong_{size}_rtt_us"] = round(ref[size], 2)
            if not os.path.exists(os.path.join(bin_dir, "fi_rdm_tagged_bw")):
                out["fabtests_skipped"] = f"no fabtests in {bin_dir} (meson test fabtests builds them)"
            else:
                for name, test, extra in (("tagged_bw", "fi_rdm_tagged_bw", []),
                                          ("rma_write_bw", "fi_rma_bw", ["-o", "write"]),
                                          ("rma_read_bw", "fi_rma_bw", ["-o", "read"])):
                    r = fi_pair(bin_dir, build, work, test,
                                extra + ["-S", "1048576", "-I", str(iters)])
                    gbps = r["mb_per_s"] * 8 / 1e3  # fabtests' MB/sec: bytes per us
                    out[f"fi_{name}_1m_gbps"] = round(gbps, 3)
                    out[f"fi_{name}_1m_ratio"] = round(gbps / node_bw["gbps"], 3)
                for size in (8, 4096):
                    r = fi_pair(bin_dir, build, work, "fi_rdm_tagged_pingpong",
                                ["-S", str(size), "-I", str(iters * 10)])
                    rtt = 2 * r["usec_per_xfer"]
                    out[f"fi_tagged_pingpong_{size}_rtt_us"] = round(rtt, 2)
                    out[f"fi_tagged_pingpong_{size}_ratio"] = round(rtt / ref[size], 3)
        finally:
            sw.stop()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
