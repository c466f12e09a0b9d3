"""One ethereal-switch with a memif port per slot, for the libfabric
provider's processes: what the fabtests run, the provider benchmark and
scripts/testbed's MPI runs without a fabric share.  Host k of the built-in
conf (a 2x2x2 leaf-spine) is 10.0.TOR.(k % 2 + 1): slots 0 and 1 are
10.0.0.1 and 10.0.0.2, on one leaf here.

The sockets are files (socket-abstract=no), not abstract names, so that
processes in another network namespace reach them too.
"""
import os
import subprocess
import time

EAL = ["--no-huge", "--no-pci", "-m", "256", "--no-telemetry", "--log-level=*:error",
       "--log-level=ethereal.*:info"]
# lcore 0 on any CPU: the switch and its hosts share this machine's cores
# as the scheduler sees fit (the provider's processes are not pinned)
FLOAT = "0@(0-%d)" % (os.cpu_count() - 1)


def memif(work, name, role, k):
    return (f"net_memif{k},role={role},bsize=8192,socket-abstract=no,"
            f"socket={work}/{name}.sock")


def provider_env(build, work, extra=None):
    """The environment of a process of the provider: slot k's port is the
    memif socket h<k>.sock of the switch below."""
    env = dict(os.environ,
               FI_PROVIDER_PATH=os.path.join(build, "prov"),
               FI_ETHEREAL_DEV=memif(work, "h%d", "client", 0),
               FI_ETHEREAL_RUNDIR=work,
               FI_ETHEREAL_YIELD="1")
    env.update(extra or {})
    return env


class Switch:
    """ethereal-switch with ports 10.0.0.1 .. 10.0.0.N (slots 0 .. N-1)."""

    def __init__(self, build, work, hosts=2, prefix="fisw", pcap=None):
        self.work = work
        conf = os.path.join(work, "switch.ini")
        with open(conf, "w") as f:
            f.write("[switch]\nname = leaf0\n")
            for k in range(hosts):
                f.write(f"[port{k}]\ndev = {memif(work, f'h{k}', 'server', k)}\n"
                        f"role = down\nprefix = 10.0.0.{k + 1}/32\n")
        self.log = open(os.path.join(work, "switch.log"), "w")
        # every port's frames into the folder pcap (debugging a run: ET_SWITCH_PCAP=DIR)
        pcap = pcap or os.environ.get("ET_SWITCH_PCAP")
        pcap = ["--pcap", pcap] if pcap else []
        self.p = subprocess.Popen(
            [os.path.join(build, "switch", "ethereal-switch"), *EAL,
             f"--file-prefix={prefix}{os.getpid()}", "--lcores", FLOAT, "--", "--config", conf,
             "--yield"] + pcap, stdout=self.log, stderr=subprocess.STDOUT)
        path = os.path.join(work, "switch.log")
        for _ in range(100):
            if self.p.poll() is not None:
                raise RuntimeError("ethereal-switch did not start:\n" + open(path).read())
            if "mode" in open(path).read():
                return
            time.sleep(0.1)
        raise RuntimeError("ethereal-switch did not say its ports are up")

    def stop(self):
        """The switch's log; a switch that ended before it was told to
        says so at its end (its ports were gone from then on)."""
        died = self.p.poll()
        self.ended_by_itself = died is not None
        if died is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()
        log = open(os.path.join(self.work, "switch.log")).read()
        if died is not None:
            log += f"\nethereal-switch ended by itself before the end (exit status {died})\n"
        return log
