#!/usr/bin/env python3
"""fabtests, libfabric's own suite (../shared/third-party/fabtests-1.17.0,
not ours), against the provider "ethereal": built once into the build
folder, then driven by its own runfabtests.sh between two processes on
this machine (slots 0 and 1: 10.0.0.1 and 10.0.0.2) joined through one
ethereal-switch over memif.  What the provider does not claim is excluded
by tests/fabtests.exclude, each line with the capability and why; then
the short set again with rendezvous by READ (FI_ETHEREAL_RDV=read).  Fails
on any test that fails.

runfabtests.sh's cleanup kills every fi_* process it can see, and some
tests open their own TCP side channel to the server's address: so the
suite runs in a PID namespace of its own and a network namespace whose
loopback has our hosts' addresses.  Root only; skipped (77) with one line
otherwise, and where the suite is absent (a checkout outside this
project).

  check_fabtests.py SRC_ROOT BUILD_ROOT WORK [SETS]     (SETS: quick)
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fi_switch import Switch, provider_env  # noqa: E402
from third_party import suite_or_skip  # noqa: E402

SUITE = "fabtests-1.17.0"


def build_fabtests(suite, build_root):
    """The suite built (autotools) into BUILD_ROOT/tests/fabtests; its bin
    folder, or None (said why)."""
    dest = os.path.join(build_root, "tests", "fabtests")
    bin_dir = os.path.join(dest, "bin")
    if os.path.exists(os.path.join(bin_dir, "runfabtests.sh")):
        return bin_dir
    srcdir = os.path.join(build_root, "tests", "fabtests-src")
    shutil.rmtree(srcdir, ignore_errors=True)
    shutil.copytree(suite, srcdir)
    log = open(os.path.join(build_root, "tests", "fabtests-build.log"), "w")
    for cmd in (["./autogen.sh"], ["./configure", f"--prefix={dest}"],
                ["make", "-j2"], ["make", "install"]):
        if subprocess.run(cmd, cwd=srcdir, stdout=log, stderr=subprocess.STDOUT).returncode:
            print(f"FAIL: fabtests: '{' '.join(cmd)}' failed (see {log.name})")
            return None
    return bin_dir


def main():
    src_root, build_root, work = sys.argv[1:4]
    sets = sys.argv[4] if len(sys.argv) > 4 else "quick"  # quick: unit, functional, short
    why = "runfabtests.sh needs namespaces of its own (root, unshare, ip)"
    suite = suite_or_skip(src_root, SUITE, ["unshare", "ip"], why)
    if suite is None:
        return 77
    if os.geteuid() != 0:
        print(f"SKIP: {why}")
        return 77
    bin_dir = build_fabtests(suite, build_root)
    if bin_dir is None:
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bad = run_sets(bin_dir, build_root, work, sets, {})
    # and the short set (messages, RMA, both directions) with rendezvous by READ
    bad |= run_sets(bin_dir, build_root, os.path.join(work, "rdv-read"), "short",
                    {"FI_ETHEREAL_RDV": "read"})
    return 1 if bad else 0


def preload_wrappers(bin_dir, work, env):
    """Under the sanitizers (meson sets LD_PRELOAD to their runtimes) only
    the suite's programs, which load the provider, get the preload: in
    runfabtests.sh's own tools it deadlocked ps.  The folder to give
    runfabtests.sh's -p."""
    preload = env.pop("LD_PRELOAD", "")
    if not preload:
        return bin_dir
    wrap = os.path.join(work, "bin-preload")
    os.makedirs(wrap, exist_ok=True)
    for name in os.listdir(bin_dir):
        if name.startswith("fi_"):
            path = os.path.join(wrap, name)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\nLD_PRELOAD={preload} exec {bin_dir}/{name} \"$@\"\n")
            os.chmod(path, 0o755)
    return wrap


def run_sets(bin_dir, build_root, work, sets, extra_env):
    """runfabtests.sh -t SETS with the exclude file; true if anything failed."""
    os.makedirs(work, exist_ok=True)
    exclude = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fabtests.exclude")
    sw = Switch(build_root, work)
    # the provider's warnings in a failure's output say what it met
    env = provider_env(build_root, work, dict(extra_env, FI_LOG_LEVEL="warn"))
    test_bin = preload_wrappers(bin_dir, work, env)
    # the server's and client's addresses on the namespace's loopback: the
    # tests' own out-of-band sockets (-E, FT_OPT_OOB_CTRL) use them
    inner = ("ip link set lo up && ip addr add 10.0.0.1/32 dev lo && "
             "ip addr add 10.0.0.2/32 dev lo && "
             f"exec {bin_dir}/runfabtests.sh -v -p {test_bin} -T 120 -f {exclude} "
             f"-s 10.0.0.1 -c 10.0.0.2 -t {sets} ethereal")
    try:
        r = subprocess.run(["unshare", "--pid", "--net", "--fork", "--mount-proc",
                            "bash", "-c", inner], cwd=work, env=env, capture_output=True,
                           timeout=3600)
    finally:
        sw_log = sw.stop()
    out = r.stdout.decode("utf-8", "replace")
    with open(os.path.join(work, "runfabtests.log"), "w") as f:
        f.write(out + r.stderr.decode("utf-8", "replace"))
    results = re.findall(r"^- name: +(.*)\n(?:.*\n)*?  result: +(\w+)", out, re.M)
    for name, res in results:
        print(f"{res:10} {name}")
    fails = [n for n, res in results if res.startswith("Fail")]
    if sw.ended_by_itself:
        fails.append("ethereal-switch (it ended during the run)")
    passed = [n for n, res in results if res.startswith("Pass")]
    if fails:
        # the failures' output, for the log
        for block in re.split(r"^(?=- name:)", out, flags=re.M):
            if re.search(r"^  result: +Fail", block, re.M):
                print(block)
        print(sw_log)
    print(f"fabtests {sets} {extra_env or ''}: {len(passed)} passed, {len(fails)} failed, "
          f"{len(results) - len(passed) - len(fails)} excluded or not run")
    return bool(fails or not passed)


if __name__ == "__main__":
    sys.exit(main())
