#!/usr/bin/python3
"""ethereal-fabric end to end: every collective algorithm x every policy
completes with its data verified on the smoke fabric (healthy and with a
failed ToR-spine link), on the 16-host fabric at a small size and on a
k = 4 fat-tree (healthy, with a failed aggregation-core link and with a
failed ToR-aggregation link; with two lanes per switch pair); two
virtual-clock runs with one seed give the same JSON; one flow on an idle
fabric comes within a few percent of the lower bound; a real-clock run
completes and verifies.  Bad confs and arguments: check_errors.py.

check_fabric.py ETHEREAL_FABRIC CONF_DIR WORKDIR [--quick]
"""
import json
import os
import re
import subprocess
import sys

EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "1024", "-l", "0", "--no-telemetry",
       "--log-level=error", "--"]
POLICIES = ["ethereal", "ecmp", "mprdma:4", "spray", "reps"]
FAULTS = ("loss-ppm=1000,ge-enter-ppm=200,ge-exit-ppm=100000,ge-loss-ppm=300000,"
          "corrupt-ppm=500,dup-ppm=500,jitter-ns=300,flap-period-us=2000,flap-down-us=20")
ALGOS = [("allreduce", "a2a"), ("allreduce", "rd"), ("allreduce", "ring"), ("allreduce", "dbt"),
         ("allgather", "a2a"), ("reducescatter", "ring"), ("alltoall", "a2a")]


