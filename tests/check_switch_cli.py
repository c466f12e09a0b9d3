#!/usr/bin/python3
"""ethereal-switch as a user runs it: it starts from the shipped example
conf and stops cleanly with its counter table; every bad conf or argument
gives one message naming file, section and key, and exit 2; --help gives
its usage before or after "--"; --pcap makes its folder.

check_switch_cli.py ETHEREAL_SWITCH CONF_DIR WORKDIR
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

# DPDK's own messages at errors, the switch's (stderr, ethereal.switch) at info
EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "512", "--no-telemetry",
       "--log-level=*:error", "--log-level=ethereal.*:info"]

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
    ("unknown section", "[switch]\n[prot0]\ndev = net_ring0\n", [],
     ["[prot0]", "unknown section", "switch, portN, failN"]),
    ("port gap", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "[port2]\ndev = net_ring1\nrole = down\nprefix = 10.0.0.2/32\n", [],
     ["[port1]", "without gaps"]),
    ("bad fault", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "loss-ppm = lots\n", [], ["[port0] loss-ppm", "'lots'"]),
    ("jitter on a wire", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "rate = wire\njitter-ns = 100\n", [], ["[port0] jitter-ns", "emulated rate"]),
    ("bad max-frame", "[switch]\nmax-frame = 70000\n", [], ["[switch] max-frame", "'70000'"]),
    ("bad ip", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "ip = 10.0.0\n", [], ["[port0] ip", "'10.0.0'", "'none'"]),
    ("ip not unicast", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "ip = 224.0.0.1\n", [], ["[port0] ip", "'224.0.0.1'"]),
    ("ip of a host", "[switch]\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
     "[port1]\ndev = net_ring1\nrole = down\nprefix = 10.0.0.2/32\nip = 10.0.0.1\n", [],
     ["[port1] ip", "'10.0.0.1'", "host's address"]),
    ("bad duration", "[switch]\n", ["--duration", "soon"], ["--duration", "'soon'"]),
    ("stray argument", "[switch]\n", ["extra"], ["unexpected argument"]),
]

# several switches in one process, joined by ring ports: two confs, a
# leaf (a host port, an uplink) and a spine above it
LEAF = ("[switch]\nname = sa\n[port0]\ndev = net_ring0\nrole = down\nprefix = 10.0.0.1/32\n"
        "[port1]\ndev = ring:x\nrole = up\nuplink = 0\n")
SPINE = "[switch]\nname = sb\n[port0]\ndev = ring:x\nrole = down\nprefix = 10.0.0.0/24\n"
MULTI_BAD = [
    ("a ring with one end", [LEAF], [], ["[port1] dev", "ring:x", "other end"]),
    ("a ring's third end", [LEAF, SPINE, SPINE.replace("sb", "sc")], [],
     ["[port0] dev", "ring:x", "third end"]),
    ("a ring's both ends on one switch", [LEAF + "[port2]\ndev = ring:x\nrole = up\nuplink = 1\n"],
     [], ["[port2] dev", "both ends"]),
    ("a name twice", [LEAF, SPINE.replace("sb", "sa")], [], ["[switch] name", "'sa'"]),
    ("--fail without the switch", [LEAF, SPINE], ["--fail", "0"], ["--fail", "one of: sa sb"]),
    ("--fail of no such switch", [LEAF, SPINE], ["--fail", "sz:0"], ["--fail", "one of: sa sb", "'sz'"]),
    ("--fail of no such port", [LEAF, SPINE], ["--fail", "sb:1"], ["--fail", "0..0 of sb"]),
]


def run(exe, args, timeout=60):
    return subprocess.run([exe] + EAL + ["--"] + args, capture_output=True, text=True,
                          timeout=timeout)


def telemetry_path(prefix):
    """DPDK 22.11's telemetry socket of a file prefix: /var/run/dpdk for
    root, else $XDG_RUNTIME_DIR/dpdk (or /tmp/dpdk)."""
    base = "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix, "dpdk_telemetry.v2")


def wait_said(err_path, p, text, tries=600):
    """What the switch said on stderr, once it says text (or ended)."""
    said = ""
    for _ in range(tries):
        with open(err_path) as f:
            said = f.read()
        if text in said or p.poll() is not None:
            break
        time.sleep(0.05)
    return said


def telemetry(path, cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.recv(1024)  # the greeting
    s.send(cmd.encode())
    reply = json.loads(s.recv(65536))
    s.close()
    return reply


def check_runtime(exe, conf_dir, work):
    """Telemetry: counters, failing and restoring a link at run time; then
    SIGINT stops it cleanly with its counter table."""
    prefix = f"etswcli{os.getpid()}"
    eal = [a for a in EAL if a != "--no-telemetry"] + [f"--file-prefix={prefix}"]
    # output to files: readline() on a pipe and communicate() lose data
    out_path, err_path = os.path.join(work, "runtime.out"), os.path.join(work, "runtime.err")
    with open(out_path, "w") as o, open(err_path, "w") as e:
        p = subprocess.Popen([exe] + eal + ["--", "--config",
                             os.path.join(conf_dir, "switch-example.ini")],
                             stdout=o, stderr=e)
    path = telemetry_path(prefix)
    try:
        # ready once it has said what it runs, on stderr (the socket exists before)
        said = wait_said(err_path, p, "4 ports")
        ok = "4 ports" in said
        ports = telemetry(path, "/ethereal/switch/ports")["/ethereal/switch/ports"]
        ok = ok and sorted(ports) == ["port0", "port1", "port2", "port3"] and \
            "drop_bad_uplink" in ports["port0"] and "arp_replies" in ports["port0"]
        # the gateway address: a down port's default, none on an uplink
        ok = ok and ports["port0"].get("ip") == "10.0.0.254" and ports["port2"].get("ip") == "none"
        ok = ok and telemetry(path, "/ethereal/switch/fail,2")["/ethereal/switch/fail"] == "ok"
        time.sleep(0.3)
        ok = ok and telemetry(path, "/ethereal/switch/ports")["/ethereal/switch/ports"]["port2"]["failed"] == 1
        # a bad or missing port index is answered with the valid range, not null
        for cmd in ("/ethereal/switch/fail,9", "/ethereal/switch/fail", "/ethereal/switch/restore"):
            reply = telemetry(path, cmd).get(cmd.split(",")[0])
            ok = ok and isinstance(reply, str) and "expected a port index 0..3" in reply
        telemetry(path, "/ethereal/switch/restore,2")
        time.sleep(0.3)
        ok = ok and telemetry(path, "/ethereal/switch/ports")["/ethereal/switch/ports"]["port2"]["failed"] == 0
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
        with open(out_path) as o, open(err_path) as e:
            out, err = o.read(), e.read()
    ok = ok and p.returncode == 0 and "q_max_bytes" in out
    print(("ok  " if ok else "FAIL") + " telemetry: counters, fail and restore at run time; SIGINT stops cleanly")
    if not ok:
        print(out, err)
    return ok


def check_multi(exe, work):
    """Two switches in one process on two lanes, a ring between them: each
    named in telemetry, the spine killed through it (the leaf sees its
    uplink go down), both tables at exit; and what is refused."""
    fails = 0
    paths = []
    for i, text in enumerate((LEAF, SPINE)):
        paths.append(os.path.join(work, f"multi{i}.ini"))
        with open(paths[-1], "w") as f:
            f.write(text)
    prefix = f"etswmulti{os.getpid()}"
    # two lanes: each switch on an lcore of its own, the ring between them
    eal = [a for a in EAL if a != "--no-telemetry"] + [f"--file-prefix={prefix}", "-l", "0-1"]
    out_path, err_path = os.path.join(work, "multi.out"), os.path.join(work, "multi.err")
    with open(out_path, "w") as o, open(err_path, "w") as e:
        p = subprocess.Popen([exe] + eal + ["--", "--config", paths[0], "--config", paths[1],
                                            "--fail", "sb:0@60s"], stdout=o, stderr=e)
    path = telemetry_path(prefix)
    ok = False
    try:
        said = wait_said(err_path, p, "sb: 1 ports")
        ok = "sa: 2 ports, 1 uplinks" in said and "sb: 1 ports" in said
        ports = telemetry(path, "/ethereal/switch/ports")["/ethereal/switch/ports"]
        ok = ok and sorted(ports) == ["sa", "sb"] and sorted(ports["sa"]) == ["port0", "port1"]
        ok = ok and sorted(telemetry(path, "/ethereal/switch/ports,sb")["/ethereal/switch/ports"]) == ["port0"]
        reply = telemetry(path, "/ethereal/switch/fail,1")["/ethereal/switch/fail"]
        ok = ok and "name the switch first" in reply and "one of: sa sb" in reply
        ok = ok and telemetry(path, "/ethereal/switch/fail,sa,0")["/ethereal/switch/fail"] == "ok"
        ok = ok and "0..0 of sb" in telemetry(path, "/ethereal/switch/restore,sb,4")["/ethereal/switch/restore"]
        ok = ok and telemetry(path, "/ethereal/switch/kill,sb")["/ethereal/switch/kill"] == "ok"
        said = wait_said(err_path, p, "sa: port1: link down", tries=100)
        ok = ok and "sb: killed" in said and "sa: port1: link down" in said
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
        with open(out_path) as o, open(err_path) as e:
            out, err = o.read(), e.read()
    ok = ok and p.returncode == 0 and "switch sa\n" in out and "switch sb (killed)\n" in out
    print(("ok  " if ok else "FAIL") + " two switches in one process, two lanes: telemetry by name, a kill, both tables")
    if not ok:
        print(out, err)
        fails += 1
    for what, texts, args, want in MULTI_BAD:
        cargs = []
        for i, text in enumerate(texts):
            cargs += ["--config", os.path.join(work, f"bad{i}.ini")]
            with open(cargs[-1], "w") as f:
                f.write(text)
        r = run(exe, cargs + args)
        msg = r.stderr.strip()
        good = r.returncode == 2 and all(w in msg for w in want) and "AddressSanitizer" not in msg
        print(("ok  " if good else "FAIL") + f" {what}: exit {r.returncode}: {msg.splitlines()[-1] if msg else ''}")
        fails += not good
    return fails


def main():
    exe, conf_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    fails = 0
    # --pcap makes its folder; the example's net_ring ports are said to carry nothing
    cap = os.path.join(work, "cap", "leaf0")
    shutil.rmtree(os.path.join(work, "cap"), ignore_errors=True)
    r = run(exe, ["--config", os.path.join(conf_dir, "switch-example.ini"), "--duration", "0.5",
                  "--pcap", cap])
    # the table on stdout, the program's messages on stderr
    ok = r.returncode == 0 and "4 ports, 2 uplinks" in r.stderr and "q_max_bytes" in r.stdout
    ok = ok and r.stdout.startswith("port ") and "ethereal-switch:" not in r.stdout
    ok = ok and all(os.path.exists(os.path.join(cap, f"leaf0-p{i}.pcapng")) for i in range(4))
    ok = ok and "port(s) 0 1 2 3: net_ring" in r.stderr and "leaf0-p3.pcapng: 0 frames" in r.stderr
    ok = ok and "answers ARP for: port0 10.0.0.254, port1 10.0.0.254" in r.stderr
    print(("ok  " if ok else "FAIL") + " example conf starts and stops cleanly, --pcap makes its folder")
    if not ok:
        print(r.stdout, r.stderr)
        fails += 1
    # our usage, not DPDK's, whether --help comes before or after "--"
    for where, line in (("before --", [exe, "--help"]), ("after --", [exe] + EAL + ["--", "--help"])):
        h = subprocess.run(line, capture_output=True, text=True, timeout=60)
        ok = h.returncode == 0 and h.stdout.startswith("usage: ethereal-switch") and \
            "/ethereal/switch/fail,[SWITCH,]PORT" in h.stdout
        print(("ok  " if ok else "FAIL") + f" --help {where}")
        fails += not ok
    r = run(exe, ["--config", os.path.join(conf_dir, "switch-example.ini"), "--pcap",
                  "/proc/no/such"])
    ok = r.returncode == 2 and "--pcap: cannot create /proc/no" in r.stderr
    print(("ok  " if ok else "FAIL") + f" --pcap into a folder that cannot be made: exit {r.returncode}")
    fails += not ok
    fails += not check_runtime(exe, conf_dir, work)
    fails += check_multi(exe, work)
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
        good = r.returncode == 2 and all(w in msg for w in want) and "AddressSanitizer" not in msg
        if text is not None and "--" not in "".join(args) and "extra" not in args:
            good = good and path in msg
        print(("ok  " if good else "FAIL") + f" {what}: exit {r.returncode}: {msg.splitlines()[-1] if msg else ''}")
        fails += not good
    print(f"{6 + len(BAD) + len(MULTI_BAD) - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
