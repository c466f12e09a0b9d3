"""The switches under the libfabric provider's and our libibverbs's
processes: what the fabtests run, the provider and verbs benchmarks and
scripts/testbed's MPI runs without a fabric share.  By default one
ethereal-switch with a memif port per slot, 10.0.0.1 .. 10.0.0.N; with
leaves and spines a leaf-spine of them, host k 10.0.LEAF.(k % H + 1) (H
hosts a leaf; the provider's built-in conf is 2 x 2 x 2: slots 0 and 1 on
leaf 0, 2 and 3 on leaf 1), its switches in one process joined by rings,
or (processes=True) each in its own, joined by memif pairs.

The sockets are files (socket-abstract=no), not abstract names, so that
processes in another network namespace reach them too.
"""
import os
import subprocess
import time

# --single-file-segments: a memif client's zero-copy end shares that one file
EAL = ["--no-huge", "--no-pci", "-m", "256", "--no-telemetry", "--single-file-segments",
       "--log-level=*:error", "--log-level=ethereal.*:info"]
# processes sharing cores: a queue grows by what arrives while its reader
# waits for a time slice, not by congestion; marking from 20 KB (a 100G
# wire's default) throttled every sender (scripts/testbed sets the same)
ECN_K = "ecn-k = 256K\n"
# lcore 0 on any CPU: the switch and its hosts share this machine's cores
# as the scheduler sees fit (the provider's processes are not pinned)
FLOAT = "0@(0-%d)" % (os.cpu_count() - 1)


def memif(work, name, role, k, zc=False):
    """A memif device; zc: a client's zero-copy end (the server's copies go
    straight into its mbufs), for a process whose EAL keeps its memory in
    one file (--single-file-segments: the provider's and our libibverbs's
    default)."""
    return (f"net_memif{k},role={role},bsize=8192,socket-abstract=no,"
            f"{'zero-copy=yes,' if zc else ''}socket={work}/{name}.sock")


def provider_env(build, work, extra=None):
    """The environment of a process of the provider: slot k's port is the
    memif socket h<k>.sock of the switch below."""
    env = dict(os.environ,
               FI_PROVIDER_PATH=os.path.join(build, "prov"),
               FI_ETHEREAL_DEV=memif(work, "h%d", "client", 0, zc=True),
               FI_ETHEREAL_RUNDIR=work,
               FI_ETHEREAL_YIELD="1")
    env.update(extra or {})
    return env


class Switch:
    """ethereal-switch: one leaf with ports 10.0.0.1 .. 10.0.0.N (slots 0
    .. N-1), or a leaf-spine of them (see above)."""

    def __init__(self, build, work, hosts=2, prefix="fisw", pcap=None, leaves=1, spines=0,
                 processes=False):
        self.work, self.procs, self.logs = work, [], []
        hpl = hosts // leaves
        confs, dev_k = [], [0]

        def dev(name, role, k):
            # a process's memif devices need names of their own
            if not processes:
                k, dev_k[0] = dev_k[0], dev_k[0] + 1
            return memif(work, name, role, k)

        for s in range(spines):
            with open(os.path.join(work, f"spine{s}.ini"), "w") as f:
                f.write(f"[switch]\nname = spine{s}\n{ECN_K}")
                for l in range(leaves):
                    link = dev(f"l{l}s{s}", "server", l) if processes else f"ring:l{l}s{s}"
                    f.write(f"[port{l}]\ndev = {link}\nrole = down\nprefix = 10.0.{l}.0/24\n")
            confs.append(f"spine{s}")
        for l in range(leaves):
            with open(os.path.join(work, f"leaf{l}.ini" if leaves > 1 else "switch.ini"), "w") as f:
                f.write(f"[switch]\nname = leaf{l}\n{ECN_K}")
                for h in range(hpl):
                    f.write(f"[port{h}]\ndev = {dev(f'h{l * hpl + h}', 'server', h)}\n"
                            f"role = down\nprefix = 10.0.{l}.{h + 1}/32\n")
                for s in range(spines):
                    link = dev(f"l{l}s{s}", "client", hpl + s) if processes else f"ring:l{l}s{s}"
                    f.write(f"[port{hpl + s}]\ndev = {link}\nrole = up\nuplink = {s}\n")
            confs.append(f"leaf{l}" if leaves > 1 else "switch")
        # every port's frames into the folder pcap (debugging a run: ET_SWITCH_PCAP=DIR)
        pcap = pcap or os.environ.get("ET_SWITCH_PCAP")
        pcap = ["--pcap", pcap] if pcap else []
        # memif servers before their clients: spines, then leaves
        groups = [[c] for c in confs] if processes else [confs]
        for i, group in enumerate(groups):
            args = [a for c in group for a in ("--config", os.path.join(work, c + ".ini"))]
            self.start(build, f"{prefix}{os.getpid()}{'x' if len(groups) == 1 else i}",
                       group[0] if processes else "switch", args + ["--yield"] + pcap,
                       216 + 40 * len(group))

    def start(self, build, file_prefix, name, args, mb):
        path = os.path.join(self.work, name + ".log")
        log = open(path, "w")
        self.logs.append((log, path))
        # the mbuf pool grows by 8 K frames a switch (switch/main.c)
        eal = [str(mb) if a == "256" else a for a in EAL]
        p = subprocess.Popen([os.path.join(build, "switch", "ethereal-switch"), *eal,
                              f"--file-prefix={file_prefix}", "--lcores", FLOAT, "--"] + args,
                             stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        for _ in range(100):
            if p.poll() is not None:
                raise RuntimeError("ethereal-switch did not start:\n" + open(path).read())
            if "mode" in open(path).read():
                return
            time.sleep(0.1)
        raise RuntimeError("ethereal-switch did not say its ports are up")

    def stop(self):
        """The switches' log; a switch that ended before it was told to
        says so at its end (its ports were gone from then on)."""
        self.ended_by_itself = False
        out = ""
        for p, (log, path) in reversed(list(zip(self.procs, self.logs))):
            died = p.poll()
            self.ended_by_itself |= died is not None
            if died is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            log.close()
            out = open(path).read() + out
            if died is not None:
                out += f"\nethereal-switch ended by itself before the end (exit status {died})\n"
        return out
