#!/usr/bin/python3
"""Collectives as their users call them, end to end (issue 40).

fabric: every valid kind x algorithm x dtype x op on 3, 5, 6, 7 and 15
ranks, on sizes no rank count divides (whole elements of every dtype:
8 k bytes with k odd and prime to 3, 5 and 7) and 0, each collective's
data checked byte for byte (ethereal-fabric --verify, a workload per
algorithm, dtype and op).  Without --long: every kind x algorithm once on
6 and on 15 ranks, the dtypes and ops in turn.

testbed: scripts/testbed on 3, 5, 6, 7 and 15 ranks, every kind x
algorithm with -d all -o all -c 1 on two such sizes: every dtype and op
checked ("# Out of bounds values : 0 OK").  Without --long: what it
refuses before any process starts (exit 2, one line, no log: nothing
ran), and a rank killed mid-run: exit 1, the failing rank's message, no
Python traceback.

check_coll_any.py fabric ETHEREAL_FABRIC WORKDIR [--long] [--ranks N,..]
check_coll_any.py testbed TESTBED BUILD WORKDIR [--long] [--ranks N,..]

--ranks runs the long suite's part on those rank counts only (a piece at a
time on a shared machine).
"""
import json
import os
import signal
import subprocess
import sys
import time

from check_errors import Checker  # ok/FAIL lines, counted

EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "1024", "-l", "0", "--no-telemetry",
       "--log-level=error", "--"]
# ranks: (leaves, spines, hosts per leaf)
SHAPES = {3: (3, 2, 1), 5: (5, 2, 1), 6: (3, 2, 2), 7: (7, 2, 1), 15: (5, 2, 3)}
DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
          "bfloat16"]
OPS = ["sum", "prod", "max", "min", "avg"]
# what serves what (README's table)
ALGOS = {"a2a": ["allreduce", "allgather", "reducescatter", "alltoall"],
         "rd": ["allreduce", "allgather", "reducescatter"],
         "ring": ["allreduce", "allgather", "reducescatter"],
         "dbt": ["allreduce"], "rd-far": ["allreduce"]}
SIZES = [0, 8, 1016, 65528]  # 8 x 0, 1, 127, 8191


def end(c):
    print(f"{c.total - c.fails} passed, {c.fails} failed")
    return 1 if c.fails else 0


def conf_of(work, n):
    path = os.path.join(work, f"ranks-{n}.ini")
    leaves, spines, hpl = SHAPES[n]
    with open(path, "w") as f:
        f.write(f"[topology]\nkind = leaf-spine\nleaves = {leaves}\nspines = {spines}\n"
                f"hosts-per-leaf = {hpl}\n")
    return path


def fabric(exe, work, long_run, only):
    c = Checker()
    runs = []  # (ranks, algo, kinds, dtype, op)
    if long_run:
        for n in only:
            for algo, kinds in ALGOS.items():
                for dt in DTYPES:
                    for op in OPS:
                        runs.append((n, algo, kinds, dt, op))
    else:
        i = 0
        for n in (6, 15):
            for algo, kinds in ALGOS.items():
                for kind in kinds:
                    runs.append((n, algo, [kind], DTYPES[i % 10], OPS[i % 5]))
                    i += 1
    for k, (n, algo, kinds, dt, op) in enumerate(runs):
        wl = os.path.join(work, f"run{k}.workload")
        js = os.path.join(work, f"run{k}.json")
        with open(wl, "w") as f:
            for kind in kinds:
                for size in SIZES:
                    f.write(f"{kind} {size}\n")
        cmd = [exe] + EAL + ["--config", conf_of(work, n), "--algo", algo, "--dtype", dt,
                             "--op", op, "--workload", wl, "--verify", "--quiet", "--json", js]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        try:
            res = json.load(open(js))
        except (OSError, ValueError):
            res = {}
        ok = (r.returncode == 0 and res.get("verified") is True and
              res.get("collectives") == len(kinds) * len(SIZES) and
              res.get("bytes_verified", 0) > 0)
        c.check(ok, f"{n} ranks, {'/'.join(kinds)} by {algo}, {dt} {op}, sizes "
                f"{','.join(map(str, SIZES))}: verified, {res.get('bytes_verified')} bytes",
                f"exit {r.returncode}\n{r.stderr}")
        if ok:
            os.unlink(js)
            os.unlink(wl)
    return end(c)


