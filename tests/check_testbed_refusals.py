#!/usr/bin/python3
"""scripts/testbed says so when it cannot do, or did not do, what was
asked: bad arguments refused before anything starts (exit 2), and a run
whose --fail was never made (the collective ended first) fails (exit 1):
it did not test what was asked.

check_testbed_refusals.py TESTBED BUILD_DIR
"""
import subprocess
import sys

CASES = [
    # (arguments, exit status, what the output must say)
    (["--fail", "5.0"], 2, "leaves are 0..1, uplinks 0..1"),
    (["--fail", "0.1@soon"], 2, "expected LEAF.UPLINK[@TIME]"),
    (["--kill-spine", "1", "--iters", "1"], 2, "needs --iters 2 or more"),
    (["--mpi", "true", "--compare"], 2, "no --compare or --trace"),
    (["--retry-cnt", "9"], 2, "expected 0..7"),
    (["--pairs", "--mpi", "ib_write_bw"], 2, "give --verbs and --mpi"),
    (["--verbs", "--pairs", "--mpi", "ib_write_bw", "--hosts-per-leaf", "1", "--leaves", "3"],
     2, "3 hosts do not make pairs"),
    # the collective is over long before 60 s
    (["--size", "64K", "--iters", "1", "--fail", "0.1@60s"], 1,
     "the failure was not made before the end"),
]


def main():
    testbed, build = sys.argv[1:3]
    bad = 0
    for args, want_rc, want in CASES:
        r = subprocess.run([testbed, "--build", build] + args, capture_output=True, text=True,
                           timeout=240)
        out = r.stdout + r.stderr
        ok = r.returncode == want_rc and want in out
        print(("ok  " if ok else "FAIL") + f" testbed {' '.join(args)}: exit {r.returncode}")
        if not ok:
            bad += 1
            print(f"  expected exit {want_rc} and '{want}'; output's end:\n{out[-2000:]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
