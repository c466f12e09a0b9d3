#!/usr/bin/python3
"""The testbed's speed against what a user would run instead, in the same
run (issue 48): every switch of a leaf-spine in one ethereal-switch
process (scripts/testbed's default) and each in its own
(--switch-processes, the layout before), beside the reference.

  fi_rdm_tagged_bw 1 MB, slot 0 to slot 2 across a 2 x 2 x 2 leaf-spine
      vs the same pair on one direct memif link (no switch)
  NetPIPE (Debian's netpipe-openmpi, NPopenmpi) 8 B and 1 MB, two ranks
      on two leaves (--leaves 2 --spines 1 --hosts-per-leaf 1), over the
      provider  vs  OpenMPI's ob1/tcp on the loopback
  IMB-MPI1 Alltoallv 4 MB on 2 x 2 x 2 over the provider  vs  ob1/tcp

Figures are medians of ROUNDS rounds, each round running every variant
one after the other, so that the machine's other work weighs on all
alike; every round's figures are in *_all.  A part whose program is
missing (fabtests: meson test fabtests builds them; NPopenmpi; IMB:
meson test imb builds it) is skipped, saying so.  One JSON object.

  testbed_bench.py SRC_ROOT BUILD_ROOT [ROUNDS]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from fi_bench import fi_pair, median, put_medians  # noqa: E402
from fi_switch import Switch, memif, provider_env  # noqa: E402

ROOT = ["--allow-run-as-root"] if os.getuid() == 0 else []
OB1 = ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self"]
LAYOUTS = (("one", []), ("processes", ["--switch-processes"]))


def testbed(src, build, shape, program, extra):
    """scripts/testbed --mpi PROGRAM; its output."""
    r = subprocess.run([os.path.join(src, "scripts", "testbed"), "--build", build, *shape,
                        "--mpi", program, *extra], capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(f"testbed --mpi {program}: {r.stdout[-1500:]} {r.stderr[-500:]}")
    return r.stdout


def ob1(ranks, program):
    r = subprocess.run(["mpirun", *ROOT, "--oversubscribe", "--bind-to", "none", "-np",
                        str(ranks), *OB1, *program.split()], capture_output=True, text=True,
                       timeout=900)
    if r.returncode:
        raise RuntimeError(f"mpirun ob1 {program}: {r.stdout[-1500:]} {r.stderr[-500:]}")
    return r.stdout


def netpipe(run, work, size):
    """NetPIPE's one size: (Mbit/s, one-way microseconds)."""
    out = os.path.join(work, f"np{size}.out")
    # repeats enough for a second or so: NetPIPE's own few vary 4x here
    run(f"NPopenmpi -l {size} -u {size} -p 0 -n {20000 if size < 65536 else 1000} -o {out}")
    _, mbps, secs = open(out).read().split()[:3]
    return float(mbps), float(secs) * 1e6


def alltoallv(text):
    """IMB's t_avg[usec] of its one size."""
    rows = re.findall(r"^\s*4194304\s+\d+\s+\S+\s+\S+\s+(\S+)", text, re.M)
    if not rows:
        raise RuntimeError("IMB Alltoallv: no 4 MB row in:\n" + text[-1500:])
    return float(rows[-1])


def fi_fabric(bin_dir, build, processes):
    """fi_rdm_tagged_bw 1 MB from slot 2 (leaf 1) to slot 0 (leaf 0)."""
    with tempfile.TemporaryDirectory() as work:
        sw = Switch(build, work, hosts=4, leaves=2, spines=2, processes=processes,
                    prefix="tbbsw")
        try:
            envs = [provider_env(build, work, {"FI_ETHEREAL_DEV": memif(work, h, "client", 0,
                                                                         zc=True)})
                    for h in ("h0", "h2")]
            return fi_pair(bin_dir, build, work, "fi_rdm_tagged_bw",
                           ["-S", "1048576", "-I", "1000"], ips=("10.0.0.1", "10.0.1.1"),
                           envs=envs)["mb_per_s"]
        finally:
            sw.stop()


def fi_direct(bin_dir, build):
    """The same pair on one memif link, no switch (slot 0 serves the link)."""
    with tempfile.TemporaryDirectory() as work:
        envs = [provider_env(build, work, {"FI_ETHEREAL_DEV": memif(work, "d", role, 0,
                                                                     zc=role == "client")})
                for role in ("server", "client")]
        return fi_pair(bin_dir, build, work, "fi_rdm_tagged_bw",
                       ["-S", "1048576", "-I", "1000"], envs=envs)["mb_per_s"]


def main():
    src, build = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    bin_dir = os.path.join(build, "tests", "fabtests", "bin")
    imb = os.path.join(build, "tests", "imb", "IMB-MPI1")
    have = {"fabtests": os.path.exists(os.path.join(bin_dir, "fi_rdm_tagged_bw")),
            "netpipe": shutil.which("NPopenmpi") is not None and shutil.which("mpirun") is not None,
            "imb": os.path.exists(imb) and shutil.which("mpirun") is not None}
    out = {"rounds": rounds, "skipped": [k for k, v in have.items() if not v]}
    got = {}

    def put(k, v):
        got.setdefault(k, []).append(v)

    pair = ["--leaves", "2", "--spines", "1", "--hosts-per-leaf", "1"]
    with tempfile.TemporaryDirectory() as work:
        for _ in range(rounds):
            if have["fabtests"]:
                put("fi_tagged_bw_1m_direct_mb_s", fi_direct(bin_dir, build))
                for name, _ in LAYOUTS:
                    put(f"fi_tagged_bw_1m_{name}_mb_s", fi_fabric(bin_dir, build, name != "one"))
            if have["netpipe"]:
                for size in (8, 1048576):
                    runs = [("ob1", lambda p: ob1(2, p))] + \
                        [(name, lambda p, a=a: testbed(src, build, pair + a, p, []))
                         for name, a in LAYOUTS]
                    for name, run in runs:
                        mbps, us = netpipe(run, work, size)
                        if size == 8:
                            put(f"netpipe_8_{name}_us", us)
                        else:
                            put(f"netpipe_1m_{name}_gbps", mbps / 1e3)
            if have["imb"]:
                prog = f"{imb} Alltoallv -msglog 22:22 -iter 20 -npmin 4"
                put("imb_alltoallv_4m_ob1_us", alltoallv(ob1(4, prog)))
                for name, a in LAYOUTS:
                    put(f"imb_alltoallv_4m_{name}_us", alltoallv(testbed(src, build, a, prog, [])))
    put_medians(out, got)
    # the goals, as ratios of the medians
    for name, _ in LAYOUTS:
        if have["fabtests"]:
            out[f"fi_tagged_bw_1m_{name}_vs_direct"] = round(
                out[f"fi_tagged_bw_1m_{name}_mb_s"] / out["fi_tagged_bw_1m_direct_mb_s"], 3)
        if have["netpipe"]:
            out[f"netpipe_1m_{name}_vs_ob1"] = round(
                out[f"netpipe_1m_{name}_gbps"] / out["netpipe_1m_ob1_gbps"], 3)
            out[f"netpipe_8_{name}_vs_ob1"] = round(
                out[f"netpipe_8_{name}_us"] / out["netpipe_8_ob1_us"], 3)
        if have["imb"]:
            out[f"imb_alltoallv_4m_{name}_vs_ob1"] = round(
                out[f"imb_alltoallv_4m_{name}_us"] / out["imb_alltoallv_4m_ob1_us"], 3)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
