#!/usr/bin/python3
"""The Debian packages (debian/), built, installed and tried as a user would.

1. dpkg-buildpackage -us -uc -b in a copy of the tree (DEB_BUILD_OPTIONS
   nocheck, noautodbgsym: the tests run here, not twice), then lintian on
   the result: any error fails, warnings are listed;
2. apt-get install ./*.deb into this machine (CI's: a fresh Debian 12, as
   root), then, from the installed paths only (PATH of the system's
   folders, no build folder, no LD_LIBRARY_PATH, FI_PROVIDER_PATH or
   PKG_CONFIG_PATH, run in an empty folder): every command and its man
   page; ethereal-fabric on /usr/share/ethereal/conf/smoke.ini, data
   verified; fi_info -p ethereal (when the tree has the provider, prov/);
   ibv_devinfo under ethereal-run (ethereal-verbs);
   two ethereal-node processes over memif; the scripts finding the
   installed programs (ethereal-sweep --check, ethereal-reproduce --list,
   a small ethereal-testbed run); and tests/packages/two_hosts.c built with
   pkg-config --cflags --libs ethereal and run;
3. the packages it installed are purged again, whatever happened, so the
   machine is as it was (packages that were installed before are left).

Needs root (it installs into the machine): otherwise it skips (77).  About
two minutes on 2 cores, most of it the build.

check_packages.py SOURCE_ROOT WORKDIR
"""
import os
import shutil
import subprocess
import sys
import time

COMMANDS = ["ethereal-" + c for c in ("fabric", "node", "coll", "switch", "paths", "bench",
                                      "testbed", "sweep", "reproduce", "switch-ctl")]
TOOLS = {"dpkg-buildpackage": "dpkg-dev", "dh": "debhelper", "lintian": "lintian",
         "apt-get": "apt"}
# what a user's shell has, nothing of a build
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
       "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", "TERM": "dumb"}

fails = []
passes = 0


def check(what, ok, detail=""):
    global passes
    print(("ok   " if ok else "FAIL ") + what + (f"\n     {detail}" if detail and not ok else ""),
          flush=True)
    if ok:
        passes += 1
    else:
        fails.append(what)
    return ok


def run(cmd, cwd, env=None, timeout=300, **kw):
    return subprocess.run(cmd, cwd=cwd, env=env or ENV, capture_output=True, text=True,
                          timeout=timeout, **kw)


def tail(r, n=1500):
    return f"exit {r.returncode}: {(r.stdout + r.stderr).strip()[-n:]}"


def copy_tree(src, dst):
    """The tree as git sees it (tracked and new files, not what .gitignore
    leaves out: no build folder), or all of it but build folders."""
    if os.path.isdir(os.path.join(src, ".git")) or os.path.isfile(os.path.join(src, ".git")):
        files = subprocess.run(["git", "-C", src, "ls-files", "-z", "-co", "--exclude-standard"],
                               capture_output=True, check=True).stdout.decode().split("\0")
        for f in filter(None, files):
            if os.path.lexists(os.path.join(src, f)):
                os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
                shutil.copy2(os.path.join(src, f), os.path.join(dst, f), follow_symlinks=False)
    else:
        shutil.copytree(src, dst, symlinks=True,
                        ignore=shutil.ignore_patterns("build*", "obj-*", ".git"))


def build(src, work):
    tree = os.path.join(work, "ethereal-dpdk")
    copy_tree(src, tree)
    env = dict(ENV, DEB_BUILD_OPTIONS=f"nocheck noautodbgsym parallel={os.cpu_count() or 1}")
    t0 = time.monotonic()
    r = run(["dpkg-buildpackage", "-us", "-uc", "-b"], tree, env=env, timeout=1200)
    with open(os.path.join(work, "build.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    check(f"dpkg-buildpackage -us -uc -b ({time.monotonic() - t0:.0f} s; build.log)",
          r.returncode == 0, tail(r))
    return sorted(f for f in os.listdir(work) if f.endswith(".deb"))


def lint(work):
    changes = [f for f in os.listdir(work) if f.endswith(".changes")]
    if not check("a .changes file", len(changes) == 1):
        return
    r = run(["lintian", "--pedantic", "--display-info", changes[0]], work)
    tags = [ln for ln in r.stdout.splitlines() if ln[:2] in ("E:", "W:", "I:", "P:", "X:")]
    for ln in tags:
        print("     lintian " + ln)
    errors = [ln for ln in tags if ln.startswith("E:")]
    check(f"lintian: {len(errors)} errors, {len(tags) - len(errors)} other tags", not errors,
          "\n     ".join(errors))


def contents(work, debs):
    for d in debs:
        r = run(["dpkg-deb", "-c", d], work)
        paths = [ln.split(None, 5)[5].split(" -> ")[0].lstrip(".") for ln in r.stdout.splitlines()
                 if not ln.startswith("d")]
        top = sorted({os.path.dirname(p) for p in paths if "/doc/" not in p})
        print(f"     {d}: {len(paths)} files in {', '.join(top)}")


def installed(names):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\\n"] + names,
                         capture_output=True, text=True).stdout
    return {ln.split()[0] for ln in out.splitlines() if ln.endswith(" installed")}


