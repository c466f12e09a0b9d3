#!/usr/bin/env python3
"""A peer that really exits is reported, not waited for (issue 46): two
processes of the provider (tests/fi_peer.c, slots 0 and 1) joined by one
ethereal-switch over memif exchange a message; the receiver is killed
(SIGKILL: nothing said, its port gone); the sender's next rendezvous and
inject to it end in FI_EHOSTUNREACH once its connection has asked for new
QPs for the conf's reconnect-ms (3 s here) in vain, its EQ has the error
entry, and the next send to the peer is refused with FI_EHOSTUNREACH.

  check_fi_lost.py FI_PEER BUILD_ROOT WORK
"""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fi_switch import Switch, provider_env  # noqa: E402

RECONNECT_MS = 3000


def main():
    exe, build, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    conf = os.path.join(work, "fabric.ini")
    with open(conf, "w") as f:
        f.write("[topology]\nkind = leaf-spine\nleaves = 2\nspines = 2\nhosts-per-leaf = 2\n"
                f"[transport]\nrto-us = 20000\nretry-cnt = 2\nreconnect-ms = {RECONNECT_MS}\n")
    sw = Switch(build, work)
    procs = []
    try:
        def peer(role, slot):
            env = provider_env(build, work, {"FI_ETHEREAL_SLOT": str(slot),
                                              "FI_ETHEREAL_CONF": conf,
                                              "FI_LOG_LEVEL": "warn"})
            p = subprocess.Popen([exe, role], env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=open(
                                     os.path.join(work, f"{role}.log"), "w"), text=True)
            procs.append(p)
            return p

        b = peer("wait", 1)
        a = peer("lose", 0)
        names = [b.stdout.readline().strip(), a.stdout.readline().strip()]
        if not all(names):
            raise RuntimeError("a peer did not start: " + open(os.path.join(work, "wait.log")).read()
                               + open(os.path.join(work, "lose.log")).read())
        a.stdin.write(names[0] + "\n")
        a.stdin.flush()
        b.stdin.write(names[1] + "\n")
        b.stdin.flush()
        if b.stdout.readline().strip() != "ready" or a.stdout.readline().strip() != "sent":
            raise RuntimeError("the first message did not pass")
        b.send_signal(signal.SIGKILL)
        b.wait()
        t0 = time.monotonic()
        a.stdin.write("killed\n")
        a.stdin.flush()
        out, _ = a.communicate(timeout=120)
        took = time.monotonic() - t0
        print(out.strip())
        print(open(os.path.join(work, "lose.log")).read()[-3000:])
        if a.returncode != 0 or "told" not in out:
            print(f"FAIL: the sender did not see its peer lost (exit {a.returncode})")
            return 1
        print(f"ok: the peer's death reported after {took:.1f} s (reconnect-ms {RECONNECT_MS})")
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        sw.stop()


if __name__ == "__main__":
    sys.exit(main())
