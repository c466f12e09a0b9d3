#!/usr/bin/env python3
"""Unmodified RDMA programs over our libibverbs and librdmacm (verbs/,
docs/verbs.md): Debian 12's own binaries (ibverbs-utils, perftest, and
rdmacm-utils with perftest -R, which meet by RDMA CM; UCX's ucx_perftest
over rc_verbs and ud_verbs), both ends on our
stack, through one ethereal-switch over memif (tests/fi_switch.py: slots 0
and 1 are 10.0.0.1 and 10.0.0.2), run by scripts/ethereal-run.  Each
binary must resolve every symbol against our library (ldd -r), each pair
must end well, and what they print must say they did what was asked.
Skipped (77) with one line where the binaries are absent.

  check_verbs.py SRC_ROOT BUILD_ROOT WORK
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fi_switch import Switch, memif  # noqa: E402

TIMEOUT = int(os.environ.get("ET_VERBS_TIMEOUT", "120"))
HERE = os.path.dirname(os.path.abspath(__file__))
PERF = ["-x", "1", "-d", "ethereal0"]
# (name, program and arguments, what the client's output must match)
PAIRS = [
    ("rc_pingpong", ["ibv_rc_pingpong", "-g", "1", "-n", "500"], r"500 iters in"),
    ("rc_pingpong -e", ["ibv_rc_pingpong", "-g", "1", "-n", "200", "-e"], r"200 iters in"),
] + [
    (t, ["ib_" + t] + PERF + ["-n", "200"], r"^\s+\d+\s+200\s+\d")
    for t in ("write_bw", "read_bw", "send_bw", "atomic_bw", "write_lat", "read_lat", "send_lat",
              "atomic_lat")
] + [
    # completion events (perftest takes -e for SENDs only)
    ("send_bw -e", ["ib_send_bw"] + PERF + ["-n", "200", "-e"], r"^\s+65536\s+200\s+\d"),
    ("send_lat -e", ["ib_send_lat"] + PERF + ["-n", "200", "-e"], r"^\s+2\s+200\s+\d"),
    # 4 QPs of 200 each
    ("write_bw -q 4", ["ib_write_bw"] + PERF + ["-n", "200", "-q", "4"], r"^\s+65536\s+800\s+\d"),
    ("write_bw -a", ["ib_write_bw"] + PERF + ["-n", "20", "-a"], r"^\s+8388608\s+20\s+\d"),
    # UD: datagrams to an address handle, GRH in front of each receive
    ("ud_pingpong", ["ibv_ud_pingpong", "-g", "1", "-n", "500", "-s", "1024", "-c"],
     r"500 iters in"),
    ("send_bw -c UD", ["ib_send_bw"] + PERF + ["-n", "200", "-c", "UD"], r"^\s+\d+\s+200\s+\d"),
    ("send_lat -c UD", ["ib_send_lat"] + PERF + ["-n", "200", "-c", "UD"], r"^\s+2\s+200\s+\d"),
    # a shared receive queue under 16 QPs (ibv_srq_pingpong's), under 2
    ("srq_pingpong", ["ibv_srq_pingpong", "-g", "1", "-n", "200"], r"200 iters in"),
    ("send_bw --use-srq -q 2", ["ib_send_bw"] + PERF + ["-n", "200", "--use-srq", "-q", "2"],
     r"^\s+65536\s+400\s+\d"),
]
# RDMA CM on the wire, our librdmacm both ends (no TCP at all): (name,
# server, client, what the client's output must match); {p} the port
CM = ["-R", "-x", "1", "-d", "ethereal0", "-n", "200", "-p", "{p}"]
CM_PAIRS = [
    ("rping", ["rping", "-s", "-a", "0.0.0.0", "-p", "{p}", "-V", "-C", "100"],
     ["rping", "-c", "-a", "10.0.0.1", "-p", "{p}", "-v", "-V", "-C", "100"],
     r"ping data: rdma-ping-99: "),
    ("ucmatose -c 4", ["ucmatose", "-p", "{p}", "-c", "4", "-C", "100"],
     ["ucmatose", "-s", "10.0.0.1", "-p", "{p}", "-c", "4", "-C", "100"], r"return status 0"),
    # synchronous ids (rdma_create_ep, rdma_get_request)
    ("rdma_server/rdma_client", ["rdma_server", "-p", "{p}"],
     ["rdma_client", "-s", "10.0.0.1", "-p", "{p}"], r"rdma_client: end 0"),
    # UD by SIDR (RDMA_PS_UDP): address handles from the reply and from
    # the GRH of what came in (udaddy's port is its own, 7174)
    ("udaddy", ["udaddy", "-c", "2", "-C", "50"],
     ["udaddy", "-s", "10.0.0.1", "-c", "2", "-C", "50"], r"return status 0"),
] + [
    (t + " -R", ["ib_" + t] + CM, ["ib_" + t] + CM + ["10.0.0.1"], want)
    for t, want in (("write_bw", r"^\s+65536\s+200\s+\d"), ("read_bw", r"^\s+65536\s+200\s+\d"),
                    ("send_lat", r"^\s+2\s+200\s+\d"), ("atomic_bw", r"^\s+8\s+200\s+\d"))
] + [
    (t + " -R -c UD", ["ib_" + t] + CM + ["-c", "UD"], ["ib_" + t] + CM + ["-c", "UD", "10.0.0.1"],
     r"^\s+\d+\s+200\s+\d")
    for t in ("send_bw", "send_lat")
]
# UCX (ucx-utils): ucx_perftest's server takes its test from the client
# (on TCP, its -p port).  UCX_TLS: rc_verbs with ud_verbs beside it (UCP
# connects an RC endpoint over an auxiliary datagram transport), or
# ud_verbs alone; put_bw is UCT's own test, of one transport (-x).
# UCX finds a device only where /dev/infiniband/<its dev_name> is a
# character device: ethereal-run preloads verbs/devnode.c for that.
UCX_RC = "rc_verbs,ud_verbs"
UCX = [
    ("ucx tag_bw rc_verbs", UCX_RC, ["-t", "tag_bw", "-s", "1048576", "-n", "100"]),
    ("ucx tag_lat rc_verbs", UCX_RC, ["-t", "tag_lat", "-s", "8", "-n", "1000"]),
    ("ucx put_bw rc_verbs", UCX_RC,
     ["-t", "put_bw", "-d", "ethereal0:1", "-x", "rc_verbs", "-D", "zcopy", "-s", "1048576",
      "-n", "100"]),
    ("ucx tag_bw ud_verbs", "ud_verbs", ["-t", "tag_bw", "-s", "65536", "-n", "100"]),
    ("ucx tag_lat ud_verbs", "ud_verbs", ["-t", "tag_lat", "-s", "8", "-n", "1000"]),
    ("ucx ucp_put_bw ud_verbs", "ud_verbs", ["-t", "ucp_put_bw", "-s", "65536", "-n", "100"]),
]
# rows whose frames are captured and decoded (frames_check), short ones:
# RC SEND, WRITE, READ and atomics, UD, RDMA CM's MADs, UCX's RC and UD
CAPTURED = {"rc_pingpong", "write_lat", "read_lat", "atomic_bw", "send_bw -c UD", "rping",
            "udaddy", "ucx tag_lat rc_verbs", "ucx tag_lat ud_verbs"}
SINGLES = [
    ("ibv_devices", ["ibv_devices"], r"ethereal0\s+[0-9a-f]{16}"),
    ("ibv_devinfo", ["ibv_devinfo", "-v"], r"GID\[\s*1\]:\s+::ffff:10\.0\.0\.1, RoCE v2"),
]


def listening(port):
    """A TCP socket of this machine listens on port (/proc/net/tcp)."""
    want = f":{port:04X} "
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for line in open(f).read().splitlines()[1:]:
                cols = line.split()
                if cols[1].endswith(want.strip()) and cols[3] == "0A":
                    return True
        except OSError:
            pass
    return False


def run_pair(run, srv_argv, cli_argv, ready, env, timeout):
    """The server on slot 0, once ready() the client on slot 1: the
    client's CompletedProcess, the server's Popen (ended) and its output."""
    t0 = time.monotonic()
    srv = subprocess.Popen(run + ["--slot", "0", "--"] + srv_argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=env)
    while not ready() and srv.poll() is None and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    try:
        cli = subprocess.run(run + ["--slot", "1", "--"] + cli_argv, capture_output=True,
                             text=True, timeout=timeout, env=env)
        sout, _ = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, _ = srv.communicate()
        cli = subprocess.CompletedProcess(cli_argv, -1, "", "timed out")
    return cli, srv, sout


def pair(run, argv, port, env, timeout=TIMEOUT):
    """A program's server (its TCP exchange on port) and its client."""
    argv = argv + ["-p", str(port)]
    return run_pair(run, argv, argv + ["localhost"], lambda: listening(port), env, timeout)


