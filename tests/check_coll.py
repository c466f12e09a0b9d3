#!/usr/bin/python3
"""ethereal-coll on bad input and lost peers.

Bad command lines and confs: exit 2, one message line naming the option
(or the conf's key) and what was expected, nothing on stdout.  A trace for
another fabric, or verified, or with a bad line: the same.  A collective
that cannot run (alltoall other than by a2a, dbt or rd-far other than
allreduce, sizes that never grow or too many): refused while parsing, exit
2 and one line, before the bootstrap (--root names a port nobody listens
on: a rank that got that far would wait for its timeout), and the same by
--dry-run, which needs no port.  A rank that
never comes: every other rank ends after --timeout-s, naming it (exit 1).
A peer that dies mid-run (SIGKILL): its peer ends at once, naming it
(exit 1), with no row of figures for the collective that did not end.

check_coll.py ETHEREAL_COLL WORKDIR
"""
import os
import signal
import subprocess
import sys
import time

EAL = ["--no-huge", "--no-pci", "-m", "256", "--no-telemetry",
       "--log-level=*:error"]
# two hosts under one leaf: a memif pair between them is the whole fabric
TWO = ("[topology]\nkind = leaf-spine\nleaves = 1\nspines = 1\nhosts-per-leaf = 2\n"
       "[transport]\nrto-us = 50000\n")


