#!/usr/bin/env python3
"""libfabric finds the provider "ethereal" in the build (FI_PROVIDER_PATH),
and fi_info says exactly what it claims: FI_EP_RDM, its caps (no more, no
less: atomics, multi-receive and the other endpoint types are not built), manual progress, FI_SOCKADDR_IN addresses of the conf's hosts;
fi_info -e documents every FI_ETHEREAL_* variable; hints it cannot meet
find nothing.

  check_fi_info.py PROVIDER_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

CLAIMED = {"FI_MSG", "FI_RMA", "FI_TAGGED", "FI_READ", "FI_WRITE", "FI_RECV", "FI_SEND",
           "FI_REMOTE_READ", "FI_REMOTE_WRITE", "FI_LOCAL_COMM", "FI_REMOTE_COMM",
           "FI_SOURCE", "FI_DIRECTED_RECV"}
PARAMS = ["EAL", "DEV", "SLOT", "CONF", "LB", "EAGER", "RDV", "RUNDIR", "YIELD", "STATS", "MAC"]


def fi_info(env, *args):
    r = subprocess.run(["fi_info", *args], env=env, capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")


def main():
    prov_dir, work = sys.argv[1], sys.argv[2]
    if shutil.which("fi_info") is None:
        print("SKIP: no fi_info (Debian: libfabric-bin)")
        return 77
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, FI_PROVIDER_PATH=prov_dir, FI_ETHEREAL_RUNDIR=work)
    bad = []

    rc, out = fi_info(env, "-l")
    if rc or not re.search(r"^ethereal:", out, re.M):
        bad.append("fi_info -l does not list ethereal:\n" + out)

    rc, out = fi_info(env, "-p", "ethereal", "-v")
    if rc:
        bad.append("fi_info -p ethereal -v failed:\n" + out)
    else:
        caps = re.search(r"^    caps: \[ (.*) \]", out, re.M)
        got = set(caps.group(1).split(", ")) if caps else set()
        if got != CLAIMED:
            bad.append(f"caps {sorted(got)}, expected {sorted(CLAIMED)}")
        for want in ["type: FI_EP_RDM", "addr_format: FI_SOCKADDR_IN",
                     "src_addr: fi_sockaddr_in://10.0.0.1:0",
                     "data_progress: FI_PROGRESS_MANUAL", "threading: FI_THREAD_SAFE",
                     "msg_order: [ FI_ORDER_SAS ]", "cq_data_size: 4",
                     "mr_mode: [ FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY ]",
                     "prov_name: ethereal"]:
            if want not in out:
                bad.append(f"fi_info -v: no '{want}'")
        if out.count("type: FI_EP_") != 1:
            bad.append("more than one fi_info")

    # the source address names the slot: another host of the conf's
    rc, out = fi_info(env, "-p", "ethereal", "-s", "10.0.1.2", "-v")
    if rc or "src_addr: fi_sockaddr_in://10.0.1.2:0" not in out:
        bad.append("fi_info -s 10.0.1.2 does not take that host's slot:\n" + out)
    # ... and an address of no host finds nothing
    rc, out = fi_info(env, "-p", "ethereal", "-s", "192.168.9.9")
    if rc == 0:
        bad.append("fi_info -s 192.168.9.9 found an ethereal info")
    # a destination resolves from node and service: no out-of-band exchange
    rc, out = fi_info(env, "-p", "ethereal", "-n", "10.0.1.1", "-P", "9228", "-v")
    if rc or "dest_addr: fi_sockaddr_in://10.0.1.1:9228" not in out:
        bad.append("fi_info -n 10.0.1.1 -P 9228 has no such dest_addr:\n" + out)

    # what is not built is not found
    for args, why in [(["-t", "FI_EP_MSG"], "FI_EP_MSG"), (["-t", "FI_EP_DGRAM"], "FI_EP_DGRAM"),
                      (["-c", "FI_ATOMIC"], "atomics"),
                      (["-c", "FI_MULTI_RECV"], "multi-receive")]:
        rc, out = fi_info(env, "-p", "ethereal", *args)
        if rc == 0 and "prov_name: ethereal" in out or re.search(r"^provider: ethereal", out, re.M):
            bad.append(f"{why} is found, but not built")

    # a conf the fabric's reader refuses: a clear error, nothing found
    conf = os.path.join(work, "bad.ini")
    with open(conf, "w") as f:
        f.write("[lb]\npolicy = ecmp\n")
    rc, out = fi_info(dict(env, FI_ETHEREAL_CONF=conf, FI_LOG_LEVEL="warn"), "-p", "ethereal")
    if rc == 0 or "[topology]: section is missing" not in out:
        bad.append("a conf without [topology] is not refused, saying why:\n" + out)
    rc, out = fi_info(dict(env, FI_ETHEREAL_LB="bogus", FI_LOG_LEVEL="warn"), "-p", "ethereal")
    if rc == 0 or "FI_ETHEREAL_LB=bogus" not in out:
        bad.append("FI_ETHEREAL_LB=bogus is not refused, saying why:\n" + out)

    rc, out = fi_info(env, "-e")
    for p in PARAMS:
        if not re.search(rf"^# FI_ETHEREAL_{p}: [^\n]+\n# ethereal: .{{20,}}", out, re.M):
            bad.append(f"fi_info -e does not document FI_ETHEREAL_{p}")

    for b in bad:
        print("FAIL:", b)
    print("fi_info:", "ok" if not bad else f"{len(bad)} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
