#!/usr/bin/python3
"""Debian's perftest on our libibverbs (verbs/, under scripts/ethereal-run)
against the endpoint it runs on, on the same memif link in the same run:
two processes joined through one ethereal-switch (slots 0 and 1), every
process yielding when idle, as bench/fi_bench.py runs the provider:

  ib_write_bw -s 1 MB            vs  ethereal-node write_bw 1 MB
  ib_send_lat -s 8 B and 4 KB    vs  ethereal-node pingpong
  ib_write_bw -R 1 MB, ib_send_lat -R 8 B (our librdmacm) vs the same
                                     without -R
  ucx_perftest tag_bw 1 MB (UCX rc_verbs) vs  the provider's fi_rdm_tagged_bw 1 MB
                                     (fabtests, where built)

Each figure is a ratio to its reference (issue 47's goals: bandwidth
>= 0.9x, latency <= 1.2x): the median of ROUNDS rounds' ratios, each
round running the pair one after the other (three polling processes on
two cores: a round's figures drift together, its ratio less).  ITERS
(default 2000) 1 MB messages a bandwidth row, ten times as many round
trips a latency row: 200 took 0.2 s, start-up's noise (0.59 at 200, 0.78
at 2000 on one machine).  Latencies are mean round trips: ib_send_lat's
t_avg is half of one.  One JSON object, every round's figures in *_all;
without perftest it says so and measures nothing.

  verbs_bench.py SRC_ROOT BUILD_ROOT [ITERS] [ROUNDS]
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from check_verbs import cm_pair, listening, pair, run_pair  # noqa: E402
from fi_bench import fi_pair, node_pair, put_medians  # noqa: E402
from fi_switch import Switch, memif  # noqa: E402

PERF = ["-x", "1", "-d", "ethereal0"]


def perftest(run, env, argv, port, work=None):
    """The client's result row: the numbers of its one line of figures
    (work given: by RDMA CM, -R)."""
    if work:
        argv = argv + ["-R", "-p", "{p}"]
        cli, srv, sout = cm_pair(run, work, argv, argv + ["10.0.0.1"], port, env, timeout=300)
    else:
        cli, srv, sout = pair(run, argv, port, env, timeout=300)
    rows = [ln.split() for ln in cli.stdout.splitlines()
            if re.match(r"^\s+\d+\s+\d+\s+[\d.]+", ln)]
    if cli.returncode or srv.returncode or not rows:
        raise RuntimeError(f"{argv[0]}: {cli.stdout[-800:]} {cli.stderr[-500:]} {sout[-500:]}")
    return [float(x) for x in rows[-1]]


def ucx_tag_bw(run, env, size, iters, port):
    """ucx_perftest tag_bw over UCX's rc_verbs on ethereal0: Gbit/s (its
    MB/s are 2^20 bytes)."""
    uenv = dict(env, UCX_TLS="rc_verbs,ud_verbs", UCX_NET_DEVICES="ethereal0:1",
                UCX_WARN_UNUSED_ENV_VARS="n")
    srv = ["ucx_perftest", "-p", str(port)]
    cli, s, sout = run_pair(run, srv, srv + ["-t", "tag_bw", "-s", str(size), "-n", str(iters),
                                             "localhost"],
                            lambda: listening(port), uenv, 300)
    m = re.search(r"^Final:\s+\d+\s+\S+\s+\S+\s+\S+\s+(\S+)", cli.stdout, re.M)
    if cli.returncode or s.returncode or not m:
        raise RuntimeError(f"ucx_perftest: {cli.stdout[-800:]} {cli.stderr[-500:]} {sout[-500:]}")
    return float(m.group(1)) * (1 << 20) * 8 / 1e9


def main():
    src, build = sys.argv[1], sys.argv[2]
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    out = {"iters": iters, "rounds": rounds}
    if not shutil.which("ib_write_bw"):
        out["skipped"] = "no perftest (Debian: perftest)"
        print(json.dumps(out, indent=1))
        return 0
    got = {}

    def put(k, v):
        got.setdefault(k, []).append(v)

    with tempfile.TemporaryDirectory() as work:
        run = [os.path.join(src, "scripts", "ethereal-run"), "--build", build,
               "--dev", memif(work, "h%d", "client", 0, zc=True), "--rundir", work, "--yield"]
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        port = 18700 + os.getpid() % 1000
        bin_dir = os.path.join(build, "tests", "fabtests", "bin")
        have_ucx = (shutil.which("ucx_perftest") is not None and
                    os.path.exists(os.path.join(bin_dir, "fi_rdm_tagged_bw")))
        sw = Switch(build, work, prefix="vbbsw")
        try:
            for _ in range(rounds):
                if have_ucx:
                    put("ucx_tag_bw_1m_gbps", ucx_tag_bw(run, env, 1 << 20, iters, port + 1))
                    r = fi_pair(bin_dir, build, work, "fi_rdm_tagged_bw",
                                ["-S", "1048576", "-I", str(iters)])
                    put("fi_tagged_bw_1m_gbps", r["mb_per_s"] * 8 / 1e3)
                put("node_write_bw_1m_gbps", node_pair(
                    build, work, ["--mode", "write_bw", "--size", "1M", "--qps", "1",
                                  "--iters", str(iters)], "bw")["gbps"])
                # #bytes #iterations BW peak BW average MsgRate: Gbit/s
                r = perftest(run, env, ["ib_write_bw"] + PERF + [
                    "-s", "1048576", "-n", str(iters), "--report_gbits"], port)
                put("ib_write_bw_1m_gbps", r[3])
                r = perftest(run, env, ["ib_write_bw"] + PERF + [
                    "-s", "1048576", "-n", str(iters), "--report_gbits"], port, work)
                put("ib_write_bw_r_1m_gbps", r[3])
                r = perftest(run, env, ["ib_send_lat"] + PERF + [
                    "-s", "8", "-n", str(iters * 10)], port, work)
                put("ib_send_lat_r_8_rtt_us", 2 * r[5])
                for size in (8, 4096):
                    j = node_pair(build, work, ["--mode", "pingpong", "--size", str(size),
                                                "--iters", str(iters * 10)], f"pp{size}")
                    put(f"node_pingpong_{size}_rtt_us", j["seconds"] / j["messages"] * 1e6)
                    # #bytes #iterations t_min t_max t_typical t_avg ...: usec, one way
                    r = perftest(run, env, ["ib_send_lat"] + PERF + [
                        "-s", str(size), "-n", str(iters * 10)], port)
                    put(f"ib_send_lat_{size}_rtt_us", 2 * r[5])
        finally:
            sw.stop()
    ratios = [("ib_write_bw_1m_ratio", "ib_write_bw_1m_gbps", "node_write_bw_1m_gbps"),
              ("ib_write_bw_r_vs_plain", "ib_write_bw_r_1m_gbps", "ib_write_bw_1m_gbps"),
              ("ib_send_lat_r_8_vs_plain", "ib_send_lat_r_8_rtt_us", "ib_send_lat_8_rtt_us"),
              ("ucx_tag_bw_1m_vs_fi", "ucx_tag_bw_1m_gbps", "fi_tagged_bw_1m_gbps")] + [
        (f"ib_send_lat_{n}_ratio", f"ib_send_lat_{n}_rtt_us", f"node_pingpong_{n}_rtt_us")
        for n in (8, 4096)]
    for name, a, b in ratios:
        if a in got:
            got[name] = [x / y for x, y in zip(got[a], got[b])]
    put_medians(out, got)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