def cm_pair(run, work, srv_argv, cli_argv, port, env, timeout=TIMEOUT):
    """As pair(), for programs that meet by RDMA CM ({p}: the port): no
    TCP port to wait for; the server's runtime is up once its slot's lock
    is taken (and half a second on, it listens), our CM holds a REQ that
    comes before its listener (req_hold_ns), and the client's CM asks
    again while the server's port is not up yet."""
    fill = lambda argv: [a.replace("{p}", str(port)) for a in argv]
    since = []

    def ready():
        if not any(f.endswith("-0.lock") for f in os.listdir(work)):
            return False
        since.append(time.monotonic())
        return since[-1] - since[0] >= 0.5
    return run_pair(run, fill(srv_argv), fill(cli_argv), ready, env, timeout)


def verdict(name, t0, want, cli, srv, sout):
    """A pair's line (ok, or FAIL with both outputs): 1 if it failed."""
    ok = (cli.returncode == 0 and srv.returncode == 0 and
          re.search(want, cli.stdout, re.M) is not None)
    line = next((l for l in cli.stdout.splitlines() if re.search(want, l)), "")
    print(("ok  " if ok else "FAIL") + f" {name} ({time.monotonic() - t0:.1f} s) "
          f"{' '.join(line.split()[:5])}")
    if not ok:
        print(f"client exit {cli.returncode}:\n{cli.stdout[-2500:]}{cli.stderr[-1500:]}"
              f"\nserver exit {srv.returncode}:\n{sout[-2500:]}")
    return 0 if ok else 1


