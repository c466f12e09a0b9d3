#!/usr/bin/python3
"""ethereal-switch as a user runs it: it starts from the shipped example
conf and stops cleanly with its counter table; every bad conf or argument
gives one message naming file, section and key, and a non-zero exit.

check_switch_cli.py ETHEREAL_SWITCH CONF_DIR WORKDIR
"""
import os
import subprocess
import sys

EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "512", "--no-telemetry",
       "--log-level=error"]

BAD = [
    # (what, conf text or None for a missing file, args, expected substrings)
    ("missing file", None, [], ["cannot read"]),
    ("no [switch]", "[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n", [],
     ["[switch]", "section is missing"]),
    ("bad mode", "[switch]\nmode = spray\n", [], ["[switch] mode", "source-route, ecmp", "'spray'"]),
    ("unknown key", "[switch]\nbufer = 1M\n", [], ["[switch] bufer", "unknown key"]),
    ("bad size", "[switch]\nbuffer = lots\n", [], ["[switch] buffer", "'lots'"]),
    ("no ports", "[switch]\nname = s\n", [], ["[port0]", "needs ports"]),
    ("bad role", "[switch]\n[port0]\ndev = net_ring0\nrole = sideways\n", [],
     ["[port0] role", "down, up"]),
    ("no prefix", "[switch]\n[port0]\ndev = net_ring0\nrole = down\n", [],
     ["[port0] prefix", "missing"]),
    ("bad prefix", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0/33\n", [],
     ["[port0] prefix", "'10.0.0/33'"]),
    ("bad rate", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\nrate = fast\n",
     [], ["[port0] rate", "'fast'"]),
    ("bad mac", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\npeer-mac = 02:00\n",
     [], ["[port0] peer-mac"]),
    ("bad device", "[switch]\n[port0]\ndev = net_nosuch0\nrole = down\nprefix = 10.0.0.1/32\n", [],
     ["[port0] dev", "cannot start 'net_nosuch0'"]),
    ("uplink order", "[switch]\n[port0]\ndev = net_ring0\nrole = up\nuplink = 1\n", [],
     ["[port0] uplink", "numbered 0, 1, 2"]),
    ("fail port", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "[fail0]\nport = 5\nat-ms = 1\n", [], ["[fail0] port", "0..0"]),
    ("bad duration", "[switch]\n", ["--duration", "soon"], ["--duration", "'soon'"]),
    ("stray argument", "[switch]\n", ["extra"], ["unexpected argument"]),
]


def run(exe, args, timeout=60):
    return subprocess.run([exe] + EAL + ["--"] + args, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))


def main():
    exe, conf_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    fails = 0
    r = run(exe, ["--config", os.path.join(conf_dir, "switch-example.ini"), "--duration", "0.5",
                  "--pcap", work])
    ok = r.returncode == 0 and "4 ports, 2 uplinks" in r.stdout and "q_max_bytes" in r.stdout
    ok = ok and all(os.path.exists(os.path.join(work, f"leaf0-p{i}.pcapng")) for i in range(4))
    print(("ok  " if ok else "FAIL") + " example conf starts and stops cleanly")
    if not ok:
        print(r.stdout, r.stderr)
        fails += 1
    for what, text, args, want in BAD:
        path = os.path.join(work, "bad.ini")
        if text is None:
            path = os.path.join(work, "no-such.ini")
        else:
            with open(path, "w") as f:
                f.write(text)
        cargs = (["--config", path] if "--duration" not in args and "extra" not in args
                 else ["--config", path] + args)
        r = run(exe, cargs)
        msg = r.stderr.strip()
        good = r.returncode != 0 and all(w in msg for w in want) and "AddressSanitizer" not in msg
        if text is not None and "--" not in "".join(args) and "extra" not in args:
            good = good and path in msg
        print(("ok  " if good else "FAIL") + f" {what}: exit {r.returncode}: {msg.splitlines()[-1] if msg else ''}")
        fails += not good
    print(f"{1 + len(BAD) - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
