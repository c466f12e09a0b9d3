#!/usr/bin/python3
"""Two ethereal-node processes over a memif link, as a lab user runs them:
the server and the client trade parameters over TCP, the client runs
write_bw / send_bw / write_lat, the server checks its memory byte for byte;
the RDMA tools' exchanges over veth, RDMA CM's (no TCP) among them.
Then bad arguments: one clear message and a non-zero exit each.

check_node.py ETHEREAL_NODE WORKDIR
"""
import json
import os
import subprocess
import sys

# DPDK's messages at errors, ours at info: the status lines ("waiting for
# the peer", "local: ...", "stopped:") are on stderr, the table on stdout
EAL = ["--no-huge", "--no-pci", "-m", "512", "--no-telemetry", "--log-level=*:error",
       "--log-level=ethereal.*:info"]
# two busy-polling processes on a 2-core machine can both be off a core for
# milliseconds; the RTO is tested in the unit tests, here it only must not
# turn a scheduler hiccup into seven timeouts in a row
RTO = ["--rto-ms", "20"]


class Bg:
    """A process in the background whose output goes to files: its first
    line can be waited for and all of it read at the end.  (readline() on a
    pipe followed by communicate() loses what readline() buffered.)"""

    def __init__(self, cmd, work, name, env):
        self.out = os.path.join(work, name + ".out")
        self.err = os.path.join(work, name + ".err")
        with open(self.out, "w") as o, open(self.err, "w") as e:
            self.p = subprocess.Popen(cmd, stdout=o, stderr=e, env=env)

    def first_line(self, timeout=60):
        """The first status line (stderr: our messages)."""
        import time
        end = time.time() + timeout
        while time.time() < end:
            with open(self.err) as f:
                line = f.readline()
            if line.endswith("\n") or self.p.poll() is not None:
                return line
            time.sleep(0.05)
        return ""

    def wait(self, timeout):
        """(stdout, stderr) once it has exited; TimeoutExpired if it does not."""
        self.p.wait(timeout=timeout)
        with open(self.out) as o, open(self.err) as e:
            return o.read(), e.read()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    @property
    def returncode(self):
        return self.p.returncode