def chosen(rows):
    """The rows whose name ET_VERBS_ONLY (a regular expression) matches, if set."""
    only = os.environ.get("ET_VERBS_ONLY")
    return [r for r in rows if not only or re.search(only, r[0])]


def main():
    src, build, work = sys.argv[1:4]
    missing = [p for p in ("ibv_devices", "ibv_rc_pingpong", "ib_write_bw") if not shutil.which(p)]
    if missing:
        print(f"skip: no {', '.join(missing)} (Debian: ibverbs-utils, perftest)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run = [os.path.join(src, "scripts", "ethereal-run"), "--build", build,
           "--dev", memif(work, "h%d", "client", 0), "--rundir", work, "--yield"]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    bad = 0
    # every program of the suite binds every symbol to our library
    libs = os.path.join(build, "verbs")
    cm_pairs = CM_PAIRS if os.path.exists(f"{libs}/librdmacm.so.1") and shutil.which("rping") \
        else []
    if not cm_pairs:
        print("skip the RDMA CM pairs: no librdmacm of ours built (librdmacm-dev) or no rping "
              "(rdmacm-utils)")
    ucx = UCX if shutil.which("ucx_perftest") else []
    if not ucx:
        print("skip the UCX pairs: no ucx_perftest (ucx-utils)")
    # UCX's verbs transports are a module it loads: that is what links libibverbs
    uct_ib = sorted(glob.glob("/usr/lib/*/ucx/libuct_ib.so.0"))[:1] if ucx else []
    for p in sorted({shutil.which(c[1][0]) for c in PAIRS + SINGLES + cm_pairs}) + uct_ib:
        r = subprocess.run(["ldd", "-r", p], capture_output=True, text=True,
                           env=dict(env, LD_LIBRARY_PATH=libs))
        ours = f"{libs}/libibverbs.so.1" in r.stdout and (
            "librdmacm.so.1" not in r.stdout or f"{libs}/librdmacm.so.1" in r.stdout)
        if r.returncode or "undefined symbol" in r.stdout + r.stderr or not ours:
            print(f"FAIL ldd -r {p}: {r.stdout[-500:]}{r.stderr[-500:]}")
            bad += 1
    rows = dict(singles=chosen(SINGLES), pairs=chosen(PAIRS), cm=chosen(cm_pairs),
                ucx=chosen(ucx))
    sw = Switch(build, work, prefix="vbsw")
    try:
        bad += run_rows(run, work, env, rows, 0)
    finally:
        log = sw.stop()
    bad += sw.ended_by_itself
    if bad:
        print(log[-3000:])
    n = sum(len(r) for r in rows.values())
    # what a few of them put on the wire, again through a switch that
    # captures every port: Wireshark's dissector and the ICRC's arithmetic
    kept = {k: [r for r in v if r[0] in CAPTURED] for k, v in rows.items()}
    if any(kept.values()):
        bad += frames_check(build, work, run, env, kept)
        n += 1
    print(f"verbs: {n - bad} of {n} ok")
    return 1 if bad else 0


