#!/usr/bin/env python3
"""Debian's perftest across scripts/testbed's 2x2x2 leaf-spine over our
libibverbs (scripts/testbed --verbs --pairs): two ib_write_bw pairs, each
server on leaf 0 and its client on leaf 1, so every frame crosses a
spine; with a FAILURE (LEAF.UPLINK@TIME, as scripts/testbed --fail) a ToR
uplink fails while they run, under Ethereal.  Both pairs must print
their figures, every rank's libibverbs must report, a QP that timed out
must have been rerouted, and the failure must have met frames (else the
row tested nothing).  Skipped (77) with one line without perftest or
OpenMPI's mpirun (the launcher).

  check_verbs_fail.py SRC_ROOT BUILD_ROOT WORK [FAILURE]
"""
import json
import os
import re
import shutil
import subprocess
import sys

SIZE = 1 << 20


def main():
    src_root, build_root, work = sys.argv[1:4]
    fail = sys.argv[4] if len(sys.argv) > 4 else ""
    missing = [p for p in ("ib_write_bw", "mpirun") if not shutil.which(p)]
    if missing:
        print(f"skip: no {', '.join(missing)} (Debian: perftest, openmpi-bin)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out_json = os.path.join(work, "pairs.json")
    prog = f"ib_write_bw -d ethereal0 -x 1 -s {SIZE} -n 1000 -q 2 --report_gbits"
    cmd = [os.path.join(src_root, "scripts", "testbed"), "--build", build_root, "--lb", "ethereal",
           "--json", out_json, "--verbs", "--pairs", "--mpi", prog, "--mpi-timeout", "600"]
    if fail:
        cmd += ["--fail", fail]
    r = subprocess.run(cmd, cwd=src_root, capture_output=True, text=True, timeout=900)
    print(r.stdout[-6000:], r.stderr[-2000:])
    bad = []
    if r.returncode:
        bad.append(f"scripts/testbed exited {r.returncode}")
    # #bytes #iterations BW peak BW average MsgRate: a row from each end
    # of each pair (every program exited 0: mpirun ended well); a row may
    # begin inside another rank's line, and rarely one is cut by another's
    rows = re.findall(rf"(?:^|\s){SIZE}\s+\d+\s+[\d.]+\s+([\d.]+)\s", r.stdout, re.M)
    if len(rows) < 2:
        bad.append(f"{len(rows)} rows of figures, not 4 (two pairs, both ends)")
    try:
        j = json.load(open(out_json))
        if len(j["per_rank"]) != 4 or not j["ok"]:
            bad.append(f"the ranks' report: {j}")
        if j["timeouts"] and not j["rerouted"]:
            bad.append(f"{j['timeouts']} timeouts, nothing rerouted")
        if fail and j["timeouts"] + j["retransmits"] == 0:
            bad.append("the failure met no frame: nothing was tested")
    except (OSError, ValueError, KeyError) as e:
        bad.append(f"no JSON: {e}")
    for b in bad:
        print("FAIL:", b)
    print("verbs-fail:", "ok" if not bad else f"{len(bad)} failures",
          f"(Gbit/s, each end of each pair: {' '.join(rows)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