class Runner:
    def __init__(self, exe, conf, work):
        self.exe, self.conf, self.work = exe, conf, work
        self.fails = self.total = 0
        self.n = 0

    def run(self, conf, args, want_rc=0, eal=None):
        self.n += 1
        js = os.path.join(self.work, f"run{self.n}.json")
        cmd = [self.exe] + (eal or EAL) + ["--config", conf if os.path.isabs(conf) else
                                  os.path.join(self.conf, conf), "--json", js,
                                  "--quiet"] + args
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                           env=os.environ)
        res = json.load(open(js)) if os.path.exists(js) and r.returncode == 0 else {}
        return r, res

    def check(self, ok, what, detail=""):
        self.total += 1
        self.fails += not ok
        print(("ok   " if ok else "FAIL ") + what + ("" if ok else "\n" + detail), flush=True)
        return ok

    def verified(self, conf, args, what):
        r, res = self.run(conf, args + ["--verify"])
        return self.check(r.returncode == 0 and res.get("verified") is True,
                          f"{what}: cct {res.get('cct_ns')} ns, retx {res.get('retransmits')}, "
                          f"maxqp {res.get('max_qps_per_host')}",
                          f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")


def fat_tree_8(work, lanes):
    """A k = 4 fat-tree of 8 hosts with lanes links between every two
    switches, written to work; its path."""
    path = os.path.join(work, f"fat-tree-8-{lanes}-lanes.ini")
    with open(path, "w") as f:
        f.write("[topology]\nkind = fat-tree\npods = 2\ntors-per-pod = 2\naggs-per-pod = 2\n"
                f"cores-per-agg = 2\nhosts-per-tor = 2\nlinks-per-pair = {lanes}\n")
    return path


def by_read(conf_dir, name, work):
    """conf name with [transport] data = read (issue 38: each subflow's
    receiver READs it), written to work; its path."""
    text = open(os.path.join(conf_dir, name)).read()
    if "\n[transport]" in "\n" + text:
        text = text.replace("[transport]\n", "[transport]\ndata = read\n", 1)
    else:
        text += "\n[transport]\ndata = read\n"
    path = os.path.join(work, name.replace(".ini", "-read.ini"))
    with open(path, "w") as f:
        f.write(text)
    return path


def timeless(res):
    """What a run says less its wall-clock figures (wall_s, speed)."""
    res.pop("wall_s", None)
    res.pop("speed", None)
    return res


def main():
    exe, conf, work = sys.argv[1:4]
    quick = "--quick" in sys.argv
    os.makedirs(work, exist_ok=True)
    t = Runner(exe, conf, work)

    for lb in POLICIES:
        for kind, algo in ALGOS:
            t.verified("smoke.ini", ["--lb", lb, "--collective", kind, "--algo", algo,
                                     "--size", "64K"], f"smoke {lb} {kind}/{algo}")
        # a ToR-spine link dead from the start: detected after 100 ms by
        # the switches; the transport must get the data through anyway
        t.verified("smoke.ini", ["--lb", lb, "--algo", "a2a", "--size", "256K",
                                 "--fail", "0.1@0"], f"smoke {lb} a2a, ToR 0 uplink 1 failed")
        if not quick:
            for algo in ("a2a", "rd"):
                t.verified("leaf-spine-16.ini", ["--lb", lb, "--algo", algo, "--size", "256K"],
                           f"16 hosts {lb} allreduce/{algo}")
            t.verified("leaf-spine-16.ini", ["--lb", lb, "--algo", "a2a", "--size", "256K",
                                             "--fail", "1.2@0"],
                       f"16 hosts {lb} a2a, ToR 1 uplink 2 failed")

    # the data by RDMA READ (issue 38): every policy, every algorithm, the
    # receivers read; a failed uplink is routed around by the READs' own
    # timeouts; one lane and two give the same run
    smoke_rd, ls16_rd = by_read(conf, "smoke.ini", work), by_read(conf, "leaf-spine-16.ini", work)
    for lb in POLICIES:
        for kind, algo in ALGOS:
            t.verified(smoke_rd, ["--lb", lb, "--collective", kind, "--algo", algo,
                                  "--size", "64K"], f"smoke by READ {lb} {kind}/{algo}")
        r, res = t.run(smoke_rd, ["--lb", lb, "--algo", "a2a", "--size", "256K", "--fail", "0.1@0",
                                  "--verify"])
        t.check(r.returncode == 0 and res.get("verified") is True and res.get("timeouts", 0) > 0,
                f"smoke by READ {lb} a2a, ToR 0 uplink 1 failed: cct {res.get('cct_ns')} ns, "
                f"timeouts {res.get('timeouts')}, rerouted {res.get('rerouted')}",
                f"exit {r.returncode}\n{r.stderr}")
        if not quick:
            t.verified(ls16_rd, ["--lb", lb, "--algo", "rd", "--size", "256K"],
                       f"16 hosts by READ {lb} allreduce/rd")
    outs = []
    for lcores in ("0", "0-1"):
        eal = [("-l" if x == "-l" else lcores if prev == "-l" else x) for prev, x in
               zip([None] + EAL[:-1], EAL)]
        r, res = t.run(ls16_rd, ["--lb", "ethereal", "--size", "1M", "--verify"], eal=eal)
        timeless(res)
        res.pop("lanes", None)
        outs.append(res)
    t.check(outs[0] and outs[0] == outs[1] and outs[0].get("verified") is True,
            "by READ: one lane and two give the same JSON", f"{outs[0]}\n{outs[1]}")

    # a k = 4 fat-tree (8 hosts): Ethereal groups by pod, an aggregation-core
    # link fails and the other pods' aggregation switches must converge
    ft = fat_tree_8(work, 1)
    for lb in POLICIES:
        t.verified(ft, ["--lb", lb, "--size", "256K"], f"fat-tree {lb} allreduce/a2a")
        t.verified(ft, ["--lb", lb, "--algo", "rd", "--size", "256K", "--fail", "agg:0.1@0"],
                   f"fat-tree {lb} allreduce/rd, aggregation 0 uplink 1 failed")
        # a ToR-aggregation link: the ToRs of the other pod must stop using
        # their uplink 1 for ToR 3 too, or ECMP and MP-RDMA never finish
        t.verified(ft, ["--lb", lb, "--size", "256K", "--fail", "3.1@0"],
                   f"fat-tree {lb} allreduce/a2a, ToR 3 uplink 1 failed")

    # the same fat-tree with two lanes between every two switches (the
    # paper's has four): healthy, and one lane of a pair failed
    ft2 = fat_tree_8(work, 2)
    for lb in POLICIES:
        t.verified(ft2, ["--lb", lb, "--size", "256K"], f"fat-tree with lanes {lb} allreduce/a2a")
        t.verified(ft2, ["--lb", lb, "--size", "256K", "--fail", "3.2@0"],
                   f"fat-tree with lanes {lb} allreduce/a2a, ToR 3 uplink 2 (lane 0) failed")

    # every fault of the link model at once, on every link: every byte still
    # arrives exactly once and the corrupted frames are caught and counted
    for lb in POLICIES:
        for algo in ("a2a", "rd", "dbt"):
            r, res = t.run("leaf-spine-16.ini", ["--lb", lb, "--algo", algo, "--size", "256K",
                                                 "--verify", "--fault", FAULTS])
            t.check(r.returncode == 0 and res.get("verified") is True and
                    res.get("corrupted", 0) > 0 and res.get("duplicated", 0) > 0 and
                    res.get("rx_bad", 0) > 0,
                    f"16 hosts {lb} allreduce/{algo} under every fault: cct {res.get('cct_ns')} ns, "
                    f"retx {res.get('retransmits')}, corrupted {res.get('corrupted')}, "
                    f"rx_bad {res.get('rx_bad')}", f"exit {r.returncode}\n{r.stderr}")
    outs = []
    for _ in range(2):
        r, res = t.run("leaf-spine-16.ini", ["--lb", "spray", "--size", "256K", "--fault", FAULTS])
        timeless(res)
        outs.append(res)
    t.check(outs[0] and outs[0] == outs[1], "faults replay exactly with the same seed")

    # determinism: the same seed, the same JSON but for the wall time
    outs = []
    for _ in range(2):
        r, res = t.run("leaf-spine-16.ini", ["--lb", "ethereal", "--size", "1M", "--seed", "7"])
        timeless(res)
        outs.append(res)
    t.check(outs[0] and outs[0] == outs[1], "two virtual runs with seed 7 give identical JSON",
            f"{outs[0]}\n{outs[1]}")
    r, res = t.run("leaf-spine-16.ini", ["--lb", "ethereal", "--size", "1M", "--seed", "8"])
    timeless(res)
    t.check(res and res != outs[0], "another seed gives another run")

    # a frame pool too small for the run: it ends, verified, and says so
    small = os.path.join(work, "small-pool.ini")
    with open(small, "w") as f:
        f.write("[topology]\nkind = leaf-spine\nleaves = 4\nspines = 4\nhosts-per-leaf = 4\n"
                "[run]\nmbufs = 600\n")
    warnings = EAL[:-2] + ["--log-level=*:error", "--log-level=ethereal.*:warning", "--"]
    r, res = t.run(small, ["--lb", "ethereal", "--size", "1M", "--verify"], eal=warnings)
    t.check(r.returncode == 0 and res.get("verified") is True and res.get("alloc_fail", 0) > 0
            and "ran dry" in r.stderr,
            f"a pool of 600 mbufs: verified, alloc_fail {res.get('alloc_fail')}, said on stderr",
            f"exit {r.returncode}\n{r.stderr}")
    t.check(res.get("speed", {}).get("same_as_one_lane") is True,
            "on one lane, a pool run dry leaves the answer one lane's", str(res.get("speed")))
    two_lanes = [("0-1" if x == "0" else x) for x in warnings]
    r, res = t.run(small, ["--lb", "ethereal", "--size", "1M", "--verify"], eal=two_lanes)
    t.check(r.returncode == 0 and res.get("verified") is True
            and res.get("speed", {}).get("same_as_one_lane") is False
            and "may differ from one lane's" in r.stderr,
            "on two lanes, a pool run dry is said to be a race (same_as_one_lane false)",
            f"exit {r.returncode}\n{r.stderr}\n{res.get('speed')}")

    # one flow each way on an idle fabric (2 hosts, 2 leaves, 1 spine): within
    # a few percent of the bound, which counts payload only: headers,
    # preamble and IFG add 2.0 %, the ACKs sharing each host's link 2.1 %
    two = os.path.join(work, "two.ini")
    with open(two, "w") as f:
        f.write("[topology]\nkind = leaf-spine\nleaves = 2\nspines = 1\nhosts-per-leaf = 1\n")
    r, res = t.run(two, ["--lb", "ecmp", "--collective", "alltoall", "--size", "64M"])
    ratio = res.get("cct_ns", 0) / max(res.get("lower_bound_ns", 1), 1)
    t.check(1.0 <= ratio < 1.06, f"one flow on an idle fabric: cct / lower bound = {ratio:.4f}",
            f"{res}\n{r.stderr}")

    # a QP that cannot get through ends in a clear error completion, not a hang:
    # ECMP keeps hashing onto a dead link the switches have not detected yet
    dead = os.path.join(work, "retry-1.ini")
    with open(dead, "w") as f:
        f.write("[topology]\nkind = leaf-spine\nleaves = 2\nspines = 2\nhosts-per-leaf = 2\n"
                "[transport]\nretry-cnt = 1\nrto-us = 100\n[switch]\ndetect-delay-ms = 1000\n")
    r, _ = t.run(dead, ["--lb", "ecmp", "--size", "1M", "--fail", "0.0", "--verify"])
    t.check(r.returncode == 1 and "transport retry counter exceeded" in r.stderr,
            "retry-cnt 1 into a dead link: an error completion names the QP, exit 1",
            f"exit {r.returncode}\n{r.stderr}")
    # a run that fails is not drained (its hosts would go on sending), yet
    # its JSON has its frames made and accounted for, and it says where the
    # others are: the three add up
    limit = os.path.join(work, "time-limit.ini")
    with open(limit, "w") as f:
        f.write("[topology]\nkind = leaf-spine\nleaves = 2\nspines = 2\nhosts-per-leaf = 2\n"
                "[run]\ntime-limit-ms = 1\n")
    r, _ = t.run(limit, ["--size", "64M"], eal=warnings)
    res = json.load(open(os.path.join(work, f"run{t.n}.json")))
    m = re.search(r"the failed run's frames: (\d+) made, (\d+) received or dropped, (\d+) still "
                  r"queued or on a link\n", r.stderr)
    made, ended, held = (int(x) for x in m.groups()) if m else (0, 0, 0)
    t.check(r.returncode == 1 and "not done after 0.001 s" in r.stderr and made > 0 and held > 0
            and made == ended + held and res.get("frames_made") == made
            and res.get("frames_accounted") == ended,
            f"a failed run's frames: {made} made = {ended} received or dropped + {held} held",
            f"exit {r.returncode}\n{r.stderr}\n{res}")
    # messages go through rte_log under ethereal.fabric: DPDK's --log-level quiets
    # them; the exit status still tells
    quiet = [exe] + EAL[:-1] + ["--log-level=ethereal.fabric:critical", "--", "--config", dead,
                                "--quiet", "--lb", "ecmp", "--size", "1M", "--fail", "0.0"]
    r = subprocess.run(quiet, capture_output=True, text=True, timeout=600)
    t.check(r.returncode == 1 and "retry counter exceeded" not in r.stderr,
            "--log-level=ethereal.fabric:critical quiets the error line, exit 1 still",
            f"exit {r.returncode}\n{r.stderr}")

    # the real clock: the TSC, not the event queue
    r, res = t.run("smoke.ini", ["--lb", "ethereal", "--clock", "real", "--size", "64K",
                                 "--verify"])
    t.check(r.returncode == 0 and res.get("verified") is True and res.get("clock") == "real",
            "real clock on the smoke fabric completes and verifies", r.stderr)

    print(f"{t.total - t.fails} passed, {t.fails} failed")
    sys.exit(1 if t.fails else 0)


if __name__ == "__main__":
    main()
