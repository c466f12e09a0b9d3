#!/usr/bin/python3
"""Issue 21: a Linux kernel host resolves its gateway through ethereal-switch,
with no static neighbour entry.  The host is a network namespace on one end
of a veth pair, set up as docs/switch.md says: 10.99.0.1/32 with the
gateway 10.99.0.254 as its peer, 10.0.0.0/8 through it.  The switch has
af_packet on the other end, a down port with prefix 10.99.0.1/32 and no
`ip` key, so its address is the default, 10.99.0.254.  Then, in the host:

  - UDP to a remote address (routed via 10.99.0.254): the kernel asks for
    the gateway by ARP, the switch answers, the neighbour entry is the
    switch port's MAC and REACHABLE, and the datagram reaches the switch
    (dropped there as no_route: the switch has no uplink);
  - ping to the gateway itself: dropped as local (the switch runs no IP stack);
  - an ARP request for 10.99.0.7, a neighbour nobody is (sent raw: the
    kernel, rightly configured, never asks for one): no answer, dropped
    as non_ip.

The switch's exit table must show each of these.  Needs root and iproute2
(CI has both: there a missing one fails); elsewhere skipped (exit 77).

check_switch_arp.py ETHEREAL_SWITCH WORKDIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77
HOST_IP, GW_IP, NOBODY_IP, REMOTE_IP = "10.99.0.1", "10.99.0.254", "10.99.0.7", "10.50.0.1"


# In the host: one ARP request for {nobody}; prints how many ARP replies
# came back within 0.5 s.
ASK_NOBODY = """
import socket, struct, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0806))
s.bind(('{dev}', 0))
mac = bytes.fromhex(open('/sys/class/net/{dev}/address').read().strip().replace(':', ''))
ip = lambda a: socket.inet_aton(a)
s.send(b'\\xff' * 6 + mac + b'\\x08\\x06' + struct.pack('!HHBBH', 1, 0x0800, 6, 4, 1)
       + mac + ip('{ip}') + bytes(6) + ip('{nobody}'))
s.settimeout(0.1)
n, end = 0, time.time() + 0.5
while time.time() < end:
    try:
        f = s.recv(128)
    except socket.timeout:
        continue
    n += f[20:22] == b'\\x00\\x02'
print(n)
"""


def skip_or_fail(why):
    if os.environ.get("CI"):
        print(f"FAIL: CI must run this as root with iproute2 ({why})")
        sys.exit(1)
    print(f"skip: {why}")
    sys.exit(SKIP)


def sh(*args, check=True):
    return subprocess.run(list(args), capture_output=True, text=True, check=check, timeout=30)


def in_ns(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


def neighbour(ns, dev, ip):
    """The kernel's entry for ip on dev, as `ip -j neigh` gives it, or {}."""
    out = in_ns(ns, "ip", "-j", "neigh", "show", ip, "dev", dev).stdout
    entries = json.loads(out or "[]")
    return entries[0] if entries else {}


def port0_row(table):
    """Port 0's row of the exit table: the named columns and the drops."""
    lines = table.splitlines()
    head = next((l.split() for l in lines if l.startswith("port ")), None)
    row = next((l.split() for l in lines if l.startswith("0 ")), None)
    if head is None or row is None:
        return None
    cols = dict(zip(head[:-1], (int(v) for v in row[:len(head) - 1])))
    for extra in row[len(head) - 1:]:
        k, _, v = extra.partition("=")
        cols[k] = int(v)
    return cols


