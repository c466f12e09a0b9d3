#!/usr/bin/env python3
"""MPI over the provider on a testbed: Intel MPI Benchmarks' IMB-MPI1
(../shared/third-party/imb-2021.9, not ours; built once into the build
folder) under OpenMPI's mpirun with the ofi MTL and the provider
"ethereal", on scripts/testbed's 2x2x2 leaf-spine (four ranks, one per
host), short: PingPong (two of the ranks), Sendrecv, Allreduce, Alltoall,
Allgather, Bcast and Barrier up to 64 KB.  Every benchmark must print its table, mpirun
must end well, every rank's provider must report.  Skipped (77) with one
line where the suite or OpenMPI's compiler is absent.

With a FAILURE (fail:LEAF.UPLINK@TIME, a ToR uplink failed; kill:S@TIME,
spine S's process killed) the QPs give up at their first timeout
(--retry-cnt 0), so every packet the failure loses breaks its QP: the
ranks' connections must resume on new QPs (reconnects > 0), none may
give its peer up, and MPI must not notice.

With --verbs the ranks run over our libibverbs instead (scripts/testbed
--verbs: OpenMPI's pml ucx, UCX's rc_verbs on ethereal0), the QPs with
their usual retries: a failure's lost frames must be routed around
(rerouted > 0 wherever a QP timed out), and MPI must not notice.

  check_imb.py SRC_ROOT BUILD_ROOT WORK [LB] [FAILURE] [--verbs]
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from third_party import build_imb, suite_or_skip  # noqa: E402

SUITE = "imb-2021.9"
BENCHMARKS = ["PingPong", "Sendrecv", "Allreduce", "Alltoall", "Allgather", "Bcast", "Barrier"]


def main():
    verbs = "--verbs" in sys.argv
    args = [a for a in sys.argv if a != "--verbs"]
    src_root, build_root, work = args[1:4]
    lb = args[4] if len(args) > 4 else "ethereal"
    fail = args[5] if len(args) > 5 else ""
    suite = suite_or_skip(src_root, SUITE, ["mpicc", "mpirun"],
                          "no mpicc or mpirun (Debian: libopenmpi-dev, openmpi-bin)")
    if suite is None:
        return 77
    exe = build_imb(suite, build_root)
    if exe is None:
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out_json = os.path.join(work, "imb.json")
    cmd = [os.path.join(src_root, "scripts", "testbed"), "--build", build_root, "--lb", lb,
           "--json", out_json] + (["--verbs"] if verbs else []) + ["--mpi",
           f"{exe} {' '.join(BENCHMARKS)} -npmin 4 -msglog 0:16 -iter 20 -time 10"]
    if fail:
        kind, _, spec = fail.rpartition(":")
        # timed from Sendrecv's start: PingPong's two ranks share a leaf, so
        # a failure timed from it could be routed around before any frame
        # crossed the spines (none lost: nothing to resume, the check fails)
        cmd += ["--kill-spine" if kind == "kill" else "--fail", spec,
                "--mpi-mark", "^# Benchmarking Sendrecv"]
        if not verbs:
            cmd += ["--retry-cnt", "0"]
    r = subprocess.run(cmd, cwd=src_root, capture_output=True, text=True, timeout=1200)
    print(r.stdout[-6000:], r.stderr[-2000:])
    bad = []
    if r.returncode:
        bad.append(f"scripts/testbed exited {r.returncode}")
    for b in BENCHMARKS:
        # PingPong is two ranks' (the others wait); the rest run on all four
        n = 2 if b == "PingPong" else 4
        if not re.search(rf"^# Benchmarking {b} *\n# #processes = {n}\b(?:.*\n)*?\s+(#bytes|#repetitions)",
                         r.stdout, re.M):
            bad.append(f"no table for {b} on {n} processes")
    try:
        j = json.load(open(out_json))
        if len(j["per_rank"]) != 4 or not j["ok"]:
            bad.append(f"the ranks' report: {j}")
        # the policy the testbed's conf names is the one the ranks ran
        if any(r["policy"] != lb for r in j["per_rank"].values()):
            bad.append(f"a rank ran another policy than {lb}: {j['per_rank']}")
        # what the failure broke resumed, no peer given up; a failure that
        # no frame met loses nothing (no timeout, no retransmit): nothing to
        # resume (imb-testbed-fail, 1 fresh-clone run of 4: 0 timeouts,
        # 0 retransmits, 0 resumed; the testbed checks the failure was made)
        lost = j["timeouts"] + j["retransmits"]
        if verbs and fail and j["timeouts"] and not j["rerouted"]:
            bad.append(f"{j['timeouts']} timeouts, nothing rerouted")
        elif not verbs and fail and ((lost and j["reconnects"] == 0) or j["lost_peers"]):
            bad.append(f"the failure's connections: {j['reconnects']} resumed after {lost} "
                       f"timeouts and retransmits, {j['lost_peers']} peers given up")
    except (OSError, ValueError, KeyError) as e:
        bad.append(f"no JSON: {e}")
    for b in bad:
        print("FAIL:", b)
    print("imb:", "ok" if not bad else f"{len(bad)} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
