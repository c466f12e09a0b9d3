#!/usr/bin/env python3
"""Debian's MPICH (built on UCX only) over our libibverbs: IMB-MPI1
(../shared/third-party, not ours; built with mpicc.mpich into the build
folder once) PingPong and Allreduce on two ranks, mpirun.mpich's, each
under scripts/ethereal-run (slot: MPICH's MPI_LOCALRANKID), UCX on
rc_verbs (ud_verbs beside it) on device ethereal0, through one
ethereal-switch over memif.  Both tables printed, both ranks ended well,
and each rank's line (ETHEREAL_STATS) says its QPs carried it.  Skipped
(77) with one line where IMB or MPICH is absent.

  check_mpich.py SRC_ROOT BUILD_ROOT WORK
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fi_switch import Switch, memif  # noqa: E402
from third_party import build_imb, suite_or_skip  # noqa: E402

BENCHMARKS = ["PingPong", "Allreduce"]


def main():
    src_root, build_root, work = sys.argv[1:4]
    suite = suite_or_skip(src_root, "imb-2021.9", ["mpicc.mpich", "mpirun.mpich"],
                          "no mpicc.mpich or mpirun.mpich (Debian: libmpich-dev, mpich)")
    if suite is None:
        return 77
    exe = build_imb(suite, build_root, "mpich")
    if exe is None:
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run = [os.path.join(src_root, "scripts", "ethereal-run"), "--build", build_root,
           "--dev", memif(work, "h%d", "client", 0), "--rundir", work, "--yield"]
    env = dict(os.environ, UCX_TLS="rc_verbs,ud_verbs", UCX_NET_DEVICES="ethereal0:1",
               UCX_WARN_UNUSED_ENV_VARS="n", ETHEREAL_STATS="1")
    sw = Switch(build_root, work, prefix="mpichsw")
    try:
        r = subprocess.run(["mpirun.mpich", "-np", "2"] + run + ["--", exe] + BENCHMARKS +
                           ["-msglog", "0:20", "-iter", "50"],
                           capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(e.cmd, -1, e.stdout or "", "timed out")
    finally:
        log = sw.stop()
    out = r.stdout if isinstance(r.stdout, str) else r.stdout.decode()
    print(out[-5000:], r.stderr[-3000:] if isinstance(r.stderr, str) else "")
    bad = []
    if r.returncode:
        bad.append(f"mpirun.mpich exited {r.returncode}")
    for b in BENCHMARKS:
        if not re.search(rf"^# Benchmarking {b} *\n# #processes = 2\b(?:.*\n)*?\s+1048576\s+\d",
                         out, re.M):
            bad.append(f"no table for {b} up to 1 MB")
    ranks = re.findall(r"ethereal-verbs: slot (\d) \S+ \S+: qps (\d+), tx_pkts (\d+)",
                       r.stderr if isinstance(r.stderr, str) else "")
    if sorted(s for s, _, _ in ranks) != ["0", "1"] or any(int(t) == 0 for _, _, t in ranks):
        bad.append(f"the ranks' lines: {ranks}")
    if bad:
        print(log[-2000:])
    for b in bad:
        print("FAIL:", b)
    print("mpich:", "ok" if not bad else f"{len(bad)} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