def try_installed(src, work, has_provider):
    cwd = os.path.join(work, "run")
    os.makedirs(cwd, exist_ok=True)
    for c in COMMANDS:
        where = shutil.which(c, path=ENV["PATH"])
        check(f"{c} is /usr/bin/{c}", where == f"/usr/bin/{c}", f"found: {where}")
        r = run(["man", "-w", c], cwd)
        check(f"man -w {c}", r.returncode == 0 and r.stdout.startswith("/usr/share/man/man1/"),
              tail(r))
    r = run(["man", "ethereal-coll"], cwd, env=dict(ENV, MANPAGER="cat", PAGER="cat"))
    check("man ethereal-coll shows its options", r.returncode == 0 and "--rank" in r.stdout,
          tail(r))

    r = run(["ethereal-fabric", "--config", "/usr/share/ethereal/conf/smoke.ini", "--verify"], cwd)
    check("ethereal-fabric --config /usr/share/ethereal/conf/smoke.ini --verify",
          r.returncode == 0, tail(r))

    if has_provider:
        r = run(["fi_info", "-p", "ethereal"], cwd)
        check("fi_info -p ethereal (no FI_PROVIDER_PATH)",
              r.returncode == 0 and "provider: ethereal" in r.stdout, tail(r))
    else:
        print("skip fi_info -p ethereal: this tree has no provider (prov/) to package")

    verbs_device(cwd)
    node_pair(cwd)

    r = run(["ethereal-sweep", "--config", "/usr/share/ethereal/conf/smoke.ini", "--lb", "ecmp",
             "--algo", "a2a", "--sizes", "64K", "--check"], cwd)
    check("ethereal-sweep --check runs the installed ethereal-fabric", r.returncode == 0, tail(r))
    r = run(["ethereal-reproduce", "--list", "--quick"], cwd)
    check("ethereal-reproduce --list --quick", r.returncode == 0 and "leaf-spine" in r.stdout,
          tail(r))
    r = run(["ethereal-switch-ctl", "--help"], cwd)
    check("ethereal-switch-ctl --help", r.returncode == 0, tail(r))
    r = run(["ethereal-testbed", "--size", "64K", "--iters", "1", "--verify"], cwd)
    check("ethereal-testbed --size 64K --iters 1 --verify (installed switches and hosts)",
          r.returncode == 0 and "testbed: ok" in r.stdout + r.stderr, tail(r))

    exe = os.path.join(cwd, "two_hosts")
    flags = run(["pkg-config", "--cflags", "--libs", "ethereal"], cwd)
    if check("pkg-config --cflags --libs ethereal", flags.returncode == 0, tail(flags)):
        r = run(["cc", "-Wall", "-Wextra", "-Werror", "-o", exe,
                 os.path.join(src, "tests", "packages", "two_hosts.c")] + flags.stdout.split(), cwd)
        if check("cc two_hosts.c $(pkg-config --cflags --libs ethereal)", r.returncode == 0,
                 tail(r)):
            ldd = run(["ldd", exe], cwd).stdout
            lib = [ln.split()[2] for ln in ldd.splitlines() if "libethereal.so.0 =>" in ln]
            check("two_hosts runs with the installed libethereal.so.0",
                  lib and os.path.realpath(lib[0]).startswith("/usr/lib/"), ldd)
            r = run([exe], cwd)
            print("     " + r.stdout.strip().replace("\n", "\n     "))
            check("two_hosts: a RoCEv2 frame and a two-host fabric through the public API",
                  r.returncode == 0, tail(r))


