#!/usr/bin/python3
"""Bad confs, workloads and arguments, as a table: each class (missing file,
not INI, unknown section, unknown key, wrong type, out of range,
inconsistent topology, a value the program cannot use) for every section of
a fabric conf, bad workload files and bad command lines of ethereal-fabric
and ethereal-paths.  Each must give exactly one message line naming the
file, section and key (or the option) and what was expected, write nothing
to stdout, run nothing, and exit with status 2, as README says.

check_errors.py ETHEREAL_FABRIC ETHEREAL_PATHS WORKDIR
"""
import os
import subprocess
import sys

EAL = ["--no-huge", "--no-shconf", "--no-pci", "-m", "1024", "-l", "0", "--no-telemetry",
       "--log-level=error", "--"]
TOPO = "[topology]\nkind = leaf-spine\nleaves = 2\nspines = 2\nhosts-per-leaf = 2\n"
GOOD = TOPO + "[run]\nsize = 64K\n"
MISSING = None  # the conf does not exist

# (what, conf text, extra args, workload text or None, wanted substrings);
# FILE in a wanted substring stands for the conf's path, WL for the workload's.
FABRIC = [
    # the file itself
    ("missing file", MISSING, [], None, ["FILE", "cannot read"]),
    ("not INI", TOPO + "[link\nrate-gbps = 100\n", [], None,
     ["FILE:6: expected '[section]' or 'key = value'", "'[link'"]),
    ("unknown section", TOPO + "[links]\nrate-gbps = 100\n", [], None,
     ["FILE: [links]: unknown section", "topology, link, switch, transport, lb, run"]),
    # [topology]
    ("no [topology]", "[link]\nrate-gbps = 100\n", [], None, ["FILE: [topology]", "missing"]),
    ("topology: unknown key", TOPO + "leafs = 2\n", [], None,
     ["FILE: [topology] leafs", "unknown key"]),
    ("topology: wrong type", TOPO.replace("spines = 2", "spines = two"), [], None,
     ["FILE: [topology] spines", "'two'"]),
    ("topology: out of range", TOPO.replace("leaves = 2", "leaves = 0"), [], None,
     ["FILE: [topology] leaves", "got '0'"]),
    ("topology: bad kind", TOPO.replace("leaf-spine", "torus"), [], None,
     ["FILE: [topology] kind", "leaf-spine", "'torus'"]),
    ("topology: inconsistent", TOPO + "links-per-pair = 200\n", [], None,
     ["FILE: [topology]", "inconsistent topology"]),
    ("topology: too many ports", TOPO + "links-per-pair = 40\n", [], None,
     ["FILE: [topology]", "would have 82 ports", "at most 64"]),
    # a core's route to every ToR of 64 pods of 3 (aggregated, 128)
    ("topology: too many routes", "[topology]\nkind = fat-tree\npods = 64\ntors-per-pod = 3\n"
     "aggs-per-pod = 1\ncores-per-agg = 1\nhosts-per-tor = 1\n", [], None,
     ["FILE: [topology]", "a core would need 128 routes", "at most 64", "tors-per-pod a power of two"]),
    # [link]
    ("link: unknown key", TOPO + "[link]\nrate = 100\n", [], None,
     ["FILE: [link] rate", "unknown key", "rate-gbps"]),
    ("link: wrong type", TOPO + "[link]\nrate-gbps = fast\n", [], None,
     ["FILE: [link] rate-gbps", "'fast'"]),
    ("link: out of range", TOPO + "[link]\nlatency-ns = 2000000000\n", [], None,
     ["FILE: [link] latency-ns", "'2000000000'"]),
    ("link: latency 0", TOPO + "[link]\nlatency-ns = 0\n", [], None,
     ["FILE: [link] latency-ns", "1..10000000", "'0'"]),
    ("link: a round trip beyond the RTO", TOPO + "[link]\nlatency-ns = 1000000\n", [], None,
     ["FILE: [link] latency-ns", "every packet would time out", "at most 124956"]),
    ("link: bad mtu", TOPO + "[link]\nmtu = 9000\n", [], None,
     ["FILE: [link] mtu", "4096", "'9000'"]),
    ("link: fault out of range", TOPO + "[link]\nloss-ppm = 2000000\n", [], None,
     ["FILE: [link] loss-ppm", "'2000000'"]),
    ("link: negative fault", TOPO + "[link]\ndup-ppm = -5\n", [], None,
     ["FILE: [link] dup-ppm", "'-5'"]),
    # [switch]
    ("switch: unknown key", TOPO + "[switch]\nmode = ecmp\n", [], None,
     ["FILE: [switch] mode", "unknown key"]),
    ("switch: wrong type", TOPO + "[switch]\nbuffer = lots\n", [], None,
     ["FILE: [switch] buffer", "'lots'"]),
    ("switch: bad switch", TOPO + "[switch]\npfc = yes\n", [], None,
     ["FILE: [switch] pfc", "off, on", "'yes'"]),
    ("switch: out of range", TOPO + "[switch]\nmax-frame = 10\n", [], None,
     ["FILE: [switch] max-frame", "'10'"]),
    ("switch: alpha out of range", TOPO + "[switch]\ndt-alpha = 100\n", [], None,
     ["FILE: [switch] dt-alpha", "'100'"]),
    ("switch: buffer too small for PFC", TOPO + "[switch]\npfc = on\nbuffer = 16K\n", [], None,
     ["FILE: [switch] buffer", "pfc = on", "4 ports", "at least"]),
    # [transport]
    ("transport: unknown key", TOPO + "[transport]\nrto = 5\n", [], None,
     ["FILE: [transport] rto", "unknown key"]),
    ("transport: out of range", TOPO + "[transport]\nretry-cnt = 8\n", [], None,
     ["FILE: [transport] retry-cnt", "'8'"]),
    ("transport: wrong type", TOPO + "[transport]\ndctcp-g = 1/16\n", [], None,
     ["FILE: [transport] dctcp-g", "'1/16'"]),
    ("transport: zero", TOPO + "[transport]\nrto-us = 0\n", [], None,
     ["FILE: [transport] rto-us", "'0'"]),
    ("transport: bad dctcp", TOPO + "[transport]\ndctcp = fast\n", [], None,
     ["FILE: [transport] dctcp", "off, on, rate", "'fast'"]),
    # [lb]
    ("lb: unknown key", TOPO + "[lb]\nbatch = 5\n", [], None,
     ["FILE: [lb] batch", "unknown key"]),
    ("lb: bad policy", TOPO + "[lb]\npolicy = magic\n", [], None,
     ["FILE: [lb] policy", "ethereal, ecmp", "'magic'"]),
    ("lb: bad mprdma", TOPO + "[lb]\npolicy = mprdma:0\n", [], None,
     ["FILE: [lb] policy", "1..64"]),
    ("lb: wrong type", TOPO + "[lb]\nbatch-ns = soon\n", [], None,
     ["FILE: [lb] batch-ns", "'soon'"]),
    # [run]
    ("run: unknown key", TOPO + "[run]\ncollectives = alltoall\n", [], None,
     ["FILE: [run] collectives", "unknown key"]),
    ("run: bad collective", TOPO + "[run]\ncollective = broadcast\n", [], None,
     ["FILE: [run] collective", "alltoall", "'broadcast'"]),
    ("run: bad algo", TOPO + "[run]\nalgo = fastest\n", [], None,
     ["FILE: [run] algo", "a2a, rd", "'fastest'"]),
    ("run: bad size", TOPO + "[run]\nsize = lots\n", [], None,
     ["FILE: [run] size", "byte count", "'lots'"]),
    ("run: bad clock", TOPO + "[run]\nclock = wall\n", [], None,
     ["FILE: [run] clock", "virtual or real", "'wall'"]),
    ("run: bad fail", TOPO + "[run]\nfail = x.y\n", [], None,
     ["FILE: [run] fail", "SWITCH.UPLINK", "'x.y'"]),
    ("run: fail of a missing link", TOPO + "[run]\nfail = 0.7\n", [], None,
     ["FILE: [run] fail", "expected ToR 0..1, uplink 0..1", "'0.7'"]),
    ("run: seed out of range", TOPO + "[run]\nseed = 5000000000\n", [], None,
     ["FILE: [run] seed", "'5000000000'"]),
    ("run: zero time limit", TOPO + "[run]\ntime-limit-ms = 0\n", [], None,
     ["FILE: [run] time-limit-ms", "'0'"]),
    ("run: too few mbufs", TOPO + "[run]\nmbufs = 256\n", [], None,
     ["FILE: [run] mbufs", "256: at least"]),
    # rte_cfgfile reads the first of two keys and never a second section
    ("key given twice", TOPO + "leaves = 4\n", [], None,
     ["FILE:6: [topology] leaves: set a second time (first at line 3)"]),
    ("section given twice", GOOD + "[run]\nseed = 3\n", [], None,
     ["FILE:8: [run]: a second section of this name (the first at line 6)"]),
    # memory: what the run takes at least, against what the machine has,
    # before anything starts (256 hosts, each with 1 GB to verify)
    ("memory refused up front", TOPO.replace("leaves = 2", "leaves = 16")
     .replace("hosts-per-leaf = 2", "hosts-per-leaf = 16"), ["--size", "1G", "--verify"], None,
     ["the run needs at least", "MB of payload (--verify: every host its own)", "MB available"]),
    # the command line overrides the conf, and is named when it is wrong
    ("cli beats conf", TOPO + "[run]\nalgo = ring\n", ["--algo", "fastest"], None,
     ["--algo: expected", "'fastest'"]),
    # workloads: checked whole before anything runs
    ("workload: missing", GOOD, ["--workload", "WL.missing"], None, ["WL.missing", "No such file"]),
    ("workload: bad line", GOOD, ["--workload", "WL"], "alltoall 1M\n# fine\nallreduce\n", ["WL:3",
     "expected 'KIND SIZE'", "'allreduce'"]),
    ("workload: bad kind", GOOD, ["--workload", "WL"], "broadcast 1M\n", ["WL:1", "'broadcast 1M'"]),
    ("workload: extra field", GOOD, ["--workload", "WL"], "alltoall 1M 2\n", ["WL:1"]),
    ("workload: empty", GOOD, ["--workload", "WL"], "# nothing\n\n", ["WL", "no collectives"]),
    # every line's collective checked before the first runs, FILE:LINE
    ("workload: a2a-only line", GOOD, ["--workload", "WL", "--algo", "ring", "--check"],
     "allreduce 1000\nalltoall 1M\n",
     ["WL:2: alltoall by ring of 1048576 bytes over 4 ranks", "needs algo a2a"]),
    ("workload: allreduce-only algo", GOOD, ["--workload", "WL", "--algo", "rd-far"],
     "allreduce 64K\n# then\nreducescatter 1001\n",
     ["WL:3: reducescatter by rd-far", "rd-far is an allreduce algorithm only"]),
    # traces (--trace, lib/coll/et_trace.h): checked whole, every collective
    # built with --algo, before anything runs; WL is the trace's path here
    ("trace: missing", GOOD, ["--trace", "WL.missing"], None, ["--trace WL.missing", "No such file"]),
    ("trace: unknown line", GOOD, ["--trace", "WL"], "ranks 4\n# fine\nbarrier b\n",
     ["WL:3: unknown line 'barrier'", "compute or comm"]),
    ("trace: ranks first", GOOD, ["--trace", "WL"], "compute a 1us\n", ["WL:1:", "'ranks N' must come first"]),
    ("trace: bad duration", GOOD, ["--trace", "WL"], "ranks 4\ncompute a 5 us\n",
     ["WL:2: a: duration '5'", "ns, us or ms"]),
    ("trace: unknown dependency", GOOD, ["--trace", "WL"], "ranks 4\ncompute a 1us after b\n",
     ["WL:2: a: depends on 'b'", "no node defined above"]),
    ("trace: dependency below", GOOD, ["--trace", "WL"],
     "ranks 4\ncompute a 1us after b\ncompute b 1us\n", ["WL:2:", "'b'"]),
    ("trace: unknown group", GOOD, ["--trace", "WL"],
     "ranks 4\ngroup mp 2 1\ncomm c allreduce 1M dp\n", ["WL:3: c: no group 'dp'"]),
    ("trace: group does not divide", GOOD, ["--trace", "WL"], "ranks 4\ngroup mp 3 1\n",
     ["WL:2: group mp", "must divide the 4 ranks"]),
    ("trace: duplicate name", GOOD, ["--trace", "WL"], "ranks 4\ncompute a 1us\ncompute a 1us\n",
     ["WL:3: 'a' is defined twice"]),
    ("trace: no nodes", GOOD, ["--trace", "WL"], "ranks 4\ngroup all 4 1\n", ["WL: no nodes"]),
    ("trace: other fabric", GOOD, ["--trace", "WL"], "ranks 16\ncompute a 1us\n",
     ["WL: the trace is for 16 ranks", "has 4 hosts"]),
    ("trace: algo cannot", GOOD, ["--trace", "WL", "--algo", "dbt"],
     "ranks 4\ngroup all 4 1\ncomm c allgather 1M all\n",
     ["WL:3: c (group all): allgather by dbt of 1048576 bytes over 4 ranks",
      "dbt is an allreduce algorithm only"]),
    ("trace: alltoall by rd, --check", GOOD, ["--trace", "WL", "--algo", "rd", "--check"],
     "ranks 4\ngroup one 1 1\ngroup all 4 1\ncomm a allreduce 1000 one\n"
     "comm c alltoall 1001 all after a\n",
     ["WL:5: c (group all): alltoall by rd of 1001 bytes over 4 ranks", "needs algo a2a"]),
    ("trace: with --verify", GOOD, ["--trace", "WL", "--verify"], "ranks 4\ncompute a 1us\n",
     ["--trace: --verify"]),
    ("trace: with --workload", GOOD, ["--trace", "WL", "--workload", "WL"], "ranks 4\ncompute a 1us\n",
     ["--trace and --workload"]),
    # command-line arguments
    ("cli: no --config", None, [], None, ["--config FILE is required"]),
    ("cli: unknown option", GOOD, ["--bogus"], None, ["--bogus: unknown option"]),
    ("cli: missing value", GOOD, ["--size"], None, ["--size: expected a value"]),
    ("cli: bad lb", GOOD, ["--lb", "magic"], None,
     ["--lb: expected ethereal, ecmp, mprdma:X, spray, reps or reps:flow"]),
    ("cli: bad mprdma", GOOD, ["--lb", "mprdma:0"], None, ["mprdma:X: X must be 1..64"]),
    ("cli: bad reps", GOOD, ["--lb", "reps:fast"], None, ["reps:ARG: only reps:flow"]),
    ("cli: bad algo", GOOD, ["--algo", "fastest"], None, ["--algo: expected"]),
    ("cli: bad collective", GOOD, ["--collective", "broadcast"], None, ["--collective: expected"]),
    ("cli: bad size", GOOD, ["--size", "lots"], None, ["--size: expected"]),
    ("cli: bad clock", GOOD, ["--clock", "wall"], None, ["--clock: expected"]),
    ("cli: bad fail", GOOD, ["--fail", "x.y"], None, ["--fail: expected"]),
    ("cli: bad fail time", GOOD, ["--fail", "0.0@soon"], None, ["--fail: expected a time"]),
    ("cli: fail of a missing link", GOOD, ["--fail", "9.9@0"], None,
     ["--fail: expected ToR 0..1, uplink 0..1", "'9.9'"]),
    ("cli: fail of an aggregation switch", GOOD, ["--fail", "agg:0.0"], None,
     ["--fail: expected tor:SWITCH.UPLINK", "no aggregation switches"]),
    ("cli: json into no folder", GOOD, ["--json", "/nonexistent/x.json"], None,
     ["--json: cannot write /nonexistent/x.json: No such file or directory"]),
    ("cli: pcap folder impossible", GOOD, ["--pcap", "/proc/no/such"], None,
     ["--pcap: cannot create /proc/no"]),
    # what cannot run, refused before anything does (--check too)
    ("cli: alltoall by rd", GOOD, ["--collective", "alltoall", "--algo", "rd", "--check"], None,
     ["alltoall by rd of 65536 bytes over 4 ranks", "alltoall needs algo a2a"]),
    ("cli: alltoall by ring", GOOD, ["--collective", "alltoall", "--algo", "ring"], None,
     ["alltoall by ring", "needs algo a2a"]),
    ("cli: alltoall by dbt", GOOD, ["--collective", "alltoall", "--algo", "dbt", "--check"], None,
     ["alltoall by dbt", "needs algo a2a"]),
    ("cli: allgather by dbt", GOOD, ["--collective", "allgather", "--algo", "dbt", "--check"],
     None, ["allgather by dbt", "dbt is an allreduce algorithm only"]),
    ("cli: reducescatter by rd-far", GOOD, ["--collective", "reducescatter", "--algo", "rd-far",
                                            "--check"], None,
     ["reducescatter by rd-far", "rd-far is an allreduce algorithm only"]),
    ("cli: over 4 GiB per rank", GOOD, ["--size", "4G", "--check"], None,
     ["allreduce by a2a of 4294967296 bytes over 4 ranks", "at most 4 GiB - 1 per rank"]),
    ("cli: dbt's chunks too many", GOOD + "chunk = 64\n", ["--algo", "dbt", "--size", "1G",
                                                          "--check"], None,
     ["allreduce by dbt", "too many chunks"]),
    ("cli: bad dtype", GOOD, ["--dtype", "int16"], None, ["--dtype (-d): expected", "'int16'"]),
    ("cli: bad op", GOOD, ["--op", "mean"], None, ["--op (-o): expected", "'mean'"]),
    ("cli: negative seed", GOOD, ["--seed", "-1"], None, ["--seed: expected"]),
    ("cli: fault without value", GOOD, ["--fault", "loss=5"], None, ["--fault: expected KEY=VALUE"]),
    ("cli: fault out of range", GOOD, ["--fault", "dup-ppm=2000000"], None,
     ["--fault: expected a whole number in range"]),
    ("cli: stray argument", GOOD, ["stray"], None, ["expected options only", "'stray'"]),
]

