#!/usr/bin/python3
"""scripts/testbed stopped midway leaves nothing behind: SIGINT twice (a
terminal's ^C, then timeout(1) passing it on to the group) and SIGTERM
twice, each while its collective runs.  After each: none of its processes,
no work folder, no DPDK runtime folder of its prefixes (tb<pid>s/l/hN, tb<pid>x), and
exit status 1.

check_testbed_stop.py TESTBED BUILD_DIR
"""
import glob
import os
import signal
import subprocess
import sys
import time


def runtime_base():
    """DPDK 22.11's runtime folder: /var/run/dpdk for root, else
    $XDG_RUNTIME_DIR/dpdk (or /tmp/dpdk)."""
    if os.getuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


def cmdlines():
    """{pid: command line} of every process."""
    out = {}
    for d in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(d, "rb") as f:
                out[int(d.split("/")[2])] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            pass
    return out


def ours(pid):
    """The testbed's processes (their file prefix names its pid), and its
    work folder as their confs name it."""
    procs, work = [], set()
    for p, cmd in cmdlines().items():
        if any(f"tb{pid}{k}" in cmd for k in "slhx"):
            procs.append(p)
            for w in cmd.split():
                if w.startswith("/tmp/ethereal-testbed."):
                    work.add(w.split("/")[2])
    return procs, work


def stop_midway(testbed, build, sig):
    """A testbed stopped by sig twice once its hosts run; what it left."""
    # as from a terminal: a background child of a script would ignore SIGINT
    tb = subprocess.Popen([testbed, "--build", build, "--size", "4M", "--iters", "100"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    work, deadline = set(), time.monotonic() + 60
    while time.monotonic() < deadline and tb.poll() is None:
        procs, w = ours(tb.pid)
        work |= w
        if glob.glob(os.path.join(runtime_base(), f"tb{tb.pid}h*")) and len(procs) > 4:
            break
        time.sleep(0.1)
    time.sleep(1)  # the collective runs
    _, w = ours(tb.pid)
    work |= w
    tb.send_signal(sig)
    time.sleep(0.3)
    try:
        tb.send_signal(sig)
    except ProcessLookupError:
        pass
    out, _ = tb.communicate(timeout=120)
    time.sleep(0.5)
    procs, _ = ours(tb.pid)
    folders = glob.glob(os.path.join(runtime_base(), f"tb{tb.pid}[slhx]*"))
    left = [os.path.join("/tmp", w) for w in work if os.path.exists(os.path.join("/tmp", w))]
    return tb.returncode, procs, folders, left, work, out


def main():
    testbed, build = sys.argv[1:3]
    fails = 0
    for name, sig in (("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM)):
        rc, procs, folders, left, work, out = stop_midway(testbed, build, sig)
        ok = rc == 1 and not procs and not folders and not left and work
        fails += not ok
        print(("ok   " if ok else "FAIL ") +
              f"{name} twice midway: exit {rc}, processes left {procs}, runtime folders left "
              f"{folders}, work folder {sorted(work)} left {left}", flush=True)
        if not ok:
            print(out[-3000:])
    print(f"{2 - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