def coll(exe, eal, args, **kw):
    return subprocess.Popen([exe] + EAL + eal + ["--"] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    conf = os.path.join(work, "two.ini")
    with open(conf, "w") as f:
        f.write(TWO)
    base = ["--port", "net_null0", "--config", conf, "--root", "127.0.0.1:1"]
    R0 = ["--rank", "0", "--world", "2", "--timeout-s", "30"]
    null = ["-l", "0", "--vdev=net_null0", "--file-prefix=cc%d" % os.getpid()]
    bad = 0
    cases = [
        ("no --rank", base + ["--world", "2"], ["--rank and --world are required"]),
        ("rank out of range", base + ["--rank", "2", "--world", "2"], ["--rank 2", "0..1"]),
        ("world not the topology's", base + ["--rank", "0", "--world", "3"],
         ["--world 3", "2 hosts"]),
        ("bad root", base[:-2] + ["--root", "nohost", "--rank", "0", "--world", "2"],
         ["--root", "HOST:PORT", "'nohost'"]),
        ("bad root port", base[:-2] + ["--root", "h:99999", "--rank", "0", "--world", "2"],
         ["--root", "'h:99999'"]),
        ("sizes the wrong way", base + ["--rank", "0", "--world", "2", "-b", "2M", "-e", "1M"],
         ["-b", "-e"]),
        ("bad policy", base + ["--rank", "0", "--world", "2", "--lb", "magic"],
         ["--lb", "'magic'"]),
        ("unknown option", base + ["--rank", "0", "--world", "2", "--speed", "9"],
         ["--speed", "unknown option"]),
        ("bad conf key", ["--port", "net_null0", "--config", conf + ".bad", "--root",
                          "127.0.0.1:1", "--rank", "0", "--world", "2"],
         ["[transport] rto", "unknown key"]),
        ("a trace of another fabric", base + ["--rank", "0", "--world", "2", "--trace",
                                              conf + ".four.trace"],
         ["the trace is for 4 ranks", "2 hosts"]),
        ("a trace verified", base + ["--rank", "0", "--world", "2", "--trace",
                                     conf + ".two.trace", "--verify"], ["--trace", "--verify"]),
        ("a trace's bad line", base + ["--rank", "0", "--world", "2", "--trace",
                                       conf + ".bad.trace"], [".bad.trace:2"]),
        # refused up front: what no algorithm here can run
        ("alltoall by rd", base + R0 + ["--collective", "alltoall", "--algo", "rd"],
         ["alltoall by rd of 1048576 bytes over 2 ranks", "alltoall needs algo a2a"]),
        ("alltoall by ring", base + R0 + ["--collective", "alltoall", "--algo", "ring",
                                          "-b", "8", "-e", "64K", "-f", "4"],
         ["alltoall by ring of 8 bytes", "needs algo a2a"]),
        ("alltoall by dbt", base + R0 + ["--collective", "alltoall", "--algo", "dbt"],
         ["needs algo a2a"]),
        ("allgather by dbt", base + R0 + ["--collective", "allgather", "--algo", "dbt"],
         ["allgather by dbt", "dbt is an allreduce algorithm only"]),
        ("reducescatter by rd-far", base + R0 + ["--collective", "reducescatter", "--algo",
                                                 "rd-far", "-d", "half"],
         ["reducescatter by rd-far", "rd-far is an allreduce algorithm only"]),
        ("a size over 4 GiB - 1", base + R0 + ["--size", "4G"],
         ["--size", "0..4294967295", "'4G'"]),
        ("dbt's chunks too many", ["--port", "net_null0", "--config", conf + ".chunk",
                                   "--root", "127.0.0.1:1"] + R0 + ["--algo", "dbt",
                                                                    "--size", "1G"],
         ["allreduce by dbt of 1073741824 bytes", "too many chunks"]),
        ("a trace's alltoall by ring", base + R0 + ["--trace", conf + ".a2a.trace", "--algo",
                                                    "ring"],
         [".a2a.trace:3: x (group all): alltoall by ring", "needs algo a2a"]),
        ("sizes that never grow", base + R0 + ["-b", "0", "-e", "1M", "-f", "2"],
         ["-b 0 -f 2", "never grow"]),
        ("too many sizes", base + R0 + ["-b", "1", "-e", "1G", "-i", "1", "-d", "int8"],
         ["-b 1 -e 1073741824: more than 16384 collectives"]),
        ("bad dtype", base + R0 + ["-d", "float8"], ["--dtype (-d)", "bfloat16", "'float8'"]),
        ("bad op", base + R0 + ["-o", "mulsum"], ["--op (-o)", "'mulsum'"]),
        ("bad average", base + R0 + ["-a", "4"], ["-a", "'4'"]),
        ("bad check", base + R0 + ["-c", "yes"], ["-c", "'yes'"]),
        ("a dry run refuses the same", ["--config", conf, "--world", "2", "--dry-run",
                                        "--collective", "alltoall", "--algo", "ring"],
         ["alltoall by ring", "needs algo a2a"]),
        ("a dry run needs the world", ["--config", conf, "--dry-run"],
         ["--dry-run", "--world"]),
    ]
    with open(conf + ".bad", "w") as f:
        f.write(TWO.replace("rto-us", "rto"))
    with open(conf + ".chunk", "w") as f:
        f.write(TWO + "[run]\nchunk = 64\n")
    with open(conf + ".a2a.trace", "w") as f:
        f.write("ranks 2\ngroup all 2 1\ncomm x alltoall 1000 all\n")
    for ranks, name, body in ((4, "four", ""), (2, "two", ""), (2, "bad", "compute x fast\n")):
        with open(f"{conf}.{name}.trace", "w") as f:
            f.write(body and f"ranks {ranks}\n{body}" or
                    f"ranks {ranks}\ngroup all {ranks} 1\ncomm a allreduce 64K all\n")
    for what, args, want in cases:
        t0 = time.monotonic()
        p = coll(exe, null, args)
        out, err = p.communicate(timeout=60)
        took = time.monotonic() - t0
        lines = err.strip().splitlines()
        # refused while parsing: long before a bootstrap would give up
        ok = (p.returncode == 2 and not out and len(lines) == 1 and
              all(w in err for w in want) and took < 20)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: exit {p.returncode} in {took:.1f} s: "
              f"{err.strip()}")
        bad += not ok
    # a dry run of what can run: exit 0, nothing said, no port needed
    for args in (["-b", "1", "-e", "1M", "-f", "4", "-d", "all", "-o", "all", "--algo", "rd"],
                 ["--collective", "alltoall", "--size", "1001", "-d", "bfloat16"],
                 ["--trace", conf + ".two.trace", "--algo", "rd-far"]):
        r = subprocess.run([exe, "--config", conf, "--world", "2", "--dry-run"] + args,
                           capture_output=True, text=True, timeout=60)
        ok = r.returncode == 0 and not r.stdout and not r.stderr
        print(f"{'ok  ' if ok else 'FAIL'} a dry run of {' '.join(args)}: exit {r.returncode} "
              f"{r.stderr.strip()}")
        bad += not ok

    # rank 1 never comes: rank 0 names it once its time is up
    port = 20000 + os.getpid() % 20000
    p = coll(exe, null, ["--port", "net_null0", "--config", conf, "--root",
                         f"127.0.0.1:{port}", "--rank", "0", "--world", "2", "--timeout-s", "2",
                         "--yield"])
    out, err = p.communicate(timeout=60)
    ok = p.returncode == 1 and "rank 1 did not come in time" in err
    print(f"{'ok  ' if ok else 'FAIL'} a rank that never comes: exit {p.returncode}: {err.strip()}")
    bad += not ok

    # rank 1 dies while they run: rank 0 ends at once, naming it
    sock = os.path.join(work, "pair.sock")
    args = ["--port", "net_memif0", "--config", conf, "--root", f"127.0.0.1:{port + 1}",
            "--world", "2", "--size", "4M", "--iters", "100000", "--yield"]
    r0 = coll(exe, ["-l", "0", f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}",
                    "--file-prefix=cc0%d" % os.getpid()], args + ["--rank", "0"])
    # a memif server before its client: DPDK 22.11's client tries once
    time.sleep(1)
    r1 = coll(exe, ["-l", "1", f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}",
                    "--file-prefix=cc1%d" % os.getpid()], args + ["--rank", "1"])
    # the table's header says they have started; a row comes after 100000
    # collectives, so none should
    first = r0.stdout.readline()
    time.sleep(2)
    r1.send_signal(signal.SIGKILL)
    r1.wait()
    t0 = time.monotonic()
    out, err = r0.communicate(timeout=120)
    took = time.monotonic() - t0
    ok = (r0.returncode == 1 and "lost the connection to rank 1" in err and
          first.startswith("# ethereal-coll") and
          all(not ln or ln.startswith("#") for ln in out.splitlines()) and took < 30)
    print(f"{'ok  ' if ok else 'FAIL'} a peer killed mid-run: exit {r0.returncode} after "
          f"{took:.1f} s: {err.strip().splitlines()[:1]} (rank 1: {r1.stderr.read().strip()})")
    bad += not ok
    r1.stdout.close()
    r1.stderr.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