def pair(exe, work, mode, extra, port, link="memif", quiet_fanout=False, both=(),
         client_eal=(), result=None, lcores=("0", "1")):
    """Run one server/client pair; over veth, (ok, refused by PACKET_FANOUT).
    extra: the client's arguments; both: both sides' (e.g. a tool's dialect)."""
    sock = os.path.join(work, f"memif-{mode}.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    common_link = []
    if link == "memif":
        dev = [f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}"], \
              [f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}"], "net_memif0", "net_memif0"
    else:  # a kernel veth pair: af_packet on each end (2 KB frames: MTU 1024)
        dev = [f"--vdev=net_af_packet0,iface={link}a"], [f"--vdev=net_af_packet1,iface={link}b"], \
              "net_af_packet0", "net_af_packet1"
        common_link = ["--mtu", "1024"]
    common = RTO + ["--mode", mode] + ([] if "--all" in both or mode == "atomic_bw" else ["--size", "16384"]) + ["--qps",
                    "1" if mode == "pingpong" or "--oob" in both else "2",
                    "--verify", "--oob-port", str(port)] + list(both)
    env = dict(os.environ)
    common = common + common_link
    # RDMA CM: the client names the server's RoCE address, not a TCP one
    server = "10.0.0.2" if "cm" in both else "127.0.0.1"
    srv = Bg([exe] + EAL + [f"--file-prefix=ens{os.getpid()}", "-l", lcores[0]] + dev[0] + [
        "--", "--port", dev[2], "--ip", "10.0.0.2", "--server"] + common,
        work, f"server-{mode}-{link}", env)
    out = os.path.join(work, f"{mode}.json")
    if os.path.exists(out):
        os.unlink(out)  # a stale result must not pass for this run's
    # the server has made its memif socket once it has said anything
    srv.first_line()
    try:
        cli = subprocess.run(
            [exe] + EAL + list(client_eal) + [f"--file-prefix=enc{os.getpid()}", "-l", lcores[1]] + dev[1] + [
                "--", "--port", dev[3], "--ip", "10.0.0.1", "--client", server,
                "--json", out] + common + extra,
            capture_output=True, text=True, timeout=120, env=env)
        if cli.returncode != 0:
            srv.kill()  # it would wait a minute for a client that is gone
        so, se = srv.wait(90)
    except subprocess.TimeoutExpired as e:
        srv.kill()
        so, se = srv.wait(10)
        print(f"FAIL {mode} over {link}: timed out: {e}")
        print("client:", getattr(e, "stdout", ""), getattr(e, "stderr", ""))
        if "cli" in locals():
            print("client:", cli.returncode, cli.stdout, cli.stderr)
        print("server:", so, se)
        return False if link == "memif" else (False, False)
    finally:
        srv.kill()
    ok = cli.returncode == 0 and srv.returncode == 0 and " ok\n" in so and " ok\n" in cli.stdout
    if result is not None:
        result.update(client_out=cli.stdout, client_err=cli.stderr)
    fanout = "PACKET_FANOUT" in cli.stderr + se
    if link != "memif" and not ok and fanout and quiet_fanout:
        print(f"retry {mode} over veth: af_packet's fanout group ids collided")
        return False, True
    res = json.load(open(out)) if os.path.exists(out) else {}
    ok = ok and res.get("verified") is True and res.get("messages", 0) > 0
    if "--all" in both:  # the JSON holds every row of the table: 2 B .. 8 MB
        ok = ok and len(res.get("rows", [])) == 23
    dialect = f" ({' '.join(both)})" if both else ""
    print(("ok  " if ok else "FAIL") + f" {mode}{dialect} over {link.rstrip('0123456789') if link != 'memif' else 'memif'}: {res.get('messages')} messages, "
          f"{res.get('gbps')} Gbit/s, p50 {res.get('lat_p50_ns')} ns, verified {res.get('verified')}")
    if not ok:
        print("client:", cli.returncode, cli.stdout, cli.stderr)
        print("server:", srv.returncode, so, se)
    return (ok, fanout) if link != "memif" else ok


def quiet(exe, work, port):
    """--log-level=ethereal.node:error silences our info lines (the
    "local:" line, ARP, "waiting") while the table still prints."""
    got = {}
    ok = pair(exe, work, "write_bw", ["--iters", "200"], port,
              client_eal=["--log-level=ethereal.node:error"], result=got)
    err, out = got.get("client_err", ""), got.get("client_out", "")
    good = ok and "local:" not in err and "ethereal-node:" not in err \
        and out.startswith("mode ") and "Gbit/s" in out
    print(("ok  " if good else "FAIL") + " --log-level=ethereal.node:error: no info lines, "
          "the table still on stdout")
    if not good:
        print("client stdout:", out, "client stderr:", err)
    return good


def can_make_links(what):
    """Kernel links need root and iproute2: CI has both (a missing one fails
    there); elsewhere the case is skipped, saying so."""
    import shutil
    if os.getuid() == 0 and shutil.which("ip"):
        return True
    if os.environ.get("CI"):
        print(f"FAIL {what}: CI must run this as root with iproute2")
    else:
        print(f"skip {what}: needs root and iproute2")
    return False