def verbs_device(cwd):
    """ethereal-verbs: Debian's ibv_devinfo on the installed libibverbs of
    ours, run by the installed ethereal-run (a port of its own: 'loop')."""
    where = shutil.which("ethereal-run", path=ENV["PATH"])
    check("ethereal-run is /usr/bin/ethereal-run", where == "/usr/bin/ethereal-run",
          f"found: {where}")
    r = run(["man", "-w", "ethereal-run"], cwd)
    check("man -w ethereal-run", r.returncode == 0, tail(r))
    if not shutil.which("ibv_devinfo", path=ENV["PATH"]):
        print("skip ethereal-run -- ibv_devinfo: no ibverbs-utils here")
        return
    r = run(["ethereal-run", "--dev", "loop", "--", "ibv_devinfo"], cwd, timeout=60)
    check("ethereal-run --dev loop -- ibv_devinfo (the installed libibverbs of ours)",
          r.returncode == 0 and "hca_id:\tethereal0" in r.stdout
          and "PORT_ACTIVE" in r.stdout, tail(r))


def node_pair(cwd):
    """README's two ethereal-node processes over memif, data verified."""
    sock, port = os.path.join(cwd, "m.sock"), str(20000 + os.getpid() % 10000)
    eal = ["--no-huge", "--no-pci", "-m", "512", "--no-telemetry", "--log-level=*:error"]
    side = ["--size", "64K", "--verify", "--oob-port", port]
    if os.path.exists(sock):
        os.unlink(sock)
    server = subprocess.Popen(
        ["ethereal-node"] + eal + ["--file-prefix=pkgsrv", "-l", "0",
                                   f"--vdev=net_memif0,role=server,bsize=8192,socket={sock}", "--",
                                   "--port", "net_memif0", "--ip", "10.0.0.2", "--server"] + side,
        cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(200):  # the server makes the socket; a client started first never connects
            if os.path.exists(sock) or server.poll() is not None:
                break
            time.sleep(0.05)
        client = run(["ethereal-node"] + eal + [
            "--file-prefix=pkgcli", "-l", "1",
            f"--vdev=net_memif0,role=client,bsize=8192,socket={sock}", "--",
            "--port", "net_memif0", "--ip", "10.0.0.1", "--client", "127.0.0.1",
            "--iters", "200"] + side, cwd, timeout=120)
        out, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    check("two ethereal-node processes over memif, 64K WRITEs verified",
          client.returncode == 0 and server.returncode == 0,
          f"client {tail(client)}\n     server exit {server.returncode}: {out.strip()[-1500:]}")


def main():
    src, work = (os.path.abspath(a) for a in sys.argv[1:3])
    if os.geteuid() != 0:
        print("skip: installs the packages into this machine, so needs root (CI is root)")
        sys.exit(77)
    missing = [pkg for tool, pkg in TOOLS.items() if not shutil.which(tool, path=ENV["PATH"])]
    if missing:
        print(f"{'FAIL' if os.environ.get('CI') else 'skip'}: missing {', '.join(missing)} "
              "(scripts/deps.sh installs them)")
        sys.exit(1 if os.environ.get("CI") else 77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    has_provider = os.path.isfile(os.path.join(src, "prov", "meson.build"))

    debs = build(src, work)
    if not debs:
        sys.exit(1)
    lint(work)
    contents(work, debs)
    names = [d.split("_")[0] for d in debs]
    before = installed(names)
    try:
        # --reinstall: a package of the same version left installed is replaced
        # by this build's, not kept as "already the newest"
        r = run(["apt-get", "install", "-y", "-q", "--reinstall", "--no-install-recommends"]
                + ["./" + d for d in debs], work, env=dict(ENV, DEBIAN_FRONTEND="noninteractive"))
        if check(f"apt-get install ./*.deb ({', '.join(names)})", r.returncode == 0, tail(r)):
            try_installed(src, work, has_provider)
    finally:
        ours = [n for n in names if n not in before]
        if ours:
            r = run(["dpkg", "--purge"] + ours, work)
            left = [d for d in ("/usr/share/ethereal", "/usr/include/ethereal")
                    if os.path.exists(d)]
            check(f"dpkg --purge {' '.join(ours)} (the machine as it was)",
                  r.returncode == 0 and not left, f"{tail(r)}; left behind: {left}")
    print(f"packages: {passes} passed, {len(fails)} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