def run_rows(run, work, env, rows, port0):
    """Each row of rows (singles, pairs, cm, ucx), its line printed; how
    many failed.  port0 moves the TCP and RDMA CM ports of a second round."""
    bad = 0
    for name, argv, want in rows["singles"]:
        t0 = time.monotonic()
        r = subprocess.run(run + ["--slot", "0", "--"] + argv, capture_output=True, text=True,
                           timeout=TIMEOUT, env=env)
        ok = r.returncode == 0 and re.search(want, r.stdout, re.M)
        print(("ok  " if ok else "FAIL") + f" {name} ({time.monotonic() - t0:.1f} s)")
        if not ok:
            bad += 1
            print(r.stdout[-2000:], r.stderr[-2000:])
    for name, argv, want in rows["pairs"]:
        t0 = time.monotonic()
        port = 18600 + port0 + PAIRS.index((name, argv, want))
        bad += verdict(name, t0, want, *pair(run, argv, port, env))
    for name, sargv, cargv, want in rows["cm"]:
        t0 = time.monotonic()
        port = 18700 + port0 + CM_PAIRS.index((name, sargv, cargv, want))
        bad += verdict(name, t0, want, *cm_pair(run, work, sargv, cargv, port, env))
    for name, tls, cargs in rows["ucx"]:
        t0 = time.monotonic()
        port = 18800 + port0 + UCX.index((name, tls, cargs))
        uenv = dict(env, UCX_TLS=tls, UCX_NET_DEVICES="ethereal0:1",
                    UCX_WARN_UNUSED_ENV_VARS="n")
        srv = ["ucx_perftest", "-p", str(port)]
        iters = cargs[cargs.index("-n") + 1]
        bad += verdict(name, t0, rf"^Final:\s+{iters}\s", *run_pair(
            run, srv, srv + cargs + ["localhost"], lambda p=port: listening(p), uenv, TIMEOUT))
    return bad


def frames_check(build, work, run, env, rows):
    """rows run again through a capturing switch; then every RoCEv2 frame
    of the capture through tshark's InfiniBand dissector (nothing
    malformed, none it flags an error) and through tests/rxe/vm's ICRC
    check (the spec's arithmetic, scapy agreeing).  1 if anything failed."""
    t0 = time.monotonic()
    pcaps = os.path.join(work, "pcap")
    os.makedirs(pcaps, exist_ok=True)
    sw = Switch(build, work, prefix="vbcap", pcap=pcaps)
    try:
        bad = run_rows(run, work, env, rows, 50)
    finally:
        log = sw.stop()
    files = sorted(glob.glob(os.path.join(pcaps, "*.pcapng")))
    why = []
    if bad or not files:
        why.append(f"the captured rows: {bad} failed, {len(files)} captures")
    # a payload is the program's bytes: the dissector's guess at what it
    # carries (Ethernet, RPC over RDMA, ...) is no part of the frame
    off = ["-o", "infiniband.identify_payload:FALSE"]
    # the decoders are not ours: without the sanitizers' runtimes a caller
    # preloads (editcap hung in a futex under them), and each given a time
    tools = dict(os.environ)
    tools.pop("LD_PRELOAD", None)

    def tool(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, env=tools, timeout=300)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv, -1, "", f"{argv[0]}: no end in 300 s")
    for f in files:
        r = tool(["tshark", "-n", "-r", f, "-d", "udp.port==4791,infiniband"] + off +
                 ["-T", "fields", "-e", "frame.number", "-e", "infiniband.bth.opcode",
                  "-e", "_ws.malformed", "-e", "_ws.expert.severity"])
        lines = [l.split("\t") for l in r.stdout.splitlines()]
        roce = [l for l in lines if len(l) > 1 and l[1]]
        broken = [l[0] for l in lines if len(l) > 3 and (l[2] or "8388608" in l[3])]
        if r.returncode or not roce or broken:
            why.append(f"tshark on {os.path.basename(f)}: rc {r.returncode}, {len(roce)} RoCE "
                       f"frames, malformed or in error: {broken[:10]} {r.stderr[-300:]}")
        r = tool(["editcap", "-F", "pcap", f, f[:-len("ng")]])
        if r.returncode:
            why.append(f"editcap on {os.path.basename(f)}: {r.stderr[-300:]}")
    # Debian's python, where python3-scapy is
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    r = tool([py, os.path.join(HERE, "rxe", "vm", "icrc_check.py")] +
             [f[:-len("ng")] for f in files])
    print(f"    {r.stdout.strip()}")
    if r.returncode:
        why.append(f"the ICRC check: {r.stdout[-500:]}{r.stderr[-500:]}")
    ok = not why
    print(("ok  " if ok else "FAIL") + f" frames: {len(files)} captures through tshark and the "
          f"ICRC ({time.monotonic() - t0:.1f} s)")
    for w in why:
        print("   ", w)
    if ok:
        shutil.rmtree(pcaps)
    else:
        print(log[-2000:])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