def main():
    exe, work = sys.argv[1:3]
    if os.getuid() != 0 or not shutil.which("ip"):
        skip_or_fail("needs root and iproute2 (a veth pair and a network namespace)")
    os.makedirs(work, exist_ok=True)
    tag = f"{os.getpid() % 100000}"
    ns, sw_end, host_end = f"etarp{tag}", f"etas{tag}", f"etah{tag}"
    conf = os.path.join(work, "gw.ini")
    with open(conf, "w") as f:
        f.write(f"""[switch]
name = gw
[port0]
dev = net_af_packet0,iface={sw_end}
role = down
prefix = {HOST_IP}/32
rate = wire
""")
    out_path, err_path = os.path.join(work, "switch.out"), os.path.join(work, "switch.err")
    p = None
    checks = []
    try:
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", sw_end, "type", "veth", "peer", "name", host_end)
        sh("ip", "link", "set", host_end, "netns", ns)
        # no IPv6: its neighbour discovery would only add frames to count
        sh("sysctl", "-qw", f"net.ipv6.conf.{sw_end}.disable_ipv6=1", check=False)
        in_ns(ns, "sysctl", "-qw", f"net.ipv6.conf.{host_end}.disable_ipv6=1", check=False)
        sh("ip", "link", "set", sw_end, "up")
        in_ns(ns, "ip", "link", "set", "lo", "up")
        in_ns(ns, "ip", "link", "set", host_end, "up")
        in_ns(ns, "ip", "addr", "add", f"{HOST_IP}/32", "peer", GW_IP, "dev", host_end)
        in_ns(ns, "ip", "route", "add", "10.0.0.0/8", "via", GW_IP)
        switch_mac = open(f"/sys/class/net/{sw_end}/address").read().strip()

        eal = ["--no-huge", "--no-shconf", "--no-pci", "-m", "512", "--no-telemetry", "-l", "0",
               "--log-level=*:error", "--log-level=ethereal.*:info"]
        with open(out_path, "w") as o, open(err_path, "w") as e:
            p = subprocess.Popen([exe] + eal + ["--", "--config", conf, "--yield"],
                                 stdout=o, stderr=e)
        said = ""
        for _ in range(600):
            said = open(err_path).read()
            if "answers ARP for" in said or p.poll() is not None:
                break
            time.sleep(0.05)
        checks.append((f"the switch's port 0 is {GW_IP} by default",
                       f"answers ARP for: port0 {GW_IP}" in said, said.strip()))

        before = neighbour(ns, host_end, GW_IP)
        checks.append(("no neighbour entry for the gateway before", not before, str(before)))

        # a datagram to a remote host: routed via the gateway, which the
        # kernel must first resolve (it holds the datagram meanwhile)
        in_ns(ns, "python3", "-c",
              "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
              f".sendto(b'hello', ('{REMOTE_IP}', 9))")
        gw = {}
        for _ in range(40):
            gw = neighbour(ns, host_end, GW_IP)
            if "REACHABLE" in gw.get("state", []):
                break
            time.sleep(0.05)
        checks.append((f"the host resolved {GW_IP} by ARP: the switch's MAC, REACHABLE",
                       gw.get("lladdr") == switch_mac and "REACHABLE" in gw.get("state", [])
                       and "PERMANENT" not in gw.get("state", []),
                       f"{gw} (switch port MAC {switch_mac})"))

        # the gateway itself, then a neighbour nobody is
        in_ns(ns, "ping", "-c", "1", "-W", "1", GW_IP, check=False)
        answers = in_ns(ns, "python3", "-c", ASK_NOBODY.format(dev=host_end, ip=HOST_IP,
                                                               nobody=NOBODY_IP)).stdout
        checks.append((f"an ARP request for {NOBODY_IP} (not the switch's) is not answered",
                       answers.strip() == "0", answers))
    finally:
        if p is not None:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        sh("ip", "link", "del", sw_end, check=False)
        sh("ip", "netns", "del", ns, check=False)

    out, err = open(out_path).read(), open(err_path).read()
    row = port0_row(out) or {}
    checks.append(("the switch exits 0 with its table", p.returncode == 0 and bool(row),
                   f"exit {p.returncode}\n{out}{err}"))
    checks.append(("table: ARP requests answered (arp_req = arp_rep >= 1)",
                   row.get("arp_req", 0) >= 1 and row.get("arp_req") == row.get("arp_rep"),
                   str(row)))
    checks.append(("table: the datagram reached the switch (no_route: no uplink)",
                   row.get("no_route", 0) >= 1, str(row)))
    checks.append(("table: the ping to the gateway stopped there (local)",
                   row.get("local", 0) >= 1, str(row)))
    checks.append((f"table: the requests for {NOBODY_IP} dropped (non_ip)",
                   row.get("non_ip", 0) >= 1, str(row)))
    fails = 0
    for what, ok, detail in checks:
        print(("ok  " if ok else "FAIL") + " " + what)
        if not ok:
            print("     " + detail.replace("\n", "\n     "))
            fails += 1
    print(f"{len(checks) - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