def descendants(pid):
    """The processes under pid, by /proc's parent links."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out += kids.get(p, [])
        todo += kids.get(p, [])
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def testbed(script, build, work, long_run, only):
    c = Checker()
    tb = [script, "--build", build]
    if long_run:
        for n in only:
            leaves, spines, hpl = SHAPES[n]
            for algo, kinds in ALGOS.items():
                for kind in kinds:
                    cmd = tb + ["--leaves", str(leaves), "--spines", str(spines),
                                "--hosts-per-leaf", str(hpl), "--collective", kind,
                                "--algo", algo, "-b", "1016", "-e", "8072", "-i", "7056",
                                "-c", "1", "-d", "all", "-o", "all", "-n", "1", "-w", "0"]
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
                    rows = sum(1 for ln in r.stdout.splitlines()
                               if ln.strip() and not ln.startswith("#") and
                               ln.split()[0] in ("1016", "8072"))
                    want = 2 * 10 * (5 if kind in ("allreduce", "reducescatter") else 1)
                    ok = (r.returncode == 0 and "# Out of bounds values : 0 OK" in r.stdout and
                          rows == want and "testbed: ok" in r.stdout)
                    c.check(ok, f"testbed {n} ranks, {kind} by {algo}, every dtype and op, "
                            f"{rows} collectives checked",
                            f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
        return end(c)
    # refused before anything starts: one line, exit 2, no process's log
    refused = [
        (["--collective", "alltoall", "--algo", "ring"], "alltoall by ring"),
        (["--collective", "alltoall", "--algo", "rd", "-b", "8", "-e", "1M", "-f", "4"],
         "alltoall by rd of 8 bytes"),
        (["--collective", "alltoall", "--algo", "dbt"], "needs algo a2a"),
        (["--collective", "allgather", "--algo", "dbt"], "dbt is an allreduce algorithm only"),
        (["--collective", "reducescatter", "--algo", "rd-far"],
         "rd-far is an allreduce algorithm only"),
        (["-b", "0", "-e", "1M", "-f", "2"], "never grow"),
        (["-d", "int16"], "--dtype (-d): expected"),
        (["-o", "mean"], "--op (-o): expected"),
        (["-a", "7"], "-a: expected 0..3"),
    ]
    for i, (args, want) in enumerate(refused):
        keep = os.path.join(work, f"refused{i}")
        r = subprocess.run(tb + ["--leaves", "3", "--hosts-per-leaf", "2", "--keep", keep] + args,
                           capture_output=True, text=True, timeout=120)
        logs = [f for f in os.listdir(keep) if f.endswith(".log")] if os.path.isdir(keep) else []
        lines = r.stderr.strip().splitlines()
        ok = (r.returncode == 2 and len(lines) == 1 and want in r.stderr and not logs and
              lines[0].startswith("testbed: ") and "Traceback" not in r.stderr + r.stdout)
        c.check(ok, f"testbed {' '.join(args)}: refused, nothing started: {r.stderr.strip()}",
                f"exit {r.returncode}; logs {logs}\n{r.stdout}\n{r.stderr}")
    # a rank killed while they run: the run ends with the failing rank's
    # message, exit 1, no traceback
    p = subprocess.Popen(tb + ["-n", "100000", "--size", "64K"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    victim, t0 = None, time.monotonic()
    while victim is None and time.monotonic() - t0 < 60 and p.poll() is None:
        time.sleep(0.5)
        for pid in descendants(p.pid):
            argv = cmdline(pid)
            if argv and argv[0].endswith(b"ethereal-coll") and b"--rank" in argv and \
                    argv[argv.index(b"--rank") + 1] == b"1":
                victim = pid
    if victim is not None:
        time.sleep(4)  # bootstrapped and running
        os.kill(victim, signal.SIGKILL)
    out, err = p.communicate(timeout=300)
    ok = (victim is not None and p.returncode == 1 and "Traceback" not in out + err and
          "lost the connection to rank 1" in out + err and "testbed: rank " in out)
    c.check(ok, f"testbed, rank 1 killed mid-run: exit {p.returncode}: " +
            " / ".join(ln for ln in out.splitlines() if ln.startswith("testbed: rank")),
            f"victim {victim}\n{out[-3000:]}\n{err[-2000:]}")
    return end(c)


def main():
    args, only = sys.argv[1:], sorted(SHAPES)
    long_run = "--long" in args
    if "--ranks" in args:
        at = args.index("--ranks")
        only = [int(x) for x in args[at + 1].split(",")]
        if any(n not in SHAPES for n in only):
            sys.exit(f"--ranks: expected some of {sorted(SHAPES)}")
        del args[at:at + 2]
    args = [a for a in args if a != "--long"]
    if args[0] == "fabric":
        os.makedirs(args[2], exist_ok=True)
        return fabric(args[1], args[2], long_run, only)
    os.makedirs(args[3], exist_ok=True)
    return testbed(args[1], args[2], args[3], long_run, only)


if __name__ == "__main__":
    sys.exit(main())