PATHS = [
    ("paths: no --config", None, [], ["--config FILE is required"]),
    ("paths: missing file", MISSING, [], ["FILE", "cannot read"]),
    ("paths: bad topology", TOPO.replace("leaves = 2", "leaves = x"), [],
     ["FILE: [topology] leaves", "'x'"]),
    ("paths: bad host", GOOD, ["--src", "one"], ["--src: expected a host number", "'one'"]),
    ("paths: host out of range", GOOD, ["--dst", "99"], ["expected two different hosts in 0..3"]),
    ("paths: same host", GOOD, ["--src", "1", "--dst", "1"], ["two different hosts"]),
    ("paths: stray argument", GOOD, ["extra"], ["unexpected argument"]),
]


class Checker:
    def __init__(self):
        self.total = self.fails = 0

    def check(self, ok, what, detail=""):
        self.total += 1
        self.fails += not ok
        print(("ok   " if ok else "FAIL ") + what + ("" if ok else "\n" + detail), flush=True)


def prepare(work, i, text, workload):
    """The conf and workload of case i; FILE/WL substitutions."""
    conf = os.path.join(work, f"case{i}.ini")
    wl = os.path.join(work, f"case{i}.workload")
    for path, body in ((conf, text), (wl, workload)):
        if os.path.exists(path):
            os.unlink(path)
        if body is not None:
            with open(path, "w") as f:
                f.write(body)
    return conf, wl