class VethPair:
    """A kernel veth pair, <name>a and <name>b, up, deleted on exit."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        subprocess.run(["ip", "link", "del", self.name + "a"], capture_output=True)
        subprocess.run(["ip", "link", "add", self.name + "a", "type", "veth", "peer", "name",
                        self.name + "b"], check=True)
        for end in "ab":
            subprocess.run(["ip", "link", "set", self.name + end, "up"], check=True)
        return self

    def __exit__(self, *exc):
        subprocess.run(["ip", "link", "del", self.name + "a"], capture_output=True)


def veth(exe, work, port, mode="write_bw", both=()):
    """Two processes over the kernel: a veth pair, af_packet on each end.
    Needs root (CI has it); elsewhere it is skipped, saying so."""
    if not can_make_links(f"{mode} over veth"):
        return not os.environ.get("CI")
    name = f"etv{os.getpid() % 100000}"
    with VethPair(name):
        # DPDK 22.11's af_packet derives its PACKET_FANOUT group id from the
        # pid and the ifindex: the two ends (close pids, consecutive ifindexes)
        # can pick the same id and the second is refused (EINVAL; seen once in
        # the tests).  New processes, new pids: retry.
        for attempt in range(3):
            ok, fanout = pair(exe, work, mode, [] if "--iters" in both else ["--iters", "500"],
                              port + attempt,
                              link=name, quiet_fanout=attempt < 2, both=both)
            if ok or not fanout:
                return ok
        return False


def tap_bridge(exe, work, port):
    """Two processes over kernel taps in a Linux bridge (root).  Each node has
    its own --mac: a tap's own MAC belongs to the bridge.  The bridge is made
    once both taps exist; what was sent before is lost and retransmitted."""
    if not can_make_links("taps"):
        return not os.environ.get("CI")
    tag = os.getpid() % 100000
    br, ta, tb = f"etbr{tag}", f"etsa{tag}", f"etsb{tag}"
    env = dict(os.environ)
    common = ["--rto-ms", "200", "--mode", "write_bw", "--size", "16384", "--mtu", "1024",
              "--verify", "--oob-port", str(port)]
    srv = cli = None
    ok = False
    try:
        srv = Bg([exe] + EAL + [f"--file-prefix=ets{tag}", "-l", "0", f"--vdev=net_tap0,iface={ta}",
                                "--", "--port", "net_tap0", "--ip", "10.0.0.2", "--mac",
                                "02:00:00:00:00:02", "--server"] + common, work, "tap-server", env)
        srv.first_line()
        cli = Bg([exe] + EAL + [f"--file-prefix=etc{tag}", "-l", "1", f"--vdev=net_tap1,iface={tb}",
                                "--", "--port", "net_tap1", "--ip", "10.0.0.1", "--mac",
                                "02:00:00:00:00:01", "--client", "127.0.0.1", "--iters", "500"] + common,
                 work, "tap-client", env)
        cli.first_line()
        subprocess.run(["ip", "link", "add", br, "type", "bridge"], check=True)
        for t in (ta, tb):
            subprocess.run(["ip", "link", "set", t, "master", br], check=True)
        subprocess.run(["ip", "link", "set", br, "up"], check=True)
        co, ce = cli.wait(120)
        so, se = srv.wait(60)
        ok = cli.returncode == 0 and srv.returncode == 0 and " ok\n" in co and " ok\n" in so
        if not ok:
            print("client:", cli.returncode, co, ce)
            print("server:", srv.returncode, so, se)
    finally:
        for p in (cli, srv):
            if p is not None:
                p.kill()
        subprocess.run(["ip", "link", "del", br], capture_output=True)
    print(("ok  " if ok else "FAIL") + " write_bw over kernel taps in a bridge, data verified")
    return ok


def interrupted(exe, work, port):
    """A long client run: telemetry shows the NIC and per-QP counters, then
    SIGINT stops it cleanly (outstanding requests complete or are flushed)."""
    import signal
    import socket
    import time
    sock = os.path.join(work, "memif-int.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    common = RTO + ["--mode", "write_bw", "--size", "65536", "--qps", "2", "--oob-port", str(port)]
    env = dict(os.environ)
    srv = Bg([exe] + EAL + [f"--file-prefix=eis{os.getpid()}", "-l", "0",
                            f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}", "--",
                            "--port", "net_memif0", "--ip", "10.0.0.2", "--server"] + common,
             work, "int-server", env)
    srv.first_line()
    prefix = f"eic{os.getpid()}"
    eal = [a for a in EAL if a != "--no-telemetry"] + [f"--file-prefix={prefix}"]
    cli = Bg([exe] + eal + ["-l", "1", f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}", "--",
                            "--port", "net_memif0", "--ip", "10.0.0.1", "--client", "127.0.0.1",
                            "--duration", "60"] + common,
             work, "int-client", env)
    ok = False
    try:
        cli.first_line()
        time.sleep(1.5)
        path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.recv(1024)
        s.send(b"/ethereal/node/qps")
        qps = json.loads(s.recv(65536))["/ethereal/node/qps"]
        s.send(b"/ethereal/node/port")
        port_st = json.loads(s.recv(65536))["/ethereal/node/port"]
        s.close()
        ok = len(qps) == 2 and all(q["tx_pkts"] > 0 and q["cwnd"] > 0 for q in qps.values()) \
            and port_st["rx_pkts"] > 0 and port_st["qps"] == 2
        cli.p.send_signal(signal.SIGINT)
        out, err = cli.wait(60)
        ok = ok and cli.returncode == 0 and "stopped:" in err and "Gbit/s" in out
        srv.wait(60)
        if not ok:
            print("client:", cli.returncode, out, err)
    finally:
        for p in (cli, srv):
            p.kill()
    print(("ok  " if ok else "FAIL") + " telemetry of a running node, then SIGINT stops it cleanly")
    return ok


def static_peer(exe, work):
    """Over veth; a PACKET_FANOUT group-id collision (see veth()) is retried."""
    for attempt in range(3):
        ok, fanout = static_peer_once(exe, work, quiet_fanout=attempt < 2)
        if ok or not fanout:
            break
    print(("ok  " if ok else "FAIL") + " static peer parameters (--peer), no TCP exchange")
    return ok


def static_peer_once(exe, work, quiet_fanout):
    """Parameters by hand: the server prints its own, the client takes them
    with --peer; no TCP.  The server checks its memory when interrupted.
    Over veth, not memif: with no TCP channel the server is still polling
    when the client leaves, and DPDK 22.11's memif unmaps its rings from the
    control thread under a polling datapath (docs/transport.md)."""
    import signal
    if not can_make_links("static peer over veth"):
        return not os.environ.get("CI"), False
    name = f"ets{os.getpid() % 100000}"
    common = RTO + ["--mode", "write_bw", "--size", "8192", "--qps", "2", "--verify",
                    "--mtu", "1024"]
    env = dict(os.environ)
    ok = False
    with VethPair(name):
        srv = Bg([exe] + EAL + [f"--file-prefix=ess{os.getpid()}", "-l", "0",
                                f"--vdev=net_af_packet0,iface={name}a", "--",
                                "--port", "net_af_packet0", "--ip", "10.0.0.2", "--server",
                                "--peer", "ip=10.0.0.1,qpn=0x100", "--duration", "60"] + common,
                 work, "static-server", env)
        try:
            spec = srv.first_line().split("local: ")[1].strip()
            cli = subprocess.run(
                [exe] + EAL + [f"--file-prefix=esc{os.getpid()}", "-l", "1",
                               f"--vdev=net_af_packet1,iface={name}b", "--",
                               "--port", "net_af_packet1", "--ip", "10.0.0.1", "--peer", spec,
                               "--iters", "500"] + common,
                capture_output=True, text=True, timeout=120, env=env)
            srv.p.send_signal(signal.SIGINT)
            so, se = srv.wait(60)
            ok = cli.returncode == 0 and " ok\n" in cli.stdout and srv.returncode == 0 \
                and " ok\n" in so
            fanout = "PACKET_FANOUT" in cli.stderr + se
            if not ok and fanout and quiet_fanout:
                print("retry static peer: af_packet's fanout group ids collided")
                return False, True
            if not ok:
                print("client:", cli.returncode, cli.stdout, cli.stderr)
                print("server:", srv.returncode, so, se)
        finally:
            srv.kill()
    return ok, False


def workers(exe, work, port):
    """--workers 2 on both ends, memif's two queue pairs, 4 QPs: each
    worker completes its QPs' share, the server's memory checked."""
    both = ["--workers", "2", "--yield", "--qps", "4"]
    ok = pair(exe, work, "send_bw", ["--iters", "1000"], port, both=both, lcores=("0-1", "0-1"))
    res = json.load(open(os.path.join(work, "send_bw.json")))
    shares = [w.get("messages", 0) for w in res.get("workers", [])]
    good = ok and len(shares) == 2 and min(shares) == 2000 and res.get("messages") == 4000
    print(("ok  " if good else "FAIL") + f" --workers 2: each worker's messages {shares}")
    return good


BAD = [
    (["--ip", "10.0.0.1", "--server"], "--port DEV is required"),
    (["--port", "net_memif0", "--server"], "--ip ADDR is required"),
    (["--port", "net_memif0", "--ip", "10.0.0.300", "--server"], "--ip: expected an IPv4 address"),
    (["--port", "net_memif0", "--ip", "10.0.0.1"], "exactly one of --server and --client"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--client", "1.2.3.4"],
     "exactly one of --server and --client"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--mode", "read_write"], "--mode: expected"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--mtu", "1000"], "--mtu: expected"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--size", "big"], "--size: expected a byte count"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--qps", "0"], "--qps: expected 1..65535"),
    (["--port", "net_nosuch0", "--ip", "10.0.0.1", "--server"], "cannot start 'net_nosuch0'"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--peer", "qpn=5"], "--peer: ip="),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--peer", "ip=1.2.3.4,color=red"],
     "--peer: expected mac=,ip="),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "verbs"], "--oob: expected"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "pingpong", "--mode",
      "write_bw"], "--oob pingpong runs --mode pingpong only"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "perftest", "--mode",
      "pingpong"], "--oob perftest runs --mode write_bw, send_bw, write_lat, send_lat, read_bw, "
                   "read_lat or atomic_bw"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--mode", "atomic_bw", "--size",
      "16"], "--mode atomic_bw works on 8 bytes: no --size"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--mode", "send_lat"],
     "--mode send_lat is ib_send_lat's test: give --oob perftest"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--all"],
     "--all is perftest's -a: give --oob perftest"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "perftest", "--all",
      "--size", "4096"], "--all runs every size"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "perftest", "--mode",
      "write_lat", "--qps", "2"], "runs one QP (the tool's -q is for bandwidth tests only)"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--mode", "pingpong", "--qps", "2"],
     "--mode pingpong runs one QP"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--oob", "pingpong", "--peer", "ip=1.2.3.4"],
     "--peer replaces the exchange"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--client", "1.2.3.4", "--oob", "perftest",
      "--mode", "send_bw", "--duration", "5"], "give --iters, not --duration"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "cm", "--mode",
      "pingpong"], "--oob cm runs --mode write_bw, send_bw, write_lat, send_lat, read_bw"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--mode", "ucmatose"],
     "--mode ucmatose is rdmacm-utils' test: give --oob cm"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--client", "peer.example", "--oob", "cm"],
     "--client: expected the peer's RoCE IPv4 address (--oob cm)"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "cm", "--mode", "ucmatose",
      "--iters", "0"], "--mode ucmatose: --iters 1..1048576"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "cm", "--mode", "rping",
      "--size", "16"], "--mode rping: one connection (--qps 1), --size 26 or more"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--oob", "cm", "--workers", "2",
      "--qps", "2"], "--oob cm runs one worker"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--fault", "loss=5"],
     "--fault: expected KEY=VALUE"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--fault", "jitter-ns=500"],
     "jitter-ns needs an emulated rate"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--rx-loss-ppm", "2000000"],
     "--rx-loss-ppm: expected 0..1000000"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--workers", "0"],
     "--workers: expected 1..16"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--workers", "2", "--mode",
      "write_lat"], "--workers: --mode write_lat times one QP's round trips"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--workers", "2"],
     "--workers 2 needs at least as many QPs (--qps 1)"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--workers", "16", "--qps", "16"],
     "--workers 16 needs 16 lcores"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--json", "/nonexistent/x.json"],
     "--json: cannot write /nonexistent/x.json: No such file or directory"),
    (["--port", "net_memif0", "--ip", "10.0.0.1", "--server", "--pcap", "/nonexistent/x.pcapng"],
     "--pcap: cannot write /nonexistent/x.pcapng"),
]
# exit 2 for a bad command line, as README says; a port that cannot start is
# the machine's refusal: 1
EXIT_1 = ("net_nosuch0",)


def main():
    exe, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    fails = 0
    base = 20000 + os.getpid() % 20000
    # READ and atomics (issue 38): the client checks what it read; atomic_bw
    # that each FETCH & ADD returned the count before it (none ran twice),
    # the server that its counters hold what ran
    for i, (mode, extra) in enumerate([("write_bw", ["--iters", "2000"]),
                                       ("send_bw", ["--iters", "2000"]),
                                       ("write_lat", ["--iters", "2000"]),
                                       ("read_bw", ["--iters", "2000"]),
                                       ("read_lat", ["--iters", "1000"]),
                                       ("atomic_bw", ["--iters", "2000"])]):
        fails += not pair(exe, work, mode, extra, base + i)
    # the RDMA tools' exchanges, both ends ours (tests/rxe: against Linux);
    # over veth: a tool's peer says no last word, so the ends cannot agree
    # when to stop polling, which 22.11's memif needs
    for i, (mode, dialect) in enumerate([("pingpong", "pingpong"), ("write_bw", "perftest"),
                                         ("send_bw", "perftest"), ("write_lat", "perftest"),
                                         ("send_lat", "perftest"), ("read_bw", "perftest"),
                                         ("read_lat", "perftest"), ("atomic_bw", "perftest")]):
        fails += not veth(exe, work, base + 100 + 3 * i, mode, ["--oob", dialect, "--iters", "500"])
    # RDMA CM on the wire, no TCP (tests/rxe: against Linux's CM): perftest
    # -R's exchange on a QP of its own, and ucmatose's test, both ends ours
    for i, mode in enumerate(["write_bw", "send_lat", "read_bw", "ucmatose", "rping"]):
        fails += not veth(exe, work, base + 160 + 3 * i, mode, ["--oob", "cm", "--iters", "500"])
    # perftest's -q 2 and -a (every size 2 .. 8 MiB, a few of each)
    for i, (mode, more) in enumerate([("write_bw", ["--qps", "2"]), ("send_bw", ["--qps", "2"]),
                                      ("write_bw", ["--all", "--iters", "4"]),
                                      ("send_bw", ["--all", "--iters", "4"]),
                                      ("send_lat", ["--all", "--iters", "4"])]):
        fails += not veth(exe, work, base + 130 + 3 * i, mode,
                          ["--oob", "perftest", "--iters", "300"] + more)
    # both ends count the rounds, as ibv_rc_pingpong's do
    fails += not pair(exe, work, "pingpong", [], base + 50, both=["--iters", "500"])
    # both ends given --duration: the server answers until the client's
    # word, not until its own clock says (the client's last WRITEs)
    fails += not pair(exe, work, "write_bw", [], base + 51, both=["--duration", "1s"])
    fails += not workers(exe, work, base + 52)
    fails += not veth(exe, work, base + 20)
    fails += not tap_bridge(exe, work, base + 30)
    fails += not interrupted(exe, work, base + 10)
    fails += not quiet(exe, work, base + 60)
    fails += not static_peer(exe, work)
    for args, want in BAD:
        r = subprocess.run([exe] + EAL + [f"--file-prefix=enb{os.getpid()}", "--"] + args,
                           capture_output=True, text=True, timeout=60,
                           env=os.environ)
        code = 1 if any(a in EXIT_1 for a in args) else 2
        good = r.returncode == code and want in r.stderr
        print(("ok  " if good else "FAIL") + f" {' '.join(args)}: exit {r.returncode}")
        if not good:
            print(r.stderr)
        fails += not good
    # our usage, not DPDK's, whether --help comes before or after "--"
    for where, line in (("before --", [exe, "--help"]),
                        ("after --", [exe] + EAL + [f"--file-prefix=enh{os.getpid()}", "--", "--help"])):
        h = subprocess.run(line, capture_output=True, text=True, timeout=60)
        good = h.returncode == 0 and h.stdout.startswith("usage: ethereal-node") and "Mmsg/s" in h.stdout
        print(("ok  " if good else "FAIL") + f" --help {where}")
        fails += not good
    total = 31 + len(BAD)
    print(f"{total - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
