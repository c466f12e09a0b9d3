#!/usr/bin/python3
"""scripts/reproduce on a small fabric: --quick narrowed to the 16-host
leaf-spine (--confs), two policies and one algorithm, so four runs.  It
must write results.csv (a row per run, no error), claims.md (the claims
table and the per-point table) and the figures; a second call must run
nothing (resume); bad arguments must exit 2 with one line.

check_reproduce.py REPRODUCE ETHEREAL_FABRIC CONF_DIR WORKDIR
"""
import csv
import os
import shutil
import subprocess
import sys

FIGURES = ("cct-leaf-spine.png", "qps-leaf-spine.png", "failure-leaf-spine.png")


def main():
    script, exe, conf_dir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    base = [script, "--exe", exe, "--out", out]
    small = ["--quick", "--confs", "leaf-spine=" + os.path.join(conf_dir, "leaf-spine-16.ini"),
             "--lb", "ethereal,spray", "--algo", "a2a", "--jobs", "2"]
    fails = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            fails.append(what)

    # bad arguments: exit 2, one line naming the option, nothing run
    for args, word in ((["--jobs", "0"], "--jobs"), (["--lb", "nope"], "--lb"),
                       (["--confs", "ring=x.ini"], "--confs"),
                       (["--confs", "leaf-spine=/nonexistent.ini"], "--confs"),
                       (["--sizes", "3M"], "--sizes"), (["--kind", "fast"], "--kind")):
        r = subprocess.run(base + args, capture_output=True, text=True, timeout=60)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and word in lines[0] and
              lines[0].startswith("reproduce: ") and not os.path.exists(out),
              f"{' '.join(args)}: exit {r.returncode}, {r.stderr.strip()!r}")

    r = subprocess.run(base + small + ["--kind", "failure", "--list"], capture_output=True,
                       text=True, timeout=60)
    listed = r.stdout.splitlines()
    check(r.returncode == 0 and listed[-1:] == ["2 runs"] and
          all(" failure-" in x for x in listed[:-1]), f"--kind failure --list: {listed}")

    r = subprocess.run(base + small, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0 and "4 to run" in r.stderr and "[4/4 " in r.stderr,
          f"first call: exit {r.returncode}, 4 runs")
    if r.returncode != 0:
        print(r.stderr)
    rows = []
    if os.path.exists(os.path.join(out, "results.csv")):
        with open(os.path.join(out, "results.csv")) as f:
            rows = list(csv.DictReader(f))
    check(len(rows) == 4 and all(x["error"] == "" and int(x["cct_ns"]) > 0 and
                                 x["hosts"] == "16" for x in rows),
          f"results.csv: {len(rows)} rows, cct and no error")
    check({(x["kind"], x["lb"], x["fail"] != "") for x in rows} ==
          {(k, lb, k == "failure") for k in ("cct", "failure") for lb in ("ethereal", "spray")},
          "results.csv: healthy and failed, both policies")
    check(all(int(x["lanes"]) >= 1 and float(x["run_s"]) > 0 for x in rows),
          "results.csv: each run's time and lanes")
    claims = ""
    if os.path.exists(os.path.join(out, "claims.md")):
        with open(os.path.join(out, "claims.md")) as f:
            claims = f.read()
    check("| # | where | claim | paper | ours |" in claims and "37.99%" in claims and
          "| cct | leaf-spine | a2a | 16M |" in claims and
          "| failure | leaf-spine | a2a | 16M |" in claims,
          "claims.md: the claims table and every point against spraying")
    check("What the runs cost" in claims and "leaf-spine: 4 runs" in claims,
          "claims.md: what the runs cost")
    for png in FIGURES:
        p = os.path.join(out, png)
        check(os.path.exists(p) and os.path.getsize(p) > 5000, f"figure {png}")

    # resume: nothing runs again, the runs' JSON untouched
    runs = os.path.join(out, "runs", "leaf-spine")
    before = {n: os.stat(os.path.join(runs, n)).st_mtime_ns for n in os.listdir(runs)}
    r = subprocess.run(base + small, capture_output=True, text=True, timeout=120)
    after = {n: os.stat(os.path.join(runs, n)).st_mtime_ns for n in os.listdir(runs)}
    check(r.returncode == 0 and "4 done before, 0 to run" in r.stderr and before == after,
          f"second call runs nothing: exit {r.returncode}")
    print(f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