def judge(c, what, prog, r, want, conf, wl):
    want = [w.replace("FILE", conf).replace("WL", wl) if "FILE is" not in w else w
            for w in want]
    err = r.stderr.strip().splitlines()
    ours = [line for line in err if line.startswith(prog + ":")]
    lacks = [w for w in want if w not in r.stderr]
    ok = (r.returncode == 2 and not lacks and len(ours) == 1 and r.stdout.strip() == ""
          and "Sanitizer" not in r.stderr)
    c.check(ok, f"{what}: {ours[0] if ours else r.stderr.strip()[:120]}",
            f"exit {r.returncode}; lacks {lacks}; {len(ours)} message lines\n"
            f"stdout: {r.stdout[:400]}\nstderr: {r.stderr[:1200]}")


def main():
    fabric, paths, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    c = Checker()
    for i, (what, text, args, workload, want) in enumerate(FABRIC):
        conf, wl = prepare(work, i, text, workload)
        args = [a.replace("WL", wl) for a in args]
        cmd = [fabric] + EAL + (["--config", conf] if what != "cli: no --config" else []) + args
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        judge(c, what, "ethereal-fabric", r, want, conf, wl)
    for i, (what, text, args, want) in enumerate(PATHS):
        conf, wl = prepare(work, 1000 + i, text, None)
        cmd = [paths] + (["--config", conf] if what != "paths: no --config" else []) + args
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
        judge(c, what, "ethereal-paths", r, want, conf, wl)
    print(f"{c.total - c.fails} passed, {c.fails} failed")
    sys.exit(1 if c.fails else 0)


if __name__ == "__main__":
    main()
