#!/usr/bin/python3
"""Golden runs: seeded virtual-time fabrics whose JSON must not change.

Every policy, every algorithm, a failed link in each topology, link faults
a workload and a trace; the JSON of each run (less wall_s and speed, the
wall-clock figures) is compared key by key with tests/golden/NAME.json.  A change that
moves code without meaning to change behaviour must leave them all equal;
one that means to change behaviour records them again (--record) and says
why in its commit.

check_golden.py ETHEREAL_FABRIC CONF_DIR GOLDEN_DIR WORKDIR [--record] [--lcores LIST]

--lcores runs the fabric on those EAL lcores (one lane each, sim/et_lanes.c):
the JSON must not change with their number.
"""
import json
import os
import subprocess
import sys

EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "1024", "-l", "0", "--no-telemetry",
       "--log-level=error", "--"]
FAULTS = ("loss-ppm=1000,ge-enter-ppm=200,ge-exit-ppm=100000,ge-loss-ppm=300000,"
          "corrupt-ppm=500,dup-ppm=500,jitter-ns=300,flap-period-us=2000,flap-down-us=20")
FAT_TREE = "fat-tree-k4.ini"

# name: (conf, arguments)
RUNS = {
    "ethereal-a2a": ("leaf-spine-16.ini", ["--lb", "ethereal", "--size", "1M", "--verify"]),
    "ecmp-a2a": ("leaf-spine-16.ini", ["--lb", "ecmp", "--size", "1M", "--verify"]),
    "mprdma-a2a": ("leaf-spine-16.ini", ["--lb", "mprdma:4", "--size", "1M", "--verify"]),
    "spray-a2a": ("leaf-spine-16.ini", ["--lb", "spray", "--size", "1M", "--verify"]),
    "reps-a2a": ("leaf-spine-16.ini", ["--lb", "reps", "--size", "1M", "--verify"]),
    "ethereal-rd-light": ("leaf-spine-16.ini", ["--algo", "rd", "--size", "2M"]),
    "ethereal-ring": ("leaf-spine-16.ini", ["--algo", "ring", "--size", "256K", "--verify"]),
    "ecmp-dbt": ("leaf-spine-16.ini", ["--lb", "ecmp", "--algo", "dbt", "--size", "512K",
                                       "--verify"]),
    "ethereal-allgather": ("smoke.ini", ["--collective", "allgather", "--verify"]),
    "spray-alltoall": ("smoke.ini", ["--lb", "spray", "--collective", "alltoall", "--verify"]),
    "reps-reducescatter": ("smoke.ini", ["--lb", "reps", "--collective", "reducescatter",
                                         "--algo", "ring", "--verify"]),
    "ethereal-fail": ("leaf-spine-16.ini", ["--size", "1M", "--fail", "0.1@0", "--verify"]),
    "ecmp-fail": ("smoke.ini", ["--lb", "ecmp", "--fail", "1.0@2us", "--verify"]),
    "reps-fail": ("smoke.ini", ["--lb", "reps", "--fail", "0.0@0", "--verify"]),
    "ethereal-fat-tree-fail": (FAT_TREE, ["--fail", "agg:0.1@0", "--size", "256K", "--verify"]),
    "mprdma-fat-tree": (FAT_TREE, ["--lb", "mprdma:8", "--size", "256K", "--verify"]),
    "ethereal-faults": ("smoke.ini", ["--fault", FAULTS, "--verify"]),
    "spray-faults": ("smoke.ini", ["--lb", "spray", "--fault", FAULTS, "--verify"]),
    "ecmp-faults-ring": ("smoke.ini", ["--lb", "ecmp", "--algo", "ring", "--fault", FAULTS,
                                       "--verify"]),
    "workload": ("smoke.ini", ["--workload", "WORKLOAD", "--verify"]),
    "trace": ("smoke.ini", ["--trace", "TRACE", "--fail", "0.0@30us"]),
}

FAT_TREE_CONF = """; k = 4 fat-tree for the golden runs
[topology]
kind = fat-tree
pods = 2
tors-per-pod = 2
aggs-per-pod = 2
cores-per-agg = 2
hosts-per-tor = 2
"""

WORKLOAD = """allgather 64K
reducescatter 128K
allreduce 256K
"""

# model- and data-parallel groups on the 4 hosts, overlapping, a link
# failing in the middle: the DAG's order and the path state it carries
TRACE = """ranks 4
group mp 2 1
group dp 2 2
compute f 5us
comm ag allgather 128K mp after f
compute b 10us after ag
comm rs reducescatter 128K mp after b
comm ar allreduce 256K dp after b
compute b2 10us after rs
comm ar2 allreduce 64K dp after b2
compute opt 2us after ar,ar2
"""


def main():
    exe, conf_dir, golden, work = sys.argv[1:5]
    record = "--record" in sys.argv
    if "--lcores" in sys.argv:
        at = EAL.index("-l")
        EAL[at:at + 2] = ["--lcores", sys.argv[sys.argv.index("--lcores") + 1]]
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, FAT_TREE), "w") as f:
        f.write(FAT_TREE_CONF)
    wl = os.path.join(work, "golden.workload")
    with open(wl, "w") as f:
        f.write(WORKLOAD)
    tr = os.path.join(work, "golden.trace")
    with open(tr, "w") as f:
        f.write(TRACE)
    passed = failed = 0
    for name, (conf, args) in RUNS.items():
        conf = os.path.join(work if conf == FAT_TREE else conf_dir, conf)
        js = os.path.join(work, name + ".json")
        args = [wl if a == "WORKLOAD" else tr if a == "TRACE" else a for a in args]
        cmd = [exe] + EAL + ["--config", conf, "--quiet", "--json", js, "--seed", "7"] + args
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        try:
            got = json.load(open(js))
        except (OSError, ValueError) as e:
            got = {"no json": str(e)}
        got.pop("wall_s", None)
        got.pop("speed", None)  # wall-clock figures too
        got["workload"] = os.path.basename(got.get("workload", ""))
        if "trace" in got:
            got["trace"] = os.path.basename(got["trace"])
        got["exit"] = r.returncode
        path = os.path.join(golden, name + ".json")
        if record:
            with open(path, "w") as f:
                json.dump(got, f, indent=1, sort_keys=True)
                f.write("\n")
            print(f"recorded {name}: exit {r.returncode}, cct {got.get('cct_ns')} ns")
            continue
        want = json.load(open(path))
        diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        if diff:
            failed += 1
            print(f"FAIL {name}: " + ", ".join(
                f"{k} {want.get(k)!r} -> {got.get(k)!r}" for k in diff))
            print(r.stderr)
        else:
            passed += 1
            print(f"ok   {name}: cct {got.get('cct_ns')} ns, retx {got.get('retransmits')}")
    if not record:
        print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
