#!/usr/bin/python3
"""The paper's 256-host leaf-spine, memory-light (hosts share one buffer, no
--verify), at a small size: the multipath policies (spray, REPS) must finish
with no timeout when nothing is dropped.

The pool is cut to [run] mbufs = 16384 so that a small run finds it empty as a
4 MB run at the default pool does: the QPs' frames must then wait for mbufs,
not be lost.  Before that was so (a QP that the empty pool stopped was never
served again until a packet timer fired), spray timed out 2 074 packets here
and then stalled.

check_fabric_256.py ETHEREAL_FABRIC CONF_DIR WORKDIR
"""
import json
import os
import subprocess
import sys

EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "1024", "-l", "0", "--no-telemetry",
       "--log-level=error", "--"]
MBUFS = 16384
SIZE = "256K"


def main():
    exe, conf_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    conf = os.path.join(work, "leaf-spine-256-small-pool.ini")
    with open(os.path.join(conf_dir, "paper-leaf-spine-256.ini")) as f:
        text = f.read()
    if "[run]" not in text:
        text += "\n[run]\n"
    with open(conf, "w") as f:
        f.write(text.replace("[run]", f"[run]\nmbufs = {MBUFS}", 1))
    fails = 0
    for lb in ("spray", "reps"):
        js = os.path.join(work, f"{lb}.json")
        if os.path.exists(js):
            os.remove(js)
        cmd = [exe] + EAL + ["--config", conf, "--lb", lb, "--size", SIZE,
                             "--json", js, "--quiet"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        res = json.load(open(js)) if os.path.exists(js) else {}
        ok = (r.returncode == 0 and res.get("error") == "" and res.get("hosts") == 256 and
              res.get("drops") == 0 and res.get("timeouts") == 0 and
              res.get("retransmits") == 0 and res.get("alloc_fail", 0) > 0 and
              res.get("frames_made") == res.get("frames_accounted"))
        print(("ok   " if ok else "FAIL ") +
              f"256 hosts {lb} a2a {SIZE}, pool {MBUFS}: cct {res.get('cct_ns')} ns "
              f"(bound {res.get('lower_bound_ns')}), timeouts {res.get('timeouts')}, "
              f"drops {res.get('drops')}, waits for the pool {res.get('alloc_fail')}, "
              f"{res.get('wall_s')} s", flush=True)
        if not ok:
            print(f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
